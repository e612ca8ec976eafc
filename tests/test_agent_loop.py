"""The agent loop end to end: the real anthropic SDK against the local Messages-API server (tests/mock_api)."""

import threading
import time

import pytest

from inspector.core.agent import AgentConfig, run
from inspector.core.agent.events import (
    Decision, Error, MessageAdded, PermissionAsked, TextDelta, ThinkingDelta, ToolCall, ToolResult, TurnDone, Usage,
)
from inspector.core.agent.loop import INTERRUPTED, NOT_RUN
from inspector.core.agent.permissions import Permissions, headless
from inspector.core.agent.provider import AnthropicProvider
from inspector.core.model import Block, Message, Session
from mock_api import MOCK_KEY, count_tokens, responses as r

SYSTEM = "You are a test agent."


def make_config(server, cwd, retries=2, **kw) -> AgentConfig:
    return AgentConfig(provider=AnthropicProvider(MOCK_KEY, server.url, max_retries=retries), cwd=cwd, **kw)


def new_state() -> Session:
    return Session(source="test", format="neutral")


def assert_history_valid(state: Session) -> None:
    """Roles alternate after merging consecutive user turns, and every tool_use is answered right after."""
    messages = state.context
    for i, m in enumerate(messages):
        uses = [b.tool_id for b in m.tool_uses()]
        if not uses:
            continue
        answered = set()
        for later in messages[i + 1:]:
            if later.role != "user":
                break
            answered |= {b.tool_id for b in later.tool_results()}
        assert set(uses) <= answered, f"unanswered tool calls {set(uses) - answered}"


