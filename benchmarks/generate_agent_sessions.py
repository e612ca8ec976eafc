"""Long sessions of the other agents, made by repeating what the real program wrote: a lab recording with a
compaction in it (Codex's and Kimi Code's `compaction`, Gemini CLI's `compression` scenario) is tiled.

    python benchmarks/generate_agent_sessions.py FORMAT --messages N [--out PATH]

FORMAT: codex, gemini or kimi-code. The recording's body (from its first turn on) is written again and again after
its header: each copy holds turns, a compaction and more turns, so the context stays within the window as a long
session's does (a window per copy), and every record is one the program writes. In each copy every id the
recording holds (any string value of an id field, wherever it recurs: a call and its output, a history that a
compaction rewrites) gets the copy's suffix, and times move on by the recording's length, so copies never collide.
Written into benchmarks/data/agents/ by default (git-ignored).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
AGENTS = HERE.parent / "tests" / "fixtures" / "agents"
DATA = HERE / "data" / "agents"


@dataclass(frozen=True)
class Recording:
    fixture: str  # the session file, a glob under tests/fixtures/agents
    body: str  # the record type (or payload type) that opens the first turn: the body is tiled from there
    name: str  # the generated file's name pattern (Kimi Code finds a session by its file name)


RECORDINGS = {
    "codex": Recording("codex-0.171.0/auto-compact/home/.codex/sessions/*/*/*/rollout-*.jsonl", "task_started",
                       "rollout-{n}.jsonl"),
    "gemini": Recording("gemini-0.61.0/compression/home/.gemini/tmp/*/chats/session-*.jsonl", "user",
                        "session-{n}.jsonl"),
    "kimi-code": Recording("kimi-code-2.1.0/compaction/store/sessions/*/*/agents/main/wire.jsonl", "turn.prompt",
                           "{n}/wire.jsonl"),
}
_ID_KEY = re.compile(r"(?:^|_)(?:id|uuid)$|(?:Id|Uuid)$", re.I)
_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z$")
_EPOCH_MS = ("time", "created_at", "createdAt", "startedAt", "finishedAt")


def recording(fmt: str) -> Path:
    return next(AGENTS.glob(RECORDINGS[fmt].fixture))


def _kind(obj: dict) -> str | None:
    payload = obj.get("payload")
    return payload.get("type") if isinstance(payload, dict) and obj.get("type") == "event_msg" else obj.get("type")


def _ids(value, out: set[str]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, str) and _ID_KEY.search(key) and len(item) > 3:
                out.add(item)
            _ids(item, out)
    elif isinstance(value, list):
        for item in value:
            _ids(item, out)


def _shift(value, ids: set[str], suffix: str, by: timedelta, key: str = ""):
    """`value` with its ids suffixed and its times moved on by `by`."""
    if isinstance(value, dict):
        return {k: _shift(v, ids, suffix, by, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_shift(v, ids, suffix, by) for v in value]
    if isinstance(value, str):
        if value in ids:
            return value + suffix
        if _TIME.match(value):
            moved = datetime.fromisoformat(value.replace("Z", "+00:00")) + by
            return moved.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        return value
    if key in _EPOCH_MS and isinstance(value, int) and value > 10**12:
        return value + int(by.total_seconds() * 1000)
    return value


def generate(fmt: str, copies: int, out: Path) -> Path:
    lines = recording(fmt).read_bytes().splitlines()
    objs = [json.loads(line) for line in lines]
    start = next(i for i, o in enumerate(objs) if _kind(o) == RECORDINGS[fmt].body)
    ids: set[str] = set()
    for o in objs[start:]:
        _ids(o, ids)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(b"\n".join(lines[:start]) + b"\n")
        for k in range(copies):
            by = timedelta(minutes=10 * k)
            for o in objs[start:]:
                f.write((json.dumps(_shift(o, ids, f"-{k}", by) if k else o, separators=(",", ":"))
                         + "\n").encode())
    tmp.replace(out)
    return out


def messages_per_copy(fmt: str) -> tuple[int, int]:
    """(messages of the header and one copy, messages each further copy adds), from two small files."""
    from inspector.core.formats import load
    counts = []
    for copies in (1, 2):
        path = DATA / f"probe-{fmt}-{copies}" / RECORDINGS[fmt].name.format(n="probe")
        counts.append(len(load(generate(fmt, copies, path)).messages))
    return counts[0], counts[1] - counts[0]


def session_for(fmt: str, messages: int) -> Path:
    """A session of `fmt` with about `messages` messages (made once, then reused)."""
    path = DATA / f"{fmt}-{messages}" / RECORDINGS[fmt].name.format(n=f"{fmt}-{messages}")
    if not path.exists():
        first, each = messages_per_copy(fmt)
        print(f"generating {path} ...", file=sys.stderr)
        generate(fmt, max(1, 1 + round((messages - first) / each)), path)
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("format", choices=sorted(RECORDINGS))
    parser.add_argument("--messages", type=int, default=30_000)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    if args.out is None:
        print(session_for(args.format, args.messages))
        return 0
    first, each = messages_per_copy(args.format)
    print(generate(args.format, max(1, 1 + round((args.messages - first) / each)), args.out))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parent))
    raise SystemExit(main())
