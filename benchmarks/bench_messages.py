"""`report --json` on sessions of many small messages, side by side with the orjson floor and ccusage (issue 19).

    python benchmarks/bench_messages.py [--messages 10000 30000 100000] [--repeat 3] [--no-ccusage]
                                        [--against NAME=DIR ...]

Each size is a `generate_many_messages.py` session (shape `short`: one tool call and a short result per round, usage
on every response; generated on first use into benchmarks/data/). Per size, in fresh processes, interleaved so the
load of the shared machine drifts over all alike:

- **floor**: `orjson.loads` of every line in a bare Python process (what any reader of the file must at least do);
- **lower bound**: `report_lower_bound.py`, the least a pure-Python report of the messages can do (parse, pick
  the fields, estimate with fixed ratios, spread the usage, write the rows): what is left of ours beyond it is the
  product's own work;
- **ours**: `context-inspector report PATH --json` (load, token accounting, what-if replay, the JSON);
- **ccusage** 17.2.1 (`session --json --offline`, pricing from its own cache), which only sums each response's
  usage: from npm into the cache tests/agents/install.py uses (`install.py ccusage`), pointed at a copy of the file
  through `CLAUDE_CONFIG_DIR`. Skipped with a note when npm cannot install it.

`--against NAME=DIR` adds, interleaved with the rest, `report --json` run from another source tree (DIR holds its
`inspector` package: `git worktree add DIR REV`, or `git archive REV inspector | tar -x -C DIR`), to measure a
change step by step in one run.

Prints the median wall and CPU time and the largest peak RSS (`os.wait4`: that process alone) of each, the ratios,
and ours per message: its wall time over the messages, and the same less the floor (what the work after parsing
costs a message). Targets on the largest size (issue 19): wall <= 0.8x ccusage's and <= 5x the floor's, peak RSS
<= 2x the file. Exit status 1 when one is missed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "agents"))

import install  # noqa: E402  (tests/agents/install.py: npm into the lab's cache)
from bench_load import add_against, against_trees, in_tree, measure  # noqa: E402
from generate_many_messages import default_path, generate  # noqa: E402

FLOOR = "import orjson, sys\nfor line in open(sys.argv[1], 'rb'):\n    orjson.loads(line)\n"
PEER_RATIO, FLOOR_RATIO, RSS_RATIO = 0.8, 5.0, 2.0


def session_file(messages: int) -> Path:
    path = default_path(messages)
    if not path.exists():
        print(f"generating {path} ...", file=sys.stderr)
        generate(path, messages)
    return path


def run(path: Path, repeat: int, ccusage: Path | None,
        against: dict[str, Path] | None = None) -> dict[str, tuple[float, float, int]]:
    """Median wall and CPU time and the largest peak RSS of each command on `path`."""
    py = sys.executable
    ours = [py, "-m", "inspector", "report", str(path.resolve()), "--json"]
    commands: dict[str, tuple[list[str], dict[str, str] | None]] = {
        "floor (orjson)": ([py, "-c", FLOOR, str(path)], None),
        "lower bound (Python)": ([py, str(HERE / "report_lower_bound.py"), str(path)], None),
        "ours: report --json": (ours, None),
    }
    for name, tree in (against or {}).items():
        commands[f"ours @ {name}"] = in_tree(ours[1:], tree)
    with tempfile.TemporaryDirectory() as tmp:
        if ccusage is not None:  # ccusage reads <CLAUDE_CONFIG_DIR>/projects/<project>/<session>.jsonl
            project = Path(tmp) / "projects" / "bench"
            project.mkdir(parents=True)
            target = project / path.name
            try:
                os.link(path, target)
            except OSError:
                shutil.copyfile(path, target)
            env = {**os.environ, "CLAUDE_CONFIG_DIR": tmp, "NO_COLOR": "1"}
            commands["ccusage session --json"] = ([str(ccusage), "session", "--json", "--offline"], env)
        runs: dict[str, list[tuple[float, float, int]]] = {name: [] for name in commands}
        for _ in range(repeat):
            for name, (argv, env) in commands.items():
                runs[name].append(measure(argv, env))
    return {name: (statistics.median(r[0] for r in rs), statistics.median(r[1] for r in rs), max(r[2] for r in rs))
            for name, rs in runs.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, nargs="+", default=[10_000, 30_000, 100_000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-ccusage", action="store_true")
    add_against(parser)
    args = parser.parse_args()
    against = against_trees(parser, args.against)
    ccusage = None if args.no_ccusage else install.ensure("ccusage")
    if ccusage is None and not args.no_ccusage:
        print(f"ccusage not compared: {install.last_error.get('ccusage')}", file=sys.stderr)
    print(f"median of {args.repeat}, interleaved; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    ok = True
    for i, messages in enumerate(sorted(args.messages)):
        path = session_file(messages)
        size = path.stat().st_size
        results = run(path, args.repeat, ccusage, against)
        print(f"\n{path.name}: {messages:,} messages, {size / 1e6:.1f} MB")
        print(f"  {'':24} {'wall s':>7} {'CPU s':>7} {'peak RSS':>9} {'x file':>7}")
        for name, (wall, cpu, rss) in results.items():
            print(f"  {name:24} {wall:7.2f} {cpu:7.2f} {rss / 1e6:6.0f} MB {rss / size:7.2f}")
        floor_wall = results["floor (orjson)"][0]
        wall, cpu, rss = results["ours: report --json"]
        print(f"  ours per message: {wall / messages * 1e6:.1f} us wall, {(wall - floor_wall) / messages * 1e6:.1f} us "
              f"beyond the floor")
        bound = results["lower bound (Python)"][0]
        line = f"  ours: {wall / floor_wall:.2f}x the floor, {wall / bound:.2f}x the lower bound"
        peer = results.get("ccusage session --json")
        if peer is not None:
            line += f", {wall / peer[0]:.2f}x ccusage"
        print(line + f", peak RSS {rss / size:.2f}x the file")
        if i == len(args.messages) - 1:
            met = wall <= FLOOR_RATIO * floor_wall and rss <= RSS_RATIO * size and (
                peer is None or wall <= PEER_RATIO * peer[0])
            ok = met
            print(f"targets on the largest: wall <= {PEER_RATIO}x ccusage's and <= {FLOOR_RATIO:.0f}x the floor's, "
                  f"peak RSS <= {RSS_RATIO:.0f}x the file: {'met' if met else 'MISSED'}"
                  + ("" if peer is not None else " (ccusage not compared)"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
