"""Kimi Code CLI sessions (`@moonshot-ai/kimi-code`, the TypeScript successor of the Python Kimi CLI, whose last
release, 1.52.0, only points to it): `$KIMI_CODE_HOME` (else `~/.kimi-code`)
`/sessions/wd_<dir name>_<hash>/session_<uuid>/agents/<agent>/wire.jsonl`, `main` the session's own window and any
other agent a subagent's. Read from what 2.1.0 writes (tests/fixtures/agents/kimi-code-2.1.0, docs/format-kimi-code.md).

One event a line, `{type, agentId, ..., time}` (epoch milliseconds). The context is what the `context.*` records
build, in order:
- `context.append_message`: a message; a user message's `origin.kind` is `user` (typed), `injection` (a
  system-reminder the harness adds: date, permission mode, ...) or `compaction_summary`;
- `context.append_loop_event`: a step of the agent loop, `event.type` `step.begin`, `content.part` (the model's
  `text` or `think`), `tool.call` (`toolCallId`, `name`, `args`), `tool.result` (`result.output`, `result.note`,
  `result.isError`) and `step.end`, whose `usage` {inputOther, inputCacheRead, inputCacheCreation, output} and
  `messageId` are the step's request;
- `context.apply_compaction`: the first `compactedCount` messages of the context replaced by the summary
  (`contextSummary`, as sent; `summary` the model's own words) and the `keptUserMessageCount` latest prompts,
  verbatim. `full_compaction.begin` before it says who asked (`source`: `auto` or `manual`), and the
  `llm.request` of kind `compaction` then its `usage.record` (scope `session`) are the summary's request;
- `context.clear` starts the context anew.
A subagent's window is `agents/<id>/wire.jsonl` beside the main one, its task the first message (origin
`system_trigger`, name `subagent`); `subagent.spawned {subagentId, parentToolCallId}` in the main file names the call
that started it.
Beside them: `profile.bind` holds the system prompt as sent, `llm.tools_snapshot` the tools (name, description,
parameters), `llm.request` the model. `context.undo {count}` (`/undo`) withdraws the last prompts: see `_undo`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspector.core.formats.blocks import (as_int, as_list, block_from_dict, image_from_url, iso_from_ms, opt_int,
                                           opt_str)
from inspector.core.formats.harness_config import Stated, read_toml
from inspector.core.formats.jsonl import ObjectLoader, Progress, UnknownKinds, read_jsonl
from inspector.core.formats.neutral import call_arguments
from inspector.core.model import Block, Compaction, Message, Request, Session, ToolSchema

MAIN_AGENT = "main"
# Records that hold nothing of the context: the session's bookkeeping, UI events, counts Kimi makes itself
IGNORED = frozenset({
    "runtime.set_binding", "permission.set_mode", "turn.prompt", "turn.ended", "prompt.completed",
    "plugin.session_start", "token_counting.measured", "token_counting.rebased",
    "token_counting.turn_recorded", "token_counting.truncated", "full_compaction.complete", "full_compaction.cancel",
    "context.undone", "context.update_token_count", "agent.switched", "subagent.started", "subagent.completed",
    "subagent.failed"})
PROMPT_KINDS = {"user": "prompt", "injection": "meta", "compaction_summary": "compact_summary"}


class KimiCodeLoader(ObjectLoader):
    def __init__(self, source: str) -> None:
        self.session = Session(source=source, format="kimi-code")
        self._unknown = UnknownKinds("record", "records")
        self._step: Message | None = None  # the assistant message of the step in progress
        self._step_index = 0  # ... and its index
        self._built = 0  # messages a build has handed out: copied before they change (a live follower keeps them)
        self._folder: _Folder | None = None  # read once
        self._alias: str | None = None  # the model alias the profile was bound to (config.toml names its window)
        self._marks: list[tuple[str, str | None] | None] = []  # per message: its origin and the prompt it is or
        # belongs to (("user", its id), ("injection", its owner's id)), for an undo; None: the loop's own
        self._model: str | None = None  # of the last `llm.request`
        self._request_kind = "loop"
        self._trigger: str | None = None  # of the compaction begun (`full_compaction.begin`)
        self._summary_request: Request | None = None  # the compaction's own, until its summary is placed

    def take(self, line_no: int | None, offset: int | None, obj: dict) -> None:
        kind = opt_str(obj.get("type"))
        if kind in IGNORED or obj.get("kind") == "event":  # most lines: counts and the UI's echo of the turn
            return
        ts = obj.get("time")  # epoch milliseconds, made a timestamp only where one is kept
        if kind == "context.append_message":
            message = obj.get("message")
            if isinstance(message, dict):
                self._step = None
                self._add(_message(message), line_no, offset, ts, _mark(message))
            else:
                self.warn(line_no, "context message without a message object, skipped")
        elif kind == "context.append_loop_event":
            event = obj.get("event")
            if isinstance(event, dict):
                self._loop_event(event, line_no, offset, ts)
        elif kind == "llm.request":
            self._model = opt_str(obj.get("model")) or self._model
            self._request_kind = opt_str(obj.get("kind")) or "loop"
        elif kind == "usage.record":
            if self._request_kind == "compaction" and obj.get("usageScope") == "session":
                self._summary_request = self._request(obj.get("usage"), None, line_no, ts, "compaction")
        elif kind == "full_compaction.begin":
            self._trigger = opt_str(obj.get("source"))
        elif kind == "context.apply_compaction":
            self._compaction(obj, line_no, offset, ts)
        elif kind == "context.clear":
            s = self.session
            s.compactions.append(Compaction("compact", len(s.messages), trigger="clear", line=line_no,
                                            timestamp=iso_from_ms(ts)))
            self._step = None
        elif kind == "profile.bind":
            self.session.system = opt_str(obj.get("systemPrompt")) or self.session.system
            self._alias = opt_str(obj.get("modelAlias")) or self._alias
        elif kind == "llm.tools_snapshot":
            tools = obj.get("tools")
            if isinstance(tools, list):
                self.session.tools = [ToolSchema(t["name"], opt_str(t.get("description")) or "",
                                                 t["parameters"] if isinstance(t.get("parameters"), dict) else {})
                                      for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)]
        elif kind == "subagent.spawned":  # the Agent call that started a subagent (its window: agents/<id>/)
            call, agent = opt_str(obj.get("parentToolCallId")), opt_str(obj.get("subagentId"))
            if call and agent:
                self.session.spawns[call] = agent
        elif kind == "context.undo":
            self._undo(obj.get("count"), line_no)
        elif kind == "metadata":
            version = opt_str(obj.get("protocol_version"))
            self.session.version = f"wire protocol {version}" if version else self.session.version
        else:
            self._unknown.note(kind, line_no)

    def _loop_event(self, event: dict, line_no: int | None, offset: int | None, ts: Any) -> None:
        kind = event.get("type")
        if kind == "step.begin":
            self._step = None
        elif kind == "content.part":
            part = event.get("part")
            if isinstance(part, dict):
                block = _part(part)
                if block is not None:
                    self._assistant(line_no, offset, ts).blocks.append(block)
        elif kind == "tool.call":
            name, args = opt_str(event.get("name")), event.get("args")
            self._assistant(line_no, offset, ts).blocks.append(
                Block.of("tool_use", tool_id=opt_str(event.get("toolCallId")), tool_name=name,
                         input=args if args is not None else {}))
        elif kind == "tool.result":
            result = event.get("result") if isinstance(event.get("result"), dict) else {}
            output, note = result.get("output"), opt_str(result.get("note"))
            text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False, default=str)
            block = Block("tool_result", text + ("\n" + note if note else ""), opt_str(event.get("toolCallId")),
                          is_error=bool(result.get("isError")))
            self._add(Message("user", "tool_result", [block]), line_no, offset, ts)
        elif kind == "step.end":
            step = self._assistant(line_no, offset, ts)
            step.response_id = opt_str(event.get("messageId"))
            request = self._request(event.get("usage"), step.response_id, line_no, ts, "turn")
            if request is not None:
                request.message_index = request.seen_end = self._step_index
                self.session.requests.append(request)
                step.response_id = request.id
            self._step = None

    def _assistant(self, line_no: int | None, offset: int | None, ts: Any) -> Message:
        """The assistant message of the step in progress (added when its first part or call comes)."""
        if self._step is None:
            self._step, self._step_index = Message("assistant", "assistant", [], model=self._model), \
                len(self.session.messages)
            self._add(self._step, line_no, offset, ts)
        else:
            if self._step_index < self._built:
                self._step = self.session.messages[self._step_index] = self._step.copy_with(
                    blocks=list(self._step.blocks))
            if line_no is not None and line_no not in self._step.lines:
                self._step.lines += (line_no,)
        return self._step

    def _request(self, usage: Any, rid: str | None, line_no: int | None, ts: Any,
                 kind: str) -> Request | None:
        if not isinstance(usage, dict):
            return None
        s = self.session
        return Request(rid or f"kimi-code-line-{line_no}", self._model, as_int(usage.get("inputOther")),
                       as_int(usage.get("inputCacheCreation")), as_int(usage.get("inputCacheRead")),
                       as_int(usage.get("output")), len(s.messages), seen_start=s.context_start,
                       seen_end=len(s.messages), line=line_no, timestamp=iso_from_ms(ts),
                       kind=kind)  # type: ignore[arg-type]

    def _compaction(self, obj: dict, line_no: int | None, offset: int | None, ts: Any) -> None:
        """The summary first, then copies of the prompts kept verbatim: the context Kimi sends next holds the same
        messages, the prompts before the summary."""
        s = self.session
        start = s.context_start
        count = opt_int(obj.get("compactedCount"))
        compacted = s.messages[start:start + count] if count is not None else s.messages[start:]
        keep = opt_int(obj.get("keptUserMessageCount")) or 0
        prompts = [m for m in compacted if m.role == "user" and m.kind == "prompt"]
        kept = prompts[len(prompts) - keep:] if keep else []
        summary = obj.get("contextSummary") if isinstance(obj.get("contextSummary"), str) else obj.get("summary")
        if isinstance(summary, dict):
            summary_message = _message(summary)
            summary_message.kind = "compact_summary"
        else:
            summary_message = Message("user", "compact_summary", [Block("text", opt_str(summary) or "")])
        before = s.requests[-1].measured_context if s.requests else None
        index = len(s.messages)
        s.compactions.append(Compaction("compact", index, trigger=self._trigger, pre_tokens=before, line=line_no,
                                        timestamp=iso_from_ms(ts)))
        self._add(summary_message, line_no, offset, ts)
        request = self._summary_request
        if request is not None:  # it saw the old context; its output is the summary, past the boundary: its figures
            request.seen_start, request.seen_end, request.message_index = start, index, index - 1  # stay in that window
            s.requests.append(request)
        for m in kept:
            self._add(m.copy_with(blocks=list(m.blocks)), line_no, offset, ts)
        self._trigger, self._summary_request, self._step = None, None, None

    def _add(self, message: Message, line_no: int | None, offset: int | None, ts: Any,
             mark: tuple[str, str | None] | None = None) -> None:
        message.lines, message.offset = ((line_no,) if line_no is not None else ()), offset
        message.timestamp = iso_from_ms(ts)
        self.session.messages.append(message)
        self._marks.append(mark)

    def _undo(self, count: Any, line_no: int | None) -> None:
        """`/undo` of the last `count` prompts, as Kimi folds it: the context goes back to before the count-th last
        prompt (and the reminders it owned), never past a compaction; the reminders that came after it and belong
        to no withdrawn prompt stay. The requests of what went are dropped with it, as the file's own view does."""
        s, marks = self.session, self._marks
        cut, found = None, 0
        for i in range(len(s.messages) - 1, s.context_start - 1, -1):
            if s.messages[i].kind == "compact_summary":
                break
            if marks[i] is not None and marks[i][0] == "user":
                found += 1
                if found == count:
                    cut = i
                    break
        if cut is None or count.__class__ is not int:
            self.warn(line_no, f"undo of {count!r} turn(s) reaches before the context this file holds: not replayed")
            return
        withdrawn = {mark[1] for mark in marks[cut:] if mark is not None and mark[0] == "user"}
        while cut > 0 and marks[cut - 1] is not None and marks[cut - 1][0] == "injection" and \
                marks[cut - 1][1] in withdrawn:
            cut -= 1
        kept = [i for i in range(cut, len(s.messages)) if marks[i] is not None and marks[i][0] == "injection"
                and marks[i][1] not in withdrawn]
        s.messages[cut:] = [s.messages[i] for i in kept]
        marks[cut:] = [marks[i] for i in kept]
        s.requests = [r for r in s.requests if r.message_index < cut and r.seen_end <= cut]
        self._step, self._built = None, min(self._built, cut)

    def build(self) -> Session:
        s = self.session
        self._built = len(s.messages)
        if self._folder is None:
            self._folder = _folder(Path(s.source))
        folder = self._folder
        return s.copy_with(messages=list(s.messages), requests=list(s.requests), compactions=list(s.compactions),
                           warnings=list(s.warnings) + self._unknown.warnings(), models=_models(s.requests),
                           subagents=list(folder.subagents), cwd=folder.cwd, session_id=folder.session_id,
                           spawns=dict(s.spawns), window=folder.windows.get(self._alias or ""),
                           compaction_settings=folder.settings.copy())


