"""The capture proxy between real clients and local servers: the Anthropic SDK and our own agent to tests/mock_api,
plain httpx to a local Responses / Chat upstream; errors, drops and concurrent streams; what the file holds."""

from __future__ import annotations

import json
import os
import socket
import stat
import threading
import time

import anthropic
import httpx2 as httpx
import pytest

from capture_helpers import OpenAIUpstream, RunningProxy
from inspector.core.agent.config import AgentConfig
from inspector.core.agent.loop import run as run_turn
from inspector.core.agent.provider import AnthropicProvider
from inspector.core.formats import detect, load
from inspector.core.model import Session
from mock_api import BROKEN_STREAM, MOCK_KEY, responses as r

MODEL = "claude-sonnet-4-6"


@pytest.fixture
def upstream():
    server = OpenAIUpstream()
    yield server
    server.stop()


@pytest.fixture
def proxy(tmp_path, mock_api, upstream):
    with RunningProxy(tmp_path / "capture.jsonl", {"anthropic": mock_api.url, "openai": upstream.url}) as p:
        yield p


def client(proxy, **kw):
    return anthropic.Anthropic(base_url=proxy.base_url("anthropic"), api_key=MOCK_KEY, max_retries=0, **kw)


def test_sdk_stream_recorded_as_the_sdk_saw_it(proxy, mock_api):
    reply = r.Reply([r.thinking_block("Weigh the options at some length first."), r.text_block("I will read it."),
                     r.tool_use_block("read_file", {"path": "src/app.py", "limit": 40}, id="toolu_9")],
                    stop_reason="tool_use", cache_read_input_tokens=1200, output_tokens=57)
    mock_api.add(reply)
    with client(proxy).messages.stream(model=MODEL, max_tokens=500, system="be brief", thinking={
            "type": "enabled", "budget_tokens": 1024}, messages=[{"role": "user", "content": "look at app.py"}],
            tools=[{"name": "read_file", "description": "read", "input_schema": {"type": "object"}}]) as stream:
        final = stream.get_final_message()
    [record] = proxy.records(1)
    assert record["protocol"] == "anthropic-messages" and record["path"] == "/v1/messages"
    assert record["status"] == 200 and record["stream"] is True and record["complete"] is True
    assert record["request"] == mock_api.message_requests[0].body  # exactly what the upstream received
    seen = final.model_dump(mode="json", exclude_none=True)
    kept = record["response"]
    assert kept["content"] == [{k: v for k, v in b.items() if v is not None} for b in seen["content"]]
    assert kept["usage"]["output_tokens"] == 57 and kept["usage"]["cache_read_input_tokens"] == 1200
    assert (kept["id"], kept["stop_reason"]) == (final.id, "tool_use")
    assert record["events"] > 10 and record["duration_ms"] >= record["first_byte_ms"] > 0


def test_our_agent_through_the_proxy_loads_as_the_conversation_it_had(proxy, mock_api, tmp_path):
    (tmp_path / "notes.txt").write_text("the answer is 42\n")
    mock_api.add(r.tool_calls(("read_file", {"path": "notes.txt"}), preamble="Reading."),
                 r.text("The notes say 42.", cache_read_input_tokens=300))
    config = AgentConfig(provider=AnthropicProvider(MOCK_KEY, proxy.base_url("anthropic"), max_retries=0),
                         cwd=tmp_path, model=MODEL)
    events = list(run_turn("what do the notes say?", Session(source="t", format="neutral"), config,
                           "You are a test agent. Read files when asked."))
    assert type(events[-1]).__name__ == "TurnDone"
    proxy.stop()
    path = proxy.path
    assert detect(path) == "anthropic-request"
    s = load(path)
    assert [m.kind for m in s.messages] == ["prompt", "assistant", "tool_result", "assistant"]
    assert "the answer is 42" in s.messages[2].text()
    assert s.messages[3].text() == "The notes say 42."
    assert s.system == "You are a test agent. Read files when asked." and len(s.tools) >= 3  # its real tool schemas
    sent = mock_api.message_requests
    assert [q.measured_context for q in s.requests] == [
        _count(sent[0].body), _count(sent[1].body) + 300]
    assert all(m.timestamp for m in s.messages) and not [w for w in s.warnings if "another" in w.message]


