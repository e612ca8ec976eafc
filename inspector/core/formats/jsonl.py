"""Read a JSONL session line by line through the line index, feeding each parsed object to a loader.

A corrupt line becomes a warning with its line number and reading goes on. An unterminated last line is fed only
when it is complete JSON (a file merely missing its final newline); otherwise it is a write in progress (or a file
cut short) and is held back, with a warning naming it (a follower, which reads it once its newline comes, is told
apart instead: `held`). Progress is reported in time-boxed batches, so a caller's UI updates a few times a second whatever the
line sizes.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any, Callable

import orjson

from inspector.core.formats.blocks import NestedTooDeep
from inspector.core.gc_pause import gc_paused
from inspector.core.index import LineIndex, Skipped
from inspector.core.model import LoadWarning, Session

Progress = Callable[[int, int], None]
Feed = Callable[[int, int, Any], None]
Warn = Callable[[int | None, str], None]
Skip = Callable[[int, int, bytes], bool]
Held = Callable[[int, int], None]
Decode = Callable[[bytes], Any]

PROGRESS_EVERY = 0.1  # seconds
REFUSED = (ValueError, RecursionError)  # what a parse raises for a line it does not read (msgspec's: ValueErrors)


def read_jsonl(path: str | os.PathLike[str], feed: Feed, warn: Warn, progress: Progress | None = None,
               index: LineIndex | None = None, skip: Skip | None = None, held: Held | None = None,
               decode: Decode | None = None) -> LineIndex:
    """Feed `(line_no, offset, obj)` for every line of `path` from where `index` stopped; return the index.

    `skip(line_no, offset, raw)`, when given, sees each raw line first and returns True for a line the caller has
    already taken (a live follower's last line, fed before its newline arrived). `held(line_no, bytes)`, when
    given, is told of an unfinished last line instead of a warning. `decode(raw)`, when given, is the loader's
    own fast parse (typed entries): a line it refuses (ValueError, RecursionError) is parsed as JSON as usual."""
    index = index if index is not None else LineIndex(path)  # an empty index is falsy (len 0)
    if held is None:
        def held(line_no: int, size: int) -> None:
            warn(line_no, unfinished(size))
    with gc_paused():
        _read(index, feed, warn, progress, skip, held, decode)
    return index


def unfinished(size: int) -> str:
    """What an unfinished last line is, said once for the CLI and the app alike."""
    return (f"unfinished last line not read: {size:,} bytes without a newline or a whole JSON value (a write in "
            "progress, or the file was cut short)")


def _read(index: LineIndex, feed: Feed, warn: Warn, progress: Progress | None, skip: Skip | None,
          held: Held, fast: Decode | None) -> None:
    total = os.path.getsize(index.path)  # for progress: the read itself stops at the size it first sees
    # orjson: 3x the standard library's speed; what it refuses goes to the standard library (`_parse_odd`)
    decode, generic = (orjson.loads, _parse_odd) if fast is None else (fast, _parse)
    clock = time.monotonic
    next_report = clock() + PROGRESS_EVERY
    for first, offsets, lines in index.read_batches():
        for line_no, offset, raw in zip(range(first, first + len(lines)), offsets, lines):
            if raw.__class__ is Skipped:
                warn(line_no, f"line skipped at byte {offset:,}: {raw.length:,} bytes, {raw.why}")  # type: ignore[attr-defined]
                continue
            if not raw or raw.isspace() or (skip is not None and skip(line_no, offset, raw)):
                continue
            try:
                obj = decode(raw)
            except REFUSED:
                try:  # lone surrogates, huge integers, NaN, deep nesting, another encoding, bytes that are no
                    # UTF-8, or truly corrupt: the standard library reads what it can and says which, and why
                    obj = generic(raw, line_no, warn)
                except ValueError as exc:
                    warn(line_no, f"corrupt line skipped ({_reason(exc)})")
                    continue
            try:
                feed(line_no, offset, obj)
            except NestedTooDeep as exc:  # a loader that cannot keep the line's place says so here, once for all
                warn(line_no, f"line skipped: {exc}")
            if progress is not None and clock() >= next_report:
                progress(offset + len(raw) + 1, total)
                next_report = clock() + PROGRESS_EVERY
    tail = index.tail()
    if isinstance(tail, Skipped):
        warn(len(index) + 1, f"unterminated last line at byte {index.end:,} not read: {tail.length:,} bytes, "
                             f"{tail.why}")
    elif tail.strip():
        try:
            obj = loads(tail)
        except ValueError:  # an unfinished write: held back until its newline arrives
            held(len(index) + 1, len(tail))
        else:
            feed(len(index) + 1, index.end, obj)
    if progress is not None:
        progress(total, total)


class ObjectLoader:
    """What the JSONL loaders that build one Session share: a line's problem is a warning on that session, and only
    JSON objects reach `take` (any other value is warned of and skipped)."""

    session: Session

    def warn(self, line: int | None, message: str) -> None:
        self.session.warnings.append(LoadWarning(line, message))

    def feed(self, line_no: int | None, offset: int | None, obj: Any) -> None:
        if not isinstance(obj, dict):
            self.warn(line_no, f"not a JSON object ({type(obj).__name__}), skipped")
        else:
            self.take(line_no, offset, obj)

    def take(self, line_no: int | None, offset: int | None, obj: dict) -> None:
        raise NotImplementedError


class UnknownKinds:
    """Lines of a kind a loader does not know, counted by kind with the first line it showed on: one warning a
    kind, however many lines of it a newer version of the agent writes."""

    def __init__(self, noun: str = "entry", plural: str = "entries") -> None:
        self.noun, self.plural = noun, plural
        self.kinds: dict[str, list] = {}  # kind -> [count, first line]

    def note(self, kind: Any, line: int | None) -> None:
        self.kinds.setdefault(str(kind), [0, line])[0] += 1

    def warnings(self) -> list[LoadWarning]:
        return [LoadWarning(first, f"skipped {n} {self.plural if n > 1 else self.noun} of unknown type {kind!r}")
                for kind, (n, first) in self.kinds.items()]


def first_object(path: str | os.PathLike[str]) -> Any:
    """The first non-blank line of `path` parsed as JSON, or None when it does not parse (say, a pretty-printed
    document whose first line is just `{`). Reads only that line."""
    for _line_no, _offset, raw in LineIndex(path, chunk_size=1 << 16).read_new():
        if raw.strip():
            try:
                return loads(raw)
            except ValueError:
                return None
    return None


def loads(data: str | bytes) -> Any:
    """json.loads, failing on every bad input with ValueError: nesting deeper than Python's recursion limit (a
    hostile or broken line) included, which json.loads reports as RecursionError."""
    try:
        return json.loads(data)
    except RecursionError:
        raise ValueError("nested too deeply to read") from None


def _parse(raw: bytes, line_no: int, warn: Warn) -> Any:
    """A line a loader's own fast parse refused, parsed as any other line is."""
    try:
        return orjson.loads(raw)
    except ValueError:
        return _parse_odd(raw, line_no, warn)


def _parse_odd(raw: bytes, line_no: int, warn: Warn) -> Any:
    """A line the fast path refused: another encoding (a BOM, UTF-16), else UTF-8 with invalid bytes replaced
    (one bad byte in a tool's output should not cost the whole message), else ValueError."""
    try:
        return loads(raw)
    except UnicodeDecodeError:
        obj = loads(raw.decode("utf-8", "replace"))
        warn(line_no, "invalid UTF-8 bytes shown as \ufffd")
        return obj


def _reason(exc: ValueError) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg.removesuffix(' at')} at column {exc.colno}"  # "Unterminated string starting at"
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
