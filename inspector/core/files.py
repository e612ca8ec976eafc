"""Reading a file the user named (a template, a summary, an instruction file): bounded, never blocking.

`path.read_bytes()` reads /dev/zero until memory runs out and blocks forever on a FIFO nobody writes to. Here the
limit is applied while reading, and the file is opened without blocking: a FIFO without a writer reads as empty
at once, one with a writer (`--summary-file <(...)`, a pipe) is read as it comes.
"""

from __future__ import annotations

import os
from pathlib import Path


def read_limited(path: str | os.PathLike[str], limit: int) -> bytes:
    """At most `limit` bytes of `path` (read `limit + 1` to learn that a file is larger); OSError as open
    raises it (IsADirectoryError for a directory)."""
    fd = os.open(Path(path), os.O_RDONLY | os.O_NONBLOCK)
    try:
        os.set_blocking(fd, True)  # regular files ignore it; a FIFO now waits for its writer's data, if any
        parts: list[bytes] = []
        left = limit
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            parts.append(chunk)
            left -= len(chunk)
        return b"".join(parts)
    finally:
        os.close(fd)
