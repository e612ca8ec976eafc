"""The workbench's UI-free core: the step stack (undo, redo, compare), the next layer as maybe_compact picks it, and
what survives a summary in Claude Code; plus the accounting figure after a microcompaction applied in a preview."""

from __future__ import annotations

import pytest

from inspector.core.compaction import (ClearSettings, CompactionPolicy, ContextEditSettings, Estimates,
                                       PendingSummary, SnipSettings, SummarySettings, plan_strategy)
from inspector.core.compaction.steps import StepStack, microcompacted, next_layer
from inspector.core.compaction.survival import RESTORE_FILE_TOKENS, RESTORE_FILES, survival
from inspector.core.formats import load
from inspector.core.model import Block, Message, Session
from inspector.core.tokens import account
from inspector.samples import SAMPLE_DIR

AUTOCOMPACT = SAMPLE_DIR / "claude-code-autocompact.jsonl"


def _stack() -> tuple[StepStack, Estimates]:
    session = load(AUTOCOMPACT)
    return StepStack.start(session, 30_000), Estimates("chars35")


def test_push_undo_redo_and_a_new_step_drops_the_redo_tail():
    stack, est = _stack()
    original = stack.current.session
    snip = plan_strategy("snip", original, SnipSettings(), est)
    step = stack.push(snip)
    assert step.figure == 30_000 - snip.saved and step.label.startswith("snip (-")
    assert original.compactions == stack.original.session.compactions  # the original is untouched
    summary = plan_strategy("summary", step.session, SummarySettings(), est)
    with pytest.raises(PendingSummary):
        stack.push(summary)
    assert len(stack.steps) == 2  # a failed push leaves the stack as it was
    stack.push(summary, "The user built a weather daemon; nothing is pending.")
    assert [s.strategy for s in stack.steps] == [None, "snip", "summary"]
    assert stack.current.session.context[0].kind == "compact_summary"

    assert stack.undo().strategy == "snip" and stack.undo().strategy is None
    assert stack.undo() is None and not stack.can_undo
    assert stack.current.session is original
    assert stack.redo().strategy == "snip" and stack.can_redo
    clear = plan_strategy("clear", stack.current.session, None, est)
    with pytest.raises(ValueError):
        stack.push(plan_strategy("clear", original, None, est))  # a plan made on another step
    stack.push(clear)
    assert [s.strategy for s in stack.steps] == [None, "snip", "clear"] and not stack.can_redo


def test_compare_any_two_steps():
    stack, est = _stack()
    stack.push(plan_strategy("snip", stack.current.session, None, est))
    summary = plan_strategy("summary", stack.current.session, None, est)
    stack.push(summary, "short summary")
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
    stack.push(first.plan)
    second = next_layer(stack.current, policy, est)
    assert second.plan is not None and second.plan.strategy == "summary", second.reason
    stack.push(second.plan, "summary text")
    third = next_layer(stack.current, policy, est)
    assert third.plan is None and "within the threshold" in third.reason
    assert next_layer(stack.current, policy, est, force=True).plan is not None  # forced: summarize again

    low = CompactionPolicy(threshold=10**9)
    assert next_layer(stack.original, low, est).plan is None


def test_accounting_sees_a_microcompaction_applied_after_the_last_request():
    stack, est = _stack()
    before = account(stack.current.session, "chars35").current_context
    plan = plan_strategy("snip", stack.current.session, None, est)
    stack.push(plan)
    after = account(stack.current.session, "chars35").current_context
    assert plan.saved > 0 and after == before - plan.saved


