"""The agent's session file: neutral JSONL (docs/neutral-format.md), appended as the loop runs.

Each line is written, flushed and fsync'd as its event arrives, so a crash loses at most the line in flight and
the inspector can follow the file live. Lines come from `inspector.core.formats.neutral` (header_dict,
message_to_dict, compaction_dict): what is written is exactly what the neutral loader reads back, usage per
request included. Streaming deltas are not written (the messages they make up are); neither is anything from the
environment: the API key never reaches the file.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from inspector.core.agent.events import CompactionFinished, Event, MessageAdded
from inspector.core.formats import load
from inspector.core.formats.jsonl import loads
from inspector.core.formats.neutral import compaction_dict, header_dict, message_to_dict, session_lines
from inspector.core.model import LoadError, Session
from inspector.core.prompt.memory import user_data_dir
from inspector.core.secrets import redact


TAIL_CHUNK = 1 << 16


def default_session_path(now: datetime | None = None) -> Path:
    """A new file under the per-user data directory: sessions/<UTC time>-<random>.jsonl."""
    stamp = (now or datetime.now(timezone.utc)).strftime("%Y%m%d-%H%M%S")
    return user_data_dir() / "sessions" / f"{stamp}-{uuid.uuid4().hex[:8]}.jsonl"


def open_session(path: Path, fresh: Session) -> tuple[Session, Session | None]:
    """The session to continue and the one the file held (None for a new or empty file). A loaded session takes
    the header values of `fresh` (cwd, system prompt, tools, model): the ones the next turn uses."""
    if not path.exists() or path.stat().st_size == 0:
        return fresh, None
    loaded = load(path)
    if loaded.format != "neutral":
        raise LoadError(f"{path}: a {loaded.format} session, not one the agent wrote: give --session a new file "
                        "or an agent session")
    models = [m for m in loaded.models if m not in fresh.models] + fresh.models
    return loaded.copy_with(cwd=fresh.cwd, system=fresh.system, tools=fresh.tools, models=models), loaded


class SessionWriter:
    """Appends to `path` (created with mode 0600: sessions hold file contents and command output).

    `previous` is what the file already holds (from `open_session`). Without it the file starts with the whole of
    `session` (header, any messages it already has, its compactions), so a session begun elsewhere (loaded from
    another format, say) is continued in a file that holds all of it. With it, only a new header is written, and
    only when the system prompt, tools or model changed."""

    def __init__(self, path: Path, session: Session, previous: Session | None = None) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        _end_last_line(fd)
        self._file = os.fdopen(fd, "a", encoding="utf-8", errors="backslashreplace")  # lone surrogates as \udXXX
        if previous is None:
            for line in session_lines(session):
                self._write(line)
        elif _header(previous) != _header(session):
            self._write(header_dict(session))

    def handle(self, event: Event) -> None:
        if isinstance(event, MessageAdded):
            self._write(message_to_dict(event.message, event.request))
        elif isinstance(event, CompactionFinished):
            replacements = event.replacements if event.compaction.kind == "microcompact" else None
            self._write(compaction_dict(event.compaction, event.strategy, replacements))
            for message in event.messages:
                self._write(message_to_dict(message))

    def tee(self, events: Iterable[Event]) -> Iterator[Event]:
        """Pass `events` through, writing each before handing it on."""
        for event in events:
            self.handle(event)
            yield event

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> SessionWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _write(self, obj: dict[str, Any]) -> None:
        self._file.write(redact(json.dumps(obj, ensure_ascii=False, default=str)) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())


def _end_last_line(fd: int) -> None:
    """A crash mid-write leaves the file's last line unfinished, and appending would glue the next line onto it,
    losing both. A last line that is whole JSON (only its newline missing: the loader read it) gets its newline;
    a torn one (the loader held it back) is cut off."""
    size = os.fstat(fd).st_size
    start, tail = size, b""
    while start > 0:
        step = min(TAIL_CHUNK, start)
        chunk = os.pread(fd, step, start - step)
        nl = chunk.rfind(b"\n")
        if nl >= 0:
            tail = chunk[nl + 1:] + tail
            start -= step - nl - 1
            break
        tail, start = chunk + tail, start - step
    if not tail:
        return
    try:
        loads(tail)
    except ValueError:
        os.ftruncate(fd, start)
    else:
        os.write(fd, b"\n")


def _header(session: Session) -> dict[str, Any]:
    return header_dict(session, created="")
