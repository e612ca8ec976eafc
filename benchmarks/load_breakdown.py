"""Where `context-inspector report PATH --json` spends its CPU time on a large Claude Code session, phase by phase.

Complements bench_load.py (whole commands in fresh processes) with the stages of one process, each timed on its own
(CPU time, best of `--repeat`), beside the floor: what parsing every line costs with plain `json.loads`. Start-up is
timed as fresh processes: bare Python, and the report command started through the CLI as it runs (on os.devnull,
which it refuses once its modules are imported). After `account()`, the output stages as the command runs them, with
their parts (indented: not summed again); a stage run again in one process finds its caches warm, so fresh processes
take somewhat more.

    python benchmarks/load_breakdown.py [PATH] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Iterator

import orjson

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from generate_large_session import DEFAULT_OUT  # noqa: E402

from inspector.commands.report import streamed_rows  # noqa: E402
from inspector.core.compaction.replay import replay  # noqa: E402
from inspector.core.cost import prices, session_cost  # noqa: E402
from inspector.core.cost_report import add_cost_keys  # noqa: E402
from inspector.core.formats.claude_code import ClaudeCodeLoader  # noqa: E402
from inspector.core.formats.jsonl import RUN, runs  # noqa: E402
from inspector.core.gc_pause import gc_paused  # noqa: E402
from inspector.core.index import LineIndex  # noqa: E402
from inspector.core.limits import window_info  # noqa: E402
from inspector.core.model import Session  # noqa: E402
from inspector.core.prefix import prefix_dict  # noqa: E402
from inspector.core.prompt_cache import cache_report  # noqa: E402
from inspector.core.report import ROWS_CHUNK, report_dict, write_json  # noqa: E402
from inspector.core.rows import encode_rows  # noqa: E402
from inspector.core.token_report import add_token_keys  # noqa: E402
from inspector.core.tokens import Accounting, account  # noqa: E402


def cpu_best(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        start = time.process_time()
        out = fn()
        best = min(best, time.process_time() - start)
    return best, out


def process_cpu(argv: list[str], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, _, usage = os.wait4(proc.pid, 0)
        best = min(best, usage.ru_utime + usage.ru_stime)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    path, n = str(args.path), args.repeat
    with gc_paused():  # as `report` runs
        return _breakdown(args.path, path, n)


def _breakdown(shown: Path, path: str, n: int) -> int:
    lines = [raw for _, _, raw in LineIndex(path).read_new()]
    rows: list[tuple[str, float]] = []
    rows.append(("floor: json.loads of every line", cpu_best(lambda: [json.loads(raw) for raw in lines], n)[0]))
    py = sys.executable
    bare = process_cpu([py, "-c", "pass"], n)
    rows.append(("start-up: Python alone", bare))
    # through the CLI, as the command starts (os.devnull: "not a regular file", once every module is imported)
    rows.append(("start-up: the report command's imports (more)",
                 process_cpu([py, "-m", "inspector", "report", os.devnull, "--json"], n) - bare))
    rows.append(("line index (read, split, offsets: read_batches)",
                 cpu_best(lambda: sum(1 for _ in LineIndex(path).read_batches()), n)[0]))
    batches = list(LineIndex(path).read_batches())
    stages = [float("inf")] * 3
    for _ in range(n):  # a fresh loader each time (build extends the last build's branch when it can)
        loader = ClaudeCodeLoader(path)
        t0 = time.process_time()
        parsed = [run for batch in batches for run in _parsed(loader.decoder, *batch)]
        t1 = time.process_time()
        for run in parsed:
            loader.feed_run(*run)
        t2 = time.process_time()
        session = loader.build()
        t3 = time.process_time()
        stages = [min(a, b) for a, b in zip(stages, (t1 - t0, t2 - t1, t3 - t2))]
    count = len(lines)
    del parsed, lines, loader  # (held on, the parsed lines slowed what follows by a quarter: the command frees them)
    rows.append((f"parse of the {count:,} lines (typed, as the loader does)", stages[0]))
    rows.append(("feed (ids linked, records and blocks built)", stages[1]))
    rows.append((f"build ({len(session.messages):,} messages, {len(session.requests):,} requests)", stages[2]))

    def interleaved() -> None:
        loader = ClaudeCodeLoader(path)
        for batch in batches:
            for run in _parsed(loader.decoder, *batch):
                loader.feed_run(*run)

    rows.append((PART + "parse and feed a run at a time, as the loader does", cpu_best(interleaved, n)[0]))
    del batches
    account_time, accounting = cpu_best(lambda: account(session, resumable=False), n)  # as `report` asks it
    rows.append(("account() (token figures)", account_time))

    rows += _output(session, accounting, n)
    floor = rows[0][1] + bare
    print(f"{shown}: {count:,} lines; CPU s, best of {n}; load average {os.getloadavg()[0]:.1f}")
    for name, secs in rows:
        print(f"  {name:52} {secs:6.3f}")
    work = sum(secs for name, secs in rows[1:] if not name.startswith(PART))
    print(f"  {'floor (json.loads of every line + Python start-up)':52} {floor:6.3f}")
    print(f"  {'report --json, the stages above summed':52} {work:6.3f}  ({work / floor:.2f}x the floor)")
    return 0


PART = "  "  # a part of the stage above it, not summed again


def _parsed(decoder: Callable[[list[bytes]], Callable[[bytes], object]], first: int, offsets: list[int],
            raws: list[bytes]) -> Iterator[tuple[int, list[int], list, list[bytes]]]:
    """A batch's lines as `read_jsonl` parses them for the loader, `(first line, offsets, objs, raws)` a run at a
    time: typed entries, or orjson's dict for a line the typed parse refuses."""
    for lo in range(0, len(raws), RUN):
        part = raws[lo:lo + RUN]
        for at, objs in runs(part, decoder(part)):
            at += lo
            end = at + max(1, len(objs))
            yield first + at, offsets[at:end], objs or [orjson.loads(raws[at])], raws[at:end]


