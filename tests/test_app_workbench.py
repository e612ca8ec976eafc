"""The compaction workbench driven with Pilot: preview, step through snip then a summary written by the model (the
local Messages-API server through the real SDK), undo to the original, redo, compare, export and reload; the
summary without a key, cancelling it, settings that re-plan at once, and an export that would hit the original."""

from __future__ import annotations

import hashlib
import threading

import pytest
from app_helpers import ready
from mock_api import MOCK_KEY, responses as r
from textual.widgets import Input, Select, Static, TextArea

from inspector.app import make_app
from inspector.core.figures import Settings
from inspector.app.screens.workbench import WorkbenchScreen
from inspector.app.widgets.before_after import BeforeAfter
from inspector.app.widgets.context_bar import ContextBar
from inspector.app.widgets.diff_view import DiffView
from inspector.app.widgets.message_list import MessageList
from inspector.app.widgets.timeline import Timeline
from inspector.core.pairing import pairs_intact
from inspector.core.formats import load
from inspector.samples import SAMPLE_DIR

AUTOCOMPACT = SAMPLE_DIR / "claude-code-autocompact.jsonl"
FIXED = Settings(estimator="chars35")
SUMMARY = ("<analysis>Went through it.</analysis>\n<summary>1. Primary Request and Intent: fix the weather daemon's "
           "retry path.\n7. Pending Tasks: none. \x1b[2J</summary>")


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


async def _settle(screen, pilot) -> None:
    for _ in range(3):
        await screen.workers.wait_for_complete()
        await pilot.pause()


async def _open(app, pilot) -> WorkbenchScreen:
    await ready(app, pilot)
    await pilot.press("c")
    wb = app.screen
    assert isinstance(wb, WorkbenchScreen)
    await _settle(wb, pilot)
    assert wb.preview is not None
    return wb


def _text(wb, selector: str) -> str:
    return str(wb.query_one(selector, Static).render())


async def _main_shows(main, pilot, session) -> None:
    await _settle(main, pilot)
    assert main.session is session and main.figures.session is session
    assert main.query_one(MessageList).figures.session is session
    assert main.query_one(ContextBar).figures.session is session
    assert main.query_one(Timeline).figures.session is session


