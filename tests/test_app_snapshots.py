"""SVG snapshots of the main screens at 120x40 (update with `pytest --snapshot-update` after a deliberate change).

Time-dependent text is frozen: the load time in the title is fixed, and every worker has finished before the shot.
"""

from __future__ import annotations

import pytest
from app_helpers import ready

from inspector.app import make_app
from inspector.core.figures import Settings
from inspector.samples import SAMPLE_DIR

SIZE = (120, 40)
FIXED = Settings(estimator="chars35")  # the reference estimator: snapshots do not move when calibration improves
AUTOCOMPACT = SAMPLE_DIR / "claude-code-autocompact.jsonl"


def _settled(*keys: str):
    async def run_before(pilot) -> None:
        screen = await ready(pilot.app, pilot)
        screen.load_seconds = None
        screen._update_title()
        for key in keys:
            await pilot.press(key)
        await screen.workers.wait_for_complete()
        await pilot.pause()
    return run_before


@pytest.mark.parametrize("path,keys", [
    pytest.param(AUTOCOMPACT, (), id="messages"),
    pytest.param(SAMPLE_DIR / "claude-code-tool-heavy.jsonl", ("o",), id="sorted"),
    pytest.param(AUTOCOMPACT, ("3",), id="timeline"),
    pytest.param(SAMPLE_DIR / "agent-short.jsonl", ("2",), id="prompt"),
    pytest.param(AUTOCOMPACT, ("f1",), id="help"),
])
def test_screen(snap_compare, path, keys):
    assert snap_compare(make_app(path, home=False, settings=FIXED), terminal_size=SIZE, run_before=_settled(*keys))


def test_picker(snap_compare):
    async def run_before(pilot) -> None:
        await pilot.pause()
        await pilot.app.screen.workers.wait_for_complete()
        await pilot.pause()

    assert snap_compare(make_app(None, home=False), terminal_size=SIZE, run_before=run_before)
