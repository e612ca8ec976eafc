"""What the three answer rebuilders share: events taken a chunk's worth at a time, their JSON parsed in one call.

A streamed answer is mostly small deltas (a real one sends an event every few tokens), so the cost per event is
what limits the proxy's throughput: `feed` parses all the events a chunk completed as one JSON array (one regular
expression pass and one orjson call, not a few per event; `sse.data_array`) and hands each parsed event to
`apply`. An event that is not JSON, or not in the shape its
protocol says, is skipped and counted (`bad`, `bad_first`), never the rest of the stream.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

from inspector.capture.sse import data_array, split


class Rebuilder:
    complete = False  # the protocol's own end of the answer arrived
    error: Any = None  # an error the stream itself reported (an overload mid-stream)

    def __init__(self) -> None:
        self.events = 0
        self.bad = 0
        self.bad_first: str | None = None

    def feed(self, run: bytes) -> None:
        """A run of whole events (what `SSEParser.feed` returns)."""
        if not run:
            return
        array = data_array(run)
        try:
            parsed = orjson.loads(array) if array is not None else None
        except orjson.JSONDecodeError:
            parsed = None
        if isinstance(parsed, list):
            self.events += len(parsed)
            self.apply_all(parsed, None)
            return
        events = split(run)  # an event of another shape, or one that is not JSON: one by one, keep the others
        for name, data in events:
            self.events += 1
            try:
                obj = orjson.loads(data)
            except orjson.JSONDecodeError:
                try:
                    obj = json.loads(data)  # what orjson refuses and the standard library reads (big integers)
                except (ValueError, RecursionError) as exc:
                    self.skipped(exc)
                    continue
            self.apply_all([obj], [name])

    def apply_all(self, parsed: list[Any], names: list[bytes] | None) -> None:
        """Apply each parsed event (`names`: their event names, None when the run had the usual shape, whose
        data names its own type)."""
        for n, obj in enumerate(parsed):
            try:
                self.apply(names[n] if names else b"", obj)
            except (TypeError, AttributeError, KeyError, ValueError) as exc:
                self.skipped(exc)

    def apply(self, name: bytes, obj: Any) -> None:
        raise NotImplementedError

    def skipped(self, exc: Exception) -> None:
        self.bad += 1
        if self.bad_first is None:
            self.bad_first = f"event {self.events}: {str(exc)[:120] or type(exc).__name__}"

    def result(self) -> dict[str, Any]:
        raise NotImplementedError
