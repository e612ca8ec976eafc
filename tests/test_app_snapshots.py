"""SVG snapshots of the main screens at 120x40 and at 80x24, the smallest terminal every screen must stay usable at
(update with `pytest --snapshot-update` after a deliberate change).

Time-dependent text is frozen: the load time in the title is fixed, and every worker has finished before the shot.
"""

from __future__ import annotations

import pytest
from app_helpers import ready, until

from inspector.app import make_app
from inspector.app.screens.workbench import WorkbenchScreen
from inspector.core.figures import Settings
from inspector.samples import SAMPLE_DIR

SIZE = (120, 40)
SMALL = (80, 24)
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
        if isinstance(pilot.app.screen, WorkbenchScreen):  # its preview: planned in its own worker
            await until(pilot, lambda: pilot.app.screen.preview is not None)
            await pilot.app.screen.workers.wait_for_complete()
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


@pytest.mark.parametrize("path,keys,size", [
    pytest.param(AUTOCOMPACT, (), SMALL, id="messages-80x24"),
    pytest.param(AUTOCOMPACT, ("d",), SMALL, id="detail-80x24"),
    pytest.param(AUTOCOMPACT, ("3",), SMALL, id="timeline-80x24"),
    pytest.param(AUTOCOMPACT, ("2",), SMALL, id="prompt-80x24"),
    pytest.param(AUTOCOMPACT, ("f1",), SMALL, id="help-80x24"),
    pytest.param(AUTOCOMPACT, ("c",), SMALL, id="workbench-80x24"),
    pytest.param(AUTOCOMPACT, ("c",), SIZE, id="workbench-120x40"),
])
def test_screen_at_size(snap_compare, path, keys, size):
    """Every screen usable at 80x24: one legend line, the columns that fit (the context figure always), the
    workbench's before, after and delta, help whole."""
    assert snap_compare(make_app(path, home=False, settings=FIXED), terminal_size=size, run_before=_settled(*keys))


@pytest.mark.parametrize("size", [SIZE, SMALL], ids=["120x40", "80x24"])
def test_picker(snap_compare, size):
    async def run_before(pilot) -> None:
        await pilot.pause()
        await pilot.app.screen.workers.wait_for_complete()
        await pilot.pause()

    assert snap_compare(make_app(None, home=False), terminal_size=size, run_before=run_before)
