"""A Messages-API-compatible HTTP server on 127.0.0.1 for tests that drive the real `anthropic` SDK.

Tests queue scripted responses (`responses.py`), point the SDK at `server.url` with `base_url`, and assert on
`server.requests`: every request the server received, parsed. Nothing of the SDK is mocked: it speaks HTTP to this
server exactly as it would to the API, retries included.

Answers are taken in order from the main queue (`add`), or from a route's queue when its predicate picks the request
(`add_for`), so a test can script the agent's turns and, separately, the summaries a compaction asks for.

Endpoints: POST /v1/messages (streaming SSE or JSON, as the request's `stream` asks) and
POST /v1/messages/count_tokens (a deterministic count, `count_tokens` below). With nothing queued, /v1/messages
answers 500 with `x-should-retry: false`, so a test that under-scripts fails at once with a clear message.

Extended thinking is checked as the API checks it, for requests that enable `thinking`: a thinking block sent back
must carry the signature this server issued with that very text (`issued`), a redacted_thinking block data this
server sent, and the assistant message before the final user turn, when that turn holds tool results, must start
with a thinking block. Anything else is refused with the API's 400 (not retried; the queued answer stays queued).
"""

from __future__ import annotations

import json
import math
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

from .responses import ApiError, Drop, Reply, Response, invalid_request, message_json, sse_events

MOCK_KEY = "sk-ant-mock-0123456789"  # the dummy key the fixture and `client()` use
MESSAGE_OVERHEAD = 3  # tokens counted per message on top of its text, like the API's role/turn markers
REQUEST_OVERHEAD = 7  # tokens counted once per request


@dataclass
class RecordedRequest:
    """One request as the server received it: path, headers (lower-case names) and the parsed JSON body."""

    path: str
    headers: dict[str, str]
    body: dict

    @property
    def messages(self) -> list[dict]:
        return self.body.get("messages", [])

    @property
    def has_tools(self) -> bool:
        return bool(self.body.get("tools"))

    @property
    def streamed(self) -> bool:
        return bool(self.body.get("stream"))

    def text(self) -> str:
        """All text of the request (system, messages, tools) joined, for `in` assertions."""
        return "\n".join(_texts(self.body))


def count_tokens(body: dict) -> int:
    """The server's deterministic token count of a request: one token per 4 characters (rounded up) of every text
    piece (system, message text, thinking, tool inputs as JSON, tool results, tool schemas), plus
    MESSAGE_OVERHEAD per message and REQUEST_OVERHEAD once. Tests can compute expected figures with it."""
    pieces = _texts(body)
    return REQUEST_OVERHEAD + MESSAGE_OVERHEAD * len(body.get("messages", [])) + sum(
        math.ceil(len(p) / 4) for p in pieces)


def _texts(body: dict) -> list[str]:
    out: list[str] = []
    system = body.get("system")
    if isinstance(system, str):
        out.append(system)
    elif isinstance(system, list):
        out += [b.get("text", "") for b in system if isinstance(b, dict)]
    for message in body.get("messages", []):
        out += _content_texts(message.get("content"))
    for tool in body.get("tools", []) or []:
        out.append(tool.get("name", "") + tool.get("description", "") + json.dumps(tool.get("input_schema", {})))
    return out


def _content_texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    out: list[str] = []
    for block in content or []:
        kind = block.get("type")
        if kind == "text":
            out.append(block.get("text", ""))
        elif kind == "thinking":
            out.append(block.get("thinking", ""))
        elif kind == "tool_use":
            out.append(block.get("name", "") + json.dumps(block.get("input", {})))
        elif kind == "tool_result":
            out += _content_texts(block.get("content", ""))
    return out


