"""Claude Code transcripts (`~/.claude/projects/<dir>/<session-id>.jsonl`): a stateful loader.

`feed()` takes one parsed line at a time and keeps only what the model saw (blocks of user/assistant entries, the
compaction markers) plus the uuid -> parentUuid links of every other entry, so the chain stays connected through
progress and bookkeeping entries without keeping their payloads. A line comes typed (`claude_code_lines`: the common
kinds, decoded straight into structs of the fields read) or as the generic JSON path made it (a dict: every other
line, and any the types do not fit), and reads the same either way. `build()` is cheap and can run after every batch of
appended lines, which is what a live follower does: feed the new lines, build again, no re-reading.

Rules (FORMATS.md section 1): order comes from the parentUuid graph; the active branch runs from the newest
message back to a root, through `logicalParentUuid` at a compact boundary so pre-compaction history stays in
`messages`; one API response split over several assistant lines becomes one message and one Request; sidechain
entries are another window and stay out of the main one.

Claude Code 2.1.332 also records every request it sends (claude_code_records.py: the session's `sent` log, linked
to each Request by `sent_id`) and the system-reminders it injects as `attachment` entries: those with `rendered`
text become messages (`Message.attachment` names their type) in the role they were sent as.
"""

from __future__ import annotations

import sys
from array import array
from itertools import accumulate, compress, count, islice, repeat
from operator import attrgetter, eq, is_not, itemgetter, ne
from pathlib import Path
from typing import Any, ClassVar, Iterable, Sequence

import orjson
from msgspec import Struct, structs

from inspector.core.formats.blocks import (NestedTooDeep, as_int, as_list, blocks_from_content, edited_message, opt_int,
                                           opt_str, replaced_message)
from inspector.core.formats.claude_code_records import (
    COST_STATE, IGNORED, REQUEST_RECORDS, RequestRecorder, agent_cost, attachment_type, reminder,
)
from inspector.core.formats.claude_code_lines import TYPED, AgentResult, Assistant, Line, User, decoder, envelope
from inspector.core.formats.claude_code_lines import block as typed_block
from inspector.core.formats.claude_code_lines import blocks as typed_blocks
from inspector.core.formats.harness_config import Stated, read_json
from inspector.core.formats.jsonl import UnknownKinds, loads
from inspector.core.limits import OVERRIDE_ENV
from inspector.core.model import AgentCost, Block, Compaction, LoadWarning, Message, Request, Session

CLEARED = "[Old tool result content cleared]"
CLEAR_TOOL_USES = "clear_tool_uses_20250919"  # the API's context edit that clears old tool results
# Our own key on the lines we export (Claude Code ignores keys it does not know). On compaction boundaries: what a
# microcompaction changed (`before`: message uuid -> its content before) and what a summary kept verbatim
# (`keptFrom`: the uuid of the first message kept; `added`: the messages written before the copies). On a summary's
# acknowledgement: `kind: summary_ack`.
EXTENSION = "contextInspector"

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

MESSAGE_KINDS = frozenset({"user", "assistant"})
SYNTHETIC_MODEL = "<synthetic>"  # Claude Code's placeholder model on locally made assistant messages (API errors)
MAX_CONFLICT_WARNINGS = 20  # uuids repeated with other content warned one by one; beyond, one line counts the rest


class _Response(Struct, gc=False):
    """An assistant entry's record: its message, as this line alone makes it, and what its Request takes from the
    line (`uuid` and `response_id` are the message's, which the walks read from any record). A user entry's record
    is its Message itself and a boundary's a `_Marker`: beyond what the session keeps, the loader holds this struct
    (made in C, no collector header) for a response and nothing for a user entry, 100,000 times a session. A build
    puts the record's message itself in the session: the assembler copies it before changing it (a later line of
    the same response), so the record stays as the line made it."""

    kind: ClassVar[str] = "assistant"
    uuid: str
    response_id: str | None
    message: Message
    input_tokens: int | None  # None: the line has no usage (or Claude Code made it: an API error)
    cache_creation: int
    cache_read: int
    output_tokens: int
    write_1h: int  # of the cache creation, what was written with the one-hour TTL
    sent_id: str | None  # the api-request it answers (requestRef)
    cleared: tuple[int, int, frozenset[str]] | None  # the API cleared tool results for its request (context
    # editing): (results cleared, input tokens saved, tools it never clears), as reported


class _Marker(Struct, gc=False):
    """A compaction boundary's record."""

    response_id: ClassVar[None] = None
    uuid: str
    kind: str  # "compact", "microcompact"
    line: int
    timestamp: str | None
    logical_parent: str | None
    meta: dict
    ext: dict | None


Record = Message | _Response | _Marker  # an entry that holds content: a user entry's record is its Message


class Loose(Struct, gc=False):
    """A line the generic JSON path parsed (`raw`), with what linking reads taken out as a typed entry has it."""

    kind: str | None
    uuid: str | None
    parentUuid: str | None
    isSidechain: bool
    cwd: str | None
    sessionId: Any
    version: str | None
    toolUseResult: AgentResult | None
    raw: dict


class _Graph:
    """One window's entries: every uuid's position in file order (`order[seq]` is the uuid, `parents[seq]` its
    parent, `records[seq]` its record or None: flat lists, not a tuple an entry, appended to a run at a time)."""

    __slots__ = ("nodes", "order", "parents", "records", "jumps", "tip")

    def __init__(self) -> None:
        self.nodes: dict[str, int] = {}  # uuid -> seq
        self.order: list[str] = []
        self.parents: list[str | None] = []
        self.records: list[Record | None] = []
        # the seqs whose parent is not the entry before them, noted as they are linked (`_chain` looks at them alone)
        self.jumps = array("q")
        self.tip: str | None = None  # the newest record: the end of the active branch

    def record(self, uuid: str) -> Record | None:
        seq = self.nodes.get(uuid)
        return self.records[seq] if seq is not None else None

    def held(self) -> list[Record]:
        """The records, in file order."""
        return list(compress(self.records, map(is_not, self.records, _NONE)))  # type: ignore[arg-type]


# Where Claude Code reads managed (policy) settings, which override every other source
MANAGED_SETTINGS = Path("/Library/Application Support/ClaudeCode" if sys.platform == "darwin" else "/etc/claude-code")


def managed_settings_files() -> list[Path]:
    """The managed settings files, in the order they apply: managed-settings.json, then managed-settings.d/*.json
    by name."""
    try:
        drop_ins = sorted((MANAGED_SETTINGS / "managed-settings.d").glob("*.json"))
    except OSError:
        drop_ins = []
    return [MANAGED_SETTINGS / "managed-settings.json", *drop_ins]


