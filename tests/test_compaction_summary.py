"""Summary compaction: split point, prompts, the exact request, the answer parser (on a real answer), the plan."""

import json

import pytest
from compaction_sessions import RecordingProvider, call, prompt, results, tool_session

from inspector.core.compaction import (PendingSummary, SummaryError, SummarySettings, apply, complete_summary,
                                       find_orphans, find_split_point, parse_summary_answer, plan_summary,
                                       run_summary)
from inspector.core.compaction.cuts import unsafe_cuts
from inspector.core.compaction.summary import ACKNOWLEDGEMENT, build_prompt, request_messages
from inspector.core.model import Block, Message, Session

NINE = ["Primary Request and Intent", "Key Technical Concepts", "Files and Code Sections", "Errors and Fixes",
        "Problem Solving", "All User Messages", "Pending Tasks", "Current Work", "Optional Next Step"]


def real_answer(corpus) -> str:
    line = (corpus / "claude-code-compaction-request.jsonl").read_text().splitlines()[4]
    return json.loads(line)["message"]["content"][0]["text"]


def test_parser_on_the_real_claude_code_answer(corpus):
    parsed = parse_summary_answer(real_answer(corpus))
    assert [title.lower() for title, _ in parsed.sections] == [t.lower() for t in NINE]
    assert parsed.analysis.startswith("Let me chronologically analyze the conversation")
    assert "<analysis>" not in parsed.summary and "chronologically analyze" not in parsed.summary
    assert parsed.summary.startswith("1. Primary Request and Intent:")
    assert parsed.summary.rstrip().endswith("add tests.")
    users = dict(parsed.sections)["All User Messages"]
    assert '"continue"' in users


def test_parser_handles_missing_and_unclosed_tags():
    assert parse_summary_answer("just a summary").summary == "just a summary"
    assert parse_summary_answer("<analysis>x</analysis>\nplain").summary == "plain"
    assert parse_summary_answer("<analysis>x</analysis><summary>cut off").summary == "cut off"
    with pytest.raises(SummaryError):
        parse_summary_answer("<analysis>only thoughts</analysis>")
    with pytest.raises(SummaryError):
        parse_summary_answer("   ")


def test_prompts_name_their_sections_and_carry_instructions():
    ref = build_prompt("reference")
    for words in ("User messages", "Requests and intent", "Files and code", "Errors and fixes", "Current work",
                  "Pending tasks"):
        assert words in ref
    two = build_prompt("two-phase", "focus on tests")
    assert "<analysis>" in two and "<summary>" in two
    for title in NINE:
        assert title.lower() in two.lower()
    assert two.endswith("Additional Instructions:\nfocus on tests")
    with pytest.raises(ValueError):
        build_prompt("nope")


def test_split_point_never_separates_a_pair_or_a_response():
    messages = [prompt("go"), call(("a", "Read"), ("b", "Read"), response="r1"), results(("a", "x" * 100)),
                results(("b", "y" * 9000)),
                call(("c", "Read"), response="r2"), results(("c", "z" * 100)), call(("d", "Bash"), response="r2"),
                results(("d", "w" * 100)), prompt("next")]
    unsafe = unsafe_cuts(messages)
    assert unsafe == [False, False, True, True, False, True, True, True, False, False]
    for ratio in (0.05, 0.1, 0.3, 0.5, 0.9):
        i = find_split_point(messages, ratio)
        assert not unsafe[i]
        assert not find_orphans(messages[i:])
    assert find_split_point(messages, 0) == len(messages)
    assert find_split_point([], 0.3) == 0


def test_request_is_acceptable_to_the_api():
    old = [Message("assistant", "assistant", [Block("thinking", text="hmm"), Block("text", text="hi")]),
           call(("a", "Read")), results(("a", "file")), call(("orphan", "Bash")),
           Message("user", "prompt", [Block.of("image", media="image/png", size=10)])]
    out = request_messages(old, "PROMPT")
    assert out[0]["role"] == "user"
    assert all(x["role"] != y["role"] for x, y in zip(out, out[1:]))
    blocks = [b for m in out for b in m["content"]]
    assert not any(b["type"] == "thinking" for b in blocks)
    assert [b["id"] for b in blocks if b["type"] == "tool_use"] == ["a"]
    assert any("no result recorded" in b.get("text", "") for b in blocks)
    assert any("image omitted" in b.get("text", "") for b in blocks)
    assert out[-1]["content"][-1] == {"type": "text", "text": "PROMPT"}


