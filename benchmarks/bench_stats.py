"""How long `context-inspector stats` takes over a large store: 1,000 Claude Code sessions, ~2 GB.

The corpus is generated once into benchmarks/data/stats-corpus/ (git-ignored): the first ~2 MB of the corpus's real
session (`tests/corpus/claude-code-manual-compact.jsonl`, a compaction in it), copied 1,000 times with fresh ids
(`generate_large_session.fresh_ids`) into 25 project directories, each copy dated on one of 30 days. Then
`context-inspector stats DIR --json` runs in a fresh process (its workers: one per CPU), timed, best of N.
Target (issue 18): under 30 s on this machine.

    python benchmarks/bench_stats.py [--sessions 1000] [--mb 2.0] [--repeat 2] [--breakdown N] [--baseline PYTHON]
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


def breakdown(files: list[Path]) -> dict[str, float]:
    """CPU ms per session of each stage of `stats.summarise`, in this process, over `files`: what a worker spends."""
    from inspector.core.cost import session_cost
    from inspector.core.formats import load
    from inspector.core.gc_pause import gc_paused
    from inspector.core.prompt_cache import cache_report
    from inspector.core.tokens import account

    marks = {"load (parse, link, build)": 0.0, "account (token figures, calibration)": 0.0,
             "cost and cache (priced requests, hit ratio)": 0.0}
    keys = list(marks)
    for path in files:
        with gc_paused():  # as `stats.summarise` runs
            t0 = time.process_time()
            session = load(path)
            t1 = time.process_time()
            account(session)
            t2 = time.process_time()
            cache_report(session, session_cost(session).table)
            t3 = time.process_time()
        for key, dt in zip(keys, (t1 - t0, t2 - t1, t3 - t2)):
            marks[key] += dt
    return {k: v / len(files) * 1000 for k, v in marks.items()}


def timed(python: str) -> tuple[float, float, bytes]:
    """`PYTHON -m inspector stats OUT --json` in a fresh process (run outside the source tree, so that PYTHON's
    own install is what runs): wall seconds, CPU seconds of it and its workers, its output."""
    t0 = time.perf_counter()
    with open(os.devnull, "wb") as err:
        proc = subprocess.Popen([python, "-m", "inspector", "stats", str(OUT), "--json"], stdout=subprocess.PIPE,
                                stderr=err, cwd=OUT.parent)
        out = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)  # its workers' time too: they were reaped before it exited
        proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"stats ({python}) failed with status {proc.returncode}")
    return time.perf_counter() - t0, usage.ru_utime + usage.ru_stime, out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--mb", type=float, default=2.0)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--breakdown", type=int, default=0, metavar="N",
                        help="also the CPU time per session of each stage, over N of the sessions")
    parser.add_argument("--baseline", metavar="PYTHON", default=None,
                        help="another install's Python (e.g. main's venv): its runs and this one's interleaved")
    args = parser.parse_args()
    t = time.perf_counter()
    files, size = generate(args.sessions, args.mb)
    print(f"corpus: {files:,} sessions, {size / 1e9:.2f} GB ({time.perf_counter() - t:.0f} s to make or find)")
    runs: dict[str, list[tuple[float, float]]] = {"baseline": [], "this": []}
    for k in range(args.repeat):
        for who in (("baseline", "this") if k % 2 == 0 else ("this", "baseline")):
            if who == "baseline" and not args.baseline:
                continue
            wall, used, printed = timed(args.baseline if who == "baseline" else sys.executable)
            runs[who].append((wall, used))
            if who == "this":
                out = printed
    times, cpu = [w for w, _ in runs["this"]], [c for _, c in runs["this"]]
    if args.baseline:
        base = runs["baseline"]
        print(f"baseline ({args.baseline}), interleaved: wall {', '.join(f'{w:.1f}' for w, _ in base)} s; "
              f"CPU {', '.join(f'{c:.1f}' for _, c in base)} s; this / baseline (best wall) "
              f"{min(times) / min(w for w, _ in base):.2f}")
    result = json.loads(out)
    total = result["total"]
    print(f"stats over {total['sessions']:,} sessions ({len(result['unreadable'])} unreadable), "
          f"{total['compactions']:,} compactions, ${total['cost_usd']:,.2f}, cache hit {total['cache_hit_ratio']:.1%}")
    print(f"wall: best {min(times):.1f} s of {len(times)} ({', '.join(f'{x:.1f}' for x in times)}); "
          f"CPU (all processes): {', '.join(f'{x:.1f}' for x in cpu)} s; {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.1f}")
    if args.breakdown:
        for stage, ms in breakdown(sorted(OUT.glob("*/*.jsonl"))[:args.breakdown]).items():
            print(f"  {stage:<48} {ms:6.1f} ms CPU per session")
    ok = min(times) < 30
    print("target (under 30 s):", "met" if ok else "missed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
