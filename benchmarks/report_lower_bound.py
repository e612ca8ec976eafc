"""A lower bound for `report --json` in pure Python: the least a report of a Claude Code session's messages can do.

Issue 19 asks `report --json` to take at most 5x the orjson floor. This script does only what any such report must:
parse every line (orjson), take each message's uuid, timestamp and first block, count that block's characters and
punctuation (the estimate's features), estimate with fixed ratios, spread each response's measured growth over the
messages since the one before in proportion to their estimates, and write a row per message and per request
(orjson). It resolves no branch, fits no ratios, builds no message objects and prices nothing: what `report` does
beyond it is the product. `bench_messages.py` runs it beside `report --json`, so the ratio of the two is from one
run.

    python benchmarks/report_lower_bound.py PATH > /dev/null
"""

from __future__ import annotations

import sys

import orjson

_PUNCT = bytes(c for c in range(33, 127) if not chr(c).isalnum())
_NOT_PUNCT = bytes(c for c in range(256) if c not in _PUNCT)
PROSE, CODE, STRUCTURE = 0.25, 0.33, 4.0  # tokens a character of prose and of code, and a message's markers
CHUNK = 500


def main(path: str) -> None:
    uuids: list[str] = []
    stamps: list[str] = []
    kinds: list[str] = []
    estimates: list[float] = []
    requests: list[tuple[int, int, int, int, int]] = []  # usage, and the index of the message it produced
    with open(path, "rb") as f:
        for raw in f:
            obj = orjson.loads(raw)
            kind = obj.get("type")
            if kind != "user" and kind != "assistant":
                continue
            obj.get("parentUuid")
            message = obj["message"]
            content = message.get("content")
            if content.__class__ is str:
                text, block = content, "text"
            else:
                first = content[0]
                block = first.get("type")
                text = first.get("text") or first.get("content") or orjson.dumps(first.get("input")).decode()
            n = len(text)
            code = n * min(1.0, len(text.encode().translate(None, _NOT_PUNCT)) / (0.08 * n)) if n else 0.0
            uuids.append(obj["uuid"])
            stamps.append(obj["timestamp"])
            kinds.append(block)
            estimates.append(PROSE * (n - code) + CODE * code + STRUCTURE)
            usage = message.get("usage")
            if usage is not None:
                requests.append((usage["input_tokens"], usage["cache_creation_input_tokens"],
                                 usage["cache_read_input_tokens"], usage["output_tokens"], len(uuids) - 1))
    measured: list[int | None] = [None] * len(estimates)
    lo = previous = 0
    for i, (a, b, c, _, hi) in enumerate(requests):
        context = a + b + c
        growth, weights = context - previous, estimates[lo:hi]
        total, acc, given = sum(weights) or 1.0, 0.0, 0
        for k, w in enumerate(weights):
            acc += w
            upto = int(round(growth * acc / total))
            measured[lo + k], given = upto - given, upto
        lo, previous = hi, context
    out = sys.stdout.buffer  # rows made and written a chunk at a time, as `report` writes them
    out.write(b'{"messages":[')
    for lo in range(0, len(estimates), CHUNK):
        rows = [{"index": i, "uuid": uuids[i], "timestamp": stamps[i], "block": kinds[i],
                 "tokens": round(estimates[i]) if measured[i] is None else measured[i],
                 "basis": "estimated" if measured[i] is None else "measured", "estimated": round(estimates[i])}
                for i in range(lo, min(lo + CHUNK, len(estimates)))]
        out.write((b"," if lo else b"") + orjson.dumps(rows)[1:-1])
    out.write(b'],"requests":[')
    for lo in range(0, len(requests), CHUNK):
        rows = [{"index": i, "input": a, "cache_creation": b, "cache_read": c, "output": d, "context": a + b + c,
                 "message": m} for i, (a, b, c, d, m) in enumerate(requests[lo:lo + CHUNK], lo)]
        out.write((b"," if lo else b"") + orjson.dumps(rows)[1:-1])
    out.write(b"]}")


if __name__ == "__main__":
    main(sys.argv[1])
