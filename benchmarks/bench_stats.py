"""How long `context-inspector stats` takes over a large store: 1,000 Claude Code sessions, ~2 GB.

The corpus is generated once into benchmarks/data/stats-corpus/ (git-ignored): the first ~2 MB of the corpus's real
session (`tests/corpus/claude-code-manual-compact.jsonl`, a compaction in it), copied 1,000 times with fresh ids
(`generate_large_session.fresh_ids`) into 25 project directories, each copy dated on one of 30 days. Then
`context-inspector stats DIR --json` runs in a fresh process (its workers: one per CPU), timed, best of N.
Target (issue 18): under 30 s on this machine.

    python benchmarks/bench_stats.py [--sessions 1000] [--mb 2.0] [--repeat 2]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate_large_session import SOURCE, fresh_ids  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "data" / "stats-corpus"
STAMP = b"\"timestamp\":\"2026-02-12"  # the source's one day, replaced per copy


def generate(sessions: int, mb: float) -> tuple[int, int]:
    """The corpus (kept when it is already there with as many files); (files, bytes)."""
    lines = SOURCE.read_bytes().splitlines(keepends=True)
    head, size = [], 0
    for line in lines:
        if size >= mb * 1e6:
            break
        head.append(line)
        size += len(line)
    data = b"".join(head)
    existing = sorted(OUT.glob("*/*.jsonl"))
    if len(existing) == sessions:
        return sessions, sum(p.stat().st_size for p in existing)
    total = 0
    for k in range(sessions):
        project = OUT / f"-home-user-project-{k % 25:02d}"
        project.mkdir(parents=True, exist_ok=True)
        day = f"2026-11-{1 + k % 30:02d}".encode()
        body = fresh_ids(data, k).replace(STAMP, b"\"timestamp\":\"" + day)
        body = body.replace(b"spotter-4te", b"project-%02d" % (k % 25))
        path = project / f"session-{k:04d}.jsonl"
        path.write_bytes(body)
        total += len(body)
    return sessions, total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--mb", type=float, default=2.0)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    t = time.perf_counter()
    files, size = generate(args.sessions, args.mb)
    print(f"corpus: {files:,} sessions, {size / 1e9:.2f} GB ({time.perf_counter() - t:.0f} s to make or find)")
    times = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "inspector", "stats", str(OUT), "--json"],
                              capture_output=True, check=True)
        times.append(time.perf_counter() - t0)
    result = json.loads(done.stdout)
    total = result["total"]
    print(f"stats over {total['sessions']:,} sessions ({len(result['unreadable'])} unreadable), "
          f"{total['compactions']:,} compactions, ${total['cost_usd']:,.2f}, cache hit {total['cache_hit_ratio']:.1%}")
    print(f"wall: best {min(times):.1f} s of {len(times)} ({', '.join(f'{x:.1f}' for x in times)}); "
          f"{os.cpu_count()} CPUs")
    ok = min(times) < 30
    print("target (under 30 s):", "met" if ok else "missed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