def _count(body: dict) -> int:
    from mock_api import count_tokens

    return count_tokens(body)


def test_httpx_responses_client_streamed_and_whole(proxy, upstream):
    usage = {"input_tokens": 900, "input_tokens_details": {"cached_tokens": 400}, "output_tokens": 30,
             "output_tokens_details": {"reasoning_tokens": 0}}
    upstream.add("Let me list the files.", call=("call_1", "exec_command", '{"cmd": "ls -la"}'), usage=usage)
    upstream.add("There are two files.", usage={**usage, "input_tokens": 1000})
    first = [{"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "be careful"}]},
             {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "what is here?"}]}]
    with httpx.Client(base_url=proxy.base_url("openai"), headers={"authorization": "Bearer sk-openai-secret-123456"}
                      ) as http:
        with http.stream("POST", "/responses", json={"model": "gpt-test", "instructions": "You are Codex.",
                                                      "input": first, "stream": True}) as answer:
            raw = b"".join(answer.iter_raw())
        assert b"response.completed" in raw
        output = json.loads(raw.rsplit(b"data: ", 1)[1])["response"]["output"]
        whole = http.post("/responses", json={"model": "gpt-test", "instructions": "You are Codex.", "input": [
            *first, *output, {"type": "function_call_output", "call_id": "call_1", "output": "a.txt b.txt"}]})
        assert whole.status_code == 200
    records = proxy.records(2)
    assert [x["protocol"] for x in records] == ["openai-responses"] * 2
    assert records[0]["response"]["output"] == output and records[0]["complete"]
    assert records[1]["stream"] is False and records[1]["response"] == whole.json()
    assert "authorization" not in records[0]["request_headers"]
    proxy.stop()
    s = load(proxy.path)
    assert s.format == "openai-responses" and s.system == "You are Codex."
    assert [m.kind for m in s.messages] == ["system", "prompt", "assistant", "tool_result", "assistant"]
    call = next(s.messages[2].tool_uses())
    assert (call.tool_id, call.tool_name, call.input) == ("call_1", "exec_command", {"cmd": "ls -la"})
    assert [(q.input_tokens, q.cache_read, q.output_tokens) for q in s.requests] == [(500, 400, 30), (600, 400, 30)]
    assert s.compactions == [] and s.warnings == []


def test_httpx_chat_client_with_tool_calls(proxy, upstream):
    usage = {"prompt_tokens": 120, "completion_tokens": 15, "prompt_tokens_details": {"cached_tokens": 100}}
    upstream.add("", call=("call_7", "shell", '{"cmd": "pwd"}'), usage=usage)
    messages = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "where am I?"}]
    with httpx.Client(base_url=proxy.base_url("openai")) as http:
        with http.stream("POST", "/chat/completions", json={
                "model": "gpt-test", "messages": messages, "stream": True,
                "stream_options": {"include_usage": True}}) as answer:
            raw = b"".join(answer.iter_raw())
    assert raw.rstrip().endswith(b"data: [DONE]")
    [record] = proxy.records(1)
    message = record["response"]["choices"][0]["message"]
    assert message["tool_calls"] == [{"id": "call_7", "type": "function",
                                      "function": {"name": "shell", "arguments": '{"cmd": "pwd"}'}}]
    assert record["response"]["usage"] == usage and record["complete"]
    proxy.stop()
    s = load(proxy.path)
    assert s.format == "openai-chat"
    assert [m.kind for m in s.messages] == ["system", "prompt", "assistant"]
    assert next(s.messages[2].tool_uses()).input == {"cmd": "pwd"}
    [q] = s.requests
    assert (q.input_tokens, q.cache_read, q.output_tokens) == (20, 100, 15)


