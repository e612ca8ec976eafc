"""The `report` of a session as a plain dict (what `report --json` prints) and as readable text.

The dict's keys are a contract (docs/report-json.md): later versions add keys, never rename or remove them.
"""

from __future__ import annotations

from typing import Any, BinaryIO, Callable, Iterator, Sequence

from msgspec import Struct

from inspector.core.model import Session
from inspector.core.inert import safe_line
from inspector.core.rows import Columns, dumps, encode_rows, with_columns


def report_dict(session: Session, rows: bool = True) -> dict[str, Any]:
    """The JSON report: exactly the schema in docs/report-json.md. Without `rows`, `messages` and `requests` are
    left empty, for `write_json` to stream (`message_columns`, `request_columns`)."""
    n, k = (len(session.messages), len(session.requests)) if rows else (0, 0)
    return {
        "path": session.source,
        "format": session.format,
        "models": list(session.models),
        "messages": with_columns([{} for _ in range(n)], message_columns(session, 0, n)),
        "requests": with_columns([{} for _ in range(k)], request_columns(session, 0, k)),
        "compactions": [{"trigger": c.trigger, "pre_tokens": c.pre_tokens, "index": c.index}
                        for c in session.compactions if c.kind == "compact"],
        "warnings": [{"line": w.line, "message": w.message} for w in session.warnings],
        "subagents": list(session.subagents),
    }


def message_columns(session: Session, lo: int, hi: int) -> Columns:
    """`messages[lo:hi]` of the report, as columns."""
    part = session.messages[lo:hi]
    return {"index": range(lo, hi), "role": [m.role for m in part], "kind": [m.kind for m in part],
            "line": [m.line for m in part]}


def request_columns(session: Session, lo: int, hi: int, measured: Sequence[int] | None = None) -> Columns:
    """`requests[lo:hi]` of the report, as columns; `measured`: every request's measured context, where the caller
    has them (the accounting's: each request's usage is read once)."""
    part = session.requests[lo:hi]
    return {"id": [r.id for r in part], "model": [r.model for r in part],
            "measured_context": [r.measured_context for r in part] if measured is None else measured[lo:hi],
            "output_tokens": [r.output_tokens for r in part]}


class MessageRow(Struct, gc=False):
    """A row of the report's `messages` as report --json streams it: the keys of `message_columns`, then those of
    `token_report.message_columns` and `cost_report.share_columns`."""

    index: int
    role: str
    kind: str
    line: int | None
    estimated_tokens: int
    measured_tokens: int | None
    category: str
    cost_share_usd: float


class RequestRow(Struct, gc=False, omit_defaults=True):
    """A row of the report's `requests` as report --json streams it: the keys of `request_columns`, then those of
    `token_report.request_columns` (`unrecorded_cause` only where a request has one)."""

    id: str
    model: str | None
    measured_context: int
    output_tokens: int
    predicted_context: int | None
    estimated_context: int
    unrecorded: int
    unrecorded_cause: str | None = None


ROWS_CHUNK = 500  # rows encoded at a time by `write_json` (the whole list of a 100,000-message report is ~60 MB): few
# enough that a chunk's rows and JSON stay in the CPU's cache (5,000 took ~50 ms more at 100k messages)


# a list's length, and rows(lo, hi): its rows [lo:hi] (structs, see `rows_of`, or dicts)
Streamed = dict[tuple[str, ...], tuple[int, Callable[[int, int], Sequence[Any]]]]


def write_json(out: BinaryIO, report: dict[str, Any], streamed: Streamed,
               together: Sequence[Sequence[tuple[str, ...]]] = ()) -> None:
    """Write `report` as one line of ASCII JSON (no session text can reach a terminal as an escape sequence), the
    lists named in `streamed` (the path of keys to one, ("messages",) or ("cost", "by_request"): (length,
    rows(lo, hi))) made and written a chunk at a time (`encode_rows`), in place of what the report holds there.

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
    for p in made:
        if p != at:
            kept[p] = []
    for lo in range(0, length, ROWS_CHUNK):
        hi = min(length, lo + ROWS_CHUNK)
        for p in made:
            chunk = encode_rows(streamed[p][1](lo, hi))
            if p == at:
                yield chunk
            else:
                kept[p].append(bytes(memoryview(chunk)))  # kept to its turn: an exact copy (an encoder's bytes
                # may hold the buffer it wrote them in, larger: 50,000 requests' rows of two lists kept 26 MB)


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
