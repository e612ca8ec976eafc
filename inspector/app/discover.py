"""Find sessions for the picker: the bundled samples, recent Claude Code and Codex sessions.

Only cheap facts are read here (size, modification time, the first 64 KB for date, project and format); the message
count is a line scan that the picker runs in a worker after it has painted.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from inspector.core.formats.jsonl import loads
from inspector.samples import sample_paths

HEAD = 1 << 16
LIMIT = 200  # newest sessions listed per source


@dataclass(slots=True)
class Entry:
    path: Path
    source: str  # "sample", "claude-code", "codex" or "directory"
    size: int
    mtime: float
    started: str = ""  # the first timestamp the file states (UTC, as sessions record it)
    project: str = ""
    messages: int | None = None

    @property
    def modified(self) -> str:
        """The last write, local time: what "recent" sorts by. A bundled sample's is its install time: none."""
        if self.source == "sample":
            return "-"
        return datetime.fromtimestamp(self.mtime).strftime("%Y-%m-%d %H:%M")


def claude_projects() -> Path:
    base = os.environ.get("CLAUDE_CONFIG_DIR")
    return (Path(base) if base else Path.home() / ".claude") / "projects"


def codex_sessions() -> Path:
    return Path.home() / ".codex" / "sessions"


def _entry(path: Path, source: str) -> Entry | None:
    try:
        st = path.stat()
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):  # a FIFO would block the read below forever; a directory is no session
        return None
    e = Entry(path, source, st.st_size, st.st_mtime)
    _read_head(e)
    return e


def _read_head(e: Entry) -> None:
    """Start (first timestamp) and project (cwd) from the first lines; the file's mtime when it states none."""
    try:
        with open(e.path, "rb") as f:
            head = f.read(HEAD)
    except OSError:
        head = b""
    for raw in head.split(b"\n")[:40]:
        try:
            obj = loads(raw)  # a hostile line (nested 100,000 deep) is just skipped
        except ValueError:
            continue
        if not isinstance(obj, dict):
            continue
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
        e.started = datetime.fromtimestamp(e.mtime, timezone.utc).strftime("%Y-%m-%d %H:%M")


_MESSAGE_ID = re.compile(rb'"id"\s*:\s*"(msg_[^"]+)"')


def count_messages(path: Path) -> int:
    """A quick count for the picker without parsing: lines that carry a message role, an assistant response split
    over several lines (Claude Code) counted once by its message id."""
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


def _newest(paths: list[Path], source: str) -> list[Entry]:
    entries = [e for p in paths if (e := _entry(p, source)) is not None]
    entries.sort(key=lambda e: -e.mtime)
    return entries[:LIMIT]


def discover(directory: Path | None = None, *, home: bool = True) -> list[Entry]:
    """Sessions to offer: those in `directory` if given, else recent Claude Code and Codex sessions (when `home`),
    then the bundled samples."""
    if directory is not None:
        files = [p for p in directory.glob("*.jsonl") if not p.name.startswith("agent-")]
        return _newest(files, "directory")
    found: list[Entry] = []
    if home:
        projects = claude_projects()
        if projects.is_dir():
            found += _newest([p for p in projects.glob("*/*.jsonl") if not p.name.startswith("agent-")],
                             "claude-code")
        codex = codex_sessions()
        if codex.is_dir():
            found += _newest(list(codex.glob("*/*/*/rollout-*.jsonl")), "codex")
    found.sort(key=lambda e: -e.mtime)
    return found + [e for p in sample_paths() if (e := _entry(p, "sample")) is not None]
