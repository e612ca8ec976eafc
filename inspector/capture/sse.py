"""Server-sent events, split incrementally from the bytes of a response as they arrive.

A chunk may end anywhere (mid-line, between the CR and LF of a line end, mid-event); `SSEParser.feed` returns the
run of whole events the bytes so far complete (bytes ending in a blank line) and keeps the rest. Nothing is copied
while no event ends: a long event (a `response.completed` carrying the whole response) costs one join, not one per
chunk. `split` reads a run as the SSE rules say: lines end in LF, CRLF or CR (normalized to LF on the way in),
`data:` lines of one event join with LF, one space after the colon is dropped, comments (`:`) and other fields are
ignored. `data_array` is the fast road for a run of events in the shape every API sends (an `event:` line and one
`data:` line each): their data as the text of one JSON array, made by two regular-expression passes in C (None for
a run of any other shape: the caller then reads it with `split`).
"""

from __future__ import annotations

import re

Event = tuple[bytes, bytes]  # (event name, b"" when the event has none; data)

_DATA = re.compile(rb"(?:event: [^\n]*\n)?data: ([^\n]*)\n\n")
_USUAL = re.compile(rb"(?:(?:event: [^\n]*\n)?data: [^\n]*\n\n)*")


class SSEParser:
    def __init__(self) -> None:
        self._pending: list[bytes] = []
        self._ends_lf = False  # the pending bytes end in LF: a chunk starting with LF completes an event
        self._cr = False  # the last chunk ended in CR: a chunk starting with LF is the same line end

    def feed(self, data: bytes) -> bytes:
        """The whole events these bytes complete (with the pending ones before them), b"" when none."""
        if self._cr or b"\r" in data:
            if self._cr and data[:1] == b"\n":
                data = data[1:]
            self._cr = data.endswith(b"\r")
            data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        if not data:
            return b""
        if b"\n\n" not in data and not (self._ends_lf and data[:1] == b"\n"):
            self._pending.append(data)
            self._ends_lf = data.endswith(b"\n")
            return b""
        buf = b"".join(self._pending) + data if self._pending else data
        end = buf.rfind(b"\n\n") + 2
        rest = buf[end:]
        self._pending = [rest] if rest else []
        self._ends_lf = rest.endswith(b"\n")
        return buf[:end]

    def close(self) -> bytes:
        """The last event when the stream ended without the blank line after it."""
        rest = b"".join(self._pending)
        self._pending = []
        return rest + b"\n\n" if rest.strip() else b""


def data_array(run: bytes) -> bytes | None:
    """The data of a run of events as the text of a JSON array, when every event is of the usual shape (JSON when
    each one's data is)."""
    return b"[" + b",".join(_DATA.findall(run)) + b"]" if _USUAL.fullmatch(run) else None


def split(run: bytes) -> list[Event]:
    """The events of a run, by the SSE rules."""
    return [e for block in run.split(b"\n\n") if (e := _event(block)) is not None]


def _event(block: bytes) -> Event | None:
    name = b""
    data: list[bytes] = []
    for line in block.split(b"\n"):
        if line.startswith(b"data:"):
            data.append(line[6:] if line[5:6] == b" " else line[5:])
        elif line.startswith(b"event:"):
            name = line[7:] if line[6:7] == b" " else line[6:]
    if not data:
        return None  # comments, ids and retry hints only: no event to dispatch
    return name, data[0] if len(data) == 1 else b"\n".join(data)
