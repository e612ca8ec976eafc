"""`context-inspector stats [DIR...]`: every session found, per project and per day: sessions, compactions, the
median context at compaction, the categories that fill windows, cost and prompt-cache hit ratio.

Without DIR: the sessions of every agent store the picker knows (Claude Code, Codex, Gemini CLI, Qwen Code,
opencode, Copilot, Cline, Roo Code, the Cline SDK, Kimi), each where its own environment variables put it. Sessions
are read in parallel worker processes (`--jobs`); a progress bar shows on a terminal.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dirs", nargs="*", metavar="DIR", type=Path,
                        help="directories (or files) to read sessions from (default: every agent's store)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--jobs", type=int, default=None, metavar="N",
                        help="worker processes (default: one per CPU)")


def run(args: argparse.Namespace) -> int:
    from inspector.cli import UsageError
    from inspector.core.inert import safe_line
    from inspector.core.stats import aggregate, session_paths, store_paths, summaries

    missing = [d for d in args.dirs if not d.exists()]
    if missing:
        raise UsageError(f"{safe_line(missing[0])}: no such file or directory")
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    paths = session_paths(args.dirs) if args.dirs else store_paths()
    bar = _bar if sys.stderr.isatty() else None
    rows = summaries(paths, args.jobs, bar)
    if bar:
        sys.stderr.write("\r\x1b[K")
    result = aggregate(rows)
    if args.json:
        sys.stdout.write(json.dumps(result, ensure_ascii=True) + "\n")
    else:
        sys.stdout.write(text(result, safe_line))
    return 0


def _bar(done: int, total: int) -> None:
    width = 30
    filled = int(width * done / total) if total else width
    sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done:,}/{total:,} sessions")
    sys.stderr.flush()


def _row(name: str, g: dict, safe) -> str:
    med = g["median_tokens_at_compaction"]
    hit = g["cache_hit_ratio"]
    cost = g["cost_usd"]
    top = ", ".join(f"{safe(c['label'], 40)} {c['share']:.0%}" for c in g["top_categories"][:3])
    name = safe(name)
    name = name if len(name) <= 48 else "…" + name[-47:]
    return (f"  {name:<48} {g['sessions']:>6,} {g['compactions']:>6,} "
            f"{f'{med:,}' if med is not None else '-':>9} {f'${cost:,.2f}' if cost is not None else '-':>10} "
            f"{f'{hit:.0%}' if hit is not None else '-':>5}  {top}")


def text(result: dict, safe) -> str:
    head = (f"  {'':<48} {'sess.':>6} {'comp.':>6} {'med. at':>9} {'cost':>10} {'cache':>5}  what fills windows")
    out = ["All sessions", head, _row("total", result["total"], safe), "", "Per project", head]
    out += [_row(k, g, safe) for k, g in result["by_project"].items()]
    out += ["", "Per day", head]
    out += [_row(k, g, safe) for k, g in result["by_day"].items()]
    if result["unreadable"]:
        out += ["", f"Unreadable ({len(result['unreadable'])})"]
        out += [f"  {safe(u['path'])}: {safe(u['error'])}" for u in result["unreadable"][:20]]
    return "\n".join(out) + "\n"
