"""Time and peak memory of `report` and the app on the big hostile inputs of the bad-input corpus.

The 50 MB single line (a tool result, and one that is not JSON at all) and JSON nested 100,000 deep, built by
tests/bad_inputs/build.py; each is run as a subprocess, its peak RSS taken from `os.wait4` (that child only).

    python benchmarks/hostile_inputs.py [--runs 3] [--part files|shapes|all]

Prints one row per input and command: the median wall time and the largest peak RSS over the runs, next to the
baseline of the same command on a three-line session (the interpreter and imports alone). `--part shapes` times
the hostile shapes of issue 15 instead, in this process: one response of N parallel tool calls through the
pairing check, a catastrophic grep pattern and a `**/**/...` glob through the agent's tools, `report --json` on one
response spread over 100,000 lines and on 100,000 / 200,000 parallel calls with their results (a line each), and the
bad inputs the big files part does not hold (a 2 GB NUL tail is one of those: `report` on it is in the files part).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from bad_inputs.build import CASES, parallel_calls, truncated_last_line  # noqa: E402
from bad_inputs.proc import run  # noqa: E402

COMMANDS = {
    "report --json": lambda p: [sys.executable, "-m", "inspector", "report", str(p), "--json"],
    "app (headless)": lambda p: [sys.executable, str(ROOT / "tests" / "bad_inputs" / "open_app.py"), str(p)],
}


def measure(args: list[str], runs: int) -> tuple[float, float, int]:
    times, peaks, code = [], [], 0
    for _ in range(runs):
        start = time.perf_counter()
        result = run(args, timeout=300, measure=True)
        times.append(time.perf_counter() - start)
        peaks.append(result.peak_mb)
        code = result.returncode
    return statistics.median(times), max(peaks), code


def shapes(runs: int) -> None:
    """Issue 15's shapes, each the median of `runs`."""
    from inspector.core.agent.tools import TOOLS_BY_NAME, ToolContext, run_tool
    from inspector.core.pairing import pairing_warnings
    from inspector.core.model import Block, Message, Session

    def timed(work) -> float:
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            work()
            times.append(time.perf_counter() - start)
        return statistics.median(times)

    print(f"{'shape':<48} {'median s':>8}")
    for n in (100_000, 200_000, 400_000):
        calls = Message("assistant", "assistant", [Block("tool_use", tool_id=f"t{i}", tool_name="Bash")
                                                   for i in range(n)])
        results = Message("user", "tool_result", [Block("tool_result", tool_id=f"t{i}") for i in range(n)])
        session = Session(source="x", format="neutral", messages=[calls, results])
        print(f"{f'pairing check, {n:,} parallel calls':<48} {timed(lambda: pairing_warnings(session)):>8.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        (base / "a.txt").write_text("a" * 60 + "\n")
        ctx = ToolContext(base)
        grep = lambda: run_tool(TOOLS_BY_NAME["grep"], {"pattern": "(.*.*)*QQQ"}, ctx)  # noqa: E731
        print(f"{'grep (.*.*)*QQQ on a 60-character line':<48} {timed(grep):>8.3f}")

        def grow(d: Path, depth: int) -> None:
            (d / "f.py").write_text("x = 1\n")
            for i in range(4 if depth else 0):
                (d / f"d{i}").mkdir()
                grow(d / f"d{i}", depth - 1)

        (base / "tree").mkdir()
        grow(base / "tree", 6)
        tree = ToolContext(base / "tree")
        glob = lambda: run_tool(TOOLS_BY_NAME["glob"], {"pattern": "**/" * 12 + "*.py"}, tree)  # noqa: E731
        print(f"{'glob **/ x12 *.py over 5,461 directories':<48} {timed(glob):>8.3f}")
        for calls, results in ((100_000, False), (100_000, True), (200_000, True)):
            path = parallel_calls(base, calls, results)  # one response id over `calls` lines, then the results
            seconds, peak, _ = measure(COMMANDS["report --json"](path), runs)
            label = f"report --json, {calls:,} parallel calls" + (" + results" if results else "")
            print(f"{label:<48} {seconds:>8.2f}  ({path.stat().st_size / 1e6:.0f} MB, peak {peak:.0f} MB)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--part", choices=("files", "shapes", "all"), default="all")
    args = parser.parse_args()
    runs = args.runs
    if args.part in ("shapes", "all"):
        shapes(runs)
    if args.part == "shapes":
        return
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        inputs = {"baseline (3 lines)": truncated_last_line(base)}
        for name, case in CASES.items():
            if case.big:
                (base / name).mkdir()
                inputs[name] = case.build(base / name)
        print(f"{'input':<20} {'size MB':>8}  {'command':<15} {'median s':>8} {'peak MB':>8}  exit")
        for name, path in inputs.items():
            size = path.stat().st_size / 1e6
            for label, command in COMMANDS.items():
                seconds, peak, code = measure(command(path), runs)
                print(f"{name:<20} {size:>8.1f}  {label:<15} {seconds:>8.2f} {peak:>8.0f}  {code}")


if __name__ == "__main__":
    main()
