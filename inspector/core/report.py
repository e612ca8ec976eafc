"""The `report` of a session as a plain dict (what `report --json` prints) and as readable text.

The dict's keys are a contract (docs/report-json.md): later versions add keys, never rename or remove them.
"""

from __future__ import annotations

import json
import re
from operator import attrgetter
from typing import Any, BinaryIO, Callable, Iterator, Sequence

import orjson

from inspector.core.model import Session
from inspector.core.inert import safe_line


def report_dict(session: Session, rows: bool = True) -> dict[str, Any]:
    """The JSON report: exactly the schema in docs/report-json.md. Without `rows`, `messages` and `requests` are
    left empty, for `write_json` to stream (`message_rows`, `request_rows`)."""
    n, k = (len(session.messages), len(session.requests)) if rows else (0, 0)
    return {
        "path": session.source,
        "format": session.format,
        "models": list(session.models),
        "messages": message_rows(session, 0, n, [{} for _ in range(n)]),
        "requests": request_rows(session, 0, k, [{} for _ in range(k)]),
        "compactions": [{"trigger": c.trigger, "pre_tokens": c.pre_tokens, "index": c.index}
                        for c in session.compactions if c.kind == "compact"],
        "warnings": [{"line": w.line, "message": w.message} for w in session.warnings],
        "subagents": list(session.subagents),
    }


def message_rows(session: Session, lo: int, hi: int, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`messages[lo:hi]` of the report, written into the dicts `rows` (new ones, or a chunk's that `write_json`
    reuses)."""
    for entry, i, m in zip(rows, range(lo, hi), session.messages[lo:hi]):
        entry["index"] = i
        entry["role"] = m.role
        entry["kind"] = m.kind
        entry["line"] = m.line
    return rows


def request_rows(session: Session, lo: int, hi: int, rows: list[dict[str, Any]],
                 measured: Sequence[int] | None = None) -> list[dict[str, Any]]:
    """`requests[lo:hi]` of the report, written into the dicts `rows` (as `message_rows`); `measured`: every
    request's measured context, where the caller has them (the accounting's: each request's usage is read once)."""
    requests = session.requests[lo:hi]
    contexts = map(attrgetter("measured_context"), requests) if measured is None else measured[lo:hi]
    for entry, r, context in zip(rows, requests, contexts):
        entry["id"] = r.id
        entry["model"] = r.model
        entry["measured_context"] = context
        entry["output_tokens"] = r.output_tokens
    return rows


ROWS_CHUNK = 500  # rows encoded at a time by `write_json` (the whole list of a 100,000-message report is ~60 MB): few
# enough that a chunk's dicts and JSON stay in the CPU's cache (5,000 took ~50 ms more at 100k messages)


# a list's length, and rows(lo, hi, into): its rows [lo:hi] written into the dicts `into` and returned
Streamed = dict[tuple[str, ...], tuple[int, Callable[[int, int, list[dict[str, Any]]], list[dict[str, Any]]]]]


def write_json(out: BinaryIO, report: dict[str, Any], streamed: Streamed,
               together: Sequence[Sequence[tuple[str, ...]]] = ()) -> None:
    """Write `report` as one line of ASCII JSON (no session text can reach a terminal as an escape sequence), the
    lists named in `streamed` (the path of keys to one, ("messages",) or ("cost", "by_request"): (length,
    rows(lo, hi, into))) made and written a chunk at a time, in place of what the report holds there. Each list's
    chunks are written into the same dicts: their keys stay in the order the first chunk gave them, and only the
    values change (making and freeing a dict per row took a third of the time of a 100,000-message report's
    rows); a key that some rows lack must be the last, deleted where a row lacks it.

    `together`: groups of streamed lists of one length (a row per request) made chunk by chunk at once when the
    first of a group is written, the JSON of the others kept until their turn: each chunk's requests are read while
    in the CPU's cache, once for all of them (a walk over 50,000 requests costs mostly the memory it reaches)."""
    groups = {path: group for group in together for path in group}
    _write(out, report, streamed, (), groups, {})
    out.write(b"\n")


def _write(out: BinaryIO, value: dict[str, Any], streamed: Streamed, path: tuple[str, ...],
           groups: dict[tuple[str, ...], Sequence[tuple[str, ...]]], kept: dict[tuple[str, ...], list[bytes]]) -> None:
    out.write(b"{")
    for n, (key, item) in enumerate(value.items()):
        out.write(b"," + dumps(key) + b":" if n else dumps(key) + b":")
        at = (*path, key)
        if at in streamed:
            out.write(b"[")
            for i, chunk in enumerate(kept.pop(at, None) or _rows(at, streamed, groups.get(at, (at,)), kept)):
                if i:
                    out.write(b",")
                out.write(memoryview(chunk)[1:-1])  # not copied
            out.write(b"]")
        elif isinstance(item, dict) and any(p[:len(at)] == at for p in streamed):
            _write(out, item, streamed, at, groups, kept)
        else:
            out.write(dumps(item))
    out.write(b"}")


def _rows(at: tuple[str, ...], streamed: Streamed, group: Sequence[tuple[str, ...]],
          kept: dict[tuple[str, ...], list[bytes]]) -> Iterator[bytes]:
    """The JSON of the chunks of list `at`, made with those of the rest of its group not made yet (kept)."""
    length = streamed[at][0]
    made = [p for p in group if p == at or (p in streamed and p not in kept)]
    assert all(streamed[p][0] == length for p in made), "the lists made together have one length"
    into = {p: [{} for _ in range(min(length, ROWS_CHUNK))] for p in made}
    for p in made:
        if p != at:
            kept[p] = []
    for lo in range(0, length, ROWS_CHUNK):
        hi = min(length, lo + ROWS_CHUNK)
        for p in made:
            rows, dicts = streamed[p][1], into[p]
            chunk = dumps(rows(lo, hi, dicts if hi - lo == len(dicts) else dicts[:hi - lo]))
            if p == at:
                yield chunk
            else:
                kept[p].append(bytes(memoryview(chunk)))  # kept to its turn: an exact copy (orjson's bytes
                # hold the buffer it wrote them in, ~3x as large: 50,000 requests' rows of two lists kept 26 MB)


_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def dumps(value: Any) -> bytes:
    """Compact ASCII JSON: what json.dumps(ensure_ascii=True) writes, by orjson (10x faster; UTF-8 escaped after)
    where it can (not: lone surrogates, integers beyond 64 bits, keys that are no strings)."""
    try:
        out = orjson.dumps(value)
    except TypeError:
        return json.dumps(value, ensure_ascii=True, separators=(",", ":")).encode()
    if out.isascii():
        return out
    return _NON_ASCII.sub(_escape, out.decode()).encode()


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xd800 + (code >> 10):04x}\\u{0xdc00 + (code & 0x3ff):04x}"