def _models(requests: list[Request]) -> list[str]:
    return list(dict.fromkeys(r.model for r in requests if r.model))


def _part(part: dict) -> Block | None:
    kind = part.get("type")
    if kind == "text":
        return Block("text", opt_str(part.get("text")) or "")
    if kind == "think":
        return Block.of("thinking", opt_str(part.get("think")) or "", signature=opt_str(part.get("encrypted")))
    if kind == "image_url":  # {image_url: {url}}: a data URL keeps its media type and size
        image = part.get("image_url")
        return block_from_dict(image_from_url(image.get("url") if isinstance(image, dict) else image))
    return Block.of("unknown", raw=part) if kind is not None else None


def _mark(d: dict) -> tuple[str, str | None] | None:
    """What an undo needs of a context message: a typed prompt and its id, or a reminder and the prompt owning it."""
    origin = d.get("origin") if isinstance(d.get("origin"), dict) else {}
    kind = opt_str(origin.get("kind"))
    if kind == "user":
        return "user", opt_str(d.get("id"))
    if kind == "injection":
        return "injection", opt_str(origin.get("ownerPromptId"))
    return None


def _message(d: dict) -> Message:
    """A context message `{role, content: parts, toolCalls, toolCallId, origin}` as a Message."""
    role = opt_str(d.get("role")) or "user"
    content = d.get("content")
    parts = content if isinstance(content, list) else [{"type": "text", "text": content}] if content else []
    blocks = [b for b in (_part(p) for p in parts if isinstance(p, dict)) if b is not None]
    for call in as_list(d.get("toolCalls")):
        if isinstance(call, dict):
            blocks.append(Block.of("tool_use", tool_id=opt_str(call.get("id")), tool_name=opt_str(call.get("name")),
                                   input=call_arguments(call.get("arguments"))))
    origin = d.get("origin") if isinstance(d.get("origin"), dict) else {}
    if role == "tool":
        text = "\n".join(b.text for b in blocks if b.type == "text")
        return Message("user", "tool_result", [Block("tool_result", text, opt_str(d.get("toolCallId")))])
    if role == "assistant":
        return Message("assistant", "assistant", blocks)
    if role == "system":
        return Message("system", "system", blocks)
    source = opt_str(origin.get("kind")) or "user"
    subagent_task = source == "system_trigger" and origin.get("name") == "subagent"
    kind = "prompt" if subagent_task else PROMPT_KINDS.get(source, "meta")
    return Message("user", kind, blocks)  # type: ignore[arg-type]


