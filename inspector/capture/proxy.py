"""The recording proxy: an aiohttp server on 127.0.0.1 that forwards each request to its API's upstream as it came
and passes the answer back chunk by chunk as it arrives.

Forwarded unchanged: the method, the path after the API's prefix, the query, the body's bytes (compressed or not)
and every header except the hop-by-hop ones (`connection`, `transfer-encoding`, ...; `host` names the upstream);
aiohttp adds none of its own (`skip_auto_headers`) and decompresses nothing either way (`auto_decompress=False` on
the server and the client), so the upstream gets the client's bytes and the client the upstream's status, headers
and bytes as sent, 4xx/5xx errors included. When the upstream drops a stream mid-way the client's connection is
dropped too, as it would have been without the proxy (never ended cleanly); when the upstream cannot be reached the
client gets a 502 in the API's error shape. Requests of a recorded protocol become an `Exchange` whose record the
`CaptureFile` writes; the copy is made after each chunk is written to the client, so recording adds no wait before a
chunk goes out.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

import aiohttp
from aiohttp import web

from inspector.capture.exchange import Exchange
from inspector.capture.protocols import APIS, protocol_for
from inspector.capture.recorder import CaptureFile
from inspector.capture.redact import credentials, public_url

HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-connection", "proxy-authorization", "proxy-authenticate",
                        "te", "trailer", "transfer-encoding", "upgrade", "host", "content-length"})
LOOPBACK = "127.0.0.1"
SHUTDOWN_GRACE = 1.0  # seconds in-flight exchanges get to finish when the proxy stops; then they end as partial


@dataclass
class Stats:
    forwarded: int = 0
    recorded: int = 0
    partial: int = 0


class CaptureProxy:
    """`await start()`, point clients at `base_url(api)`, `await stop()`."""

    def __init__(self, capture: CaptureFile, upstreams: dict[str, str], port: int = 0) -> None:
        self.capture = capture
        self.upstreams = {name: url.rstrip("/") for name, url in upstreams.items()}
        self.port = port
        self.stats = Stats()
        self.listening: list[tuple[str, int]] = []  # (address, port) of each socket the proxy listens on
        self._runner: web.AppRunner | None = None
        self._session: aiohttp.ClientSession | None = None

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    def base_url(self, api: str) -> str:
        return f"{self.url}/{api}"

    async def start(self) -> None:
        app = web.Application(client_max_size=1 << 30)  # request bodies of any size an API takes
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=SHUTDOWN_GRACE,
                                     auto_decompress=False)  # request bodies go on compressed, as they came
        await self._runner.setup()
        site = web.TCPSite(self._runner, LOOPBACK, self.port, reuse_address=True)
        try:
            await site.start()
        except OSError:
            await self._runner.cleanup()
            self._runner = None
            raise
        server = site._server  # the bound sockets are the only place the chosen free port is told
        self.listening = [sock.getsockname()[:2] for sock in server.sockets]  # type: ignore[union-attr]
        self.port = self.listening[0][1]
        self._session = aiohttp.ClientSession(
            auto_decompress=False, skip_auto_headers=("Accept", "Accept-Encoding", "User-Agent", "Content-Type"),
            connector=aiohttp.TCPConnector(limit=256),
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=60))
        self.capture.begin({"proxy": self.url,
                            "upstreams": {name: public_url(url) for name, url in self.upstreams.items()}})

    async def stop(self) -> None:
        """Stop accepting, give in-flight exchanges SHUTDOWN_GRACE to finish (then they end as partial records)."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        raw_path, _, query = request.raw_path.partition("?")
        api, _, rest = raw_path.lstrip("/").partition("/")
        if api not in self.upstreams:
            return _api_error(404, "not_found_error", f"context-inspector capture: no API at {raw_path}; point "
                              + " and ".join(f"{APIS[a].label} clients at {self.base_url(a)}" for a in self.upstreams))
        rest = "/" + rest
        target = self.upstreams[api] + rest + (f"?{query}" if query else "")
        body = await request.read()
        protocol = protocol_for(api, request.method, rest)
        exchange = None
        if protocol is not None:
            exchange = Exchange(self.capture.next_seq(), protocol, request.method, rest, query,
                                public_url(self.upstreams[api]), list(request.headers.items()), body)
        self.stats.forwarded += 1
        ended: str | None = "the proxy failed while forwarding (a bug: please report it)"
        try:
            response, ended = await self._forward(request, target, body, exchange)
            return response
        except asyncio.CancelledError:
            ended = "the capture stopped before the exchange ended"
            raise
        finally:
            if exchange is not None:
                record = exchange.end(ended)
                self.capture.finish(exchange, record, credentials(request.headers.items()))
                self.stats.recorded += 1
                self.stats.partial += not record["complete"]

    async def _forward(self, request: web.Request, target: str, body: bytes,
                       exchange: Exchange | None) -> tuple[web.StreamResponse, str | None]:
        """Send the request upstream and the answer back; (the response, why the exchange ended early or None)."""
        assert self._session is not None
        headers = [(k, v) for k, v in request.headers.items() if k.lower() not in HOP_BY_HOP]
        if "authorization" in request.headers:
            target = _without_userinfo(target)  # the client's own credentials win over the URL's basic auth
        try:
            try:
                upstream = await self._send(request.method, target, headers, body)
            except aiohttp.ServerDisconnectedError:
                # A kept-alive connection the upstream closed as it was reused (a server may close one at any time
                # after an answer): nothing came back on it, so the request goes again, once, on a new connection.
                upstream = await self._send(request.method, target, headers, body)
        except (aiohttp.ClientError, OSError, asyncio.TimeoutError, ValueError) as exc:
            problem = f"cannot reach the upstream {public_url(target)}: {_describe(exc)}"
            if exchange is not None:
                exchange.respond(502, [("content-type", "application/json")])
            return _api_error(502, "api_error", f"context-inspector capture: {problem}"), problem
        async with upstream:
            if exchange is not None:
                exchange.respond(upstream.status, list(upstream.headers.items()))
            response = web.StreamResponse(status=upstream.status, reason=upstream.reason)
            for name, value in upstream.headers.items():
                if name.lower() not in HOP_BY_HOP:
                    response.headers.add(name, value)
            if upstream.headers.get("content-length", "").isdigit():
                response.content_length = int(upstream.headers["content-length"])
            try:
                await response.prepare(request)
            except (ConnectionError, aiohttp.ClientConnectionResetError):
                return response, "the client closed the connection"
            while True:
                try:
                    chunk = await upstream.content.readany()
                except (aiohttp.ClientPayloadError, aiohttp.ClientConnectionError, OSError) as exc:
                    _drop(request)  # the client must see the stream break, not end
                    why = "closed the connection" if isinstance(exc, aiohttp.ClientPayloadError) else _describe(exc)
                    return response, f"the upstream broke off the answer: {why}"
                if not chunk:
                    break
                try:
                    await response.write(chunk)
                except (ConnectionError, aiohttp.ClientConnectionResetError):
                    return response, "the client closed the connection"
                if exchange is not None:
                    exchange.chunk(chunk)
            try:
                await response.write_eof()
            except (ConnectionError, aiohttp.ClientConnectionResetError):
                return response, "the client closed the connection"
        return response, None

    async def _send(self, method: str, target: str, headers: list[tuple[str, str]],
                    body: bytes) -> aiohttp.ClientResponse:
        assert self._session is not None
        return await self._session.request(method, target, headers=headers,
                                           data=body if body or method != "GET" else None, allow_redirects=False)


def _without_userinfo(url: str) -> str:
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


def _drop(request: web.Request) -> None:
    """Cut the client's connection without ending the response (no last chunk), as the upstream did."""
    transport = request.transport
    if transport is not None:
        transport.abort()


def _api_error(status: int, kind: str, message: str) -> web.Response:
    """An error in the shape both APIs' SDKs read (Anthropic's `error.type`/`message`; OpenAI reads `error.message`)."""
    return web.json_response({"type": "error", "error": {"type": kind, "message": message}}, status=status)


def _describe(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text.splitlines()[0][:300]


def upstream_defaults(environ: dict[str, str]) -> dict[str, str]:
    """Each API's upstream when none is given: what the API's variable held, else the real API."""
    out = {}
    for name, api in APIS.items():
        held = next((environ[v] for v in api.env if environ.get(v, "").strip()), None)
        out[name] = (held or api.default).rstrip("/")
    return out
