"""A scripted OpenAI Responses-API server on 127.0.0.1, for driving the real Codex CLI offline.

    with ResponsesServer() as server:
        server.add(Turn(reasoning("Look first", tokens=40), call("exec_command", {"cmd": "cat notes.txt"})),
                   Turn(text("It says hello.")))
        ... run `codex exec` with a provider whose base_url is server.url ...
        server.exchanges          # every request as received, with what was answered

`POST /v1/responses` streams the events the real API sends, in its order: `response.created`,
`response.in_progress`, per output item `response.output_item.added`, its parts (`response.content_part.added`,
`response.output_text.delta`/`.done`, `response.content_part.done`; `response.reasoning_summary_part.added`,
`response.reasoning_summary_text.delta`/`.done`, `response.reasoning_summary_part.done`;
`response.function_call_arguments.delta`/`.done`; `response.custom_tool_call_input.delta`/`.done`) and
`response.output_item.done`, then `response.completed` with the usage. A request Codex marks as a compaction
(`request_kind` in its turn metadata: Codex 0.171 compacts with an ordinary summary request) and
`POST /v1/responses/compact` (the remote compaction of other versions) answer from the compaction queue
(`add_compaction`). `GET .../models` lists the server's model; anything else is logged and answered 404.

Usage is decided here, and by default it is the real size of what was sent (`count_request`): the request
rendered the way OpenAI's models read it (the harmony format: each message framed by `<|start|>role<|message|>` ...
`<|end|>`, tools as a TypeScript-like namespace in the developer message, function calls addressed
`to=functions.NAME`) and counted with the real o200k_base tokenizer. Reasoning sent back (`encrypted_content`
this server issued) counts at the `reasoning_tokens` its response reported, wherever Codex sends it (OpenAI's
guides say the API may ignore reasoning from before the last user message; whether such items still count as
input is not published, so this server counts what is sent); cached tokens are the longest part of the rendering
shared with an earlier request of the same `prompt_cache_key`, in 128-token steps from 1,024 on, as OpenAI's
prompt cache reports. A turn can override any
figure, or add to the input (`extra_input`) to stand for content the client did not send.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
import zlib
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterator

import toktok

MOCK_KEY = "sk-mock-responses-0000"  # the dummy key of tests that call the server directly; never a real key
MODEL = "gpt-5.5"  # a model in codex 0.171's catalog (272,000 window)
# Request headers the log keeps (what tells clients, versions and requests apart). Keys and cookies never are.
LOGGED_HEADERS = ("accept", "content-type", "content-encoding", "user-agent", "originator", "session-id",
                  "thread-id", "x-client-request-id", "x-codex-beta-features", "x-codex-window-id",
                  "x-codex-turn-metadata", "openai-beta")

# The harmony framing (o200k_harmony's special tokens; each is one token).
START, MESSAGE, END, CALL, CHANNEL, CONSTRAIN, RETURN = 1, 1, 1, 1, 1, 1, 1
CACHE_MIN, CACHE_STEP = 1024, 128
# What the API itself puts before a request's own messages: its system message (model identity, knowledge
# cutoff, date, reasoning effort, the valid channels). Ours reads like harmony's published example.
SYSTEM_PREAMBLE = ("You are ChatGPT, a large language model trained by OpenAI.\nKnowledge cutoff: 2024-10\n"
                   "Current date: 2026-12-01\n\nReasoning: {effort}\n\n# Valid channels: analysis, commentary, final. "
                   "Channel must be included for every message.\nCalls to these tools must go to the commentary "
                   "channel: 'functions'.")


def tokens(text: str) -> int:
    """o200k_base tokens of `text` (special-token text counted as plain text)."""
    return toktok.batch_count([text], "o200k_base", threads=1)[0] if text else 0


# -- scripted output ----------------------------------------------------------------------------------------------


@dataclass
class Text:
    text: str


@dataclass
class Reasoning:
    """A reasoning item: its summary parts (shown to the user) and the hidden reasoning's size in tokens."""

    summary: list[str]
    tokens: int


