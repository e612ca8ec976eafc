"""A scripted Gemini API (`generativelanguage` v1beta) on 127.0.0.1, for Gemini CLI run against
`GOOGLE_GEMINI_BASE_URL`.

Routes: `POST /v1beta/models/<model>:streamGenerateContent?alt=sse` (each SSE `data:` a GenerateContentResponse,
the answer's parts split over chunks, `usageMetadata` on the last: Gemini CLI keeps the last chunk's usage),
`:generateContent` (one response: what its compression and other utility calls use) and `:countTokens`. The log
keeps a stream's response as the one GenerateContentResponse its chunks make. A Turn
renders as parts: thinking as `{text, thought: true, thoughtSignature}`, text, tool calls as `functionCall{name,
args}` (no id, as the public API sends them). Usage: `promptTokenCount` (the Turn's input, else the request's
deterministic count), `candidatesTokenCount`, `cachedContentTokenCount`, `thoughtsTokenCount`, `totalTokenCount`.
"""

from __future__ import annotations

import json
import re
from typing import Iterator

from scripted import Answer, ScriptedServer, Turn, count_tokens, no_script

MODEL_CALL = re.compile(r"^/v1(?:beta|alpha)?/models/([^:/]+):(streamGenerateContent|generateContent|countTokens)$")


def is_compression(body: dict) -> bool:
    """A request of Gemini CLI's chat compression: its system instruction asks for a `<state_snapshot>`."""
    return "state_snapshot" in json.dumps(body.get("systemInstruction", ""))


class GeminiServer(ScriptedServer):
    name = "gemini-api"
    LOGGED_HEADERS = ("content-type", "user-agent", "x-goog-api-client")  # never x-goog-api-key

    def handle(self, path: str, query: dict[str, list[str]], body: dict) -> Answer | None:
        m = MODEL_CALL.match(path)
        if m is None:
            return None
        model, method = m.groups()
        if method == "countTokens":
            total = count_tokens(body.get("contents") or body.get("generateContentRequest", {}).get("contents"))
            return Answer(200, json.dumps({"totalTokens": total}).encode())
        turn = self.next_turn(body)
        if turn is None:
            return no_script(self.name)
        parts = self.parts(turn)
        usage = usage_metadata(turn, body)
        whole = response(parts, usage, model, final=True)
        if method == "generateContent":
            return Answer(200, json.dumps(whole).encode())
        return Answer(200, self._stream(parts, usage, model), "text/event-stream", logged=whole)

    def parts(self, turn: Turn) -> list[dict]:
        parts: list[dict] = []
        if turn.thinking:
            parts.append({"text": turn.thinking, "thought": True, "thoughtSignature": "c2lnLW1vY2s="})
        if turn.text:
            parts.append({"text": turn.text})
        for call in turn.calls:
            self.call_id(call)
            parts.append({"functionCall": {"name": call.name, "args": call.args}})
        return parts

    @staticmethod
    def _stream(parts: list[dict], usage: dict, model: str) -> Iterator[bytes]:
        """One chunk per part (a long text in two), usage on the last chunk only."""
        pieces: list[dict] = []
        for part in parts:
            text = part.get("text")
            if isinstance(text, str) and len(text) > 40 and not part.get("thought"):
                half = len(text) // 2
                pieces += [{"text": text[:half]}, {"text": text[half:]}]
            else:
                pieces.append(part)
        for n, piece in enumerate(pieces or [{"text": ""}]):
            final = n == max(0, len(pieces) - 1)
            data = response([piece], usage if final else None, model, final)
            yield b"data: " + json.dumps(data).encode() + b"\r\n\r\n"


def usage_metadata(turn: Turn, body: dict) -> dict:
    prompt = turn.input_tokens if turn.input_tokens is not None else count_tokens(body)
    output = turn.output_tokens if turn.output_tokens is not None else max(1, -(-len(turn.text) // 4))
    thoughts = -(-len(turn.thinking) // 4)
    usage = {"promptTokenCount": prompt, "candidatesTokenCount": output,
             "totalTokenCount": prompt + output + thoughts}
    if turn.cached_tokens:
        usage["cachedContentTokenCount"] = turn.cached_tokens
    if thoughts:
        usage["thoughtsTokenCount"] = thoughts
    return usage


def response(parts: list[dict], usage: dict | None, model: str, final: bool) -> dict:
    candidate: dict = {"content": {"role": "model", "parts": parts}, "index": 0}
    if final:
        candidate["finishReason"] = "STOP"
    data: dict = {"candidates": [candidate], "modelVersion": model}
    if usage is not None:
        data["usageMetadata"] = usage
    return data
