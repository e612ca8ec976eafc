"""An OpenAI Responses response rebuilt from its streamed events.

The terminal event (`response.completed`, `response.incomplete`, `response.failed`) carries the whole response with
its output and usage, and is taken as it is. Until then, and for a stream cut short, the output is rebuilt from the
items: `response.output_item.added` opens an item at its `output_index`, text and argument deltas
(`response.output_text.delta`, `response.refusal.delta`, `response.function_call_arguments.delta`,
`response.reasoning_summary_text.delta`, custom tool input) grow it, and `response.output_item.done` replaces it with
the finished item. A terminal response whose output is empty (some servers send only the usage) gets the items.
"""

from __future__ import annotations

from typing import Any

from inspector.capture.rebuild import Rebuilder

TERMINAL = {"response.completed": True, "response.incomplete": True, "response.failed": False}
TEXT_DELTAS = {"response.output_text.delta": "output_text", "response.refusal.delta": "refusal"}


class ResponsesStream(Rebuilder):
    def __init__(self) -> None:
        super().__init__()
        self.response: dict[str, Any] = {"object": "response", "output": []}
        self.items: dict[int, dict[str, Any]] = {}
        self._text: dict[tuple[int, int, str], list[str]] = {}  # (output, part, kind) -> text pieces
        self._done: set[int] = set()  # items whose `.done` event arrived: they are whole

    def apply(self, name: bytes, obj: Any) -> None:
        if not isinstance(obj, dict):
            return
        kind = obj.get("type") or name.decode("utf-8", "replace")
        index = obj.get("output_index")
        if kind in TEXT_DELTAS or kind == "response.function_call_arguments.delta" or kind in (
                "response.reasoning_summary_text.delta", "response.custom_tool_call_input.delta"):
            key = (index, obj.get("content_index", obj.get("summary_index", 0)), kind)
            self._text.setdefault(key, []).append(obj.get("delta", ""))  # type: ignore[arg-type]
        elif kind == "response.output_item.added" and isinstance(obj.get("item"), dict):
            self.items[index] = dict(obj["item"])  # type: ignore[index]
        elif kind == "response.output_item.done" and isinstance(obj.get("item"), dict):
            self.items[index] = obj["item"]  # type: ignore[index]
            self._done.add(index)  # type: ignore[arg-type]
        elif kind in TERMINAL or kind in ("response.created", "response.in_progress"):
            if isinstance(obj.get("response"), dict):
                self.response = obj["response"]
            if kind in TERMINAL:
                self.complete = TERMINAL[kind]
                if kind == "response.failed":
                    self.error = self.response.get("error") or "response.failed"
        elif kind == "error":
            self.error = obj.get("error") or {k: v for k, v in obj.items() if k != "type"}

    def result(self) -> dict[str, Any]:
        """The response: the terminal one as sent, or the one so far with the output rebuilt from the items."""
        if not self.response.get("output") and self.items:
            self.response = {**self.response, "output": [self._item(i) for i in sorted(self.items)]}
        return self.response

    def _item(self, index: int) -> dict[str, Any]:
        item = self.items[index]
        if index in self._done:
            return item
        item = dict(item)
        for (i, part, kind), pieces in sorted(self._text.items(), key=lambda kv: (kv[0][1], kv[0][2])):
            if i != index:
                continue
            text = "".join(pieces)
            if kind == "response.function_call_arguments.delta":
                item["arguments"] = item.get("arguments", "") + text
            elif kind == "response.custom_tool_call_input.delta":
                item["input"] = item.get("input", "") + text
            elif kind == "response.reasoning_summary_text.delta":
                summary = item.setdefault("summary", [])
                summary.append({"type": "summary_text", "text": text})
            else:
                content = item.setdefault("content", [])
                content.append({"type": TEXT_DELTAS[kind], "text": text})
        return item
