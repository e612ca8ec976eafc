"""The diff view and the before/after panes on their own: folded kept runs, the cursor on changes, the survival
marker, 100,000 rows, and session text shown literally (markup and escape sequences inert)."""

from __future__ import annotations

from textual.app import App, ComposeResult

from inspector.app.widgets.before_after import CAP, BeforeAfter, message_text
from inspector.app.widgets.diff_view import DiffView
from inspector.core.compaction.plan import Row
from inspector.core.model import Block, Message

HOSTILE = "[bold red]not bold[/] [@click=app.quit]quit[/] \x1b[31mred\x1b[0m \x07"


def _message(text: str, kind: str = "assistant") -> Message:
    return Message("user" if kind == "tool_result" else "assistant", kind, [Block("text", text)])


def _rows(n: int, changed: set[int]) -> list[Row]:
    rows = []
    for i in range(n):
        if i in changed:
            rows.append(Row("snipped", i, i, "user", "tool_result", 500, 100, _message(f"cut {i}", "tool_result"),
                            "1 result(s) snipped"))
        else:
            rows.append(Row("kept", i, i, "assistant", "assistant", 10, 10, _message(f"kept {i}")))
    return rows


class Host(App[None]):
    def compose(self) -> ComposeResult:
        yield DiffView(id="diff")
        yield BeforeAfter(id="ba")


async def test_kept_runs_fold_and_the_cursor_walks_the_changes():
    app = Host()
    async with app.run_test(size=(120, 30)) as pilot:
        view = app.query_one(DiffView)
        view.focus()
        rows = _rows(20, {3, 4, 12})
        view.show(rows, survives={12})
        # kept 0-2 folded, 3, 4, kept 5-11 folded, 12, kept 13-19 folded
        assert len(view.lines) == 6 and view.current is rows[3]
        folded = view.line_text(0)
        assert "3 messages" in folded and "unchanged" in folded
        line = view.line_text(1)
        assert line.startswith("~ snipped") and "-400" in line and "[1 result(s) snipped] cut 3" in line
        assert "↻ re-injected" in view.line_text(4) and "↻" not in line
        await pilot.press("n")
        assert view.current is rows[4]
        await pilot.press("n")
        assert view.current is rows[12]
        await pilot.press("n")
        assert view.current is rows[12]  # no change after it
        await pilot.press("N", "N")
        assert view.current is rows[3]
        await pilot.press("K")
        assert len(view.lines) == 20 and view.current is rows[3]  # all rows, cursor on the same row
        await pilot.press("G")
        assert view.current is rows[19]
        await pilot.press("K")
        assert view.current is rows[3]  # back to folded: the kept row is hidden, so the first change
        view.show(_rows(5, set()))
        assert view.lines == [-1] and view.current is None


async def test_a_hundred_thousand_rows():
    app = Host()
    async with app.run_test(size=(120, 30)) as pilot:
        view = app.query_one(DiffView)
        changed = set(range(0, 100_000, 7))
        rows = _rows(100_000, changed)
        view.show(rows)
        await pilot.pause()
        assert len(view.lines) == 2 * len(changed)  # each change, then its run of 6 (at the end 4) kept rows
        view.focus()
        await pilot.press("end")
        assert view.cursor == len(view.lines) - 1 and view.scroll_offset.y > 0
        assert len(view._cache) < 200  # only what was on screen was drawn


async def test_session_text_is_literal_in_both_views():
    app = Host()
    async with app.run_test(size=(120, 30)) as pilot:
        view = app.query_one(DiffView)
        before = _message(HOSTILE)
        after = Message("assistant", "assistant", [Block("text", HOSTILE + " after")])
        view.show([Row("changed", 0, 0, "assistant", "assistant", 40, 30, after)])
        text = view.line_text(0, 300)
        assert "[bold red]not bold[/]" in text and "[@click=app.quit]" in text
        assert "\x1b" not in text and "\x07" not in text and "␛[31m" in text
        ba = app.query_one(BeforeAfter)
        ba.show(before, after, (40, 30))
        await pilot.pause()
        shown = message_text(after).plain
        assert "[@click=app.quit]quit[/]" in shown and "\x1b" not in shown and "␛" in shown
        assert ba.query_one("#ba-after").border_title == "after · 30 tokens estimated"
        await pilot.click("#ba-after", offset=(20, 1))  # a click on the literal [@click] text does nothing
        assert app.is_running


