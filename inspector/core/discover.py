"""Find sessions: the bundled samples and recent sessions of every agent whose store is found (the picker, `stats`).

Each agent's store is one `Store` in `STORES`: where it is (honouring the agent's own environment overrides), how
its sessions are listed, and how a listed session's cheap facts (start, project) and message count are read. A
missing or unreadable store lists nothing. Only cheap facts are read here (size, modification time, the first 64 KB
for date and project); the message counts come later, from a worker of the picker: each session's loader counts it
(the number the app then shows), newest first, while a time budget lasts and the file is small enough; the rest get
a quick scan's estimate, which the picker marks "~".
"""

from __future__ import annotations

import os
import re
import stat
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterable

from inspector.core.formats.jsonl import loads
from inspector.core.formats.agent_stores import STORES as AGENT_STORES, SessionRef, sessions_under
from inspector.core.model import LoadError
from inspector.samples import sample_paths

HEAD = 1 << 16
LIMIT = 200  # newest sessions listed per store
EXACT_BYTES = 16 << 20  # sessions up to this size are counted by their loader (about half a second at most)
COUNT_BUDGET = 5.0  # seconds the picker spends loading sessions to count them; the rest are estimated


@dataclass(slots=True)
class Entry:
    path: Path
    source: str  # the agent that wrote it ("claude-code", "codex", ...), "sample" or "directory"
    size: int
    mtime: float
    started: str = ""  # the first timestamp the file states (UTC, as sessions record it)
    project: str = ""
    messages: int | None = None
    exact: bool = False  # `messages` is the loader's count (else an estimate)
    counter: Callable[[Path], int] | None = None  # how its messages are estimated (None: `count_messages`)

    @property
    def modified(self) -> str:
        """The last write, local time: what "recent" sorts by. A bundled sample's is its install time: none."""
        if self.source == "sample":
            return "-"
        return datetime.fromtimestamp(self.mtime).strftime("%Y-%m-%d %H:%M")

    def estimate(self) -> int:
        """A quick estimate of its messages, without loading it (OSError when the file went away)."""
        return (self.counter or count_messages)(self.path)

    def count(self, deadline: float) -> tuple[int, bool]:
        """Its messages as the app will show them (its loader's count) while `deadline` (time.monotonic) has not
        passed and the file is small enough, else the estimate; and whether the count is the loader's."""
        if self.size <= EXACT_BYTES and time.monotonic() < deadline:
            from inspector.core.formats import load

            try:
                return len(load(self.path).messages), True
            except LoadError:
                pass  # the app will say why when it is opened; an estimate meanwhile
        return self.estimate(), False


def count_all(entries: list[Entry], cancelled: Callable[[], bool] = lambda: False,
              budget: float = COUNT_BUDGET) -> Iterable[tuple[int, int, bool]]:
    """(row, messages, exact) for each entry, in order, loading them within `budget` seconds; an entry whose file
    went away is skipped."""
    deadline = time.monotonic() + budget
    for n, e in enumerate(entries):
        if cancelled():
            return
        try:
            yield (n, *e.count(deadline))
        except OSError:
            continue


@dataclass(frozen=True, slots=True)
class Store:
    """One agent's session store. `roots()` is where it is now (several for an agent kept per editor);
    `sessions(root, agent)` yields its sessions as entries (any order, facts read), skipping what it cannot
    read."""

    agent: str
    roots: Callable[[], list[Path]]
    sessions: Callable[[Path, str], Iterable[Entry]]


def _env_dir(var: str, default: Path, *parts: str) -> Path:
    """`$var/parts` when the variable is set (and not empty), else `default/parts`."""
    base = os.environ.get(var)
    return (Path(base) if base else default).joinpath(*parts)


def claude_projects() -> Path:
    return _env_dir("CLAUDE_CONFIG_DIR", Path.home() / ".claude", "projects")


def codex_sessions() -> Path:
    return Path.home() / ".codex" / "sessions"


def gemini_projects() -> Path:
    """Gemini CLI's per-project temporary directories: `$GEMINI_CLI_HOME` (else the home directory)/.gemini/tmp."""
    return _env_dir("GEMINI_CLI_HOME", Path.home(), ".gemini", "tmp")


