"""The workbench's UI-free core: the step stack (undo, redo, compare), the next layer as maybe_compact picks it, and
what survives a summary in Claude Code; plus the accounting figure after a microcompaction applied in a preview."""

from __future__ import annotations

import pytest

from inspector.core.compaction import (CompactionPolicy, Estimates, PendingSummary, SnipSettings, SummarySettings,
                                       plan_strategy)
from inspector.core.compaction.steps import StepStack, next_layer
from inspector.core.compaction.survival import RESTORE_FILE_TOKENS, RESTORE_FILES, survival
from inspector.core.formats import load
from inspector.core.model import Block, Message, Session
from inspector.core.tokens import account
from inspector.samples import SAMPLE_DIR

AUTOCOMPACT = SAMPLE_DIR / "claude-code-autocompact.jsonl"


def _stack() -> tuple[StepStack, Estimates]:
    session = load(AUTOCOMPACT)
    return StepStack.start(session, 30_000), Estimates("chars35")


def _push(stack: StepStack, plan, summary: str | None = None):
    """Push `plan` applied, its figure the one before less the plan's estimated saving (the app gives the figures'
    own: `figures.after`)."""
    from inspector.core.compaction import apply

    return stack.push(plan, stack.current.figure - plan.saved, apply(plan, summary))


def test_push_undo_redo_and_a_new_step_drops_the_redo_tail():
    stack, est = _stack()
    original = stack.current.session
    snip = plan_strategy("snip", original, SnipSettings(), est)
    step = _push(stack, snip)
    assert step.figure == 30_000 - snip.saved and step.label == f"snip ({-snip.saved:+,})"
    assert original.compactions == stack.original.session.compactions  # the original is untouched
    summary = plan_strategy("summary", step.session, SummarySettings(), est)
    with pytest.raises(PendingSummary):
        _push(stack, summary)
    assert len(stack.steps) == 2  # a failed push leaves the stack as it was
    _push(stack, summary, "The user built a weather daemon; nothing is pending.")
    assert [s.strategy for s in stack.steps] == [None, "snip", "summary"]
    assert stack.current.session.context[0].kind == "compact_summary"

    assert stack.undo().strategy == "snip" and stack.undo().strategy is None
    assert stack.undo() is None and not stack.can_undo
    assert stack.current.session is original
    assert stack.redo().strategy == "snip" and stack.can_redo
    clear = plan_strategy("clear", stack.current.session, None, est)
    with pytest.raises(ValueError):
        _push(stack, plan_strategy("clear", original, None, est))  # a plan made on another step
    _push(stack, clear)
    assert [s.strategy for s in stack.steps] == [None, "snip", "clear"] and not stack.can_redo


def test_compare_any_two_steps():
    stack, est = _stack()
    _push(stack, plan_strategy("snip", stack.current.session, None, est))
    summary = plan_strategy("summary", stack.current.session, None, est)
    _push(stack, summary, "short summary")
    diff = stack.compare(0, 2, est)
    counts = diff.counts
    assert counts["removed"] == summary.counts["summarized"] and counts["added"] == 2
    assert diff.after < diff.before
    snip_only = stack.compare(0, 1, est)
    assert set(snip_only.counts) == {"kept", "changed"} and snip_only.counts["changed"] == 4
    assert stack.compare(1, 1, est).counts == {"kept": len(stack.steps[1].session.context)}
    backwards = stack.compare(2, 0, est)
    assert backwards.counts["added"] == counts["removed"] and backwards.before == diff.after


def test_next_layer_follows_maybe_compact():
    stack, est = _stack()
    policy = CompactionPolicy(threshold=23_000, micro="snip")  # 30k -> ~24.8k (snip) -> ~22.3k
    first = next_layer(stack.current, policy, est)
    assert first.plan is not None and first.plan.strategy == "snip"
    _push(stack, first.plan)
    second = next_layer(stack.current, policy, est)
    assert second.plan is not None and second.plan.strategy == "summary", second.reason
    _push(stack, second.plan, "summary text")
    third = next_layer(stack.current, policy, est)
    assert third.plan is None and "within the threshold" in third.reason
    assert next_layer(stack.current, policy, est, force=True).plan is not None  # forced: summarize again

    low = CompactionPolicy(threshold=10**9)
    assert next_layer(stack.original, low, est).plan is None