def claude_settings(path: Path, cwd: str | None) -> Stated:
    """The `claude-code` policy's options as Claude Code's settings set them: CLAUDE_AUTOCOMPACT_PCT_OVERRIDE in the
    `env` of the settings.json of the Claude home that holds the session (`projects/<project>/`), then of the
    project's `.claude/settings.json` and `.claude/settings.local.json`, then of the managed settings, the later
    winning, as Claude Code applies them (where users set it; the inspector's own environment is the fallback,
    limits.py; lab scenario managed-override: the managed file's 50 over the user's 70); and
    `autoCompactEnabled: false` in its `.claude.json` (beside the Claude home, or in it under CLAUDE_CONFIG_DIR)."""
    projects = next((folder for folder in path.parents[1:4] if folder.name == "projects"), None)
    if projects is None:
        return Stated()
    home = projects.parent  # ~/.claude, or $CLAUDE_CONFIG_DIR, which holds its .claude.json itself
    config = home / ".claude.json" if (home / ".claude.json").is_file() else home.parent / ".claude.json"
    off = read_json(config).get("autoCompactEnabled") is False  # /config's "Auto-compact" switch
    files = [home / "settings.json"]
    if cwd:
        files += [Path(cwd) / ".claude" / "settings.json", Path(cwd) / ".claude" / "settings.local.json"]
    files += managed_settings_files()
    stated = Stated()
    for settings in files:
        env = read_json(settings).get("env")
        value = env.get(OVERRIDE_ENV) if isinstance(env, dict) else None
        try:
            number = float(value) if value.__class__ in (str, int, float) else None
        except ValueError:
            number = None
        if number is not None and 0 < number <= 100:
            stated.set("autocompact_pct", number, settings)
    if off:
        stated.set("autocompact_enabled", 0, config)
    return stated


