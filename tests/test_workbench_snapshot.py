"""SVG snapshot of the workbench's diff view at 120x40 (update with `pytest --snapshot-update` after a deliberate
change): the snip plan of the bundled auto-compacted session, its rows, totals and the first change before and
after. Drawn in a small host app with the workbench's own widgets, so the snapshot moves only when they do (the
context bars above them have their own snapshots on the session screen)."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Static

from inspector.app.text import plain
from inspector.app.widgets.before_after import BeforeAfter
from inspector.app.widgets.diff_view import DiffView
from inspector.core.compaction import Estimates, SnipSettings, plan_snip
from inspector.core.compaction.diff import render_totals
from inspector.core.formats import load
from inspector.samples import SAMPLE_DIR


class DiffHost(App[None]):
    CSS = """
    #header, #totals { height: 1; background: $panel; }
    DiffView { height: 1fr; }
    BeforeAfter { height: 14; }
    """

    def compose(self) -> ComposeResult:
        yield Static(DiffView.header(), id="header")
        yield DiffView(id="diff")
        yield Static("", id="totals")
        yield BeforeAfter(id="ba")

    def on_mount(self) -> None:
        session = load(SAMPLE_DIR / "claude-code-autocompact.jsonl")
        plan = plan_snip(session, SnipSettings(preserve_last_n=6, max_chars=1000), Estimates("chars35"))
        self.query_one("#totals", Static).update(plain(render_totals(plan.before, plan.after, plan.counts)))
        view = self.query_one(DiffView)
        view.show(plan.rows)
        view.focus()
        row = view.current
        assert row is not None
        self.query_one(BeforeAfter).show(session.messages[row.old], row.message, (row.before, row.after))


def test_diff_view(snap_compare):
    async def settle(pilot) -> None:
        await pilot.pause()
        await pilot.pause()

    assert snap_compare(DiffHost(), terminal_size=(120, 40), run_before=settle)
