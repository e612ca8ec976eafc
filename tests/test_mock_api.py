"""The mock Messages-API server, driven by the real anthropic SDK: streaming, JSON, errors, retries, drops."""

import threading

import anthropic
import httpx2
import pytest

from mock_api import BROKEN_STREAM, MockAnthropicServer, count_tokens, responses as r

MODEL = "claude-sonnet-4-6"
USER = [{"role": "user", "content": "hello"}]


def stream_final(client, **kw):
    with client.messages.stream(model=MODEL, max_tokens=100, messages=USER, **kw) as stream:
        events = list(stream)
        return events, stream.get_final_message()


def test_streams_text_with_usage_and_records_the_request(mock_api):
    mock_api.add(r.text("Hello there, this is longer than one chunk.", output_tokens=11))
    events, message = stream_final(mock_api.client(), system="be brief")
    assert message.content[0].text == "Hello there, this is longer than one chunk."
    assert message.stop_reason == "end_turn"
    assert message.usage.output_tokens == 11
    req = mock_api.message_requests[0]
    assert message.usage.input_tokens == count_tokens(req.body)
    assert req.streamed and req.body["system"] == "be brief" and req.messages == USER
    assert "sk-ant-mock-0123456789" in req.headers["authorization"]
    kinds = [e.type for e in events]
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
    assert kinds.count("text") >= 2  # several text deltas


def test_streams_thinking_and_tool_use_input_json(mock_api):
    reply = r.Reply([r.thinking_block("Let me think about it at length."),
                     r.tool_use_block("read_file", {"path": "src/main.py", "limit": 20}, id="toolu_1")],
                    stop_reason="tool_use")
    mock_api.add(reply)
    events, message = stream_final(mock_api.client())
    thinking, tool = message.content
    assert thinking.type == "thinking" and thinking.thinking == "Let me think about it at length."
    assert thinking.signature == "sig-mock"
    assert (tool.id, tool.name, tool.input) == ("toolu_1", "read_file", {"path": "src/main.py", "limit": 20})
    assert message.stop_reason == "tool_use"
    assert sum(1 for e in events if e.type == "input_json") >= 2


def test_non_streaming_json(mock_api):
    mock_api.add(r.text("plain", input_tokens=42, output_tokens=3))
    message = mock_api.client().messages.create(model=MODEL, max_tokens=10, messages=USER)
    assert message.content[0].text == "plain"
    assert (message.usage.input_tokens, message.usage.output_tokens) == (42, 3)
    assert message.model == MODEL and not mock_api.message_requests[0].streamed


def test_count_tokens_is_deterministic(mock_api):
    client = mock_api.client()
    small = client.messages.count_tokens(model=MODEL, messages=USER).input_tokens
    big = client.messages.count_tokens(model=MODEL, messages=[{"role": "user", "content": "x" * 400}]).input_tokens
    assert small == count_tokens({"messages": USER}) == 7 + 3 + 2
    assert big - small == 100 - 2
    assert mock_api.requests[-1].path == "/v1/messages/count_tokens"


def test_529_is_retried_by_the_sdk_then_succeeds(mock_api):
    mock_api.add(r.overloaded(), r.overloaded(), r.text("finally"))
    _, message = stream_final(mock_api.client(max_retries=2))
    assert message.content[0].text == "finally"
    assert len(mock_api.message_requests) == 3


def test_errors_past_the_retries_reach_the_client(mock_api):
    mock_api.add(r.overloaded(), r.overloaded())
    with pytest.raises(anthropic.APIStatusError) as info:
        stream_final(mock_api.client(max_retries=1))
    assert info.value.status_code == 529
    mock_api.add(r.invalid_request("prompt is too long"))
    with pytest.raises(anthropic.BadRequestError, match="prompt is too long"):
        stream_final(mock_api.client())


def test_dropped_stream_raises_a_transport_error(mock_api):
    mock_api.add(r.dropped(after_events=4))
    with pytest.raises(BROKEN_STREAM):
        stream_final(mock_api.client())


def test_error_event_mid_stream(mock_api):
    mock_api.add(r.overloaded_mid_stream())
    with pytest.raises(anthropic.APIStatusError, match="Overloaded"):
        stream_final(mock_api.client())


def test_unscripted_request_fails_fast_and_clearly(mock_api):
    with pytest.raises(anthropic.InternalServerError, match="no scripted response"):
        stream_final(mock_api.client())
    assert len(mock_api.message_requests) == 1  # x-should-retry: false


def test_callable_responses_see_the_request(mock_api):
    mock_api.add(lambda req: r.text(f"you said {req.messages[-1]['content']}"))
    _, message = stream_final(mock_api.client())
    assert message.content[0].text == "you said hello"
    assert mock_api.pending == 0


