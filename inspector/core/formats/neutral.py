"""The neutral format (docs/neutral-format.md): our own save format, read and written here.

Reading: `NeutralLoader` is stateful like the Claude Code loader (`feed` one parsed line, `build` any time), so the
agent loop's live session file can be followed the same way. Writing: `header_dict`, `message_to_dict` and
`compaction_dict` give the exact line objects the agent loop and the exporters write, so what we write is what we read.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

from inspector.core.formats.blocks import as_int, blocks_from_content, image_from_url, opt_int, opt_str, replace_results
from inspector.core.formats.claude_code import CLEARED
from inspector.core.formats.jsonl import Progress, first_object, loads, read_jsonl
from inspector.core.model import (Block, Compaction, LoadError, LoadWarning, Message, Request, Session, ToolSchema)

VERSION = 1
MESSAGE_KINDS = frozenset({"prompt", "assistant", "tool_result", "meta", "compact_summary", "summary_ack", "system"})
ROLES = frozenset({"user", "assistant", "tool", "system"})


# ---- writing -----------------------------------------------------------------------------------------------------

def header_dict(session: Session, created: str | None = None) -> dict[str, Any]:
    """The `session` event line that starts a neutral file: cwd, model, the system prompt and tool schemas."""
    return {
        "event": "session",
        "version": VERSION,
        "cwd": session.cwd,
        "model": session.models[-1] if session.models else None,
        "system": session.system,
        "tools": [{"name": t.name, "description": t.description, "input_schema": t.input_schema}
                  for t in session.tools],
        "created": created or datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }


def message_to_dict(message: Message, request: Request | None = None) -> dict[str, Any]:
    """One neutral message line. A lone text block is written as a plain string; with `request`, its usage."""
    blocks = message.blocks
    content: Any = blocks[0].text if len(blocks) == 1 and blocks[0].type == "text" else [b.to_api() for b in blocks]
    d: dict[str, Any] = {"role": message.role, "kind": message.kind, "content": content}
    if message.uuid:
        d["id"] = message.uuid
    if message.timestamp:
        d["timestamp"] = message.timestamp
    if message.model:
        d["model"] = message.model
    if request is not None:
        d["usage"] = {"id": request.id, "input_tokens": request.input_tokens,
                      "cache_creation_input_tokens": request.cache_creation,
                      "cache_read_input_tokens": request.cache_read, "output_tokens": request.output_tokens}
    return d


def compaction_dict(compaction: Compaction, strategy: str | None = None,
                    replacements: dict[str, str] | None = None) -> dict[str, Any]:
    """A `compaction` event line. For a microcompact, `replacements` maps each cleared tool_use id to the text its
    result now holds (default: Claude Code's cleared marker for every id in `cleared_tool_ids`)."""
    d: dict[str, Any] = {"event": "compaction", "kind": compaction.kind, "trigger": compaction.trigger,
                         "strategy": strategy, "pre_tokens": compaction.pre_tokens,
                         "tokens_saved": compaction.tokens_saved}
    if compaction.kind == "microcompact":
        d["replacements"] = replacements if replacements is not None else {
            i: CLEARED for i in compaction.cleared_tool_ids}
    if compaction.timestamp:
        d["timestamp"] = compaction.timestamp
    return d


def session_lines(session: Session) -> Iterable[dict[str, Any]]:
    """Every line of a neutral file for `session`: header, messages with their usage, compaction events in place.
    (A full compaction's pre-compaction history is written before its event, so it reloads the same.)"""
    yield header_dict(session)
    by_index = {r.message_index: r for r in session.requests}
    events = sorted(session.compactions, key=lambda c: c.index)
    e = 0
    for i, message in enumerate(session.messages):
        while e < len(events) and events[e].index == i:
            yield compaction_dict(events[e])
            e += 1
        yield message_to_dict(message, by_index.get(i))
    for c in events[e:]:
        yield compaction_dict(c)


# ---- reading -----------------------------------------------------------------------------------------------------

class NeutralLoader:
    """Feed parsed neutral lines (messages and events) in order, `build` a Session whenever needed."""

    def __init__(self, source: str, fmt: str = "neutral") -> None:
        self.session = Session(source=source, format=fmt)  # type: ignore[arg-type]
        self._unknown_events: dict[str, list[int]] = {}
        self._header_model: str | None = None  # the configured model: listed only until a response names one
        # Kept as lines arrive, so a compaction event costs what it touches, not a scan of every earlier message
        # (a file can hold thousands of them): tool_use id -> messages holding its result; the context's start.
        self._result_at: dict[str, list[int]] = {}
        self._context_start = 0

    def warn(self, line: int | None, message: str) -> None:
        self.session.warnings.append(LoadWarning(line, message))

    def feed(self, line_no: int | None, offset: int | None, obj: Any) -> None:
        if not isinstance(obj, dict):
            self.warn(line_no, f"not a JSON object ({type(obj).__name__}), skipped")
        elif "event" in obj:
            self._event(line_no, obj)
        elif opt_str(obj.get("role")) in ROLES:
            self._message(line_no, offset, obj)
        else:
            self.warn(line_no, "neither a message (role) nor an event, skipped")

    def _event(self, line_no: int | None, obj: dict) -> None:
        s = self.session
        event = obj.get("event")
        if event == "session":
            s.cwd = opt_str(obj.get("cwd")) or s.cwd
            s.system = system_text(obj.get("system")) if obj.get("system") is not None else s.system
            s.tools = tools_from(obj.get("tools")) or s.tools
            self._header_model = opt_str(obj.get("model")) or self._header_model
            s.version = str(obj.get("version")) if obj.get("version") is not None else s.version
        elif event == "compaction":
            kind = "microcompact" if obj.get("kind") == "microcompact" else "compact"
            c = Compaction(kind, len(s.messages), trigger=opt_str(obj.get("trigger")),
                           pre_tokens=opt_int(obj.get("pre_tokens")), tokens_saved=opt_int(obj.get("tokens_saved")),
                           line=line_no, timestamp=opt_str(obj.get("timestamp")))
            replacements = obj.get("replacements")
            if kind == "microcompact" and isinstance(replacements, dict):
                c.cleared_tool_ids = tuple(str(k) for k in replacements)
                targets = sorted({i for k in c.cleared_tool_ids for i in self._result_at.get(k, ())})
                replace_results([s.messages[i] for i in targets], {str(k): str(v) for k, v in replacements.items()})
            elif kind == "compact":
                self._context_start = len(s.messages)
            s.compactions.append(c)
        else:
            seen = self._unknown_events.setdefault(str(event), [0, line_no or 0])
            seen[0] += 1

    def _message(self, line_no: int | None, offset: int | None, obj: dict) -> None:
        s = self.session
        message = message_from_dict(obj)
        message.lines = (line_no,) if line_no else ()
        message.offset = offset
        kind = obj.get("kind")
        if kind is not None:
            if opt_str(kind) in MESSAGE_KINDS:
                message.kind = kind
            else:
                self.warn(line_no, f"unknown kind {str(kind)[:40]!r}, used {message.kind!r}")
        index = len(s.messages)
        s.messages.append(message)
        for b in message.blocks:
            if b.type == "tool_result" and b.tool_id is not None:
                self._result_at.setdefault(b.tool_id, []).append(index)
        usage = obj.get("usage")
        if message.role == "assistant" and isinstance(usage, dict):
            rid = opt_str(usage.get("id")) or message.uuid or f"line-{line_no or index}"
            request = Request(rid, message.model, as_int(usage.get("input_tokens")),
                              as_int(usage.get("cache_creation_input_tokens")),
                              as_int(usage.get("cache_read_input_tokens")), as_int(usage.get("output_tokens")),
                              message_index=index, seen_start=self._context_start, seen_end=index, line=line_no,
                              timestamp=message.timestamp)
            message.response_id = rid
            s.requests.append(request)
            if message.model and message.model not in s.models:
                s.models.append(message.model)

    def build(self) -> Session:
        s = self.session
        warnings = list(s.warnings) + [
            LoadWarning(first or None, f"skipped {n} unknown event{'s' if n > 1 else ''} {name!r}")
            for name, (n, first) in self._unknown_events.items()]
        return s.copy_with(messages=list(s.messages), requests=list(s.requests), compactions=list(s.compactions),
                           warnings=warnings, tools=list(s.tools),
                           models=list(s.models) or ([self._header_model] if self._header_model else []))


def message_from_dict(d: dict) -> Message:
    """A Message from a reference-design / OpenAI-style message dict (roles user, assistant, tool, system)."""
    role = d.get("role")
    blocks = blocks_from_content(_openai_parts(d.get("content")))
    if role == "tool":
        inner = d.get("content")
        if isinstance(inner, list):
            result = Block("tool_result", tool_id=opt_str(d.get("tool_call_id")), content=blocks,
                           is_error=bool(d.get("is_error")))
        else:
            result = Block("tool_result", "" if inner is None else str(inner), tool_id=opt_str(d.get("tool_call_id")),
                           is_error=bool(d.get("is_error")))
        return Message("user", "tool_result", [result], uuid=opt_str(d.get("id")),
                       timestamp=opt_str(d.get("timestamp")))
    calls = d.get("tool_calls")
    for call in calls if isinstance(calls, list) else ():
        if isinstance(call, dict):
            blocks.append(_tool_call(call))
    if role == "assistant":
        kind = "assistant"
    elif role == "system":
        kind = "system"
    elif any(b.type == "tool_result" for b in blocks):
        kind = "tool_result"
    else:
        kind = "prompt"
    return Message(role if role in ("user", "assistant", "system") else "user", kind, blocks,  # type: ignore[arg-type]
                   uuid=opt_str(d.get("id")), timestamp=opt_str(d.get("timestamp")),
                   model=opt_str(d.get("model")))


def _tool_call(call: dict) -> Block:
    """A tool_use block from `{"id","name","input"}` (reference design) or `{"id","function":{"name","arguments"}}`."""
    function = call.get("function")
    if isinstance(function, dict):
        name, args = function.get("name"), function.get("arguments")
        if isinstance(args, str):
            try:
                args = loads(args) if args.strip() else {}
            except ValueError:
                pass  # the model sent malformed JSON: keep the string, it is what it saw
    else:
        name, args = call.get("name"), call.get("input", call.get("arguments", {}))
    return Block("tool_use", tool_id=opt_str(call.get("id")), tool_name=opt_str(name), input=args)


def _openai_parts(content: Any) -> Any:
    """OpenAI content parts (`text`, `image_url`, `input_audio`) as Messages-API blocks; other content unchanged."""
    if not isinstance(content, list):
        return content
    out = []
    for part in content:
        if isinstance(part, dict) and part.get("type") == "image_url":
            image = part.get("image_url")
            out.append(image_from_url(image.get("url") if isinstance(image, dict) else image))
        else:
            out.append(part)
    return out


def tools_from(value: Any) -> list[ToolSchema]:
    """Tool schemas from Messages-API (`name`, `input_schema`) or OpenAI (`function{name, parameters}`) dicts."""
    tools = []
    for t in value if isinstance(value, list) else ():
        if not isinstance(t, dict):
            continue
        f = t.get("function") if isinstance(t.get("function"), dict) else t
        name = f.get("name")
        if isinstance(name, str):
            schema = f.get("input_schema", f.get("parameters"))
            tools.append(ToolSchema(name, opt_str(f.get("description")) or "",
                                    schema if isinstance(schema, dict) else {}))
    return tools


def system_text(value: Any) -> str:
    """A system prompt given as a string or as text blocks (possibly with cache_control), as one string."""
    if isinstance(value, list):
        return "\n\n".join(opt_str(b.get("text")) or "" if isinstance(b, dict) else str(b) for b in value)
    return value if isinstance(value, str) else str(value)


def load_neutral(path: Path, progress: Progress | None = None) -> Session:
    """A neutral JSONL file, or a JSON document: an array of lines, or `{"messages": [...]}`."""
    loader = NeutralLoader(str(path))
    if _is_jsonl(path):
        read_jsonl(path, loader.feed, loader.warn, progress)
        return loader.build()
    doc = read_document(path)
    items = doc.get("messages") if isinstance(doc, dict) else doc
    if isinstance(doc, dict) and "event" in doc:
        loader.feed(None, None, doc)
    if not isinstance(items, list):
        raise LoadError(f"{path}: neutral JSON must be an array or hold a \"messages\" array")
    for obj in items:
        loader.feed(None, None, obj)
    return loader.build()


def _is_jsonl(path: Path) -> bool:
    """JSONL unless the file is an array or a single `{"messages": ...}` object (or a pretty-printed document)."""
    first = first_object(path)
    return isinstance(first, dict) and "messages" not in first


def read_document(path: Path) -> Any:
    """A whole JSON document (only formats that are small, one-document JSON go through this)."""
    try:
        with open(path, "rb") as f:
            return loads(f.read())
    except ValueError as exc:
        raise LoadError(f"{path}: not valid JSON ({exc})") from None
    except OSError as exc:
        raise LoadError(f"{path}: cannot read ({exc.strerror or exc})") from None