class ClaudeCodeLoader:
    """Feed parsed lines in file order with `feed_run` (a run of lines) or `feed` (one), then `build` a Session (as
    often as you like). `decoder` picks the parse of raw lines into the typed entries `feed_run` takes fastest
    (`jsonl.read_jsonl`'s `decoder`)."""

    decoder = staticmethod(decoder)

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
        self.conflicts: set[str] = set()  # uuids repeated with content other than their first copy's
        self._unknown = UnknownKinds()
        self._branch: _Branch | None = None  # the last build's branch, extended by the next build when it can be
        self.last_build: tuple[str, int] = ("full", 0)  # ("full", entries) or ("extended", steps): a work counter
        self._steps = 0
        self.recorder = RequestRecorder(source)
        self._transcripts = self.recorder.transcript.offsets.extend
        self.spawns: dict[str, str] = {}  # tool_use id -> the agent id of the subagent it started
        self._calls: dict[str, str] = {}  # the tool calls read but not answered yet, by id (`typed_blocks`)
        self.cost: AgentCost | None = None  # the last `cost-state`: Claude Code's own figure of the session's cost
        self._settings: tuple[str | None, dict[str, float]] = ("", {})  # (the cwd they were read for, them)

    def warn(self, line: int | None, message: str) -> None:
        self.warnings.append(LoadWarning(line, message))

    def unlinked(self, start: int = 0) -> bool:
        """Whether an entry of the main chain from its `start`-th on names a parent no line fed holds: what a read
        begun mid-file (the status line's, from a compaction boundary) sees when the chain reaches back before it."""
        nodes = self.main.nodes
        return any(parent is not None and parent not in nodes for parent in self.main.parents[start:])

    def entries(self) -> int:
        """Entries of the main chain fed so far (`unlinked`'s `start`)."""
        return len(self.main.order)

    def feed(self, line_no: int, offset: int, obj: Any) -> None:
        """Take one line as the generic JSON path parsed it: a run of one (`feed_run`)."""
        self.feed_run(line_no, (offset,), [obj], (b"",))

    def feed_run(self, first: int, offsets: Sequence[int], objs: list, raws: Sequence[bytes]) -> None:
        """Take a run of consecutive parsed lines, `first` the number of the first, and their raw lines: typed entries
        (`claude_code_lines.decode`, the common shapes) or whatever the generic JSON path made of a line. Never raises
        on odd content: odd lines become warnings. Every line of a session comes through here, so the run is linked a
        column at a time (C-level passes over its uuids and parents); it is cut only where an entry needs a step of
        its own (a repeated uuid, a change of window), and lines of the generic path come one at a time."""
        if not TYPED.issuperset(map(type, objs)):
            if len(objs) > 1:  # one at a time: each may warn, in line order
                for i in range(len(objs)):
                    self.feed_run(first + i, offsets[i:i + 1], objs[i:i + 1], raws[i:i + 1])
                return
            obj = self._loose(first, objs[0])
            if obj is None:
                return
            objs = [obj]
        lines: Sequence[int] = range(first, first + len(objs))
        kinds = list(map(_KIND, objs))
        # every user and assistant line, as Claude Code hashes them (repeats too)
        self._transcripts(offsets if kinds.count("user") + kinds.count("assistant") == len(kinds) else
                          compress(offsets, map(MESSAGE_KINDS.__contains__, kinds)))
        uuids = list(map(_UUID, objs))
        notes: list[tuple[int, str]] = []  # (line, kind) of entries of a kind not known, noted in line order
        if None in uuids:  # entries without one link nothing
            keep = list(map(is_not, uuids, repeat(None)))
            notes += [(line, kind) for line, kind, kept in zip(lines, kinds, keep)
                      if not kept and kind not in BOOKKEEPING]
            lines, offsets, objs, raws, kinds, uuids = (list(compress(column, keep))
                                                        for column in (lines, offsets, objs, raws, kinds, uuids))
        if not any(map(_SIDE, objs)):
            self._link(self.main, lines, offsets, objs, raws, kinds, uuids, notes)
        else:  # a sidechain's entries: another window
            sides = list(map(_SIDE, objs))
            cuts = [0, *compress(count(1), map(ne, sides, islice(sides, 1, None))), len(objs)]  # runs of one window
            for lo, hi in zip(cuts, islice(cuts, 1, None)):
                if lo < hi:
                    self._link(self.side if sides[lo] else self.main, lines[lo:hi], offsets[lo:hi], objs[lo:hi],
                               raws[lo:hi], kinds[lo:hi], uuids[lo:hi], notes)
        for line, kind in sorted(notes, key=itemgetter(0)):
            self._unknown.note(kind, line)

    def _link(self, graph: _Graph, lines: Sequence[int], offsets: Sequence[int], objs: list, raws: Sequence[bytes],
              kinds: list, uuids: list[str], notes: list[tuple[int, str]]) -> None:
        """Entries of one window: new ones linked a run at a time (`_new`), a repeated uuid on its own."""
        nodes, lo, seq = graph.nodes, 0, len(graph.order)
        if uuids and nodes.keys().isdisjoint(uuids):  # the common run, all new: their seqs set in one C-level update
            nodes.update(zip(uuids, count(seq)))
            if len(nodes) == seq + len(uuids):
                self._new(graph, lines, offsets, objs, raws, kinds, uuids, notes)
                return
            for uuid in uuids:  # a uuid twice in the run: taken back, and the run linked as below
                nodes.pop(uuid, None)
        while lo < len(uuids):
            seq = len(graph.order)
            # one setdefault a uuid, which gives a new one its own seq, up to the first seen before (or twice)
            hi = lo + next(compress(count(), map(ne, map(nodes.setdefault, islice(uuids, lo, None), count(seq)),
                                                 count(seq))), len(uuids) - lo)
            if lo < hi:
                whole = lo == 0 and hi == len(uuids)
                self._new(graph, *((lines, offsets, objs, raws, kinds, uuids) if whole else
                                   (column[lo:hi] for column in (lines, offsets, objs, raws, kinds, uuids))), notes)
            if hi < len(uuids):
                self._repeated(graph, uuids[hi], kinds[hi], lines[hi], offsets[hi], objs[hi])
            lo = hi + 1

    def _new(self, graph: _Graph, lines: Sequence[int], offsets: Sequence[int], objs: list, raws: Sequence[bytes],
             kinds: list, uuids: list[str], notes: list[tuple[int, str]]) -> None:
        """New entries of one window, their uuids already in `graph.nodes`: their order and parents, the records
        of those that hold content, and where and by which version the session ran (the first entry held that names a
        cwd, `_where`; the last that names a version)."""
        order, nodes = graph.order, graph.nodes
        parents = list(map(_PARENT, objs))
        before = [order[-1] if order else None, *islice(uuids, len(uuids) - 1)]  # the entry before each
        order.extend(uuids)
        if not all(map(eq, parents, before)):  # not each the child of the entry before it
            first = len(order) - len(uuids)
            for i in compress(count(), map(ne, parents, before)):
                graph.jumps.append(first + i)
                parent = parents[i]
                at = nodes.get(parent) if parent is not None else None
                # the parent's own string (this line's copy is freed with the line): 85 bytes a line
                before[i] = order[at] if at is not None else parent
        graph.parents.extend(before)
        if kinds.count("progress") == len(kinds):  # the bulk of every file: their ids link the chain, nothing else
            graph.records.extend(repeat(None, len(kinds)))
            return
        progress = "progress" in kinds
        held: Sequence[int] = list(compress(count(), map(ne, kinds, repeat("progress")))) if progress else \
            range(len(kinds))
        if self.cwd is None:
            self.cwd, self.session_id = next((w for w in (_where(objs[i], raws[i]) for i in held) if w[0] is not None),
                                             (None, None))
        version = next((v for v in (objs[i].version for i in reversed(held)) if v is not None), None)
        if version is not None and version != self.version:
            self.version = version
        columns = (uuids, kinds, lines, offsets, objs)
        made, agents = self._records(*(map(column.__getitem__, held) for column in columns) if progress else columns)
        if not progress:
            graph.records += made
        else:
            records: list[Record | None] = [None] * len(kinds)
            for i, record in zip(held, made):
                records[i] = record
            graph.records += records
        if None in made:  # entries that only link the chain
            notes += [(lines[i], kinds[i]) for i, record in zip(held, made)
                      if record is None and kinds[i] not in BOOKKEEPING]
        if graph is self.main:  # tool results that name the subagent they ran
            for record, agent in agents:
                if agent is not None and record is not None:
                    self._spawned(agent, record)
        tip = next((record for record in reversed(made) if record is not None and record.kind != "compact"), None)
        if tip is not None:  # a boundary may end the file (our export)
            graph.tip = tip.uuid

    def _loose(self, line_no: int, obj: Any) -> Loose | None:
        """A line the generic path parsed, as `feed` reads it (None: taken here, or skipped with a warning)."""
        if obj.__class__ is not dict:
            self.warn(line_no, f"not a JSON object ({type(obj).__name__}), skipped")
            return None
        get = obj.get
        kind = get("type")
        if kind.__class__ is not str:
            kind = None
        elif kind in REQUEST_RECORDS:
            problem = self.recorder.feed(kind, line_no, obj)
            if problem:
                self.warn(line_no, problem)
            return None
        elif kind == COST_STATE:
            self.cost = agent_cost(obj) or self.cost
            return None
        elif kind in IGNORED:
            return None
        uuid, parent, version = get("uuid"), get("parentUuid"), get("version")
        result = get("toolUseResult")
        agent = result.get("agentId") if result.__class__ is dict else None
        return Loose(kind, uuid if uuid.__class__ is str else None, parent if parent.__class__ is str else None,
                     bool(get("isSidechain")), *_where_of(obj), version if version.__class__ is str else None,
                     AgentResult(agent) if isinstance(agent, str) else None, obj)

    def _spawned(self, agent: str, record: Message) -> None:
        """A tool result that hands back a subagent's report names the subagent (`toolUseResult.agentId`, whose
        window is `agent-<id>.jsonl`): remember which tool call started it."""
        for b in record.blocks:
            if b.type == "tool_result" and b.tool_id:
                self.spawns[b.tool_id] = agent

    def _repeated(self, graph: _Graph, uuid: str, kind: Any, line_no: int, offset: int, obj: Line | Loose) -> None:
        """A uuid seen before: the first copy stands. A resumed session repeats earlier entries as they were, which
        is silent; a repeat that says something else (other content, parent or kind) is an anomaly, warned once per
        uuid. What is compared is what the loader keeps (envelope fields such as sessionId may differ), and only
        for repeats, so lines seen once cost nothing."""
        self.duplicates += 1
        if uuid in self.conflicts:
            return
        first = graph.record(uuid)
        again = self._record(uuid, kind, line_no, offset, obj) if kind != "progress" else None
        if graph.parents[graph.nodes[uuid]] == obj.parentUuid and _same(first, again):
            return
        self.conflicts.add(uuid)
        if len(self.conflicts) <= MAX_CONFLICT_WARNINGS:
            than = f" than line {_line(first)}" if first is not None else ""
            self.warn(line_no, f"uuid {uuid[:64]!r} repeated at line {line_no} with different content{than}; "
                               "the first is kept")

    def _record(self, uuid: str, kind: Any, line_no: int, offset: int, obj: Line | Loose) -> Record | None:
        """The record of a new entry (None: an entry that only links the chain)."""
        return self._records([uuid], [kind], [line_no], [offset], [obj])[0][0]

    def _records(self, uuids: Iterable[str], kinds: Iterable[Any], lines: Iterable[int], offsets: Iterable[int],
                 objs: Iterable[Line | Loose]) -> tuple[list[Record | None], list[tuple[Record | None, str | None]]]:
        """The records of new entries, each None where the entry only links the chain: one loop for a run (every
        line of a session comes through here: no call a line but where its blocks are made). And the user entries
        whose tool result hands back a subagent's report (`toolUseResult.agentId`), with the agent it names."""
        made: list[Record | None] = []
        agents: list[tuple[Record | None, str | None]] = []
        add, calls, respond = made.append, self._calls, self.recorder.respond
        for uuid, kind, line_no, offset, obj in zip(uuids, kinds, lines, offsets, objs):
            cls = obj.__class__
            if cls is not User and cls is not Assistant:
                record = self._loose_record(uuid, kind, line_no, offset, obj.raw) if cls is Loose else None  # type: ignore[union-attr]
                add(record)
                if cls is Loose and kind == "user" and obj.toolUseResult is not None:  # type: ignore[union-attr]
                    agents.append((record, obj.toolUseResult.agentId))  # type: ignore[union-attr]
                continue
            message = obj.message  # type: ignore[union-attr]
            if message is None:
                add(None)
                continue
            content = message.content
            try:  # most entries hold one block: made here, without `typed_blocks`'s own call
                blocks = [typed_block(content[0], calls, 0)] if content.__class__ is list and len(content) == 1 else \
                    typed_blocks(content, calls)
            except NestedTooDeep as exc:
                blocks = self._unread(exc, line_no)
            ts = obj.timestamp  # type: ignore[union-attr]
            if cls is User:
                summary, result = obj.isCompactSummary, obj.toolUseResult  # type: ignore[union-attr]
                record = Message("user", "tool_result" if blocks and blocks[0].type == "tool_result" and not summary
                                 else _user_kind(summary, obj.isMeta or obj.isVisibleInTranscriptOnly, blocks),  # type: ignore[union-attr]
                                 blocks, uuid, line_no, offset, ts)
                add(record)
                if result.__class__ is AgentResult:
                    agents.append((record, result.agentId))  # type: ignore[union-attr]
                continue
            rid, model = message.id, message.model
            if model is not None:
                model = sys.intern(model)  # one string for every line of a model
            ref = obj.requestRef  # type: ignore[union-attr]
            if ref is not None and rid:
                respond(ref, rid)
            u = message.usage
            response = Message("assistant", "assistant", blocks, uuid, line_no, offset, ts, model, rid)
            if u is None or model == SYNTHETIC_MODEL:
                add(_Response(uuid, rid, response, None, 0, 0, 0, 0, ref, None))
                continue
            split, creation = u.cache_creation, u.cache_creation_input_tokens  # and what was written with the 1-hour TTL
            add(_Response(uuid, rid, response, u.input_tokens, creation, u.cache_read_input_tokens, u.output_tokens,
                          min(creation, split.ephemeral_1h_input_tokens) if split is not None else 0, ref, None))
        return made, agents

    def _unread(self, exc: NestedTooDeep, line_no: int) -> list[Block]:
        """The blocks of content nested too deeply to read: a placeholder, and a warning. The entry stays (a link of
        the chain), its content unread."""
        self.warn(line_no, f"content not read: {exc}")
        return [Block("text", f"[content not read: {exc}]")]

    def _loose_record(self, uuid: str, kind: Any, line_no: int, offset: int, obj: dict) -> Record | None:
        ts = obj.get("timestamp")
        if ts.__class__ is not str:
            ts = self._timestamp(ts, line_no)
        if kind == "user" or kind == "assistant":
            message = obj.get("message")
            if message.__class__ is not dict:
                return None
            try:
                blocks = blocks_from_content(message.get("content"))
            except NestedTooDeep as exc:
                blocks = self._unread(exc, line_no)
            if kind == "user":
                return Message("user", _user_kind(bool(obj.get("isCompactSummary")), bool(  # type: ignore[arg-type]
                    obj.get("isMeta") or obj.get("isVisibleInTranscriptOnly")), blocks), blocks, uuid, line_no, offset,
                               ts)
            # a summary's acknowledgement we exported says so (Claude Code has no such kind)
            ext = obj.get(EXTENSION)
            msg_kind = "summary_ack" if ext.__class__ is dict and ext.get("kind") == "summary_ack" else "assistant"
            rid, model = message.get("id"), message.get("model")
            rid = rid if rid.__class__ is str else None
            model = sys.intern(model) if model.__class__ is str else None  # one string for every line of a model
            ref = obj.get("requestRef")
            if ref.__class__ is str:
                if rid:
                    self.recorder.respond(ref, rid)
            else:
                ref = None
            cleared = self._server_cleared(message, ref) if "context_management" in message else None
            usage = message.get("usage")
            made = Message("assistant", msg_kind, blocks, uuid, line_no, offset, ts, model, rid)  # type: ignore[arg-type]
            if usage.__class__ is not dict or model == SYNTHETIC_MODEL:
                return _Response(uuid, rid, made, None, 0, 0, 0, 0, ref, cleared)
            get = usage.get  # counts: ints only (`as_int`), inline
            a, b, c, d = (get("input_tokens"), get("cache_creation_input_tokens"), get("cache_read_input_tokens"),
                          get("output_tokens"))
            b = b if b.__class__ is int else 0
            split = get("cache_creation")
            return _Response(uuid, rid, made, a if a.__class__ is int else 0, b, c if c.__class__ is int else 0,
                             d if d.__class__ is int else 0,
                             min(b, as_int(split.get("ephemeral_1h_input_tokens"))) if split.__class__ is dict else 0,
                             ref, cleared)
        if kind == "attachment":
            sent = reminder(obj)
            if sent is None:
                return None
            role, blocks = sent
            msg_kind = "system" if role == "system" else "meta"
            return Message.of(role, msg_kind, blocks, uuid, None, line_no, offset, ts,  # type: ignore[arg-type]
                              attachment=attachment_type(obj))
        if kind == "system" and obj.get("subtype") in ("compact_boundary", "microcompact_boundary"):
            compact = obj["subtype"] == "compact_boundary"
            meta = obj.get("compactMetadata" if compact else "microcompactMetadata")
            logical = obj.get("logicalParentUuid")
            ext = obj.get(EXTENSION)
            return _Marker(uuid, "compact" if compact else "microcompact", line_no, ts,
                           logical if isinstance(logical, str) else None, meta if isinstance(meta, dict) else {},
                           ext if isinstance(ext, dict) else None)
        return None

    def _timestamp(self, value: Any, line_no: int) -> None:
        """A timestamp that is no string (a number, a list...): dropped, with a warning naming the line."""
        if value is not None:
            self.warn(line_no, f"timestamp is not a string ({type(value).__name__}); ignored")
        return None

    def _server_cleared(self, message: dict, sent_id: str | None) -> tuple[int, int, frozenset[str]] | None:
        """What the API's context editing cleared for the request this response answers (2.1.332 asks for
        `clear_tool_uses_20250919` after a long pause): the response's `context_management.applied_edits`, with the
        tools the request excluded from clearing."""
        managed = message.get("context_management")
        edits = managed.get("applied_edits") if isinstance(managed, dict) else None
        cleared = [e for e in as_list(edits) if isinstance(e, dict) and e.get("type") == CLEAR_TOOL_USES]
        if not cleared:
            return None
        excluded: set[str] = set()
        sent = next((r for r in reversed(self.recorder.requests) if r.id == sent_id), None) if sent_id else None
        asked = sent.params.get("context_management") if sent is not None else None
        for edit in as_list(asked.get("edits")) if isinstance(asked, dict) else ():
            if isinstance(edit, dict) and edit.get("type") == CLEAR_TOOL_USES:
                excluded.update(t for t in as_list(edit.get("exclude_tools")) if isinstance(t, str))
        return (sum(as_int(e.get("cleared_tool_uses")) for e in cleared),
                sum(as_int(e.get("cleared_input_tokens")) for e in cleared), frozenset(excluded))

    def settle(self) -> None:
        """Lay now what a first walk left for the first extension (`_Branch.settle`): a follower calls it between
        reads, so the first append's build costs what the next ones do (~0.1 s less at 100,000 messages)."""
        if self._branch is not None:
            self._branch.settle()

    def build(self) -> Session:
        """The Session as of the lines fed so far. When the lines fed since the last build only extend its active
        branch (a live file growing), the work is proportional to them; anything else (a rewind, a parent that
        arrived late, an old piece pulled in) rebuilds the branch from scratch. `last_build` says which it was."""
        graph = self.main if self.main.tip is not None else self.side
        branch = self._branch
        added = self._extension(branch) if branch is not None and branch.graph is graph else None
        if branch is None or added is None:
            branch = self._branch = _Branch(graph)
            added = branch.walk()
            self.last_build = ("full", len(graph.order))
        else:
            self.last_build = ("extended", self._steps)
        branch.seen = len(graph.order)
        if self._settings[0] != self.cwd:  # read once the entries have said where the session ran
            self._settings = (self.cwd, claude_settings(Path(self.source), self.cwd))
        session = Session(source=self.source, format="claude-code", cwd=self.cwd, session_id=self.session_id,
                          version=self.version, subagents=list(self.subagents), spawns=dict(self.spawns),
                          compaction_settings=self._settings[1].copy())
        session.warnings = list(self.warnings)
        session.warnings.extend(self._unknown.warnings())
        more = len(self.conflicts) - MAX_CONFLICT_WARNINGS
        if more > 0:
            session.warnings.append(LoadWarning(None, f"{more} more uuid{'s' if more > 1 else ''} repeated with "
                                                      "different content; the first copies are kept"))
        session.warnings.extend(branch.warnings)
        branch.assembler.add(added)
        session.warnings.extend(branch.assembler.warnings)
        branch.assembler.publish(session)
        session.sent = self.recorder.log()
        session.agent_cost = self.cost
        return session

    def _extension(self, branch: _Branch) -> list[Record] | None:
        """The records the new entries add to the last build's branch, in file order; None when the new entries
        do anything but extend it (then only a full walk gets the branch right)."""
        graph = branch.graph
        branch.settle()
        new = graph.order[branch.seen:]
        if any(u in branch.missing for u in new):
            return None  # a parent the last walk missed has arrived: the branch may run differently now
        walked: list[Record] = []  # from the newest message back to where it joins the branch's path
        cur, visited = graph.tip, set()
        while cur not in branch.path_pos:
            seq = graph.nodes.get(cur) if cur is not None and cur not in visited else None  # type: ignore[arg-type]
            if seq is None:
                return None  # a root, a cycle or a gap before joining the branch: not an extension
            visited.add(cur)
            parent = graph.parents[seq]
            rec = graph.records[seq]
            if rec is not None:
                if seq < branch.seen and cur not in branch.selected:
                    return None  # an older record off the branch joins it: a rewind, or a piece linked late
                walked.append(rec)
                if parent is None and rec.__class__ is _Marker and rec.logical_parent:
                    parent = rec.logical_parent
            cur = parent
        assert cur is not None
        self._steps = len(visited) + len(new)
        return branch.extend(cur, walked[::-1], [r for r in graph.records[branch.seen:] if r is not None])


