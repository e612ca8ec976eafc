"""Build a large Claude Code-format session for the load benchmark, by tiling the real corpus with fresh ids.

The result looks like a long real session: the corpus's mix (split responses, parallel tool calls, a compaction,
progress chains, file snapshots) repeated as one continuous uuid chain, extra hook/bash progress bursts (progress
lines are the bulk of real files), and a few multi-megabyte tool results (a `Read` of a huge file, with the
`toolUseResult` copy Claude Code writes beside it). Every uuid, message id and tool id is rewritten per tile so
merging by id and deduping by uuid see what they would in a real file.

    python benchmarks/generate_large_session.py [--size-mb 100] [--min-lines 100000] [--out PATH]

Writes benchmarks/data/large-session.jsonl by default (git-ignored) and prints its size and line count.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "tests" / "corpus" / "claude-code-manual-compact.jsonl"
DEFAULT_OUT = ROOT / "benchmarks" / "data" / "large-session.jsonl"
BIG_RESULTS_MB = (2, 3, 5)  # the multi-megabyte lines, spread over the file

UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
API_ID = re.compile(rb"\b(msg_|toolu_|req_)([A-Za-z0-9]{6,})")


def fresh_ids(line: bytes, tile: int) -> bytes:
    """The line with every uuid and API id made unique to this tile (same mapping for every line of the tile)."""
    tag = b"%04x" % tile
    line = UUID.sub(lambda m: m.group()[:24] + tag + m.group()[28:], line)
    return API_ID.sub(lambda m: m.group(1) + b"T" + tag + m.group(2), line)


def progress_line(uuid: str, parent: str, n: int) -> bytes:
    """A bash_progress entry like those Claude Code writes every second while a command runs."""
    return json.dumps({
        "parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": "/home/USER/projects/big",
        "sessionId": "bench-session", "version": "2.1.39", "gitBranch": "main", "type": "progress",
        "data": {"type": "bash_progress", "output": f"compiling module {n} of 4096\n" * (1 + n % 5),
                 "fullOutput": "", "elapsedTimeSeconds": n % 90, "totalLines": n % 400},
        "toolUseID": f"bash-progress-{n}", "parentToolUseID": "toolu_bench",
        "uuid": uuid, "timestamp": "2026-02-12T15:00:00.000Z"}, separators=(",", ":")).encode()


def big_result(tile: int, parent: str, mb: int) -> tuple[list[bytes], str]:
    """An assistant Read call and its multi-megabyte result (content twice: the tool_result and toolUseResult)."""
    use_id, a_uuid, u_uuid = f"toolu_big{tile:04d}", f"big-a-{tile:04d}", f"big-u-{tile:04d}"
    body = "".join(f"{i:>7}\u2192    line {i} of a very large generated file: some code = value_{i} * 2\n"
                   for i in range(mb * 1024 * 1024 // 80))
    usage = {"input_tokens": 3, "cache_creation_input_tokens": 900, "cache_read_input_tokens": 60000,
             "output_tokens": 40}
    assistant = {"parentUuid": parent, "isSidechain": False, "type": "assistant", "sessionId": "bench-session",
                 "uuid": a_uuid, "timestamp": "2026-02-12T15:00:01.000Z", "requestId": f"req_big{tile:04d}",
                 "message": {"id": f"msg_big{tile:04d}", "model": "claude-opus-4-6", "role": "assistant",
                             "content": [{"type": "tool_use", "id": use_id, "name": "Read",
                                          "input": {"file_path": "/home/USER/projects/big/huge.txt"}}],
                             "usage": usage}}
    user = {"parentUuid": a_uuid, "isSidechain": False, "type": "user", "sessionId": "bench-session",
            "uuid": u_uuid, "timestamp": "2026-02-12T15:00:02.000Z",
            "message": {"role": "user", "content": [{"tool_use_id": use_id, "type": "tool_result",
                                                     "content": body}]},
            "toolUseResult": {"type": "text", "file": {"filePath": "/home/USER/projects/big/huge.txt",
                                                      "content": body}}}
    return [json.dumps(o, separators=(",", ":")).encode() for o in (assistant, user)], u_uuid


def generate(out: Path, size_mb: float, min_lines: int) -> tuple[int, int]:
    corpus = SOURCE.read_bytes().splitlines()
    target = int(size_mb * 1e6)
    big_total = sum(BIG_RESULTS_MB) * 2 * 1024 * 1024
    per_tile = sum(len(x) + 1 for x in corpus)
    sample = "prog-0000-00000-000"
    avg_progress = sum(len(progress_line(sample, sample, n)) + 1 for n in range(100)) / 100
    for tiles in range(1, 10_000):  # fewest tiles whose corpus + progress bursts reach the size and line targets
        extra = max(0, -(-(min_lines - tiles * len(corpus) - 2 * len(BIG_RESULTS_MB)) // tiles))
        if tiles * (per_tile + extra * avg_progress) + big_total >= target:
            break
    big_at = {round(tiles * (i + 1) / (len(BIG_RESULTS_MB) + 1)): mb for i, mb in enumerate(BIG_RESULTS_MB)}
    out.parent.mkdir(parents=True, exist_ok=True)
    size = lines = 0
    last_uuid: str | None = None
    with open(out, "wb") as f:
        def write(line: bytes) -> None:
            nonlocal size, lines
            f.write(line + b"\n")
            size += len(line) + 1
            lines += 1

        tile = 0
        while tile < tiles:
            owed = 0
            for i, raw in enumerate(corpus):
                line = fresh_ids(raw, tile)
                if last_uuid and b'"parentUuid":null' in line and b"compact_boundary" not in line:
                    line = line.replace(b'"parentUuid":null', b'"parentUuid":"%s"' % last_uuid.encode(), 1)
                write(line)
                owed += (i + 1) * extra // len(corpus) - i * extra // len(corpus)
                uuid = re.search(rb'"uuid":"([^"]+)"', line)
                if owed and uuid:  # a side chain of progress hanging off this entry, as hooks and bash write
                    parent = uuid.group(1).decode()
                    for n in range(owed):
                        pid = f"prog-{tile:04d}-{i:05d}-{n:03d}"
                        write(progress_line(pid, parent, i + n))
                        parent = pid
                    owed = 0
            last = [re.search(rb'"uuid":"([^"]+)"', x) for x in corpus[-40:]]
            last_uuid = [m.group(1).decode() for m in last if m][-1]
            last_uuid = fresh_ids(last_uuid.encode(), tile).decode()
            if tile in big_at:
                pair, last_uuid = big_result(tile, last_uuid, big_at[tile])
                for line in pair:
                    write(line)
            tile += 1
    return size, lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mb", type=float, default=100)
    parser.add_argument("--min-lines", type=int, default=100_000)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    size, lines = generate(args.out, args.size_mb, args.min_lines)
    print(f"{args.out}: {size / 1e6:.1f} MB, {lines:,} lines")


if __name__ == "__main__":
    main()
