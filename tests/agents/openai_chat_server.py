"""A scripted OpenAI-compatible chat completions API on 127.0.0.1, for agents that speak it (Qwen Code with
`OPENAI_BASE_URL`).

Route: `POST /v1/chat/completions` (also without `/v1`): streamed as SSE `chat.completion.chunk`s when the request
asks (`stream: true`), else one `chat.completion`. A Turn renders as `reasoning_content` (thinking, as Qwen and
DeepSeek models stream it), `content` in two pieces, and `tool_calls` (id, function name, arguments streamed in two
pieces); the finish reason is `tool_calls` or `stop`. Usage `{prompt_tokens, completion_tokens, total_tokens,
prompt_tokens_details.cached_tokens}` goes in a last chunk with no choices (what `stream_options.include_usage`
asks for; sent always, as several compatible servers do) or in the response. `GET /v1/models` lists the model.
The log keeps a stream's response as the one `chat.completion` its chunks make.
"""

from __future__ import annotations

import json
import time
from typing import Iterator

from scripted import Answer, ScriptedServer, Turn, count_tokens, no_script

CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")


class OpenAIChatServer(ScriptedServer):
    name = "openai-chat-api"
    LOGGED_HEADERS = ("content-type", "user-agent", "x-stainless-lang", "x-stainless-package-version",
                      "x-stainless-runtime", "x-stainless-retry-count")  # never authorization

    def handle(self, path: str, query: dict[str, list[str]], body: dict) -> Answer | None:
        if path in ("/v1/models", "/models"):
            return Answer(200, json.dumps({"object": "list", "data": [
                {"id": "qwen3-coder-plus", "object": "model", "owned_by": "lab"}]}).encode())
        if path not in CHAT_PATHS:
            return None
        turn = self.next_turn(body)
        if turn is None:
            return no_script(self.name)
        model = body.get("model") or "mock-model"
        calls = [{"id": self.call_id(c), "type": "function",
                  "function": {"name": c.name, "arguments": json.dumps(c.args)}} for c in turn.calls]
        usage = chat_usage(turn, body)
        message = {"role": "assistant", "content": turn.text or None}
        if turn.thinking:
            message["reasoning_content"] = turn.thinking
        if calls:
            message["tool_calls"] = calls
        finish = "tool_calls" if calls else "stop"
        rid = f"chatcmpl-lab-{len(self.exchanges('chat/completions')):04d}"
        whole = {"id": rid, "object": "chat.completion", "created": int(time.time()), "model": model,
                 "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage}
        if not body.get("stream"):
            return Answer(200, json.dumps(whole).encode())
        return Answer(200, _stream(rid, model, turn, calls, finish, usage), "text/event-stream", logged=whole)


def chat_usage(turn: Turn, body: dict) -> dict:
    prompt = turn.input_tokens if turn.input_tokens is not None else count_tokens(body)
    output = turn.output_tokens if turn.output_tokens is not None else max(1, -(-turn.answer_chars() // 4))
    usage = {"prompt_tokens": prompt, "completion_tokens": output, "total_tokens": prompt + output}
    if turn.cached_tokens:
        usage["prompt_tokens_details"] = {"cached_tokens": turn.cached_tokens}
    return usage


def _stream(rid: str, model: str, turn: Turn, calls: list[dict], finish: str, usage: dict) -> Iterator[bytes]:
    created = int(time.time())

    def chunk(delta: dict | None, finish_reason: str | None = None, extra: dict | None = None) -> bytes:
        data: dict = {"id": rid, "object": "chat.completion.chunk", "created": created, "model": model,
                      "choices": [] if delta is None else [{"index": 0, "delta": delta,
                                                            "finish_reason": finish_reason}]}
        data.update(extra or {})
        return b"data: " + json.dumps(data).encode() + b"\n\n"

    yield chunk({"role": "assistant", "content": ""})
    if turn.thinking:
        yield chunk({"reasoning_content": turn.thinking})
    if turn.text:
        half = len(turn.text) // 2
        yield chunk({"content": turn.text[:half]})
        yield chunk({"content": turn.text[half:]})
    for n, call in enumerate(calls):
        args = call["function"]["arguments"]
        half = len(args) // 2
        yield chunk({"tool_calls": [{"index": n, "id": call["id"], "type": "function",
                                     "function": {"name": call["function"]["name"], "arguments": args[:half]}}]})
        yield chunk({"tool_calls": [{"index": n, "function": {"arguments": args[half:]}}]})
    yield chunk({}, finish)
    yield chunk(None, extra={"usage": usage})
    yield b"data: [DONE]\n\n"
