"""Scripted answers for the mock Messages API: what the server sends back for one request.

Each builder returns a small object the server renders exactly as the real API would: a `Reply` as an SSE stream
(message_start, content_block_start/delta/stop per block, message_delta with usage and stop_reason, message_stop)
or as one JSON message, an `ApiError` as the API's error JSON with its status, a `Drop` as a stream cut off
mid-way. Anything callable may stand in for a response: it receives the recorded request and returns one, so a
test can answer differently depending on what the client sent (a summary request, say).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any, Callable


@dataclass
class Reply:
    """One assistant message. `blocks` are Messages-API content blocks (see `text`, `thinking`, `tool_use`).

    `input_tokens` None: the server's deterministic count of the request (`count_tokens`), split into input,
    cache creation and cache read by its prompt cache when the server keeps one (`prompt_cache=True`); given, the
    three figures are exactly these fields. `output_tokens` None: one token per four characters of output.
    `usage_extra` adds keys to the usage as sent (`service_tier`, `cache_creation{...}`, ...); `context_management`
    goes out as the API reports context editing (in `message_delta`, and in a whole message), e.g.
    `{"applied_edits": [{"type": "clear_tool_uses_20250919", "cleared_tool_uses": 3, ...}]}`; a server with
    `context_editing=True` fills it in itself. `delay` seconds pass between SSE events; when `gate` is given the
    stream pauses after its `gate_after`-th content delta (the first by default) until the gate is set (for
    cancellation tests). A thinking block streams as thinking deltas then one `signature_delta`, as the API does.
    """

    blocks: list[dict]
    stop_reason: str = "end_turn"
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    model: str | None = None
    usage_extra: dict = field(default_factory=dict)
    context_management: dict | None = None
    delay: float = 0.0
    gate: threading.Event | None = None
    gate_after: int = 1


@dataclass
class ApiError:
    """An HTTP error with the API's error body `{"type": "error", "error": {"type", "message"}}`.

    `retry_after_ms` goes out as the `retry-after-ms` header, which the SDK obeys, so retry tests stay fast.
    """

    status: int
    type: str
    message: str
    retry_after_ms: int | None = 1
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Drop:
    """A streamed `reply` cut off after `after_events` SSE events: the connection closes without ending the chunked
    body, as when a network link drops. `error_event` instead sends an SSE `error` event (the API's mid-stream
    overload) and ends the stream properly."""

    reply: Reply
    after_events: int = 3
    error_event: dict | None = None


Response = Reply | ApiError | Drop
Responder = Callable[[Any], Response]


def text_block(text: str) -> dict:
    return {"type": "text", "text": text}


def thinking_block(thinking: str, signature: str = "sig-mock") -> dict:
    return {"type": "thinking", "thinking": thinking, "signature": signature}


def tool_use_block(name: str, input: dict, id: str | None = None) -> dict:
    return {"type": "tool_use", "id": id or f"toolu_mock_{name}_{_next_id()}", "name": name, "input": input}


def text(message: str, **kw: Any) -> Reply:
    """A plain text answer that ends the turn."""
    return Reply([text_block(message)], **kw)


def tool_calls(*calls: tuple[str, dict], preamble: str | None = None, **kw: Any) -> Reply:
    """An answer calling tools: `tool_calls(("read_file", {"path": "a"}), ("bash", {"command": "ls"}))`."""
    blocks = [text_block(preamble)] if preamble else []
    blocks += [tool_use_block(name, args) for name, args in calls]
    return Reply(blocks, stop_reason="tool_use", **kw)


def overloaded(message: str = "Overloaded") -> ApiError:
    return ApiError(529, "overloaded_error", message)


def rate_limited(message: str = "Rate limited") -> ApiError:
    return ApiError(429, "rate_limit_error", message)


def invalid_request(message: str) -> ApiError:
    return ApiError(400, "invalid_request_error", message, retry_after_ms=None)


def dropped(reply: Reply | None = None, after_events: int = 3) -> Drop:
    return Drop(reply or text("This answer never arrives whole " * 4), after_events=after_events)


def overloaded_mid_stream(reply: Reply | None = None, after_events: int = 3) -> Drop:
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    return Drop(reply or text("Half an answer " * 4), after_events=after_events, error_event=error)


_counter = 0
_lock = threading.Lock()


def _next_id() -> int:
    global _counter
    with _lock:
        _counter += 1
        return _counter


def chunks(s: str, size: int) -> list[str]:
    return [s[i:i + size] for i in range(0, len(s), size)] or [""]


Usage = tuple[int, int, int]  # (input, cache creation, cache read) of one request


def sse_events(reply: Reply, message_id: str, model: str, usage_in: Usage) -> list[tuple[str, dict]]:
    """The (event name, data) pairs the API streams for `reply`, in order."""
    usage = {**_usage(reply, usage_in), "output_tokens": 1}
    events: list[tuple[str, dict]] = [("message_start", {"type": "message_start", "message": {
        "id": message_id, "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": usage}})]
    events.append(("ping", {"type": "ping"}))
    for index, block in enumerate(reply.blocks):
        kind = block["type"]
        if kind == "text":
            start, deltas = {"type": "text", "text": ""}, [
                {"type": "text_delta", "text": c} for c in chunks(block["text"], 16)]
        elif kind == "thinking":
            start = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [{"type": "thinking_delta", "thinking": c} for c in chunks(block["thinking"], 16)]
            deltas.append({"type": "signature_delta", "signature": block.get("signature", "sig-mock")})
        elif kind == "tool_use":
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": c}
                      for c in chunks(json.dumps(block["input"]), 12)]
        else:  # redacted_thinking and anything else arrive whole in the start event
            start, deltas = block, []
        events.append(("content_block_start", {"type": "content_block_start", "index": index,
                                               "content_block": start}))
        events += [("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d})
                   for d in deltas]
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    delta = {"type": "message_delta", "delta": {"stop_reason": reply.stop_reason, "stop_sequence": None},
             "usage": {**_usage(reply, usage_in), "output_tokens": output_tokens(reply)}}
    if reply.context_management is not None:
        delta["context_management"] = reply.context_management
    events.append(("message_delta", delta))
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def message_json(reply: Reply, message_id: str, model: str, usage_in: Usage) -> dict:
    """The non-streaming response body for `reply` (also what the server's log records of a streamed one)."""
    body = {
        "id": message_id, "type": "message", "role": "assistant", "model": model, "content": reply.blocks,
        "stop_reason": reply.stop_reason, "stop_sequence": None,
        "usage": {**_usage(reply, usage_in), "output_tokens": output_tokens(reply)},
    }
    if reply.context_management is not None:
        body["context_management"] = reply.context_management
    return body


def _usage(reply: Reply, usage_in: Usage) -> dict:
    fresh, creation, read = usage_in
    return {"input_tokens": fresh, "cache_creation_input_tokens": creation, "cache_read_input_tokens": read,
            **reply.usage_extra}


def output_tokens(reply: Reply) -> int:
    if reply.output_tokens is not None:
        return reply.output_tokens
    chars = sum(len(json.dumps(b, ensure_ascii=False)) for b in reply.blocks)
    return max(1, -(-chars // 4))
