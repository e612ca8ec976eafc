"""The agent's session file: neutral JSONL (docs/neutral-format.md), appended as the loop runs.

Each line is written and fsync'd as its event arrives, so a crash loses at most the line in flight and the
inspector can follow the file live; a failed write (a full disk) stops the turn with an error event, and the next
write that succeeds catches up. Lines come from `inspector.core.formats.neutral` (header_dict, message_to_dict,
compaction_dict): what is written is exactly what the neutral loader reads back, usage per request included.
Streaming deltas are not written (the messages they make up are); neither is anything from the environment: the
API key never reaches the file.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from inspector.core.agent.events import CompactionFinished, Error, Event, MessageAdded, TurnDone, Usage
from inspector.core.atomic import WriteFailed, remove_quietly, write_all
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
        raise LoadError(f"{path}: a session in the {loaded.format} format, not one the agent wrote: give --session "
                        "a new file or an agent session")
    models = [m for m in loaded.models if m not in fresh.models] + fresh.models
    return loaded.copy_with(cwd=fresh.cwd, system=fresh.system, tools=fresh.tools, models=models), loaded


class SessionWriter:
    """Appends to `path` (created with mode 0600: sessions hold file contents and command output).

    `previous` is what the file already holds (from `open_session`). Without it the file starts with the whole of
    `session` (header, any messages it already has, its compactions), so a session begun elsewhere (loaded from
    another format, say) is continued in a file that holds all of it. With it, only a new header is written, and
    only when the system prompt, tools or model changed.

    A write that fails (a full disk, a quota, the file's directory gone read-only) raises WriteFailed ("cannot
    write PATH: REASON") after cutting off whatever part of its lines reached the file, so the file stays a whole
    prefix of the session. The lines not written are kept and go first at the next write: once the disk has room
    again, the file catches up with the conversation held in memory. Failing while opening (the first lines
    included) leaves the file as it was, and removes it when this writer created it."""

    def __init__(self, path: Path, session: Session, previous: Session | None = None) -> None:
        self.path = path
        self.failed: WriteFailed | None = None  # the last failure, until a write succeeds again
        self._pending: list[bytes] = []  # encoded lines not yet in the file, in order
        existed = path.exists()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        except OSError as exc:
            raise WriteFailed(path, exc) from None
        try:
            try:
                _end_last_line(self._fd)
            except OSError as exc:
                raise WriteFailed(path, exc) from None
            lines = session_lines(session) if previous is None else (
                [header_dict(session)] if _header(previous) != _header(session) else [])
            self._append(lines)
        except BaseException:
            self._pending.clear()
            if not existed:
                remove_quietly(path)
            os.close(self._fd)
            raise

    def handle(self, event: Event) -> None:
        """Append the lines `event` adds to the file (none for most events); WriteFailed when that fails."""
        if isinstance(event, MessageAdded):
            self._append([message_to_dict(event.message, event.request)])
        elif isinstance(event, CompactionFinished):
            changes = event.edits if event.compaction.kind == "microcompact" else None
            self._append([compaction_dict(event.compaction, event.strategy, changes),
                          *(message_to_dict(message) for message in event.messages)])

    def tee(self, events: Iterable[Event]) -> Iterator[Event]:
        """Pass `events` through, writing each before handing it on.

        When a line cannot be written the turn stops rather than running on unrecorded: the event is still handed
        on (the conversation in memory holds it), the loop is closed, and Error("cannot write PATH: REASON; the
        turn was stopped", "write_error") and TurnDone("error") end the stream. The next turn's first write
        retries the lines held back; the loop answers any tool call left without results before it goes on."""
        calls = 0
        for event in events:
            calls += isinstance(event, Usage)
            try:
                self.handle(event)
            except WriteFailed as exc:
                close = getattr(events, "close", None)
                if close is not None:
                    close()
                yield event
                yield Error(f"{exc}; the turn was stopped", "write_error")
                yield TurnDone("error", calls)
                return
            yield event

    def close(self) -> None:
        """Close the file; lines still held back after a failure are lost with it (the error said so)."""
        if self._fd >= 0:
            fd, self._fd = self._fd, -1
            os.close(fd)

    def __enter__(self) -> SessionWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _append(self, lines: Iterable[dict[str, Any]]) -> None:
        """Write the held-back lines and then `lines`, fsync'd, all or none: on failure the file is cut back to
        where it ended and every line is held back."""
        self._pending += [_encode(obj) for obj in lines]
        if not self._pending:
            return
        start = os.fstat(self._fd).st_size
        try:
            for line in self._pending:
                write_all(self._fd, line)
            os.fsync(self._fd)
        except OSError as exc:
            try:
                os.ftruncate(self._fd, start)
            except OSError:
                pass  # a device (/dev/full) cannot be cut; a regular file that cannot is left to the loader
            self.failed = WriteFailed(self.path, exc)
            raise self.failed from None
        self._pending.clear()
        self.failed = None


def _encode(obj: dict[str, Any]) -> bytes:
    """One JSON line, keys redacted; a lone surrogate (from a "\\ud800" escape) is written as that escape."""
    return redact(json.dumps(obj, ensure_ascii=False, default=str)).encode("utf-8", "backslashreplace") + b"\n"


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
