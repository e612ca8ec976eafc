"""What Claude Code 2.1.332's request records cost on a long session: load time and peak RSS with the records and
without them (the same transcript, its api-request lines left out), then rebuilding the last request and working
out what every request changed.

The session is generated the way 2.1.332 writes one (tests/fixtures/agents/claude-code-2.1.332/read-file, turn after
turn): one api-request-shape, the first request's reminders as blobs, then per turn an assistant line calling a
tool, its result, and an api-request whose `base` is the previous request, `keep` every message it sent and `tail`
the two new ones (their hashes as Claude Code computes them). `--turns 50000` gives 100,000 messages.

    python benchmarks/bench_sent_requests.py [--turns 50000] [--repeat 3]

Each measurement runs in a fresh process (os.wait4 gives its peak RSS); the best of `--repeat` runs counts.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_load import best  # noqa: E402

from inspector.core.sent_requests import message_hash  # noqa: E402

FIXTURE = HERE.parent / "tests" / "fixtures" / "agents" / "claude-code-2.1.332" / "read-file"
LOAD = "import sys\nfrom inspector.core.formats import load\nload(sys.argv[1])\n"
REBUILD = ("import sys, time\nfrom inspector.core.formats import load\nfrom inspector.core.request_changes import "
           "all_changes\ns = load(sys.argv[1]); t = time.perf_counter(); b = s.sent.rebuild(s.sent.requests[-1])\n"
           "t1 = time.perf_counter(); c = all_changes(s.sent); t2 = time.perf_counter()\n"
           "assert b.complete and len(b.body['messages']) == s.sent.length(s.sent.requests[-1])\n"
           "print(f'{t1 - t:.3f} {t2 - t1:.3f} {len(b.body[\"messages\"])}')\n")


def generate(turns: int, out: Path, records: bool) -> None:
    """A session of `turns` tool turns after the fixture's first request, with or without its request records."""
    first = [json.loads(line) for line in next(FIXTURE.glob("home/.claude/projects/*/*.jsonl")).read_text()
             .splitlines()]
    head = first[:next(i for i, o in enumerate(first) if o["type"] == "assistant")]  # up to the first response
    request = next(o for o in head if o["type"] == "api-request")
    last_uuid = next(o["uuid"] for o in reversed(head) if "uuid" in o)
    keep = len(request["tail"])
    result = "1\t" + "x" * 1_000
    with open(out, "w") as f:
        for obj in head:
            if records or not obj["type"].startswith("api-request"):
                f.write(json.dumps(obj) + "\n")
        prev = request["id"]
        for n in range(turns):
            tool_id = f"toolu_{n:06d}"
            answer = {"role": "assistant", "content": [{"type": "tool_use", "id": tool_id, "name": "Read",
                                                        "input": {"file_path": f"/w/file{n}.txt"}}]}
            reply = {"role": "user", "content": [{"tool_use_id": tool_id, "type": "tool_result", "content": result}]}
            a_uuid, u_uuid, rid = f"a-{n}", f"u-{n}", f"req-{n}"
            f.write(json.dumps({"parentUuid": last_uuid, "isSidechain": False, "type": "assistant", "uuid": a_uuid,
                                "requestRef": prev, "timestamp": "2026-12-01T00:00:00Z", "sessionId": "s",
                                "message": {"id": f"msg_{n}", "type": "message", "model": "claude-opus-5-5",
                                            **answer, "usage": {"input_tokens": 3, "output_tokens": 30,
                                                                "cache_read_input_tokens": 10_000 + 300 * n,
                                                                "cache_creation_input_tokens": 300}}}) + "\n")
            f.write(json.dumps({"parentUuid": a_uuid, "isSidechain": False, "type": "user", "uuid": u_uuid,
                                "timestamp": "2026-12-01T00:00:00Z", "sessionId": "s", "message": reply}) + "\n")
            last_uuid = u_uuid
            if records:
                f.write(json.dumps({**request, "id": rid, "base": prev, "keep": keep,
                                    "tail": [message_hash(answer), message_hash(reply)],
                                    "cacheControl": [{"path": ["messages", keep + 1, "content", 0],
                                                      "value": {"type": "ephemeral"}}]}) + "\n")
            prev, keep = rid, keep + 2


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    data = HERE / "data"
    data.mkdir(exist_ok=True)
    paths = {True: data / f"recorded-{args.turns}.jsonl", False: data / f"unrecorded-{args.turns}.jsonl"}
    for records, path in paths.items():
        if not path.exists():
            started = time.perf_counter()
            generate(args.turns, path, records)
            print(f"generated {path.name} ({path.stat().st_size / 1e6:.1f} MB) in {time.perf_counter() - started:.1f} s")
    runs = best({"load, with records": [sys.executable, "-c", LOAD, str(paths[True])],
                 "load, without them": [sys.executable, "-c", LOAD, str(paths[False])]}, args.repeat)
    for name, (wall, cpu, rss) in runs.items():
        print(f"{name:<20} wall {wall:6.2f} s  cpu {cpu:6.2f} s  peak RSS {rss / 1e6:7.1f} MB")
    (w1, c1, r1), (w0, c0, r0) = runs["load, with records"], runs["load, without them"]
    print(f"records cost {c1 / c0:.2f}x the CPU time and {r1 / r0:.2f}x the peak RSS "
          f"({(r1 - r0) / 1e6:+.1f} MB) of the same transcript without them")
    import subprocess

    out = subprocess.run([sys.executable, "-c", REBUILD, str(paths[True])], capture_output=True, text=True, check=True)
    rebuild, changes, messages = out.stdout.split()
    print(f"rebuild the last request ({messages} messages; the first rebuild indexes the transcript): {rebuild} s; "
          f"what every one of the {args.turns + 1} requests changed: {changes} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
