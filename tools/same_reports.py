"""Whether a change leaves `report --json` as it was: the report of every session under tests/, sessions/, the
shared corpus and benchmarks/data/ from this tree and from another (`--base DIR`, a tree holding the `inspector`
package: `git worktree add DIR REV`), compared byte for byte (the trees' own paths aside). For refactors that must
not move a figure (issue 19's speed work); exit status 1 when a report differs.

    python tools/same_reports.py --base DIR [--jobs N] [PATH ...]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = [ROOT / "tests", ROOT / "sessions", ROOT.parent / "shared" / "corpus", ROOT / "benchmarks" / "data"]


def sessions() -> list[Path]:
    found = [p for folder in FOLDERS if folder.is_dir() for p in sorted(folder.rglob("*"))
             if p.suffix in (".jsonl", ".json", ".db") and p.is_file()]
    return sorted(set(found))


def report(tree: Path, path: Path) -> bytes:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, "-P", "-m", "inspector", "report", str(path), "--json"], env=env,
                          capture_output=True, timeout=600)
    out = done.stdout + b"\n--stderr--\n" + done.stderr + f"\n--exit {done.returncode}--".encode()
    return out.replace(str(tree / "inspector").encode(), b"<TREE>/inspector")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", type=Path, required=True)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("paths", nargs="*", type=Path)
    args = parser.parse_args()
    paths = args.paths or sessions()
    base = args.base.resolve()

    def compare(path: Path) -> tuple[Path, bool]:
        return path, report(base, path) == report(ROOT, path)

    differ = 0
    with ThreadPoolExecutor(args.jobs) as pool:
        for path, same in pool.map(compare, paths):
            if not same:
                differ += 1
                print(f"DIFFERS: {path}")
    print(f"{len(paths) - differ} of {len(paths)} reports the same")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
