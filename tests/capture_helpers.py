"""For the capture tests: the proxy running in a thread of its own, and a small local OpenAI upstream.

`RunningProxy(path, upstreams)` is a started `BackgroundCapture` (the proxy on its own event loop, so the synchronous
SDK clients of a test talk to it as to any server) that reads back its records; `stop()` ends it as the command
does and closes the file. `OpenAIUpstream` answers
`POST /v1/responses` and `POST /v1/chat/completions` with scripted answers, streamed as the real APIs stream them
(the Responses events Codex reads, FORMATS.md section 8; Chat chunks with `[DONE]`), or whole; it records what it
received.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from inspector.capture.background import BackgroundCapture


class RunningProxy(BackgroundCapture):
    def __init__(self, path: Path, upstreams: dict[str, str]) -> None:
        super().__init__(path, upstreams)
        self.start()

    def records(self, wait_for: int = 0) -> list[dict]:
        """The exchange records written so far (the header line left out), after waiting up to 10 s for there to
        be `wait_for` of them (a client can read an answer's last byte before the proxy has written its record)."""
        deadline = time.monotonic() + 10
        while True:
            text = self.path.read_text()
            complete = text[:text.rfind("\n") + 1]  # a line still being written is read next time round
            lines = [json.loads(x) for x in complete.splitlines() if x.strip()]
            found = [x for x in lines if "seq" in x]
            if len(found) >= wait_for or time.monotonic() > deadline:
                return found
            time.sleep(0.01)

    def __enter__(self) -> RunningProxy:
        return self


def sse(event: str | None, data: Any) -> bytes:
    head = f"event: {event}\n" if event else ""
    body = data if isinstance(data, str) else json.dumps(data)
    return f"{head}data: {body}\n\n".encode()


def responses_events(response_id: str, text: str, call: tuple[str, str, str] | None, usage: dict) -> list[bytes]:
    """The SSE events of a Responses answer: text in pieces, then an optional function call (call_id, name,
    arguments JSON) streamed as argument deltas, then `response.completed` with the whole response."""
    message = {"type": "message", "id": f"msg_{response_id}", "role": "assistant", "status": "completed",
               "content": [{"type": "output_text", "text": text, "annotations": []}]}
    out = [sse("response.created", {"type": "response.created",
                                    "response": {"id": response_id, "object": "response", "status": "in_progress",
                                                 "model": "gpt-test", "output": []}}),
           sse("response.output_item.added", {"type": "response.output_item.added", "output_index": 0,
                                              "item": {**message, "status": "in_progress", "content": []}}),
           sse("response.content_part.added", {"type": "response.content_part.added", "output_index": 0,
                                               "content_index": 0, "part": {"type": "output_text", "text": ""}})]
    out += [sse("response.output_text.delta", {"type": "response.output_text.delta", "output_index": 0,
                                               "content_index": 0, "delta": text[i:i + 7]})
            for i in range(0, len(text), 7)]
    out.append(sse("response.output_item.done", {"type": "response.output_item.done", "output_index": 0,
                                                 "item": message}))
    output = [message]
    if call is not None:
        call_id, name, arguments = call
        item = {"type": "function_call", "id": f"fc_{response_id}", "call_id": call_id, "name": name, "arguments": arguments,
                "status": "completed"}
        out.append(sse("response.output_item.added", {"type": "response.output_item.added", "output_index": 1,
                                                      "item": {**item, "arguments": "", "status": "in_progress"}}))
        out += [sse("response.function_call_arguments.delta", {
            "type": "response.function_call_arguments.delta", "output_index": 1, "delta": arguments[i:i + 5]})
            for i in range(0, len(arguments), 5)]
        out.append(sse("response.output_item.done", {"type": "response.output_item.done", "output_index": 1,
                                                     "item": item}))
        output.append(item)
    out.append(sse("response.completed", {"type": "response.completed", "response": {
        "id": response_id, "object": "response", "status": "completed", "model": "gpt-test", "output": output,
        "usage": usage}}))
    return out


def chat_chunks(text: str, call: tuple[str, str, str] | None, usage: dict) -> list[bytes]:
    """Chat Completions chunks: the role, text in pieces, an optional tool call in pieces, the finish reason, the
    usage chunk (as `stream_options.include_usage` asks), then `[DONE]`."""
    base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-test"}

    def chunk(delta: dict, finish: str | None = None) -> bytes:
        return sse(None, {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    out = [chunk({"role": "assistant", "content": ""})]
    out += [chunk({"content": text[i:i + 6]}) for i in range(0, len(text), 6)]
    if call is not None:
        call_id, name, arguments = call
        out.append(chunk({"tool_calls": [{"index": 0, "id": call_id, "type": "function",
                                          "function": {"name": name, "arguments": ""}}]}))
        out += [chunk({"tool_calls": [{"index": 0, "function": {"arguments": arguments[i:i + 4]}}]})
                for i in range(0, len(arguments), 4)]
    out.append(chunk({}, "tool_calls" if call else "stop"))
    out.append(sse(None, {**base, "choices": [], "usage": usage}))
    out.append(sse(None, "[DONE]"))
    return out


class OpenAIUpstream:
    """`add(text, call=None, usage=...)` queues the next answer; requests are kept in `received` (path, headers,
    body)."""

    def __init__(self) -> None:
        self.answers: deque[tuple[str, tuple[str, str, str] | None, dict]] = deque()
        self.received: list[tuple[str, dict[str, str], dict]] = []
        self.close_after: float | None = None  # seconds after a whole answer to close its connection, if set
        self._ids = 0
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
                path = self.path.split("?", 1)[0]
                upstream.received.append((path, {k.lower(): v for k, v in self.headers.items()}, body))
                if not upstream.answers:
                    self._send(500, "application/json", b'{"error": {"message": "no answer scripted"}}')
                    return
                text, call, usage = upstream.answers.popleft()
                upstream._ids += 1
                if path.endswith("/responses"):
                    events = responses_events(f"resp_{upstream._ids}", text, call, usage)
                    whole = json.loads(events[-1].split(b"data: ", 1)[1])["response"]
                elif path.endswith("/chat/completions"):
                    events = chat_chunks(text, call, usage)
                    message: dict[str, Any] = {"role": "assistant", "content": text}
                    if call:
                        message["tool_calls"] = [{"id": call[0], "type": "function",
                                                  "function": {"name": call[1], "arguments": call[2]}}]
                    whole = {"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-test", "usage": usage,
                             "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}
                else:
                    self._send(404, "application/json", b'{"error": {"message": "no such route"}}')
                    return
                if not body.get("stream"):
                    self._send(200, "application/json", json.dumps(whole).encode())
                    if upstream.close_after:  # kept alive, then closed with the next request unread
                        time.sleep(upstream.close_after)
                        self.close_connection = True
                    return
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                for event in events:
                    self.wfile.write(f"{len(event):x}\r\n".encode() + event + b"\r\n")
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
                self.close_connection = True

            def _send(self, status: int, kind: str, data: bytes) -> None:
                self.send_response(status)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def add(self, text: str, call: tuple[str, str, str] | None = None, usage: dict | None = None) -> None:
        self.answers.append((text, call, usage or {}))

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
