"""Helpers for the app tests: open a session in the app and wait until its figures are on screen."""

from __future__ import annotations

import json
from pathlib import Path

from inspector.app.screens.main import MainScreen

TESTS = Path(__file__).parent
CORPUS = TESTS / "corpus"


async def ready(app, pilot) -> MainScreen:
    """Wait for the load and compute workers, then for the handlers that put their results on screen."""
    for _ in range(200):
        screen = app.screen
        if isinstance(screen, MainScreen):
            await screen.workers.wait_for_complete()
            await pilot.pause()
            if screen.figures is not None:
                return screen
        await pilot.pause(0.02)
    raise AssertionError(f"the session never showed its figures (screen: {app.screen!r})")


def row_text(lst, row: int, width: int = 300) -> str:
    """The text of one row of a MessageList as drawn at `width` cells."""
    return "".join(seg.text for seg in lst._render_row(lst.rows[row], width, False))


async def until(pilot, condition, seconds: float = 10.0) -> None:
    """Let the app run until `condition()` holds: for results that arrive as messages from a worker."""
    for _ in range(int(seconds / 0.02)):
        if condition():
            return
        await pilot.pause(0.02)
    assert condition(), "condition never held"


def write_jsonl(path: Path, objects: list[dict]) -> Path:
    """A session file of one JSON object a line (the neutral format, when the objects are messages)."""
    path.write_text("".join(json.dumps(x) + "\n" for x in objects), encoding="utf-8")
    return path