def test_a_dropped_upstream_stream_reaches_the_client_dropped_and_is_a_partial_record(proxy, mock_api):
    drop = r.dropped(r.text("This answer is cut off somewhere in the middle of it."), after_events=5)
    raised = []
    for via in (mock_api.client(max_retries=0), client(proxy)):
        mock_api.add(drop)
        with pytest.raises(BROKEN_STREAM) as error:  # the body never ended
            with via.messages.stream(model=MODEL, max_tokens=100, messages=[
                    {"role": "user", "content": "hi"}]) as stream:
                stream.get_final_message()
        raised.append((type(error.value), str(error.value.__cause__ or error.value)))  # (not the port it names)
    assert raised[0] == raised[1]  # the client sees the drop as it would without the proxy
    mock_api.add(r.text("Second try worked."))
    with client(proxy).messages.stream(model=MODEL, max_tokens=100, messages=[
            {"role": "user", "content": "hi"}]) as stream:
        assert stream.get_final_text() == "Second try worked."
    partial, whole = proxy.records(2)
    assert partial["complete"] is False and "upstream broke off" in partial["error"]
    assert partial["events"] == 5 and partial["response"]["content"][0]["text"] == "This answer is cut off somewhere"
    assert whole["complete"] is True
    proxy.stop()
    s = load(proxy.path)  # the partial answer is not part of the conversation: the retry extends the same thread
    assert [m.text() for m in s.messages] == ["hi", "Second try worked."] and s.compactions == []
    assert any("ended before its answer did" in w.message and w.line == 2 for w in s.warnings)


