"""`report --json` on long sessions of Codex, Gemini CLI and Kimi Code, beside the orjson floor, at two lengths:
whether the cost per message stays flat as a session grows (issue 19's rule, for the other agents' loaders).

    python benchmarks/bench_formats.py [--formats codex gemini kimi-code] [--messages 10000 30000] [--repeat 3]
                                       [--against NAME=DIR ...]

Each session is a lab recording with a compaction in it, tiled (`generate_agent_sessions.py`): a compaction every
copy, so the sessions hold thousands of compactions, far more than a real one of their length, which is what a
scan of every compaction per request shows up on. Per format and length, in fresh processes, interleaved: the
floor (`orjson.loads` of every line) and ours; prints the median wall time, the peak RSS, ours per message and the
growth of the work beyond the floor per message from the shortest length to the longest. Exit status 1 when that
grows by more than `GROWTH` (the cost per message must not grow with the session's length). `--against NAME=DIR`
adds ours run from another source tree (as in bench_load.py), interleaved, its growth printed beside.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from bench_load import add_against, against_trees, in_tree, measure  # noqa: E402
from bench_messages import FLOOR  # noqa: E402
from generate_agent_sessions import RECORDINGS, session_for  # noqa: E402

GROWTH = 1.3  # beyond-the-floor microseconds per message, longest over shortest: at most this


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--formats", nargs="+", default=sorted(RECORDINGS), choices=sorted(RECORDINGS))
    parser.add_argument("--messages", type=int, nargs="+", default=[10_000, 30_000])
    parser.add_argument("--repeat", type=int, default=3)
    add_against(parser)
    args = parser.parse_args()
    trees = against_trees(parser, args.against)
    sizes = sorted(args.messages)
    py = sys.executable
    print(f"median of {args.repeat}, interleaved; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    ok = True
    for fmt in args.formats:
        paths = {n: session_for(fmt, n) for n in sizes}
        ours = {"ours": ([py, "-m", "inspector", "report"], None)}
        for name, tree in trees.items():
            argv, env = in_tree(["-m", "inspector", "report"], tree)
            ours[f"ours @ {name}"] = (argv, env)
        commands = {(n, "floor"): ([py, "-c", FLOOR, str(path)], None) for n, path in paths.items()}
        for what, (argv, env) in ours.items():
            commands.update({(n, what): ([*argv, str(path), "--json"], env) for n, path in paths.items()})
        commands[(0, "start-up")] = ([py, "-c", "import inspector.commands.report"], None)
        runs: dict[tuple[int, str], list[tuple[float, float, int]]] = {key: [] for key in commands}
        for _ in range(args.repeat):
            for key, (argv, env) in commands.items():
                runs[key].append(measure(argv, env))
        print(f"\n{fmt} ({RECORDINGS[fmt].fixture.split('/')[0]}, tiled)")
        print(f"  {'':14} {'messages':>9} {'MB':>6} {'floor s':>8} {'ours s':>7} {'x floor':>8} {'peak RSS':>9} "
              f"{'us/message':>11} {'beyond':>7}")
        start = statistics.median(r[0] for r in runs[(0, "start-up")])
        for what in ours:
            beyond = {}
            for n, path in paths.items():
                floor = statistics.median(r[0] for r in runs[(n, "floor")])
                wall = statistics.median(r[0] for r in runs[(n, what)])
                rss = max(r[2] for r in runs[(n, what)])
                beyond[n] = (wall - floor - start) / n * 1e6
                print(f"  {what:14} {n:9,} {path.stat().st_size / 1e6:6.1f} {floor:8.2f} {wall:7.2f} "
                      f"{wall / floor:8.2f} {rss / 1e6:6.0f} MB {wall / n * 1e6:11.1f} {beyond[n]:7.1f}")
            growth = beyond[sizes[-1]] / beyond[sizes[0]]
            flat = growth <= GROWTH
            if what == "ours":
                ok &= flat
            print(f"  {what}: per message beyond the floor and the start-up ({start:.2f} s), {sizes[-1]:,} over "
                  f"{sizes[0]:,}: {growth:.2f}x ({'flat' if flat else 'GROWS'}; at most {GROWTH}x)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
