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
from itertools import count
from typing import Any, Callable, Iterator, Sequence

import orjson

from inspector.core.formats.blocks import NestedTooDeep
from inspector.core.gc_pause import gc_paused
from inspector.core.index import LineIndex, Skipped
from inspector.core.model import LoadWarning, Session

Progress = Callable[[int, int], None]
Feed = Callable[[int, int, Any], None]
FeedRun = Callable[[int, Sequence[int], list, Sequence[bytes]], None]
Warn = Callable[[int | None, str], None]
Skip = Callable[[int, int, bytes], bool]
Held = Callable[[int, int], None]
Decode = Callable[[bytes], Any]
Decoder = Callable[[list[bytes]], Decode]

PROGRESS_EVERY = 0.1  # seconds
RUN = 512  # lines parsed, then fed, at a time: what they make is still in the CPU's cache when it is fed
REFUSED = (ValueError, RecursionError)  # what a parse raises for a line it does not read (msgspec's: ValueErrors)


def read_jsonl(path: str | os.PathLike[str], feed: Feed, warn: Warn, progress: Progress | None = None,
               index: LineIndex | None = None, skip: Skip | None = None, held: Held | None = None,
               decoder: Decoder | None = None, feed_run: FeedRun | None = None) -> LineIndex:
    """Feed `(line_no, offset, obj)` for every line of `path` from where `index` stopped; return the index.

    `skip(line_no, offset, raw)`, when given, sees each raw line first and returns True for a line the caller has
    already taken (a live follower's last line, fed before its newline arrived). `held(line_no, bytes)`, when
    given, is told of an unfinished last line instead of a warning. `decoder(raws)`, when given, picks the loader's
    own fast parse (typed entries) for a run of raw lines: a line it refuses (ValueError, RecursionError) is parsed
    as JSON as usual. `feed_run(first line_no, offsets, objs, raws)`, when given, takes consecutive lines a run at a
    time, with their raw lines, instead of `feed` a line at a time (the unterminated last line still goes to `feed`)."""
    index = index if index is not None else LineIndex(path)  # an empty index is falsy (len 0)
    if held is None:
        def held(line_no: int, size: int) -> None:
            warn(line_no, unfinished(size))
    if feed_run is None:
        feed_run = _one_by_one(feed, warn)
    with gc_paused():
        _read(index, feed, feed_run, warn, progress, skip, held, decoder)
    return index


def unfinished(size: int) -> str:
    """What an unfinished last line is, said once for the CLI and the app alike."""
    return (f"unfinished last line not read: {size:,} bytes without a newline or a whole JSON value (a write in "
            "progress, or the file was cut short)")


def _one_by_one(feed: Feed, warn: Warn) -> FeedRun:
    """`feed_run` for a loader that is fed a line at a time."""
    def feed_run(first: int, offsets: Sequence[int], objs: list, raws: Sequence[bytes]) -> None:
        for line_no, offset, obj in zip(count(first), offsets, objs):
            try:
                feed(line_no, offset, obj)
            except NestedTooDeep as exc:  # a loader that cannot keep the line's place says so here, once for all
                warn(line_no, f"line skipped: {exc}")
    return feed_run


def _read(index: LineIndex, feed: Feed, feed_run: FeedRun, warn: Warn, progress: Progress | None, skip: Skip | None,
          held: Held, decoder: Decoder | None) -> None:
    """Each batch of the index is parsed and fed `RUN` lines at a time (`runs`): the lines the parse takes go to
    `feed_run` together, one it refuses alone to the generic path."""
    total = os.path.getsize(index.path)  # for progress: the read itself stops at the size it first sees
    # orjson: 3x the standard library's speed; what it refuses goes to the standard library (`_parse_odd`)
    generic = _parse_odd if decoder is None else _parse
    clock = time.monotonic
    next_report = clock() + PROGRESS_EVERY
    for first, offsets, lines in index.read_batches():
        if skip is not None:  # a line taken already reads as blank (asked of the lines that are not)
            lines = [b"" if raw and raw.__class__ is not Skipped and not raw.isspace() and skip(line_no, offset, raw)
                     else raw for line_no, offset, raw in zip(count(first), offsets, lines)]
        for lo in range(0, len(lines), RUN):
            raws = lines[lo:lo + RUN]
            for at, objs in runs(raws, decoder(raws) if decoder is not None else orjson.loads):
                at += lo
                if objs:
                    feed_run(first + at, offsets[at:at + len(objs)], objs, lines[at:at + len(objs)])
                else:
                    _odd(first + at, offsets[at], lines[at], feed_run, warn, generic)
            if progress is not None and clock() >= next_report:
                end = lo + len(raws)
                progress(offsets[end] if end < len(offsets) else index.end, total)
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


def runs(raws: list[bytes], decode: Decode) -> Iterator[tuple[int, list]]:
    """`(at, objs)`: the lines of `raws` from `at` on parsed by `decode`, one C-level `map` up to a line it refuses,
    which comes alone with no objs."""
    rest, done = iter(raws), 0
    while done < len(raws):
        objs: list = []
        try:
            objs.extend(map(decode, rest))  # what it parsed before a line it refuses stays in the list
        except REFUSED:
            pass
        if objs:
            yield done, objs
            done += len(objs)
        if done < len(raws):
            yield done, []
            done += 1


def _odd(line_no: int, offset: int, raw: bytes, feed_run: FeedRun, warn: Warn,
         generic: Callable[[bytes, int, Warn], Any]) -> None:
    """A line the fast parse refused: skipped by the index, blank, or parsed by the generic path and taken alone."""
    if raw.__class__ is Skipped:
        warn(line_no, f"line skipped at byte {offset:,}: {raw.length:,} bytes, {raw.why}")  # type: ignore[attr-defined]
        return
    if not raw or raw.isspace():
        return
    try:  # lone surrogates, huge integers, NaN, deep nesting, another encoding, bytes that are no UTF-8, or truly
        # corrupt: the standard library reads what it can and says which, and why
        obj = generic(raw, line_no, warn)
    except ValueError as exc:
        warn(line_no, f"corrupt line skipped ({_reason(exc)})")
        return
    feed_run(line_no, (offset,), [obj], (raw,))


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
