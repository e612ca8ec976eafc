"""Figures after compactions no request has measured (`inspector.core.compacted`): what a microcompaction or a
summary after the last request changes, followed from the figures before it, equal to a fresh accounting."""

from __future__ import annotations

import pytest

from inspector.core import categories as cat
from inspector.core.compacted import after_step
from inspector.core.compaction import (ClearSettings, ContextEditSettings, Estimates, SnipSettings, SummarySettings,
                                       apply, plan_strategy)
from inspector.core.formats import load
from inspector.core.model import Block, Message, Request, Session
from inspector.core.tokens import account
from inspector.samples import SAMPLE_DIR

AUTOCOMPACT = SAMPLE_DIR / "claude-code-autocompact.jsonl"


def talk() -> Session:
    """Three requests, each answered in text, then a user turn: the growth of request 1 is [answer 0, prompt 1], so a
    cut before prompt 1 splits it."""
    texts = [("user", "prompt", "A" * 4000), ("assistant", "assistant", "B" * 400), ("user", "prompt", "C" * 400),
             ("assistant", "assistant", "D" * 400), ("user", "prompt", "E" * 400),
             ("assistant", "assistant", "F" * 400)]
    messages = [Message(role, kind, [Block("text", text)], uuid=f"m{i}")
                for i, (role, kind, text) in enumerate(texts)]
    requests = [Request(f"r{k}", "claude-sonnet-4-5", context, 0, 0, 50, end, 0, end)
                for k, (context, end) in enumerate([(3000, 1), (3300, 3), (3560, 5)])]
    return Session("talk.jsonl", "claude-code", messages, requests)


def two_tools() -> Session:
    """Rounds of one assistant turn calling Read and Bash (a long input each), one user message holding both results,
    each response measured."""
    messages = [Message("user", "prompt", [Block("text", "Look at the parser.")], uuid="u0")]
    requests = []
    for k in range(3):
        messages.append(Message("assistant", "assistant", [
            Block("text", f"Reading the parser and running the tests, round {k}: " + "why " * 60),
            Block.of("tool_use", tool_id=f"r{k}", tool_name="Read", input={"file_path": "p.py", "note": "x" * 3000}),
            Block.of("tool_use", tool_id=f"b{k}", tool_name="Bash", input={"command": "pytest", "note": "y" * 1000})],
            uuid=f"a{k}", model="claude-sonnet-4-5", response_id=f"q{k}"))
        requests.append(Request(f"q{k}", "claude-sonnet-4-5", 3000 + 6000 * k, 0, 0, 80, len(messages) - 1, 0,
                                len(messages) - 1))
        messages.append(Message("user", "tool_result", [
            Block("tool_result", "def parse():\n" * 900, tool_id=f"r{k}"),
            Block("tool_result", "PASSED\n" * 300, tool_id=f"b{k}")], uuid=f"t{k}"))
    messages.append(Message("assistant", "assistant", [Block("text", "All green.")], uuid="end"))
    return Session("two-tools.jsonl", "claude-code", messages, requests)


def same(a, b) -> None:
    """Two accountings state the same figures."""
    assert a.current_context == b.current_context and a.current_measured == b.current_measured
    assert a.estimated == b.estimated and a.measured == b.measured and a.derived == b.derived
    assert a.category == b.category and a.by_category == b.by_category
    assert (a.prefix, a.unrecorded, a.start) == (b.prefix, b.unrecorded, b.start)


