"""opencode sessions: the SQLite database `~/.local/share/opencode/opencode.db` (v1.2 on; `$OPENCODE_DB` or
`$XDG_DATA_HOME/opencode/`), or before it the JSON tree `storage/{session/<project>,message/<session>,
part/<message>}/<id>.json`; docs/opencode-format.md.

One database holds every session: `PATH#ses_...` picks one, a bare PATH the newest top-level session. A
`storage/session/<project>/<id>.json` file is that session; the `storage` directory (or the data directory holding
it) its newest one. The rows are the same in both layouts (`json-migration.ts` moves one into the other): a session
row, messages `{role, time, parentID, modelID, tokens{input, output, reasoning, cache{read, write}}, cost, summary,
finish, error}` ordered by creation time and id, and their parts ordered by id.

What the model saw, as opencode builds it (`MessageV2.toModelMessages` and `filterCompacted`): a user message's
text and file parts (a `compaction` part is sent as "What did we do so far?"); an assistant message's text,
reasoning and tool calls, each tool part's result following it (its output, "[Old tool result content cleared]"
once pruned, its error, or "[Tool execution was interrupted]"); assistant messages that failed are left out. A
completed compaction (a user message with a `compaction` part answered by a `summary: true` reply) is a boundary:
after it come that request, the summary, then the turns from the part's `tail_start_id` (kept, so they appear a
second time) and what followed. Pruned tool outputs (`state.time.compacted`) are a microcompact at the first
message written after the prune. Each step's `step-finish` tokens are one Request (a message without one counts
by its own tokens), but for a summary: its request held the conversation as one text for the summarizer, another
window.

The database is opened read-only, never locked against a running opencode, and nothing beside it is written: through
the WAL when one exists with its -shm mapped read-only (`readonly_shm=1`), else as an immutable file. Everything is
read in one short transaction and the connection closed.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import quote

from inspector.core.formats.blocks import as_int, opt_str
from inspector.core.formats.claude_code import CLEARED
from inspector.core.formats.harness_config import Stated, read_json, up_to_git_root
from inspector.core.model import Block, Compaction, LoadError, LoadWarning, Message, Request, Session

TABLES = ("session", "message", "part")
COMPACTION_PROMPT = "What did we do so far?"  # what a compaction part is sent as
SUBTASK_PROMPT = "The following tool was executed by the user"
INTERRUPTED = "[Tool execution was interrupted]"
SELECTOR = "#"  # PATH#SESSION-ID picks a session of a database


@dataclass(slots=True)
class Row:
    """A message or part row: its id, the JSON `data`, and where it came from (a table row or a file)."""

    id: str
    data: dict
    where: str
    time: int = 0


@dataclass(slots=True)
class Rows:
    """One session's rows, from either layout."""

    source: str
    session: dict
    messages: list[Row]
    parts: dict[str, list[Row]]
    children: list[str] = field(default_factory=list)  # subagent sessions, as addresses
    warnings: list[LoadWarning] = field(default_factory=list)


# -- the database -------------------------------------------------------------------------------------------------


@contextmanager
def reading(path: Path) -> Iterator[sqlite3.Connection]:
    """A read-only connection to the database at `path` that takes no lock a writer would wait on and writes
    nothing beside the database (`_address` says how), closed on exit."""
    with _address(path) as uri:
        try:
            conn = sqlite3.connect(uri, uri=True, timeout=1.0, check_same_thread=False)
            conn.execute("PRAGMA query_only = 1")
        except sqlite3.Error as exc:
            raise LoadError(f"{path}: cannot open the database read-only ({exc})") from None
        try:
            yield conn
        finally:
            conn.close()


COPY_TRIES = 3


