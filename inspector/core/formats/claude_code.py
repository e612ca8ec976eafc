"""Claude Code transcripts (`~/.claude/projects/<dir>/<session-id>.jsonl`): a stateful loader.

`feed()` takes one parsed line at a time and keeps only what the model saw (blocks of user/assistant entries, the
compaction markers) plus the uuid -> parentUuid links of every other entry, so the chain stays connected through
progress and bookkeeping entries without keeping their payloads. `build()` is cheap and can run after every batch of
appended lines, which is what a live follower does: feed the new lines, build again, no re-reading.

Rules (FORMATS.md section 1): order comes from the parentUuid graph; the active branch runs from the newest
message back to a root, through `logicalParentUuid` at a compact boundary so pre-compaction history stays in
`messages`; one API response split over several assistant lines becomes one message and one Request; sidechain
entries are another window and stay out of the main one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from inspector.core.formats.blocks import as_int, blocks_from_content, opt_int, opt_str, replace_results
from inspector.core.model import Block, Compaction, LoadWarning, Message, Request, Session

CLEARED = "[Old tool result content cleared]"

# Entry types that carry no model context: skipped without a warning (their uuids still link the chain).
BOOKKEEPING = frozenset({
    "progress", "file-history-snapshot", "queue-operation", "summary", "attachment", "system", "custom-title",
    "agent-name", "tag", "last-prompt", "pr-link", "worktree-state", "content-replacement", "marble-origami-commit",
    "marble-origami-snapshot",
})

# Text the harness writes into user messages (the user did not type it): these messages are "meta".
META_PREFIXES = (
    "<local-command-caveat>", "<local-command-stdout>", "<local-command-stderr>", "<command-name>",
    "<command-message>", "<system-reminder>", "<bash-input>", "<bash-stdout>", "<bash-stderr>",
    "<user-prompt-submit-hook>", "[Request interrupted by user",
)

SKIM_WINDOW = 2048  # a progress entry's top-level "type" comes early; never scan a multi-megabyte line for it
_PARENT = re.compile(rb'"parentUuid":(null|"([^"\\]*)")')
SYNTHETIC_MODEL = "<synthetic>"  # Claude Code's placeholder model on locally made assistant messages (API errors)


@dataclass(slots=True)
class _Record:
    """A user/assistant entry or a compaction marker, parsed when fed; the raw line is dropped."""

    uuid: str
    kind: str  # "user", "assistant", "compact", "microcompact"
    line: int
    offset: int
    timestamp: str | None = None
    blocks: list[Block] = field(default_factory=list)
    msg_kind: str = "prompt"
    response_id: str | None = None
    model: str | None = None
    usage: tuple[int, int, int, int] | None = None
    logical_parent: str | None = None
    meta: dict | None = None


class _Graph:
    """One window's entries: every uuid's parent and file position, and the records that hold content."""

    __slots__ = ("nodes", "order", "records", "tip")

    def __init__(self) -> None:
        self.nodes: dict[str, tuple[str | None, int]] = {}
        self.order: list[str] = []
        self.records: dict[str, _Record] = {}
        self.tip: str | None = None  # the newest record: the end of the active branch


class ClaudeCodeLoader:
    """Feed parsed lines in file order with `feed`, then `build` a Session (as often as you like)."""

    def __init__(self, source: str, subagents: list[str] | None = None) -> None:
        self.source = source
        self.subagents = list(subagents or [])
        self.warnings: list[LoadWarning] = []
        self.main = _Graph()
        self.side = _Graph()
        self.cwd: str | None = None
        self.session_id: str | None = None
        self.version: str | None = None
        self.duplicates = 0
        self._unknown: dict[str, list[int]] = {}  # type -> [count, first line]

    def warn(self, line: int | None, message: str) -> None:
        self.warnings.append(LoadWarning(line, message))

    def feed(self, line_no: int, offset: int, obj: Any) -> None:
        """Take one parsed line. Never raises on odd content: odd lines become warnings."""
        if not isinstance(obj, dict):
            self.warn(line_no, f"not a JSON object ({type(obj).__name__}), skipped")
            return
        kind = opt_str(obj.get("type"))
        uuid = obj.get("uuid")
        if uuid.__class__ is not str:
            if kind not in BOOKKEEPING:
                self._note_unknown(kind, line_no)
            return
        graph = self.side if obj.get("isSidechain") else self.main
        if uuid in graph.nodes:
            self.duplicates += 1  # resumed sessions repeat earlier entries: the first copy stands
            return
        parent = obj.get("parentUuid")
        graph.nodes[uuid] = (parent if parent.__class__ is str else None, len(graph.order))
        graph.order.append(uuid)
        if kind == "progress":  # the bulk of every file: its id links the chain, nothing else is kept
            return
        if self.cwd is None and isinstance(obj.get("cwd"), str):
            self.cwd = obj["cwd"]
            self.session_id = obj.get("sessionId")
        if isinstance(obj.get("version"), str):
            self.version = obj["version"]
        record = self._record(uuid, kind, line_no, offset, obj)
        if record is not None:
            graph.records[uuid] = record
            if record.kind in ("user", "assistant"):
                graph.tip = uuid
        elif kind not in BOOKKEEPING:
            self._note_unknown(kind, line_no)

    def skim(self, line_no: int, offset: int, raw: bytes) -> bool:
        """Take a progress entry's ids straight from its raw line, without parsing its payload. Returns False (so
        the line is parsed) unless the line is unambiguous: `"type":"progress"`, `parentUuid` and `isSidechain`
        before any nested value, `uuid` after the last one, braces balanced. Progress is half a file's bytes."""
        i = raw.find(b'"type":"progress"', 0, SKIM_WINDOW)
        if i < 0:
            return False
        head = raw[:i]
        if head.count(b"{") != 1 or b"[" in head or b'"isSidechain":' not in head:
            return False
        j = raw.rfind(b'"uuid":"')
        tail = raw[j + 8:].rstrip()
        if j < i or tail.count(b"}") != 1 or not tail.endswith(b"}") or raw.count(b"{") != raw.count(b"}"):
            return False
        parent = _PARENT.search(head)
        end = tail.find(b'"')
        if parent is None or end < 0 or b"\\" in tail[:end]:
            return False
        try:
            uuid = tail[:end].decode()
            parent_uuid = parent.group(2).decode() if parent.group(2) is not None else None
        except UnicodeDecodeError:  # bytes that are no UTF-8: the slow path reads (and reports) them
            return False
        graph = self.side if b'"isSidechain":true' in head else self.main
        if uuid in graph.nodes:
            self.duplicates += 1
        else:
            graph.nodes[uuid] = (parent_uuid, len(graph.order))
            graph.order.append(uuid)
        return True

    def _note_unknown(self, kind: Any, line_no: int) -> None:
        seen = self._unknown.setdefault(str(kind), [0, line_no])
        seen[0] += 1

    def _record(self, uuid: str, kind: Any, line_no: int, offset: int, obj: dict) -> _Record | None:
        ts = obj.get("timestamp")
        if kind in ("user", "assistant"):
            message = obj.get("message")
            if not isinstance(message, dict):
                return None
            blocks = blocks_from_content(message.get("content"))
            rec = _Record(uuid, kind, line_no, offset, ts, blocks)
            if kind == "user":
                rec.msg_kind = _user_kind(obj, blocks)
                return rec
            rec.msg_kind = "assistant"
            rec.response_id = message.get("id") if isinstance(message.get("id"), str) else None
            rec.model = message.get("model") if isinstance(message.get("model"), str) else None
            usage = message.get("usage")
            if isinstance(usage, dict) and rec.model != SYNTHETIC_MODEL:
                rec.usage = (as_int(usage.get("input_tokens")), as_int(usage.get("cache_creation_input_tokens")),
                             as_int(usage.get("cache_read_input_tokens")), as_int(usage.get("output_tokens")))
            return rec
        if kind == "system" and obj.get("subtype") in ("compact_boundary", "microcompact_boundary"):
            compact = obj["subtype"] == "compact_boundary"
            meta = obj.get("compactMetadata" if compact else "microcompactMetadata")
            logical = obj.get("logicalParentUuid")
            return _Record(uuid, "compact" if compact else "microcompact", line_no, offset, ts,
                           logical_parent=logical if isinstance(logical, str) else None,
                           meta=meta if isinstance(meta, dict) else {})
        return None

    def build(self) -> Session:
        """The Session as of the lines fed so far."""
        graph = self.main if self.main.tip is not None else self.side
        session = Session(source=self.source, format="claude-code", cwd=self.cwd, session_id=self.session_id,
                          version=self.version, subagents=list(self.subagents))
        session.warnings = list(self.warnings)
        for kind, (count, first) in self._unknown.items():
            times = f"{count} entries" if count > 1 else "1 entry"
            session.warnings.append(LoadWarning(first, f"skipped {times} of unknown type {kind!r}"))
        selected = self._active_branch(graph, session.warnings)
        _assemble(session, selected)
        return session

    def _active_branch(self, graph: _Graph, warnings: list[LoadWarning]) -> list[_Record]:
        """Records on the path from the newest message back to a root, plus the pieces of its responses that
        Claude Code links off the path (parallel tool calls), in file order."""
        selected: dict[str, _Record] = {}
        visited: set[str] = set()
        cur: str | None = graph.tip
        child_seq: int | None = None
        gaps, first_gap = 0, None
        while cur is not None and cur not in visited:
            node = graph.nodes.get(cur)
            if node is None:  # a parent we never saw (a corrupt or removed line): go on from the line before
                if not child_seq:
                    break
                gaps += 1
                if first_gap is None:
                    first_gap = graph.records.get(graph.order[child_seq])
                cur = graph.order[child_seq - 1]
                child_seq = None
                continue
            visited.add(cur)
            parent, child_seq = node
            rec = graph.records.get(cur)
            if rec is not None:
                selected[cur] = rec
                if parent is None and rec.logical_parent:
                    parent = rec.logical_parent
            cur = parent
        if cur in visited:  # the walk came back to an entry it had passed: the parentUuid links form a cycle
            rec = graph.records.get(cur)
            warnings.append(LoadWarning(rec.line if rec else None, "parentUuid links form a cycle; the branch "
                                                                   "stops where it repeats"))
        if gaps:
            line = first_gap.line if first_gap is not None else None
            warnings.append(LoadWarning(line, f"{gaps} entr{'y points' if gaps == 1 else 'ies point'} to a parent "
                                              "not in this file (a corrupt line, or a partial copy); "
                                              "followed file order across the gap"))
        # Claude Code hangs a response's later lines and their tool results off earlier lines: pull them back in.
        responses = {r.response_id for r in selected.values() if r.kind == "assistant" and r.response_id}
        for uuid, rec in graph.records.items():
            if uuid not in selected and rec.kind == "assistant" and rec.response_id in responses:
                selected[uuid] = rec
        used = {b.tool_id for r in selected.values() if r.kind == "assistant" for b in r.blocks if b.type == "tool_use"}
        answered = {b.tool_id for r in selected.values() if r.kind == "user" for b in r.blocks
                    if b.type == "tool_result"}
        open_ids = used - answered
        if open_ids:
            for uuid, rec in graph.records.items():
                if uuid in selected or rec.kind != "user" or rec.msg_kind != "tool_result":
                    continue
                ids = {b.tool_id for b in rec.blocks if b.type == "tool_result"}
                if ids and ids <= open_ids:
                    selected[uuid] = rec
                    open_ids -= ids
        return sorted(selected.values(), key=lambda r: r.line)