@dataclass
class Call:
    """A function call (`arguments` a dict, sent as JSON) or, with `custom=True`, a freeform custom tool call."""

    name: str
    arguments: Any
    call_id: str | None = None
    custom: bool = False

    @property
    def argument_text(self) -> str:
        return self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)


def text(value: str) -> Text:
    return Text(value)


def reasoning(*summary: str, tokens: int = 64) -> Reasoning:
    return Reasoning(list(summary), tokens)


def call(name: str, arguments: Any, call_id: str | None = None) -> Call:
    return Call(name, arguments, call_id)


def exec_command(cmd: str, call_id: str | None = None, **more: Any) -> Call:
    """Codex's shell tool."""
    return Call("exec_command", {"cmd": cmd, **more}, call_id)


def custom_call(name: str, payload: str, call_id: str | None = None) -> Call:
    """A freeform (custom) tool call, as Codex's apply_patch is."""
    return Call(name, payload, call_id, custom=True)


@dataclass
class Turn:
    """One response: its output items in order and, optionally, figures that replace the counted ones.

    `input_tokens`, `cached_tokens`, `output_tokens`: None means counted. `extra_input` is added to the counted
    input (content the client did not send: a turn that must look near the window). `delay` seconds pass between
    events.
    """

    items: list[Text | Reasoning | Call]
    input_tokens: int | None = None
    cached_tokens: int | None = None
    output_tokens: int | None = None
    extra_input: int = 0
    delay: float = 0.0

    def __init__(self, *items: Text | Reasoning | Call, input_tokens: int | None = None,
                 cached_tokens: int | None = None, output_tokens: int | None = None, extra_input: int = 0,
                 delay: float = 0.0) -> None:
        self.items = list(items)
        self.input_tokens, self.cached_tokens, self.output_tokens = input_tokens, cached_tokens, output_tokens
        self.extra_input, self.delay = extra_input, delay


# -- counting what was sent ---------------------------------------------------------------------------------------


def _schema_type(schema: Any, depth: int = 0) -> str:
    """A JSON schema as harmony's TypeScript-like type."""
    if not isinstance(schema, dict):
        return "any"
    if "enum" in schema and isinstance(schema["enum"], list):
        return " | ".join(json.dumps(v) for v in schema["enum"])
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(_schema_type({**schema, "type": k}, depth) for k in kind)
    if kind == "object":
        props = schema.get("properties") or {}
        if not props:
            return "object"
        required = set(schema.get("required") or ())
        pad = "  " * (depth + 1)
        lines = ["{"]
        for name, sub in props.items():
            if isinstance(sub, dict) and sub.get("description"):
                lines.append(f"{pad}// {sub['description']}")
            lines.append(f"{pad}{name}{'' if name in required else '?'}: {_schema_type(sub, depth + 1)},")
        lines.append("  " * depth + "}")
        return "\n".join(lines)
    if kind == "array":
        return f"Array<{_schema_type(schema.get('items'), depth)}>"
    if kind == "integer":
        return "number"
    return kind if isinstance(kind, str) else "any"