_UUID, _RESPONSE_ID = attrgetter("uuid"), attrgetter("response_id")
_KIND, _PARENT, _SIDE = attrgetter("kind"), attrgetter("parentUuid"), attrgetter("isSidechain")
_NONE = repeat(None)

MAX_DROPPED = 64  # path records a new entry may leave behind (parallel tool results) before a full walk is cheaper


def _chain(graph: _Graph) -> list[Record] | None:
    """The graph's records in file order when the walk from the tip would pass every one of them: then that is the
    branch, all of it, found without a walk. So it is when every entry's parent (a compaction boundary's logical
    parent) is an earlier entry with no record between the two (progress entries and the like may hang off the
    path: a tool's result is the child of its call, not of the progress lines written while it ran), the first entry
    is a root and the last record is the tip: a path that only ever steps back over entries holding no record passes
    every record. None otherwise, or when too many links are not to the entry just before (then the walk is as
    cheap). Only those links are looked at (`_Graph.jumps`)."""
    order, parents, records, nodes = graph.order, graph.parents, graph.records, graph.nodes
    last = next(filter(None, reversed(records)), None)  # (records are structs: true)
    if last is None or parents[0] is not None or last.uuid != graph.tip:
        return None
    first = records[0]
    if first.__class__ is _Marker and first.logical_parent is not None:  # type: ignore[union-attr]
        return None
    others = graph.jumps
    if len(others) > len(order) // 4 + 64:
        return None
    # The records between a seq and its parent's: looked at where the steps back pass few entries in all (a few
    # compaction boundaries); past as many entries as the graph holds, counted once instead (the records up to each
    # seq, none between two seqs when the counts are equal; in an array: no int object an entry).
    held: array | None = None
    passed = 0
    for seq in others:
        parent = parents[seq]
        if parent is None:
            rec = records[seq]
            parent = rec.logical_parent if rec.__class__ is _Marker else None  # type: ignore[union-attr]
        at = nodes.get(parent) if parent is not None else None
        if at is None or at >= seq:
            return None  # a root, or a parent not (yet) read or read later
        passed += seq - at
        if held is None and passed > len(order):
            held = array("q", accumulate(map(is_not, records, _NONE)))
        if held[seq - 1] != held[at] if held is not None else any(map(is_not, records[at + 1:seq], _NONE)):
            return None  # a record the step back passes over
    return graph.held()


