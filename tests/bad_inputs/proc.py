"""Run the CLI (or any Python script) as a subprocess with a hard timeout, and measure that child's peak memory.

Peak RSS is a per-process figure that is easy to get wrong: `getrusage(RUSAGE_CHILDREN)` is the maximum over every
child ever waited for, and a child's `ru_maxrss` starts from the image it was forked from (the test process, with
its big inputs and Textual loaded) and survives `exec`. So the command runs under a small launcher, a fresh Python
that forks it and reports `os.wait4`'s figure for exactly that grandchild: at most a few MB of launcher count too.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

LAUNCHER = """
import os, signal, sys
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as f:
    f.write(str(usage.ru_maxrss))
code = os.waitstatus_to_exitcode(status)
if code < 0:
    signal.signal(-code, signal.SIG_DFL)
    os.kill(os.getpid(), -code)
sys.exit(code)
"""


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str
    peak_mb: float  # 0 unless measured, or when the command was killed by the timeout
    timed_out: bool


def run(args: list[str], timeout: float = 60, *, env: dict[str, str] | None = None, measure: bool = False) -> Result:
    """Run `args` to completion (its whole process group killed after `timeout` s); output captured through
    files, not pipes, so a child printing a lot cannot block on a full pipe while we wait. `measure` runs it under
    the launcher for its peak memory (one more interpreter start)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        command = [sys.executable, "-c", LAUNCHER, rss.name, *args] if measure else args
        proc = subprocess.Popen(command, stdout=out, stderr=err,
                                stdin=subprocess.DEVNULL, cwd=ROOT, env=env, start_new_session=True)
        fired = threading.Event()

        def kill() -> None:
            fired.set()
            os.killpg(proc.pid, signal.SIGKILL)

        killer = threading.Timer(timeout, kill)
        killer.start()
        try:
            proc.wait()
        finally:
            killer.cancel()
        out.seek(0)
        err.seek(0)
        kb = rss.read().strip()
        return Result(proc.returncode, out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace"),
                      int(kb) / 1024 if kb else 0.0, fired.is_set())


def cli(*args: str, timeout: float = 60, env: dict[str, str] | None = None, measure: bool = False) -> Result:
    """`context-inspector ARGS...` through the console entry point's module."""
    return run([sys.executable, "-m", "inspector", *args], timeout, env=env, measure=measure)
