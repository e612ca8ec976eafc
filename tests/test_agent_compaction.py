"""Compaction inside the agent loop: maybe_compact at the top of every iteration, summaries served by the local
Messages-API server through the real SDK, the circuit breaker, and what the session file records."""

import threading

from inspector.core.agent import AgentConfig, run
from inspector.core.agent.events import (
    CompactionFailed, CompactionFinished, CompactionStarted, CompactionText, ToolResult, TurnDone, Usage,
)
from inspector.core.agent.config import compaction_policy
from inspector.core.agent.provider import AnthropicProvider
from inspector.core.agent.writer import SessionWriter
from inspector.core.pairing import pairs_intact
from inspector.core.compaction.pipeline import CompactionPolicy
from inspector.core.formats import load
from inspector.core.model import Block, Message
from mock_api import MOCK_KEY, responses as r

SYSTEM = "You are a test agent."
SUMMARY = "<summary>The user and the assistant discussed topics 0 to 5; nothing is pending.</summary>"


def summary_request(req) -> bool:
    return not req.has_tools


def make(server, cwd, threshold, micro=None):
    config = AgentConfig(AnthropicProvider(MOCK_KEY, server.url, max_retries=0), cwd,
                         compaction=CompactionPolicy(threshold, micro=micro))
    state = config.new_session(SYSTEM)
    for i in range(3):
        state.messages += [Message("user", "prompt", [Block("text", f"topic {i}: " + "question " * 110)],
                                   uuid=f"u{i}"),
                           Message("assistant", "assistant", [Block("text", f"answer {i}: " + "reply " * 160)],
                                   uuid=f"a{i}")]
    return config, state


def test_summary_compaction_fires_mid_loop_with_the_summary_from_the_server(mock_api, tmp_path):
    (tmp_path / "big.txt").write_text("line of a big file\n" * 700)  # ~13k chars: pushes the context over
    config, state = make(mock_api, tmp_path, threshold=5000)
    mock_api.add(r.tool_calls(("read_file", {"path": "big.txt"}), input_tokens=3000), r.text("done"))
    mock_api.add_for(summary_request, r.text(SUMMARY))
    path = tmp_path / "s.jsonl"
    with SessionWriter(path, state) as writer:
        events = list(writer.tee(run("read big.txt", state, config, SYSTEM)))

    kinds = [type(e) for e in events]
    started = kinds.index(CompactionStarted)
    assert kinds.index(ToolResult) < started < kinds.index(CompactionFinished)  # mid-loop: after the tools ran
    assert [type(e) for e in events if isinstance(e, Usage)] == [Usage, Usage]
    assert "".join(e.text for e in events if isinstance(e, CompactionText)) == SUMMARY
    finished = next(e for e in events if isinstance(e, CompactionFinished))
    assert finished.strategy == "summary" and finished.tokens_after < finished.tokens_before
    assert events[-1] == TurnDone("end_turn", 2)

    first, summary, second = mock_api.message_requests
    assert summary.body["system"] != SYSTEM and not summary.has_tools and "topic 0" in summary.text()
    assert "discussed topics 0 to 5" in second.text() and "topic 0: question" not in second.text()
    assert any(b.get("type") == "tool_result" for m in second.messages for b in m["content"]
               if isinstance(b, dict))  # the recent tool call and its result were kept, as a pair
    assert state.compactions[-1].kind == "compact" and state.context_start > 0
    assert pairs_intact(state.context)

    loaded = load(path)
    assert not loaded.warnings
    assert loaded.context_start == state.context_start
    assert [m.text() for m in loaded.context] == [m.text() for m in state.context]
    assert len(loaded.requests) == 2 and loaded.compactions[-1].kind == "compact"


def test_three_failed_compactions_trip_the_breaker(mock_api, tmp_path):
    config, state = make(mock_api, tmp_path, threshold=100)
    mock_api.add(*[r.tool_calls(("glob", {"pattern": "*"})) for _ in range(3)], r.text("finished anyway"))
    mock_api.add_for(summary_request, *[r.invalid_request("summary refused") for _ in range(3)])
    events = list(run("go", state, config, SYSTEM))

    failed = [e for e in events if isinstance(e, CompactionFailed)]
    assert [(e.failures, e.breaker_open) for e in failed] == [(1, False), (2, False), (3, True)]
    assert "summary refused" in failed[0].error
    assert sum(isinstance(e, CompactionStarted) for e in events) == 3  # the 4th iteration does not try
    assert len([q for q in mock_api.message_requests if summary_request(q)]) == 3
    assert events[-1] == TurnDone("end_turn", 4)
    assert config.compactor.breaker.open and not state.compactions

    mock_api.add(r.text("next turn"))
    again = list(run("more", state, config, SYSTEM))
    reported = [e for e in again if isinstance(e, CompactionFailed)]
    assert len(reported) == 1 and reported[0].breaker_open  # told once per turn, no new attempt
    assert not any(isinstance(e, CompactionStarted) for e in again)
    assert len([q for q in mock_api.message_requests if summary_request(q)]) == 3


