"""Kimi CLI sessions: `~/.kimi/sessions/<md5 of the work dir>/<session uuid>/context.jsonl` (or `$KIMI_SHARE_DIR/...`).

Each line is a kosong `Message` (`role` system/user/assistant/tool, `content` a string or parts `text`, `think`,
`image_url`, ..., `tool_calls`, `tool_call_id`) or a record whose role starts with `_`: `_system_prompt` (the system
prompt, first line), `_checkpoint {id}` (a turn/step marker for undo) and `_usage {token_count}`. Kimi writes
`_usage` twice per model call: the request's input tokens right after the call, before the reply is appended, and
input + output after it (`soul/kimisoul.py`: `update_token_count(usage.input)` then `(usage.total)`), so the pair
around an assistant message is one Request. After a compaction Kimi also writes an estimate (`_usage` with no reply
next to it), which is not a measurement and is skipped.

Compaction rotates the file to `context_N.jsonl` and starts anew: system prompt, checkpoint 0, then a user message
opening "<system>Previous context has been compacted. Here is the compaction output:</system>" with the summary,
then the two most recent user/assistant messages kept. That message is the boundary here; the history before it
stays in the rotated file (listed in the session's warnings, not merged: a rotation is also how undo and /clear
start over).

`wire.jsonl` beside the file (the UI event log, every step's `StatusUpdate`) gives what `_usage` lacks: the split of
each call's input into uncached / cache read / cache creation, the response id, and the window
(`max_context_tokens`). A status is matched to the request whose input it sums to, in order.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from inspector.core.formats.blocks import as_int, opt_int, opt_str
from inspector.core.formats.jsonl import ObjectLoader, Progress, read_jsonl
from inspector.core.formats.neutral import message_from_dict
from inspector.core.model import Compaction, LoadWarning, Request, Session

COMPACTED = "<system>Previous context has been compacted."
SPECIAL = frozenset({"_system_prompt", "_checkpoint", "_usage"})
ROLES = frozenset({"user", "assistant", "tool", "system"})


class KimiLoader(ObjectLoader):
    def __init__(self, source: str) -> None:
        self.session = Session(source=source, format="kimi")
        self._usage: tuple[int, int] | None = None  # (token_count, line) of the last `_usage` with no message since
        self._pending: Request | None = None  # the request of the last assistant message, awaiting its total

    def take(self, line_no: int, offset: int, obj: dict) -> None:
        role = opt_str(obj.get("role"))
        if role == "_system_prompt":
            if isinstance(obj.get("content"), str):
                self.session.system = obj["content"]
            else:
                self.warn(line_no, "system prompt record without text content, skipped")
        elif role == "_usage":
            count = opt_int(obj.get("token_count"))
            if count is None:
                self.warn(line_no, "usage record without an integer token_count, skipped")
                return
            if self._pending is not None:  # input + output after the reply: the reply's output
                self._pending.output_tokens = max(0, count - self._pending.measured_context)
                self._pending = None
            self._usage = (count, line_no)
        elif role == "_checkpoint":
            if opt_int(obj.get("id")) is None:
                self.warn(line_no, "checkpoint record without an integer id, skipped")
        elif role in ROLES:
            self._message(line_no, offset, obj)
        else:
            self.warn(line_no, f"record with unknown role {str(role)[:40]!r} skipped")

    def _message(self, line_no: int, offset: int, obj: dict) -> None:
        s = self.session
        message = message_from_dict(_kosong(obj))
        message.lines, message.offset = (line_no,), offset
        if message.role == "user" and message.kind == "prompt":
            first = message.blocks[0].text if message.blocks and message.blocks[0].type == "text" else ""
            if first.startswith(COMPACTED):
                message.kind = "compact_summary"
                s.compactions.append(Compaction("compact", len(s.messages), line=line_no))
            elif first.lstrip().startswith(("<system>", "<system-reminder>")):
                message.kind = "meta"
        s.messages.append(message)
        self._pending = None
        usage, self._usage = self._usage, None
        if message.role == "assistant" and usage is not None:
            index = len(s.messages) - 1
            request = Request(f"kimi-line-{line_no}", None, usage[0], 0, 0, 0, message_index=index,
                              seen_start=s.context_start, seen_end=index, line=usage[1])
            s.requests.append(request)
            message.response_id = request.id
            self._pending = request

    def build(self) -> Session:
        s = self.session
        return s.copy_with(messages=list(s.messages), requests=list(s.requests), compactions=list(s.compactions),
                           warnings=list(s.warnings))


def _kosong(obj: dict) -> dict:
    """A kosong message as the OpenAI-style dict `message_from_dict` reads: `think` parts become thinking blocks
    (their `encrypted` field is the signature), a tool message's `<system>ERROR: ...` marks an error result."""
    content = obj.get("content")
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict) and part.get("type") == "think":
                parts.append({"type": "thinking", "thinking": part.get("think"),
                              "signature": part.get("encrypted")})
            else:
                parts.append(part)
        obj = {**obj, "content": parts}
        if obj.get("role") == "tool" and parts and isinstance(parts[0], dict) and str(
                parts[0].get("text", "")).startswith("<system>ERROR:"):
            obj["is_error"] = True
    return obj


