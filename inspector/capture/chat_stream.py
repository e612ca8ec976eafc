"""An OpenAI Chat Completions response rebuilt from its streamed chunks.

Each `data:` is a `chat.completion.chunk`: per choice a `delta` whose `content` (and `refusal`, and the
`reasoning_content` some servers add) is appended, whose `tool_calls` pieces are merged by their `index` (the id and
name come first, the arguments in pieces), and a `finish_reason` at the end; the usage comes in a last chunk when
the request asked for it (`stream_options.include_usage`). `data: [DONE]` ends the stream.
"""

from __future__ import annotations

from typing import Any

from inspector.capture.rebuild import Rebuilder

TEXT_FIELDS = ("content", "refusal", "reasoning_content")


class ChatStream(Rebuilder):
    def __init__(self) -> None:
        super().__init__()
        self.head: dict[str, Any] = {}
        self.choices: dict[int, dict[str, Any]] = {}
        self._text: dict[tuple[int, str], list[str]] = {}
        self._calls: dict[int, dict[int, dict[str, Any]]] = {}
        self._args: dict[tuple[int, int], list[str]] = {}
        self.done = False  # [DONE] arrived

    def feed(self, run: bytes) -> None:
        head, done, tail = run.partition(b"data: [DONE]\n\n")
        if done:
            self.done = True
            self.events += 1
        super().feed(head + tail)

    def apply(self, name: bytes, obj: Any) -> None:
        if not isinstance(obj, dict):
            return
        if "error" in obj:
            self.error = obj["error"]
            return
        for key in ("id", "object", "created", "model", "system_fingerprint", "service_tier"):
            if obj.get(key) is not None:
                self.head.setdefault(key, obj[key])
        if isinstance(obj.get("usage"), dict):
            self.head["usage"] = obj["usage"]
        for choice in obj.get("choices") or ():
            if isinstance(choice, dict):
                self._choice(choice)

    def _choice(self, choice: dict) -> None:
        n = choice.get("index", 0)
        state = self.choices.setdefault(n, {"index": n, "role": "assistant", "finish_reason": None})
        delta = choice.get("delta") or {}
        if delta.get("role"):
            state["role"] = delta["role"]
        for field in TEXT_FIELDS:
            if isinstance(delta.get(field), str):
                self._text.setdefault((n, field), []).append(delta[field])
        for call in delta.get("tool_calls") or ():
            if not isinstance(call, dict):
                continue
            k = call.get("index", 0)
            merged = self._calls.setdefault(n, {}).setdefault(k, {"type": "function", "function": {}})
            if call.get("id"):
                merged["id"] = call["id"]
            function = call.get("function") or {}
            if function.get("name"):
                merged["function"]["name"] = function["name"]
            if isinstance(function.get("arguments"), str):
                self._args.setdefault((n, k), []).append(function["arguments"])
        if choice.get("finish_reason"):
            state["finish_reason"] = choice["finish_reason"]

    def result(self) -> dict[str, Any]:
        choices = []
        for n in sorted(self.choices):
            state = self.choices[n]
            message: dict[str, Any] = {"role": state["role"]}
            for field in TEXT_FIELDS:
                if (n, field) in self._text:
                    message[field] = "".join(self._text[(n, field)])
            message.setdefault("content", None)
            calls = self._calls.get(n)
            if calls:
                message["tool_calls"] = [
                    {**calls[k], "function": {**calls[k]["function"], "arguments": "".join(self._args.get((n, k), []))}}
                    for k in sorted(calls)]
            choices.append({"index": n, "message": message, "finish_reason": state["finish_reason"]})
        return {**self.head, "object": "chat.completion", "choices": choices}

    @property
    def complete(self) -> bool:
        """[DONE] arrived, or every choice gave its finish reason (a server that never sends [DONE] still ended its
        answer)."""
        return self.done or (bool(self.choices) and all(c["finish_reason"] for c in self.choices.values()))
