"""Timestamps as sessions write them (ISO 8601, often with a `Z`), read leniently: a file may hold anything there."""

from __future__ import annotations

from datetime import datetime


def when(stamp: object) -> datetime | None:
    """The moment `stamp` names, or None when it is missing or not an ISO 8601 string (a number, garbage)."""
    if not stamp or not isinstance(stamp, str):
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