@contextmanager
def _address(path: Path) -> Iterator[str]:
    """The URI to open `path` by. Through its WAL with the -shm mapped read-only (`readonly_shm=1`): a `mode=ro`
    reader still writes its read mark into the -shm, and rebuilds a stale one (as opencode leaves it) in place;
    read-only, SQLite uses a live writer's -shm as it is and a stale one's index in its own memory. With no WAL,
    `immutable=1` (every page is in the file; it would miss a WAL's rows). A WAL without its -shm (copied without
    it) cannot be read without creating one: the database and its WAL are copied into a private directory and that
    is opened. No writer runs then (a writer keeps a -shm); if one starts, or a file changes, while the copy is
    made, it is made again."""
    files = (path, Path(f"{path}-wal"), Path(f"{path}-shm"))
    for _ in range(COPY_TRIES):
        before = [_stat(f) for f in files]
        if before[1] is None or before[2] is not None:
            yield f"file:{_uri_path(path)}?mode=ro&" + ("immutable=1" if before[1] is None else "readonly_shm=1")
            return
        with tempfile.TemporaryDirectory(prefix="context-inspector-") as tmp:
            copy = Path(tmp) / path.name
            try:
                shutil.copyfile(path, copy)
                shutil.copyfile(files[1], f"{copy}-wal")
            except OSError as exc:
                raise LoadError(f"{path}: its WAL has no -shm beside it, and copying both failed "
                                f"({exc.strerror or exc})") from None
            if [_stat(f) for f in files] == before:
                yield f"file:{_uri_path(copy)}?mode=ro"
                return
    raise LoadError(f"{path}: the database and its WAL kept changing while they were copied")


