"""Time and peak memory of `report` and the app on the big hostile inputs of the bad-input corpus.

The 50 MB single line (a tool result, and one that is not JSON at all) and JSON nested 100,000 deep, built by
tests/bad_inputs/build.py; each is run as a subprocess, its peak RSS taken from `os.wait4` (that child only).

    python benchmarks/hostile_inputs.py [--runs 3]

Prints one row per input and command: the median wall time and the largest peak RSS over the runs, next to the
baseline of the same command on a three-line session (the interpreter and imports alone).
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

from bad_inputs.build import CASES, truncated_last_line  # noqa: E402
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    runs = parser.parse_args().runs
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
