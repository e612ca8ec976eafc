"""CPU time of token accounting alone (`tokens.account`, sessions loaded first), this tree against others (issue 19).

    python benchmarks/bench_accounting.py [PATH ...] [--limit 300] [--repeat 3] [--against NAME=DIR ...]

PATH: session files or directories of them (every *.jsonl below; default: benchmarks/data/messages-100k.jsonl and
the first `--limit` sessions of benchmarks/data/stats-corpus, the 1,000 small sessions bench_stats.py generates:
the status line and `stats` account sessions like these one after another). Each tree runs in a fresh process,
the trees interleaved `--repeat` times so the load of a shared machine drifts over all alike; printed: the median
CPU seconds of `account` over each set of sessions, and the ratio to this tree's. `--against NAME=DIR` adds
another source tree (DIR holds its `inspector` package: `git worktree add DIR REV`).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULTS = [HERE / "data" / "messages-100k.jsonl", HERE / "data" / "stats-corpus"]

CHILD = """import sys, time
from inspector.core.formats import load
from inspector.core.tokens import account
sessions = [load(p) for p in sys.argv[1:]]
t = time.process_time()
for s in sessions:
    account(s)
print(time.process_time() - t)
"""


def sessions(path: Path, limit: int) -> list[str]:
    if path.is_dir():
        return [str(p) for p in sorted(path.rglob("*.jsonl"))[:limit]]
    return [str(path)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--limit", type=int, default=300, help="sessions taken from a directory (default 300)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--against", action="append", default=[], metavar="NAME=DIR")
    args = parser.parse_args(argv)
    trees = {"this tree": HERE.parent}
    for item in args.against:
        name, _, tree = item.partition("=")
        trees[name] = Path(tree).resolve()
    for path in args.paths or [p for p in DEFAULTS if p.exists()]:
        files = sessions(path, args.limit)
        if not files:
            print(f"{path}: no session")
            continue
        times: dict[str, list[float]] = {name: [] for name in trees}
        for _ in range(args.repeat):
            for name, tree in trees.items():
                env = {**os.environ, "PYTHONPATH": str(tree)}
                out = subprocess.run([sys.executable, "-P", "-c", CHILD, *files], env=env, check=True,
                                     capture_output=True, text=True).stdout
                times[name].append(float(out))
        base = statistics.median(times["this tree"])
        load = os.getloadavg()[0]
        print(f"{path.name}: {len(files)} session(s), median of {args.repeat}, load average {load:.1f}")
        for name, values in times.items():
            median = statistics.median(values)
            print(f"  {name:<12} account CPU {median:7.3f} s  x{median / base:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
