"""An Anthropic Messages response rebuilt from its streamed events: the message the API would have returned whole.

`message_start` gives the message (id, model, the first usage); each `content_block_start` opens a block at its
index, its deltas add text (`text_delta`), thinking and its signature (`thinking_delta`, `signature_delta`), tool
input as JSON pieces (`input_json_delta`, parsed when the block stops) or citations; `message_delta` gives the stop
reason and the final usage (its keys replace the start's); `message_stop` ends it; an `error` event (an overload
mid-stream) is kept. A stream cut short still yields what arrived, each open block as far as it got.
"""

from __future__ import annotations

from typing import Any

import orjson


class MessagesStream:
    def __init__(self) -> None:
        self.message: dict[str, Any] = {"type": "message", "role": "assistant", "content": []}
        self.blocks: dict[int, dict[str, Any]] = {}
        self._parts: dict[int, list[str]] = {}  # text / thinking / tool-input pieces of each open block
        self.complete = False  # message_stop arrived
        self.error: Any = None
        self.events = 0

    def event(self, name: str, data: bytes) -> None:
        self.events += 1
        obj = orjson.loads(data)
        if not isinstance(obj, dict):
            return
        kind = obj.get("type") or name
        if kind == "content_block_delta":
            self._delta(obj.get("index"), obj.get("delta") or {})
        elif kind == "content_block_start":
            block = dict(obj.get("content_block") or {})
            index = obj.get("index", len(self.blocks))
            self.blocks[index] = block
            self._parts[index] = []
        elif kind == "content_block_stop":
            self._close(obj.get("index"))
        elif kind == "message_start":
            start = obj.get("message") or {}
            self.message.update({k: v for k, v in start.items() if k != "content"})
        elif kind == "message_delta":
            delta = obj.get("delta") or {}
            self.message.update({k: v for k, v in delta.items() if k in ("stop_reason", "stop_sequence")})
            usage = obj.get("usage")
            if isinstance(usage, dict):
                self.message["usage"] = {**(self.message.get("usage") or {}), **usage}
        elif kind == "message_stop":
            self.complete = True
        elif kind == "error":
            self.error = obj.get("error", obj)

    def _delta(self, index: Any, delta: dict) -> None:
        block = self.blocks.get(index)
        if block is None:
            return  # a delta for a block that never started: nothing to add it to
        kind = delta.get("type")
        if kind == "text_delta":
            self._parts[index].append(delta.get("text", ""))
        elif kind == "thinking_delta":
            self._parts[index].append(delta.get("thinking", ""))
        elif kind == "input_json_delta":
            self._parts[index].append(delta.get("partial_json", ""))
        elif kind == "signature_delta":
            block["signature"] = block.get("signature", "") + delta.get("signature", "")
        elif kind == "citations_delta":
            block.setdefault("citations", []).append(delta.get("citation"))

    def _close(self, index: Any) -> None:
        block, parts = self.blocks.get(index), self._parts.pop(index, None)
        if block is None or parts is None:
            return
        text = "".join(parts)
        if block.get("type") == "text":
            block["text"] = block.get("text", "") + text
        elif block.get("type") == "thinking":
            block["thinking"] = block.get("thinking", "") + text
        elif "input" in block and parts:  # tool_use, server_tool_use, mcp_tool_use: the input came as JSON text
            try:
                block["input"] = orjson.loads(text) if text.strip() else {}
            except orjson.JSONDecodeError:
                block["input"] = text  # cut short or malformed: keep what the model produced

    def result(self) -> dict[str, Any]:
        """The message as far as it arrived (blocks still open closed as they stand)."""
        for index in list(self._parts):
            self._close(index)
        self.message["content"] = [self.blocks[i] for i in sorted(self.blocks, key=_order)]
        return self.message


def _order(index: Any) -> tuple[int, str]:
    return (index, "") if isinstance(index, int) else (1 << 30, str(index))
