"""SVG snapshot of the compaction workbench's diff view at 120x40 (update with `pytest --snapshot-update` after a
deliberate change): the snip preview of the bundled auto-compacted session, cursor on its first change."""

from __future__ import annotations

from app_helpers import ready

from inspector.app import make_app
from inspector.app.figures import Settings
from inspector.samples import SAMPLE_DIR


async def _workbench(pilot) -> None:
    await ready(pilot.app, pilot)
    await pilot.press("c", "left_square_bracket")  # the workbench, on snip
    for _ in range(3):
        await pilot.app.screen.workers.wait_for_complete()
        await pilot.pause()


def test_diff_view(snap_compare):
    app = make_app(SAMPLE_DIR / "claude-code-autocompact.jsonl", home=False, settings=Settings(estimator="chars35"))
    assert snap_compare(app, terminal_size=(120, 40), run_before=_workbench)
