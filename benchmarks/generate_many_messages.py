"""Build a Claude Code-format session of N real messages (no progress lines): the shape where cost is per message.

`generate_large_session.py` makes 100 MB of which 87% of the lines are progress entries (about 9k messages); a long
agent session instead holds tens of thousands of small messages. Two shapes, both written with the sample
generator's writer (`tools/make_samples.py`: a parentUuid chain, usage on every response, a compaction whenever the
context passes 160k):

- `short` (issue 19): a prompt, then rounds of one tool call and its short result (one to four grep hits), one
  response per round, so N messages make N/2 requests; 100,000 messages are about 61 MB;
- `app` (bench_app.py's `app-100k.jsonl`): rounds of text + a tool call (one line per block, as Claude Code writes
  them) and a 60 to 3,000-character result; 100,000 messages are about 151 MB.

    python benchmarks/generate_many_messages.py [--messages 100000] [--shape short] [--out PATH]

Writes benchmarks/data/messages-100k.jsonl by default (git-ignored). Deterministic: the same arguments give the
same bytes.
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "benchmarks" / "data"
COMPACT_AT = 160_000
SUMMARY = ("This session is being continued from a previous conversation that ran out of context. "
           "Summary: backlog items done so far are recorded in NOTES.md.")


def _writer_module():
    spec = importlib.util.spec_from_file_location("make_samples", ROOT / "tools" / "make_samples.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def default_path(messages: int, shape: str = "short") -> Path:
    return DATA / f"{'messages' if shape == 'short' else 'app'}-{messages // 1000}k.jsonl"


def generate(path: Path, messages: int, shape: str = "short") -> None:
    """Write a session of `messages` messages in `shape` ("short" or "app") to `path`."""
    ms = _writer_module()
    rng = random.Random(7)
    w = ms.ClaudeCodeWriter(8, "/home/user/projects/big", "claude-sonnet-4-5-20250929", 18_000)
    w.prefix_after_compact = 18_000
    w.user("Work through the backlog.")
    count = 1
    while count < messages:
        if w.context > COMPACT_AT:
            w.compact(SUMMARY)
            count += 1
        tool = rng.choice(["Read", "Bash", "Grep"])
        if shape == "app":
            (tid,) = w.assistant([ms._text(f"Next: {ms._name(rng, 3).replace('_', ' ')}."),
                                  ms._tool(tool, command=ms._name(rng))])
            w.tool_result(tid, ms.grep_output(rng, max(1, rng.choice([60, 200, 800, 3000]) // 60)))
        else:
            (tid,) = w.assistant([ms._tool(tool, command=ms._name(rng))])
            w.tool_result(tid, ms.grep_output(rng, rng.randint(1, 4)))
        count += 2
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(w.dump(), encoding="utf-8")
    tmp.replace(path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--shape", choices=("short", "app"), default="short")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    out = args.out or default_path(args.messages, args.shape)
    generate(out, args.messages, args.shape)
    with open(out, "rb") as f:
        lines = sum(1 for _ in f)
    print(f"{out}: {out.stat().st_size / 1e6:.1f} MB, {lines:,} lines, {args.messages:,} messages ({args.shape})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
