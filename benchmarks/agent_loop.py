"""What the agent loop itself costs per model call, with the network taken out.

The real SDK talks to the local Messages-API test server (tests/mock_api), which answers at once, so the time per
iteration is the loop's own work (compaction check with token accounting, request building, SDK parsing, tools,
events) plus a local HTTP round trip. Measured on an empty session, on the current context of the largest corpus
session (178 messages after its compaction, 61k tokens), and continuing a long agent session (N messages compacted
every 600, bench_agent_view's generator) as `context-inspector run --session FILE` does, with the compaction figure
taken from the current window (`context_figure`) and, for comparison, from accounting for the whole history (what
the loop did before). Compaction is checked at every iteration (threshold above the context: nothing fires). The
first call includes the SDK's connection setup: hence the median. Also the streaming rate: characters of text
delivered as TextDelta events per second.

    /work/venv/bin/python benchmarks/agent_loop.py [--iterations N] [--messages N]
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

from bench_agent_view import generate  # noqa: E402
from mock_api import MOCK_KEY, MockAnthropicServer, responses as r  # noqa: E402

from inspector.core.agent import AgentConfig, run  # noqa: E402
from inspector.core.agent.config import compaction_policy, context_figure  # noqa: E402
from inspector.core.agent.events import TextDelta  # noqa: E402
from inspector.core.agent.provider import AnthropicProvider  # noqa: E402
from inspector.core.formats import load  # noqa: E402
from inspector.core.model import Session  # noqa: E402
from inspector.core.tokens import account  # noqa: E402

CORPUS_FILE = ROOT / "tests" / "corpus" / "claude-code-manual-compact.jsonl"


def whole_history(session: Session) -> int:
    """The compaction figure from accounting for the whole history (the loop's measure before context_figure)."""
    return account(session).current_context


def per_iteration(server: MockAnthropicServer, cwd: Path, state, iterations: int,
                  measure=context_figure) -> list[float]:
    """Seconds per model call over one turn of `iterations` calls (each but the last calls glob)."""
    config = AgentConfig(AnthropicProvider(MOCK_KEY, server.url), cwd,
                         compaction=compaction_policy("claude-sonnet-4-6", threshold=10_000_000))
    config.compactor.measure = measure
    server.add(*[r.tool_calls(("glob", {"pattern": "*.txt"}), input_tokens=1000) for _ in range(iterations - 1)],
               r.text("done", input_tokens=1000))
    times, last = [], time.perf_counter()
    for event in run("go", state, config, "system"):
        if type(event).__name__ == "Usage":
            now = time.perf_counter()
            times.append(now - last)
            last = now
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--messages", type=int, default=10_000, help="messages in the long session")
    args = parser.parse_args()
    with MockAnthropicServer() as server, tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        (cwd / "a.txt").write_text("x\n")
        base = AgentConfig(AnthropicProvider(MOCK_KEY, server.url), cwd)
        big = load(CORPUS_FILE)
        big = big.copy_with(messages=big.messages[big.context_start:], requests=[], compactions=[])
        t = time.perf_counter()
        figure = context_figure(big)
        figure_ms = (time.perf_counter() - t) * 1000
        print(f"context_figure on {len(big.messages)} messages ({figure:,} tokens): {figure_ms:.1f} ms")
        for name, state in (("empty session", base.new_session("system")), (f"{len(big.messages)} messages", big)):
            times = per_iteration(server, cwd, state, args.iterations)
            print(f"{name:>14}: median {statistics.median(times) * 1000:6.1f} ms per model call, "
                  f"max {max(times) * 1000:6.1f} ms ({len(times)} calls)")
        generate(cwd / "long.jsonl", args.messages)
        for name, measure in (("window", context_figure), ("whole history", whole_history)):
            long = load(cwd / "long.jsonl")  # as `run --session` continues it
            t = time.perf_counter()
            figure = measure(long)
            figure_ms = (time.perf_counter() - t) * 1000
            times = per_iteration(server, cwd, long, args.iterations, measure)
            print(f"{len(long.messages):,} messages, figure from the {name} ({figure:,} tokens, {figure_ms:.1f} ms): "
                  f"median {statistics.median(times) * 1000:6.1f} ms per model call, "
                  f"max {max(times) * 1000:6.1f} ms ({len(times)} calls)")
        text = "streamed text " * 20_000  # 280,000 characters in 16-character deltas
        server.add(r.text(text))
        t = time.perf_counter()
        got = sum(len(e.text) for e in run("stream", base.new_session("s"), base, "s") if isinstance(e, TextDelta))
        rate = got / (time.perf_counter() - t)
        print(f"streaming: {got:,} characters at {rate:,.0f} characters/s through SDK and loop")
    return 0


if __name__ == "__main__":
    sys.exit(main())
