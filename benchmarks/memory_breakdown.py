"""Where the peak RSS of `context-inspector report PATH --json` goes, stage by stage (issue 19: peak RSS <= 2x the
file).

Default: the command itself, run in this process with its output to /dev/null, and the process's RSS and peak RSS
(VmRSS, VmHWM) read after start-up, the imports, `load()`, `account()` and the output. `--traced`: the objects that
are live (tracemalloc) when the loader builds the session (the session's own and the loader's state) and after
`load()` returns (the session), with the peak while loading; what the loader frees then leaves arenas the session
still shares, which RSS keeps. `--composition`: what the loaded session's objects are, by kind (sys.getsizeof,
each object once), per message. Run each mode in a fresh process (this script is one): RSS only grows.

    python benchmarks/memory_breakdown.py [PATH] [--traced | --composition]

Without PATH, uses benchmarks/data/messages-100k.jsonl (bench_messages.py makes it).
"""

from __future__ import annotations

import argparse
import os
import sys
import tracemalloc
from collections import Counter
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
DEFAULT = HERE / "data" / "messages-100k.jsonl"
MB = 1e6


def status() -> str:
    """This process's RSS and peak RSS, from /proc/self/status (Linux)."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    rss, hwm = (int(fields[key].split()[0]) * 1024 for key in ("VmRSS", "VmHWM"))
    return f"RSS {rss / MB:6.1f} MB   peak {hwm / MB:6.1f} MB"


def traced() -> str:
    live, peak = tracemalloc.get_traced_memory()
    return f"live {live / MB:6.1f} MB   peak since the last mark {peak / MB:6.1f} MB"


def after(marks: list[tuple[str, str]], name: str, fn: Callable[..., Any], measure: Callable[[], str]) -> Callable:
    """`fn`, noting `measure()` as `name` each time it returns."""
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        out = fn(*args, **kwargs)
        marks.append((name, measure()))
        tracemalloc.reset_peak()
        return out
    return wrapped


def by_rss(path: Path) -> list[tuple[str, str]]:
    marks = [("start-up", status())]
    import inspector.commands.report as report
    from inspector.cli import main

    marks.append(("imports", status()))
    report.load = after(marks, "load()", report.load, status)
    report.account = after(marks, "account()", report.account, status)
    stdout, sys.stdout = sys.stdout, open(os.devnull, "w")
    try:
        main(["report", str(path), "--json"])  # called from code: the objects are freed as it returns
    finally:
        sys.stdout.close()
        sys.stdout = stdout
    marks.append(("output (report --json done)", status()))
    return marks


def by_objects(path: Path) -> list[tuple[str, str]]:
    from inspector.core.formats import claude_code, load
    from inspector.core.gc_pause import gc_paused

    marks: list[tuple[str, str]] = []
    build = claude_code.ClaudeCodeLoader.build

    def measured_build(self: claude_code.ClaudeCodeLoader) -> Any:
        marks.append(("lines read and fed (before the build)", traced()))
        tracemalloc.reset_peak()
        return after(marks, "built: the session and the loader's state", build, traced)(self)

    claude_code.ClaudeCodeLoader.build = measured_build  # type: ignore[method-assign]
    tracemalloc.start()
    with gc_paused():  # as `report` runs
        session = after(marks, "load() returned: the session alone", load, traced)(path)
    del session
    return marks


def composition(path: Path) -> list[tuple[str, str]]:
    from inspector.core.formats import load

    session = load(path)
    seen: set[int] = set()
    size: Counter[str] = Counter()

    def add(kind: str, *objs: Any) -> None:
        for obj in objs:
            if obj is not None and id(obj) not in seen:
                seen.add(id(obj))
                size[kind] += sys.getsizeof(obj)

    add("the session's lists", session.messages, session.requests)
    for m in session.messages:
        add("Message (and its own extras)", m, m.extras)
        add("blocks lists", m.blocks)
        add("line and offset ints, tuples of more lines", m.line, m.offset, m.more_lines, *m.more_lines)
        add("uuid, timestamp, response id strings", m.uuid, m.timestamp, m.response_id, m.model)
        for b in m.blocks:
            add("Block (and its own extras)", b, b.extras)
            add("text", b.text)
            add("tool ids and names", b.tool_id, b.tool_name)
            add("tool inputs (JSON text)", b.input_text)
    for r in session.requests:
        add("Request", r)
        add("Request ints and strings", r.input_tokens, r.cache_creation, r.cache_read, r.output_tokens,
            r.message_index, r.seen_start, r.seen_end, r.line, r.id, r.timestamp)
    n = max(1, len(session.messages))
    marks = [(kind, f"{bytes_ / MB:6.1f} MB   {bytes_ / n:5.0f} B a message") for kind, bytes_ in size.most_common()]
    total = sum(size.values())
    return [*marks, (f"all of it ({len(session.messages):,} messages)",
                     f"{total / MB:6.1f} MB   {total / n:5.0f} B a message")]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--traced", action="store_true", help="live objects (tracemalloc) instead of RSS")
    mode.add_argument("--composition", action="store_true", help="the session's objects by kind")
    args = parser.parse_args()
    if not args.path.is_file():
        parser.error(f"{args.path}: no such file (bench_messages.py generates benchmarks/data/messages-100k.jsonl)")
    size = args.path.stat().st_size
    marks = (by_objects(args.path) if args.traced else composition(args.path) if args.composition else
             by_rss(args.path))
    print(f"{args.path.name}: {size / MB:.1f} MB; 2x the file: {2 * size / MB:.1f} MB")
    for name, figures in marks:
        print(f"  {'' if args.composition else 'after '}{name:44} {figures}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
