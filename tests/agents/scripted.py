"""The plumbing the lab's model servers share: an HTTP server on 127.0.0.1 that answers an agent's model requests
from a script of turns, and keeps a log of every exchange (what was asked, what usage was returned).

A wire format (Gemini's `streamGenerateContent`, OpenAI chat completions) is a subclass that says which paths are
model calls and renders a `Turn` in that format; the script and the log are the same for all of them, so a test can
compare what an agent recorded with what the server returned, whatever the agent. Answers come in order from the
main queue (`add`), from a route's queue when its predicate picks the request (`add_for`: a compression or title
request told apart by its content), or from a standing answer (`always_for`: side calls that come any number of
times). With nothing queued a model call gets HTTP 500, so an under-scripted run fails
visibly.

The log (`log`, `write_log`) holds each request body with its system prompt and tool schemas moved into `shapes`
records (written once per distinct value): they repeat on every request and are most of its size. Headers are not
logged (they carry the fake key).
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Iterable
from urllib.parse import parse_qs, urlsplit


@dataclass
class Call:
    """A tool call the model makes: `name(args)`; `id` None lets the server number it."""

    name: str
    args: dict
    id: str | None = None


@dataclass
class Turn:
    """One model answer: optional thinking, text and tool calls, and the usage the server reports for it.

    `input_tokens` None: the server's deterministic count of the request (`count_tokens`); `output_tokens` None:
    one token per four characters of the answer. `cached_tokens` is the part of the input reported as cached.
    """

    text: str = ""
    calls: list[Call] = field(default_factory=list)
    thinking: str = ""
    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_tokens: int = 0

    def answer_chars(self) -> int:
        return len(self.text) + len(self.thinking) + sum(len(c.name) + len(json.dumps(c.args)) for c in self.calls)


Script = Turn | Callable[[dict], Turn]


def count_tokens(body: Any) -> int:
    """The servers' deterministic token count of a request: one token per four characters of its JSON body."""
    return math.ceil(len(json.dumps(body, ensure_ascii=False, sort_keys=True)) / 4)


@dataclass
class Answer:
    """What a handled request gets back: a status, a content type and the body (bytes, or chunks to stream)."""

    status: int
    body: bytes | Iterable[bytes]
    content_type: str = "application/json"


SHAPE_KEYS = ("systemInstruction", "tools", "system")  # request fields logged once per distinct value


class ScriptedServer:
    """Subclasses implement `handle(path, query, body)`, returning an Answer or None (404), and call `next_turn`
    and `record` for model calls."""

    name = "scripted"

    def __init__(self) -> None:
        self._queue: deque[Script] = deque()
        self._routes: list[tuple[Callable[[dict], bool], deque[Script]]] = []
        self._standing: list[tuple[Callable[[dict], bool], Script]] = []
        self._lock = threading.Lock()
        self.log: list[dict] = []
        self.calls = 0  # tool calls issued (their ids)
        self._shapes: set[str] = set()
        server = self
        self._httpd = _QuietServer(("127.0.0.1", 0), _handler(server))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), name=self.name, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> ScriptedServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def add(self, *turns: Script) -> ScriptedServer:
        with self._lock:
            self._queue.extend(turns)
        return self

    def add_for(self, predicate: Callable[[dict], bool], *turns: Script) -> ScriptedServer:
        """Answers for the requests `predicate` picks (routes are checked before the main queue, in order)."""
        with self._lock:
            for pred, queue in self._routes:
                if pred is predicate:
                    queue.extend(turns)
                    return self
            self._routes.append((predicate, deque(turns)))
        return self

    def always_for(self, predicate: Callable[[dict], bool], answer: Script) -> ScriptedServer:
        """A standing answer for every request `predicate` picks that no queued route answers (an agent's side
        calls that come any number of times: a next-speaker check, a title)."""
        with self._lock:
            self._standing.append((predicate, answer))
        return self

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue) + sum(len(q) for _, q in self._routes)

    def next_turn(self, body: dict) -> Turn | None:
        """The answer for a model call: a picking route's next queued answer (an exhausted route answers with its
        standing answer, if one picks the request too, else nothing), a standing answer, or the main queue's."""
        with self._lock:
            queue = next((q for pred, q in self._routes if pred(body)), None)
            standing = next((a for pred, a in self._standing if pred(body)), None)
            if queue:
                item: Script | None = queue.popleft()
            elif queue is not None or standing is not None:
                item = standing
            else:
                item = self._queue.popleft() if self._queue else None
        return item(body) if callable(item) else item

    def call_id(self, call: Call) -> str:
        with self._lock:
            self.calls += 1
            return call.id or f"call_{self.calls:03d}"

    def record(self, path: str, body: dict, response: dict) -> None:
        """Log one exchange: the request (shapes moved out) and the response summary the subclass gives."""
        with self._lock:
            request = dict(body)
            for key in SHAPE_KEYS:
                if key in request:
                    value = request[key]
                    digest = hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:16]
                    if digest not in self._shapes:
                        self._shapes.add(digest)
                        self.log.append({"shape": digest, "key": key, "value": value})
                    request[key] = {"$shape": digest}
            n = sum(1 for e in self.log if "request" in e) + 1
            self.log.append({"n": n, "path": path, "request": request, "response": response})

    def exchanges(self) -> list[dict]:
        return [e for e in self.log if "request" in e]

    def write_log(self, path: Path) -> None:
        path.write_text("".join(json.dumps(e, ensure_ascii=False, sort_keys=True) + "\n" for e in self.log))

    def handle(self, path: str, query: dict[str, list[str]], body: dict) -> Answer | None:
        raise NotImplementedError


def read_log(path: Path) -> list[dict]:
    """A server log's exchanges, shapes put back into their requests."""
    shapes: dict[str, Any] = {}
    out = []
    for line in path.read_text().splitlines():
        entry = json.loads(line)
        if "shape" in entry:
            shapes[entry["shape"]] = entry["value"]
            continue
        request = entry.get("request", {})
        for key, value in list(request.items()):
            if isinstance(value, dict) and set(value) == {"$shape"}:
                request[key] = shapes.get(value["$shape"])
        out.append(entry)
    return out


def no_script(name: str) -> Answer:
    return Answer(500, json.dumps({"error": {"code": 500, "message": f"{name}: no scripted answer left",
                                             "status": "INTERNAL"}}).encode())


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], (ConnectionError, BrokenPipeError)):
            super().handle_error(request, client_address)


def _handler(server: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            self._dispatch(b"")

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            self._dispatch(self.rfile.read(length) if length else b"")

        def _dispatch(self, raw: bytes) -> None:
            url = urlsplit(self.path)
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                self._send(Answer(400, b'{"error": {"message": "body is not JSON"}}'))
                return
            answer = server.handle(url.path, parse_qs(url.query), body)
            if answer is None:
                server.log.append({"unhandled": url.path, "method": self.command})
                answer = Answer(404, json.dumps({"error": {"code": 404, "message": f"no route {url.path}"}}).encode())
            self._send(answer)

        def _send(self, answer: Answer) -> None:
            self.send_response(answer.status)
            self.send_header("content-type", answer.content_type)
            if isinstance(answer.body, bytes):
                self.send_header("content-length", str(len(answer.body)))
                self.end_headers()
                self.wfile.write(answer.body)
                return
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            try:
                for chunk in answer.body:
                    self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.close_connection = True

    return Handler