async def test_snip_then_model_summary_undo_redo_compare_export_and_reload(mock_api, tmp_path):
    mock_api.add(r.text(SUMMARY))
    original_digest = _digest(AUTOCOMPACT)
    app = make_app(AUTOCOMPACT, home=False, settings=FIXED)
    async with app.run_test(size=(160, 48)) as pilot:
        wb = await _open(app, pilot)
        main = wb.target
        original = main.session

        await pilot.press("left_square_bracket")  # clear -> snip
        await _settle(wb, pilot)
        plan = wb.preview.plan
        assert plan.strategy == "snip" and plan.counts.get("snipped", 0) >= 1
        diff = wb.query_one(DiffView)
        first = diff.current
        assert first is not None and first.fate == "snipped" and first.delta < 0
        assert "snipped" in diff.line_text(diff.cursor) and f"{first.delta:+,}" in diff.line_text(diff.cursor)
        assert f"freed {wb.preview.figures.saved:,}" in _text(wb, "#wb-totals")
        ba = wb.query_one(BeforeAfter)
        assert "chars snipped" in str(ba.query_one("#ba-after-text", Static).render())
        assert "chars snipped" not in str(ba.query_one("#ba-before-text", Static).render())
        assert wb.query_one("#wb-bar-after", ContextBar).figures.window.used < main.figures.window.used

        await pilot.press("a")
        await _settle(wb, pilot)
        snipped = wb.stack.current.session
        assert wb.stack.position == 1 and wb.stack.current.strategy == "snip"
        await _main_shows(main, pilot, snipped)

        await pilot.press("left_square_bracket")  # snip -> summary (wraps)
        await _settle(wb, pilot)
        assert wb.strategy == "summary" and wb.preview.plan.pending
        wb.query_one("#sum-instructions", Input).value = "Keep the test names."
        await _settle(wb, pilot)
        state = wb.preview.plan.summary
        assert state.prompt.endswith("Additional Instructions:\nKeep the test names.")
        prompt_text = _text(wb, "#wb-prompt-text")
        assert f"~{state.request_tokens:,} tokens" in prompt_text and "Keep the test names." in prompt_text
        kept = wb.preview.survival
        assert kept is not None and kept.reinjected_messages
        marked = [i for i in range(len(diff.lines)) if "↻ re-injected" in diff.line_text(i)]
        assert len(marked) == len(kept.reinjected_messages)
        await pilot.press("w")
        survives = _text(wb, "#wb-survival-text")
        assert "re-injected by Claude Code" in survives and "only in the summary" in survives
        await pilot.press("w")  # back to the summary panel

        await pilot.press("r")
        await _settle(wb, pilot)
        area = wb.query_one("#wb-summary-text", TextArea)
        assert area.text.startswith("1. Primary Request and Intent: fix the weather daemon")
        assert "<analysis>" not in area.text and not wb.preview.plan.pending
        assert "\x1b" not in area.text and "␛[2J" in area.text  # the model's text is data: escapes made visible
        (request,) = mock_api.message_requests
        assert request.body["messages"][-1]["content"][-1]["text"] == state.prompt and request.streamed
        assert MOCK_KEY not in app.export_screenshot()

        area.load_text(area.text + "\nEdited by hand: remember the flaky test.")
        await pilot.press("ctrl+s")
        await _settle(wb, pilot)
        summarized = wb.stack.current.session
        assert wb.stack.position == 2 and wb.stack.current.strategy == "summary"
        context = summarized.context
        assert context[0].kind == "compact_summary" and "Edited by hand" in context[0].text()
        assert "<analysis>" not in context[0].text() and pairs_intact(context)
        await _main_shows(main, pilot, summarized)

        await pilot.press("u", "u")
        await _settle(wb, pilot)
        assert wb.stack.position == 0
        await _main_shows(main, pilot, original)
        await pilot.press("U", "U")
        await _settle(wb, pilot)
        assert wb.stack.current.session is summarized
        await _main_shows(main, pilot, summarized)

        await pilot.press("c")
        box = wb.query_one("#wb-ask-input", Input)
        assert box.has_focus and box.value == "0 2"
        await pilot.press("enter")
        await _settle(wb, pilot)
        a, b, cmp = wb.compared
        assert (a, b) == (0, 2) and cmp.counts["added"] == 2 and cmp.counts["removed"] >= 1
        assert "step 0 → step 2" in _text(wb, "#wb-totals")
        await pilot.press("escape")
        assert wb.compared is None

        out = tmp_path / "compacted.jsonl"
        await pilot.press("x")
        assert wb.query_one("#wb-export-format", Select).value == "claude-code"
        box.value = str(out)
        await pilot.press("enter")
        await _settle(wb, pilot)
        assert wb.last_export == out and out.is_file()
        assert _digest(AUTOCOMPACT) == original_digest  # the original is never touched

    reloaded = load(out)
    assert not reloaded.warnings and reloaded.format == "claude-code"
    assert [m.text() for m in reloaded.context] == [m.text() for m in summarized.context]
    assert [m.role for m in reloaded.context] == [m.role for m in summarized.context]
    assert reloaded.context[0].kind == "compact_summary"
    snips = [b.text for m in reloaded.messages for b in m.tool_results() if "chars snipped" in b.text]
    assert snips  # a snip lives in the results' own lines (Claude Code has no boundary for it)
    compacts = [c for c in summarized.compactions if c.kind == "compact"]
    assert [c.index for c in reloaded.compactions if c.kind == "compact"] == [c.index for c in compacts]