def test_gate_holds_the_stream_until_released():
    gate = threading.Event()
    with MockAnthropicServer() as server:
        server.add(r.text("abcdefghijklmnopqrstuvwxyz" * 2, gate=gate))
        with server.client().messages.stream(model=MODEL, max_tokens=10, messages=USER) as stream:
            first = next(e for e in stream if e.type == "text")
            assert first.text == "abcdefghijklmnop"
            gate.set()
            assert stream.get_final_message().content[0].text == "abcdefghijklmnopqrstuvwxyz" * 2


def test_routes_take_the_requests_they_pick(mock_api):
    def summary(req):
        return not req.has_tools

    mock_api.add(r.text("main answer"))
    mock_api.add_for(summary, r.text("a summary"))
    client = mock_api.client()
    tools = [{"name": "t", "description": "", "input_schema": {"type": "object"}}]
    assert stream_final(client)[1].content[0].text == "a summary"
    assert stream_final(client, tools=tools)[1].content[0].text == "main answer"
    assert mock_api.pending == 0
    with pytest.raises(anthropic.InternalServerError):  # the route's queue is empty: no fallback to the main one
        stream_final(client)


def test_the_log_keeps_every_exchange_and_no_key(mock_api):
    mock_api.add(r.text("logged", output_tokens=3))
    client = mock_api.client()
    stream_final(client, system="be brief")
    client.messages.count_tokens(model=MODEL, messages=USER)
    with pytest.raises(anthropic.NotFoundError):
        client.get("/v1/nowhere", cast_to=object)
    hello = httpx2.head(mock_api.url + "/api/hello")
    assert hello.status_code == 200
    assert [(e["method"], e["path"], e["response"]["status"]) for e in mock_api.log] == [
        ("POST", "/v1/messages", 200), ("POST", "/v1/messages/count_tokens", 200), ("GET", "/v1/nowhere", 404),
        ("HEAD", "/api/hello", 200)]
    first = mock_api.log[0]
    assert first["body"] == mock_api.message_requests[0].body  # as received
    assert first["response"]["stream"] and first["response"]["body"]["content"] == [r.text_block("logged")]
    assert first["response"]["body"]["usage"]["output_tokens"] == 3
    assert mock_api.log[1]["response"]["body"] == {"input_tokens": count_tokens(mock_api.log[1]["body"])}
    assert "sk-ant-mock" not in str(mock_api.log) and "x-api-key" not in first["headers"]
    assert first["headers"]["anthropic-version"] == mock_api.message_requests[0].headers["anthropic-version"]


def test_the_prompt_cache_writes_breakpoints_and_reads_prefixes():
    system = [{"type": "text", "text": "S" * 4000, "cache_control": {"type": "ephemeral"}}]
    turn = [{"role": "user", "content": [{"type": "text", "text": "q" * 400, "cache_control": {"type": "ephemeral"}}]}]
    with MockAnthropicServer(prompt_cache=True) as server:
        server.add(r.text("a"), r.text("b"), r.Reply([r.text_block("c")], input_tokens=5, cache_read_input_tokens=9))
        client = server.client()
        first = client.messages.create(model=MODEL, max_tokens=10, system=system, messages=turn)
        longer = turn + [{"role": "assistant", "content": "a"}, {"role": "user", "content": "more " * 50}]
        moved = [{"role": "user", "content": [{"type": "text", "text": "q" * 400}]}] + longer[1:]  # breakpoint moved
        moved[-1] = {"role": "user", "content": [{"type": "text", "text": "more " * 50,
                                                  "cache_control": {"type": "ephemeral"}}]}
        second = client.messages.create(model=MODEL, max_tokens=10, system=system, messages=moved)
        fixed = client.messages.create(model=MODEL, max_tokens=10, system=system, messages=moved)
        bodies = [q.body for q in server.message_requests]
    u1, u2 = first.usage, second.usage
    assert u1.cache_read_input_tokens == 0 and u1.cache_creation_input_tokens == 1000 + 3 + 100
    assert u1.input_tokens + u1.cache_creation_input_tokens == count_tokens(bodies[0])
    assert u2.cache_read_input_tokens == 1103  # the first request's whole prefix
    assert u2.cache_creation_input_tokens == count_tokens(bodies[1]) - 1103 - u2.input_tokens > 0
    assert u2.input_tokens == 7  # only the request overhead is after the last breakpoint
    assert (fixed.usage.input_tokens, fixed.usage.cache_read_input_tokens) == (5, 9)  # a reply's own figures stand
