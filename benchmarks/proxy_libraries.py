"""Which async HTTP library the capture proxy is built on: a bare pass-through proxy on each, measured alike.

    python benchmarks/proxy_libraries.py [--events 2000] [--mb 200] [--rounds 3]

Each candidate is the smallest streaming pass-through proxy its library allows (no recording): aiohttp (server and
client), and starlette + uvicorn with an httpx client (`httpx2`, the httpx the anthropic SDK installs, else
`httpx`). Each runs in its own process between capture_wire.py's raw-asyncio upstream and client, as does the
upstream; the direct route (client to upstream) is the floor. Figures: one-way latency of SSE events sent every 2 ms
(p50 / p95, and the p95 the proxy adds over the direct route), and the throughput of a bulk SSE stream in 64 KB
chunks. A candidate whose packages are not installed is skipped.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from capture_wire import post  # noqa: E402

HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "host", "content-length"}


def serve_aiohttp(upstream: int, port_file: str) -> None:
    import aiohttp
    from aiohttp import web

    async def handle(request: web.Request) -> web.StreamResponse:
        session: aiohttp.ClientSession = request.app["client"]
        body = await request.read()
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP}
        async with session.request(request.method, f"http://127.0.0.1:{upstream}{request.path_qs}",
                                   headers=headers, data=body) as up:
            response = web.StreamResponse(status=up.status, headers={
                k: v for k, v in up.headers.items() if k.lower() not in HOP})
            await response.prepare(request)
            async for chunk in up.content.iter_any():
                await response.write(chunk)
            await response.write_eof()
            return response

    async def main() -> None:
        app = web.Application(client_max_size=1 << 30)
        app.router.add_route("*", "/{tail:.*}", handle)
        app["client"] = aiohttp.ClientSession(auto_decompress=False)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        Path(port_file).write_text(str(site._server.sockets[0].getsockname()[1]))  # type: ignore[union-attr]
        await asyncio.Event().wait()

    asyncio.run(main())


def serve_starlette(upstream: int, port_file: str) -> None:
    try:
        import httpx2 as httpx
    except ImportError:
        import httpx  # type: ignore[no-redef]
    import socket

    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import StreamingResponse
    from starlette.routing import Route

    client = httpx.AsyncClient(timeout=None)

    async def handle(request: Request) -> StreamingResponse:
        body = await request.body()
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP}
        upstream_request = client.build_request(request.method, f"http://127.0.0.1:{upstream}{request.url.path}",
                                                headers=headers, content=body)
        up = await client.send(upstream_request, stream=True)

        async def chunks():
            try:
                async for chunk in up.aiter_raw():
                    yield chunk
            finally:
                await up.aclose()

        return StreamingResponse(chunks(), status_code=up.status_code,
                                 headers={k: v for k, v in up.headers.items() if k.lower() not in HOP})

    app = Starlette(routes=[Route("/{tail:path}", handle, methods=["GET", "POST"])])
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    Path(port_file).write_text(str(sock.getsockname()[1]))
    uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False)).run(sockets=[sock])


CANDIDATES = {"aiohttp": ("aiohttp",), "starlette+uvicorn+httpx": ("starlette", "uvicorn")}


def spawn(args: list[str]) -> tuple[subprocess.Popen, int]:
    """A helper process that writes the port it listens on to a file; (process, port)."""
    fd, port_file = tempfile.mkstemp()
    os.close(fd)
    os.unlink(port_file)
    proc = subprocess.Popen([sys.executable, *args, port_file])
    deadline = time.monotonic() + 30
    while not (Path(port_file).exists() and Path(port_file).read_text().strip()):
        if time.monotonic() > deadline or proc.poll() is not None:
            proc.kill()
            raise RuntimeError(f"{' '.join(args)} did not start")
        time.sleep(0.05)
    time.sleep(0.1)
    port = int(Path(port_file).read_text())
    os.unlink(port_file)
    return proc, port


def p(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1] if len(values) > 1 else values[0]


async def measure(port: int, events: int, mb: float) -> tuple[list[float], float]:
    got = await post(port, "/v1/messages", {"mode": "latency", "events": events, "interval_ms": 2})
    assert got.status == 200 and len(got.latencies_ms) == events, (got.status, len(got.latencies_ms))
    bulk = await post(port, "/v1/messages", {"mode": "bulk", "mb": mb, "event_bytes": 1024})
    assert bulk.status == 200 and bulk.bytes >= mb * 1e6
    return got.latencies_ms, bulk.bytes / bulk.seconds / 1e6


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=2000)
    ap.add_argument("--mb", type=float, default=200)
    ap.add_argument("--rounds", type=int, default=3, help="rounds, the routes interleaved in each")
    args = ap.parse_args()
    here = str(Path(__file__).resolve())
    upstream, up_port = spawn([str(Path(here).with_name("capture_wire.py"))])
    routes: dict[str, int] = {"direct": up_port}
    procs = [upstream]
    try:
        for name, modules in CANDIDATES.items():
            try:
                for m in modules:
                    __import__(m)
            except ImportError:
                print(f"{name}: not installed, skipped")
                continue
            proc, port = spawn([here, "--serve", name, str(up_port)])
            procs.append(proc)
            routes[name] = port
        latencies: dict[str, list[float]] = {r: [] for r in routes}
        rates: dict[str, list[float]] = {r: [] for r in routes}
        for _ in range(args.rounds):
            for name, port in routes.items():
                lat, rate = asyncio.run(measure(port, args.events, args.mb))
                latencies[name] += lat
                rates[name].append(rate)
        floor = p(latencies["direct"], 95)
        print(f"{'route':26} {'p50 ms':>8} {'p95 ms':>8} {'+p95 ms':>8} {'MB/s (best)':>12}")
        for name in routes:
            lat = latencies[name]
            print(f"{name:26} {p(lat, 50):8.3f} {p(lat, 95):8.3f} {p(lat, 95) - floor:8.3f} {max(rates[name]):12.0f}")
        print(f"({args.rounds} rounds of {args.events} events every 2 ms and {args.mb:.0f} MB of 1 KB events; "
              f"load average {os.getloadavg()[0]:.2f})")
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait()
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--serve":
        {"aiohttp": serve_aiohttp, "starlette+uvicorn+httpx": serve_starlette}[sys.argv[2]](int(sys.argv[3]),
                                                                                          sys.argv[4])
    else:
        sys.exit(main())
