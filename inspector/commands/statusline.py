"""`context-inspector statusline`: one line for an agent's status bar: how full the context is, how far the
auto-compact threshold is, how many compactions so far and what the session cost.

Claude Code runs the `statusLine` command of its settings after every turn with a JSON object on standard input
(`transcript_path`, `session_id`, `model`, `workspace`, `context_window`, `cost`, ...: what 2.1.332 sends is in
tests/fixtures/statusline/); this reads the transcript it names. `--session PATH` names any session instead (a Codex
rollout, any format `report` reads). The figures are `report`'s (inspector/core/statusline.py keeps them quick
with a cache of where the last call stopped). `--install` prints the settings snippet; it never edits a file.

Given by Claude Code, a problem (no transcript yet, an unreadable file) is the line itself and the exit status 0,
so the status bar says what is wrong; with `--session` it is an error as in every other command.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import re
import shlex
import sys

DEFAULT_FORMAT = "{model} · ctx {used}/{window} ({percent}) · {to_compact} to compact ({basis}) · {compactions_text} · {cost}"
FIELDS = {
    "used": "the current context in tokens (12.3k)", "window": "the window (200k)", "percent": "used / window (6.2%)",
    "to_compact": "room before the policy's auto-compact threshold", "autocompact": "the auto-compact threshold",
    "warning": "the warning threshold", "basis": "measured (the last request's usage + estimates since) or estimated",
    "compactions": "compactions so far (a number)", "compactions_text": "\"1 compaction\", \"no compaction\"",
    "microcompactions": "microcompactions so far", "cost": "what the session cost so far by our prices ($0.42)",
    "agent_cost": "the agent's own figure of the cost, where it records one", "hit": "prompt cache hit ratio (97%)",
    "model": "the model of the last request", "policy": "the compaction policy measured against",
    "requests": "requests so far", "messages": "messages in the session", "state": "ok, warning or compact",
    "used_n": "used, every digit", "window_n": "window, every digit", "to_compact_n": "to_compact, every digit",
}
COLOURS = {"ok": "\x1b[32m", "warning": "\x1b[33m", "compact": "\x1b[31m"}
RESET = "\x1b[0m"
STDIN_LIMIT = 4 * 1024 * 1024  # bytes of the status-line JSON read (Claude Code's is ~2 KB)
_FIELD = re.compile(r"\{([a-z_]+)\}")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = "format fields:\n" + "\n".join(f"  {{{k}}}  {v}" for k, v in FIELDS.items())
    parser.add_argument("--session", metavar="PATH", default=None,
                        help="the session to show (any format report reads; a Codex rollout) instead of the "
                             "transcript named by the JSON on standard input")
    parser.add_argument("--format", default=DEFAULT_FORMAT, metavar="TEXT",
                        help="the line, with {field}s (listed below); default: %(default)r")
    parser.add_argument("--color", action="store_true",
                        help="colour the figures by the context's state (green, yellow past the warning "
                             "threshold, red past auto-compact); none unless asked")
    parser.add_argument("--install", action="store_true",
                        help="print the settings snippet for Claude Code's ~/.claude/settings.json (nothing is "
                             "edited)")
    parser.add_argument("--policy", default=None, help="compaction thresholds to measure against (default: the "
                                                       "session's own, as report)")
    parser.add_argument("--window", type=int, default=None, metavar="N", help="context window in tokens")
    parser.add_argument("--estimator", default=None, help="the estimator (default: as report)")
    parser.add_argument("--prices", default=None, metavar="FILE", help="a price file over the shipped prices")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    parser.add_argument("--no-cache", action="store_true", help="read the session whole, neither using nor "
                                                                "writing the cache")


def run(args: argparse.Namespace) -> int:
    enabled = gc.isenabled()
    gc.disable()  # a call of a few hundred ms: collections would only re-walk the resume state as it loads
    try:
        return _run(args)
    finally:
        if enabled:
            gc.enable()


def _run(args: argparse.Namespace) -> int:
    if args.install:
        sys.stdout.write(install_snippet(args) + "\n")
        sys.stderr.write("Put this in ~/.claude/settings.json (or a project's .claude/settings.json); "
                         "nothing was edited.\n")
        return 0
    unknown = [f for f in _FIELD.findall(args.format) if f not in FIELDS]
    if unknown:
        from inspector.cli import UsageError

        raise UsageError(f"--format: unknown field {{{unknown[0]}}}; fields: " + ", ".join(FIELDS))
    given = None
    path = args.session
    if path is None:
        given = _stdin_json()
        if isinstance(given, str):
            return _say(given)
        path = given.get("transcript_path")
        if not isinstance(path, str) or not path:
            return _say("no transcript_path in the status-line input")
        if not os.path.exists(path):
            return _say(_waiting(given))
    from inspector.core.model import LoadError
    from inspector.core.statusline import Settings, status

    settings = Settings(args.policy, args.window, args.estimator, args.prices,
                        os.environ.get("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE"))
    try:
        outcome = status(path, settings, use_cache=not args.no_cache)
    except (LoadError, ValueError) as exc:
        if given is None:
            from inspector.cli import UsageError

            raise (exc if isinstance(exc, LoadError) else UsageError(str(exc))) from None
        from inspector.core.inert import safe_line

        return _say(safe_line(exc, 200))
    figures = outcome.figures
    if args.json:
        line = json.dumps(figures.to_dict())
    else:
        line = render(figures.to_dict(), args.format, args.color)
    sys.stdout.write(line + "\n")
    sys.stdout.flush()
    if outcome.finish is not None:
        _detach_stdout()  # the agent has its line: it need not wait while the cache is written
        outcome.finish()
    return 0


def render(f: dict, fmt: str, colour: bool = False) -> str:
    """The line for figures `f` (`StatusFigures.to_dict()`): each {field} replaced; session text made inert."""
    from inspector.core.inert import safe_line

    values = {
        "used": _short(f["used"]), "window": _short(f["window"]), "percent": f"{f['percent']:.1f}%",
        "to_compact": _short(f["to_autocompact"]), "autocompact": _short(f["autocompact"]),
        "warning": _short(f["warning"]), "basis": "measured" if f["measured"] else "estimated",
        "compactions": str(f["compactions"]), "microcompactions": str(f["microcompactions"]),
        "compactions_text": (f"{f['compactions']} compaction{'s' if f['compactions'] != 1 else ''}"
                             if f["compactions"] else "no compaction"),
        "cost": _usd(f["cost_usd"]), "agent_cost": _usd(f["agent_cost_usd"]),
        "hit": "-" if f["hit_ratio"] is None else f"{f['hit_ratio']:.0%}",
        "model": safe_line(f["model"] or "-", 60), "policy": f["policy"], "requests": str(f["requests"]),
        "messages": str(f["messages"]), "state": f["state"], "used_n": f"{f['used']:,}",
        "window_n": f"{f['window']:,}", "to_compact_n": f"{f['to_autocompact']:,}",
    }
    if colour:
        on = COLOURS[f["state"]]
        for key in ("used", "percent", "to_compact", "used_n", "to_compact_n", "state"):
            values[key] = f"{on}{values[key]}{RESET}"
    return _FIELD.sub(lambda m: values[m.group(1)], fmt)


def _short(n: int) -> str:
    """12,345 -> 12.3k, 1,000,000 -> 1M: what fits a status bar."""
    if abs(n) >= 1_000_000:
        return f"{n / 1_000_000:.2f}".rstrip("0").rstrip(".") + "M"
    if abs(n) >= 10_000:
        return f"{n / 1000:.0f}k"
    if abs(n) >= 1000:
        return f"{n / 1000:.1f}k"
    return str(n)


def _usd(x: float | None) -> str:
    if x is None:
        return "$-"
    return f"${x:,.2f}" if x >= 0.995 else f"${x:.3f}" if x >= 0.001 else f"${x:.4f}"


def _stdin_json() -> dict | str:
    """The status-line JSON, or what is wrong with it."""
    if sys.stdin is None or sys.stdin.isatty():
        return "statusline reads Claude Code's status-line JSON on standard input (or give --session PATH)"
    data = sys.stdin.buffer.read(STDIN_LIMIT + 1)
    if len(data) > STDIN_LIMIT:
        return "the status-line input is larger than 4 MB: not Claude Code's"
    try:
        given = json.loads(data)
    except ValueError:
        return "the status-line input is not JSON"
    return given if isinstance(given, dict) else "the status-line input is not a JSON object"


def _waiting(given: dict) -> str:
    """Before the first request Claude Code names a transcript it has not written yet."""
    model = given.get("model")
    name = model.get("display_name") if isinstance(model, dict) else None
    from inspector.core.inert import safe_line

    return (safe_line(name, 60) + " · " if isinstance(name, str) else "") + "no request yet"


def _say(text: str) -> int:
    sys.stdout.write(text + "\n")
    return 0


def _detach_stdout() -> None:
    """Close standard output (the agent reads the line until it closes), keeping writes to it harmless."""
    try:
        sys.stdout.flush()
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def install_snippet(args: argparse.Namespace) -> str:
    """The settings snippet that runs this command as Claude Code's status line (with the options given)."""
    import shutil  # here: its import (bz2, lzma) would slow every status line down

    program = shutil.which("context-inspector") or "context-inspector"
    command = [program, "statusline"]
    for flag in ("format", "policy", "window", "estimator", "prices"):
        value = getattr(args, flag, None)
        if value is not None and not (flag == "format" and value == DEFAULT_FORMAT):
            command += [f"--{flag}", str(value)]
    if args.color:
        command.append("--color")
    return json.dumps({"statusLine": {"type": "command", "command": shlex.join(command), "padding": 0}}, indent=2)
