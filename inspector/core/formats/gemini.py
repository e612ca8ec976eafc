"""Gemini CLI sessions: `~/.gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl` (JSONL since 0.3x; one
`session-*.json` document before), docs/gemini-cli-format.md.

The file is a log the CLI replays (`loadConversationRecord` in its `chatRecordingService.ts`), and this loader
replays it the same way: a metadata line `{sessionId, projectHash, startTime, kind}` (repeated on a resume), message
records `{id, timestamp, type, content, toolCalls, thoughts, tokens, model}` where a record written again with the
same id replaces the earlier copy in place, `{"$rewindTo": id}` dropping that message and everything after it, and
`{"$set": {...}}` updating metadata, with `messages` replacing the whole history (a resume, a rollback, tool output
masking, a compression). Content is Gemini API parts (`parts.py`).

What the model saw: a `user` record is a user turn (`<session_context>` ones are the CLI's environment message),
a `gemini` record a model turn (its thoughts are never sent back) whose calls are `functionCall` parts of its
content or, before a `$set` rewrote it, its `toolCalls`; their results are the `functionResponse` parts of the
user records that follow (0.61) or, in older files, the `toolCalls[].result` copies. `info`/`error`/`warning`
records are UI only. A `$set` whose history opens with a new `<state_snapshot>` user message is a compression: the
history before it stays in `messages`, the new one follows the boundary. One whose tool outputs newly read
`<tool_output_masked>` is a masking (a microcompact). Each `gemini` record's `tokens{input, output, cached,
thoughts, tool}` is one Request, counted once per record id (`thoughts` is billed as output, but is not in
`output`).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from inspector.core.formats.blocks import as_int, opt_str
from inspector.core.formats.harness_config import Stated, root_owned, settings_share, system_settings
from inspector.core.formats.jsonl import ObjectLoader, UnknownKinds
from inspector.core.formats.parts import blocks_from_parts, has_part, part_list, part_text
from inspector.core.model import Block, Compaction, Message, Request, Session

SUMMARY_TAG = "<state_snapshot>"  # the compression summary (chatCompressionService.ts)
MASKED_TAG = "<tool_output_masked>"  # a masked tool output (toolOutputMaskingService.ts)
META_PREFIXES = ("<session_context>", "<hook_context>")  # user turns the CLI writes (environment, hooks)
UI_TYPES = frozenset({"info", "error", "warning"})  # shown to the user, never sent to the model


@dataclass(slots=True)
class _Record:
    id: str
    obj: dict
    line: int | None
    offset: int | None

    @property
    def type(self) -> str | None:
        return opt_str(self.obj.get("type"))


@dataclass(slots=True)
class _Usage:
    tokens: dict
    model: str | None
    line: int | None
    timestamp: str | None


class GeminiLoader(ObjectLoader):
    """Feed parsed lines in file order with `feed` (or a whole legacy document with `feed_document`), then `build`
    a Session as often as you like."""

    def __init__(self, source: str) -> None:
        self.path = Path(source)
        cwd = project_root(self.path)
        self.session = Session(source=source, format="gemini-cli", cwd=cwd,
                               compaction_settings=gemini_settings(self.path, cwd))
        self._subagents: list[str] | None = None
        self.records: dict[str, _Record] = {}  # the current history, in order (ids as the CLI keys them)
        self.frozen: list[Message] = []  # messages before the last compression
        self.compactions: list[Compaction] = []  # of the frozen part (indices fixed)
        self.masked: list[tuple[str | None, Compaction]] = []  # maskings of the current history: after which record
        self.usage: dict[str, _Usage] = {}
        self.last_input: int | None = None  # the newest response's prompt tokens: what compression compares
        self._cache: dict[tuple, Message] = {}
        self._unknown = UnknownKinds("record", "records")
        self._untold: int | None = None  # the last compression, while its trigger is unknown (`_tell`)

    # -- reading ------------------------------------------------------------------------------------------------

    def take(self, line_no: int, offset: int, obj: dict) -> None:
        if "$rewindTo" in obj:
            self._rewind(line_no, obj.get("$rewindTo"))
        elif "$set" in obj:
            update = obj.get("$set")
            if isinstance(update, dict):
                self._set(line_no, offset, update)
            else:
                self.warn(line_no, "$set without an object, skipped")
        elif isinstance(obj.get("id"), str):
            self._record(line_no, offset, obj)
        elif isinstance(obj.get("sessionId"), str):
            self._metadata(line_no, offset, obj)
        else:
            self._unknown.note("line without id, $set or $rewindTo", line_no)

    def feed_document(self, doc: dict) -> None:
        """A legacy `session-*.json`: one ConversationRecord (its messages have no line of their own)."""
        self._metadata(None, None, doc)

    def _metadata(self, line_no: int | None, offset: int | None, obj: dict) -> None:
        s = self.session
        s.session_id = opt_str(obj.get("sessionId")) or s.session_id
        messages = obj.get("messages")
        if isinstance(messages, list):  # a whole legacy record, on one line or as the document
            for n, m in enumerate(messages):
                if isinstance(m, dict) and isinstance(m.get("id"), str):
                    self._record(line_no, offset, m)
                else:
                    self.warn(line_no, f"messages[{n}]: not a message record (no id), skipped")

    def _record(self, line_no: int | None, offset: int | None, obj: dict) -> None:
        rec = _Record(obj["id"], obj, line_no, offset)
        if self._untold is not None:
            self._tell(rec)
        self.records[rec.id] = rec  # a record written again replaces its earlier copy, in place
        self._note_usage(rec)
        self._check_type(rec)

    def _check_type(self, rec: _Record) -> None:
        kind = rec.type
        if kind not in ("user", "gemini") and kind not in UI_TYPES:
            self._unknown.note(str(kind) if "type" in rec.obj else "message record without type", rec.line)

    def _note_usage(self, rec: _Record) -> None:
        tokens = rec.obj.get("tokens")
        if rec.type != "gemini" or not isinstance(tokens, dict) or rec.id in self.usage:
            return
        if as_int(tokens.get("input")) <= 0 and as_int(tokens.get("output")) <= 0:
            return  # no usage reported
        self.usage[rec.id] = _Usage(tokens, opt_str(rec.obj.get("model")), rec.line, opt_str(rec.obj.get("timestamp")))
        self.last_input = as_int(tokens.get("input")) + as_int(tokens.get("tool"))

    def _rewind(self, line_no: int | None, target: Any) -> None:
        if not isinstance(target, str):
            self.warn(line_no, "$rewindTo without a message id, skipped")
            return
        ids = list(self.records)
        if target in self.records:
            for gone in ids[ids.index(target):]:
                del self.records[gone]
        else:  # what the CLI does with an id it does not know: the whole history goes
            self.warn(line_no, f"$rewindTo names message {target!r}, not in the history: Gemini CLI drops the whole "
                               "history here, and so does this view")
            self.records.clear()
        self.masked = [(anchor, c) for anchor, c in self.masked if anchor is None or anchor in self.records]

    def _set(self, line_no: int | None, offset: int | None, update: dict) -> None:
        s = self.session
        s.session_id = opt_str(update.get("sessionId")) or s.session_id
        messages = update.get("messages")
        if messages is None:
            return
        if not isinstance(messages, list):
            self.warn(line_no, "$set messages is not a list, skipped")
            return
        new: dict[str, _Record] = {}
        for n, m in enumerate(messages):
            if isinstance(m, dict) and isinstance(m.get("id"), str):
                new[m["id"]] = _Record(m["id"], m, line_no, offset)
            else:
                self.warn(line_no, f"$set messages[{n}]: not a message record (no id), skipped")
        ts = opt_str(update.get("lastUpdated"))
        if self._is_compression(new):
            base, active = len(self.frozen), self._messages(list(self.records.values()))
            self.compactions += [c for _, c in self._placed(base, active)]
            self.frozen.extend(m.copy_with() for m in active)  # copies: the cached ones may appear again after it
            self.masked = []
            self.compactions.append(Compaction("compact", len(self.frozen), pre_tokens=self.last_input,
                                               line=line_no, timestamp=ts))
            self._untold = len(self.compactions) - 1
        else:
            cleared = self._newly_masked(new)
            if cleared:
                anchor = next(reversed(self.records), None)
                self.masked.append((anchor, Compaction("microcompact", 0, cleared_tool_ids=tuple(cleared),
                                                       pre_tokens=self.last_input, line=line_no, timestamp=ts)))
        self.records = new
        for rec in new.values():
            self._note_usage(rec)
            self._check_type(rec)

    def _tell(self, rec: _Record) -> None:
        """A compression's trigger, from the record after it (0.61.0, as the lab saw it): the CLI writes `info`
        "Context compressed from N% to M%." after compressing on its own in the app, an `info` with no text after
        `/compress`; headless (`-p`, where /compress is sent as a prompt) it compresses on its own and writes no
        `info`, the turn's prompt comes next. Other records say nothing of it."""
        text = rec.obj.get("content")
        if rec.type == "info" and text == "":
            trigger = "manual"
        elif (rec.type == "info" and isinstance(text, str) and text.startswith("Context compressed")) or \
                rec.type in ("user", "gemini"):
            trigger = "auto"
        else:
            return
        self.compactions[self._untold] = replace(self.compactions[self._untold], trigger=trigger)
        self._untold = None

    def _is_compression(self, new: dict[str, _Record]) -> bool:
        """A history that opens (after the CLI's environment message) with a summary message not seen before."""
        for rec in new.values():
            text = part_text(rec.obj.get("content"))
            if rec.type == "user" and text.lstrip().startswith(META_PREFIXES):
                continue
            return rec.type == "user" and rec.id not in self.records and SUMMARY_TAG in text
        return False

    def _newly_masked(self, new: dict[str, _Record]) -> list[str]:
        """Tool call ids whose output reads masked in `new` but did not before."""
        def masked(records: dict[str, _Record]) -> set[str]:
            out = set()
            for rec in records.values():
                for part in part_list(rec.obj.get("content")):
                    response = part.get("functionResponse") if isinstance(part, dict) else None
                    if isinstance(response, dict) and MASKED_TAG in str(response.get("response")):
                        out.add(str(response.get("id")))
            return out
        return sorted(masked(new) - masked(self.records))

    # -- building -----------------------------------------------------------------------------------------------

    def build(self) -> Session:
        s = self.session
        active = self._messages(list(self.records.values()))
        messages = self.frozen + active
        compactions = self.compactions + [c for _, c in self._placed(len(self.frozen), active)]
        requests, models = self._requests(messages, compactions)
        if self._subagents is None and s.session_id:
            self._subagents = subagent_files(self.path, s.session_id)
        warnings = list(s.warnings) + self._unknown.warnings()
        return s.copy_with(messages=messages, requests=requests, compactions=compactions, warnings=warnings,
                           models=models, subagents=list(self._subagents or ()))

    def _placed(self, base: int, active: list[Message]) -> list[tuple[str | None, Compaction]]:
        """The maskings of the current history with their message index: just after the last message made from
        the record that was newest when they happened."""
        placed = []
        for anchor, c in self.masked:
            index = base + len(active)
            if anchor is not None:
                last = [i for i, m in enumerate(active) if m.uuid == anchor or (m.uuid or "").startswith(anchor + ":")]
                index = base + (last[-1] + 1 if last else len(active))
            placed.append((anchor, Compaction("microcompact", index, pre_tokens=c.pre_tokens,
                                              cleared_tool_ids=c.cleared_tool_ids, line=c.line,
                                              timestamp=c.timestamp)))
        return placed

    def _messages(self, records: list[_Record]) -> list[Message]:
        """The model turns the records make: user turns, model turns, and the tool results of model turns whose
        calls no following user record answers (files written before results were records of their own)."""
        out: list[Message] = []
        for n, rec in enumerate(records):
            kind = rec.type
            if kind == "user":
                out.append(self._cached((rec.id, rec.line, "user"), rec, self._user))
            elif kind == "gemini":
                message = self._cached((rec.id, rec.line, "model"), rec, self._model)
                if message.blocks:
                    out.append(message)
                unanswered = self._unanswered(rec, records, n)
                if unanswered:
                    out.append(self._cached((rec.id, rec.line, "results", unanswered), rec,
                                            lambda r: self._results(r, unanswered)))
        return out

    def _cached(self, key: tuple, rec: _Record, make) -> Message:
        message = self._cache.get(key)
        if message is None:
            message = self._cache[key] = make(rec)
        return message

    def _user(self, rec: _Record) -> Message:
        content = rec.obj.get("content")
        blocks = blocks_from_parts(content)
        text = part_text(content)
        if any(b.type == "tool_result" for b in blocks):
            kind = "tool_result"
        elif SUMMARY_TAG in text:
            kind = "compact_summary"
        elif text.lstrip().startswith(META_PREFIXES):
            kind = "meta"
        else:
            kind = "prompt"
        return self._message("user", kind, blocks, rec)

    def _model(self, rec: _Record) -> Message:
        """A model turn as it was sent back: the content's parts when they hold the calls (a record a `$set`
        rewrote), else the content and then the toolCalls. Thoughts (`thoughts[]`, `thought: true` parts) are left
        out: the CLI keeps them for its UI and never puts them in the history it sends (geminiChat.ts filters
        `!part.thought`)."""
        obj = rec.obj
        content = obj.get("content")
        blocks = [b for b in blocks_from_parts(content) if b.type != "thinking"]
        if not any(b.type == "tool_use" for b in blocks):
            blocks += [Block.of("tool_use", tool_id=opt_str(c.get("id")), tool_name=opt_str(c.get("name")),
                                input=c.get("args") if c.get("args") is not None else {}) for c in _tool_calls(obj)]
        kind = "summary_ack" if part_text(content).startswith("Got it. Thanks for the additional context") \
            else "assistant"
        message = self._message("assistant", kind, blocks, rec)
        message.model = opt_str(obj.get("model"))
        if rec.id in self.usage:
            message.response_id = f"gemini-{rec.id}"
        return message

    def _unanswered(self, rec: _Record, records: list[_Record], n: int) -> tuple[str, ...]:
        """Ids of `rec`'s tool calls that carry a result and that no user record before the next model turn
        answers."""
        calls = [c for c in _tool_calls(rec.obj) if c.get("result") and isinstance(c.get("id"), str)]
        if not calls:
            return ()
        answered: set[str] = set()
        for later in records[n + 1:]:
            if later.type == "gemini":
                break
            if later.type == "user" and has_part(later.obj.get("content"), "functionResponse"):
                answered.update(b.tool_id for b in blocks_from_parts(later.obj.get("content"))
                                if b.type == "tool_result" and b.tool_id)
        return tuple(c["id"] for c in calls if c["id"] not in answered)

    def _results(self, rec: _Record, ids: tuple[str, ...]) -> Message:
        blocks: list[Block] = []
        for call in _tool_calls(rec.obj):
            if call.get("id") not in ids:
                continue
            result = call.get("result")
            if isinstance(result, str):
                blocks.append(Block("tool_result", result, tool_id=call["id"]))
                continue
            made = blocks_from_parts(result)
            for b in made:
                if b.type == "tool_result" and b.tool_id is None:
                    b.tool_id = call["id"]
            blocks += made
        message = self._message("user", "tool_result", blocks, rec)
        message.uuid = f"{rec.id}:results"
        return message

    @staticmethod
    def _message(role: str, kind: str, blocks: list[Block], rec: _Record) -> Message:
        return Message(role, kind, blocks, uuid=rec.id, line=rec.line or None,  # type: ignore
                       offset=rec.offset, timestamp=opt_str(rec.obj.get("timestamp")))

    def _requests(self, messages: list[Message], compactions: list[Compaction]) -> tuple[list[Request], list[str]]:
        """One Request per model turn with usage, at its first message (a turn kept across a compression appears
        again after the boundary, without its usage)."""
        requests: list[Request] = []
        models: list[str] = []
        seen: set[str] = set()
        starts = sorted(c.index for c in compactions if c.kind == "compact")
        for i, m in enumerate(messages):
            if m.response_id is None or m.response_id in seen or m.uuid not in self.usage:
                continue
            seen.add(m.response_id)
            u = self.usage[m.uuid]
            t = u.tokens
            cached = as_int(t.get("cached"))  # inside `input` (promptTokenCount), never added again
            at = bisect.bisect_right(starts, i)  # the last compaction at or before i (a search: thousands of them)
            start = starts[at - 1] if at else 0
            requests.append(Request(m.response_id, u.model, max(0, as_int(t.get("input")) - cached)
                                    + as_int(t.get("tool")), 0, cached, as_int(t.get("output")), message_index=i,
                                    seen_start=start, seen_end=i, line=u.line, timestamp=u.timestamp,
                                    thinking_tokens=as_int(t.get("thoughts"))))
            if u.model and u.model not in models:
                models.append(u.model)
        return requests, models