def test_before_after_caps_huge_content_and_names_blocks():
    huge = Message("user", "tool_result", [Block("tool_result", "x" * (CAP + 5000), tool_id="t1", tool_name="Read"),
                                           Block("tool_result", "second", tool_id="t2")])
    text = message_text(huge).plain
    assert "── tool_result Read t1" in text and "… 5,000 more characters" in text
    assert "… 6 more characters" in text and len(text) < CAP + 200
    call = Message("assistant", "assistant", [Block.of("tool_use", tool_id="t3", tool_name="Bash",
                                                       input={"command": "ls"})])
    assert '"command": "ls"' in message_text(call).plain
    assert "no message on this side" in message_text(None).plain


async def test_a_microcompactions_rows_built_when_drawn_show_as_the_plans_rows():
    """A plan's rows in the bars' figures (the core's StepRows: each message's figure before and after, what the
    step and the report of its export state), built when drawn, draw as the same rows built at once."""
    from inspector.core.compaction import Estimates, SnipSettings, plan_snip
    from inspector.core.figures import Settings, StepRows, after, compute
    from inspector.core.formats import load
    from inspector.samples import SAMPLE_DIR

    session = load(SAMPLE_DIR / "claude-code-tool-heavy.jsonl")
    before = compute(session, Settings(estimator="chars35"))
    plan = plan_snip(session, SnipSettings(preserve_last_n=4), Estimates("chars35"))
    later = after(before, plan)
    lazy, rows = StepRows(plan, before, later), list(StepRows(plan, before, later))
    assert len(lazy) == len(rows) and lazy.changes == [k for k, r in enumerate(rows) if r.fate != "kept"]
    assert [(r.fate, r.old, r.new) for r in rows] == [(r.fate, r.old, r.new) for r in plan.rows]
    assert all(r.before == before.size(r.old) and r.after == later.size(r.new) for r in rows)
    assert later.window.used == before.window.used + sum(r.delta for r in rows)
    app = Host()
    async with app.run_test(size=(140, 30)) as pilot:
        view = app.query_one(DiffView)
        view.focus()
        shown = []
        for source in (rows, lazy):
            view.show(source)
            await pilot.press("n", "n")
            if source is lazy:
                assert len(lazy._built) < len(rows)  # kept rows inside folded runs are not built to fold them
            await pilot.press("K", "end")
            shown.append(([view.line_text(k) for k in range(view.line_count)], view.current.old))
            await pilot.press("K")
            shown.append([view.line_text(k) for k in range(view.line_count)])
        assert shown[0] == shown[2] and shown[1] == shown[3]
        assert len(shown[1]) < len(rows) and any("unchanged (K shows them)" in line for line in shown[1])


async def test_a_summarys_rows_in_the_bars_figures_and_the_cursor_kept_on_its_message_across_previews():
    from inspector.core.compaction import Estimates, SummarySettings, complete_summary, plan_strategy
    from inspector.core.figures import Settings, StepRows, after, compute
    from inspector.core.formats import load
    from inspector.samples import SAMPLE_DIR

    session = load(SAMPLE_DIR / "claude-code-tool-heavy.jsonl")
    before = compute(session, Settings(estimator="chars35"))
    plan = plan_strategy("summary", session, SummarySettings(), Estimates("chars35"))
    pending = StepRows(plan, before, after(before, plan))
    written = complete_summary(plan, "They read the parser.")
    later = after(before, written)
    lazy, rows = StepRows(written, before, later), written.rows
    assert [(r.fate, r.old, r.new, r.kind) for r in lazy] == [(r.fate, r.old, r.new, r.kind) for r in rows]
    assert all(r.before == (before.size(r.old) if r.old is not None else 0) for r in lazy)
    assert [r.after for r in lazy if r.fate == "added"] == [later.size(r.new) for r in rows if r.fate == "added"]
    assert [r.after for r in pending if r.fate == "added"][0] is None  # the summary pending
    assert all(lazy.position(r) == k for k, r in enumerate(rows))
    assert any(a.before != b.before for a, b in zip(lazy, rows))  # measured shares, not the plan's estimates
    app = Host()
    async with app.run_test(size=(140, 30)) as pilot:
        view = app.query_one(DiffView)
        view.focus()
        view.show(pending)
        await pilot.press("n", "n", "n")
        on = view.current
        assert on is not None and on.fate == "summarized"
        view.show(lazy)  # the summary written: the same rows in other objects, the cursor stays on its message
        assert view.current is not on and (view.current.fate, view.current.old) == ("summarized", on.old)
        k = lazy.folded + len(written.added) - 1
        kept = range(k + 1, len(lazy))  # the kept run, folded into the last line
        assert view.lines[-1] < 0 and lazy.tokens(kept.start, kept.stop) == sum(lazy[j].before for j in kept)
