"""The workbench's after bar on a session with measured usage, driven with Pilot: after a snip the unrecorded prefix
and the unrecorded growth stay what they were, the changed messages count at their new estimated size and the
total drops by exactly what they freed; applying the step hands those figures to the session screen, and when the
session screen re-computes the step under other settings it is accounted from the step before it, not from
scratch; a summary is accounted from the figures before it too, with the summary the user writes in the app."""

from __future__ import annotations

from app_helpers import ready
from test_compacted import talk
from textual.widgets import Label, Static, TextArea

from inspector.app import make_app
from inspector.app.screens.workbench import REFIGURE_AFTER, WorkbenchScreen
from inspector.app.text import human
from inspector.app.widgets.context_bar import ContextBar
from inspector.app.widgets.diff_view import DiffView
from inspector.app.workbench_model import Preview, after_label
from inspector.core.categories import SYSTEM_TOOLS, UNRECORDED
from inspector.core.compaction import Estimates, SummarySettings, complete_summary, plan_strategy
from inspector.core.figures import Settings, StepRows, after, compute
from inspector.core.tokens import account
from inspector.samples import SAMPLE_DIR

TOOL_HEAVY = SAMPLE_DIR / "claude-code-tool-heavy.jsonl"  # 18 requests with usage, large Read and Grep results
PREFIX, GROWTH = SYSTEM_TOOLS, UNRECORDED


async def _settle(screen, pilot) -> None:
    for _ in range(3):
        await screen.workers.wait_for_complete()
        await pilot.pause()


async def _workbench(app, pilot, *keys: str):
    """The session screen and the workbench opened over it (key c), then `keys` pressed and the workers done."""
    main = await ready(app, pilot)
    await pilot.press("c")
    wb = app.screen
    assert isinstance(wb, WorkbenchScreen)
    await pilot.press(*keys)
    await _settle(wb, pilot)
    return main, wb


async def test_after_a_snip_the_prefix_stays_and_the_total_drops_by_what_it_freed():
    app = make_app(TOOL_HEAVY, home=False, settings=Settings(estimator="chars35"))
    async with app.run_test(size=(160, 48)) as pilot:
        main, wb = await _workbench(app, pilot)
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
        changed = p.plan.micro.after
        freed = sum(before.size(i) - after.size(i) for i in changed)
        assert freed > 50_000 and after.window.used == before.window.used - freed
        assert sum(now.values()) == after.window.used and sum(was.values()) == before.window.used
        assert after.window.used == account(after.session, "chars35").current_context  # what a fresh account says
        assert not after.categories_measured  # changed figures are derived: no request saw them
        for i in changed:  # each keeps its figure in the ratio of the accounting's estimates after and before
            assert after.measured[i] is None and after.basis(i) == "derived"
            assert after.size(i) == round(before.size(i) * after.estimated[i] / before.estimated[i]) or \
                abs(after.size(i) - before.size(i) * after.estimated[i] / before.estimated[i]) <= 1
        unchanged = [i for i in range(len(before.measured)) if i not in changed]
        assert all(after.size(i) == before.size(i) for i in unchanged)
        moved = {key for key in was if now[key] != was[key]}
        assert moved and all(key.startswith("tool_results:") for key in moved)
        row = wb.query_one(DiffView).current  # the first change, its content before and after below
        assert row is not None and row.fate == "snipped" and before.measured[row.old] is not None
        assert row.before == before.size(row.old) and row.after == after.size(row.new)  # the bars' figures
        assert wb.query_one("#ba-before").border_title == f"before · {before.measured[row.old]:,} tokens measured"
        assert wb.query_one("#ba-after").border_title == f"after · {row.after:,} tokens derived"
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
        assert again.window.used == base.window.used - sum(base.size(i) - again.size(i) for i in changed)
        assert again.window.used == account(step.session, "script").current_context
        assert again.window.policy == "codex" and again.micro_saving is not None


