"""Line-offset index of a JSONL file: where every complete line starts, read in chunks, extended incrementally.

Sessions reach hundreds of megabytes and single lines tens of megabytes, and live ones grow while we read them. So
the file is never held in one string: it is read in fixed-size chunks, only the start offset of each complete line
is kept (8 bytes a line), and any line can be re-read on demand from its offset. A last line without its newline is
a write in progress: it is held back (not yielded, not indexed) until the newline arrives, so a follower calling
`read_new()` again later picks it up whole.

Every read is bounded. A line longer than `max_line` bytes, or a run of NUL bytes longer than a chunk (what a
crash, or `truncate -s 2G`, leaves), is not kept: it is indexed, yielded as an empty `Skipped` line that says how
long it was and why, and the reader goes on after it. A read stops at the size the file had when it began, so a
file growing faster than it is read still ends (the next `read_new()` goes on from there).
"""

from __future__ import annotations

import os
from array import array
from itertools import accumulate, repeat
from operator import add
from typing import Iterator

CHUNK = 1024 * 1024  # bytes read at a time: with its raw lines, what a read holds beyond what the loader keeps (4 MB
# chunks put 10 MB more on the peak RSS of loading 100,000 messages, and read no faster)
MAX_LINE = 100_000_000  # bytes one line may take: a parsed line costs ~4x its size, so at most ~430 MB


class Skipped(bytes):
    """An empty stand-in for a line that was not read: `length` bytes starting at `offset`, and why."""

    length: int
    why: str

    def __new__(cls, length: int, why: str) -> Skipped:
        self = super().__new__(cls, b"")
        self.length, self.why = length, why
        return self


class FileShrunk(Exception):
    """The file is now shorter than the part already indexed: it was truncated or replaced, so re-index it."""


