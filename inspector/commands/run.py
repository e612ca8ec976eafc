"""`context-inspector run --prompt TEXT`: one agent turn without the app, saved to a session file as it runs.

Events print as text (model and tool text made inert: control characters, escape sequences included, show as `?`) or, with --json,
one JSON object a line. Nobody is there to answer permission questions, so read-only tools inside the working
directory run, writes and shell commands run only with --allow-writes, and anything outside the working directory
(and --add-dir) is denied; the model gets a permission-denied result. Ctrl-C cancels the turn cleanly (a second
Ctrl-C stops at once). Exit status: 0 when the model finished, 1 on an API error, 130 when cancelled, 2 for bad
usage, a missing API key or a session file that cannot be written (the turn stops there).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any, TextIO

from inspector.cli import UsageError, number
from inspector.core.agent.config import AgentConfig, compaction_policy
from inspector.core.agent.events import (
    CompactionFailed, CompactionFinished, CompactionStarted, CompactionText, Decision, Error, Event, PermissionAsked,
    Piece, Retrying, ThinkingDelta, ToolCall, ToolResult, TurnDone, Usage,
)
from inspector.core.agent.loop import run as run_turn
from inspector.core.agent.permissions import Permissions, headless
from inspector.core.agent.provider import AnthropicProvider, MissingApiKey
from inspector.core.agent.writer import SessionWriter, default_session_path, open_session
from inspector.core.compaction.diff import inert
from inspector.core.compaction.pipeline import MICRO_STRATEGIES, CompactionPolicy
from inspector.core.limits import POLICIES
from inspector.core.prompt.builder import assemble
from inspector.core.prompt.template import TemplateError
from inspector.core.secrets import redact

EXIT = {"error": 1, "max_iterations": 1, "cancelled": 130}
PREVIEW_LINES = 3
PREVIEW_CHARS = 300
HOLD_LIMIT = 4096  # streamed characters held back at most while waiting for a word's end


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--prompt", required=True, metavar="TEXT",
                        help="the user message for this turn ('-': read it from standard input)")
    parser.add_argument("--session", metavar="FILE",
                        help="session file to write (continued when it exists; default: a new file in the "
                             "per-user data directory)")
    parser.add_argument("--model", metavar="M", help="model id (default: $ANTHROPIC_MODEL, else claude-sonnet-4-6)")
    parser.add_argument("--allow-writes", action="store_true",
                        help="let write_file and edit_file change files in the working directory, and bash run "
                             "(shell commands are not sandboxed)")
    parser.add_argument("--json", action="store_true", help="print events as JSON lines")
    parser.add_argument("--cwd", metavar="DIR", help="working directory (default: here)")
    parser.add_argument("--add-dir", action="append", default=[], metavar="DIR",
                        help="another directory the tools may use (repeatable)")
    parser.add_argument("--policy", choices=POLICIES, default="reference",
                        help="when to compact (default: reference, 70%% of the window less the output reserve)")
    parser.add_argument("--window", type=int, metavar="N", help="context window in tokens (default: the model's)")
    parser.add_argument("--compact-at", type=int, metavar="TOKENS",
                        help="compact above this many tokens instead of the policy's threshold")
    parser.add_argument("--micro", choices=[*MICRO_STRATEGIES, "none"], default="snip",
                        help="microcompaction tried before a summary (default: snip)")
    parser.add_argument("--no-compact", action="store_true", help="never compact")
    parser.add_argument("--thinking", type=_budget, metavar="TOKENS",
                        help="enable extended thinking with this budget (1024 or more, the API's minimum)")
    parser.add_argument("--prompt-template", metavar="FILE", help="system prompt template (default: built-in)")
    parser.add_argument("--allow-outside-imports", action="store_true",
                        help="let the project's CLAUDE.md import files from outside it (and --add-dir); their text "
                             "is sent to the model but never saved in the session file")


def _budget(text: str) -> int:
    value = number(int, text)
    if value < 1024:
        raise argparse.ArgumentTypeError(f"the API takes a thinking budget of 1024 tokens or more, got {value}")
    return value


def run(args: argparse.Namespace) -> int:
    cwd = Path(args.cwd or os.getcwd()).expanduser()
    if not cwd.is_dir():
        raise UsageError(f"{cwd}: --cwd is not a directory")
    extra = [Path(d).expanduser() for d in args.add_dir]
    for d in extra:
        if not d.is_dir():
            raise UsageError(f"{d}: --add-dir is not a directory")
    prompt = sys.stdin.read() if args.prompt == "-" else args.prompt
    if not prompt.strip():
        raise UsageError("--prompt is empty")
    model = args.model or os.environ.get("ANTHROPIC_MODEL") or None
    try:
        provider = AnthropicProvider.from_env(**({"model": model} if model else {}))
    except MissingApiKey as exc:
        raise UsageError(str(exc)) from None
    config = AgentConfig(provider, cwd, model=provider.model, thinking_budget=args.thinking,
                         permissions=Permissions([cwd, *extra], auto=headless(args.allow_writes)),
                         compaction=None if args.no_compact else _policy(args, provider.model))
    if args.thinking and config.max_tokens and args.thinking >= config.max_tokens:
        raise UsageError(f"--thinking must be below the response's max_tokens ({config.max_tokens:,} for "
                         f"{config.model})")
    try:
        built = assemble(config.cwd, args.prompt_template, allow_outside=args.allow_outside_imports, roots=extra)
    except TemplateError as exc:
        raise UsageError(str(exc)) from None
    system = built.text
    if built.outside and not args.allow_outside_imports:
        for note in (n for n in built.notes if "outside the project" in n):
            sys.stderr.write(f"note: {inert(note)} (--allow-outside-imports)\n")
    path = Path(args.session).expanduser() if args.session else default_session_path()
    state, previous = open_session(path, config.new_session(built.saved_text, str(path)))
    printer: Printer = JsonPrinter(sys.stdout) if args.json else TextPrinter(sys.stdout, sys.stderr)
    printer.start(path, config)
    stop = "error"
    with SessionWriter(path, state, previous) as writer, _ctrl_c_cancels(config):
        for event in writer.tee(run_turn(prompt, state, config, system)):
            printer.show(event)
            if isinstance(event, TurnDone):
                stop = event.stop_reason
    if writer.failed is not None:  # the error event named the file and the reason: nothing was "saved"
        return 2
    printer.finish(path, stop, args.allow_writes)
    return EXIT.get(stop, 0)


def _policy(args: argparse.Namespace, model: str) -> CompactionPolicy:
    try:
        return compaction_policy(model, args.policy, args.window, args.compact_at,
                                 None if args.micro == "none" else args.micro)
    except ValueError as exc:
        raise UsageError(f"{exc} (--policy, --window, --compact-at)") from None


class _ctrl_c_cancels:
    """The first Ctrl-C cancels the turn through the cancel token; the default handler is back for a second."""

    def __init__(self, config: AgentConfig) -> None:
        self.config = config
        self.previous: Any = None

    def __enter__(self) -> None:
        def handler(signum: int, frame: object) -> None:
            signal.signal(signal.SIGINT, self.previous)
            self.config.cancel.cancel()

        try:
            self.previous = signal.signal(signal.SIGINT, handler)
        except ValueError:  # not the main thread: leave signals alone
            self.previous = None

    def __exit__(self, *exc: object) -> None:
        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)


class Printer:
    def start(self, path: Path, config: AgentConfig) -> None: ...
    def show(self, event: Event) -> None: ...
    def finish(self, path: Path, stop: str, allow_writes: bool) -> None: ...


class JsonPrinter(Printer):
    """One JSON object a line, ASCII only (so control characters arrive escaped): the session line first."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def start(self, path: Path, config: AgentConfig) -> None:
        self._line({"event": "session", "path": str(path), "model": config.model, "cwd": str(config.cwd)})

    def show(self, event: Event) -> None:
        self._line(event.to_dict())

    def finish(self, path: Path, stop: str, allow_writes: bool) -> None:
        pass

    def _line(self, obj: dict) -> None:
        self.out.write(redact(json.dumps(obj, ensure_ascii=True, default=str)) + "\n")
        self.out.flush()


