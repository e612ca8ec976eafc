"""The window as the last response's usage measured it: the one figure a session's end gives exactly on its own.

A preview of a long session's end (`formats.tail`) has its last responses but not the messages before them, so
every per-message figure and category waits for the full load; the context the last request sent is in its
usage, as the full load's figures would count it for that request.
"""

from __future__ import annotations

from inspector.core.figures.compute import settings_window, window_figures
from inspector.core.figures.model import Settings, Window
from inspector.core.model import Session


def last_response_window(session: Session, settings: Settings) -> Window | None:
    """The window at the last request's measured context (input + cache creation + cache read); None without
    requests."""
    if not session.requests:
        return None
    return window_figures(settings_window(session, settings), session.requests[-1].measured_context, True)
