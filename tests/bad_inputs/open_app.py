"""Open a path in the app headless, drive it a little, and say what the user saw: the session or the error.

Used in-process by the tests (`await outcome(path)`) and as a subprocess for inputs whose memory or hang risk must
be measured from outside (`python tests/bad_inputs/open_app.py PATH` prints the outcome as one JSON line).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

KEYS = ("G", "3", "W")  # the last message, the timeline, the warnings


async def outcome(path: Path, keys: tuple[str, ...] = KEYS) -> dict:
    """{"state": "loaded"|"failed"|"picker", "error": text shown, "messages", "warnings", "orphans" (unpaired
    tool calls marked in the list), "status" (the status line), "entries" (sessions a picker lists), "running"}."""
    from inspector.app import make_app
    from inspector.app.screens.main import MainScreen
    from inspector.app.screens.picker import PickerScreen

    app = make_app(path, home=False)
    result: dict = {"state": "none", "error": "", "messages": None, "warnings": None, "orphans": None}
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(3000):  # up to ~60 s on a loaded machine; the caller's timeout is the real bound
            await pilot.pause(0.02)
            screen = app.screen
            if isinstance(screen, PickerScreen):
                await screen.workers.wait_for_complete()  # the message counts: every listed file read
                result.update(state="picker", entries=len(screen.entries))
                break
            if isinstance(screen, MainScreen):
                label = str(screen.query_one("#loading-label").render())
                if label.startswith("Cannot open"):
                    result.update(state="failed", error=label)
                    break
                if screen.figures is not None:
                    session = screen.figures.session
                    result.update(state="loaded", messages=len(session.messages), warnings=len(session.warnings),
                                  orphans=len(screen.figures.orphans))
                    break
        if result["state"] == "loaded":
            await pilot.pause()
            result["status"] = str(app.screen.query_one("#status").render())
        for key in keys if result["state"] == "loaded" else ():
            await pilot.press(key)
        await pilot.pause()
        result["running"] = app.is_running and app.return_code is None
    return result


if __name__ == "__main__":
    print(json.dumps(asyncio.run(outcome(Path(sys.argv[1])))))
