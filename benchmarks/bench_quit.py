"""How long `q` takes to end the app while a 100,000-message session's figures are still being computed.

    python benchmarks/bench_quit.py [--delay 2 4 6] [--size 160x48] [--root DIR]

Runs the real command (`python -m inspector FILE`) on a pseudo-terminal, as a user would, on bench_app.py's
app-100k.jsonl (generated on first use), presses `q` after each delay (seconds after start: reading the file,
computing its figures, done) and prints the time from the key to the process's end. `--root` runs another
checkout's code with this interpreter (e.g. the main branch before the change) to compare.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import struct
import sys
import termios
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "benchmarks" / "data" / "app-100k.jsonl"


def quit_after(root: Path, path: Path, delay: float, cols: int, rows: int) -> float:
    """Seconds from pressing q, `delay` seconds after the app started, to the process's exit."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: the app on the pseudo-terminal
        os.chdir(root)
        os.environ["PYTHONPATH"] = str(root)
        os.execv(sys.executable, [sys.executable, "-m", "inspector", str(path)])
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))

    def drain() -> None:  # the app's output must be read, or it blocks writing the screen
        try:
            while os.read(fd, 65536):
                pass
        except OSError:
            pass

    threading.Thread(target=drain, daemon=True).start()
    time.sleep(delay)
    start = time.perf_counter()
    os.write(fd, b"q")
    os.waitpid(pid, 0)
    took = time.perf_counter() - start
    os.close(fd)
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--delay", type=float, nargs="+", default=[2.0, 4.0, 6.0])
    parser.add_argument("--size", default="160x48")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose code runs (default: this one)")
    parser.add_argument("--file", type=Path, default=DATA)
    args = parser.parse_args()
    if not args.file.exists():
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from bench_app import generate

        args.file.parent.mkdir(parents=True, exist_ok=True)
        generate(args.file, 100_000)
    cols, rows = (int(n) for n in args.size.split("x"))
    print(f"{args.file.name}, code from {args.root}")
    for delay in args.delay:
        print(f"q at {delay:.1f} s: the process ended {quit_after(args.root.resolve(), args.file, delay, cols, rows):.2f}"
              " s later")


if __name__ == "__main__":
    main()