def qwen_projects() -> Path:
    """Qwen Code's project directories: under `$QWEN_RUNTIME_DIR`, else `$QWEN_HOME`, else ~/.qwen."""
    base = os.environ.get("QWEN_RUNTIME_DIR") or os.environ.get("QWEN_HOME")
    return (Path(base).expanduser() if base else Path.home() / ".qwen") / "projects"


def opencode_data() -> Path:
    """opencode's data directory: `$XDG_DATA_HOME/opencode`, else ~/.local/share/opencode."""
    return _env_dir("XDG_DATA_HOME", Path.home() / ".local" / "share", "opencode")


def file_entry(path: Path, source: str, counter: Callable[[Path], int] | None = None) -> Entry | None:
    """An entry for a session file with its head facts, or None for what is no regular file (a FIFO would block
    the read forever; a directory is no session) or vanished."""
    try:
        st = path.stat()
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    e = Entry(path, source, st.st_size, st.st_mtime, counter=counter)
    _read_head(e)
    return e


def head_objects(path: Path, lines: int = 40) -> Iterable[dict]:
    """The JSON objects among the first `lines` lines of the first 64 KB of `path` (nothing when unreadable); a
    line that does not parse (a hostile one nested 100,000 deep, one cut by the 64 KB) is skipped."""
    try:
        with open(path, "rb") as f:
            head = f.read(HEAD)
    except OSError:
        return
    for raw in head.split(b"\n")[:lines]:
        try:
            obj = loads(raw)
        except ValueError:
            continue
        if isinstance(obj, dict):
            yield obj


def _read_head(e: Entry) -> None:
    """Start (first timestamp) and project (cwd) from the first lines; the file's mtime when it states none."""
    for obj in head_objects(e.path):
        payload = obj.get("payload") if isinstance(obj.get("payload"), dict) else {}
        stamp = obj.get("timestamp") or obj.get("created") or payload.get("timestamp")
        cwd = obj.get("cwd") or payload.get("cwd")
        if stamp and not e.started and isinstance(stamp, str):
            e.started = stamp[:16].replace("T", " ")
        if cwd and not e.project and isinstance(cwd, str):
            e.project = cwd
        if e.started and e.project:
            break
    if not e.started:
        e.started = utc_minutes(e.mtime)


def utc_minutes(seconds: float) -> str:
    """A POSIX time as the picker shows a start: UTC, to the minute."""
    return datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%d %H:%M")


_MESSAGE_ID = re.compile(rb'"id"\s*:\s*"(msg_[^"]+)"')


def count_messages(path: Path) -> int:
    """A quick estimate without parsing: lines that carry a message role, an assistant response split over several
    lines (Claude Code) counted once by its message id."""
    n = 0
    seen: set[bytes] = set()
    with open(path, "rb") as f:
        for line in f:
            if b'"role"' not in line:
                continue
            m = _MESSAGE_ID.search(line) if b'"assistant"' in line else None
            if m is not None:
                if m.group(1) in seen:
                    continue
                seen.add(m.group(1))
            n += 1
    return n


def glob_files(pattern: str, keep: Callable[[Path], bool] = lambda p: True,
               counter: Callable[[Path], int] | None = None) -> Callable[[Path, str], Iterable[Entry]]:
    """A store's `sessions` for sessions that are files matching `pattern` under its root."""
    def listing(root: Path, agent: str) -> Iterable[Entry]:
        for p in root.glob(pattern):
            if keep(p) and (e := file_entry(p, agent, counter)) is not None:
                yield e
    return listing


def _not_subagent(p: Path) -> bool:
    return not p.name.startswith("agent-")


def _gemini_sessions(root: Path, agent: str) -> Iterable[Entry]:
    from inspector.core.formats.gemini import project_root

    for pattern in ("*/chats/session-*.jsonl", "*/chats/session-*.json"):
        for e in glob_files(pattern, counter=count_gemini_messages)(root, agent):
            e.project = project_root(e.path) or e.project
            yield e


def count_gemini_messages(path: Path) -> int:
    """An estimate: distinct user and model records (a record written again counts once; `$set` copies are not
    scanned)."""
    ids: set[bytes] = set()
    with open(path, "rb") as f:
        for line in f:
            if line.startswith(b'{"id":"') and (b'"type":"user"' in line[:400] or b'"type":"gemini"' in line[:400]):
                ids.add(line[7:line.find(b'"', 7)])
    return len(ids)