async def test_without_a_key_the_user_writes_the_summary(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    app = make_app(AUTOCOMPACT, home=False, settings=FIXED)
    async with app.run_test(size=(160, 48)) as pilot:
        wb = await _open(app, pilot)
        await pilot.press("e")  # edit the summary: switches to the summary strategy
        await _settle(wb, pilot)
        status = _text(wb, "#wb-summary-status")
        assert "ANTHROPIC_API_KEY" in status and "ANTHROPIC_BASE_URL" in status
        assert wb.query_one("#wb-run").disabled
        area = wb.query_one("#wb-summary-text", TextArea)
        assert area.has_focus
        await pilot.press("ctrl+s")  # nothing written yet: refused, nothing applied
        assert wb.stack.position == 0
        await pilot.press(*"Fixed the retry path.")
        assert area.text == "Fixed the retry path."
        assert wb.stack.position == 0  # typing 'a' or 'u' in the editor is text, not a key binding
        await pilot.click("#wb-approve")
        await _settle(wb, pilot)
        assert wb.stack.position == 1
        assert "Fixed the retry path." in wb.stack.current.session.context[0].text()
        assert wb.query_one(DiffView).has_focus  # approved: back in the diff
        await pilot.press("e", "escape")  # esc leaves the editor first, then the workbench
        assert wb.query_one(DiffView).has_focus and app.screen is wb
        await pilot.press("escape")
        assert app.screen is wb.target and wb.target.session is wb.stack.current.session
        await pilot.press("c")  # reopened on the same state: the steps are still there
        assert isinstance(app.screen, WorkbenchScreen) and app.screen.stack is wb.stack


async def test_escape_cancels_a_running_summary(mock_api):
    gate = threading.Event()
    mock_api.add(r.text(SUMMARY, gate=gate))
    app = make_app(AUTOCOMPACT, home=False, settings=FIXED)
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            wb = await _open(app, pilot)
            wb.set_strategy("summary")
            await _settle(wb, pilot)
            await pilot.press("r")
            for _ in range(200):
                await pilot.pause(0.02)
                if wb._buffer:
                    break
            assert wb._buffer and "writing" in _text(wb, "#wb-summary-status")
            await pilot.press("escape")
            await _settle(wb, pilot)
            assert "cancelled by the user" in _text(wb, "#wb-summary-status")
            assert wb.stack.position == 0 and app.screen is wb
            area = wb.query_one("#wb-summary-text", TextArea)
            assert not area.read_only and area.text  # what had arrived stays, to edit or discard
            await pilot.click("#wb-discard")
            assert area.text == ""
    finally:
        gate.set()


async def test_settings_re_plan_at_once_and_next_layer():
    app = make_app(AUTOCOMPACT, home=False, settings=FIXED)
    async with app.run_test(size=(160, 48)) as pilot:
        wb = await _open(app, pilot)
        wb.set_strategy("snip")
        await _settle(wb, pilot)
        default = wb.preview.plan.saved
        wb.query_one("#snip-maxchars", Input).value = "500"
        await _settle(wb, pilot)
        assert wb.preview.plan.settings.max_chars == 500 and wb.preview.plan.saved > default
        wb.query_one("#snip-preserve", Input).value = "1000"
        await _settle(wb, pilot)
        assert not wb.preview.plan.changed
        await pilot.press("a")
        assert wb.stack.position == 0  # nothing to apply

        await pilot.press("l")  # within the threshold: maybe_compact would do nothing
        await _settle(wb, pilot)
        assert wb.stack.position == 0
        wb.stack.steps[0] = wb.stack.steps[0].__class__(wb.stack.steps[0].session, "original", 10**6)
        await pilot.press("l")  # over it: the micro layer first (the app's micro strategy, clear)
        await _settle(wb, pilot)
        assert wb.stack.current.strategy == "clear"
        step = wb.stack.current  # its figure is the real one now, within the threshold: over it again
        wb.stack.steps[1] = step.__class__(step.session, step.label, 10**6, step.plan)
        await pilot.press("l")  # then the summary, which needs a text
        await _settle(wb, pilot)
        assert wb.stack.position == 1 and wb.strategy == "summary"


async def test_export_refuses_the_original_file(tmp_path):
    copy = tmp_path / "session.jsonl"
    copy.write_bytes(AUTOCOMPACT.read_bytes())
    before = _digest(copy)
    app = make_app(copy, home=False, settings=FIXED)
    async with app.run_test(size=(160, 48)) as pilot:
        wb = await _open(app, pilot)
        await pilot.press("a")
        await _settle(wb, pilot)
        await pilot.press("x")
        box = wb.query_one("#wb-ask-input", Input)
        assert box.value == str(tmp_path / "session.compacted.jsonl")
        box.value = str(copy)
        await pilot.press("enter")
        await _settle(wb, pilot)
        assert wb.last_export is None
        assert _digest(copy) == before and sorted(p.name for p in tmp_path.iterdir()) == ["session.jsonl"]


@pytest.mark.parametrize("fmt", ["neutral"])
async def test_export_neutral_reloads(tmp_path, fmt):
    app = make_app(AUTOCOMPACT, home=False, settings=FIXED)
    out = tmp_path / "out.jsonl"
    async with app.run_test(size=(160, 48)) as pilot:
        wb = await _open(app, pilot)
        await pilot.press("a")
        await _settle(wb, pilot)
        await pilot.press("x")
        wb.query_one("#wb-export-format", Select).value = fmt
        wb.query_one("#wb-ask-input", Input).value = str(out)
        await pilot.press("enter")
        await _settle(wb, pilot)
        session = wb.stack.current.session
    reloaded = load(out)
    assert reloaded.format == "neutral"
    assert [m.text() for m in reloaded.context] == [m.text() for m in session.context]


async def test_survival_is_for_claude_code_sessions():
    app = make_app(SAMPLE_DIR / "agent-short.jsonl", home=False, settings=FIXED)
    async with app.run_test(size=(160, 48)) as pilot:
        wb = await _open(app, pilot)
        wb.set_strategy("summary")
        await _settle(wb, pilot)
        await pilot.press("w")
        assert wb.preview.survival is None
        assert "computed for Claude Code sessions" in _text(wb, "#wb-survival-text")
