"""Reusable widgets; the long ones (message list, detail) are Line API widgets that render only visible rows."""
