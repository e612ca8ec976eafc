"""The capture's protocol parsing: SSE split at any byte, the three rebuilders on whole and cut-off streams,
content-encodings (forwarded as they came, decoded for the record), the header and URL allow-lists."""

from __future__ import annotations

import gzip
import json
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import brotli
import httpx2 as httpx
import pytest
from backports import zstd

from capture_helpers import RunningProxy, chat_chunks, responses_events
from inspector.capture.chat_stream import ChatStream
from inspector.capture.encoding import Decoder, EncodingError, decode
from inspector.capture.messages_stream import MessagesStream
from inspector.capture.protocols import PROTOCOLS, protocol_for
from inspector.capture.redact import credentials, kept_headers, kept_query, public_url, REQUEST_HEADERS
from inspector.capture.responses_stream import ResponsesStream
from inspector.capture.sse import SSEParser, data_array, split
from inspector.core.formats.detect import CAPTURE_FORMATS
from mock_api import responses as r
from mock_api.responses import sse_events


def anthropic_stream(reply: r.Reply) -> bytes:
    return b"".join(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
                    for name, data in sse_events(reply, "msg_1", "claude-x", (42, 7, 0)))


def rebuild(stream, raw: bytes, cuts: list[int]):
    parser = SSEParser()
    start = 0
    for cut in [*cuts, len(raw)]:
        stream.feed(parser.feed(raw[start:cut]))
        start = cut
    stream.feed(parser.close())
    return stream.result()


REPLY = r.Reply([r.thinking_block("Think first, at some length, with ünïcode ✓."), r.text_block("Answer: 42."),
                 r.tool_use_block("grep", {"pattern": "def main", "path": "src"}, id="toolu_1")],
                stop_reason="tool_use", cache_creation_input_tokens=7, output_tokens=33)


def test_sse_split_at_every_byte_gives_the_same_message():
    raw = anthropic_stream(REPLY)
    whole = rebuild(MessagesStream(), raw, [])
    assert whole["content"] == REPLY.blocks and whole["stop_reason"] == "tool_use"
    assert whole["usage"] == {"input_tokens": 42, "cache_creation_input_tokens": 7, "cache_read_input_tokens": 0,
                              "output_tokens": 33}
    for cut in range(1, len(raw), 7):
        assert rebuild(MessagesStream(), raw, [cut, min(cut + 3, len(raw))]) == whole


def test_sse_line_ends_crlf_and_cr_and_multiline_data():
    parser = SSEParser()
    raw = b": comment\r\nevent: a\r\ndata: {\"x\":\r\ndata: 1}\r\n\r\nevent: b\rdata: 2\r\r"
    got = []
    for i in range(len(raw)):  # one byte at a time: a CRLF split between chunks is one line end
        got += split(parser.feed(raw[i:i + 1]))
    assert got == [(b"a", b'{"x":\n1}'), (b"b", b"2")]
    assert parser.feed(b"data: no blank line at the end") == b""
    assert split(parser.close()) == [(b"", b"no blank line at the end")]
    usual = b'event: x\ndata: {"a": 1}\n\ndata: [2]\n\n'
    assert json.loads(data_array(usual)) == [{"a": 1}, [2]]
    for odd in (b": ping\n\n", b"data: 1\ndata: 2\n\n", b"id: 3\ndata: 1\n\n", b"event: e\n\n", b"data:{}\n\n"):
        assert data_array(usual + odd) is None  # any other shape: the events are read one by one


def test_a_cut_off_anthropic_stream_keeps_what_arrived():
    raw = anthropic_stream(REPLY)
    cut = raw.index(b'"partial_json"') + 40
    stream = MessagesStream()
    partial = rebuild(stream, raw[:cut], [])
    assert not stream.complete
    assert [b["type"] for b in partial["content"]] == ["thinking", "text", "tool_use"]
    assert partial["content"][1]["text"] == "Answer: 42."
    assert isinstance(partial["content"][2]["input"], str)  # the JSON cut short stays as the text it was


def test_anthropic_error_event_mid_stream():
    stream = MessagesStream()
    head = b"\n\n".join(anthropic_stream(r.text("half")).split(b"\n\n")[:4]) + b"\n\n"
    rebuild(stream, head + b'event: error\ndata: {"type": "error", "error": '
            b'{"type": "overloaded_error", "message": "Overloaded"}}\n\n', [])
    assert stream.error == {"type": "overloaded_error", "message": "Overloaded"} and not stream.complete


