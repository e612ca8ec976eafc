"""Planning speed of every compaction strategy on a 100,000-message context (target: under 200 ms).

Builds the session in memory by tiling the real corpus session's messages (tool ids and response ids made unique
per tile, no compaction in between, so all 100k messages are the current context: the worst case), then times
`plan_strategy` for each strategy, median of --runs:

- warm: the per-message estimates are already cached (`Estimates`), as in the app and the agent loop, which keep one
  cache per session and re-plan as settings change;
- cold: a fresh cache, so the time includes estimating every message once.

    /work/venv/bin/python benchmarks/bench_compaction.py [--messages N] [--runs N] [--estimator NAME]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

from inspector.core.compaction import STRATEGIES, ContextEditSettings, Estimates, plan_strategy
from inspector.core.formats import load
from inspector.core.model import Block, Message, Session

CORPUS_FILE = Path(__file__).resolve().parent.parent / "tests" / "corpus" / "claude-code-manual-compact.jsonl"
TARGET_MS = 200


def _block(b: Block, k: int) -> Block:
    return replace(b, tool_id=f"{b.tool_id}-{k}") if b.tool_id else b


def build(n: int) -> Session:
    base = load(CORPUS_FILE)
    messages: list[Message] = []
    k = 0
    while len(messages) < n:
        for m in base.messages:
            messages.append(replace(m, blocks=[_block(b, k) for b in m.blocks], uuid=None,
                                    response_id=f"{m.response_id}-{k}" if m.response_id else None))
        k += 1
    return base.copy_with(messages=messages[:n], requests=[], compactions=[])


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--estimator", default="chars35")
    args = parser.parse_args(argv)
    session = build(args.messages)
    chars = sum(len(m.text()) for m in session.messages)
    print(f"session: {len(session.messages):,} messages, {chars / 1e6:,.0f} M characters, estimator {args.estimator}")
    warm = Estimates(args.estimator)
    fill = timed(lambda: warm.total(session.messages))
    print(f"estimating every message once: {fill:,.0f} ms")
    settings = {"clear_tool_uses": ContextEditSettings(trigger=0)}  # always acts (the default trigger may not)
    worst = 0.0
    print(f"{'strategy':<16} {'warm ms':>8} {'cold ms':>8}  result")
    for strategy in STRATEGIES:
        s = settings.get(strategy)
        warm_ms = statistics.median(timed(lambda: plan_strategy(strategy, session, s, warm)) for _ in range(args.runs))
        cold_ms = statistics.median(timed(lambda: plan_strategy(strategy, session, s, Estimates(args.estimator)))
                                    for _ in range(args.runs))
        plan = plan_strategy(strategy, session, s, warm)
        worst = max(worst, warm_ms)
        print(f"{strategy:<16} {warm_ms:>8.0f} {cold_ms:>8.0f}  {plan.before:,} -> {plan.after:,} tokens, "
              f"{sum(1 for r in plan.rows if r.fate != 'kept'):,} rows changed")
    verdict = "PASS" if worst < TARGET_MS else "FAIL"
    print(f"slowest warm plan: {worst:.0f} ms (target < {TARGET_MS} ms): {verdict}")
    return 0 if worst < TARGET_MS else 1


if __name__ == "__main__":
    sys.exit(main())
