"""How long `context-inspector statusline` takes, as Claude Code runs it: a fresh process per call, the status-line
JSON on standard input, timed to the line's end (standard output closed: what the agent waits for) and to the
process's exit (after the cache is written).

On a ~3 MB session (the corpus's 2.7 MB Claude Code session) and a ~100 MB one (`generate_large_session.py`): the first call
(no cache: the file read whole), a call on the unchanged file (the cached figures), and calls after the session grew
by one turn (a user prompt, an assistant response with a tool call, its result: what happens between two
status-line runs), each the median of N. Targets (issue 18): under 100 ms for 3 MB and 200 ms for 100 MB after the
first call.

    python benchmarks/bench_statusline.py [--repeat 7] [--big PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus" / "claude-code-manual-compact.jsonl"
BIG = ROOT / "benchmarks" / "data" / "large-session.jsonl"


def program() -> list[str]:
    found = shutil.which("context-inspector")
    return [found] if found else [sys.executable, "-m", "inspector"]


def call(path: Path, env: dict) -> tuple[float, float, str]:
    """One run: seconds to the end of its output, seconds to its exit, the line."""
    stdin = json.dumps({"session_id": "bench", "transcript_path": str(path), "cwd": str(path.parent),
                        "model": {"id": "claude-opus-4-6", "display_name": "Opus 4.6"}})
    t0 = time.perf_counter()
    proc = subprocess.Popen([*program(), "statusline"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    proc.stdin.write(stdin.encode())
    proc.stdin.close()
    out = proc.stdout.read()  # until it closes standard output
    t1 = time.perf_counter()
    proc.wait()
    t2 = time.perf_counter()
    return t1 - t0, t2 - t0, out.decode().strip()


def turn(k: int, parent: str) -> tuple[list[str], str]:
    """One turn's lines as Claude Code writes them: a prompt, a tool call, its result, an answer (with usage)."""
    ids = [str(uuid.uuid4()) for _ in range(4)]
    base = {"isSidechain": False, "type": "user", "sessionId": "bench", "timestamp": "2026-12-01T10:00:00Z",
            "cwd": "/home/USER/projects/big", "version": "2.1.39"}
    usage = {"input_tokens": 3, "cache_creation_input_tokens": 500 + k, "cache_read_input_tokens": 60_000 + 40 * k,
             "output_tokens": 80}
    lines = [
        {**base, "parentUuid": parent, "uuid": ids[0], "message": {"role": "user", "content": f"step {k}: go on"}},
        {**base, "type": "assistant", "parentUuid": ids[0], "uuid": ids[1], "requestId": f"req_b{k}",
         "message": {"id": f"msg_b{k}", "model": "claude-opus-4-6", "role": "assistant", "usage": usage,
                     "content": [{"type": "tool_use", "id": f"toolu_b{k}", "name": "Read",
                                  "input": {"file_path": f"/src/m{k}.py"}}]}},
        {**base, "parentUuid": ids[1], "uuid": ids[2], "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"toolu_b{k}", "content": "def f():\n    return 1\n" * 40}]}},
        {**base, "type": "assistant", "parentUuid": ids[2], "uuid": ids[3], "requestId": f"req_c{k}",
         "message": {"id": f"msg_c{k}", "model": "claude-opus-4-6", "role": "assistant",
                     "usage": {**usage, "cache_read_input_tokens": usage["cache_read_input_tokens"] + 700},
                     "content": [{"type": "text", "text": f"Step {k} done."}]}},
    ]
    return [json.dumps(x) for x in lines], ids[3]


def last_uuid(path: Path) -> str:
    with open(path, "rb") as f:
        f.seek(max(0, path.stat().st_size - 2_000_000))
        tail = f.read().splitlines()
    for raw in reversed(tail):
        try:
            obj = json.loads(raw)
        except ValueError:
            continue
        if obj.get("type") in ("user", "assistant") and not obj.get("isSidechain"):
            return obj["uuid"]
    raise SystemExit(f"{path}: no message line near its end")


def measure(name: str, source: Path, repeat: int, work: Path) -> dict:
    live = work / f"{name}.jsonl"
    shutil.copy(source, live)
    env = {**os.environ, "CONTEXT_INSPECTOR_CACHE": str(work / f"cache-{name}")}
    first = call(live, env)
    cached = [call(live, env) for _ in range(repeat)]
    grown = []
    parent = last_uuid(live)
    for k in range(repeat):
        lines, parent = turn(k, parent)
        with open(live, "a") as f:
            f.write("\n".join(lines) + "\n")
        grown.append(call(live, env))
    fresh = call(live, {**env, "CONTEXT_INSPECTOR_CACHE": str(work / f"none-{name}")})
    assert grown[-1][2] == fresh[2], (grown[-1][2], fresh[2])  # the same line as a fresh read
    med = lambda xs, i: statistics.median(x[i] for x in xs) * 1000  # noqa: E731
    return {"session": name, "MB": round(live.stat().st_size / 1e6, 1), "first_ms": round(first[0] * 1000),
            "cached_ms": round(med(cached, 0)), "grown_line_ms": round(med(grown, 0)),
            "grown_exit_ms": round(med(grown, 1)), "line": grown[-1][2]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--big", type=Path, default=BIG)
    args = parser.parse_args()
    if not args.big.exists():
        raise SystemExit(f"{args.big}: run benchmarks/generate_large_session.py first")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        rows = [measure("3MB", CORPUS, args.repeat, work), measure("100MB", args.big, args.repeat, work)]
    print(f"{'session':>8} {'MB':>6} {'first':>7} {'cached':>7} {'grown: line':>12} {'exit':>6}  (ms, median of "
          f"{args.repeat})")
    for r in rows:
        print(f"{r['session']:>8} {r['MB']:>6} {r['first_ms']:>7} {r['cached_ms']:>7} {r['grown_line_ms']:>12} "
              f"{r['grown_exit_ms']:>6}")
    print("last line:", rows[-1]["line"])
    ok = rows[0]["grown_line_ms"] < 100 and rows[1]["grown_line_ms"] < 200
    print("targets (3 MB < 100 ms, 100 MB < 200 ms after the first call):", "met" if ok else "missed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