def render_tools(tools: list[dict]) -> str:
    """The developer message's `# Tools` section for the request's tools."""
    out = ["# Tools", "", "## functions", "", "namespace functions {", ""]
    for tool in tools:
        kind = tool.get("type")
        if kind == "function":
            out.append(f"// {tool.get('description', '')}")
            out.append(f"type {tool.get('name')} = (_: {_schema_type(tool.get('parameters'))}) => any;")
        elif kind == "custom":
            out.append(f"// {tool.get('description', '')}")
            fmt = tool.get("format") or {}
            out.append(f"type {tool.get('name')} = (_: string) => any; // {json.dumps(fmt)}")
        elif kind == "namespace":
            out.append(f"// namespace {tool.get('name')}: {tool.get('description', '')}")
            for sub in tool.get("tools") or ():
                out.append(f"// {sub.get('description', '')}")
                out.append(f"type {tool.get('name')}.{sub.get('name')} = "
                           f"(_: {_schema_type(sub.get('parameters'))}) => any;")
        else:  # hosted tools (web_search, ...): declared by name and settings
            out.append(f"// {kind}: {json.dumps({k: v for k, v in tool.items() if k != 'type'})}")
        out.append("")
    out.append("} // namespace functions")
    return "\n".join(out)


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for part in content or ():
        if isinstance(part, dict):
            if part.get("type") in ("input_text", "output_text", "text", "summary_text"):
                parts.append(part.get("text", ""))
            elif part.get("type") == "input_image":
                parts.append("<image>")
    return "".join(parts)


@dataclass
class Rendered:
    """A request as the model reads it: framed pieces in order, each with its tokens."""

    pieces: list[tuple[str, int]]  # (a stable key of the piece, its tokens)

    @property
    def total(self) -> int:
        return sum(n for _, n in self.pieces)


def render_request(body: dict, reasoning_sizes: dict[str, int]) -> Rendered:
    """`body` rendered and counted piece by piece (see the module docstring)."""
    pieces: list[tuple[str, int]] = []

    def message(role: str, content: str, extra: int = 0) -> None:
        n = START + tokens(role) + MESSAGE + tokens(content) + END + extra
        pieces.append((hashlib.sha1(f"{role}\0{content}".encode()).hexdigest(), n))

    effort = (body.get("reasoning") or {}).get("effort") or "medium"
    message("system", SYSTEM_PREAMBLE.format(effort=effort))
    developer = []
    if body.get("instructions"):
        developer.append("# Instructions\n\n" + body["instructions"])
    if body.get("tools"):
        developer.append(render_tools(body["tools"]))
    if developer:
        message("developer", "\n\n".join(developer))
    items = [i for i in body.get("input") or () if isinstance(i, dict)]
    names: dict[str, str] = {}
    for item in items:
        kind = item.get("type", "message")
        if kind == "message":
            message(str(item.get("role")), _content_text(item.get("content")))
        elif kind == "reasoning":
            size = reasoning_sizes.get(str(item.get("encrypted_content")), 0)
            if size:  # <|start|>assistant<|channel|>analysis<|message|>...<|end|>
                pieces.append((f"reasoning:{item.get('encrypted_content')}",
                               START + tokens("assistant") + CHANNEL + tokens("analysis") + MESSAGE + size + END))
        elif kind in ("function_call", "custom_tool_call"):
            name = str(item.get("name"))
            names[str(item.get("call_id"))] = name
            args = item.get("arguments") if kind == "function_call" else item.get("input")
            constrain = CONSTRAIN + tokens("json") if kind == "function_call" else 0  # <|constrain|>json
            n = (START + tokens("assistant") + CHANNEL + tokens(f"commentary to=functions.{name} ") + constrain
                 + MESSAGE + tokens(str(args or "")) + CALL)
            pieces.append((hashlib.sha1(f"call\0{name}\0{args}".encode()).hexdigest(), n))
        elif kind in ("function_call_output", "custom_tool_call_output"):
            output = item.get("output")
            if not isinstance(output, str):
                output = _content_text(output) if isinstance(output, list) else json.dumps(output)
            name = names.get(str(item.get("call_id")), "tool")
            message(f"functions.{name} to=assistant", output, CHANNEL + tokens("commentary"))
        else:  # anything else the client sends: counted as its JSON
            message("user", json.dumps(item, sort_keys=True))
    return Rendered(pieces)