def _assemble(session: Session, records: list[_Record]) -> None:
    """Turn the active branch's records into messages, requests and compactions."""
    messages, compactions = session.messages, session.compactions
    requests_by_id: dict[str, Request] = {}
    by_response: dict[str, Message] = {}
    context_start = 0
    for rec in records:
        if rec.kind in ("compact", "microcompact"):
            meta = rec.meta or {}
            if rec.kind == "compact":
                context_start = len(messages)
                compactions.append(Compaction("compact", len(messages), trigger=opt_str(meta.get("trigger")),
                                              pre_tokens=opt_int(meta.get("preTokens")), line=rec.line,
                                              timestamp=rec.timestamp))
            else:
                ids = tuple(i for i in meta.get("compactedToolIds") or () if isinstance(i, str))
                compactions.append(Compaction("microcompact", len(messages), trigger=opt_str(meta.get("trigger")),
                                              pre_tokens=opt_int(meta.get("preTokens")),
                                              tokens_saved=opt_int(meta.get("tokensSaved")),
                                              cleared_tool_ids=ids, line=rec.line, timestamp=rec.timestamp))
                replace_results(messages, dict.fromkeys(ids, CLEARED))
            continue
        message = by_response.get(rec.response_id) if rec.response_id else None
        if message is not None:  # a later line of a response already started: same message, same Request
            message.blocks.extend(rec.blocks)
            message.lines += (rec.line,)
            if rec.usage is not None:
                request = requests_by_id.get(message.response_id or "")
                if request is None:
                    _add_request(session, rec, messages.index(message), context_start, requests_by_id)
                else:  # every line repeats the usage; output_tokens is final only on the last one
                    request.input_tokens, request.cache_creation, request.cache_read, request.output_tokens = rec.usage
            continue
        role = "assistant" if rec.kind == "assistant" else "user"
        message = Message(role, rec.msg_kind, list(rec.blocks), uuid=rec.uuid, lines=(rec.line,), offset=rec.offset,
                          timestamp=rec.timestamp, model=rec.model, response_id=rec.response_id)
        if rec.response_id:
            by_response[rec.response_id] = message
        messages.append(message)
        if rec.usage is not None:
            _add_request(session, rec, len(messages) - 1, context_start, requests_by_id)


def _add_request(session: Session, rec: _Record, index: int, context_start: int,
                 requests_by_id: dict[str, Request]) -> None:
    assert rec.usage is not None
    request = Request(rec.response_id or f"line-{rec.line}", rec.model, *rec.usage, message_index=index,
                      seen_start=context_start, seen_end=index, line=rec.line, timestamp=rec.timestamp)
    session.messages[index].response_id = request.id
    session.requests.append(request)
    requests_by_id[request.id] = request
    if rec.model and rec.model not in session.models:
        session.models.append(rec.model)


def _user_kind(obj: dict, blocks: list[Block]) -> str:
    if obj.get("isCompactSummary"):
        return "compact_summary"
    if any(b.type == "tool_result" for b in blocks):
        return "tool_result"
    if obj.get("isMeta") or obj.get("isVisibleInTranscriptOnly"):
        return "meta"
    return "meta" if injected(blocks) else "prompt"


def injected(blocks: list[Block]) -> bool:
    """True when every text block is harness-written (caveats, command wrappers, reminders): nothing typed."""
    texts = [b.text for b in blocks if b.type == "text"]
    return bool(texts) and all(t.lstrip().startswith(META_PREFIXES) for t in texts)
