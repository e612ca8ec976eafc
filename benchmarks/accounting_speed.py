"""How much token accounting adds to loading a large session (target: under 1 s for a 100 MB session).

With a path, loads it and times `account` on it. Without, builds the equivalent of a ~100 MB Claude Code file by
tiling the largest corpus session in memory (its 2.7 MB of lines hold 466 messages and 217 requests; 37 tiles ~ 100
MB of file) with a compaction between tiles, as benchmarks/generate_large_session.py does on disk.

    /work/venv/bin/python benchmarks/accounting_speed.py [PATH] [--estimator NAME]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

from inspector.core.formats import load
from inspector.core.model import Compaction, Session
from inspector.core.tokens import account

CORPUS_FILE = Path(__file__).resolve().parent.parent / "tests" / "corpus" / "claude-code-manual-compact.jsonl"
TARGET_BYTES = 100 * 1024 * 1024


def tiled(base: Session, copies: int) -> Session:
    messages, requests, compactions = [], [], []
    for k in range(copies):
        offset = len(messages)
        messages += [replace(m, blocks=list(m.blocks)) for m in base.messages]
        requests += [replace(r, id=f"{r.id}-{k}", message_index=r.message_index + offset,
                             seen_start=r.seen_start + offset, seen_end=r.seen_end + offset) for r in base.requests]
        compactions += [replace(c, index=c.index + offset) for c in base.compactions]
        if k:
            compactions.append(Compaction("compact", offset))
    return base.copy_with(messages=messages, requests=requests, compactions=compactions)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?")
    parser.add_argument("--estimator", default=None)
    args = parser.parse_args(argv)
    if args.path:
        t = time.perf_counter()
        session = load(args.path)
        load_s = time.perf_counter() - t
        size = os.path.getsize(args.path)
        print(f"loaded {args.path} ({size / 1e6:.0f} MB) in {load_s:.2f} s")
    else:
        copies = max(1, round(TARGET_BYTES / os.path.getsize(CORPUS_FILE)))
        session = tiled(load(str(CORPUS_FILE)), copies)
        print(f"{copies} tiles of {CORPUS_FILE.name} (~{copies * os.path.getsize(CORPUS_FILE) / 1e6:.0f} MB of file)")
    print(f"{len(session.messages):,} messages, {len(session.requests):,} requests")
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        acc = account(session, args.estimator)
        best = min(best, time.perf_counter() - t)
    print(f"account ({acc.estimator}): {best:.3f} s (best of 3)  target < 1 s: {'ok' if best < 1 else 'MISSED'}")
    return 0 if best < 1 else 1


if __name__ == "__main__":
    sys.exit(main())
