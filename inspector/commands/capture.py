"""`context-inspector capture --out FILE [--port N] [--upstream [API=]URL] [--] [COMMAND ...]`: record an agent's
real API requests through a local proxy.

The proxy listens on 127.0.0.1 only (a free port unless --port) and forwards to each API's upstream: --upstream
(for both APIs, or one with `anthropic=URL` / `openai=URL`), else what ANTHROPIC_BASE_URL / OPENAI_BASE_URL held,
else the real API. With a COMMAND it runs it with those variables pointing at the proxy (Codex also gets the `-c`
flag it needs), stops the proxy when the command ends and exits with the command's status; Ctrl-C belongs to the
command meanwhile (the proxy keeps recording until it exits). Without one it prints the variables to export and
records until Ctrl-C. FILE is created new, mode 0600; the app follows it as it grows (`context-inspector --follow
FILE`). The record format: docs/capture-format.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from pathlib import Path
from urllib.parse import urlsplit

from inspector.capture.launch import (
    child_environment, codex_arguments, codex_flag_hint, codex_provider, exit_status, is_codex, shell_exports,
)
from inspector.capture.protocols import APIS
from inspector.capture.proxy import CaptureProxy, upstream_defaults
from inspector.capture.recorder import CaptureFile
from inspector.capture.redact import public_url
from inspector.cli import UsageError, number
from inspector.core.inert import safe_line


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", required=True, metavar="FILE", help="the capture file to create (JSONL, 0600)")
    parser.add_argument("--port", type=lambda t: number(int, t), default=0, metavar="N",
                        help="the port on 127.0.0.1 to listen on (default: a free one)")
    parser.add_argument("--upstream", action="append", default=[], metavar="[API=]URL",
                        help="where requests go: URL for both APIs, or anthropic=URL / openai=URL (repeatable; "
                             "default: $ANTHROPIC_BASE_URL / $OPENAI_BASE_URL, else the real APIs)")
    parser.add_argument("argv", nargs=argparse.REMAINDER, metavar="COMMAND",
                        help="the agent to run through the proxy, with its arguments (after --)")


def run(args: argparse.Namespace) -> int:
    argv = list(args.argv)
    if argv[:1] == ["--"]:
        argv = argv[1:]
    out = Path(args.out).expanduser()
    if out.exists() or out.is_symlink():
        raise UsageError(f"{out}: exists; a capture is always written to a new file (choose another --out)")
    if not out.parent.is_dir():
        raise UsageError(f"{out}: no directory {out.parent} to write the capture in")
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port {args.port}: not a port number")
    upstreams, given = _upstreams(args.upstream)
    provider = None
    if is_codex(argv):
        provider, base = codex_provider(dict(os.environ))
        if base and "openai" not in given:
            upstreams["openai"] = base.rstrip("/")
    return asyncio.run(_capture(out, upstreams, args.port, argv, provider))


def _upstreams(items: list[str]) -> tuple[dict[str, str], set[str]]:
    """Each API's upstream, and the APIs whose upstream --upstream gave."""
    upstreams = upstream_defaults(dict(os.environ))
    given: set[str] = set()
    for item in items:
        name, sep, url = item.partition("=")
        if not sep or name not in APIS:  # a bare URL (which may itself hold "=" in its query) is for both APIs
            name, url = "", item
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise UsageError(f"--upstream {safe_line(public_url(url))}: not an http(s) URL")
        for api in ([name] if name else APIS):
            upstreams[api] = url.rstrip("/")
            given.add(api)
    return upstreams, given


async def _capture(out: Path, upstreams: dict[str, str], port: int, argv: list[str], provider: str | None) -> int:
    capture = CaptureFile(out)
    proxy = CaptureProxy(capture, upstreams, port)
    try:
        await proxy.start()
    except OSError as exc:
        capture.close()
        out.unlink(missing_ok=True)
        why = os.strerror(exc.errno).lower() if exc.errno else str(exc)
        raise UsageError(f"cannot listen on 127.0.0.1:{port or 'a free port'}: {why}") from None
    base_urls = {name: proxy.base_url(name) for name in upstreams}
    status, started = 0, True
    try:
        if argv:
            if is_codex(argv):
                argv = codex_arguments(argv, provider, base_urls["openai"])
            _say(f"recording to {out} through {proxy.url} (upstreams: "
                 + ", ".join(f"{n} {public_url(u)}" for n, u in upstreams.items()) + ")")
            try:
                status = await _run_command(argv, child_environment(dict(os.environ), base_urls))
            except FileNotFoundError:
                started = False
                raise UsageError(f"{argv[0]}: command not found") from None
            except PermissionError:
                started = False
                raise UsageError(f"{argv[0]}: not executable") from None
        else:
            print("\n".join(shell_exports(base_urls)), flush=True)
            _say(f"recording to {out}; point agents at the proxy with the lines above "
                 f"(Codex: {codex_flag_hint(base_urls['openai'])}); Ctrl-C stops")
            await _until_interrupted()
    finally:
        await proxy.stop()
        capture.close()
        if not started and capture.written == 0:
            out.unlink(missing_ok=True)
        elif started:
            s = proxy.stats
            partial = f" ({s.partial} partial)" if s.partial else ""
            other = s.forwarded - s.recorded
            _say(f"{s.recorded} exchange{'s' * (s.recorded != 1)} recorded{partial} in {out}"
                 + (f", {other} other request{'s' * (other != 1)} forwarded" if other else "")
                 + f"; open it with: context-inspector {out}")
    if capture.error:
        return status or 2
    return status


async def _run_command(argv: list[str], env: dict[str, str]) -> int:
    """Run `argv` with the terminal; SIGINT is the command's to act on (the terminal sends it to both of us), SIGTERM
    and SIGHUP are passed on to it. Its exit status, as a shell reports it."""
    loop = asyncio.get_running_loop()
    proc = await asyncio.create_subprocess_exec(*argv, env=env)
    handled = []
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        try:
            loop.add_signal_handler(sig, _pass_on, proc, sig)
            handled.append(sig)
        except (ValueError, RuntimeError, NotImplementedError):
            pass
    try:
        return exit_status(await proc.wait())
    finally:
        for sig in handled:
            loop.remove_signal_handler(sig)


def _pass_on(proc: asyncio.subprocess.Process, sig: signal.Signals) -> None:
    if sig != signal.SIGINT and proc.returncode is None:
        proc.send_signal(sig)


async def _until_interrupted() -> None:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            loop.remove_signal_handler(sig)


def _say(text: str) -> None:
    print(f"context-inspector capture: {safe_line(text)}", file=sys.stderr, flush=True)