def cached_tokens(now: Rendered, earlier: list[Rendered]) -> int:
    """The prompt-cache hit: the most tokens of leading pieces `now` shares with an earlier request, in steps."""
    best = 0
    for before in earlier:
        shared = 0
        for (a, n), (b, _) in zip(now.pieces, before.pieces):
            if a != b:
                break
            shared += n
        best = max(best, shared)
    return 0 if best < CACHE_MIN else best // CACHE_STEP * CACHE_STEP


def output_tokens(item: Text | Reasoning | Call) -> int:
    """What producing an item costs: its text and framing (reasoning: its hidden size)."""
    if isinstance(item, Reasoning):
        return item.tokens
    if isinstance(item, Text):
        return CHANNEL + tokens("final") + MESSAGE + tokens(item.text) + RETURN
    return CHANNEL + tokens(f"commentary to=functions.{item.name} ") + MESSAGE + tokens(item.argument_text) + CALL


# -- the server ---------------------------------------------------------------------------------------------------


@dataclass
class Exchange:
    """One request as received (the headers of LOGGED_HEADERS only, the body exactly as sent) and what was
    answered (for a stream, the response object its events assemble to, usage included)."""

    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: Any
    status: int = 200
    response: dict | None = None

    def to_json(self) -> dict:
        """The lab's log entry (tests/agents/README.md: a fixture's server.jsonl)."""
        return {"method": self.method, "path": self.path, "query": self.query, "headers": self.headers,
                "body": self.body, "response": {"status": self.status, "body": self.response}}