class _Branch:
    """The active branch of one graph as built so far, with what extending it needs: its path (root to newest
    message), the responses and tool calls on it, the loose records (off it) that a later entry could pull in, and
    the assembler."""

    def __init__(self, graph: _Graph) -> None:
        self.graph = graph
        self.seen = 0  # entries of graph.order covered
        self.path: list[str] = []  # records on the path, root first
        self.path_pos: dict[str, int] = {}
        self.response_first: dict[str, int] = {}  # response id -> first path position holding it
        self.selected: set[str] = set()
        self.responses: set[str] = set()
        self.open_ids: set[str] = set()  # tool calls on the branch still unanswered
        self.pulled: set[str] = set()  # tool ids answered by results pulled in from off the path
        self.loose_responses: set[str] = set()  # response ids of assistant records off the branch
        self.loose_results: set[str] = set()  # tool ids answered by tool_result records off the branch
        self.missing: set[str] = set()  # parents the walk looked for and did not find
        self._unsettled: list[Record] | None = None  # the path a first walk has yet to lay (`settle`)
        self.warnings: list[LoadWarning] = []
        self.assembler = _Assembler()

    def walk(self) -> list[Record]:
        """Records on the path from the newest message back to a root, plus the pieces of its responses that
        Claude Code links off the path (parallel tool calls), in file order."""
        graph = self.graph
        chain = _chain(graph)
        if chain is not None:  # every entry the child of the one before: the walk would visit each, in reverse
            self._unsettled = chain
            return chain
        nodes, order, parents, records = graph.nodes, graph.order, graph.parents, graph.records
        walked: list[Record] = []
        visited = bytearray(len(order))  # by seq: a byte an entry where a set of uuids takes ~40
        cur: str | None = graph.tip
        child_seq: int | None = None
        gaps, first_gap, cycle = 0, None, False
        while cur is not None:
            seq = nodes.get(cur)
            if seq is None:  # a parent we never saw (a corrupt or removed line): go on from the line before
                self.missing.add(cur)
                if not child_seq:
                    break
                gaps += 1
                if first_gap is None:
                    first_gap = records[child_seq]
                cur = order[child_seq - 1]
                child_seq = None
                continue
            if visited[seq]:
                cycle = True
                break
            visited[seq] = 1
            child_seq = seq
            parent = parents[seq]
            rec = records[seq]
            if rec is not None:
                walked.append(rec)
                if parent is None and rec.__class__ is _Marker and rec.logical_parent:
                    parent = rec.logical_parent
            cur = parent
        if cycle:  # the walk came back to an entry it had passed: the parentUuid links form a cycle
            rec = graph.record(cur)  # type: ignore[arg-type]
            self.warnings.append(LoadWarning(_line(rec) if rec else None, "parentUuid links form a cycle; the "
                                                                        "branch stops where it repeats"))
        if gaps:
            line = _line(first_gap) if first_gap is not None else None
            self.warnings.append(LoadWarning(line, f"{gaps} entr{'y points' if gaps == 1 else 'ies point'} to a "
                                                   "parent not in this file (a corrupt line, or a partial copy); "
                                                   "followed file order across the gap"))
        laid = walked[::-1]
        # off the path: none when every record is on it (walked holds each record once)
        held = graph.held()
        others = [r for r, seen in zip(records, visited) if not seen and r is not None] if len(walked) < len(held) \
            else []
        if others:
            self._lay(laid)
            selected = self._select(dict(zip(map(_UUID, walked), walked)), others)
            assert selected is not None  # nothing is old to a first walk
            return selected
        # Every record is on the path: nothing to pull in, nothing loose yet. What only an extension reads (the
        # path's positions, the selected and response sets, the open calls: ~20 MB at 100,000 messages) waits for
        # one (`settle`).
        self._unsettled = laid
        return held

    def settle(self) -> None:
        """Lay the path a first walk left unlaid (`walk`): what extending the branch reads."""
        laid, self._unsettled = self._unsettled, None
        if laid is not None:
            used, answered = _calls(laid)
            self.open_ids = used - answered
            self._lay(laid)
            self.responses.update(r.response_id for r in laid if r.response_id)
            self.selected.update(map(_UUID, laid))

    def extend(self, join: str, walked: list[Record], news: list[Record]) -> list[Record] | None:
        """The path now runs through `join` (on it already) then `walked` (root first): the records this adds, in
        file order, or None when the result would differ from a full walk's."""
        pos = self.path_pos[join]
        dropped = self.path[pos + 1:]
        if len(dropped) > MAX_DROPPED:
            return None
        responses = {r.response_id for r in walked if r.__class__ is _Response and r.response_id}
        ids: set[str] = set()
        for u in dropped:  # left behind by the path: a full walk still pulls them in, or this is a rewind
            rec = self.graph.record(u)
            assert rec is not None
            rid = rec.response_id
            if rec.__class__ is _Response and rid and (rid in responses or
                                                       self.response_first.get(rid, pos + 1) <= pos):
                continue
            if rec.__class__ is not Message or rec.kind != "tool_result":
                return None
            ids.update(b.tool_id for b in rec.blocks if b.type == "tool_result")  # type: ignore[union-attr]
        if ids & self.loose_results:
            return None
        for u in dropped:
            del self.path_pos[u]
            rid = self.graph.record(u).response_id  # type: ignore[union-attr]
            if rid and self.response_first.get(rid, -1) > pos:
                del self.response_first[rid]
        del self.path[pos + 1:]
        self._lay(walked)
        fresh = {r.uuid: r for r in walked if r.uuid not in self.selected}
        selected = self._select(fresh, [r for r in news if r.uuid not in fresh], ids)
        self.pulled |= ids
        return selected

    def _lay(self, records: list[Record]) -> None:
        """Append `records` (root first) to the path."""
        base, first = len(self.path), self.response_first
        uuids = list(map(_UUID, records))
        self.path_pos.update(zip(uuids, range(base, base + len(uuids))))
        self.path.extend(uuids)
        # each response id's first position (only assistant records have one): the last write of a dict made from
        # the end wins; positions already known stay
        firsts = dict(zip(map(_RESPONSE_ID, reversed(records)), range(base + len(records) - 1, base - 1, -1)))
        firsts.pop(None, None)
        firsts.pop("", None)
        firsts.update(first)
        first.update(firsts)

    def _select(self, path: dict[str, Record], others: list[Record],
                left: set[str] = frozenset()) -> list[Record] | None:  # type: ignore[assignment]
        """Add `path` (new records on the branch) and pull in from `others` (new records off it, in file order)
        what belongs to its responses and answers its tool calls. None when a loose record from before would be
        pulled in too (it belongs earlier in the branch: only a full walk places it), or when a new record answers
        a call that `left` (results the path left behind) or an earlier pull already answered."""
        selected = path  # the caller's own dict
        responses = {r.response_id for r in path.values() if r.response_id}  # only assistant records have one
        if responses & self.loose_responses - self.responses:
            return None
        self.responses |= responses
        # Claude Code hangs a response's later lines and their tool results off earlier lines: pull them back in.
        for rec in others:
            if rec.__class__ is _Response and rec.response_id in self.responses:
                selected[rec.uuid] = rec
        used, answered = _calls(selected.values())
        if used & self.loose_results or answered & (self.pulled | left):
            return None
        open_ids = (self.open_ids | used) - answered
        for rec in others:
            if rec.uuid in selected:
                continue
            if open_ids and rec.__class__ is Message and rec.kind == "tool_result":
                ids = {b.tool_id for b in rec.blocks if b.type == "tool_result"}  # type: ignore[union-attr]
                if ids and ids <= open_ids:
                    selected[rec.uuid] = rec
                    open_ids -= ids
                    self.pulled |= ids
                    continue
            if rec.__class__ is _Response and rec.response_id:
                self.loose_responses.add(rec.response_id)
            elif rec.__class__ is Message:
                self.loose_results.update(b.tool_id for b in rec.blocks if b.type == "tool_result")  # type: ignore[union-attr]
        self.open_ids = open_ids
        self.selected.update(selected)
        records = self.graph.records  # in file order: by seq
        return list(map(records.__getitem__, sorted(map(self.graph.nodes.__getitem__, selected))))  # type: ignore[arg-type]