def test_responses_stream_whole_and_cut_off():
    usage = {"input_tokens": 10, "output_tokens": 4}
    events = responses_events("resp_1", "Listing the files now.", ("call_1", "exec_command", '{"cmd": "ls"}'), usage)
    raw = b"".join(events)
    stream = ResponsesStream()
    whole = rebuild(stream, raw, [len(raw) // 3])
    assert stream.complete and whole["usage"] == usage and whole["id"] == "resp_1"
    assert [i["type"] for i in whole["output"]] == ["message", "function_call"]
    cut = raw.index(b"response.function_call_arguments.delta")
    cut = raw.index(b"response.function_call_arguments.delta", cut + 60)  # two argument deltas arrived
    stream = ResponsesStream()
    partial = rebuild(stream, raw[:cut], [])
    assert not stream.complete
    assert partial["output"][0]["content"][0]["text"] == "Listing the files now."  # the item was done
    assert partial["output"][1]["arguments"] == '{"cmd'  # rebuilt from the deltas so far
    text_only = ResponsesStream()
    half = rebuild(text_only, raw[:raw.index(b"response.output_item.done")], [])
    assert half["output"][0]["content"] == [{"type": "output_text", "text": "Listing the files now."}]


def test_chat_stream_merges_tool_call_pieces():
    usage = {"prompt_tokens": 5, "completion_tokens": 2}
    stream = ChatStream()
    whole = rebuild(stream, b"".join(chat_chunks("Hello world!", ("call_1", "shell", '{"cmd": "ls"}'), usage)), [9])
    assert stream.complete and whole["usage"] == usage and whole["model"] == "gpt-test"
    [choice] = whole["choices"]
    assert choice["message"]["content"] == "Hello world!" and choice["finish_reason"] == "tool_calls"
    assert choice["message"]["tool_calls"][0]["function"] == {"name": "shell", "arguments": '{"cmd": "ls"}'}
    cut = ChatStream()
    rebuild(cut, b"".join(chat_chunks("Hello world!", None, usage)[:2]), [])
    assert not cut.complete and cut.result()["choices"][0]["message"]["content"] == "Hello "


def test_every_recorded_protocol_loads_as_a_format():
    assert {p.name for p in PROTOCOLS} == set(CAPTURE_FORMATS)
    assert protocol_for("anthropic", "POST", "/v1/messages").name == "anthropic-messages"
    assert protocol_for("anthropic", "POST", "/v1/messages/count_tokens").name == "anthropic-count-tokens"
    assert protocol_for("openai", "POST", "/v1/responses/").name == "openai-responses"
    assert protocol_for("openai", "POST", "/chat/completions").name == "openai-chat"
    assert protocol_for("openai", "POST", "/v1/messages") is None  # each API only its own
    assert protocol_for("anthropic", "GET", "/v1/messages") is None
    assert protocol_for("openai", "POST", "/v1/responses/resp_1/cancel") is None


def test_allow_lists():
    headers = [("X-Api-Key", "sk-ant-secret1234"), ("Authorization", "Bearer tok-secret-5678"),
               ("Cookie", "a=cookievalue1; b=short"), ("Anthropic-Beta", "x"), ("anthropic-beta", "y"),
               ("X-Goog-Api-Key", "AIzaSecretValue123"), ("User-Agent", "claude-cli/2.1.332")]
    assert kept_headers(headers, REQUEST_HEADERS) == {"anthropic-beta": "x, y", "user-agent": "claude-cli/2.1.332"}
    assert credentials(headers) == ["Bearer tok-secret-5678", "AIzaSecretValue123", "sk-ant-secret1234",
                                    "tok-secret-5678", "cookievalue1"]
    assert kept_query("beta=true&key=AIzaSecret&alt=sse") == {"beta": "true", "key": "[redacted]", "alt": "sse"}
    assert public_url("https://user:pw@host.example:8443/v1?key=s3cret&beta=1") == \
        "https://host.example:8443/v1?key=[redacted]&beta=1"
    assert public_url("http://[::1]:9000/x") == "http://[::1]:9000/x"


@pytest.mark.parametrize("encoding, compress", [
    ("gzip", gzip.compress), ("deflate", zlib.compress), ("deflate", lambda b: zlib.compress(b, wbits=-15)),
    ("br", brotli.compress), ("zstd", zstd.compress), ("gzip, br", lambda b: brotli.compress(gzip.compress(b)))])
def test_decode(encoding, compress):
    body = json.dumps({"text": "x" * 5000}).encode()
    assert decode(compress(body), encoding) == body
    decoder, packed = Decoder(encoding), compress(body)
    assert b"".join(decoder.decompress(packed[i:i + 100]) for i in range(0, len(packed), 100)) == body


def test_decode_refuses_what_it_cannot_undo():
    with pytest.raises(EncodingError, match="compress"):
        decode(b"x", "compress")
    with pytest.raises(EncodingError, match="cannot decode"):
        decode(b"not gzip at all", "gzip")


class _CompressingUpstream:
    """Answers every POST with `self.body` in `self.encoding`, streamed as SSE or whole; keeps the raw request."""

    def __init__(self) -> None:
        self.received: list[tuple[dict, bytes]] = []
        self.answer = (b"", "identity", "application/json")
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                raw = self.rfile.read(int(self.headers["content-length"]))
                upstream.received.append(({k.lower(): v for k, v in self.headers.items()}, raw))
                body, encoding, kind = upstream.answer
                self.send_response(200)
                self.send_header("content-type", kind)
                self.send_header("content-encoding", encoding)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"


@pytest.fixture
def compressing(tmp_path):
    upstream = _CompressingUpstream()
    with RunningProxy(tmp_path / "c.jsonl", {"anthropic": upstream.url, "openai": upstream.url}) as proxy:
        yield upstream, proxy
    upstream.httpd.shutdown()


@pytest.mark.parametrize("encoding, compress", [("gzip", gzip.compress), ("br", brotli.compress),
                                                ("zstd", zstd.compress)])
def test_compressed_answers_forwarded_as_they_came_and_decoded_for_the_record(compressing, encoding, compress):
    upstream, proxy = compressing
    message = {"id": "msg_z", "type": "message", "role": "assistant", "content": [{"type": "text", "text": "hi " * 900}],
               "usage": {"input_tokens": 3, "output_tokens": 900}}
    sent = compress(json.dumps(message).encode())
    upstream.answer = (sent, encoding, "application/json")
    request = json.dumps({"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "a" * 3000}]})
    packed = zstd.compress(request.encode())  # a request body compressed as Codex compresses its own
    with httpx.Client() as http:
        with http.stream("POST", proxy.base_url("anthropic") + "/v1/messages", content=packed,
                         headers={"content-encoding": "zstd", "content-type": "application/json",
                                  "accept-encoding": encoding}) as answer:
            raw = b"".join(answer.iter_raw())
            assert answer.headers["content-encoding"] == encoding
    assert raw == sent  # the client got the upstream's bytes, still compressed
    assert upstream.received[0][1] == packed and upstream.received[0][0]["content-encoding"] == "zstd"
    [record] = proxy.records(1)
    assert record["response"] == message and record["request"] == json.loads(request)
    assert record["bytes"] == {"request": len(packed), "response": len(sent)}


def test_a_gzipped_event_stream_is_rebuilt(compressing):
    upstream, proxy = compressing
    events = anthropic_stream(REPLY)
    upstream.answer = (gzip.compress(events), "gzip", "text/event-stream")
    with httpx.Client() as http:
        with http.stream("POST", proxy.base_url("anthropic") + "/v1/messages", json={
                "model": "m", "max_tokens": 5, "stream": True, "messages": [{"role": "user", "content": "a"}]}) as a:
            assert b"".join(a.iter_bytes()) == events  # httpx undid the gzip the proxy left alone
    [record] = proxy.records(1)
    assert record["response"]["content"] == REPLY.blocks and record["complete"]


def test_an_encoding_the_recorder_cannot_undo_costs_only_the_record(compressing):
    upstream, proxy = compressing
    upstream.answer = (b"\x1f\x9d\x90opaque", "compress", "application/json")
    with httpx.Client() as http:
        answer = http.post(proxy.base_url("anthropic") + "/v1/messages", json={"model": "m", "messages": []},
                           headers={"accept-encoding": "identity"})
    assert answer.status_code == 200
    [record] = proxy.records(1)
    assert record["response"] is None and "compress" in record["response_note"] and record["complete"]