class ResponsesServer:
    """The server. A context manager; `add` queues turns (a callable gets the request body and returns one)."""

    def __init__(self, model: str = MODEL) -> None:
        self.model = model
        self._queue: deque[Turn | Callable[[dict], Turn]] = deque()
        self._compactions: deque[Turn | Callable[[dict], Turn]] = deque()
        self._lock = threading.Lock()
        self.exchanges: list[Exchange] = []
        self._reasoning: dict[str, int] = {}  # encrypted_content issued -> its reasoning tokens
        self._rendered: dict[str, list[Rendered]] = {}  # per prompt_cache_key: what the cache holds
        self._ids = 0
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True,
                                        name="mock-responses")

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> ResponsesServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def add(self, *turns: Turn | Callable[[dict], Turn]) -> ResponsesServer:
        with self._lock:
            self._queue.extend(turns)
        return self

    def add_compaction(self, *turns: Turn | Callable[[dict], Turn]) -> ResponsesServer:
        with self._lock:
            self._compactions.extend(turns)
        return self

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue) + len(self._compactions)

    def _next_id(self, prefix: str) -> str:
        with self._lock:
            self._ids += 1
            return f"{prefix}_{self._ids:04d}{hashlib.sha1(str(self._ids).encode()).hexdigest()[:20]}"

    def next_turn(self, queue: deque, body: dict) -> Turn | None:
        with self._lock:
            if not queue:
                return None
            turn = queue.popleft()
        return turn(body) if callable(turn) else turn

    def respond(self, body: dict, turn: Turn) -> tuple[dict, list[tuple[str, dict]]]:
        """The response object and the SSE events that stream it, with the usage decided."""
        with self._lock:
            rendered = render_request(body, self._reasoning)
            earlier = self._rendered.setdefault(str(body.get("prompt_cache_key")), [])
            cached = cached_tokens(rendered, earlier)
            earlier.append(rendered)
        input_tokens = turn.input_tokens if turn.input_tokens is not None else rendered.total + turn.extra_input
        if turn.cached_tokens is not None:
            cached = turn.cached_tokens
        cached = min(cached, input_tokens)
        reasoning_tokens = sum(i.tokens for i in turn.items if isinstance(i, Reasoning))
        out = turn.output_tokens if turn.output_tokens is not None else sum(map(output_tokens, turn.items))
        usage = {"input_tokens": input_tokens, "input_tokens_details": {"cached_tokens": cached},
                 "output_tokens": out, "output_tokens_details": {"reasoning_tokens": reasoning_tokens},
                 "total_tokens": input_tokens + out}
        response_id = self._next_id("resp")
        events: list[tuple[str, dict]] = []
        base = {"id": response_id, "object": "response", "created_at": int(time.time()), "model": self.model,
                "status": "in_progress", "output": [], "usage": None, "parallel_tool_calls":
                    body.get("parallel_tool_calls", False), "tool_choice": body.get("tool_choice", "auto"),
                "reasoning": body.get("reasoning"), "store": body.get("store", False)}
        events.append(("response.created", {"response": base}))
        events.append(("response.in_progress", {"response": base}))
        output = []
        for index, item in enumerate(turn.items):
            done = self._stream_item(index, item, events)
            output.append(done)
        final = {**base, "status": "completed", "output": output, "usage": usage}
        events.append(("response.completed", {"response": final}))
        return final, events

    def _stream_item(self, index: int, item: Text | Reasoning | Call, events: list[tuple[str, dict]]) -> dict:
        at = {"output_index": index}
        if isinstance(item, Reasoning):
            item_id = self._next_id("rs")
            encrypted = base64.b64encode(zlib.compress(f"{item_id}:{item.tokens}:{item.summary}".encode())).decode()
            with self._lock:
                self._reasoning[encrypted] = item.tokens
            events.append(("response.output_item.added", {**at, "item": {"id": item_id, "type": "reasoning",
                                                                         "summary": []}}))
            for k, part in enumerate(item.summary):
                where = {**at, "item_id": item_id, "summary_index": k}
                events.append(("response.reasoning_summary_part.added",
                               {**where, "part": {"type": "summary_text", "text": ""}}))
                for chunk in _chunks(part):
                    events.append(("response.reasoning_summary_text.delta", {**where, "delta": chunk}))
                events.append(("response.reasoning_summary_text.done", {**where, "text": part}))
                events.append(("response.reasoning_summary_part.done",
                               {**where, "part": {"type": "summary_text", "text": part}}))
            done = {"id": item_id, "type": "reasoning", "encrypted_content": encrypted,
                    "summary": [{"type": "summary_text", "text": p} for p in item.summary]}
        elif isinstance(item, Text):
            item_id = self._next_id("msg")
            where = {**at, "item_id": item_id, "content_index": 0}
            events.append(("response.output_item.added", {**at, "item": {
                "id": item_id, "type": "message", "status": "in_progress", "role": "assistant", "content": []}}))
            events.append(("response.content_part.added", {**where, "part": {
                "type": "output_text", "annotations": [], "logprobs": [], "text": ""}}))
            for chunk in _chunks(item.text):
                events.append(("response.output_text.delta", {**where, "delta": chunk, "logprobs": []}))
            events.append(("response.output_text.done", {**where, "text": item.text, "logprobs": []}))
            part = {"type": "output_text", "annotations": [], "logprobs": [], "text": item.text}
            events.append(("response.content_part.done", {**where, "part": part}))
            done = {"id": item_id, "type": "message", "status": "completed", "role": "assistant",
                    "content": [part]}
        else:
            item_id = self._next_id("ctc" if item.custom else "fc")
            call_id = item.call_id or self._next_id("call")
            where = {**at, "item_id": item_id}
            if item.custom:
                start = {"id": item_id, "type": "custom_tool_call", "status": "in_progress", "call_id": call_id,
                         "name": item.name, "input": ""}
                delta, final_key = "response.custom_tool_call_input", "input"
            else:
                start = {"id": item_id, "type": "function_call", "status": "in_progress", "call_id": call_id,
                         "name": item.name, "arguments": ""}
                delta, final_key = "response.function_call_arguments", "arguments"
            events.append(("response.output_item.added", {**at, "item": start}))
            for chunk in _chunks(item.argument_text):
                events.append((f"{delta}.delta", {**where, "delta": chunk}))
            events.append((f"{delta}.done", {**where, final_key: item.argument_text}))
            done = {**start, "status": "completed", final_key: item.argument_text}
        events.append(("response.output_item.done", {**at, "item": done}))
        return done

    @property
    def log(self) -> list[dict]:
        """Every exchange, JSON-ready, in arrival order (what the lab writes as server.jsonl)."""
        with self._lock:
            return [e.to_json() for e in self.exchanges]