class _Assembler:
    """Messages, requests and compactions made from the branch's records, one record at a time, so a live build
    only adds what was appended. What a published Session holds is never changed afterwards: a message or request
    that a later line changes is copied first."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.requests: list[Request] = []
        self.compactions: list[Compaction] = []
        self.models: list[str] = []
        self.by_response: dict[str, int] = {}  # response id -> message index
        # by message index, the index of its Request in requests, -1 for none (an array: no int object a request)
        self.request_of = array("q")
        self.context_start = 0
        self.shared = (0, 0)  # messages and requests below these counts are in a published Session
        self.owned: set[int] = set()  # messages copied since the last publish (the others are records' or shared)
        # Indexes of messages[:indexed], brought up to date when read (`_index`): only microcompactions and our
        # exports' boundaries read them, so a session without them never builds them.
        self.result_at: dict[str, list[int]] = {}  # tool_use id -> messages holding a result for it
        self.at_uuid: dict[str, int] = {}  # message uuid -> index (what our boundaries name)
        self.tool_of: dict[str, str] = {}  # tool_use id -> tool name
        self.indexed = 0
        self.warnings: list[LoadWarning] = []
        self.server_cleared = (0, 0)  # results and tokens the API reported cleared so far in this context
        # the later lines of a response, by message index, joined to its `lines` at publish: a tuple grown a line at
        # a time is quadratic (one response spread over 100,000 lines)
        self.more_lines: dict[int, list[int]] = {}

    def publish(self, session: Session) -> None:
        for index, lines in self.more_lines.items():
            message = self._own(index)
            message.more_lines += tuple(lines)
        self.more_lines.clear()
        session.messages, session.requests = list(self.messages), list(self.requests)
        session.compactions, session.models = list(self.compactions), list(self.models)
        self.shared = (len(self.messages), len(self.requests))
        self.owned.clear()

    def _own(self, index: int) -> Message:
        """Message `index`, made the assembler's own to change: a record's message, or one a published Session
        holds, is copied first."""
        message = self.messages[index]
        if index not in self.owned:
            message = self.messages[index] = message.copy_with(blocks=list(message.blocks))
            self.owned.add(index)
        return message

    def add(self, records: Iterable[Record]) -> None:
        """Add the branch's records in order. Most start a message (with a Request where they hold usage), in this
        loop; boundaries and the later lines of a response go to their own methods."""
        messages, by_response, append, request_of = (self.messages, self.by_response, self.messages.append,
                                                     self.request_of.append)
        for rec in records:
            cls = rec.__class__
            if cls is Message:  # a user entry's: the record is the message (`_own` copies it before any change)
                append(rec)
                request_of(-1)
                continue
            if cls is _Marker:
                self._compaction(rec)  # type: ignore[arg-type]
                continue
            rid = rec.response_id
            if rid and rid in by_response:
                self._continued(rec, by_response[rid])  # type: ignore[arg-type]
                continue
            if rec.cleared is not None:  # type: ignore[union-attr]
                self._cleared_by_api(rec)  # type: ignore[arg-type]
            index = len(messages)
            append(rec.message)  # type: ignore[union-attr]
            if rid:
                by_response[rid] = index
            if rec.input_tokens is None:  # type: ignore[union-attr]
                request_of(-1)
            else:
                request_of(len(self.requests))
                if not rid:  # a response without an id: its Request is named by its line
                    rid = self._own(index).response_id = f"line-{rec.message.line}"  # type: ignore[union-attr]
                self._request(rec, index, rid)  # type: ignore[arg-type]

    def _continued(self, rec: _Response, index: int) -> None:
        """A later line of a response already started: the same message, the same Request."""
        message = self._own(index)
        message.blocks.extend(rec.message.blocks)
        if index < self.indexed:
            self._index_blocks(rec.message.blocks, index)
        more = self.more_lines.get(index)
        if more is None:
            more = self.more_lines[index] = []
        more.append(rec.message.line)
        if rec.input_tokens is not None:
            at = self.request_of[index]
            if at < 0:
                self.request_of[index] = len(self.requests)
                self._request(rec, index, rec.response_id)  # type: ignore[arg-type]
            else:  # every line repeats the usage; output_tokens is final only on the last one
                request = self.requests[at]
                if at < self.shared[1]:
                    request = self.requests[at] = structs.replace(request)
                request.input_tokens, request.cache_creation = rec.input_tokens, rec.cache_creation
                request.cache_read, request.output_tokens = rec.cache_read, rec.output_tokens
                request.cache_write_1h = rec.write_1h

    def _compaction(self, rec: _Marker) -> None:
        """A compact or microcompact boundary. A microcompaction of Claude Code's own lists the results it cleared
        (their lines keep the text they had): they now hold the cleared marker. One we exported says what each
        message it changed held before (their lines hold what they hold now), and a summary we exported says which
        messages it kept verbatim."""
        messages, meta, ext = self.messages, rec.meta, rec.ext or {}
        compaction = Compaction("microcompact" if rec.kind == "microcompact" else "compact", len(messages),
                                trigger=opt_str(meta.get("trigger")), pre_tokens=opt_int(meta.get("preTokens")),
                                line=rec.line, timestamp=rec.timestamp)
        self.compactions.append(compaction)
        if rec.kind == "compact":
            window, self.context_start = self.context_start, len(messages)
            self.server_cleared = (0, 0)
            kept = ext.get("keptFrom")
            if kept is not None:
                self._index()
                at = self.at_uuid.get(kept) if isinstance(kept, str) else None
                if at is None or at < window:
                    self.warnings.append(LoadWarning(rec.line, f"keptFrom {str(kept)[:64]!r} names no message of "
                                                               "the context before this compaction; ignored"))
                else:
                    compaction.kept_from = at
            added = opt_int(ext.get("added"))
            if added is not None and added >= 0:
                compaction.added = added
            return
        compaction.tokens_saved = opt_int(meta.get("tokensSaved"))
        listed = meta.get("compactedToolIds")
        if listed is not None and listed.__class__ is not list:
            self.warnings.append(LoadWarning(rec.line, f"compactedToolIds is {type(listed).__name__}, not a list of "
                                                       "tool ids: no result counted as cleared by it"))
            listed = None
        compaction.cleared_tool_ids = ids = tuple(i for i in listed or () if isinstance(i, str))
        before = ext.get("before")
        self._index()
        if isinstance(before, dict):
            for uid, content in before.items():
                at = self.at_uuid.get(uid)
                if at is None:
                    self.warnings.append(LoadWarning(rec.line, f"microcompaction names message {uid[:64]!r}, "
                                                               "which is not on the branch; ignored"))
                    continue
                compaction.replaced[at] = edited_message(messages[at], blocks_from_content(content))
            return
        # only the messages holding those results, found through the index: a scan of every message per boundary
        # is quadratic, and a hostile file can hold thousands of boundaries
        cleared = dict.fromkeys(ids, CLEARED)
        for i in sorted({i for tool_id in ids for i in self.result_at.get(tool_id, ()) if i >= self.context_start}):
            new = replaced_message(messages[i], cleared, {})
            if new is not None:  # a new object: a published Session keeps the message it had
                compaction.replaced[i] = messages[i]
                messages[i] = new

    def _index(self) -> None:
        """Bring the indexes up to the messages added so far."""
        messages, at_uuid = self.messages, self.at_uuid
        for index in range(self.indexed, len(messages)):
            m = messages[index]
            if m.uuid is not None and m.uuid not in at_uuid:
                at_uuid[m.uuid] = index
            self._index_blocks(m.blocks, index)
        self.indexed = len(messages)

    def _index_blocks(self, blocks: list[Block], index: int) -> None:
        for b in blocks:
            if b.type == "tool_result" and b.tool_id is not None:
                self.result_at.setdefault(b.tool_id, []).append(index)
            elif b.type == "tool_use" and b.tool_id is not None:
                self.tool_of[b.tool_id] = b.tool_name or ""

    def _cleared_by_api(self, rec: _Response) -> None:
        """A microcompaction the API made for this response's request: it clears the oldest results of the
        context (past the ones the request kept), so the first `count` results not excluded, less those already
        reported; recorded before the response, as Claude Code's own microcompact boundaries are. The messages keep
        their text: the requests sent it (the API cleared it on its side), and earlier requests' usage counted it."""
        assert rec.cleared is not None
        count, tokens, excluded = rec.cleared
        before, saved = self.server_cleared
        if count <= before:
            return
        start = self.context_start
        self._index()
        order = [t for t, at in self.result_at.items() if at[-1] >= start and self.tool_of.get(t) not in excluded]
        ids = tuple(order[before:count])
        self.server_cleared = (count, max(tokens, saved))
        self.compactions.append(Compaction("microcompact", len(self.messages), trigger="api",
                                           tokens_saved=max(0, tokens - saved), cleared_tool_ids=ids,
                                           line=rec.message.line, timestamp=rec.message.timestamp))

    def _request(self, rec: _Response, index: int, rid: str) -> None:
        """The Request of a response's usage, message `index` (`request_of` already names it)."""
        message = rec.message
        model = message.model
        self.requests.append(Request(rid, model, rec.input_tokens, rec.cache_creation, rec.cache_read,  # type: ignore[arg-type]
                                     rec.output_tokens, index, self.context_start, index, message.line,
                                     message.timestamp, "turn", rec.sent_id, rec.write_1h))
        if model and model not in self.models:
            self.models.append(model)


