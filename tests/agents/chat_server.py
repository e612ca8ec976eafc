"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for driving real agents offline.

    python tests/agents/chat_server.py SCRIPT.json LOG.jsonl     # prints "listening on http://127.0.0.1:PORT"

The script is a JSON list of turns, answered in order, one per POST to `/v1/chat/completions` (or
`/chat/completions`); a turn is `{"text": "..."}`, `{"tool": NAME, "arguments": {...}}` (a tool call the
agent must run; NAME must be among the request's tools or the turn is refused, so a script cannot silently drift
from the agent's real tool set), optionally with `"usage": {"prompt_tokens": N, "cached_tokens": N,
"completion_tokens": N}` to report other figures than the server's own count (how a test pushes an agent past its
compaction threshold), and `"reasoning": "..."` for the model's thinking (`reasoning_content`, as Moonshot's API
sends it). `{"match": TEXT, ...}` turns answer only a request whose text holds TEXT (a compaction
request), out of order, as often as such a request comes. Without usage the server counts one token per 4 characters of the request's JSON messages
and tools, and reports the previous request's prompt as cached, so cache figures are exercised.

Every request and the reply sent are appended to LOG as one JSON line `{"n", "path", "request", "reply"}`: the
ground truth the agent's own transcript is compared with. GET `/v1/models` lists the one model the requests name.
Streaming (`"stream": true`) answers as SSE chunks with a final usage chunk, as the API does.
"""

from __future__ import annotations

import json
import math
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


class Script:
    def __init__(self, turns: list[dict], log: Path) -> None:
        self.turns = [t for t in turns if "match" not in t]
        self.routes = [t for t in turns if "match" in t]
        self.log = log
        self.lock = threading.Lock()
        self.n = 0
        self.last_prompt = 0
        self.model = "scripted"

    def answer(self, path: str, body: dict) -> tuple[int, dict]:
        with self.lock:
            self.n += 1
            self.model = body.get("model") or self.model
            text = json.dumps(body.get("messages", []), ensure_ascii=False)
            turn = next((t for t in self.routes if t["match"] in text), None)
            if turn is None and self.turns:
                turn = self.turns.pop(0)
            status, reply = (500, {"error": {"message": "script exhausted", "type": "server_error"}}) \
                if turn is None else self._reply(turn, body)
            with open(self.log, "a", encoding="utf-8") as f:
                f.write(json.dumps({"n": self.n, "path": path, "request": body, "reply": reply},
                                   ensure_ascii=False) + "\n")
            return status, reply

    def _reply(self, turn: dict, body: dict) -> tuple[int, dict]:
        tools = [t.get("function", {}).get("name") for t in body.get("tools") or [] if isinstance(t, dict)]
        message: dict[str, Any] = {"role": "assistant", "content": None}
        finish = "stop"
        if "tool" in turn:
            if turn["tool"] not in tools:
                return 400, {"error": {"message": f"scripted tool {turn['tool']!r} not offered; tools: {tools}",
                                       "type": "invalid_request_error"}}
            message["tool_calls"] = [{"id": f"call_{self.n:03d}", "type": "function",
                                      "function": {"name": turn["tool"],
                                                   "arguments": json.dumps(turn.get("arguments", {}))}}]
            finish = "tool_calls"
        else:
            message["content"] = turn.get("text", "")
        if "reasoning" in turn:  # the model's thinking, as Moonshot's (and DeepSeek's) API sends it
            message["reasoning_content"] = turn["reasoning"]
        given = turn.get("usage") or {}
        prompt = given.get("prompt_tokens") or math.ceil(
            len(json.dumps([body.get("messages"), body.get("tools")], ensure_ascii=False)) / 4)
        cached = given.get("cached_tokens", min(self.last_prompt, prompt))
        self.last_prompt = prompt
        completion = given.get("completion_tokens") or max(1, math.ceil(len(json.dumps(message)) / 4))
        usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
                 "prompt_tokens_details": {"cached_tokens": cached}}
        return 200, {"id": f"chatcmpl-{self.n:03d}", "object": "chat.completion", "created": int(time.time()),
                     "model": body.get("model") or self.model,
                     "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage}


def chunks(reply: dict) -> list[dict]:
    """The SSE chunks of a chat completion: role, content or tool call deltas, finish, then usage alone."""
    base = {k: reply[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    choice = reply["choices"][0]
    message = choice["message"]
    out = [base | {"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]}]
    if message.get("reasoning_content"):
        out.append(base | {"choices": [{"index": 0, "delta": {"reasoning_content": message["reasoning_content"]},
                                        "finish_reason": None}]})
    if message.get("content"):
        out.append(base | {"choices": [{"index": 0, "delta": {"content": message["content"]},
                                        "finish_reason": None}]})
    for i, call in enumerate(message.get("tool_calls") or []):
        out.append(base | {"choices": [{"index": 0, "delta": {"tool_calls": [dict(call, index=i)]},
                                        "finish_reason": None}]})
    out.append(base | {"choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]})
    out.append(base | {"choices": [], "usage": reply["usage"]})
    return out


class Handler(BaseHTTPRequestHandler):
    script: Script

    def log_message(self, *args: Any) -> None:
        pass

    def _json(self, status: int, obj: dict) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._json(200, {"object": "list", "data": [{"id": self.script.model, "object": "model",
                                                          "owned_by": "scripted"}]})
        else:
            self._json(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            self._json(400, {"error": {"message": "body is not JSON"}})
            return
        if not self.path.split("?")[0].endswith("/chat/completions"):
            self._json(404, {"error": {"message": f"no route {self.path}"}})
            return
        status, reply = self.script.answer(self.path, body)
        if status != 200 or not body.get("stream"):
            self._json(status, reply)
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.end_headers()
        for chunk in chunks(reply):
            self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


def serve(script: list[dict], log: Path) -> ThreadingHTTPServer:
    """Start the server on a free port in a daemon thread; `server.server_address[1]` is the port."""
    handler = type("ScriptedHandler", (Handler,), {"script": Script(script, log)})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


if __name__ == "__main__":
    srv = serve(json.loads(Path(sys.argv[1]).read_text()), Path(sys.argv[2]))
    print(f"listening on http://127.0.0.1:{srv.server_address[1]}", flush=True)
    threading.Event().wait()