def _tool_calls(obj: dict) -> list[dict]:
    calls = obj.get("toolCalls")
    return [c for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []


def project_root(path: Path) -> str | None:
    """The project a session belongs to: `.project_root` in its project's temporary directory
    (`tmp/<project>/chats/<file>`, or one level deeper for a subagent's session)."""
    for folder in (path.parent.parent, path.parent.parent.parent):
        marker = folder / ".project_root"
        try:
            if marker.is_file() and marker.stat().st_size < 4096:
                return marker.read_text(encoding="utf-8", errors="replace").strip() or None
        except OSError:
            return None
    return None


def gemini_settings(path: Path, cwd: str | None) -> Stated:
    """The `gemini-cli` policy's options as Gemini CLI's settings set them: `model.compressionThreshold` in the
    settings.json of the Gemini home that holds the session (`tmp/<project>/chats/`), then in the project's own
    `.gemini/settings.json`, as 0.61.0's mergeSettings layers them: system defaults, the user's, the project's, then
    the system settings, the later winning (`harness_config.system_settings`; lab scenario system-threshold); a
    system file is read only where it and its folders are root's alone (`root_owned`), as the CLI reads them.""" 
    tmp = next((folder for folder in path.parents[1:4] if folder.name == "tmp"), None)
    if tmp is None:
        return Stated()
    project = [Path(cwd) / ".gemini" / "settings.json"] if cwd else []
    defaults, system = system_settings("GEMINI_CLI", "/etc/gemini-cli", "/Library/Application Support/GeminiCli")
    files = [defaults, tmp.parent / "settings.json", *project, system]
    return settings_share([f for f in files if f not in (defaults, system) or root_owned(f)], "model",
                          "compressionThreshold")


def subagent_files(path: Path, session_id: str | None) -> list[str]:
    """A session's subagent sessions: `chats/<full session id>/*.jsonl`."""
    if not session_id:
        return []
    folder = path.parent / session_id
    try:
        return sorted(str(p) for p in folder.glob("*.jsonl") if p.is_file())
    except OSError:
        return []
