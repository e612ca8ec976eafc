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

from inspector.capture.rebuild import Rebuilder

# The field of each delta type that carries a piece of its block's text (signature and citation deltas do not).
DELTA_FIELDS = {"text_delta": "text", "thinking_delta": "thinking", "input_json_delta": "partial_json"}


class MessagesStream(Rebuilder):
    def __init__(self) -> None:
        super().__init__()
        self.message: dict[str, Any] = {"type": "message", "role": "assistant", "content": []}
        self.blocks: dict[int, dict[str, Any]] = {}
        self._parts: dict[int, list[str]] = {}  # text / thinking / tool-input pieces of each open block

    def apply_all(self, parsed: list[Any], names: list[bytes] | None) -> None:
        """Text, thinking and tool-input deltas (nearly every event) are taken in line, by subscripts: anything else,
        or a delta not of that shape, goes through `apply`."""
        parts_of, fields = self._parts, DELTA_FIELDS
        for n, obj in enumerate(parsed):
            try:
                if obj["type"] == "content_block_delta":
                    delta = obj["delta"]
                    piece = delta[fields[delta["type"]]]
                    if piece.__class__ is str:
                        parts_of[obj["index"]].append(piece)
                        continue
            except (KeyError, TypeError, IndexError):
                pass
            try:
                self.apply(names[n] if names else b"", obj)
            except (TypeError, AttributeError, KeyError, ValueError) as exc:
                self.skipped(exc)

    def apply(self, name: bytes, obj: Any) -> None:
        if type(obj) is not dict:
            return
        kind = obj.get("type") or name.decode("utf-8", "replace")
        if kind == "content_block_delta":
            index, delta = obj.get("index"), obj.get("delta")
            if index not in self._parts or type(delta) is not dict:
                return  # a delta for a block that never started (or already stopped): nothing to add it to
            piece = delta.get(DELTA_FIELDS.get(delta.get("type"), ""))
            if isinstance(piece, str):
                self._parts[index].append(piece)
            elif delta.get("type") == "signature_delta":
                block = self.blocks[index]
                block["signature"] = block.get("signature", "") + delta.get("signature", "")
            elif delta.get("type") == "citations_delta":
                self.blocks[index].setdefault("citations", []).append(delta.get("citation"))
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
