"""The capture file: created 0600, a header line, then one record per exchange in the order the exchanges started.

A record is written when its exchange ends and every exchange that started before it has been written (parallel
subagents' requests finish in any order; the file holds them in the order they were sent, each line whole, so a
reader that follows the file sees a conversation grow in order). Each line passes through `redact`, the secret
patterns every file the inspector writes is cleaned of, and loses the values of the exchange's own credential
headers wherever they appear. The file is never truncated or rewritten: it is created new (an existing file is
refused) and only appended to, one `os.write` loop per line.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import orjson

from inspector import __version__
from inspector.capture.exchange import Exchange, utc_now
from inspector.capture.redact import strike
from inspector.core.atomic import reason
from inspector.core.secrets import redact

VERSION = 1


class CaptureFile:
    def __init__(self, path: str | os.PathLike[str]) -> None:
        """Create `path` (FileExistsError if it exists); `begin` writes the header line."""
        self.path = Path(path)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)
        self._fd: int | None = os.open(self.path, flags, 0o600)
        os.fchmod(self._fd, 0o600)  # whatever the umask
        self._started = 0  # sequence numbers given out
        self._next = 1  # the next sequence number to write
        self._ready: dict[int, bytes] = {}  # finished records waiting for an earlier exchange to finish
        self.written = 0
        self.error: str | None = None  # why writing failed (the proxy goes on forwarding)

    def begin(self, fields: dict[str, Any]) -> None:
        """The header line: the format's version, when and by what the capture started, and `fields`."""
        self._write(orjson.dumps({"capture": {"version": VERSION, "started": utc_now(),
                                              "tool": f"context-inspector {__version__}", **fields}}) + b"\n")

    def next_seq(self) -> int:
        self._started += 1
        return self._started

    def finish(self, exchange: Exchange, record: dict[str, Any], secrets: list[str]) -> None:
        """Queue `record` (the exchange's, once it ended) and write every record now due."""
        text = redact(orjson.dumps(record, option=orjson.OPT_NON_STR_KEYS, default=str).decode())
        self._ready[exchange.seq] = strike(text, secrets).encode() + b"\n"
        self._flush()

    def _flush(self) -> None:
        while self._next in self._ready:
            line = self._ready.pop(self._next)
            self._next += 1
            if line:
                self._write(line)
                self.written += 1

    def close(self) -> None:
        """Write what is still waiting (an exchange that never ended leaves a gap in the sequence) and close."""
        for seq in sorted(self._ready):
            if self._ready[seq]:
                self._write(self._ready[seq])
                self.written += 1
        self._ready.clear()
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def _write(self, data: bytes) -> None:
        if self._fd is None or self.error is not None:
            return
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self._fd, view):]
        except OSError as exc:
            self.error = f"cannot write {self.path}: {reason(exc)}; the proxy goes on forwarding, unrecorded"
            print(f"context-inspector capture: {self.error}", file=sys.stderr)
