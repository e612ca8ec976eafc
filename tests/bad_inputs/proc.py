"""Run the CLI (or any Python script) as a subprocess with a hard timeout, and measure that child's peak memory.

`resource.getrusage(RUSAGE_CHILDREN)` is the maximum over every child ever waited for, so one greedy test would
taint the figures of all later ones: `os.wait4` gives the rusage of exactly the child we started.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str
    peak_mb: float
    timed_out: bool


def run(args: list[str], timeout: float = 60, *, env: dict[str, str] | None = None) -> Result:
    """Run `args` to completion (killed after `timeout` s); output captured through files, not pipes, so a child
    printing a lot cannot block on a full pipe while we wait."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(args, stdout=out, stderr=err, stdin=subprocess.DEVNULL, cwd=ROOT, env=env)
        fired = threading.Event()

        def kill() -> None:
            fired.set()
            proc.kill()

        killer = threading.Timer(timeout, kill)
        killer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            killer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: stop Popen from waiting again
        out.seek(0)
        err.seek(0)
        return Result(proc.returncode, out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace"),
                      usage.ru_maxrss / 1024, fired.is_set())


def cli(*args: str, timeout: float = 60, env: dict[str, str] | None = None) -> Result:
    """`context-inspector ARGS...` through the console entry point's module."""
    return run([sys.executable, "-m", "inspector", *args], timeout, env=env)