def request_kind(body: dict) -> str | None:
    """What Codex says a request is for (`turn`, `compaction`, ...), from its turn metadata."""
    meta = body.get("client_metadata") or {}
    try:
        return json.loads(meta.get("x-codex-turn-metadata") or "{}").get("request_kind")
    except (ValueError, AttributeError):
        return None


def _chunks(text: str, size: int = 24) -> Iterator[str]:
    for k in range(0, len(text), size):
        yield text[k:k + size]


def _decode_body(raw: bytes, encoding: str) -> Any:
    if encoding not in ("", "identity", "gzip", "deflate"):  # zstd and others: logged as what they are
        return {"undecoded": encoding, "bytes": len(raw)}
    if encoding in ("gzip", "deflate"):
        raw = zlib.decompress(raw, 16 + zlib.MAX_WBITS if encoding == "gzip" else zlib.MAX_WBITS)
    text = raw.decode("utf-8")
    try:
        return json.loads(text) if text else None
    except ValueError:
        return text


def _handler(server: ResponsesServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:  # quiet
            pass

        def _record(self) -> Exchange:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            headers = {k.lower(): v for k, v in self.headers.items() if k.lower() in LOGGED_HEADERS}
            path, _, query = self.path.partition("?")
            exchange = Exchange(self.command, path, query, headers,
                                _decode_body(raw, self.headers.get("content-encoding", "")))
            with server._lock:
                server.exchanges.append(exchange)
            return exchange

        def _json(self, exchange: Exchange, status: int, payload: dict) -> None:
            exchange.status, exchange.response = status, payload
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            exchange = self._record()
            path = self.path.split("?")[0]
            if path.endswith("/models"):
                self._json(exchange, 200, {"object": "list", "data": [{"id": server.model, "object": "model"}]})
            else:
                self._json(exchange, 404, {"error": {"message": f"no route {path}", "type": "invalid_request_error"}})

        def do_POST(self) -> None:
            exchange = self._record()
            path = self.path.split("?")[0]
            body = exchange.body if isinstance(exchange.body, dict) else {}
            if path.endswith("/responses"):
                queue = server._compactions if request_kind(body) == "compaction" else server._queue
                turn = server.next_turn(queue, body)
                if turn is None:
                    self._json(exchange, 500, {"error": {"message": "the script has no turn left for this request",
                                                         "type": "server_error"}})
                    return
                final, events = server.respond(body, turn)
                exchange.response = final
                self._stream(events, turn.delay)
            elif path.endswith("/responses/compact"):
                turn = server.next_turn(server._compactions, body)
                if turn is None:
                    self._json(exchange, 404, {"error": {"message": "no compaction scripted",
                                                         "type": "invalid_request_error"}})
                    return
                final, _ = server.respond(body, turn)
                self._json(exchange, 200, {"id": final["id"], "object": "response.compaction",
                                           "output": final["output"], "usage": final["usage"]})
            else:
                self._json(exchange, 404, {"error": {"message": f"no route {path}", "type": "invalid_request_error"}})

        def _stream(self, events: list[tuple[str, dict]], delay: float) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("connection", "close")
            self.end_headers()
            for seq, (name, data) in enumerate(events):
                payload = json.dumps({"type": name, "sequence_number": seq, **data})
                self.wfile.write(f"event: {name}\ndata: {payload}\n\n".encode())
                self.wfile.flush()
                if delay:
                    time.sleep(delay)
            self.close_connection = True

    return Handler
