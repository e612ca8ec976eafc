"""`context-inspector [PATH]`: open the app on a session file, a Claude Code project directory, or (no PATH) the
session picker. `--agent` starts on the Agent view: a new agent session (no PATH, or a PATH not yet written) or
the session in PATH, which the agent continues. Textual is imported only here, when the app really starts, so headless subcommands stay light."""

from __future__ import annotations

import argparse
import gc
from dataclasses import replace
from pathlib import Path

from inspector.core.formats import PATH_HELP
from inspector.core.formats.agent_stores import session_file
from inspector.core.model import LoadError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", nargs="?", help=PATH_HELP + " (default: pick one)")
    parser.add_argument("--policy", default=None, help="threshold policy (reference, claude-code, codex, custom, "
                        "gemini-cli, qwen-code, opencode; default: each session's own, e.g. codex for a Codex rollout)")
    parser.add_argument("--window", type=int, default=None, help="context window in tokens (default: the model's)")
    parser.add_argument("--estimator", default=None, help="token estimator (chars35, blocks, script, calibrated, "
                                                          "exact)")
    parser.add_argument("--follow", action="store_true", help="follow the session while its agent writes it (a "
                        "Claude Code project directory: its newest session, moving to a new one when it starts); a "
                        "file or directory not written yet is waited for")
    parser.add_argument("--agent", action="store_true", help="start on the Agent view: a new agent session, "
                        "written to PATH when given (the agent needs ANTHROPIC_API_KEY; ANTHROPIC_BASE_URL optional)")
    parser.add_argument("--model", metavar="M", help="the agent's model (default: $ANTHROPIC_MODEL, else "
                        "claude-sonnet-4-6)")
    parser.add_argument("--cwd", metavar="DIR", help="where the agent's tools run (default: here)")
    parser.add_argument("--compact-at", type=int, metavar="TOKENS", help="the agent compacts above this many "
                        "tokens (default: the policy's auto-compact threshold)")
    parser.add_argument("--no-compact", action="store_true", help="the agent never compacts")


def run(args: argparse.Namespace) -> int:
    from inspector.core.figures import Settings
    from inspector.app.widgets.settings import estimator_names, policy_names
    from inspector.cli import UsageError

    settings = Settings()
    if args.policy is not None:
        if args.policy not in policy_names():
            raise UsageError(f"unknown policy {args.policy!r}; choose from {', '.join(policy_names())}")
        settings = replace(settings, policy=args.policy)
    if args.estimator is not None:
        if args.estimator not in estimator_names():
            raise UsageError(f"unknown estimator {args.estimator!r}; choose from {', '.join(estimator_names())}")
        settings = replace(settings, estimator=args.estimator)
    if args.window is not None:
        if args.window < 1000:
            raise UsageError(f"--window {args.window}: too small for a context window")
        settings = replace(settings, window=args.window)
    agent = _agent_options(args)
    if args.path is not None:
        path = Path(args.path).expanduser()
        if not path.exists() and args.agent:
            if not path.parent.is_dir():
                raise UsageError(f"{path}: the agent cannot write there (no directory {path.parent})")
        elif not path.exists() and not (args.follow and path.parent.is_dir()):  # --follow waits for it
            raise LoadError(f"{path}: no such file or directory")
        if path.is_dir() and not any(path.glob("*.jsonl")) and session_file(path) is None and not args.follow:
            raise LoadError(f"{path}: directory holds no session (*.jsonl) file")
    from inspector.app import make_app

    if args.follow and args.path is None:
        raise UsageError("--follow needs a PATH: a session file or a Claude Code project directory")
    make_app(args.path, settings=settings, follow=args.follow, agent=agent).run()
    # The process ends now. A large session is millions of objects: the cycle collector's last pass over them at
    # interpreter exit took seconds after the screen was gone (on 100,000 messages whose figures were still being
    # computed: benchmarks/bench_quit.py). Frozen, they are left to the exit's plain teardown.
    gc.freeze()
    return 0


def _agent_options(args: argparse.Namespace):
    from inspector.app.agent_bridge import AgentOptions
    from inspector.cli import UsageError

    cwd = Path(args.cwd).expanduser() if args.cwd else None
    if cwd is not None and not cwd.is_dir():
        raise UsageError(f"{cwd}: --cwd is not a directory")
    if args.compact_at is not None and args.compact_at <= 0:
        raise UsageError("--compact-at must be a positive number of tokens")
    session = Path(args.path).expanduser() if args.agent and args.path else None
    return AgentOptions(model=args.model, cwd=cwd, session=session, compact_at=args.compact_at,
                        compact=not args.no_compact, open_view=args.agent)