def test_turn_with_two_tool_calls(mock_api, tmp_path):
    (tmp_path / "notes.txt").write_text("alpha\nbeta\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("x = 1\n")
    mock_api.add(r.tool_calls(("read_file", {"path": "notes.txt"}), ("glob", {"pattern": "**/*.py"}),
                              preamble="Looking."),
                 r.text("notes.txt has two lines; there is one Python file."))
    state = new_state()
    events = list(run("What is here?", state, make_config(mock_api, tmp_path), SYSTEM))

    calls = [e for e in events if isinstance(e, ToolCall)]
    results = [e for e in events if isinstance(e, ToolResult)]
    assert [c.name for c in calls] == ["read_file", "glob"]
    assert [(x.name, x.is_error) for x in results] == [("read_file", False), ("glob", False)]
    assert "1\talpha" in results[0].content and results[1].content == "src/a.py"
    assert "".join(e.text for e in events if isinstance(e, TextDelta)).endswith("one Python file.")
    assert isinstance(events[-1], TurnDone) and events[-1].stop_reason == "end_turn"
    assert events[-1].iterations == 2
    assert not any(isinstance(e, PermissionAsked) for e in events)  # read-only tools run freely

    assert [(m.role, m.kind) for m in state.messages] == [
        ("user", "prompt"), ("assistant", "assistant"), ("user", "tool_result"), ("assistant", "assistant")]
    assert [m.parent_uuid for m in state.messages[1:]] == [m.uuid for m in state.messages[:-1]]
    assert len(state.requests) == 2 and state.requests[1].message_index == 3
    usages = [e for e in events if isinstance(e, Usage)]
    assert [u.request_id for u in usages] == [q.id for q in state.requests]

    first, second = mock_api.message_requests
    assert first.body["system"] == SYSTEM and first.streamed
    assert {t["name"] for t in first.body["tools"]} == {"read_file", "write_file", "edit_file", "bash", "grep",
                                                          "glob"}
    sent_results = second.messages[2]["content"]
    assert [b["type"] for b in sent_results] == ["tool_result", "tool_result"]
    assert "alpha" in sent_results[0]["content"]
    assert usages[1].input_tokens == count_tokens(second.body) > usages[0].input_tokens
    assert_history_valid(state)


def test_thinking_streams_and_is_sent_back_signed(mock_api, tmp_path):
    mock_api.add(r.Reply([r.thinking_block("Consider the files."), r.tool_use_block("glob", {"pattern": "*"})],
                         stop_reason="tool_use"),
                 r.text("done"))
    state = new_state()
    events = list(run("hi", state, make_config(mock_api, tmp_path, thinking_budget=2048), SYSTEM))
    assert "".join(e.text for e in events if isinstance(e, ThinkingDelta)) == "Consider the files."
    second = mock_api.message_requests[1]
    assert second.body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert second.messages[1]["content"][0] == {"type": "thinking", "thinking": "Consider the files.",
                                                "signature": "sig-mock"}


def test_denied_permission_returns_an_error_result(mock_api, tmp_path):
    mock_api.add(r.tool_calls(("write_file", {"path": "out.txt", "content": "hi"})), r.text("I could not write."))
    state = new_state()
    events = []
    for event in run("write it", state, make_config(mock_api, tmp_path), SYSTEM):
        events.append(event)
        if isinstance(event, PermissionAsked):
            assert event.tool_name == "write_file" and "changes files" in event.reason
            event.reply(Decision.DENY)
    result = next(e for e in events if isinstance(e, ToolResult))
    assert result.is_error and result.content.startswith("Permission denied")
    assert not (tmp_path / "out.txt").exists()
    sent = mock_api.message_requests[1].messages[2]["content"][0]
    assert sent["is_error"] is True and "Permission denied" in sent["content"]
    assert_history_valid(state)


def test_unanswered_question_counts_as_denial_and_allow_session_sticks(mock_api, tmp_path):
    mock_api.add(r.tool_calls(("bash", {"command": "echo one"})),
                 r.tool_calls(("bash", {"command": "echo two"})),
                 r.tool_calls(("bash", {"command": "echo three"})),
                 r.text("ok"))
    asked = []
    results = []
    for event in run("go", new_state(), make_config(mock_api, tmp_path), SYSTEM):
        if isinstance(event, PermissionAsked):
            asked.append(event.input["command"])
            if event.input["command"] == "echo two":
                event.reply(Decision.ALLOW_SESSION)
        if isinstance(event, ToolResult):
            results.append((event.content, event.is_error))
    assert asked == ["echo one", "echo two"]  # the session grant covers "echo three"
    assert results[0][1] and results[0][0].startswith("Permission denied")
    assert results[1:] == [("two\n", False), ("three\n", False)]


def test_headless_policy_answers_without_asking(mock_api, tmp_path):
    mock_api.add(r.tool_calls(("write_file", {"path": "a.txt", "content": "A"}),
                              ("write_file", {"path": str(tmp_path.parent / "outside.txt"), "content": "B"})),
                 r.text("ok"))
    config = make_config(mock_api, tmp_path, permissions=Permissions([tmp_path], auto=headless(True)))
    events = list(run("go", new_state(), config, SYSTEM))
    decisions = [e.decision for e in events if isinstance(e, PermissionAsked)]
    assert decisions == [Decision.ALLOW_ONCE, Decision.DENY]
    assert (tmp_path / "a.txt").read_text() == "A"
    assert not (tmp_path.parent / "outside.txt").exists()


@pytest.mark.parametrize("failure", [r.overloaded, r.rate_limited, lambda: r.ApiError(503, "api_error", "down")])
def test_529_429_5xx_then_success_are_retried_by_the_sdk(mock_api, tmp_path, failure):
    mock_api.add(failure(), failure(), r.text("made it"))
    events = list(run("hi", new_state(), make_config(mock_api, tmp_path, retries=2), SYSTEM))
    assert not any(isinstance(e, Error) for e in events)
    assert events[-1].stop_reason == "end_turn" and len(mock_api.message_requests) == 3


def test_errors_after_retries_end_the_turn_with_an_error_event(mock_api, tmp_path):
    mock_api.add(r.overloaded(), r.overloaded())
    state = new_state()
    events = list(run("hi", state, make_config(mock_api, tmp_path, retries=1), SYSTEM))
    error = next(e for e in events if isinstance(e, Error))
    assert (error.status, error.error_type) == (529, "overloaded_error")
    assert "Overloaded" in error.message and MOCK_KEY not in error.message
    assert events[-1] == TurnDone("error", 1)
    assert [m.kind for m in state.messages] == ["prompt"]


def test_dropped_stream_becomes_an_error_event(mock_api, tmp_path):
    mock_api.add(r.dropped(after_events=5))
    state = new_state()
    events = list(run("hi", state, make_config(mock_api, tmp_path), SYSTEM))
    error = next(e for e in events if isinstance(e, Error))
    assert error.error_type == "stream_error" and "broke off" in error.message
    assert events[-1].stop_reason == "error"
    assert len(state.messages) == 1 and not state.requests


def test_overload_mid_stream_becomes_an_error_event(mock_api, tmp_path):
    mock_api.add(r.overloaded_mid_stream())
    events = list(run("hi", new_state(), make_config(mock_api, tmp_path), SYSTEM))
    error = next(e for e in events if isinstance(e, Error))
    assert (error.error_type, error.status) == ("overloaded_error", None)
    assert error.message == "API error mid-stream overloaded_error: Overloaded"


def test_cancel_mid_stream_keeps_the_partial_text(mock_api, tmp_path):
    gate = threading.Event()
    mock_api.add(r.text("The first part. And the rest that never comes.", gate=gate))
    state = new_state()
    config = make_config(mock_api, tmp_path)
    events = []
    try:
        for event in run("hi", state, config, SYSTEM):
            events.append(event)
            if isinstance(event, TextDelta):
                config.cancel.cancel()  # what the app's Esc does, here from the consuming thread
    finally:
        gate.set()
    assert events[-1].stop_reason == "cancelled"
    assert not any(isinstance(e, Error) for e in events)
    assert [m.role for m in state.messages] == ["user", "assistant"]
    assert state.messages[1].blocks[0].text == "The first part. "  # the one 16-character chunk that arrived
    assert not state.requests  # an incomplete response has no usage

    mock_api.add(r.text("the next turn runs"))  # the cancel ended that turn only
    assert list(run("again", state, config, SYSTEM))[-1].stop_reason == "end_turn"
    assert_history_valid(state)


def test_cancel_from_another_thread_kills_the_running_command(mock_api, tmp_path):
    mock_api.add(r.tool_calls(("bash", {"command": "sleep 30"}), ("read_file", {"path": "x"})))
    state = new_state()
    config = make_config(mock_api, tmp_path, permissions=Permissions([tmp_path], auto=headless(True)))
    started = time.monotonic()
    timer = None
    events = []
    for event in run("sleep", state, config, SYSTEM):
        events.append(event)
        if isinstance(event, ToolCall) and event.name == "bash":
            timer = threading.Timer(0.3, config.cancel.cancel)
            timer.start()
    assert time.monotonic() - started < 10
    results = [e for e in events if isinstance(e, ToolResult)]
    assert results[0].is_error and results[0].content.startswith(INTERRUPTED)
    assert (results[1].content, results[1].is_error) == (NOT_RUN, True)
    assert events[-1].stop_reason == "cancelled"
    assert len(mock_api.message_requests) == 1  # no further model call after the cancel
    assert_history_valid(state)


def test_closing_the_generator_mid_tools_still_answers_every_call(mock_api, tmp_path):
    mock_api.add(r.tool_calls(("glob", {"pattern": "*"}), ("glob", {"pattern": "*.md"})), r.text("after"))
    state = new_state()
    events = run("go", state, make_config(mock_api, tmp_path), SYSTEM)
    for event in events:
        if isinstance(event, ToolResult):
            events.close()  # the consumer walks away after the first result
            break
    assert_history_valid(state)
    assert state.messages[-1].kind == "tool_result" and len(state.messages[-1].blocks) == 2

    added = [e for e in run("again", state, make_config(mock_api, tmp_path), SYSTEM) if isinstance(e, MessageAdded)]
    assert added[0].message.kind == "prompt"  # nothing to repair: the closed run answered its calls
    assert_history_valid(state)


def test_a_history_left_broken_is_repaired_first(mock_api, tmp_path):
    state = new_state()
    state.messages += [Message("user", "prompt", [Block("text", "go")], uuid="u1"),
                       Message("assistant", "assistant", [Block.of("tool_use", tool_id="t1", tool_name="glob",
                                                                   input={"pattern": "*"})], uuid="a1")]
    mock_api.add(r.text("fine"))
    added = [e.message for e in run("next", state, make_config(mock_api, tmp_path), SYSTEM)
             if isinstance(e, MessageAdded)]
    assert [m.kind for m in added] == ["tool_result", "prompt", "assistant"]
    assert added[0].blocks[0].tool_id == "t1" and added[0].blocks[0].is_error
    sent = mock_api.message_requests[0].messages
    assert sent[2]["content"][0]["tool_use_id"] == "t1" and sent[3]["content"][0]["text"] == "next"
    assert_history_valid(state)


def test_unknown_tool_and_max_iterations(mock_api, tmp_path):
    mock_api.add(r.tool_calls(("teleport", {})), r.tool_calls(("glob", {"pattern": "*"})))
    events = list(run("go", new_state(), make_config(mock_api, tmp_path, max_iterations=2), SYSTEM))
    first = next(e for e in events if isinstance(e, ToolResult))
    assert first.is_error and "Unknown tool 'teleport'" in first.content
    assert events[-1].stop_reason == "max_iterations"
    assert next(e for e in events if isinstance(e, Error)).error_type == "max_iterations"


@pytest.mark.parametrize("stop", ["end_turn", "max_tokens"])
def test_stop_reason_is_reported(mock_api, tmp_path, stop):
    mock_api.add(r.text("x", stop_reason=stop))
    assert list(run("go", new_state(), make_config(mock_api, tmp_path), SYSTEM))[-1].stop_reason == stop


def test_a_worker_thread_waits_for_the_ui_to_answer(mock_api, tmp_path):
    """The app's shape: the loop runs in a worker thread, the question is answered from another thread."""
    mock_api.add(r.tool_calls(("write_file", {"path": "w.txt", "content": "from worker"})), r.text("written"))
    config = make_config(mock_api, tmp_path)
    questions = []
    seen = []

    def worker():
        for event in run("write", new_state(), config, SYSTEM):
            seen.append(event)
            if isinstance(event, PermissionAsked):
                questions.append(event)
                assert event.wait_reply(config.cancel) is Decision.ALLOW_ONCE

    thread = threading.Thread(target=worker)
    thread.start()
    deadline = time.monotonic() + 10
    while not questions and time.monotonic() < deadline:
        time.sleep(0.01)
    assert questions and thread.is_alive()  # blocked on the question
    questions[0].reply(Decision.ALLOW_ONCE)
    thread.join(10)
    assert (tmp_path / "w.txt").read_text() == "from worker"
    assert seen[-1].stop_reason == "end_turn"
    assert questions[0].to_dict()["decision"] == "allow_once" and "_replied" not in questions[0].to_dict()


def test_cancel_while_a_question_waits(mock_api, tmp_path):
    mock_api.add(r.tool_calls(("bash", {"command": "echo no"})))
    config = make_config(mock_api, tmp_path)
    events = []
    for event in run("x", new_state(), config, SYSTEM):
        events.append(event)
        if isinstance(event, PermissionAsked):
            threading.Timer(0.1, config.cancel.cancel).start()
            assert event.wait_reply(config.cancel) is None
    result = next(e for e in events if isinstance(e, ToolResult))
    assert (result.content, result.is_error) == (NOT_RUN, True)
    assert events[-1].stop_reason == "cancelled"