def _stat(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return st.st_size, st.st_mtime_ns


def _uri_path(path: Path) -> str:
    return quote(str(path.resolve()))


def check_database(path: Path) -> None:
    """LoadError unless `path` is an SQLite database with opencode's session, message and part tables."""
    try:
        with reading(path) as conn:
            names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.Error as exc:
        raise LoadError(f"{path}: an SQLite database that cannot be read ({exc})") from None
    missing = [t for t in TABLES if t not in names]
    if missing:
        raise LoadError(f"{path}: an SQLite database, but not opencode's (no {', '.join(missing)} table)")


def split_address(path: str | os.PathLike[str]) -> tuple[Path, str | None]:
    """`opencode.db#ses_x` as (the database, "ses_x"); any other path as itself and None. A path that exists as
    given is never split (a file may have `#` in its name)."""
    text = os.fspath(path)
    if SELECTOR in text and not os.path.exists(text):
        base, _, selected = text.rpartition(SELECTOR)
        if base and selected and os.path.exists(base):
            return Path(base).expanduser(), selected
    return Path(text).expanduser(), None


def database_rows(path: Path, session_id: str | None) -> Rows:
    """The rows of session `session_id` of the database (None: the newest top-level session)."""
    try:
        with reading(path) as conn, conn:  # one read transaction: a consistent snapshot, released at once
            conn.execute("BEGIN")
            session = _pick(conn, path, session_id)
            sid = session["id"]
            messages = [_row(r[0], r[2], f"message row {r[0]}", r[1]) for r in conn.execute(
                "SELECT id, time_created, data FROM message WHERE session_id = ? ORDER BY time_created, id", (sid,))]
            parts: dict[str, list[Row]] = {}
            for pid, mid, data in conn.execute(
                    "SELECT id, message_id, data FROM part WHERE session_id = ? ORDER BY message_id, id", (sid,)):
                parts.setdefault(mid, []).append(_row(pid, data, f"part row {pid}"))
            children = [f"{path}{SELECTOR}{r[0]}" for r in conn.execute(
                "SELECT id FROM session WHERE parent_id = ? ORDER BY time_created, id", (sid,))]
    except sqlite3.Error as exc:
        raise LoadError(f"{path}: cannot read the database ({exc})") from None
    return Rows(f"{path}{SELECTOR}{sid}", session, messages, parts, children)


SESSION_COLUMNS = ("id", "parent_id", "directory", "title", "version", "time_created", "time_updated", "model",
                   "tokens_input", "tokens_output", "cost")


def _pick(conn: sqlite3.Connection, path: Path, session_id: str | None) -> dict:
    columns = ", ".join(SESSION_COLUMNS)
    if session_id is not None:
        row = conn.execute(f"SELECT {columns} FROM session WHERE id = ?", (session_id,)).fetchone()
        if row is None:
            raise LoadError(f"{path}{SELECTOR}{session_id}: no session {session_id!r} in this database")
    else:
        row = conn.execute(f"SELECT {columns} FROM session ORDER BY parent_id IS NOT NULL, time_updated DESC, id DESC "
                           "LIMIT 1").fetchone()
        if row is None:
            raise LoadError(f"{path}: the database holds no session")
    return dict(zip(SESSION_COLUMNS, row))


def list_sessions(path: Path) -> list[dict]:
    """Every session of a database, newest first: id, parent_id, directory, title, time_created and time_updated
    (ms), messages (rows), size (bytes of message and part data)."""
    try:
        with reading(path) as conn, conn:
            rows = conn.execute(
                "SELECT s.id, s.parent_id, s.directory, s.title, s.time_created, s.time_updated, "
                "coalesce(m.n, 0), coalesce(m.bytes, 0) + coalesce(p.bytes, 0) FROM session s "
                "LEFT JOIN (SELECT session_id, count(*) AS n, sum(length(data)) AS bytes FROM message "
                "GROUP BY session_id) m ON m.session_id = s.id "
                "LEFT JOIN (SELECT session_id, sum(length(data)) AS bytes FROM part GROUP BY session_id) p "
                "ON p.session_id = s.id ORDER BY s.time_updated DESC, s.id DESC").fetchall()
    except sqlite3.Error as exc:
        raise LoadError(f"{path}: cannot read the database ({exc})") from None
    keys = ("id", "parent_id", "directory", "title", "time_created", "time_updated", "messages", "size")
    return [dict(zip(keys, r)) for r in rows]


def _row(rid: Any, data: Any, where: str, time: Any = 0) -> Row:
    try:
        obj = json.loads(data) if isinstance(data, (str, bytes)) else None
    except ValueError:
        obj = None
    return Row(str(rid), obj if isinstance(obj, dict) else {"$corrupt": True}, where,
               time if isinstance(time, int) else 0)


# -- the JSON tree ------------------------------------------------------------------------------------------------


def storage_root(path: Path) -> Path | None:
    """The `storage` directory a session file belongs to (`storage/session/<project>/<id>.json`), or that a
    directory is or holds."""
    if path.is_file():
        root = path.parent.parent.parent
        return root if path.parent.parent.name == "session" else None
    for candidate in (path, path / "storage"):
        if (candidate / "session").is_dir() and (candidate / "message").is_dir():
            return candidate
    return None


def newest_session_file(root: Path) -> Path | None:
    """The session file of `root` (a storage directory) updated last (by its `time.updated`, else modification
    time), skipping what cannot be read."""
    best: tuple[float, str, Path] | None = None
    for f in root.glob("session/*/*.json"):
        try:
            with open(f, "rb") as fh:
                info = json.loads(fh.read(1 << 20))
            if isinstance(info, dict) and info.get("parentID"):
                continue  # a subagent session
            updated = info.get("time", {}).get("updated") if isinstance(info, dict) else None
            key = (float(updated) / 1000 if isinstance(updated, (int, float)) else f.stat().st_mtime, f.name, f)
        except (OSError, ValueError, AttributeError):
            continue
        best = key if best is None or key > best else best
    return best[2] if best else None


def tree_rows(path: Path) -> Rows:
    """The rows of the session whose info file is `path` (ids come from file names, as the migration takes
    them)."""
    root = storage_root(path)
    if root is None:
        raise LoadError(f"{path}: not in an opencode storage tree (storage/session/<project>/<id>.json)")
    warnings: list[LoadWarning] = []
    info = _read_json(path, warnings) or {}
    sid = path.stem
    session = {"id": sid, "directory": info.get("directory"), "title": info.get("title"),
               "version": info.get("version"), "parent_id": info.get("parentID")}
    messages = []
    for f in sorted((root / "message" / sid).glob("*.json")):
        data = _read_json(f, warnings)
        if data is not None:
            created = data.get("time", {}).get("created") if isinstance(data.get("time"), dict) else None
            messages.append(Row(f.stem, data, str(f), created if isinstance(created, int) else 0))
    messages.sort(key=lambda r: (r.time, r.id))
    parts: dict[str, list[Row]] = {}
    for m in messages:
        for f in sorted((root / "part" / m.id).glob("*.json")):
            data = _read_json(f, warnings)
            if data is not None:
                parts.setdefault(m.id, []).append(Row(f.stem, data, str(f)))
    children = []
    for f in sorted(root.glob("session/*/*.json")):
        try:
            child = json.loads(f.read_bytes())
        except (OSError, ValueError):
            continue
        if isinstance(child, dict) and child.get("parentID") == sid:
            children.append(str(f))
    return Rows(str(path), session, messages, parts, children, warnings)


def _read_json(f: Path, warnings: list[LoadWarning]) -> dict | None:
    try:
        data = json.loads(f.read_bytes())
    except (OSError, ValueError) as exc:
        warnings.append(LoadWarning(None, f"{f}: cannot be read ({exc.__class__.__name__}: {exc}), skipped"))
        return None
    if not isinstance(data, dict):
        warnings.append(LoadWarning(None, f"{f}: not a JSON object, skipped"))
        return None
    return data


# -- rows to a Session --------------------------------------------------------------------------------------------


def load_rows(rows: Rows) -> Session:
    info = rows.session
    s = Session(source=rows.source, format="opencode", session_id=opt_str(info.get("id")),
                cwd=opt_str(info.get("directory")), version=opt_str(info.get("version")),
                subagents=list(rows.children), warnings=list(rows.warnings))
    _Builder(s, rows).run()
    return s


class _Builder:
    def __init__(self, session: Session, rows: Rows) -> None:
        self.s, self.rows = session, rows
        self.start = 0  # the current context's first message
        self.pruned: dict[int, list[str]] = {}  # prune time -> tool call ids cleared then
        self.usage: dict[str, tuple[dict, str | None, str | None]] = {}  # message uuid -> tokens, model, time
        self.unknown: dict[str, list] = {}

    def warn(self, where: str, message: str) -> None:
        self.s.warnings.append(LoadWarning(None, f"{where}: {message}"))

    def run(self) -> None:
        rows, s = self.rows, self.s
        summaries = self._completed_compactions(rows.messages)
        tails: dict[str, list[Message]] = {}  # summary message id -> the kept turns to repeat after it
        first_of: dict[str, int] = {}  # message id -> index of its first message
        times: list[int] = []  # creation time of each message, for placing prunes
        for row in rows.messages:
            data = row.data
            if data.get("$corrupt"):
                self.warn(row.where, "corrupt JSON in data, skipped")
                continue
            role = data.get("role")
            parts = [p for p in rows.parts.get(row.id, []) if self._part_ok(p)]
            if role == "user" and row.id in summaries:
                compaction_part = next((p.data for p in parts if p.data.get("type") == "compaction"), {})
                self.start = len(s.messages)
                s.compactions.append(self._compaction(compaction_part, row))
                tail = opt_str(compaction_part.get("tail_start_id"))
                if tail and tail in first_of:
                    tails[summaries[row.id]] = [m.copy_with(response_id=None)
                                                for m in s.messages[first_of[tail]:self.start]]
            if role not in ("user", "assistant"):
                self.unknown.setdefault(f"message role {role!r}", [0, row.where])[0] += 1
                continue
            first_of[row.id] = len(s.messages)
            made = self._user(row, parts) if role == "user" else self._assistant(row, parts)
            for message in made:
                s.messages.append(message)
                if message.uuid in self.usage:
                    self._request(len(s.messages) - 1, *self.usage.pop(message.uuid))
            times += [row.time or _created(data)] * len(made)
            if row.id in tails:
                kept = tails.pop(row.id)
                s.messages += kept
                times += [row.time or _created(data)] * len(kept)
        self._place_prunes(times)
        for kind, (n, where) in self.unknown.items():
            self.warn(where, f"skipped {n} of unknown type {kind}")

    @staticmethod
    def _completed_compactions(messages: list[Row]) -> dict[str, str]:
        """user message id -> its summary reply's id, for compactions that finished (opencode's own test)."""
        out = {}
        for m in messages:
            d = m.data
            if d.get("role") == "assistant" and d.get("summary") is True and d.get("finish") and not d.get("error"):
                parent = opt_str(d.get("parentID"))
                if parent:
                    out.setdefault(parent, m.id)
        return out

    def _part_ok(self, p: Row) -> bool:
        if p.data.get("$corrupt"):
            self.warn(p.where, "corrupt JSON in data, skipped")
            return False
        return True

    def _compaction(self, part: dict, row: Row) -> Compaction:
        before = self.s.requests[-1].measured_context if self.s.requests else None
        trigger = "auto" if part.get("auto") else "manual"
        if part.get("overflow"):
            trigger = "overflow"
        return Compaction("compact", len(self.s.messages), trigger=trigger, pre_tokens=before,
                          timestamp=_iso(row.time or _created(row.data)))

    def _user(self, row: Row, parts: list[Row]) -> list[Message]:
        blocks: list[Block] = []
        synthetic: list[bool] = []  # per text part: written by opencode (a continue prompt), not typed
        harness = False
        for p in parts:
            d = p.data
            t = d.get("type")
            if t == "text":
                if not d.get("ignored") and d.get("text"):
                    blocks.append(Block("text", str(d["text"])))
                    synthetic.append(bool(d.get("synthetic")))
            elif t == "file":
                mime = opt_str(d.get("mime")) or ""
                if mime not in ("text/plain", "application/x-directory"):
                    url = opt_str(d.get("url")) or ""
                    data = url.startswith("data:")
                    blocks.append(Block.of("image" if mime.startswith("image/") else "document", "" if data else url,
                                           media=mime or None, size=len(url.partition(",")[2]) if data else 0))
            elif t == "compaction":
                blocks.append(Block("text", COMPACTION_PROMPT))
                harness = True
            elif t == "subtask":
                blocks.append(Block("text", SUBTASK_PROMPT))
                harness = True
            elif t not in ("agent", "snapshot", "patch", "step-start", "step-finish"):
                self.unknown.setdefault(f"user part {t!r}", [0, p.where])[0] += 1
        if not blocks:
            return []
        kind = "meta" if harness or (synthetic and all(synthetic)) else "prompt"
        return [Message("user", kind, blocks, uuid=row.id, timestamp=_iso(row.time or _created(row.data)))]

    def _assistant(self, row: Row, parts: list[Row]) -> list[Message]:
        """One assistant message and its tool results per step (a `step-start` begins one), as the model was sent
        them; a failed message (not an abort with content) was never sent back and is left out."""
        d = row.data
        error = d.get("error")
        if error and not (_aborted(error) and any(p.data.get("type") not in ("step-start", "reasoning")
                                                   for p in parts)):
            return []
        steps: list[list[Row]] = [[]]
        for p in parts:
            if p.data.get("type") == "step-start" and steps[-1]:
                steps.append([])
            steps[-1].append(p)
        out: list[Message] = []
        summary = d.get("summary") is True
        model, provider = opt_str(d.get("modelID")), opt_str(d.get("providerID"))
        if model and provider:
            self.s.providers[model] = provider
        ts = _iso(row.time or _created(d))
        for n, step in enumerate(steps):
            blocks: list[Block] = []
            results: list[Block] = []
            usage = None
            for p in step:
                pd, t = p.data, p.data.get("type")
                if t == "text":
                    blocks.append(Block("text", str(pd.get("text") or "")))
                elif t == "reasoning":
                    meta = pd.get("metadata") if isinstance(pd.get("metadata"), dict) else {}
                    signature = (meta.get("anthropic") or {}).get("signature") if isinstance(
                        meta.get("anthropic"), dict) else None
                    blocks.append(Block.of("thinking", str(pd.get("text") or ""), signature=opt_str(signature)))
                elif t == "tool":
                    use, result = self._tool(pd, p)
                    blocks.append(use)
                    results.append(result)
                elif t == "step-finish":
                    usage = pd.get("tokens")
                elif t not in ("step-start", "snapshot", "patch", "agent", "retry", "compaction", "file"):
                    self.unknown.setdefault(f"assistant part {t!r}", [0, p.where])[0] += 1
            if not blocks:
                continue
            uid = row.id if n == 0 else f"{row.id}:{n}"
            message = Message.of("assistant", "compact_summary" if summary else "assistant", blocks, uuid=uid,
                                 parent_uuid=opt_str(d.get("parentID")), timestamp=ts, model=model)
            out.append(message)
            tokens = usage if isinstance(usage, dict) else (d.get("tokens") if len(steps) == 1 else None)
            if isinstance(tokens, dict) and not summary:  # the summary's request was the summarizer's own window
                self.usage[uid] = (tokens, model, ts)
            if results:
                out.append(Message("user", "tool_result", results, uuid=f"{uid}:results", timestamp=ts))
        return out

    def _tool(self, d: dict, p: Row) -> tuple[Block, Block]:
        state = d.get("state") if isinstance(d.get("state"), dict) else {}
        call_id = opt_str(d.get("callID")) or p.id
        use = Block.of("tool_use", tool_id=call_id, tool_name=opt_str(d.get("tool")), input=state.get("input") or {})
        status = state.get("status")
        if status == "completed":
            when = state.get("time", {}).get("compacted") if isinstance(state.get("time"), dict) else None
            if isinstance(when, (int, float)) and when:
                self.pruned.setdefault(int(when), []).append(call_id)
                return use, Block("tool_result", CLEARED, tool_id=call_id)
            output = state.get("output")
            return use, Block("tool_result", output if isinstance(output, str) else json.dumps(output), tool_id=call_id)
        if status == "error":
            meta = state.get("metadata") if isinstance(state.get("metadata"), dict) else {}
            if meta.get("interrupted") is True and isinstance(meta.get("output"), str):
                return use, Block("tool_result", meta["output"], tool_id=call_id)
            return use, Block("tool_result", str(state.get("error") or ""), tool_id=call_id, is_error=True)
        return use, Block("tool_result", INTERRUPTED, tool_id=call_id, is_error=True)

    def _request(self, index: int, tokens: dict, model: str | None, ts: str | None) -> None:
        cache = tokens.get("cache") if isinstance(tokens.get("cache"), dict) else {}
        if as_int(tokens.get("input")) + as_int(cache.get("read")) + as_int(cache.get("write")) <= 0:
            return  # nothing measured (an aborted step)
        s = self.s
        message = s.messages[index]
        request = Request(message.uuid or f"message-{index}", model, as_int(tokens.get("input")),
                          as_int(cache.get("write")), as_int(cache.get("read")), as_int(tokens.get("output")),
                          message_index=index, seen_start=self.start, seen_end=index, timestamp=ts)
        message.response_id = request.id
        s.requests.append(request)
        if model and model not in s.models:
            s.models.append(model)

    def _place_prunes(self, times: list[int]) -> None:
        """Each prune as a microcompact before the first message written after it (one prune stamps its parts a
        few milliseconds apart: the parts cleared between the same two messages are one)."""
        s = self.s
        placed: dict[int, tuple[int, list[str]]] = {}
        for when, ids in sorted(self.pruned.items()):
            index = next((i for i, t in enumerate(times) if t > when), len(s.messages))
            placed.setdefault(index, (when, []))[1].extend(ids)
        for index, (when, ids) in placed.items():
            before = max((r.measured_context for r in s.requests if r.message_index < index), default=None)
            s.compactions.append(Compaction("microcompact", index, trigger="prune", pre_tokens=before,
                                            cleared_tool_ids=tuple(ids), timestamp=_iso(when)))
        s.compactions.sort(key=lambda c: c.index)


def _aborted(error: Any) -> bool:
    return isinstance(error, dict) and error.get("name") == "MessageAbortedError"


def _created(data: dict) -> int:
    t = data.get("time")
    return t.get("created") if isinstance(t, dict) and isinstance(t.get("created"), int) else 0


def _iso(ms: int | None) -> str | None:
    if not ms:
        return None
    return datetime.fromtimestamp(ms / 1000, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def load(path: Path, selector: str | None) -> Session:
    """The session at `path` (a database, with an optional session id, or a storage session file)."""
    with open(path, "rb") as f:
        database = f.read(16) == b"SQLite format 3\x00"
    if selector is not None and not database:
        raise LoadError(f"{path}{SELECTOR}{selector}: '{SELECTOR}ID' picks a session of an opencode database; "
                        f"{path} is not one")
    session = load_rows(database_rows(path, selector) if database else tree_rows(path))
    session.compaction_settings, session.model_limits = opencode_config(path, session.cwd, session.providers)
    return session


DISABLE_AUTOCOMPACT_ENV = "OPENCODE_DISABLE_AUTOCOMPACT"
LIMITS = ("context", "input", "output")


def opencode_config(path: Path, cwd: str | None, providers: dict[str, str], environ: dict[str, str] | None = None
                    ) -> tuple[Stated, dict[str, dict[str, int]]]:
    """The `opencode` policy's options and the model limits as opencode's config sets them. Options:
    `compaction.auto: false` turns its overflow compaction off (autocompact_enabled 0); `compaction.reserved`, what
    it keeps below an input limit (reserved). Limits: `provider.<id>.models.<id>.limit` {context, input, output} of
    each model the session called through that provider (`providers`), field by field over its catalog's.

    The files are merged as 1.18.33's Config.loadInstanceState merges them, the later winning: the global
    config.json, opencode.json and opencode.jsonc (in the `.config/opencode` of the home whose
    `.local/share/opencode` holds the session, else `$XDG_CONFIG_HOME/opencode` or `~/.config/opencode`); the
    project's opencode.json and opencode.jsonc found upwards from the session's directory to its git root, the
    outermost first; then those in the `.opencode` folders found the same way and in the home's;
    `OPENCODE_DISABLE_AUTOCOMPACT` (this process's environment: opencode's own is not recorded) last."""
    env = os.environ if environ is None else environ
    options = Stated()
    limits: dict[str, dict[str, int]] = {}
    for config_file in _config_files(path, cwd, env):
        doc = read_json(config_file, comments=True, trailing_commas=True)
        compaction = doc.get("compaction") if isinstance(doc.get("compaction"), dict) else {}
        if compaction.get("auto") is True:
            options.drop("autocompact_enabled")
        elif compaction.get("auto") is False:
            options.set("autocompact_enabled", 0, config_file)
        reserved = compaction.get("reserved")
        if reserved.__class__ is int and reserved >= 0:
            options.set("reserved", reserved, config_file)
        stated = doc.get("provider") if isinstance(doc.get("provider"), dict) else {}
        for model, provider in providers.items():
            entry = stated.get(provider)
            entry = entry.get("models") if isinstance(entry, dict) else None
            entry = entry.get(model) if isinstance(entry, dict) else None
            limit = entry.get("limit") if isinstance(entry, dict) else None
            for key in LIMITS if isinstance(limit, dict) else ():
                if limit.get(key).__class__ is int and limit[key] >= 0:
                    limits.setdefault(model, {})[key] = limit[key]
    if env.get(DISABLE_AUTOCOMPACT_ENV, "").lower() in ("1", "true"):
        options.set("autocompact_enabled", 0, f"${DISABLE_AUTOCOMPACT_ENV}")
    return options, limits


def _config_files(path: Path, cwd: str | None, env) -> list[Path]:
    """opencode's config files for a session at `path` run in `cwd`, lowest precedence first (`opencode_config`)."""
    data = next((folder for folder in (path, *path.parents) if folder.name == "opencode"), None)
    if data is not None and data.parent.name == "share" and data.parent.parent.name == ".local":
        home = data.parents[2]
        config = home / ".config" / "opencode"
    else:
        home = Path.home()
        config = Path(env.get("XDG_CONFIG_HOME") or home / ".config") / "opencode"
    files = [config / name for name in ("config.json", "opencode.json", "opencode.jsonc")]
    if cwd:
        up = up_to_git_root(Path(cwd))
        files += [d / name for d in reversed(up) for name in ("opencode.json", "opencode.jsonc")]
        files += [d / ".opencode" / name for d in up for name in ("opencode.json", "opencode.jsonc")]
    return files + [home / ".opencode" / name for name in ("opencode.json", "opencode.jsonc")]