def is_kimi_code_record(obj: Any) -> bool:
    """A wire record of Kimi Code: a dotted event type and the agent it belongs to, or the file's first line
    (`metadata` with its protocol version and creation time; Kimi CLI's UI log opens with no time)."""
    if not isinstance(obj, dict):
        return False
    kind = opt_str(obj.get("type")) or ""
    if kind == "metadata":
        return isinstance(obj.get("protocol_version"), str) and isinstance(obj.get("created_at"), int)
    return isinstance(obj.get("agentId"), str) and "." in kind


def load_kimi_code(path: Path, progress: Progress | None = None) -> Session:
    loader = KimiCodeLoader(str(path))
    read_jsonl(path, loader.feed, loader.warn, progress)
    return loader.build()


@dataclass(frozen=True, slots=True)
class _Folder:
    """What a session folder tells beside an agent's file: the subagents' files (for the main agent's), the working
    directory and session id (`state.json`), each model alias's window and the compaction settings (the store's
    `config.toml`: every model must state `max_context_size`, a model given by environment states none in a file;
    `[loop_control]` `compaction_trigger_ratio` and `reserved_context_size`)."""

    subagents: tuple[str, ...] = ()
    cwd: str | None = None
    session_id: str | None = None
    windows: dict[str, int] = field(default_factory=dict)
    settings: Stated = field(default_factory=Stated)