def load_kimi(path: Path, progress: Progress | None = None) -> Session:
    loader = KimiLoader(str(path))
    read_jsonl(path, loader.feed, loader.warn, progress)
    session = loader.build()
    _apply_wire(session, path.parent / "wire.jsonl")
    rotated = sorted(path.parent.glob(f"{path.stem}_*{path.suffix}"))
    if rotated and session.compactions:
        session.warnings.append(LoadWarning(None, f"history before the compaction is in {rotated[-1].name} "
                                                  f"({len(rotated)} earlier context file(s) beside this one)"))
    return session


def _apply_wire(session: Session, wire: Path) -> None:
    """Fill each request's cache split, response id and the window from the StatusUpdates in `wire.jsonl`, and the
    last compaction's trigger from where its CompactionBegin came: inside a step (auto), or in a turn that is a
    `/compact` command, before any step (manual; `soul/slash.py`, `kimisoul.py` `run`)."""
    if not wire.is_file():
        return
    statuses: list[dict] = []
    triggers: list[str] = []
    turn: list[Any] = [None, False]  # the current turn's input, and whether a step has begun in it

    def feed(_line: int, _offset: int, obj: Any) -> None:
        message = obj.get("message") if isinstance(obj, dict) else None
        if not isinstance(message, dict):
            return
        kind, payload = message.get("type"), message.get("payload")
        if kind == "StatusUpdate" and isinstance(payload, dict):
            statuses.append(payload)
        elif kind == "TurnBegin":
            turn[:] = [payload.get("user_input") if isinstance(payload, dict) else None, False]
        elif kind == "StepBegin":
            turn[1] = True
        elif kind == "CompactionBegin":
            command = isinstance(turn[0], str) and turn[0].lstrip().startswith("/compact")
            triggers.append("manual" if command and not turn[1] else "auto")

    read_jsonl(wire, feed, lambda _line, _message: None)
    if triggers and session.compactions:  # the context file holds the newest compaction only (it rotates at each)
        session.compactions[-1] = replace(session.compactions[-1], trigger=triggers[-1])
    pending = iter(statuses)
    for request in session.requests:
        for status in pending:
            window = opt_int(status.get("max_context_tokens"))
            if window:
                session.window = window
            usage = status.get("token_usage")
            if not isinstance(usage, dict):
                continue
            other, read, created = (as_int(usage.get(k)) for k in ("input_other", "input_cache_read",
                                                                   "input_cache_creation"))
            if other + read + created != request.input_tokens:
                continue
            request.input_tokens, request.cache_read, request.cache_creation = other, read, created
            request.output_tokens = as_int(usage.get("output")) or request.output_tokens
            rid = opt_str(status.get("message_id"))
            if rid:
                for m in session.messages:
                    if m.response_id == request.id:
                        m.response_id = rid
                request.id = rid
            break


def is_kimi_record(obj: Any) -> bool:
    return isinstance(obj, dict) and opt_str(obj.get("role")) in SPECIAL