def _read(i: int, path: str, text: str) -> list[Message]:
    return [Message("assistant", "assistant", [Block("tool_use", tool_id=f"r{i}", tool_name="Read",
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
    msgs.append(Message("assistant", "assistant", [Block("tool_use", tool_id="t", tool_name="TodoWrite",
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


# -- the figures after a microcompaction, from the figures before (`microcompacted`) -----------------------------------

def _two_tools() -> Session:
    """One assistant turn calling Read and Bash (a long input each), one user message holding both results."""
    messages = [Message("user", "prompt", [Block("text", "Look at the parser.")], uuid="u0")]
    for k in range(3):
        messages.append(Message("assistant", "assistant", [
            Block("text", f"Reading the parser and running the tests, round {k}: " + "why " * 60),
            Block("tool_use", tool_id=f"r{k}", tool_name="Read", input={"file_path": "p.py", "note": "x" * 3000}),
            Block("tool_use", tool_id=f"b{k}", tool_name="Bash", input={"command": "pytest", "note": "y" * 1000})],
            uuid=f"a{k}"))
        messages.append(Message("user", "tool_result", [
            Block("tool_result", "def parse():\n" * 900, tool_id=f"r{k}"),
            Block("tool_result", "PASSED\n" * 300, tool_id=f"b{k}")], uuid=f"t{k}"))
    messages.append(Message("assistant", "assistant", [Block("text", "All green.")], uuid="end"))
    return Session("two-tools.jsonl", "claude-code", messages)


def test_microcompacted_frees_each_changed_message_from_its_edited_categories():
    session = _two_tools()
    est = Estimates("chars35")
    plan = plan_strategy("clear", session, ClearSettings(keep_recent=0), est)
    assert set(plan.micro.after) == {2, 4, 6}
    measured = {i: plan.tokens[i] + 40 for i in plan.micro.after}  # a measured share a little above the estimate
    edit = microcompacted(plan, lambda i: measured.get(i, plan.tokens[i]))
    assert edit.sizes == plan.micro.after
    assert edit.freed == sum(measured[i] - size for i, size in plan.micro.after.items())
    assert set(edit.by_category) == {"tool_results:Read", "tool_results:Bash"}
    assert sum(edit.by_category.values()) == edit.freed
    # each frees in proportion to what its blocks lost: Read's results hold 11,700 characters, Bash's 2,100
    assert 5.3 < edit.by_category["tool_results:Read"] / edit.by_category["tool_results:Bash"] < 6.0
    assert edit.category == {}  # still mostly Read results


def test_microcompacted_moves_a_message_whose_edit_changes_its_main_category():
    session = _two_tools()
    est = Estimates("chars35")
    plan = plan_strategy("clear_tool_uses", session, ContextEditSettings(trigger=0, keep=0, clear_tool_inputs=True),
                         est, context_tokens=10**6)
    assert {1, 3, 5} <= set(plan.micro.after)  # the calls' inputs cleared
    edit = microcompacted(plan, lambda i: plan.tokens[i])
    assert edit.freed == plan.saved  # figures equal to the plan's estimates: the same saving
    assert sum(edit.by_category.values()) == edit.freed and "tool_calls" in edit.by_category
    assert {edit.category[i] for i in (1, 3, 5)} == {"assistant_text"}  # the text outweighs the emptied calls


def test_microcompacted_refuses_a_summary_plan():
    stack, est = _stack()
    with pytest.raises(ValueError, match="not a microcompaction"):
        microcompacted(plan_strategy("summary", stack.current.session, None, est), lambda i: 0)


def test_a_step_pushed_with_the_bars_saving_carries_that_figure():
    stack, est = _stack()
    snip = plan_strategy("snip", stack.current.session, SnipSettings(), est)
    step = stack.push(snip, saved=snip.saved + 123)
    assert step.figure == 30_000 - snip.saved - 123 and step.label == f"snip (-{snip.saved + 123:,})"


def test_estimator_for_reuses_the_fit_of_the_session_just_accounted(monkeypatch):
    from inspector.core import tokens

    session = load(SAMPLE_DIR / "claude-code-tool-heavy.jsonl")
    acc = account(session, "calibrated")
    calls: list[Session] = []
    real = tokens.account
    monkeypatch.setattr(tokens, "account", lambda s, *a: calls.append(s) or real(s, *a))
    fitted = tokens.estimator_for(session)
    assert calls == [] and fitted.per_model == {k: tuple(v) for k, v in acc.ratios.items()}
    other = session.copy_with(messages=list(session.messages))  # equal, but not the session accounted last
    assert tokens.estimator_for(other).per_model == fitted.per_model and calls == [other]


# -- the figures after a summary, from the figures before (`summarized`) -----------------------------------------------

def _talk() -> Session:
    """Three requests, each answered in text, then a user turn: the growth of request 1 is [answer 0, prompt 1], so a
    cut before prompt 1 splits it."""
    from inspector.core.model import Request

    texts = [("user", "prompt", "A" * 4000), ("assistant", "assistant", "B" * 400), ("user", "prompt", "C" * 400),
             ("assistant", "assistant", "D" * 400), ("user", "prompt", "E" * 400),
             ("assistant", "assistant", "F" * 400)]
    messages = [Message(role, kind, [Block("text", text)], uuid=f"m{i}")
                for i, (role, kind, text) in enumerate(texts)]
    requests = [Request(f"r{k}", "claude-sonnet-4-5", context, 0, 0, 50, end, 0, end)
                for k, (context, end) in enumerate([(3000, 1), (3300, 3), (3560, 5)])]
    return Session("talk.jsonl", "claude-code", messages, requests)


def _figures(session: Session):
    acc = account(session, "chars35")
    return (lambda i: acc.estimated[i] if acc.measured[i] is None else acc.measured[i],
            lambda i: acc.measured[i] is not None, acc)


def test_summarized_keeps_measured_only_the_shares_of_growths_the_cut_leaves_whole():
    from inspector.core.compaction import apply, complete_summary
    from inspector.core.compaction.steps import resummarized, summarized

    session = _talk()
    figure, measured, acc = _figures(session)
    assert all(acc.measured[i] is not None for i in range(5)) and acc.measured[5] is None
    plan = plan_strategy("summary", session, SummarySettings(keep_ratio=0.25), Estimates("chars35"))
    assert plan.summary.split == 2  # inside request 1's growth: [answer 0, prompt 1]
    after = apply(plan, "They talked.")
    edit = summarized(plan, after, figure, measured)
    assert edit.kept == [figure(i) for i in range(2, 6)]
    assert edit.kept_measured == [False, True, True, False]  # prompt 1's share was apportioned with answer 0's
    est = Estimates("chars35")
    assert edit.added == tuple(est.message(m) for m in after.messages[6:8])
    assert edit.total == sum(edit.added) + sum(edit.kept) == sum(edit.by_category.values())
    assert edit.by_category["compaction_summary"] == sum(edit.added)
    pending = summarized(plan, apply(plan, "(summary pending)"), figure, measured, pending=True)
    assert pending.added[0] == 0 and pending.added[1] == edit.added[1]
    written = complete_summary(plan, "They talked about the parser, at length. " * 20)
    again = resummarized(pending, written, apply(written), pending=False)  # another text: only the added move
    assert again == summarized(written, apply(written), figure, measured) and again.added[0] > edit.added[0]
    with pytest.raises(ValueError, match="same cut"):
        resummarized(edit, plan_strategy("summary", session, SummarySettings(keep_ratio=0.15), Estimates("chars35")),
                     after)

    later = plan_strategy("summary", session, SummarySettings(keep_ratio=0.15), Estimates("chars35"))
    assert later.summary.split == 3  # at the end of request 1's growth: every kept share stays measured
    edit = summarized(later, apply(later, "They talked."), figure, measured)
    assert edit.kept_measured == [True, True, False]


def test_summarized_shares_a_kept_message_of_several_categories_and_checks_its_arguments():
    from inspector.core.compaction import apply
    from inspector.core.compaction.steps import summarized

    session = _two_tools()
    est = Estimates("chars35")
    plan = plan_strategy("summary", session, SummarySettings(keep_ratio=0.4), est)
    split = plan.summary.split
    assert 0 < split < len(session.messages) - 1
    figure = {i: plan.tokens[i] + 10 for i in range(len(session.messages))}.__getitem__
    after = apply(plan, "summary")
    edit = summarized(plan, after, figure, lambda i: False)
    assert edit.kept_measured == [False] * (len(session.messages) - split)
    assert sum(edit.by_category.values()) == edit.total == sum(edit.added) + sum(figure(i) for i in
                                                                                 range(split, len(session.messages)))
    assert {"tool_calls", "assistant_text", "tool_results:Read", "tool_results:Bash"} <= set(edit.by_category)
    with pytest.raises(ValueError, match="not a summary"):
        summarized(plan_strategy("snip", session, None, est), session, figure, lambda i: False)
    with pytest.raises(ValueError, match="not this plan applied"):
        summarized(plan, session, figure, lambda i: False)
