"""`context-inspector` entry point: open the app, or run a headless subcommand.

Every failure the user can cause (a missing path, a file that is no session) or the system can (a full disk, a
read-only directory: "cannot write PATH: REASON") ends in one line on stderr and exit status 2; nothing the user
does should show a traceback, and output cut short by its reader (`| head`) ends quietly. Set
CONTEXT_INSPECTOR_DEBUG=1 to see a traceback for a real bug.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
from typing import Any

from inspector import __version__
from inspector.core.model import LoadError
from inspector.core.inert import safe_line

SUBCOMMANDS = {
    "report": "print what a session's context holds (table or --json)",
    "compact": "preview or apply a compaction strategy to a session",
    "prompt": "assemble the agent's system prompt and show its sections",
    "run": "run one agent turn headless",
    "capture": "record an agent's real API requests through a local proxy",
    "statusline": "one status-bar line for an agent: context used, room to auto-compact, compactions, cost",
    "stats": "every session found, per project and per day: compactions, what fills windows, cost, cache",
}


class UsageError(Exception):
    """Bad arguments or options: reported in one line, exit status 2."""


def number(convert: type, text: str) -> Any:
    """`convert(text)` for an argparse type function, failing with a message argparse shows after the flag's name
    (a bare ValueError makes it name the type function: "invalid _count value")."""
    try:
        return convert(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None


def add_custom_pct(parser: argparse.ArgumentParser) -> None:
    """The custom policy's percentages, for the commands that take --policy."""
    parser.add_argument("--custom-pct", type=_percentages, default=None, metavar="W,A,B",
                        help="with --policy custom: the warning, auto-compact and blocking thresholds in percent "
                             "of the effective window (default 60,70,95)")


def _percentages(text: str) -> tuple[float, ...]:
    values = tuple(number(float, part) for part in text.split(","))
    if len(values) != 3 or not all(0 < v <= 100 for v in values) or not values[0] <= values[1] <= values[2]:
        raise argparse.ArgumentTypeError("give three percentages WARNING,AUTOCOMPACT,BLOCKING, each above 0 and at "
                                         f"most 100, in rising order; got {text!r}")
    return values


def policy_options(args: argparse.Namespace) -> dict[str, float]:
    """The window_info options the arguments give (--custom-pct); UsageError when they do not fit --policy."""
    pct = getattr(args, "custom_pct", None)
    if pct is None:
        return {}
    if getattr(args, "policy", None) != "custom":
        raise UsageError("--custom-pct is for --policy custom")
    return dict(zip(("warning_pct", "autocompact_pct", "blocking_pct"), pct))


def _parser(command: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="context-inspector",
        description="See what is really in an LLM agent's context window. "
        "With no subcommand, open PATH (a session file, a directory of sessions, or an opencode database: "
        "DATABASE#SESSION-ID picks one of its sessions) in the app.",
    )
    parser.add_argument("--version", action="version", version=f"context-inspector {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="{open," + ",".join(SUBCOMMANDS) + "}")
    for name, help_text in {"open": "open a session in the app (the default)", **SUBCOMMANDS}.items():
        subparser = sub.add_parser(name, help=help_text, description=help_text)
        if name == command:  # import only the chosen command: `report` need not load Textual or the SDK
            importlib.import_module(f"inspector.commands.{name}").add_arguments(subparser)
    return parser


_LEFT: list[object] | None = None  # when `main` runs as the program: what its command left for the exit


def leave_for_exit(*objects: object) -> None:
    """Keep `objects` until the process exits instead of freeing them as the command returns, when `main` runs as
    the program: a command whose output is written leaves its object graph (freeing a 100,000-message session object
    by object took 70 ms of `report --json`), and `main` exits without freeing anything (`os._exit` once the output
    is flushed, as mypy does). Called from code (the tests), nothing changes."""
    if _LEFT is not None:
        gc.freeze()  # no collection walks them again (all of them were made with the collector paused)
        _LEFT.extend(objects)


def main(argv: list[str] | None = None) -> int:
    global _LEFT
    if argv is None:
        _LEFT = []
    try:
        try:
            code = _main(argv)
        finally:
            sys.stdout.flush()  # a reader gone (`| head -1`) shows here, not in the interpreter's exit
    except BrokenPipeError:
        # Nobody reads the rest: stop quietly. Output still buffered goes to /dev/null, or the interpreter's own
        # flush at exit would print "Exception ignored ... BrokenPipeError" and exit 120.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        code = 0
    if _LEFT:
        sys.stderr.flush()
        os._exit(code)
    return code


def _main(argv: list[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0] not in SUBCOMMANDS and argv[0] not in ("open", "-h", "--help", "--version")):
        argv.insert(0, "open")
    args = _parser(argv[0]).parse_args(argv)
    module = importlib.import_module(f"inspector.commands.{args.command}")
    try:
        return module.run(args)
    except (LoadError, UsageError) as exc:
        print(f"context-inspector: {safe_line(exc)}", file=sys.stderr)  # it may name a file we found
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        raise
    except OSError as exc:  # the system refused (a full disk, a permission): the user's to fix, not a bug
        if os.environ.get("CONTEXT_INSPECTOR_DEBUG"):
            raise
        from inspector.core.atomic import reason  # (its imports cost every command's start-up 20 ms)

        where = f"{exc.filename}: " if exc.filename else ""
        print(f"context-inspector: {safe_line(where)}{reason(exc)}", file=sys.stderr)
        return 2
    except Exception as exc:  # a bug: one line, unless the user asked for the traceback
        if os.environ.get("CONTEXT_INSPECTOR_DEBUG"):
            raise
        print(f"context-inspector: internal error: {type(exc).__name__}: {safe_line(exc)} "
              "(set CONTEXT_INSPECTOR_DEBUG=1 for a traceback)", file=sys.stderr)
        return 1