def test_microcompaction_in_the_loop_is_written_as_replacements(mock_api, tmp_path):
    config, state = make(mock_api, tmp_path, threshold=6000, micro="snip")
    state.messages[1:1] = [
        Message("assistant", "assistant", [Block.of("tool_use", tool_id="t_old", tool_name="bash",
                                                    input={"command": "cat log"})], uuid="x1"),
        Message("user", "tool_result", [Block("tool_result", "log line\n" * 2500, tool_id="t_old")], uuid="x2"),
        Message("assistant", "assistant", [Block("text", "The log is long.")], uuid="x3"),
    ]
    mock_api.add(r.text("ok"))
    path = tmp_path / "s.jsonl"
    with SessionWriter(path, state) as writer:
        events = list(writer.tee(run("go", state, config, SYSTEM)))
    finished = next(e for e in events if isinstance(e, CompactionFinished))
    assert finished.strategy == "snip" and set(finished.replacements) == {"t_old"}
    assert not any(isinstance(e, CompactionText) for e in events)  # no summary needed
    sent = mock_api.message_requests[0].text()
    assert "chars snipped" in sent and "log line\n" * 300 not in sent
    loaded = load(path)
    result = next(b for m in loaded.messages for b in m.tool_results())
    assert "chars snipped" in result.text and loaded.compactions[-1].kind == "microcompact"


def test_cancelling_a_summary_is_not_a_failure(mock_api, tmp_path):
    gate = threading.Event()
    config, state = make(mock_api, tmp_path, threshold=100)
    mock_api.add_for(summary_request, r.text(SUMMARY, gate=gate))
    events = []
    try:
        for event in run("go", state, config, SYSTEM):
            events.append(event)
            if isinstance(event, CompactionText):
                config.cancel.cancel()
    finally:
        gate.set()
    assert events[-1].stop_reason == "cancelled"
    assert not any(isinstance(e, CompactionFailed) for e in events)
    assert config.compactor.breaker.failures == 0
    assert [q for q in mock_api.message_requests if not summary_request(q)] == []  # no model call after it


def test_a_bug_in_the_engine_does_not_lose_the_turn(mock_api, tmp_path):
    config, state = make(mock_api, tmp_path, threshold=100)

    def broken(session):
        raise ZeroDivisionError("measure broke")

    config.compactor.measure = broken
    mock_api.add(r.text("still answered"))
    events = list(run("go", state, config, SYSTEM))
    failed = next(e for e in events if isinstance(e, CompactionFailed))
    assert "internal error: ZeroDivisionError: measure broke" in failed.error
    assert events[-1] == TurnDone("end_turn", 1)


def test_clear_works_on_our_tool_names(mock_api, tmp_path):
    config = AgentConfig(AnthropicProvider(MOCK_KEY, mock_api.url), tmp_path,
                         compaction=compaction_policy("claude-sonnet-4-6", threshold=500, micro="clear"))
    state = config.new_session(SYSTEM)
    for i in range(7):
        state.messages += [
            Message("assistant", "assistant", [Block.of("tool_use", tool_id=f"r{i}", tool_name="read_file",
                                                        input={"path": f"f{i}"})]),
            Message("user", "tool_result", [Block("tool_result", f"contents of file {i} " * 40, tool_id=f"r{i}")]),
        ]
    state.messages.insert(0, Message("user", "prompt", [Block("text", "read them all")]))
    mock_api.add(r.text("ok"))
    events = list(run("go on", state, config, SYSTEM))
    finished = next(e for e in events if isinstance(e, CompactionFinished))
    assert finished.strategy == "clear" and set(finished.replacements) == {"r0", "r1"}  # all but the 5 newest
    sent = mock_api.message_requests[0].text()
    assert "contents of file 0" not in sent and "contents of file 2" in sent
