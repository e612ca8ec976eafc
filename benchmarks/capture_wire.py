"""The local upstream and client that bench_capture.py and proxy_libraries.py measure a proxy between.

Both speak raw HTTP/1.1 over asyncio streams (no HTTP library), so neither favours the library a proxy is built on.
The upstream runs in its own process (`python benchmarks/capture_wire.py PORT_FILE`) and answers POSTs by the body's
`bench` object:

- `{"mode": "latency", "events": N, "interval_ms": I}`: an SSE stream of N Messages-API text deltas, one chunked
  write each, every I ms; each delta's text is the upstream's `time.monotonic_ns()` when it was written (the
  monotonic clock is one clock for every process of the machine), so the client can take each event's one-way
  latency.
- `{"mode": "bulk", "mb": M, "event_bytes": B}`: M MB of SSE text deltas of about B bytes each, written in 64 KB
  chunks as fast as the reader takes them (a complete Messages stream: message_start ... message_stop).
- `{"mode": "json", "bytes": B}`: a non-streamed Messages response whose text is B bytes.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import time
from dataclasses import dataclass, field

CHUNK = 64 * 1024
SEND_TIME = re.compile(rb'"text":"(\d{10,20})"')


def _event(name: str, data: dict) -> bytes:
    return b"event: " + name.encode() + b"\ndata: " + json.dumps(data, separators=(",", ":")).encode() + b"\n\n"


def _delta(text: str) -> bytes:
    return _event("content_block_delta", {"type": "content_block_delta", "index": 0,
                                          "delta": {"type": "text_delta", "text": text}})


HEAD = (_event("message_start", {"type": "message_start", "message": {
    "id": "msg_bench", "type": "message", "role": "assistant", "model": "claude-bench", "content": [],
    "stop_reason": None, "usage": {"input_tokens": 10, "output_tokens": 1}}})
    + _event("content_block_start", {"type": "content_block_start", "index": 0,
                                     "content_block": {"type": "text", "text": ""}}))
TAIL = (_event("content_block_stop", {"type": "content_block_stop", "index": 0})
        + _event("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                                   "usage": {"output_tokens": 5}})
        + _event("message_stop", {"type": "message_stop"}))


async def _read_request(reader: asyncio.StreamReader) -> tuple[str, dict[str, str], bytes] | None:
    line = await reader.readline()
    if not line:
        return None
    headers: dict[str, str] = {}
    while True:
        h = await reader.readline()
        if h in (b"\r\n", b"\n", b""):
            break
        name, _, value = h.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    body = await reader.readexactly(int(headers.get("content-length") or 0))
    return line.decode("latin-1").split(" ")[1], headers, body


async def _chunk(writer: asyncio.StreamWriter, data: bytes) -> None:
    writer.write(b"%x\r\n%s\r\n" % (len(data), data))
    await writer.drain()


async def _serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while (request := await _read_request(reader)) is not None:
            _path, _headers, body = request
            bench = json.loads(body or b"{}").get("bench") or {}
            mode = bench.get("mode")
            if mode == "json":
                payload = json.dumps({"id": "msg_bench", "type": "message", "role": "assistant",
                                      "model": "claude-bench", "stop_reason": "end_turn",
                                      "content": [{"type": "text", "text": "x" * int(bench["bytes"])}],
                                      "usage": {"input_tokens": 10, "output_tokens": 5}}).encode()
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n"
                             % len(payload) + payload)
                await writer.drain()
                continue
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
            await _chunk(writer, HEAD)
            if mode == "latency":
                interval = float(bench.get("interval_ms", 2)) / 1000
                for _ in range(int(bench["events"])):
                    await asyncio.sleep(interval)
                    await _chunk(writer, _delta(str(time.monotonic_ns())))
            else:
                event = _delta("x" * max(1, int(bench.get("event_bytes", 1024)) - 90))
                total = int(float(bench.get("mb", 100)) * 1e6)
                block = event * max(1, CHUNK // len(event))
                sent = 0
                while sent < total:
                    await _chunk(writer, block)
                    sent += len(block)
            await _chunk(writer, TAIL)
            await _chunk(writer, b"")
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    finally:
        writer.close()


async def serve_upstream(port_file: str) -> None:
    server = await asyncio.start_server(_serve, "127.0.0.1", 0)
    with open(port_file, "w") as f:
        f.write(str(server.sockets[0].getsockname()[1]))
    async with server:
        await server.serve_forever()


@dataclass
class Received:
    status: int
    bytes: int = 0
    seconds: float = 0.0
    latencies_ms: list[float] = field(default_factory=list)


async def post(port: int, path: str, bench: dict, *, body_bytes: int = 0, timeout: float = 600) -> Received:
    """POST a Messages-style request with `bench` to 127.0.0.1:port and read the whole answer; for a chunked answer
    note each latency-mode event's one-way latency as its chunk arrives."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        body = json.dumps({"model": "claude-bench", "max_tokens": 10, "stream": bench.get("mode") != "json",
                           "messages": [{"role": "user", "content": "x" * body_bytes or "hi"}],
                           "bench": bench}).encode()
        writer.write(f"POST {path} HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\ncontent-type: application/json\r\n"
                     f"x-api-key: sk-bench-not-a-key\r\nanthropic-version: 2023-06-01\r\n"
                     f"content-length: {len(body)}\r\n\r\n".encode() + body)
        await writer.drain()
        start = time.perf_counter()
        return await asyncio.wait_for(_read_response(reader, start, bench.get("mode") == "latency"), timeout)
    finally:
        writer.close()


async def _read_response(reader: asyncio.StreamReader, start: float, stamped: bool) -> Received:
    status = int((await reader.readline()).split()[1])
    headers: dict[str, str] = {}
    while (h := await reader.readline()) not in (b"\r\n", b""):
        name, _, value = h.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    got = Received(status)
    if "content-length" in headers:
        got.bytes = len(await reader.readexactly(int(headers["content-length"])))
    else:
        while True:
            size = int((await reader.readline()).split(b";")[0], 16)
            data = await reader.readexactly(size + 2)
            if size == 0:
                break
            got.bytes += size
            if stamped:
                now = time.monotonic_ns()
                got.latencies_ms += [(now - int(t)) / 1e6 for t in SEND_TIME.findall(data)]
    got.seconds = time.perf_counter() - start
    return got


if __name__ == "__main__":
    asyncio.run(serve_upstream(sys.argv[1]))