def test_plan_holds_the_exact_request_with_the_summary_pending():
    s = tool_session(10)
    plan = plan_summary(s, SummarySettings(keep_ratio=0.3, prompt="two-phase", instructions="keep paths"))
    assert plan.pending and plan.summary is not None
    split = plan.summary.split
    assert [r.fate for r in plan.rows] == ["summarized"] * split + ["added", "added"] + ["kept"] * (21 - split)
    assert request_messages(plan.summary.old, plan.summary.prompt)[-1]["content"][-1]["text"] == plan.summary.prompt
    assert plan.summary.prompt.endswith("keep paths")
    assert plan.summary.request_tokens > sum(r.before for r in plan.rows[:split])
    assert plan.rows[split].after is None and "pending" in plan.rows[split].note
    with pytest.raises(PendingSummary):
        apply(plan)


def test_apply_with_a_hand_written_summary():
    s = tool_session(10)
    plan = plan_summary(s)
    new = apply(plan, summary="<analysis>drop me</analysis><summary>what happened</summary>")
    assert s.messages == tool_session(10).messages  # the original is untouched
    assert new.messages[:len(s.messages)] == s.messages  # old messages stay as history
    ctx = new.context
    assert ctx[0].kind == "compact_summary" and ctx[0].text() == "[Previous conversation summary]\nwhat happened"
    assert ctx[1].kind == "summary_ack" and ctx[1].text() == ACKNOWLEDGEMENT
    assert ctx[2:] == s.messages[plan.summary.split:]
    assert all(a is b for a, b in zip(ctx[2:], s.messages[plan.summary.split:]))
    assert new.compactions[-1].kind == "compact" and new.compactions[-1].index == len(s.messages)
    assert not find_orphans(ctx)


def test_run_summary_streams_through_the_provider():
    s = tool_session(10)
    provider = RecordingProvider()
    pieces: list[str] = []
    plan = run_summary(plan_summary(s, SummarySettings(prompt="two-phase")), provider, pieces.append)
    assert "".join(pieces) == provider.answer
    system, messages = provider.calls[0]
    two = plan_summary(s, SummarySettings(prompt="two-phase")).summary
    assert messages == request_messages(two.old, two.prompt)
    assert plan.summary.text == "1. Primary Request and Intent:\n   build it"
    assert not plan.pending and plan.after < plan.before
    summary = apply(plan).context[0].text()
    assert summary.startswith("This session is being continued from a previous conversation")
    assert summary.endswith("build it") and "notes" not in summary


def test_provider_failures_become_one_line_summary_errors():
    plan = plan_summary(tool_session(10))
    with pytest.raises(SummaryError, match="summary request failed: ConnectionError: refused"):
        run_summary(plan, RecordingProvider(fail=ConnectionError("refused")))
    with pytest.raises(SummaryError, match="no summary"):
        run_summary(plan, RecordingProvider(answer="<analysis>only</analysis>"))
    with pytest.raises(SummaryError):
        complete_summary(plan_summary(Session("m", "neutral", [])), "x")


def test_summary_on_the_real_session_keeps_pairing(corpus):
    from inspector.core.formats import load

    s = load(corpus / "claude-code-manual-compact.jsonl")
    plan = plan_summary(s)
    assert plan.summary is not None and plan.rows[0].old == s.context_start
    new = apply(plan, summary="summary")
    assert not find_orphans(new.context)
    assert new.context_start == len(s.messages)


def test_request_turns_media_inside_results_into_notes():
    nested = Block("tool_result", tool_id="a", content=[Block("text", text="shot"),
                                                        Block.of("image", media="image/png", size=9)])
    out = request_messages([call(("a", "Read")), Message("user", "tool_result", [nested])], "P")
    result = out[2]["content"][0]  # after the "(conversation start)" turn and the call
    assert result["type"] == "tool_result" and result["content"][1]["text"] == "[image omitted: image/png]"


def test_keeping_everything_summarizes_nothing():
    s = tool_session(5)
    assert find_split_point(s.messages, 1.0) == 0
    plan = plan_summary(s, SummarySettings(keep_ratio=1.0))
    assert plan.summary is None and not plan.changed and plan.note == "nothing to summarize"
