"""The neutral format (docs/neutral-format.md): our own save format, read and written here.

Reading: `NeutralLoader` is stateful like the Claude Code loader (`feed` one parsed line, `build` any time), so the
agent loop's live session file can be followed the same way. Writing: `header_dict`, `message_to_dict` and
`compaction_dict` give the exact line objects the agent loop and the exporters write, so what we write is what we read.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

from inspector.core.formats.blocks import (as_int, blocks_from_content, image_from_url, micro_payload, opt_int, opt_str,
                                           replaced_message)
from inspector.core.formats.claude_code import CLEARED
from inspector.core.formats.jsonl import ObjectLoader, Progress, first_object, loads, read_jsonl
from inspector.core.model import (Block, Compaction, LoadError, LoadWarning, Message, Request, Session, ToolSchema)
from inspector.core.versions import Edit, edits, first_versions

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
    if message.attachment:
        d["attachment"] = message.attachment
    if request is not None:
        d["usage"] = {"id": request.id, "input_tokens": request.input_tokens,
                      "cache_creation_input_tokens": request.cache_creation,
                      "cache_read_input_tokens": request.cache_read, "output_tokens": request.output_tokens}
    return d


def compaction_dict(compaction: Compaction, strategy: str | None = None,
                    changes: list[Edit] | None = None) -> dict[str, Any]:
    """A `compaction` event line. A microcompact's `replacements` map each tool_use id whose result it edited to the
    result's new content (its text, or its blocks where media stayed) and `inputs` each tool use whose input it
    cleared to the new input, from `changes` (each message it edited, before and after); without them, Claude
    Code's cleared marker for every id in `cleared_tool_ids`. A full compaction says which messages it kept: the
    ones at `kept_from` up to its own index are copied after its `added` messages."""
    d: dict[str, Any] = {"event": "compaction", "kind": compaction.kind, "trigger": compaction.trigger,
                         "strategy": strategy, "pre_tokens": compaction.pre_tokens,
                         "tokens_saved": compaction.tokens_saved}
    if compaction.kind == "microcompact":
        if changes is None:
            d["replacements"] = {i: CLEARED for i in compaction.cleared_tool_ids}
        else:
            results: dict[str, Any] = {}
            inputs: dict[str, Any] = {}
            for e in changes:
                r, u = micro_payload(e.before, e.after)
                results.update(r)
                inputs.update(u)
            d["replacements"] = results
            if inputs:
                d["inputs"] = inputs
    elif compaction.kept_from is not None:
        d["kept_from"], d["added"] = compaction.kept_from, compaction.added
    if compaction.timestamp:
        d["timestamp"] = compaction.timestamp
    return d


def session_lines(session: Session) -> Iterable[dict[str, Any]]:
    """Every line of a neutral file for `session`: header, messages with their usage, compaction events in place.
    Messages are written as they first were and each microcompaction as the change it made, so the file reads
    back with what every request saw and what the context holds now. (A full compaction's pre-compaction history
    is written before its event, so it reloads the same.)"""
    yield header_dict(session)
    by_index = {r.message_index: r for r in session.requests}
    changes = edits(session)
    events = sorted(range(len(session.compactions)), key=lambda k: session.compactions[k].index)
    e = 0

    def event(k: int) -> dict[str, Any]:
        return compaction_dict(session.compactions[k], changes=changes[k])

    for i, message in enumerate(first_versions(session)):
        while e < len(events) and session.compactions[events[e]].index == i:
            yield event(events[e])
            e += 1
        yield message_to_dict(message, by_index.get(i))
    for k in events[e:]:
        yield event(k)


# ---- reading -----------------------------------------------------------------------------------------------------

class NeutralLoader(ObjectLoader):
    """Feed parsed neutral lines (messages and events) in order, `build` a Session whenever needed."""

    def __init__(self, source: str, fmt: str = "neutral") -> None:
        self.session = Session(source=source, format=fmt)  # type: ignore[arg-type]
        self._unknown_events: dict[str, list[int]] = {}
        self._header_model: str | None = None  # the configured model: listed only until a response names one
        # Kept as lines arrive, so a compaction event costs what it touches, not a scan of every earlier message
        # (a file can hold thousands of them): tool_use id -> messages holding its result; the context's start.
        self._result_at: dict[str, list[int]] = {}
        self._use_at: dict[str, list[int]] = {}
        self._context_start = 0

    def take(self, line_no: int | None, offset: int | None, obj: dict) -> None:
        if "event" in obj:
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
            if kind == "microcompact":
                self._edit(c, obj, line_no)
            else:
                kept, added = opt_int(obj.get("kept_from")), opt_int(obj.get("added"))
                if kept is not None and self._context_start <= kept < len(s.messages):
                    c.kept_from, c.added = kept, added if added is not None and added >= 0 else 1
                elif kept is not None:
                    self.warn(line_no, f"kept_from {kept} is outside the context before this compaction; ignored")
                self._context_start = len(s.messages)
            s.compactions.append(c)
        else:
            seen = self._unknown_events.setdefault(str(event), [0, line_no or 0])
            seen[0] += 1

    def _edit(self, c: Compaction, obj: dict, line_no: int | None) -> None:
        """Apply a microcompaction's replacements (tool_use id -> a result's new content) and new inputs to the
        messages holding them, keeping each message as it was in `c.replaced`."""
        s = self.session
        replacements, inputs = obj.get("replacements"), obj.get("inputs")
        results = {str(k): v if isinstance(v, list) else str(v) for k, v in replacements.items()} \
            if isinstance(replacements, dict) else {}
        uses = {str(k): v for k, v in inputs.items()} if isinstance(inputs, dict) else {}
        if replacements is not None and not isinstance(replacements, dict):
            self.warn(line_no, "microcompaction replacements are not an object; ignored")
        c.cleared_tool_ids = tuple(results)
        targets = {i for k in results for i in self._result_at.get(k, ())} | \
            {i for k in uses for i in self._use_at.get(k, ())}
        for i in sorted(t for t in targets if t >= self._context_start):  # (history may hold the same ids)
            new = replaced_message(s.messages[i], results, uses)
            if new is not None:
                c.replaced[i] = s.messages[i]
                s.messages[i] = new

    def _message(self, line_no: int | None, offset: int | None, obj: dict) -> None:
        s = self.session
        message = message_from_dict(obj)
        message.lines = (line_no,) if line_no else ()
        message.offset = offset
        message.attachment = opt_str(obj.get("attachment"))
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
            elif b.type == "tool_use" and b.tool_id is not None:
                self._use_at.setdefault(b.tool_id, []).append(index)
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
        name, args = function.get("name"), call_arguments(function.get("arguments"))
    else:
        name, args = call.get("name"), call.get("input", call.get("arguments", {}))
    return Block.of("tool_use", tool_id=opt_str(call.get("id")), tool_name=opt_str(name), input=args)


def call_arguments(args: Any) -> Any:
    """A tool call's `arguments` as OpenAI-style APIs send them, a JSON string: its value (`{}` when empty); malformed
    JSON stays the string, which is what the model saw."""
    if isinstance(args, str):
        try:
            return loads(args) if args.strip() else {}
        except ValueError:
            pass
    return args


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