def _opencode_sessions(root: Path, agent: str) -> Iterable[Entry]:
    """Every top-level session of opencode's databases (`$OPENCODE_DB`, else opencode*.db in its data directory),
    then those of an older storage tree that no database holds."""
    from inspector.core.formats import opencode

    named = os.environ.get("OPENCODE_DB")
    databases = [Path(named) if os.path.isabs(named) else root / named] if named and named != ":memory:" \
        else sorted(root.glob("opencode*.db"))
    seen: set[str] = set()
    for db in databases:
        try:
            rows = opencode.list_sessions(db)
        except Exception:  # a database being migrated, locked, corrupt or foreign: skipped, like a missing store
            continue
        for r in rows:
            seen.add(r["id"])
            if r["parent_id"]:
                continue  # a subagent's session: listed by its parent session
            updated = (r["time_updated"] or 0) / 1000
            yield Entry(Path(f"{db}{opencode.SELECTOR}{r['id']}"), agent, r["size"], updated,
                        started=utc_minutes((r["time_created"] or 0) / 1000), project=r["directory"] or "",
                        messages=r["messages"], counter=lambda p, n=r["messages"]: n)
    for e in glob_files("storage/session/*/*.json")(root, agent):
        if e.path.stem not in seen:
            yield e


def _referenced(listing: Callable[[Path], Iterable[SessionRef]]) -> Callable[[Path, str], Iterable[Entry]]:
    """A store's `sessions` from an agent store that lists `SessionRef`s (Copilot, Cline, Roo, the Cline SDK,
    Kimi, Kimi Code: `core.formats.agent_stores`)."""
    def sessions(root: Path, agent: str) -> Iterable[Entry]:
        for ref in listing(root):
            e = _ref_entry(ref, agent)
            if e is not None:
                yield e
    return sessions


def _ref_entry(ref: SessionRef, agent: str | None = None) -> Entry | None:
    e = file_entry(ref.path, agent or ref.agent)
    if e is not None:
        e.mtime, e.project = ref.mtime, ref.project or e.project
    return e


def _one(root: Callable[[], Path]) -> Callable[[], list[Path]]:
    return lambda: [root()]


STORES: list[Store] = [
    Store("claude-code", _one(claude_projects), glob_files("*/*.jsonl", _not_subagent)),
    Store("codex", _one(codex_sessions), glob_files("*/*/*/rollout-*.jsonl")),
    Store("gemini-cli", _one(gemini_projects), _gemini_sessions),
    Store("qwen-code", _one(qwen_projects), glob_files("*/chats/*.jsonl")),
    Store("opencode", _one(opencode_data), _opencode_sessions),
    *(Store(s.agent, s.roots, _referenced(s.sessions)) for s in AGENT_STORES),
]


def _newest(entries: Iterable[Entry]) -> list[Entry]:
    return sorted(entries, key=lambda e: -e.mtime)[:LIMIT]


def store_entries(store: Store, limit: int | None = LIMIT) -> list[Entry]:
    """The newest sessions of one store (all of them with `limit` None); none when it is missing or cannot be
    read."""
    found: list[Entry] = []
    try:
        roots = store.roots()
    except OSError:
        return []
    for root in roots:
        try:
            if root.is_dir():
                found += store.sessions(root, store.agent)
        except OSError:  # a store we may not enter, a file gone mid-listing: skipped, as if not there
            continue
    return _newest(found) if limit is not None else sorted(found, key=lambda e: -e.mtime)


def discover(directory: Path | None = None, *, home: bool = True) -> list[Entry]:
    """Sessions to offer: those in `directory` if given, else every store's recent sessions (when `home`), newest
    first, then the bundled samples."""
    if directory is not None:
        listed = sessions_under(directory)  # an agent store's folder: its own listing
        if listed is not None:
            return [e for ref in listed if (e := _ref_entry(ref)) is not None]
        return _newest(glob_files("*.jsonl", _not_subagent)(directory, "directory"))
    found: list[Entry] = []
    if home:
        for store in STORES:
            found += store_entries(store)
    found.sort(key=lambda e: -e.mtime)
    return found + [e for p in sample_paths() if (e := file_entry(p, "sample")) is not None]
