"""The plumbing the lab's non-Anthropic model servers share: an HTTP server on 127.0.0.1 that answers an agent's
model requests from a script of turns and logs every exchange as tests/mock_api does (lab.py's server log).

A wire format (Gemini's `streamGenerateContent`, OpenAI chat completions) is a subclass that says which paths are
model calls and renders a `Turn` in that format; the script is the same for all of them. Answers come in order from
the main queue (`add`), from a route's queue when its predicate picks the request (`add_for`: a compression or
title request told apart by its content), or from a standing answer (`always_for`: side calls that come any number
of times). With nothing queued a model call gets HTTP 500, so an under-scripted run fails visibly.

`log` holds every exchange, JSON-ready, in arrival order: `method`, `path`, `query`, the request headers of the
subclass's `LOGGED_HEADERS` only (never a key), the `body` as received, and the `response` (`status`, `body`: for a
stream the whole response it assembles to, usage included).
"""

from __future__ import annotations

import json
import math
import sys
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
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


SHELL_PROMPT = "How many lines are in the files under data/?"


def shell_turns(scratch: Any) -> list[Turn]:
    """The shell scenario of the Gemini CLI family (Gemini CLI and its fork Qwen Code share `run_shell_command`): two
    files written into the scratch directory, one `wc -l` call, the answer to SHELL_PROMPT."""
    scratch.write("data/a.txt", "one\n")
    scratch.write("data/b.txt", "two\nthree\n")
    return [Turn("", [Call("run_shell_command", {"command": "wc -l data/a.txt data/b.txt",
                                                 "description": "Count lines"})]),
            Turn("a.txt has 1 line and b.txt has 2: 3 in all.")]


def count_tokens(body: Any) -> int:
    """The servers' deterministic token count of a request: one token per four characters of its JSON body."""
    return math.ceil(len(json.dumps(body, ensure_ascii=False, sort_keys=True)) / 4)


@dataclass
class Answer:
    """What a handled request gets back: a status, a content type and the body (bytes, or chunks to stream);
    `logged` is what the log keeps of it (None: the body, parsed)."""

    status: int
    body: bytes | Iterable[bytes]
    content_type: str = "application/json"
    logged: Any = None


class ScriptedServer:
    """Subclasses implement `handle(path, query, body)`, returning an Answer or None (404), and call `next_turn`
    for model calls."""

    name = "scripted"
    LOGGED_HEADERS: tuple[str, ...] = ("content-type", "user-agent")

    def __init__(self) -> None:
        self._queue: deque[Script] = deque()
        self._routes: list[tuple[Callable[[dict], bool], deque[Script]]] = []
        self._standing: list[tuple[Callable[[dict], bool], Script]] = []
        self._lock = threading.Lock()
        self.log: list[dict] = []
        self.calls = 0  # tool calls issued (their ids)
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

    def exchanges(self, path_part: str = "") -> list[dict]:
        """The logged exchanges whose path contains `path_part`."""
        return [e for e in self.log if path_part in e["path"]]

    def handle(self, path: str, query: dict[str, list[str]], body: dict) -> Answer | None:
        """The answer to one request (None: no such route, 404). `Answer.logged` is the response body the log
        keeps (default: the body sent, parsed)."""
        raise NotImplementedError


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
            entry: dict = {"method": self.command, "path": url.path, "query": url.query,
                           "headers": {k.lower(): v for k, v in self.headers.items()
                                       if k.lower() in server.LOGGED_HEADERS}, "body": None, "response": None}
            with server._lock:
                server.log.append(entry)
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                entry["body"] = raw.decode("utf-8", "replace")
                self._send(Answer(400, b'{"error": {"message": "body is not JSON"}}'), entry)
                return
            entry["body"] = body if raw else None
            answer = server.handle(url.path, parse_qs(url.query), body)
            if answer is None:
                answer = Answer(404, json.dumps({"error": {"code": 404, "message": f"no route {url.path}"}}).encode())
            self._send(answer, entry)

        def _send(self, answer: Answer, entry: dict) -> None:
            logged = answer.logged
            if logged is None and isinstance(answer.body, bytes):
                try:
                    logged = json.loads(answer.body)
                except ValueError:
                    logged = answer.body.decode("utf-8", "replace")
            entry["response"] = {"status": answer.status, "body": logged}
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