def _output(session: Session, accounting: Accounting, n: int) -> list[tuple[str, float]]:
    """The stages of `report --json` after `account()`, as `commands/report.py::_run` runs them (the session's own
    policy, the shipped prices), with the parts of the cost keys, and the JSON written to /dev/null."""
    table = prices()
    info = window_info(session, None, None)
    rows = [("what-if replay", cpu_best(lambda: replay(session, info.thresholds.autocompact,
                                                       estimates=accounting.estimated), n)[0])]
    what_if = replay(session, info.thresholds.autocompact, estimates=accounting.estimated).to_dict()

    def report() -> dict:
        out = add_token_keys(report_dict(session, rows=False), accounting, info)
        out["what_if"] = what_if
        return out

    rows.append(("report dict, token keys", cpu_best(report, n)[0]))
    keys = report()
    secs, (cost, cache) = cpu_best(lambda: add_cost_keys(keys, session, accounting, table, rows=False), n)
    rows.append(("cost keys (add_cost_keys)", secs))
    rows.append((PART + "session_cost (requests priced, message shares)",
                 cpu_best(lambda: session_cost(session, table, accounting), n)[0]))
    rows.append((PART + "cache_report (cache use, breaks)", cpu_best(lambda: cache_report(session, table), n)[0]))
    rows.append((PART + "prefix_dict", cpu_best(lambda: prefix_dict(session, accounting), n)[0]))
    streamed = streamed_rows(session, accounting, cost, cache)
    with open(os.devnull, "wb") as out:
        rows.append(("write_json (rows made and encoded a chunk at a time)",
                     cpu_best(lambda: write_json(out, keys, streamed), n)[0]))
    for path, (length, make) in streamed.items():
        rows.append((PART + f"{'.'.join(path)}: {length:,} rows made and encoded",
                     cpu_best(lambda: [encode_rows(make(lo, min(length, lo + ROWS_CHUNK)))
                                       for lo in range(0, length, ROWS_CHUNK)], n)[0]))
    return rows


if __name__ == "__main__":
    sys.exit(main())