async def test_a_summary_is_accounted_from_the_figures_before_and_counts_the_summary_written_in_the_app():
    app = make_app(TOOL_HEAVY, home=False, settings=Settings(estimator="chars35"))
    async with app.run_test(size=(160, 48)) as pilot:
        main, wb = await _workbench(app, pilot, "e")  # edit the summary: the summary strategy, the editor focused
        p = wb.preview
        assert p is not None and p.plan.strategy == "summary" and p.plan.pending
        before, after = p.before, p.after
        assert before is main.figures and wb.query_one("#wb-bar-after", ContextBar).figures is after
        plan, n = p.plan, len(p.before.session.messages)
        split, added = plan.summary.split, len(plan.added)
        kept = range(split, n)
        prefix = dict(before.categories)[PREFIX]

        def check(after, summary: int) -> None:
            """after total == prefix + summary estimate + kept tail, the bar's categories add up to it, each kept
            message counts its figure before, measured where it was (no request's growth is split by this cut)."""
            ack = after.size(n + 1)
            assert after.size(n) == summary and 0 < ack < 100
            assert after.window.used == prefix + summary + ack + sum(before.size(i) for i in kept)
            assert after.window.used == account(after.session, "chars35").current_context
            assert sum(t for _, t in after.categories) == after.window.used
            assert dict(after.categories)[PREFIX] == prefix and dict(after.categories).get(GROWTH, 0) == 0
            assert not after.window.used_measured
            for i in kept:
                j = i - split + n + added
                assert after.size(j) == before.size(i) and after.measured[j] == before.measured[i]
            assert after.cumulative[-1] == after.window.used
            totals = str(wb.query_one("#wb-totals", Static).render())
            freed = before.window.used - after.window.used
            rows = wb.preview.rows
            assert isinstance(rows, StepRows) and len(rows) == len(plan.tokens) + added
            row_list = [rows[k] for k in range(len(rows))]
            growth = before.window.used - prefix - sum(r.before for r in row_list)
            deltas = sum(r.delta or 0 for r in row_list if r.after is not None) - \
                sum(r.before for r in row_list if r.after is None)
            assert deltas - growth == after.window.used - before.window.used - (summary if wb.preview.plan.pending else 0)
            assert totals.startswith(f"context {before.window.used:,} -> {after.window.used:,}")
            assert f"freed {freed:,}" in totals
            assert (f"unrecorded {-growth:+,}" in totals) == bool(growth)
            assert f"prefix {prefix:,} unchanged" in totals

        placeholder = after.size(n)  # pending: the placeholder counts, the bar says so
        check(after, placeholder)
        label = str(wb.query_one("#wb-after-label", Label).render())
        ack = after.size(n + 1)
        kept_total = human(sum(before.size(i) for i in kept))
        assert "after summary (summary pending): " in label
        assert f" = prefix {human(prefix)} + ack {ack} + {len(kept)} kept {kept_total}" in label
        measured = sum(before.measured[i] is not None for i in kept)
        assert measured and f"({measured} measured)" in label and "now derived" not in label
        assert "gone: Read " in label  # the largest category the folded messages held
        assert wb.query_one(DiffView).current.fate == "summarized"

        area = wb.query_one("#wb-summary-text", TextArea)
        assert area.has_focus
        await pilot.press(*"Read the parser and the tests; the fix is in parse().")
        await pilot.pause(REFIGURE_AFTER + 0.1)
        await pilot.pause()
        written = wb.preview
        assert not written.plan.pending and written.after is not after
        summary = written.after.size(n)
        assert summary == written.plan.added[0].after > 0  # chars35 both: the plan's estimate is the figure
        check(written.after, summary)
        label = str(wb.query_one("#wb-after-label", Label).render())
        assert f"= prefix {human(prefix)} + summary {summary} + ack" in label and "pending" not in label
        row = written.rows[written.rows.folded]  # the summary's row, its size as the bar counts it
        assert row.kind == "compact_summary" and row.after == summary
        assert f"({summary:,} in the new context, with its preamble)" in str(
            wb.query_one("#wb-summary-status", Static).render())

        area.load_text("")  # discarded: pending again
        await pilot.pause(REFIGURE_AFTER + 0.1)
        await pilot.pause()
        assert wb.preview.plan.pending and wb.preview.after.size(n) == placeholder
        await pilot.press(*"Read the parser and the tests; the fix is in parse().")
        await pilot.pause(REFIGURE_AFTER + 0.1)
        await pilot.pause()
        final = wb.preview.after
        await pilot.press("ctrl+s")  # approved: the step frees what the bars showed
        await _settle(wb, pilot)
        await _settle(main, pilot)
        step = wb.stack.current
        freed = before.window.used - final.window.used
        assert step.strategy == "summary" and step.figure == final.window.used and step.label == f"summary ({-freed:+,})"
        record = step.session.compactions[-1]  # the boundary says what the bars said
        assert record.kind == "compact" and (record.pre_tokens, record.tokens_saved) == (before.window.used, freed)
        shown = main.figures
        assert shown.session is step.session and shown.window.used == final.window.used
        assert shown.categories == final.categories and main.query_one(ContextBar).figures is shown

        # Other settings on the session screen: the step accounted from the original's new figures
        await pilot.press("escape")
        await _settle(main, pilot)
        other = Settings(estimator="script")
        main.set_settings(other)
        await _settle(main, pilot)
        again, base = main.figures, compute(wb.stack.original.session, other)
        assert again.session is step.session and again.settings == other
        assert dict(again.categories)[PREFIX] == dict(base.categories)[PREFIX]
        assert again.window.used == dict(base.categories)[PREFIX] + again.size(n) + again.size(n + 1) + sum(
            base.size(i) for i in kept)


def test_kept_messages_whose_growth_the_cut_splits_are_derived_after_it():
    """A growth spread over messages on both sides of the cut: the kept side's share keeps its figure, labelled
    derived; the after line says so."""
    session = talk()
    before = compute(session, Settings(estimator="chars35"))
    plan = plan_strategy("summary", session, SummarySettings(keep_ratio=0.25), Estimates("chars35"))
    assert plan.summary.split == 2
    plan = complete_summary(plan, "They talked.")
    later = after(before, plan)
    n = len(session.messages)
    assert [later.measured[j] for j in range(n + 2, n + 6)] == [None, *before.measured[3:5], None]
    assert [later.basis(j) for j in range(n + 2, n + 6)] == ["derived", "measured", "measured", "estimated"]
    assert [later.size(j) for j in range(n + 2, n + 6)] == [before.size(i) for i in range(2, 6)]
    assert later.window.used == dict(before.categories)[PREFIX] + later.size(n) + later.size(n + 1) + sum(
        before.size(i) for i in range(2, 6))
    label = str(after_label(Preview(plan, before, later)))
    assert "(2 measured, 1 now derived: the cut splits the growth they were measured from)" in label
    assert "= prefix" in label and "+ summary" in label and "+ 4 kept" in label
