"""Server-sent events, split incrementally from the bytes of a response as they arrive.

A chunk may end anywhere (mid-line, between the CR and LF of a line end, mid-event); `SSEParser.feed` returns the
events the bytes so far complete and keeps the rest. Nothing is copied while no event ends: a long event (a
`response.completed` carrying the whole response) costs one join, not one per chunk. Per the SSE rules, lines end in
LF, CRLF or CR, `data:` lines of one event join with LF, one space after the colon is dropped, comments (`:`) and
other fields are ignored.
"""

from __future__ import annotations

Event = tuple[str, bytes]  # (event name, "" when the event has none; data)


class SSEParser:
    def __init__(self) -> None:
        self._pending: list[bytes] = []
        self._ends_lf = False  # the pending bytes end in LF: a chunk starting with LF completes an event
        self._cr = False  # the last chunk ended in CR: a chunk starting with LF is the same line end

    def feed(self, data: bytes) -> list[Event]:
        if self._cr or b"\r" in data:
            if self._cr and data[:1] == b"\n":
                data = data[1:]
            self._cr = data.endswith(b"\r")
            data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        if not data:
            return []
        if b"\n\n" not in data and not (self._ends_lf and data[:1] == b"\n"):
            self._pending.append(data)
            self._ends_lf = data.endswith(b"\n")
            return []
        buf = b"".join(self._pending) + data if self._pending else data
        *blocks, rest = buf.split(b"\n\n")
        self._pending = [rest] if rest else []
        self._ends_lf = rest.endswith(b"\n")
        return [e for b in blocks if (e := _event(b)) is not None]

    def close(self) -> list[Event]:
        """The last event when the stream ended without the blank line after it."""
        rest = b"".join(self._pending)
        self._pending = []
        event = _event(rest) if rest.strip() else None
        return [event] if event is not None else []


def _event(block: bytes) -> Event | None:
    name = ""
    data: list[bytes] = []
    for line in block.split(b"\n"):
        if line.startswith(b"data:"):
            data.append(line[6:] if line[5:6] == b" " else line[5:])
        elif line.startswith(b"event:"):
            name = (line[7:] if line[6:7] == b" " else line[6:]).decode("utf-8", "replace")
    if not data:
        return None  # comments, ids and retry hints only: no event to dispatch
    return name, data[0] if len(data) == 1 else b"\n".join(data)