def test_a_microcompaction_frees_from_each_edited_messages_categories_in_the_ratio_of_its_estimates():
    session = two_tools()
    before = account(session, "chars35")
    plan = plan_strategy("clear", session, ClearSettings(keep_recent=0), Estimates("chars35"))
    assert set(plan.micro.after) == {2, 4, 6}
    new = apply(plan)
    acc = after_step(before, new)
    same(acc, account(new, "chars35"))
    for i in (2, 4):  # measured before; a figure derived from that share after
        assert before.measured[i] is not None and acc.measured[i] is None and acc.figure(i)[1] == "derived"
        assert acc.derived[i] == round(before.measured[i] * acc.estimated[i] / before.estimated[i])
    assert before.measured[6] is None and acc.figure(6) == (acc.estimated[6], "estimated")  # after the last request
    freed = sum(before.size(i) - acc.size(i) for i in (2, 4, 6))
    assert acc.current_context == before.current_context - freed and freed > 0
    moved = {k: before.by_category[k] - acc.by_category.get(k, 0) for k in before.by_category
             if before.by_category[k] != acc.by_category.get(k, 0)}
    assert set(moved) == {"tool_results:Read", "tool_results:Bash"} and sum(moved.values()) == freed
    assert sum(acc.by_category.values()) == acc.current_context  # the parts still sum to the figure
    assert (acc.prefix, acc.unrecorded) == (before.prefix, before.unrecorded)


def test_clearing_tool_inputs_moves_a_message_whose_main_category_changes():
    session = two_tools()
    before = account(session, "chars35")
    plan = plan_strategy("clear_tool_uses", session, ContextEditSettings(trigger=0, keep=0, clear_tool_inputs=True),
                         Estimates("chars35"), context_tokens=10**6)
    assert {1, 3, 5} <= set(plan.micro.after)  # the calls' inputs cleared
    new = apply(plan)
    acc = after_step(before, new)
    same(acc, account(new, "chars35"))
    assert [before.category[i] for i in (1, 3, 5)] == ["tool_calls"] * 3
    assert [acc.category[i] for i in (1, 3, 5)] == ["assistant_text"] * 3  # the text outweighs the emptied calls
    assert sum(acc.by_category.values()) == acc.current_context


def test_a_summary_keeps_measured_only_the_shares_of_growths_the_cut_leaves_whole():
    session = talk()
    before = account(session, "chars35")
    assert all(before.measured[i] is not None for i in range(5)) and before.measured[5] is None
    plan = plan_strategy("summary", session, SummarySettings(keep_ratio=0.25), Estimates("chars35"))
    assert plan.summary.split == 2  # inside request 1's growth: [answer 0, prompt 1]
    new = apply(plan, "They talked.")
    acc = after_step(before, new)
    same(acc, account(new, "chars35"))
    n = len(session.messages)
    kept = range(n + 2, n + 6)
    assert [acc.figure(j)[1] for j in kept] == ["derived", "measured", "measured", "estimated"]
    assert [acc.size(j) for j in kept] == [before.size(i) for i in range(2, 6)]
    assert acc.current_context == acc.prefix + acc.size(n) + acc.size(n + 1) + sum(map(acc.size, kept))
    assert acc.by_category[cat.COMPACTION_SUMMARY] == acc.size(n) + acc.size(n + 1)
    assert acc.unrecorded == 0 and acc.current_measured is None and acc.start == n
    assert sum(acc.by_category.values()) == acc.current_context
    later = plan_strategy("summary", session, SummarySettings(keep_ratio=0.15), Estimates("chars35"))
    assert later.summary.split == 3  # at the end of request 1's growth: every kept share stays measured
    acc = after_step(before, apply(later, "They talked."))
    assert [acc.figure(j)[1] for j in range(n + 2, n + 5)] == ["measured", "measured", "estimated"]


def test_steps_follow_one_another_and_a_real_session_with_usage():
    session = load(AUTOCOMPACT)
    est = Estimates("chars35")
    acc = account(session, "chars35")
    for strategy, settings in (("snip", SnipSettings(max_chars=500)), ("summary", SummarySettings(keep_ratio=0.3)),
                               ("clear", ClearSettings(keep_recent=1))):
        plan = plan_strategy(strategy, acc.session, settings, est)
        assert plan.changed
        new = apply(plan, "What happened." if plan.summary is not None else None)
        acc = after_step(acc, new)
        same(acc, account(new, "chars35"))
        assert sum(acc.by_category.values()) == acc.current_context


def test_after_step_refuses_a_state_that_is_not_a_step():
    session = load(AUTOCOMPACT)
    with pytest.raises(ValueError, match="not a step"):
        after_step(account(session, "chars35"), session.copy_with(requests=session.requests[:-1]))
