"""The workbench's after bar on a session with measured usage, driven with Pilot: after a snip the unrecorded prefix
and the unrecorded growth stay what they were, the changed messages count at their new estimated size and the
total drops by exactly what they freed; applying the step hands those figures to the session screen, and when the
session screen re-computes the step under other settings it is accounted from the step before it, not from
scratch."""

from __future__ import annotations

from app_helpers import ready
from textual.widgets import Label

from inspector.app import make_app
from inspector.app.figures import Settings, compute
from inspector.app.screens.workbench import WorkbenchScreen
from inspector.app.widgets.context_bar import ContextBar
from inspector.app.widgets.diff_view import DiffView
from inspector.core.categories import LABELS, SYSTEM_TOOLS, UNRECORDED
from inspector.samples import SAMPLE_DIR

TOOL_HEAVY = SAMPLE_DIR / "claude-code-tool-heavy.jsonl"  # 18 requests with usage, large Read and Grep results
PREFIX, GROWTH = LABELS[SYSTEM_TOOLS], LABELS[UNRECORDED]


async def _settle(screen, pilot) -> None:
    for _ in range(3):
        await screen.workers.wait_for_complete()
        await pilot.pause()


async def test_after_a_snip_the_prefix_stays_and_the_total_drops_by_what_it_freed():
    app = make_app(TOOL_HEAVY, home=False, settings=Settings(estimator="chars35"))
    async with app.run_test(size=(160, 48)) as pilot:
        main = await ready(app, pilot)
        await pilot.press("c")
        wb = app.screen
        assert isinstance(wb, WorkbenchScreen)
        wb.set_strategy("snip")
        await _settle(wb, pilot)
        p = wb.preview
        assert p is not None and p.plan.strategy == "snip" and p.plan.counts.get("snipped", 0) >= 5
        before = wb.query_one("#wb-bar-before", ContextBar).figures
        after = wb.query_one("#wb-bar-after", ContextBar).figures
        assert before is p.before is main.figures and after is p.after
        assert before.window.used_measured  # the sample's usage measures the state before
        start = p.plan.start  # the plan's estimates (filled from the figures' for chars35) are the figures'
        assert p.plan.tokens == before.estimated[start:] and p.plan.estimator == "chars35"

        was, now = dict(before.categories), dict(after.categories)
        assert was[PREFIX] > 10_000 and now[PREFIX] == was[PREFIX]
        assert now.get(GROWTH, 0) == was.get(GROWTH, 0)  # nothing freed lands in the unrecorded growth
        freed = sum(before.size(i) - size for i, size in p.plan.micro.after.items())
        assert freed > 50_000
        assert after.window.used == before.window.used - freed
        assert sum(now.values()) == after.window.used and sum(was.values()) == before.window.used
        assert not after.window.used_measured and not after.categories_measured  # an estimate: no request saw it
        for i, size in p.plan.micro.after.items():
            assert after.measured[i] is None and after.estimated[i] == size and after.size(i) == size
        unchanged = [i for i in range(len(before.measured)) if i not in p.plan.micro.after]
        assert all(after.size(i) == before.size(i) for i in unchanged)
        moved = {name for name in was if now[name] != was[name]}
        assert moved and all(name.startswith("tool results: ") for name in moved)
        row = wb.query_one(DiffView).current  # the first change, its content before and after below
        assert row is not None and row.fate == "snipped" and before.measured[row.old] is not None
        assert wb.query_one("#ba-before").border_title == f"before · {before.measured[row.old]:,} tokens measured"
        assert wb.query_one("#ba-after").border_title == f"after · {row.after:,} tokens estimated"
        label = str(wb.query_one("#wb-after-label", Label).render())
        assert f"{after.window.used // 1000}" in label and "prefix" in label and "unchanged" in label

        await pilot.press("a")
        await _settle(wb, pilot)
        await _settle(main, pilot)
        step = wb.stack.current
        assert step.strategy == "snip" and step.figure == after.window.used
        assert main.figures is after and main.query_one(ContextBar).figures is after
        assert wb.query_one("#wb-bar-before", ContextBar).figures is after  # the step is "now"
        assert after.micro_saving is not None  # the note computed once the step is shown

        # Back on the session screen, other settings: the step is accounted from the original's new figures, not
        # again from scratch (which would file what the snip freed as unrecorded).
        await pilot.press("escape")
        await _settle(main, pilot)
        other = Settings(estimator="script", policy="codex")
        main.set_settings(other)
        await _settle(main, pilot)
        again, base = main.figures, compute(wb.stack.original.session, other)
        assert again.session is step.session and again.settings == other
        assert main.query_one(ContextBar).figures is again
        assert dict(again.categories)[PREFIX] == dict(base.categories)[PREFIX]
        assert dict(again.categories).get(GROWTH, 0) == dict(base.categories).get(GROWTH, 0)
        assert again.window.used == base.window.used - sum(
            base.size(i) - size for i, size in step.plan.micro.after.items())
        assert again.window.policy == "codex" and again.micro_saving is not None
