"""One recorded exchange: what the proxy saw of a request and its answer, and the record it becomes.

The proxy tells an `Exchange` what passes (`respond` with the status and headers, `chunk` for each piece of the
body as it is forwarded, `end` once, with why it ended early if it did) and never waits on it: the copy it keeps is
decompressed and parsed here, and a body that cannot be decoded or parsed costs the record its rebuilt response,
never the client its bytes. A streamed answer is rebuilt event by event (its rebuilder holds the message so far, not
the stream); a whole one is kept up to MAX_BODY bytes and parsed at the end.
"""

from __future__ import annotations

import json
import time
from datetime import datetime, timezone
from typing import Any

import orjson

from inspector.capture.encoding import Decoder, EncodingError, decode
from inspector.capture.protocols import Protocol
from inspector.capture.redact import REQUEST_HEADERS, RESPONSE_HEADERS, kept_headers, kept_query
from inspector.capture.sse import SSEParser

MAX_BODY = 64 << 20  # bytes of a whole (not streamed) answer kept for the record
TEXT_KEPT = 65_536  # characters of a body that is not JSON (a gateway's HTML error page) kept


def parse_json(data: bytes) -> Any:
    """orjson, or the standard library for what orjson refuses (integers beyond 64 bits); ValueError if neither."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(data)


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Exchange:
    def __init__(self, seq: int, protocol: Protocol, method: str, path: str, query: str, upstream: str,
                 headers: list[tuple[str, str]], body: bytes) -> None:
        self.seq, self.protocol = seq, protocol
        self.started = time.perf_counter()
        self.record: dict[str, Any] = {
            "seq": seq, "time": utc_now(), "protocol": protocol.name, "method": method, "path": path,
            "query": kept_query(query), "upstream": upstream, "request_headers": kept_headers(headers, REQUEST_HEADERS),
        }
        self.record.update(_body("request", body, kept_headers(headers, {"content-encoding"})))
        self._request_size = len(body)
        self.status: int | None = None
        self.stream: Any = None  # the protocol's rebuilder, for an event stream
        self._sse: SSEParser | None = None
        self._decoder: Decoder | None = None
        self._body: list[bytes] = []
        self._size = 0
        self._problem: str | None = None  # why the copy stopped being parsed (the client was not affected)

    def respond(self, status: int, headers: list[tuple[str, str]]) -> None:
        self.status = status
        kept = kept_headers(headers, RESPONSE_HEADERS)
        self.record.update(status=status, response_headers=kept,
                           first_byte_ms=round((time.perf_counter() - self.started) * 1000, 1))
        streamed = kept.get("content-type", "").startswith("text/event-stream")
        self.record["stream"] = streamed
        if streamed and self.protocol.stream is not None:
            self.stream, self._sse = self.protocol.stream(), SSEParser()
            try:
                self._decoder = Decoder(kept["content-encoding"]) if "content-encoding" in kept else None
            except EncodingError as exc:
                self._stop(str(exc))

    def chunk(self, data: bytes) -> None:
        """A piece of the answer's body, already on its way to the client."""
        self._size += len(data)
        if self._problem is not None:
            return
        if self._sse is None:
            if self._size > MAX_BODY:
                self._stop(f"the body is larger than {MAX_BODY >> 20} MB: not kept")
                self._body = []
            else:
                self._body.append(data)
            return
        try:
            if self._decoder is not None:
                data = self._decoder.decompress(data)
        except EncodingError as exc:
            self._stop(f"the event stream could not be decoded after {self.stream.events} events: {exc}")
            return
        self.stream.feed(self._sse.feed(data))

    def _stop(self, problem: str) -> None:
        self._problem = problem
        self._sse = None

    def end(self, error: str | None = None) -> dict[str, Any]:
        """The record, once: `error` says why the exchange ended early (None: it ended as the upstream ended it)."""
        r = self.record
        r["bytes"] = {"request": self._request_size, "response": self._size}
        if self.stream is not None:
            if self._sse is not None:
                self.stream.feed(self._sse.close())
            r["response"] = self.stream.result() if self._problem is None else None  # undecodable: nothing read
            r["events"] = self.stream.events
            if error is None and self.stream.error is not None:
                error = f"the stream ended with an error event: {_short(self.stream.error)}"
            elif error is None and not self.stream.complete and self._problem is None:
                error = "the stream ended before its last event"
        elif self.status is not None:
            encoding = r.get("response_headers", {}).get("content-encoding")
            if self._problem is None:
                r.update(_body("response", b"".join(self._body), {"content-encoding": encoding} if encoding else {}))
            self._body = []
        r["complete"] = error is None
        r["error"] = error
        bad = self.stream.bad if self.stream is not None else 0
        if bad:
            r["record_note"] = f"{bad} event(s) could not be read and were left out ({self.stream.bad_first})"
        if self._problem is not None:
            r["record_note"] = self._problem
        r["duration_ms"] = round((time.perf_counter() - self.started) * 1000, 1)
        return {k: r[k] for k in sorted(r, key=_ORDER.get)}  # type: ignore[arg-type]


_ORDER = {k: n for n, k in enumerate((
    "seq", "time", "protocol", "method", "path", "query", "upstream", "request_headers", "request", "request_note",
    "request_text", "status", "response_headers", "stream", "response", "response_note", "response_text", "events",
    "complete", "error", "record_note", "first_byte_ms", "duration_ms", "bytes"))}


def _body(key: str, raw: bytes, headers: dict[str, str]) -> dict[str, Any]:
    """`{key: parsed JSON}`, or a note saying why the body is not there (and its text if it is not JSON)."""
    out: dict[str, Any] = {}
    try:
        data = decode(raw, headers.get("content-encoding"))
    except EncodingError as exc:
        out[key], out[f"{key}_note"] = None, str(exc)
        return out
    if not data.strip():
        out[key] = None
        return out
    try:
        out[key] = parse_json(data)
    except (ValueError, RecursionError):
        text = data.decode("utf-8", "replace")
        out[key], out[f"{key}_note"] = None, f"not JSON ({len(data):,} bytes)"
        out[f"{key}_text"] = text[:TEXT_KEPT]
    return out


def _short(error: Any) -> str:
    if isinstance(error, dict):
        return " ".join(str(error[k]) for k in ("type", "message") if error.get(k)) or json.dumps(error)[:200]
    return str(error)[:200]
