"""The capture proxy's cost: added latency per streamed chunk, throughput, and memory over a long session.

    python benchmarks/bench_capture.py [--events 2000] [--rounds 3] [--mb 200] [--requests 100]

The proxy is the real command, `context-inspector capture --out FILE --upstream URL` (no COMMAND: it records until
interrupted), in its own process; capture_wire.py's raw-asyncio upstream runs in another and the client here. Every
request goes to `/anthropic/v1/messages`, so the proxy records it: each streamed chunk is decoded, split into
events and folded into the rebuilt message, and each record is serialized and written.

1. Latency: SSE text deltas sent every 2 ms, each stamped with the upstream's monotonic clock; the client takes
   each one's one-way latency on arrival. Direct (client to upstream) and through the proxy, interleaved, `--rounds`
   times; the figure is p95 through the proxy minus p95 direct. Target (issue 17): at most 5 ms.
2. Throughput: a `--mb` MB event stream as fast as the client reads it, with 1 KB events and with 150-byte events
   (a real stream's text deltas are that small); best of the rounds. Target: at least 50 MB/s.
3. Memory: `--requests` exchanges, each a 1 MB request body, answered alternately with a 1 MB JSON message and a
   1 MB event stream; the proxy process's RSS after the 10th, the 50th and the last, and its peak (VmHWM). Target: no
   growth from the 10th to the last.
4. The recorder alone, in this process: CPU seconds for an `Exchange` to rebuild a 50 MB stream of 175-byte events
   fed in 64 KB chunks (best of 3), what the proxy spends on each chunk besides forwarding it.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from capture_wire import post  # noqa: E402
from proxy_libraries import p, spawn  # noqa: E402

ROOT = HERE.parent
PATH = "/anthropic/v1/messages"


def start_proxy(upstream_port: int, out: Path) -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen([sys.executable, "-m", "inspector", "capture", "--out", str(out), "--upstream",
                             f"http://127.0.0.1:{upstream_port}"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=ROOT)
    line = proc.stdout.readline()  # type: ignore[union-attr]
    if not line.startswith("export ANTHROPIC_BASE_URL=http://127.0.0.1:"):
        proc.kill()
        raise RuntimeError(f"capture did not start: {line!r} {proc.stderr.read()}")  # type: ignore[union-attr]
    return proc, int(line.split(":")[2].split("/")[0])


def settle(out: Path, records: int, timeout: float = 120) -> None:
    """Wait until the proxy has written `records` records: a long stream's record (a 200 MB stream rebuilds to tens of
    MB of text, serialized and cleaned of secrets when it ends) must not overlap the next measurement."""
    deadline = time.monotonic() + timeout
    while out.read_bytes().count(b"\n") < records + 1:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{out}: the proxy wrote no record for request {records}")
        time.sleep(0.05)


def rss_kb(pid: int, field: str = "VmRSS") -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


async def latency(port: int, path: str, events: int) -> list[float]:
    got = await post(port, path, {"mode": "latency", "events": events, "interval_ms": 2})
    assert got.status == 200 and len(got.latencies_ms) == events, (got.status, len(got.latencies_ms))
    return got.latencies_ms


async def throughput(port: int, path: str, mb: float, event_bytes: int) -> float:
    got = await post(port, path, {"mode": "bulk", "mb": mb, "event_bytes": event_bytes})
    assert got.status == 200 and got.bytes >= mb * 1e6
    return got.bytes / got.seconds / 1e6


async def session(port: int, pid: int, requests: int) -> dict[int, int]:
    seen = {}
    for n in range(1, requests + 1):
        bench = {"mode": "json", "bytes": 1_000_000} if n % 2 else {"mode": "bulk", "mb": 1, "event_bytes": 1024}
        got = await post(port, PATH, bench, body_bytes=1_000_000)
        assert got.status == 200 and got.bytes >= 1_000_000
        if n in (10, requests // 2, requests):
            await asyncio.sleep(0.2)  # the record of the last exchange is written after its last byte went out
            seen[n] = rss_kb(pid)
    return seen


def recorder_alone(mb: float = 50) -> tuple[float, int]:
    """(best CPU seconds of 3, events) to rebuild an `mb` MB stream of 175-byte events through an Exchange."""
    from capture_wire import HEAD, TAIL, _delta

    from inspector.capture.exchange import Exchange
    from inspector.capture.protocols import protocol_for

    event = _delta("x" * 60)
    block = event * (65536 // len(event))
    chunks = [HEAD] + [block] * int(mb * 1e6 // len(block)) + [TAIL]
    best, events = float("inf"), 0
    for _ in range(3):
        protocol = protocol_for("anthropic", "POST", "/v1/messages")
        assert protocol is not None
        exchange = Exchange(1, protocol, "POST", "/v1/messages", "",
                            "http://upstream", [], b"{}")
        exchange.respond(200, [("content-type", "text/event-stream")])
        start = time.process_time()
        for chunk in chunks:
            exchange.chunk(chunk)
        record = exchange.end()
        best, events = min(best, time.process_time() - start), record["events"]
    return best, events


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--mb", type=float, default=200)
    ap.add_argument("--requests", type=int, default=100)
    args = ap.parse_args()
    upstream, up_port = spawn([str(HERE / "capture_wire.py")])
    work = Path(tempfile.mkdtemp(prefix="bench-capture-"))
    procs = [upstream]
    failed = False
    try:
        out = work / "latency.jsonl"
        proxy, port = start_proxy(up_port, out)
        procs.append(proxy)
        lat: dict[str, list[float]] = {"direct": [], "proxy": []}
        rates: dict[tuple[str, int], list[float]] = {}
        recorded = 0
        for _ in range(args.rounds):
            lat["direct"] += asyncio.run(latency(up_port, PATH, args.events))
            lat["proxy"] += asyncio.run(latency(port, PATH, args.events))
            recorded += 1
            for event_bytes in (1024, 150):
                for route, where in (("direct", up_port), ("proxy", port)):
                    rate = asyncio.run(throughput(where, PATH, args.mb, event_bytes))
                    rates.setdefault((route, event_bytes), []).append(rate)
                recorded += 1
                settle(out, recorded)
        added = p(lat["proxy"], 95) - p(lat["direct"], 95)
        print("1. latency of SSE events sent every 2 ms (one-way, ms)")
        print(f"   {'route':8} {'p50':>7} {'p95':>7} {'p99':>7}   ({len(lat['proxy']):,} events each)")
        for route in ("direct", "proxy"):
            print(f"   {route:8} {p(lat[route], 50):7.3f} {p(lat[route], 95):7.3f} {p(lat[route], 99):7.3f}")
        print(f"   added by the proxy at p95: {added:.3f} ms (target <= 5)")
        print(f"2. throughput of a {args.mb:.0f} MB event stream (MB/s, best of {args.rounds})")
        for event_bytes in (1024, 150):
            d, v = max(rates[("direct", event_bytes)]), max(rates[("proxy", event_bytes)])
            print(f"   {event_bytes:>5}-byte events: direct {d:6.0f}, through the proxy {v:6.0f} (target >= 50)")
            failed |= v < 50
        proxy.send_signal(signal.SIGINT)
        proxy.wait(60)
        procs.remove(proxy)

        proxy, port = start_proxy(up_port, work / "session.jsonl")
        procs.append(proxy)
        start = rss_kb(proxy.pid)
        began = time.perf_counter()
        seen = asyncio.run(session(port, proxy.pid, args.requests))
        seconds = time.perf_counter() - began
        peak = rss_kb(proxy.pid, "VmHWM")
        proxy.send_signal(signal.SIGINT)
        proxy.wait(60)
        procs.remove(proxy)
        size = (work / "session.jsonl").stat().st_size
        lines = len((work / "session.jsonl").read_bytes().splitlines())
        print(f"3. memory over {args.requests} exchanges of 1 MB request bodies, 1 MB answers "
              f"(JSON and streamed by turns), {seconds:.1f} s, capture file {size / 1e6:,.0f} MB in {lines} lines")
        print(f"   proxy RSS: at start {start / 1024:.0f} MB, " + ", ".join(
            f"after {n} {kb / 1024:.0f} MB" for n, kb in seen.items()) + f"; peak {peak / 1024:.0f} MB")
        growth = (seen[args.requests] - seen[10]) / 1024
        print(f"   growth from the 10th to the last exchange: {growth:+.0f} MB")
        failed |= added > 5 or growth > 20 or lines != args.requests + 1
        cpu, events = recorder_alone()
        print(f"4. the recorder alone: {cpu:.2f} CPU s to rebuild 50 MB of 175-byte events ({events:,} events), "
              f"{50 / cpu:.0f} MB/s")
        print(f"(load average {os.getloadavg()[0]:.2f}; {statistics.mean(rates[('proxy', 1024)]):.0f} MB/s mean)")
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait()
        for f in work.iterdir():
            f.unlink()
        work.rmdir()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