def _where(obj: Line | Loose, raw: bytes) -> tuple[str | None, Any]:
    """(cwd, sessionId) as the line of `obj` states them: a typed entry's read from its raw line when it may name a cwd
    (the key spelled plainly, or a line with escapes), the generic path's from its `Loose`."""
    if obj.__class__ is Loose:
        return obj.cwd, obj.sessionId  # type: ignore[union-attr]
    if b'"cwd"' not in raw and b"\\u" not in raw:
        return None, None
    try:
        where = envelope(raw)
    except ValueError:  # a value of another type: read as the generic path reads it (orjson, else the standard library)
        for parse in (orjson.loads, loads):
            try:
                return _where_of(parse(raw))
            except ValueError:
                pass
        return None, None
    return where.cwd, where.sessionId


def _where_of(obj: dict) -> tuple[str | None, Any]:
    """(cwd, sessionId) of a line the generic path parsed: the cwd only when a string."""
    cwd = obj.get("cwd")
    return cwd if cwd.__class__ is str else None, obj.get("sessionId")


def _calls(records: Iterable[Record]) -> tuple[set[str | None], set[str | None]]:
    """The tool calls of the assistant records and the results of the user records."""
    used: set[str | None] = set()
    answered: set[str | None] = set()
    use, answer = used.add, answered.add
    for r in records:
        cls = r.__class__
        if cls is _Response:
            for b in r.message.blocks:  # type: ignore[union-attr]
                if b.type == "tool_use":
                    use(b.tool_id)
        elif cls is Message:
            for b in r.blocks:  # type: ignore[union-attr]
                if b.type == "tool_result":
                    answer(b.tool_id)
    return used, answered