class MockAnthropicServer:
    """The server. Use as a context manager or `start()`/`stop()`; queue answers with `add(...)`."""

    def __init__(self) -> None:
        self._queue: deque[Response | Any] = deque()
        self._routes: list[tuple[Callable[[RecordedRequest], bool], deque[Response | Any]]] = []
        self._lock = threading.Lock()
        self.requests: list[RecordedRequest] = []
        self.issued: dict[str, str] = {}  # signature -> the thinking text it was issued with
        self.redacted: set[str] = set()  # the data of the redacted_thinking blocks it sent
        self._ids = 0
        server = self
        self._httpd = _QuietServer(("127.0.0.1", 0), _handler_class(server))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), name="mock-anthropic",
                                        daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> MockAnthropicServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> MockAnthropicServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def add(self, *responses: Response | Any) -> MockAnthropicServer:
        """Queue answers for the next /v1/messages requests, in order. A callable gets the RecordedRequest."""
        with self._lock:
            self._queue.extend(responses)
        return self

    def add_for(self, predicate: Callable[[RecordedRequest], bool], *responses: Response | Any) -> MockAnthropicServer:
        """Queue answers for the requests `predicate` picks (checked before the main queue, in the order routes
        were added): e.g. summary requests, told apart from the agent's own by having no tools."""
        with self._lock:
            for pred, queue in self._routes:
                if pred is predicate:
                    queue.extend(responses)
                    return self
            self._routes.append((predicate, deque(responses)))
        return self

    @property
    def pending(self) -> int:
        """How many queued answers (main queue and routes) were not consumed yet."""
        with self._lock:
            return len(self._queue) + sum(len(q) for _, q in self._routes)

    @property
    def message_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path == "/v1/messages"]

    def client(self, **kwargs: Any):
        """An `anthropic.Anthropic` client pointed at this server (a dummy key; retries as the SDK defaults)."""
        import anthropic

        return anthropic.Anthropic(api_key=kwargs.pop("api_key", MOCK_KEY), base_url=self.url, **kwargs)

    def _issue(self, reply: Reply) -> None:
        with self._lock:
            for block in reply.blocks:
                if block.get("type") == "thinking":
                    self.issued[block.get("signature", "sig-mock")] = block.get("thinking", "")
                elif block.get("type") == "redacted_thinking":
                    self.redacted.add(block.get("data", ""))

    def thinking_error(self, body: dict) -> ApiError | None:
        """The API's refusal of a request that enables thinking and sends thinking back wrong, else None."""
        thinking = body.get("thinking")
        if not isinstance(thinking, dict) or thinking.get("type") != "enabled":
            return None
        messages = body.get("messages", [])
        for i, message in enumerate(messages):
            content = message.get("content") if isinstance(message, dict) else None
            for j, block in enumerate(content if isinstance(content, list) else []):
                kind = block.get("type") if isinstance(block, dict) else None
                if kind == "redacted_thinking" and block.get("data") not in self.redacted:
                    return invalid_request(f"messages.{i}.content.{j}: Invalid `data` in `redacted_thinking` block")
                if kind != "thinking":
                    continue
                signature = block.get("signature")
                if not isinstance(signature, str):
                    return invalid_request(f"messages.{i}.content.{j}.thinking.signature: Field required")
                with self._lock:
                    issued = self.issued.get(signature)
                if issued is None or issued != block.get("thinking"):
                    return invalid_request(f"messages.{i}.content.{j}: Invalid `signature` in `thinking` block")
        # consecutive user messages are one turn to the API: the last assistant message before the final user turn
        last = next((i for i in range(len(messages) - 1, -1, -1) if _role(messages[i]) == "assistant"), None)
        final_turn = messages[last + 1:] if last is not None else []
        if last is not None and _has(messages[last], "tool_use") and any(_has(m, "tool_result") for m in final_turn):
            head = messages[last]["content"][0]
            first = head.get("type") if isinstance(head, dict) else type(head).__name__
            if first not in ("thinking", "redacted_thinking"):
                return invalid_request(f"messages.{last}.content.0.type: Expected `thinking` or `redacted_thinking`, "
                                       f"but found `{first}`. When `thinking` is enabled, a final `assistant` message "
                                       "must start with a thinking block (preceeding the lastmost set of `tool_use` "
                                       "and `tool_result` blocks). We recommend you include thinking blocks from "
                                       "previous turns.")
        return None

    def _next(self, request: RecordedRequest) -> tuple[Response | None, str]:
        """The answer for `request` and the message id it goes out with."""
        with self._lock:
            queue = next((q for pred, q in self._routes if pred(request)), self._queue)
            item = queue.popleft() if queue else None
            self._ids += 1
            message_id = f"msg_mock_{self._ids:04d}"
        return (item(request) if callable(item) else item), message_id


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client hanging up (a cancelled stream, a closed client) is normal here; anything else is printed."""
        if not isinstance(sys.exc_info()[1], (ConnectionError, BrokenPipeError)):
            super().handle_error(request, client_address)


def _handler_class(server: MockAnthropicServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                self._error(ApiError(400, "invalid_request_error", "body is not JSON", retry_after_ms=None))
                return
            path = self.path.split("?", 1)[0]
            recorded = RecordedRequest(path, {k.lower(): v for k, v in self.headers.items()}, body)
            server.requests.append(recorded)
            if path == "/v1/messages/count_tokens":
                self._json(200, {"input_tokens": count_tokens(body)})
            elif path == "/v1/messages":
                refused = server.thinking_error(body)
                if refused is not None:
                    self._error(refused)
                else:
                    self._answer(*server._next(recorded), recorded)
            else:
                self._error(ApiError(404, "not_found_error", f"mock server: no route {path}", retry_after_ms=None))

        def _answer(self, response: Response | None, message_id: str, request: RecordedRequest) -> None:
            if response is None:
                self._error(ApiError(500, "api_error", "mock server: no scripted response left",
                                     retry_after_ms=None, headers={"x-should-retry": "false"}))
                return
            if isinstance(response, ApiError):
                self._error(response)
                return
            reply = response.reply if isinstance(response, Drop) else response
            server._issue(reply)
            model = reply.model or request.body.get("model", "claude-mock")
            input_tokens = reply.input_tokens if reply.input_tokens is not None else count_tokens(request.body)
            if not request.streamed:
                self._json(200, message_json(reply, message_id, model, input_tokens))
                return
            events = sse_events(reply, message_id, model, input_tokens)
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            self.send_header("request-id", f"req_{message_id}")
            self.end_headers()
            try:
                self._stream(events, reply, response if isinstance(response, Drop) else None)
            except (BrokenPipeError, ConnectionResetError):  # the client hung up (a cancelled stream)
                pass
            self.close_connection = True

        def _stream(self, events: list[tuple[str, dict]], reply: Reply, drop: Drop | None) -> None:
            deltas = 0
            for n, (name, data) in enumerate(events):
                if drop is not None and n == drop.after_events:
                    if drop.error_event is not None:
                        self._chunk(_sse("error", drop.error_event))
                        self._chunk(b"")
                    return  # without the final empty chunk: the client sees an incomplete body
                self._chunk(_sse(name, data))
                if name == "content_block_delta":
                    deltas += 1
                    if deltas == reply.gate_after and reply.gate is not None:
                        reply.gate.wait(30)
                if reply.delay:
                    time.sleep(reply.delay)
            self._chunk(b"")

        def _chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

        def _json(self, status: int, payload: dict, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

        def _error(self, error: ApiError) -> None:
            headers = dict(error.headers)
            if error.retry_after_ms is not None:
                headers["retry-after-ms"] = str(error.retry_after_ms)
            self._json(error.status, {"type": "error", "error": {"type": error.type, "message": error.message}},
                       headers)

    return Handler


def _role(message: Any) -> Any:
    return message.get("role") if isinstance(message, dict) else None


def _has(message: Any, kind: str) -> bool:
    content = message.get("content") if isinstance(message, dict) else None
    return isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == kind for b in content)


def _sse(name: str, data: dict) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
