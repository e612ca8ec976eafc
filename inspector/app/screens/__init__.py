"""The app's screens: the session picker, the main (session) screen, and the F1 help screen."""