class LineIndex:
    """Start offsets of the complete lines of `path` read so far. Line numbers are 1-based, as editors show them."""

    def __init__(self, path: str | os.PathLike[str], chunk_size: int = CHUNK, max_line: int = MAX_LINE) -> None:
        self.path = os.fspath(path)
        self.chunk_size = chunk_size
        self.max_line = max_line
        self.starts = array("q")
        self.end = 0  # byte offset just past the last complete line: where the next read starts
        self.size = 0  # the file's size when the last read began: no read goes past it
        self.skipped: list[tuple[int, int, int, str]] = []  # (line, offset, length, why) of the lines not read

    def __len__(self) -> int:
        return len(self.starts)

    def offset(self, line_no: int) -> int:
        """Byte offset where line `line_no` starts."""
        if not 1 <= line_no <= len(self.starts):
            raise IndexError(f"line {line_no} is not a complete line of {self.path}")
        return self.starts[line_no - 1]

    def read_line(self, line_no: int) -> bytes:
        """The raw bytes of line `line_no`, without its newline."""
        return read_line(self.path, self.offset(line_no))

    def pending(self) -> int:
        """Bytes after the last complete line (an unfinished write), 0 if the file ends with a newline."""
        try:
            return max(0, os.path.getsize(self.path) - self.end)
        except OSError:
            return 0

    def read_new(self) -> Iterator[tuple[int, int, bytes]]:
        """Yield `(line_no, offset, raw_line)` for every complete line written since the last call, indexing each
        (a `Skipped` for a line not read). Reads up to the size the file has now, no further.

        Raises FileShrunk if the file became shorter than what was already indexed. Stop iterating at any time: the
        index then covers the lines of the chunks read so far (`read_batches`)."""
        for first, offsets, lines in self.read_batches():
            yield from zip(range(first, first + len(lines)), offsets, lines)

    def read_batches(self) -> Iterator[tuple[int, list[int], list[bytes]]]:
        """`read_new` a chunk at a time: `(first line_no, offsets, raw lines)`, every line of the batch indexed
        when it is yielded (a large file's lines are split and their offsets summed in C, not one by one)."""
        with open(self.path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size < self.end:
                raise FileShrunk(f"{self.path} shrank from {self.end} to {size} bytes")
            self.size = size
            f.seek(self.end)
            pos = read = self.end
            carry: list[bytes] = []  # pieces of a line longer than one chunk
            carried = 0
            skipping = ""  # why the line being carried is not kept
            while read < size:
                chunk = f.read(min(self.chunk_size, size - read))
                if not chunk:
                    return
                read += len(chunk)
                start = 0
                nl = chunk.find(b"\n")
                if (carry or skipping) and nl >= 0:
                    carried += nl
                    line = Skipped(carried, skipping) if skipping else b"".join([*carry, chunk[:nl]])
                    carry.clear()
                    yield self._line(pos, carried, line)
                    pos, start, carried, skipping = self.end, nl + 1, 0, ""
                elif carry or skipping:
                    carried += len(chunk)
                    if not skipping:
                        carry.append(chunk)
                        skipping = self._too_much(carried, chunk)
                        if skipping:
                            carry.clear()
                    continue
                last = chunk.rfind(b"\n")
                if last >= start:
                    lines = chunk.split(b"\n")  # the whole chunk (a slice would copy it), less its ends:
                    lines.pop()  # the part after the last newline (carried below)
                    if start:
                        del lines[0]  # the end of the line carried in (taken above)
                    offsets = list(accumulate(map(add, map(len, lines), repeat(1)), initial=pos))
                    pos = offsets.pop()
                    if max(map(len, lines)) > self.max_line:
                        for i, line in enumerate(lines):
                            if len(line) > self.max_line:
                                lines[i] = Skipped(len(line), self._too_much(len(line), b""))
                                self.skipped.append((len(self.starts) + i + 1, offsets[i], len(line), lines[i].why))
                    first = len(self.starts) + 1
                    self.starts.extend(offsets)
                    self.end = pos
                    yield first, offsets, lines
                    start = last + 1
                if start < len(chunk):
                    carry.append(chunk[start:])
                    carried = len(chunk) - start
                    skipping = self._too_much(carried, carry[0])
                    if skipping:
                        carry.clear()

    def _line(self, pos: int, length: int, line: bytes) -> tuple[int, list[int], list[bytes]]:
        """One line carried over chunks, indexed: a batch of its own."""
        self.starts.append(pos)
        self.end = pos + length + 1
        if isinstance(line, Skipped):
            self.skipped.append((len(self.starts), pos, length, line.why))
        return len(self.starts), [pos], [line]

    def _too_much(self, carried: int, piece: bytes) -> str:
        """Why a line of `carried` bytes so far, `piece` its latest part, is not kept ("" when it is)."""
        if carried >= self.chunk_size and b"\0" in piece:
            return "NUL bytes, not text (what a crash or a truncate leaves)"
        if carried > self.max_line:
            return f"longer than the {self.max_line:,}-byte limit for one line"
        return ""

    def tail(self) -> bytes:
        """The unterminated bytes after the last complete line, up to the size the last read saw (a write in
        progress, or a file missing its final newline); not indexed. A `Skipped` when they are too many to keep,
        or a chunk of NUL bytes."""
        pending = self.size - self.end
        if pending <= 0:
            return b""
        with open(self.path, "rb") as f:
            f.seek(self.end)
            first = f.read(min(pending, self.chunk_size))
            why = self._too_much(pending, first)
            return Skipped(pending, why) if why else first + f.read(pending - len(first))


def read_line(path: str | os.PathLike[str], offset: int, chunk_size: int = 1 << 16) -> bytes:
    """Re-read the raw line starting at byte `offset` of `path` (without its newline), in chunks."""
    parts: list[bytes] = []
    with open(path, "rb") as f:
        f.seek(offset)
        while True:
            chunk = f.read(chunk_size)
            if not chunk:
                break
            nl = chunk.find(b"\n")
            if nl >= 0:
                parts.append(chunk[:nl])
                break
            parts.append(chunk)
            chunk_size = min(chunk_size * 2, CHUNK)
    return b"".join(parts)