def report_text(session: Session) -> str:
    """A readable summary: the session, its requests as a table, compactions, warnings and subagent files."""
    from inspector.core.subagents import subagents  # here: it imports every loader, which report --json never needs
    from inspector.core.usage_terms import usage_terms

    out: list[str] = []
    kinds: dict[str, int] = {}
    for m in session.messages:
        kinds[m.kind] = kinds.get(m.kind, 0) + 1
    start = session.context_start
    head = [
        ("session", session.source),
        ("format", session.format + (f" (version {session.version})" if session.version else "")),
        ("models", ", ".join(session.models) or "-"),
    ]
    if session.cwd:
        head.append(("cwd", session.cwd))
    if session.window:
        head.append(("window", f"{session.window:,} tokens (stated by the session)"))
    head.append(("messages", f"{len(session.messages):,} ("
                 + ", ".join(f"{n:,} {k}" for k, n in sorted(kinds.items(), key=lambda kv: -kv[1])) + ")"
                 if session.messages else "0"))
    if start:
        head.append(("context", f"messages {start:,}-{len(session.messages) - 1:,} "
                                f"({len(session.messages) - start:,} since the last compaction)"))
    if session.system is not None:
        head.append(("system", f"{len(session.system):,} characters recorded"))
    if session.tools:
        head.append(("tools", f"{len(session.tools)} recorded"))
    if session.requests:
        first, last = session.requests[0], session.requests[-1]
        peak = max(session.requests, key=lambda r: r.measured_context)
        head.append(("requests", f"{len(session.requests):,}; context {first.measured_context:,} first, "
                                 f"{last.measured_context:,} last, {peak.measured_context:,} peak (measured)"))
    else:
        head.append(("requests", "none with recorded usage"))
    out += [f"{k:<9} {safe_line(v)}" for k, v in head]

    if session.requests:
        out += ["", f"Requests (measured context = {usage_terms(session.format).context})",
                f"{'#':>5} {'line':>7} {'msg':>6}  {'context':>9} {'output':>7}  model"]
        for i, r in enumerate(session.requests):
            out.append(f"{i + 1:>5} {r.line or '-':>7} {r.message_index:>6}  {r.measured_context:>9,} "
                       f"{r.output_tokens:>7,}  {safe_line(r.model or '-')}")
    if session.compactions:
        out += ["", "Compactions"]
        for c in session.compactions:
            detail = f"trigger {c.trigger or '-'}, {c.pre_tokens:,} tokens before" if c.pre_tokens is not None \
                else f"trigger {c.trigger or '-'}"
            if c.kind == "microcompact":
                detail += f", {len(c.cleared_tool_ids)} tool results cleared"
            out.append(f"  {c.kind:<12} at message {c.index:,}" + (f" (line {c.line})" if c.line else "")
                       + f": {safe_line(detail)}")
    if session.warnings:
        out += ["", f"Warnings ({len(session.warnings)})"]
        out += [f"  line {w.line}: {safe_line(w.message)}" if w.line else f"  {safe_line(w.message)}"
                for w in session.warnings]
    agents = subagents(session, look=False)
    if agents:
        out += ["", f"Subagents ({len(agents)})"]
        out += [f"  {a.number}" + (f" started at message {a.index}" if a.index is not None else "")
                + f" ({safe_line(a.what)}): " + (safe_line(a.path) if a.path else "its window's file is not here")
                for a in agents]
    return "\n".join(out) + "\n"
