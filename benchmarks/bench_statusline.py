"""How long `context-inspector statusline` takes, as Claude Code runs it: a fresh process per call, the status-line
JSON on standard input, timed to the line's end (standard output closed: what the agent waits for) and to the
process's exit (after the cache is written).

On a ~3 MB session (the corpus's 2.7 MB Claude Code session) and a ~100 MB one (`generate_large_session.py`): the first call
(no cache: the file read whole), a call on the unchanged file (the cached figures), and calls after the session grew
by one turn (a user prompt, an assistant response with a tool call, its result: what happens between two
status-line runs), each the median of N. Targets (issue 18): under 100 ms for 3 MB and 200 ms for 100 MB after the
first call.

    python benchmarks/bench_statusline.py [--repeat 7] [--big PATH] [--breakdown] [--baseline PROGRAM]

`--baseline PROGRAM` (another install's context-inspector, e.g. main's) times only calls after a turn, its and
this install's interleaved, for a ratio that holds while the machine's load moves.
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


def call(path: Path, env: dict, command: list[str] | None = None) -> tuple[float, float, float, str]:
    """One run (of `command`, else this install's program): seconds to the end of its output, seconds to its exit,
    its CPU seconds (user + system: what other work on a shared machine disturbs far less than wall time), the
    line."""
    stdin = json.dumps({"session_id": "bench", "transcript_path": str(path), "cwd": str(path.parent),
                        "model": {"id": "claude-opus-4-6", "display_name": "Opus 4.6"}})
    t0 = time.perf_counter()
    proc = subprocess.Popen([*(command or program()), "statusline"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    proc.stdin.write(stdin.encode())
    proc.stdin.close()
    out = proc.stdout.read()  # until it closes standard output
    t1 = time.perf_counter()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
    t2 = time.perf_counter()
    return t1 - t0, t2 - t0, usage.ru_utime + usage.ru_stime, out.decode().strip()


def bytecode_env(work: Path) -> dict:
    """The environment of an installed program: its modules' bytecode compiled once and kept (pip compiles it when
    it installs), not compiled again by every process as PYTHONDONTWRITEBYTECODE would have it (~60 ms a call)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    return env


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


STAGES = r"""
import gc, json, sys, time
gc.disable()  # as the command runs
clock, marks = time.process_time, {}
t = clock()
import inspector.cli, inspector.commands.statusline
from inspector.core import statusline as sl
marks["imports: the cli and the command (the cached answer's)"] = clock() - t
t = clock()
import inspector.core.follower, inspector.core.tokens, inspector.core.window, inspector.core.cost
import inspector.core.limits, inspector.core.prompt_cache, pickle
marks["imports: what a resumed answer adds"] = clock() - t
from pathlib import Path
settings = sl.Settings()
cache = sl.Cache(sl.cache_dir(), Path(sys.argv[1]).resolve(), settings)
stamp = cache.stamp()
gc.enable()
t = clock()
cache.state()
marks["(unpickled with the cyclic GC on, as before)"] = clock() - t
gc.disable()
t = clock()
state = cache.state()
marks["resume state: read and unpickled"] = clock() - t
t = clock()
before, follower, accounting, how, _ = sl._resumed(state, settings)
marks[f"follower update + account_appended ({how})"] = clock() - t
t = clock()
figures = sl.figures_of(follower.session, accounting, settings, before=before)
marks["figures (window, cost, cache)"] = clock() - t
t = clock()
cache.save(stamp, figures, (before, follower, accounting))
marks["after the line: the state written"] = clock() - t
print(json.dumps(marks))
"""


def breakdown(name: str, work: Path, k: int) -> dict[str, float]:
    """CPU seconds of each stage of a call after one more turn (in a fresh process, from where `measure` left the
    cache), and the interpreter's own start-up (`python -c pass`)."""
    live = work / f"{name}.jsonl"
    lines, _ = turn(k, last_uuid(live))
    with open(live, "a") as f:
        f.write("\n".join(lines) + "\n")
    env = {**bytecode_env(work), "CONTEXT_INSPECTOR_CACHE": str(work / f"cache-{name}")}
    proc = subprocess.Popen([sys.executable, "-c", "pass"], env=env)
    _, _, usage = os.wait4(proc.pid, 0)
    proc.returncode = 0
    done = subprocess.run([sys.executable, "-c", STAGES, str(live)], env=env, capture_output=True, text=True,
                          check=True)
    return {"Python start-up": usage.ru_utime + usage.ru_stime, **json.loads(done.stdout)}