def _folder(path: Path) -> _Folder:
    agents = path.parent.parent
    if agents.name != "agents":
        return _Folder()
    subagents = tuple(sorted(str(p) for p in agents.glob("*/wire.jsonl") if p.parent.name != MAIN_AGENT)) \
        if path.parent.name == MAIN_AGENT else ()
    try:
        state = json.loads((agents.parent / "state.json").read_bytes()[:1 << 20])
    except (OSError, ValueError, RecursionError):
        state = None
    state = state if isinstance(state, dict) else {}
    windows, settings = _config(agents.parent.parent.parent.parent / "config.toml")
    return _Folder(subagents, opt_str(state.get("cwd")), opt_str(state.get("id")), windows, settings)


def _config(path: Path) -> tuple[dict[str, int], Stated]:
    """Each model alias's `max_context_size`, and the `kimi` policy's options as `[loop_control]` sets them (in
    the ranges Kimi Code accepts: a ratio of 0.5 to 0.99, a reserve of 0 or more)."""
    doc = read_toml(path)
    models = doc.get("models")
    windows = {alias: entry["max_context_size"] for alias, entry in (models.items() if isinstance(models, dict)
                                                                   else ())
               if isinstance(entry, dict) and entry.get("max_context_size").__class__ is int
               and entry["max_context_size"] > 0}
    loop = doc.get("loop_control") if isinstance(doc.get("loop_control"), dict) else {}
    settings = Stated()
    ratio, reserved = loop.get("compaction_trigger_ratio"), loop.get("reserved_context_size")
    if ratio.__class__ in (int, float) and 0.5 <= ratio <= 0.99:
        settings.set("compact_pct", round(ratio * 100, 6), path)
    if reserved.__class__ is int and reserved >= 0:
        settings.set("reserved", reserved, path)
    return windows, settings
