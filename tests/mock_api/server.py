"""A Messages-API-compatible HTTP server on 127.0.0.1 for tests that drive the real `anthropic` SDK.

Tests queue scripted responses (`responses.py`), point the SDK at `server.url` with `base_url`, and assert on
`server.requests`: every request the server received, parsed. Nothing of the SDK is mocked: it speaks HTTP to this
server exactly as it would to the API, retries included.

Answers are taken in order from the main queue (`add`), or from a route's queue when its predicate picks the request
(`add_for`), so a test can script the agent's turns and, separately, the summaries a compaction asks for.

Endpoints: POST /v1/messages (streaming SSE or JSON, as the request's `stream` asks) and
POST /v1/messages/count_tokens (a deterministic count, `count_tokens` below); GET or HEAD /api/hello (the
connectivity probe Claude Code sends without CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC) answers 200; anything else
404 with the API's error body. With nothing queued, /v1/messages answers 500 with `x-should-retry: false`, so a
test that under-scripts fails at once with a clear message.

`log` holds every exchange, JSON-ready, in arrival order: the request as received (method, path, query, the
headers of LOGGED_HEADERS only, so never a key, and the body) and what went back (status and body; for a stream
the message it assembles to, usage included). The lab writes it as a fixture's `server.jsonl`.

With `prompt_cache=True` the usage of a reply that fixes no figures is split as the API's prompt cache would:
the prefix up to each `cache_control` breakpoint is written to the cache, a later request whose content starts
with a cached prefix reads it (`PromptCache`). With `context_editing=True` a request's
`context_management.edits` of type `clear_tool_uses_20250919` are applied as the API applies them
(`clear_tool_uses`): the oldest tool results past the `keep` most recent are cleared once the trigger is reached
and the saving is at least `clear_at_least`; the reply reports `applied_edits` and its input counts what is left.

Extended thinking is checked as the API checks it, for requests that enable `thinking`: a thinking block sent back
must carry the signature this server issued with that very text (`issued`), a redacted_thinking block data this
server sent, and the assistant message before the final user turn, when that turn holds tool results, must start
with a thinking block. Anything else is refused with the API's 400 (not retried; the queued answer stays queued).
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterator

from .responses import ApiError, Drop, Reply, Response, invalid_request, message_json, sse_events

MOCK_KEY = "sk-ant-mock-0123456789"  # the dummy key the fixture and `client()` use
# Request headers the log keeps: what tells clients and their versions apart. Keys and cookies are never logged.
LOGGED_HEADERS = ("anthropic-beta", "anthropic-version", "content-type", "user-agent", "x-app",
                  "x-claude-code-session-id", "x-stainless-retry-count", "x-stainless-timeout",
                  "x-stainless-package-version", "x-stainless-lang", "x-stainless-runtime")
MESSAGE_OVERHEAD = 3  # tokens counted per message on top of its text, like the API's role/turn markers
REQUEST_OVERHEAD = 7  # tokens counted once per request


@dataclass
class RecordedRequest:
    """One request as the server received it: path, headers (lower-case names) and the parsed JSON body."""

    path: str
    headers: dict[str, str]
    body: dict
    method: str = "POST"
    query: str = ""

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


CLEARED_RESULT = "[cleared by context management]"  # what a cleared result's content counts as


def clear_tool_uses(body: dict) -> tuple[dict, list[dict]]:
    """The request as the model sees it after its `clear_tool_uses_20250919` edits, and the edits applied
    ({type, cleared_tool_uses, cleared_input_tokens}, as the API reports them); the body itself is not changed."""
    edits = [e for e in (body.get("context_management") or {}).get("edits", []) if isinstance(e, dict)
             and e.get("type") == "clear_tool_uses_20250919"]
    if not edits:
        return body, []
    messages = json.loads(json.dumps(body.get("messages", [])))
    applied = []
    for edit in edits:
        uses = {b.get("id"): b.get("name") for m in messages if isinstance(m.get("content"), list)
                for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_use"}
        results = [b for m in messages if m.get("role") == "user" and isinstance(m.get("content"), list)
                   for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result"
                   and b.get("content") != CLEARED_RESULT]
        trigger = edit.get("trigger") or {"type": "input_tokens", "value": 100_000}
        reached = len(uses) if trigger.get("type") == "tool_uses" else count_tokens({**body, "messages": messages})
        if reached < (trigger.get("value") or 0):
            continue
        keep = (edit.get("keep") or {"value": 3}).get("value", 3)
        excluded = set(edit.get("exclude_tools") or ())
        candidates = [b for b in results[:max(0, len(results) - keep)] if uses.get(b.get("tool_use_id")) not in excluded]
        saved = sum(math.ceil(len(t) / 4) for b in candidates for t in _content_texts([b]))
        if not candidates or saved < (edit.get("clear_at_least") or {}).get("value", 0):
            continue
        for b in candidates:
            b["content"] = CLEARED_RESULT
        saved -= len(candidates) * math.ceil(len(CLEARED_RESULT) / 4)
        applied.append({"type": "clear_tool_uses_20250919", "cleared_tool_uses": len(candidates),
                        "cleared_input_tokens": saved})
    return ({**body, "messages": messages}, applied) if applied else (body, [])


class PromptCache:
    """The API's prompt cache, deterministically: every `cache_control` breakpoint of a request writes the prefix
    up to it (tools, then system blocks, then message blocks, the API's order); a later request reads the longest
    cached prefix its own content starts with, at or before its last breakpoint. A string content counts as one
    text block, and `cache_control` itself is not content, so moving a breakpoint keeps the prefix."""

    def __init__(self) -> None:
        self.written: set[str] = set()

    def split(self, body: dict) -> tuple[int, int, int]:
        """(input, cache creation, cache read) for `body`, summing to `count_tokens(body)`; writes its prefixes."""
        total = count_tokens(body)
        digest = hashlib.sha256()
        tokens = 0
        read = last_breakpoint = 0
        breakpoints: list[str] = []
        for piece, cost, marked in _cache_pieces(body):
            digest.update(piece.encode())
            tokens += cost
            prefix = digest.hexdigest()
            if prefix in self.written:
                read = tokens
            if marked:
                breakpoints.append(prefix)
                last_breakpoint = tokens
        read = min(read, last_breakpoint)
        self.written.update(breakpoints)
        creation = last_breakpoint - read
        return total - read - creation, creation, read


def _cache_pieces(body: dict) -> Iterator[tuple[str, int, bool]]:
    """(canonical JSON, tokens, has a breakpoint) of each cacheable piece of a request, in cache order; the tokens
    add up to `count_tokens(body)` less REQUEST_OVERHEAD."""
    for tool in body.get("tools", []) or []:
        yield _canonical(tool), sum(math.ceil(len(p) / 4) for p in _tool_texts(tool)), "cache_control" in tool
    system = body.get("system")
    blocks = [{"type": "text", "text": system}] if isinstance(system, str) else system or []
    for block in blocks:
        if isinstance(block, dict):
            yield _canonical(block), math.ceil(len(block.get("text", "")) / 4), "cache_control" in block
    for message in body.get("messages", []):
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        yield _canonical({"role": message.get("role")}), MESSAGE_OVERHEAD, False
        for block in blocks:
            if isinstance(block, dict):
                cost = sum(math.ceil(len(p) / 4) for p in _content_texts([block]))
                yield _canonical(block), cost, "cache_control" in block


def _canonical(obj: dict) -> str:
    return json.dumps({k: v for k, v in obj.items() if k != "cache_control"}, sort_keys=True, ensure_ascii=False)


def _tool_texts(tool: dict) -> list[str]:
    return [tool.get("name", "") + tool.get("description", "") + json.dumps(tool.get("input_schema", {}))]


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
        out += _tool_texts(tool)
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

    def __init__(self, prompt_cache: bool = False, context_editing: bool = False) -> None:
        self._queue: deque[Response | Any] = deque()
        self.cache = PromptCache() if prompt_cache else None
        self.context_editing = context_editing
        self.log: list[dict] = []  # every exchange, JSON-ready (see the module docstring)
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

    def drop_for(self, predicate: Callable[[RecordedRequest], bool]) -> int:
        """Take back the answers queued for `predicate`'s requests that none asked for; how many there were (a
        scenario that records whether the agent asked, rather than expecting it)."""
        with self._lock:
            for pred, queue in self._routes:
                if pred is predicate:
                    left = len(queue)
                    queue.clear()
                    return left
        return 0

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

    def usage_for(self, reply: Reply, body: dict) -> tuple[int, int, int]:
        """(input, cache creation, cache read) the reply reports: its own figures when it fixes input_tokens, else
        the count of the request, split by the prompt cache when there is one."""
        if reply.input_tokens is not None:
            return reply.input_tokens, reply.cache_creation_input_tokens, reply.cache_read_input_tokens
        if self.cache is not None:
            with self._lock:
                return self.cache.split(body)
        return count_tokens(body), reply.cache_creation_input_tokens, reply.cache_read_input_tokens

    def _logged(self, recorded: RecordedRequest) -> dict:
        entry = {"method": recorded.method, "path": recorded.path, "query": recorded.query,
                 "headers": {k: v for k, v in recorded.headers.items() if k in LOGGED_HEADERS},
                 "body": recorded.body, "response": None}
        with self._lock:
            self.log.append(entry)
        return entry

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

        def _recorded(self, body: Any) -> RecordedRequest:
            path, _, query = self.path.partition("?")
            recorded = RecordedRequest(path, {k.lower(): v for k, v in self.headers.items()}, body, self.command,
                                       query)
            self.entry = server._logged(recorded)
            return recorded

        def do_GET(self) -> None:
            recorded = self._recorded(None)
            if recorded.path == "/api/hello":
                self._json(200, {"message": "hello"})
            else:
                self._error(ApiError(404, "not_found_error", f"mock server: no route {recorded.path}",
                                     retry_after_ms=None))

        def do_HEAD(self) -> None:
            recorded = self._recorded(None)
            status = 200 if recorded.path == "/api/hello" else 404
            self.entry["response"] = {"status": status}
            self.send_response(status)
            self.send_header("content-length", "0")
            self.end_headers()

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                self._recorded(raw.decode("utf-8", "replace"))
                self._error(ApiError(400, "invalid_request_error", "body is not JSON", retry_after_ms=None))
                return
            recorded = self._recorded(body)
            server.requests.append(recorded)
            path = recorded.path
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
            body = request.body
            if server.context_editing and reply.context_management is None:
                body, applied = clear_tool_uses(request.body)
                if applied:
                    reply = replace(reply, context_management={"applied_edits": applied})
            usage = server.usage_for(reply, body)
            message = message_json(reply, message_id, model, usage)
            if not request.streamed:
                self._json(200, message)
                return
            self.entry["response"] = {"status": 200, "stream": True, "body": message}
            if isinstance(response, Drop):
                self.entry["response"]["dropped_after_events"] = response.after_events
            events = sse_events(reply, message_id, model, usage)
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            self.send_header("request-id", f"req_{message_id}")
            self.end_headers()
            try:
                self._stream(events, reply, response if isinstance(response, Drop) else None)
            except (BrokenPipeError, ConnectionResetError):  # the client hung up (a cancelled stream)
                self.close_connection = True
            else:  # a whole stream keeps the connection for the next request, as the API's does; a cut one ends it
                self.close_connection = isinstance(response, Drop)

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
            self.entry["response"] = {"status": status, "body": payload}  # logged before the client can read it
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
