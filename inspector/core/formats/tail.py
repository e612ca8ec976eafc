"""A preview of a long session's end, read before the whole file: what a user looks at first, on screen in a
fraction of the full load's time.

`tail(path)` reads the last megabyte of a Claude Code transcript (from a line start) and builds it with the format's
own loader. Its messages are the last messages of the full load, equal to them but for their source line numbers,
which the preview does not have (`lines` empty, `line` None): knowing where the tail starts in lines means reading
every byte before it (151 MB at 100,000 messages, 50-60 ms from the page cache, the disk's read time when not
cached), which the full load does anyway; byte offsets are the file's. The first response seen in the tail may have
begun before it (its earlier lines, or the tool results that answer it, lie outside), so the preview starts at the
first line of the next response; responses of the main window follow one another, so every later one lies wholly in
the tail. What the tail cannot tell (messages before it, their token figures, line numbers, load warnings) is the
full load's to say: a preview has no warnings, and any tail that does not give one (another format, a file too
short, fewer than two responses in the tail) gives None, and the caller waits for the full load.

Formats other than Claude Code JSONL are not previewed: Codex, Gemini CLI, Qwen Code and Copilot write the
session's model and settings (or the conversation a later line replaces) near the start, so a tail alone cannot be
loaded as the full load would; the conversation captures and documents are one request or one JSON value.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import orjson

from inspector.core.formats import first_byte, resolve, subagent_files
from inspector.core.formats.detect import detect
from inspector.core.index import LineIndex
from inspector.core.model import Session

TAIL_BYTES = 1024 * 1024  # what the preview reads: ~1,500 messages of short tool calls and results
WORTH = 4 * TAIL_BYTES  # a file no longer is read whole in about the time of its preview and a second read


@dataclass(slots=True, repr=False)
class Tail:
    """The session's last messages (`session`: no warnings, no line numbers) and where they start in the file,
    `offset` in bytes."""

    session: Session
    offset: int


def tail(path: str | os.PathLike[str], tail_bytes: int = TAIL_BYTES, worth: int = WORTH) -> Tail | None:
    """The preview of the session at `path`, or None when there is none to give (see the module's docstring) or
    the file is no longer than `worth` bytes. Never raises on bad input: a tail that cannot be read or built is
    no preview."""
    try:
        return _tail(resolve(path), tail_bytes, worth)
    except Exception:  # a preview is an extra: every problem is the full load's to report
        return None


def _tail(path: Path, tail_bytes: int, worth: int) -> Tail | None:
    from inspector.core.formats.claude_code import ClaudeCodeLoader

    size = path.stat().st_size
    if size <= max(tail_bytes, worth) or detect(path) != "claude-code" or first_byte(path) == b"[":
        return None
    with open(path, "rb") as f:
        f.seek(size - tail_bytes - 1)
        data = f.read(tail_bytes + 1)
        cut = data.find(b"\n")  # the line that starts in the tail (the byte before it ends the line before)
        if cut < 0:
            return None
        start = size - tail_bytes + cut
    entries = list(_entries(data[cut + 1:], start))
    side = not any(_main(obj) for _line, _offset, obj in entries)
    if side and _starts_main(path):
        return None  # the main window lies wholly before the tail: only the full load finds it
    first = _second_response(entries, side)
    if first is None:
        return None
    loader = ClaudeCodeLoader(str(path), subagent_files(path))
    for entry in entries[first:]:
        loader.feed(*entry)
    session = loader.build()
    if not session.messages:
        return None
    _unnumbered(session)
    return Tail(session, entries[first][1])


def _entries(data: bytes, offset: int):
    """(line number counted from the tail's start, offset, object) of every line of `data` that parses; the rest
    are the full load's to report (an unterminated last line included: the full load takes it only when it is
    whole JSON)."""
    for number, raw in enumerate(data.split(b"\n"), 1):
        if raw.strip():
            try:
                yield number, offset, orjson.loads(raw)
            except ValueError:
                pass
        offset += len(raw) + 1


def _unnumbered(session: Session) -> None:
    """Take out the line numbers the loader was fed (counted from the tail's start: not the file's) and its warnings
    (the full load's to give, with the right lines)."""
    session.warnings = []
    for m in session.messages:
        m.lines = ()
    for item in (*session.requests, *session.compactions):
        item.line = None


def _main(obj) -> bool:
    """A user or assistant entry of the main window (the loader builds the sidechain only when there is none: a
    subagent's own file)."""
    return obj.__class__ is dict and obj.get("type") in ("user", "assistant") and not obj.get("isSidechain")


def _starts_main(path: Path) -> bool:
    """Whether the file's first user or assistant entry is of the main window (read up to it, in small chunks)."""
    for _line, _offset, raw in LineIndex(path, chunk_size=1 << 16).read_new():
        try:
            obj = orjson.loads(raw)
        except ValueError:
            continue
        if obj.__class__ is dict and obj.get("type") in ("user", "assistant"):
            return _main(obj)
    return False


def _second_response(entries: list, side: bool) -> int | None:
    """The index in `entries` of the first line of the second API response of the window the loader builds (the
    main one, or the sidechain when `side`); None when the tail holds fewer."""
    seen: str | None = None
    for i, (_line, _offset, obj) in enumerate(entries):
        if obj.__class__ is not dict or obj.get("type") != "assistant" or bool(obj.get("isSidechain")) != side:
            continue
        message = obj.get("message")
        rid = message.get("id") if message.__class__ is dict else None
        if rid.__class__ is not str or rid == seen:
            continue
        if seen is not None:
            return i
        seen = rid
    return None
