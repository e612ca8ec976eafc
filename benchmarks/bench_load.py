"""Time `context-inspector report --json` on a large Claude Code session against a floor measured in the same run.

The floor is the least any loader must do: `json.loads` of every line, in a fresh Python process. Each command runs
in its own process (interpreter start-up included on both sides), `--repeat` times; the best wall time counts, and
the peak RSS is that process's own (os.wait4). Targets (issue 2): `report --json` within 1.5x the floor, peak RSS
within 2x the file size. `load()` alone is timed too, to separate the loader from what `report` adds on top.

    python benchmarks/bench_load.py [PATH] [--repeat 3]

Without PATH, uses benchmarks/data/large-session.jsonl, generating it first if missing
(benchmarks/generate_large_session.py). Exit status 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from generate_large_session import DEFAULT_OUT, generate  # noqa: E402

FLOOR = "import json, sys\nfor line in open(sys.argv[1], 'rb'):\n    json.loads(line)\n"
LOAD = "import sys\nfrom inspector.core.formats import load\nload(sys.argv[1])\n"
TIME_RATIO, RSS_RATIO = 1.5, 2.0


def measure(argv: list[str]) -> tuple[float, int]:
    """(wall seconds, peak RSS bytes) of one run of `argv`, output discarded; fails loudly if the command fails."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}): {err.strip()}")
    return elapsed, usage.ru_maxrss * 1024  # ru_maxrss is in KiB on Linux


def best(argv: list[str], repeat: int) -> tuple[float, int]:
    runs = [measure(argv) for _ in range(repeat)]
    return min(t for t, _ in runs), max(r for _, r in runs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if not args.path.exists():
        print(f"generating {args.path} ...", file=sys.stderr)
        generate(args.path, 100, 100_000)
    size = args.path.stat().st_size
    with open(args.path, "rb") as f:
        lines = sum(1 for _ in f)
    py = sys.executable
    floor_t, floor_rss = best([py, "-c", FLOOR, str(args.path)], args.repeat)
    load_t, load_rss = best([py, "-c", LOAD, str(args.path)], args.repeat)
    report_t, report_rss = best([py, "-m", "inspector", "report", str(args.path), "--json"], args.repeat)

    mb = 1e6
    print(f"file          {args.path}: {size / mb:.1f} MB, {lines:,} lines")
    print(f"floor         {floor_t:6.2f} s   peak RSS {floor_rss / mb:6.0f} MB   (json.loads of every line)")
    print(f"load()        {load_t:6.2f} s   peak RSS {load_rss / mb:6.0f} MB   {load_t / floor_t:.2f}x floor, "
          f"RSS {load_rss / size:.2f}x file")
    print(f"report --json {report_t:6.2f} s   peak RSS {report_rss / mb:6.0f} MB   {report_t / floor_t:.2f}x floor, "
          f"RSS {report_rss / size:.2f}x file")
    ok = report_t <= TIME_RATIO * floor_t and report_rss <= RSS_RATIO * size
    print(f"targets       time <= {TIME_RATIO}x floor, peak RSS <= {RSS_RATIO}x file: {'met' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