def test_upstream_errors_reach_the_client_unchanged(proxy, mock_api):
    errors = [r.overloaded(), r.ApiError(429, "rate_limit_error", "slow down", retry_after_ms=1500,
                                         headers={"anthropic-ratelimit-requests-remaining": "0"}),
              r.invalid_request("messages: at least one message is required")]
    body = {"model": MODEL, "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
    headers = {"x-api-key": MOCK_KEY, "anthropic-version": "2023-06-01"}
    via, direct = [], []
    with httpx.Client() as http:
        for error in errors:
            mock_api.add(error, error)
            via.append(http.post(proxy.base_url("anthropic") + "/v1/messages", json=body, headers=headers))
            direct.append(http.post(mock_api.url + "/v1/messages", json=body, headers=headers))
    for a, b in zip(via, direct):
        assert (a.status_code, a.content) == (b.status_code, b.content)
        for name in ("content-type", "content-length", "retry-after-ms", "anthropic-ratelimit-requests-remaining"):
            assert a.headers.get(name) == b.headers.get(name)
    assert [x.status_code for x in via] == [529, 429, 400]
    records = proxy.records(3)
    assert [x["status"] for x in records] == [529, 429, 400]
    assert records[1]["response"]["error"]["message"] == "slow down"
    assert records[1]["response_headers"]["retry-after-ms"] == "1500"


def test_streaming_passes_each_chunk_on_before_the_next_exists(proxy, mock_api):
    gate = threading.Event()
    mock_api.add(r.Reply([r.text_block("first piece arrives alone, then the rest waits for the gate")], gate=gate))
    got = []
    with client(proxy).messages.stream(model=MODEL, max_tokens=100, messages=[
            {"role": "user", "content": "hi"}]) as stream:
        for event in stream:
            if event.type == "text":
                got.append(event.text)
                if len(got) == 1:
                    assert not gate.is_set()  # the upstream is paused after its first delta: it came through
                    gate.set()
    assert "".join(got).startswith("first piece")


def test_two_concurrent_streams_are_recorded_whole_in_order_of_start(proxy, mock_api):
    gate = threading.Event()
    slow = r.Reply([r.text_block("slow answer " * 20)], gate=gate)
    mock_api.add_for(lambda q: q.messages[0]["content"] == "slow", slow)
    mock_api.add_for(lambda q: q.messages[0]["content"] == "fast", r.text("fast answer " * 20))
    texts: dict[str, str] = {}

    def ask(what: str) -> None:
        with client(proxy).messages.stream(model=MODEL, max_tokens=100, messages=[
                {"role": "user", "content": what}]) as stream:
            texts[what] = stream.get_final_text()

    slow_thread = threading.Thread(target=ask, args=("slow",))
    slow_thread.start()
    _wait(lambda: len(mock_api.message_requests) == 1)
    ask("fast")  # started second, done first
    assert texts["fast"] == "fast answer " * 20
    assert proxy.records() == []  # held back until the earlier exchange ends
    gate.set()
    slow_thread.join(10)
    first, second = proxy.records(2)
    assert (first["seq"], first["request"]["messages"][0]["content"]) == (1, "slow")
    assert (second["seq"], second["request"]["messages"][0]["content"]) == (2, "fast")
    assert first["response"]["content"][0]["text"] == texts["slow"] and first["complete"] and second["complete"]
    assert first["time"] < second["time"]


def test_the_key_is_never_in_the_file(tmp_path, mock_api):
    secrets = ["sk-ant-api03-verysecretkey0123456789", "oauth-bearer-token-abcdefgh", "sessioncookie987654",
               "proxypassword1234", "upstreampassword42", "querykey-zyxwvutsrq"]
    upstream = mock_api.url.replace("http://", f"http://captureuser:{secrets[4]}@")
    mock_api.add(r.text(f"you sent me {secrets[0]} and {secrets[1]}"), r.text("ok"))
    with RunningProxy(tmp_path / "c.jsonl", {"anthropic": upstream, "openai": upstream}) as proxy:
        headers = {"x-api-key": secrets[0], "authorization": f"Bearer {secrets[1]}",
                   "cookie": f"sid={secrets[2]}; theme=dark", "proxy-authorization": f"Basic {secrets[3]}",
                   "anthropic-version": "2023-06-01"}
        body = {"model": MODEL, "max_tokens": 10, "messages": [
            {"role": "user", "content": f"my key is {secrets[0]}, token {secrets[1]}"}]}
        with httpx.Client() as http:
            for _ in range(2):
                answer = http.post(proxy.base_url("anthropic") + f"/v1/messages?beta=true&key={secrets[5]}",
                                   json=body, headers=headers)
                assert answer.status_code == 200
        assert mock_api.message_requests[0].headers["x-api-key"] == secrets[0]  # forwarded, only not written
    text = (tmp_path / "c.jsonl").read_text()
    for secret in secrets:
        assert secret not in text
    records = [json.loads(x) for x in text.splitlines()[1:]]
    assert records[0]["query"] == {"beta": "true", "key": "[redacted]"}
    assert set(records[0]["request_headers"]) == {"accept", "accept-encoding", "anthropic-version", "content-length",
                                                  "content-type", "user-agent"}
    assert "[redacted]" in records[0]["request"]["messages"][0]["content"]
    assert json.loads(text.splitlines()[0])["capture"]["upstreams"]["anthropic"] == mock_api.url


def test_file_is_0600_and_the_proxy_listens_on_loopback_only(tmp_path, mock_api):
    old = os.umask(0)
    try:
        with RunningProxy(tmp_path / "c.jsonl", {"anthropic": mock_api.url, "openai": mock_api.url}) as proxy:
            assert stat.S_IMODE(os.stat(tmp_path / "c.jsonl").st_mode) == 0o600
            port = proxy.proxy.port
            assert proxy.proxy.listening == [("127.0.0.1", port)]
            other = _other_address()
            if other is not None:
                with pytest.raises(OSError):
                    socket.create_connection((other, port), timeout=2).close()
    finally:
        os.umask(old)


def _other_address() -> str | None:
    """An address of this machine that is not loopback, if it has one."""
    try:
        probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        probe.connect(("192.0.2.1", 9))  # no packet is sent: this only picks the outgoing interface
        address = probe.getsockname()[0]
        probe.close()
        return None if address.startswith("127.") else address
    except OSError:
        return None


def test_other_paths_are_forwarded_untouched_and_not_recorded(proxy, mock_api):
    with httpx.Client() as http:
        answer = http.post(proxy.base_url("anthropic") + "/v1/files", json={"x": 1})
        direct = http.post(mock_api.url + "/v1/files", json={"x": 1})
        lost = http.post(proxy.proxy.url + "/v1/messages", json={})
    assert (answer.status_code, answer.content) == (direct.status_code, direct.content)
    assert lost.status_code == 404 and "/anthropic" in lost.json()["error"]["message"]
    time.sleep(0.1)
    assert proxy.records() == [] and mock_api.requests[0].path == "/v1/files"


def test_an_exchange_in_flight_when_the_capture_stops_is_a_partial_record(proxy, mock_api):
    gate = threading.Event()
    mock_api.add(r.Reply([r.text_block("never finished because the capture stops")], gate=gate))
    errors = []

    def ask() -> None:
        try:
            with client(proxy).messages.stream(model=MODEL, max_tokens=100, messages=[
                    {"role": "user", "content": "hi"}]) as stream:
                stream.get_final_message()
        except (anthropic.APIError, httpx.HTTPError) as exc:
            errors.append(exc)

    t = threading.Thread(target=ask)
    t.start()
    _wait(lambda: len(mock_api.message_requests) == 1)
    time.sleep(0.2)
    proxy.stop()
    gate.set()
    t.join(10)
    [record] = [json.loads(x) for x in proxy.path.read_text().splitlines()[1:]]
    assert record["complete"] is False and record["error"] == "the capture stopped before the exchange ended"
    assert record["response"]["content"][0]["text"] == "never finished b"  # the first delta (16 characters)
    assert errors


def test_a_client_that_hangs_up_mid_stream(proxy, mock_api):
    mock_api.add(r.Reply([r.text_block("a long answer " * 50)], delay=0.01))
    with client(proxy).messages.stream(model=MODEL, max_tokens=100, messages=[
            {"role": "user", "content": "hi"}]) as stream:
        for event in stream:
            if event.type == "text":
                break  # leaving the block closes the response
    [record] = proxy.records(1)
    assert record["complete"] is False and record["error"] == "the client closed the connection"


def test_an_unreachable_upstream_is_a_502_in_the_api_shape(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}"
    with RunningProxy(tmp_path / "c.jsonl", {"anthropic": dead, "openai": dead}) as proxy:
        with pytest.raises(anthropic.InternalServerError) as raised:
            client(proxy).messages.create(model=MODEL, max_tokens=10, messages=[{"role": "user", "content": "hi"}])
        assert raised.value.status_code == 502 and "cannot reach the upstream" in str(raised.value)
        [record] = proxy.records(1)
    assert record["status"] == 502 and record["complete"] is False and "cannot reach" in record["error"]


def _wait(condition, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(0.01)


def test_a_kept_alive_connection_the_upstream_closed_is_not_a_502(proxy, upstream):
    """An upstream that closes its kept-alive connection just after an answer (as servers do when idle or busy),
    with the proxy's next request already sent on it: that request reaches the upstream again on a new connection
    (before: 502 Bad Gateway, `cannot reach the upstream: Server disconnected`)."""
    upstream.close_after = 0.3  # each answer's connection closed 0.3 s after it, without reading what came next
    for text in ("first", "second"):
        upstream.add(text, usage={"input_tokens": 10, "output_tokens": 2})
    with httpx.Client(base_url=proxy.base_url("openai")) as http:
        answers = [http.post("/responses", json={"model": "gpt-test", "input": text}) for text in ("a", "b")]
    assert [a.status_code for a in answers] == [200, 200]
    assert [x["status"] for x in proxy.records(2)] == [200, 200]