class TextPrinter(Printer):
    """Streams text as it comes; tool calls, results, usage and compaction as short bracketed lines."""

    def __init__(self, out: TextIO, err: TextIO) -> None:
        self.out, self.err = out, err
        self.streaming: str | None = None  # the kind of Piece being streamed on the current line
        self.held = ""  # streamed text after its last whitespace: a key split over deltas is redacted whole
        self.denied: set[str] = set()  # tool ids refused: their result line would only repeat the refusal

    def start(self, path: Path, config: AgentConfig) -> None:
        self.err.write(f"session {inert(str(path))} · model {inert(config.model)} · cwd {inert(str(config.cwd))}\n")
        self.err.flush()

    def show(self, event: Event) -> None:
        if isinstance(event, Piece):
            kind = type(event).__name__
            if self.streaming != kind:
                self._end_stream()
                self.streaming = kind
                if isinstance(event, ThinkingDelta):
                    self.out.write("[thinking] ")
                elif isinstance(event, CompactionText):
                    self.out.write("[summary] ")
            text = self.held + event.text
            cut = max(text.rfind(" "), text.rfind("\n"), text.rfind("\t")) + 1
            if cut == 0 and len(text) > HOLD_LIMIT:
                cut = len(text)
            self.held = text[cut:]
            self.out.write(inert(text[:cut]))  # line breaks and tabs kept; keys redacted
            self.out.flush()
            return
        line = self._line(event)
        if line is not None:
            self._end_stream()
            stream = self.err if isinstance(event, (Error, Retrying)) else self.out
            stream.write(line + "\n")
            stream.flush()

    def _line(self, event: Event) -> str | None:
        if isinstance(event, ToolCall):
            return f"→ {inert(event.name)} {inert(json.dumps(event.input, ensure_ascii=False), PREVIEW_CHARS)}"
        if isinstance(event, PermissionAsked) and event.decision is Decision.DENY:
            self.denied.add(event.tool_id)
            return f"  ✗ permission denied: {inert(event.reason)}"
        if isinstance(event, ToolResult):
            if event.id in self.denied:
                return None
            return ("  ✗ " if event.is_error else "  ✓ ") + _preview(event.content)
        if isinstance(event, Usage):
            return (f"  [usage {inert(event.request_id)}: context {event.context:,} tokens (input "
                    f"{event.input_tokens:,}, cache write {event.cache_creation:,}, cache read "
                    f"{event.cache_read:,}), output {event.output_tokens:,}]")
        if isinstance(event, CompactionStarted):
            return f"[compaction: {event.tokens:,} tokens > threshold {event.threshold:,}]"
        if isinstance(event, CompactionFinished):
            return (f"[compaction: {inert(event.strategy)} {event.tokens_before:,} → {event.tokens_after:,} "
                    "estimated tokens]")
        if isinstance(event, CompactionFailed):
            state = "; auto-compaction is off (circuit breaker open)" if event.breaker_open else ""
            return f"[compaction failed ({event.failures} in a row): {inert(event.error)}{state}]"
        if isinstance(event, Retrying):
            return f"[{inert(event.describe())}; Ctrl-C cancels]"
        if isinstance(event, Error):
            return f"error: {inert(event.message)}"
        return None

    def finish(self, path: Path, stop: str, allow_writes: bool) -> None:
        self._end_stream()
        hint = ""
        if self.denied and not allow_writes:
            hint = " (rerun with --allow-writes to let writes and shell commands run)"
        self.err.write(f"[{inert(stop)}; saved to {inert(str(path))}]{hint}\n")
        self.err.flush()

    def _end_stream(self) -> None:
        if self.streaming is not None:
            self.out.write(inert(self.held) + "\n")
            self.held = ""
            self.streaming = None



def _preview(content: str) -> str:
    lines = content.splitlines() or [""]
    shown = [inert(line, PREVIEW_CHARS) for line in lines[:PREVIEW_LINES]]
    more = len(lines) - PREVIEW_LINES
    if more > 0:
        shown.append(f"… {more} more lines")
    return "\n    ".join(shown)