def measure(name: str, source: Path, repeat: int, work: Path) -> dict:
    live = work / f"{name}.jsonl"
    shutil.copy(source, live)
    env = {**bytecode_env(work), "CONTEXT_INSPECTOR_CACHE": str(work / f"cache-{name}")}
    call(live, {**env, "CONTEXT_INSPECTOR_CACHE": str(work / f"warm-{name}")})  # the bytecode written
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
    assert grown[-1][3] == fresh[3], (grown[-1][3], fresh[3])  # the same line as a fresh read
    med = lambda xs, i: round(statistics.median(x[i] for x in xs) * 1000)  # noqa: E731
    return {"session": name, "MB": round(live.stat().st_size / 1e6, 1), "first_ms": round(first[0] * 1000),
            "cached_ms": med(cached, 0), "cached_cpu_ms": med(cached, 2), "grown_line_ms": med(grown, 0),
            "grown_exit_ms": med(grown, 1), "grown_cpu_ms": med(grown, 2), "line": grown[-1][3]}


def against(name: str, source: Path, repeat: int, work: Path, baseline: list[str]) -> dict:
    """Calls after a turn by `baseline` (another install's program) and by this one, interleaved (the order
    alternating) on two copies of the session growing alike: their ratio holds on a machine whose load moves."""
    runs: dict[str, list] = {"baseline": [], "this": []}
    commands = {"baseline": baseline, "this": program()}
    parents = {}
    for who, command in commands.items():
        live = work / f"{name}-{who}.jsonl"
        shutil.copy(source, live)
        env = {**bytecode_env(work / who), "CONTEXT_INSPECTOR_CACHE": str(work / f"cache-{name}-{who}")}
        call(live, {**env, "CONTEXT_INSPECTOR_CACHE": str(work / f"warm-{name}-{who}")}, command)
        call(live, env, command)  # the first call: the cache written
        parents[who] = last_uuid(live)
    for k in range(repeat):
        for who in (("baseline", "this") if k % 2 == 0 else ("this", "baseline")):
            live = work / f"{name}-{who}.jsonl"
            lines, parents[who] = turn(k, parents[who])
            with open(live, "a") as f:
                f.write("\n".join(lines) + "\n")
            env = {**bytecode_env(work / who), "CONTEXT_INSPECTOR_CACHE": str(work / f"cache-{name}-{who}")}
            runs[who].append(call(live, env, commands[who]))
    assert runs["baseline"][-1][3] == runs["this"][-1][3], (runs["baseline"][-1][3], runs["this"][-1][3])
    med = lambda xs, i: round(statistics.median(x[i] for x in xs) * 1000)  # noqa: E731
    return {who: (med(r, 0), med(r, 2)) for who, r in runs.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--big", type=Path, default=BIG)
    parser.add_argument("--baseline", metavar="PROGRAM", default=None,
                        help="another install's context-inspector: its calls after a turn and this one's, "
                             "interleaved")
    parser.add_argument("--breakdown", action="store_true", help="also the CPU time of each stage of a call "
                                                                 "after a turn (best of 3)")
    args = parser.parse_args()
    if not args.big.exists():
        raise SystemExit(f"{args.big}: run benchmarks/generate_large_session.py first")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if args.baseline:
            print(f"after a turn, line ms / CPU ms, median of {args.repeat}, interleaved:")
            for name, source in (("3MB", CORPUS), ("100MB", args.big)):
                ab = against(name, source, args.repeat, work, [args.baseline])
                print(f"{name:>8}  baseline {ab['baseline'][0]} / {ab['baseline'][1]}  this {ab['this'][0]} / "
                      f"{ab['this'][1]}  ratio (line) {ab['this'][0] / ab['baseline'][0]:.2f}")
            print(f"load average {os.getloadavg()[0]:.1f}")
            return 0
        rows = [measure("3MB", CORPUS, args.repeat, work), measure("100MB", args.big, args.repeat, work)]
        stages = {r["session"]: [breakdown(r["session"], work, 100 + k) for k in range(3)] for r in rows} \
            if args.breakdown else {}
    print(f"{'session':>8} {'MB':>6} {'first':>7} {'cached':>7} {'CPU':>5} {'grown: line':>12} {'exit':>6} {'CPU':>5}"
          f"  (ms, median of {args.repeat}; CPU: the whole process, cache write included)")
    for r in rows:
        print(f"{r['session']:>8} {r['MB']:>6} {r['first_ms']:>7} {r['cached_ms']:>7} {r['cached_cpu_ms']:>5} "
              f"{r['grown_line_ms']:>12} {r['grown_exit_ms']:>6} {r['grown_cpu_ms']:>5}")
    if stages:
        print(f"\n{'CPU ms of a call after a turn, best of 3':<58} {'3MB':>6} {'100MB':>6}")
        for stage in stages["3MB"][0]:
            print(f"{stage:<58} " + " ".join(f"{min(b[stage] for b in stages[n]) * 1000:>6.1f}" for n in stages))
    print(f"load average {os.getloadavg()[0]:.1f}")
    print("last line:", rows[-1]["line"])
    ok = rows[0]["grown_line_ms"] < 100 and rows[1]["grown_line_ms"] < 200
    print("targets (3 MB < 100 ms, 100 MB < 200 ms after the first call):", "met" if ok else "missed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