def _read(i: int, path: str, text: str) -> list[Message]:
    return [Message("assistant", "assistant", [Block.of("tool_use", tool_id=f"r{i}", tool_name="Read",
                                                        input={"file_path": path})]),
            Message("user", "tool_result", [Block("tool_result", text, tool_id=f"r{i}")])]


def _session(messages: list[Message]) -> Session:
    return Session("mem.jsonl", "claude-code", messages)


def test_survival_keeps_the_five_most_recent_files_and_names_big_ones():
    msgs: list[Message] = [Message("user", "prompt", [Block("text", "start")])]
    for i in range(7):
        msgs += _read(i, f"/p/f{i}.py", f"content {i} " * 50)
    msgs += _read(7, "/p/big.py", "x" * (RESTORE_FILE_TOKENS * 4 + 400))
    msgs += _read(8, "/p/f1.py", "again " * 20)  # f1 read again: now among the most recent
    msgs.append(Message("assistant", "assistant", [Block.of("tool_use", tool_id="t", tool_name="TodoWrite",
                                                            input={"todos": [{"content": "ship it"}]})]))
    msgs.append(Message("user", "tool_result", [Block("tool_result", "ok", tool_id="t")]))
    msgs += _read(9, "/p/kept.py", "kept " * 800)
    msgs.append(Message("assistant", "assistant", [Block("text", "done " * 400)]))
    session = _session(msgs)
    plan = plan_strategy("summary", session, SummarySettings(keep_ratio=0.15), Estimates("chars35"))
    assert plan.summary.split == len(msgs) - 3  # the last read and the reply are kept
    out = survival(plan)
    fates = {f.path: f.fate for f in out.files}
    assert fates["/p/kept.py"] == "in kept messages"
    assert fates["/p/big.py"] == "named only"
    reinjected = [p for p, fate in fates.items() if fate == "re-injected"]
    assert len(reinjected) + 1 == RESTORE_FILES  # big.py takes one of the five places
    assert "/p/f1.py" in reinjected and "/p/f0.py" not in reinjected and fates["/p/f0.py"] == "summary only"
    assert "ship it" in out.todos and out.todos_tokens > 0
    f1 = next(f for f in out.files if f.path == "/p/f1.py")
    assert f1.read_index in out.reinjected_messages and f1.tokens == Estimates("chars35").text("again " * 20)
    assert out.summary_only["tool_result"][0] >= 8
    text = "\n".join(out.lines())
    assert "↻ /p/f1.py" in text and "CLAUDE.md" in text and "only in the summary" in text


def test_survival_of_a_real_session_and_of_a_plan_without_summary():
    session = load(AUTOCOMPACT)
    est = Estimates("chars35")
    out = survival(plan_strategy("summary", session, None, est))
    assert sum(f.fate == "re-injected" for f in out.files) <= RESTORE_FILES
    assert all(f.path.startswith("/home/user/projects/weatherd/") for f in out.files)
    assert survival(plan_strategy("snip", session, None, est)).files == []


def test_survival_sizes_a_snipped_read_from_the_original():
    msgs = [Message("user", "prompt", [Block("text", "start")]), *_read(0, "/p/a.py", "line of code\n" * 400),
            Message("assistant", "assistant", [Block("text", "reply " * 300)])]
    original = _session(msgs)
    est = Estimates("chars35")
    snipped = plan_strategy("snip", original, SnipSettings(preserve_last_n=1, max_chars=200), est)
    from inspector.core.compaction import apply

    after = apply(snipped)
    plan = plan_strategy("summary", after, SummarySettings(keep_ratio=0.1), est)
    (small,) = survival(plan).files
    (whole,) = survival(plan, original=original).files
    assert small.tokens < 100 < whole.tokens == est.text("line of code\n" * 400)


def test_estimator_for_reuses_the_fit_of_the_session_just_accounted(monkeypatch):
    from inspector.core import tokens

    session = load(SAMPLE_DIR / "claude-code-tool-heavy.jsonl")
    acc = account(session, "calibrated")
    calls: list[Session] = []
    real = tokens.account
    monkeypatch.setattr(tokens, "account", lambda s, *a, **k: calls.append(s) or real(s, *a, **k))
    fitted = tokens.estimator_for(session)
    assert calls == [] and fitted.per_model == {k: tuple(v) for k, v in acc.ratios.items()}
    other = session.copy_with(messages=list(session.messages))  # equal, but not the session accounted last
    assert tokens.estimator_for(other).per_model == fitted.per_model and calls == [other]
