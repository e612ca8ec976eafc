"""Time `context-inspector report --json` on a large Claude Code session against a floor measured in the same run.

The floor is the least any loader must do: `json.loads` of every line, in a fresh Python process. Each command runs
in its own process (interpreter start-up included on both sides), `--repeat` times interleaved; the best time
counts, and the peak RSS is that process's own (os.wait4). Ratios use CPU time (user + sys), which other work on a
shared machine disturbs far less than wall time; wall time is printed beside it. Targets (issue 2): `report --json`
within 1.5x the floor, peak RSS within 2x the file size. `load()` alone is timed too, to separate the loader from
what `report` adds on top of it (token accounting).

    python benchmarks/bench_load.py [PATH] [--repeat 3] [--against NAME=DIR ...]

`--against NAME=DIR` adds, interleaved with the rest, `load()` and `report --json` run from another source tree (DIR
holds its `inspector` package: `git worktree add DIR REV`), to measure a change in one run.

Without PATH, uses benchmarks/data/large-session.jsonl, generating it first if missing
(benchmarks/generate_large_session.py). Exit status 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from generate_large_session import DEFAULT_OUT, generate  # noqa: E402

FLOOR = "import json, sys\nfor line in open(sys.argv[1], 'rb'):\n    json.loads(line)\n"
LOAD = "import sys\nfrom inspector.core.formats import load\nload(sys.argv[1])\n"
TIME_RATIO, RSS_RATIO = 1.5, 2.0


# The command is started by a small Python process of its own, which forks it, waits for it and writes back its
# wall time and rusage: on Linux a child's peak RSS starts from its parent's at the fork (exec keeps the higher
# mark), so a command forked from this process (over 100 MB once it has generated a session) would report that.
SPAWN = """import json, os, sys, time
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(sys.argv[2], sys.argv[2:])
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
os.write(int(sys.argv[1]), json.dumps([time.perf_counter() - start, usage.ru_utime + usage.ru_stime,
                                       usage.ru_maxrss, os.waitstatus_to_exitcode(status)]).encode())
"""


def measure(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, float, int]:
    """(wall s, CPU s, peak RSS bytes) of one run of `argv`, output discarded; exits loudly if the command fails."""
    read, write = os.pipe()
    proc = subprocess.Popen([sys.executable, "-c", SPAWN, str(write), *argv], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env=env, pass_fds=(write,))
    os.close(write)
    with os.fdopen(read, "rb") as got:
        report = got.read()
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    proc.wait()
    if not report:
        raise SystemExit(f"{' '.join(argv)} could not be started: {err.strip()}")
    elapsed, cpu, maxrss, code = json.loads(report)
    if code != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({code}): {err.strip()}")
    return elapsed, cpu, maxrss * 1024  # ru_maxrss is KiB on Linux


Command = list[str] | tuple[list[str], dict[str, str]]  # argv, or argv and its environment


def best(commands: dict[str, Command], repeat: int) -> dict[str, tuple[float, float, int]]:
    """Best wall and CPU time and the peak RSS of each command, runs interleaved so load on the machine (shared
    cores) drifts over all of them alike."""
    runs: dict[str, list[tuple[float, float, int]]] = {name: [] for name in commands}
    for _ in range(repeat):
        for name, command in commands.items():
            runs[name].append(measure(*command) if isinstance(command, tuple) else measure(command))
    return {name: (min(r[0] for r in rs), min(r[1] for r in rs), max(r[2] for r in rs)) for name, rs in runs.items()}


def add_against(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--against", nargs="+", default=[], metavar="NAME=DIR",
                        help="also run from the source tree DIR (its inspector package), as NAME")


def against_trees(parser: argparse.ArgumentParser, items: list[str]) -> dict[str, Path]:
    """NAME -> DIR of each `--against NAME=DIR`; a usage error for a DIR holding no inspector package. Every tree
    measured (this one too) is compiled to bytecode first, as pip compiles an installed package: where the
    environment sets PYTHONDONTWRITEBYTECODE, each run would otherwise compile the whole package from source
    again (0.08 s of every `report`, measured on this machine)."""
    trees = {}
    for item in items:
        name, sep, tree = item.partition("=")
        if not sep or not (Path(tree) / "inspector").is_dir():
            parser.error(f"--against {item!r}: NAME=DIR, with DIR holding an inspector package")
        trees[name] = Path(tree)
    for tree in (HERE.parent, *trees.values()):
        compileall.compile_dir(tree / "inspector", quiet=1)
    return trees


def in_tree(args: list[str], tree: Path) -> tuple[list[str], dict[str, str]]:
    """`python ARGS` with `tree`'s inspector package first on the path (-P: not the current directory's)."""
    return [sys.executable, "-P", *args], {**os.environ, "PYTHONPATH": str(tree.resolve())}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--repeat", type=int, default=3)
    add_against(parser)
    args = parser.parse_args()
    trees = against_trees(parser, args.against)
    if not args.path.exists():
        print(f"generating {args.path} ...", file=sys.stderr)
        generate(args.path, 100, 100_000)
    size = args.path.stat().st_size
    with open(args.path, "rb") as f:
        lines = sum(1 for _ in f)
    py = sys.executable
    commands: dict[str, Command] = {"floor": [py, "-c", FLOOR, str(args.path)],
                                    "load()": [py, "-c", LOAD, str(args.path)],
                                    "report --json": [py, "-m", "inspector", "report", str(args.path), "--json"]}
    for name, tree in trees.items():
        commands[f"load() @ {name}"] = in_tree(["-c", LOAD, str(args.path)], tree)
        commands[f"report @ {name}"] = in_tree(["-m", "inspector", "report", str(args.path), "--json"], tree)
    results = best(commands, args.repeat)
    floor_wall, floor_cpu, _ = results["floor"]
    print(f"file           {args.path}: {size / 1e6:.1f} MB, {lines:,} lines; best of {args.repeat}, "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'':18} {'wall s':>7} {'CPU s':>7} {'x floor (CPU)':>14} {'peak RSS':>9} {'x file':>7}")
    for name, (wall, cpu, rss) in results.items():
        print(f"{name:18} {wall:7.2f} {cpu:7.2f} {cpu / floor_cpu:14.2f} {rss / 1e6:6.0f} MB {rss / size:7.2f}")
    _, report_cpu, report_rss = results["report --json"]
    ok = report_cpu <= TIME_RATIO * floor_cpu and report_rss <= RSS_RATIO * size
    print(f"targets: report --json within {TIME_RATIO}x the floor's CPU time and peak RSS within {RSS_RATIO}x the "
          f"file size: {'met' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
