"""Line-offset index of a JSONL file: where every complete line starts, read in chunks, extended incrementally.

Sessions reach hundreds of megabytes and single lines tens of megabytes, and live ones grow while we read them. So
the file is never held in one string: it is read in fixed-size chunks, only the start offset of each complete line
is kept (8 bytes a line), and any line can be re-read on demand from its offset. A last line without its newline is
a write in progress: it is held back (not yielded, not indexed) until the newline arrives, so a follower calling
`read_new()` again later picks it up whole.
"""

from __future__ import annotations

import os
from array import array
from typing import Iterator

CHUNK = 4 * 1024 * 1024


class FileShrunk(Exception):
    """The file is now shorter than the part already indexed: it was truncated or replaced, so re-index it."""


class LineIndex:
    """Start offsets of the complete lines of `path` read so far. Line numbers are 1-based, as editors show them."""

    def __init__(self, path: str | os.PathLike[str], chunk_size: int = CHUNK) -> None:
        self.path = os.fspath(path)
        self.chunk_size = chunk_size
        self.starts = array("q")
        self.end = 0  # byte offset just past the last complete line: where the next read starts

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
        """Yield `(line_no, offset, raw_line)` for every complete line written since the last call, indexing each.

        Raises FileShrunk if the file became shorter than what was already indexed. Stop iterating at any time: the
        index then covers exactly the lines yielded so far.
        """
        with open(self.path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size < self.end:
                raise FileShrunk(f"{self.path} shrank from {self.end} to {size} bytes")
            f.seek(self.end)
            pos = self.end
            starts = self.starts
            carry: list[bytes] = []  # pieces of a line longer than one chunk
            while True:
                chunk = f.read(self.chunk_size)
                if not chunk:
                    return
                start = 0
                nl = chunk.find(b"\n")
                if carry and nl >= 0:
                    carry.append(chunk[:nl])
                    line = b"".join(carry)
                    carry.clear()
                    starts.append(pos)
                    self.end = pos + len(line) + 1
                    yield len(starts), pos, line
                    pos = self.end
                    start = nl + 1
                elif carry:
                    carry.append(chunk)
                    continue
                last = chunk.rfind(b"\n")
                if last >= start:
                    for line in chunk[start:last].split(b"\n"):
                        starts.append(pos)
                        self.end = pos + len(line) + 1
                        yield len(starts), pos, line
                        pos = self.end
                    start = last + 1
                if start < len(chunk):
                    carry.append(chunk[start:])

    def tail(self) -> bytes:
        """The unterminated bytes after the last complete line (a write in progress, or a file missing its final
        newline); not indexed."""
        with open(self.path, "rb") as f:
            f.seek(self.end)
            return f.read()


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