def _line(rec: Record) -> int:
    """The line a record was read from."""
    return rec.message.line if rec.__class__ is _Response else rec.line  # type: ignore[union-attr,return-value]


def _same(a: Record | None, b: Record | None) -> bool:
    """Whether two copies of an entry hold the same: kind, content and response (not line, offset or timestamp)."""
    if a is None or b is None or a.__class__ is not b.__class__:
        return a is b
    if a.__class__ is _Marker:
        return (a.kind, a.logical_parent, a.meta) == (b.kind, b.logical_parent, b.meta)  # type: ignore[union-attr]
    if a.__class__ is _Response:
        if (a.response_id, a.input_tokens, a.cache_creation, a.cache_read, a.output_tokens, a.cleared) != (  # type: ignore[union-attr]
                b.response_id, b.input_tokens, b.cache_creation, b.cache_read, b.output_tokens, b.cleared):  # type: ignore[union-attr]
            return False
        a, b = a.message, b.message  # type: ignore[union-attr]
    return (a.kind, a.model, a.blocks, a.attachment) == (b.kind, b.model, b.blocks, b.attachment)  # type: ignore[union-attr]


def _user_kind(summary: bool, meta: bool, blocks: list[Block]) -> str:
    """A user entry's kind: `summary` and `meta` as its isCompactSummary and isMeta / isVisibleInTranscriptOnly say."""
    if summary:
        return "compact_summary"
    for b in blocks:
        if b.type == "tool_result":
            return "tool_result"
    if meta:
        return "meta"
    return "meta" if injected(blocks) else "prompt"


def injected(blocks: list[Block]) -> bool:
    """True when every text block is harness-written (caveats, command wrappers, reminders): nothing typed."""
    texts = [b.text for b in blocks if b.type == "text"]
    return bool(texts) and all(t.lstrip().startswith(META_PREFIXES) for t in texts)
