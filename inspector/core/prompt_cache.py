"""The prompt cache of a session: what each request read from it, wrote to it and sent uncached, the hit ratio, and
the cache breaks with their likely cause and what each cost.

A request's usage splits its prompt into cache reads, cache writes (creation) and uncached input. After a request
the cache holds its prompt up to its last breakpoint, read + written. A **break** is a request that read less than
that (by more than `BREAK_SLACK` tokens and `BREAK_SHARE` of it) and wrote the difference again. Its cause,
checked in this order:

- `compaction` / `microcompaction`: one lies between the two requests (the history was replaced or edited, so
  the prefix after it changed: an expected rebuild);
- `model switch`: each model has its own cache;
- `system prompt changed` / `tools changed`: the request went with another system or tool list (known exactly
  where the session records each request's shape, Claude Code 2.1.332+);
- `idle gap`: more time passed since the previous request than the cache's TTL (5 minutes, or 1 hour when the
  previous request wrote with the 1-hour TTL);
- `edit before a breakpoint`: the request re-sent fewer of the previous request's messages than it had (a message
  before the cache breakpoint was rewritten; recorded requests only);
- `unknown`: none of these is visible in the transcript (a server-side eviction, or an edit it does not record).

A break's `tokens_rewritten` is what it wrote of the prefix the previous request had cached; it cost that at the
cache-write rate instead of the read rate (`cost_usd`, None without a price). The hit ratio is cache reads over
everything sent (reads + writes + uncached), as Claude Code's status line defines it.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any

from msgspec import Struct, to_builtins

from inspector.core.cost import MILLION, PriceTable, prices, rounded
from inspector.core.model import CompactionsByIndex, Request, Session
from inspector.core.stamps import when

BREAK_SLACK = 1024  # tokens a read may fall short of the cached prefix without counting as a break (the minimum
# cacheable prefix of most models: the last breakpoint may move by less)
BREAK_SHARE = 0.05  # ... and the share of that prefix
TTL_5M, TTL_1H = 300.0, 3600.0

CAUSES = ("compaction", "microcompaction", "model switch", "system prompt changed", "tools changed", "idle gap",
          "edit before a breakpoint", "unknown")


class CacheUse(Struct):
    """One request's prompt as the cache saw it: `read`, `written` (of which `written_1h` with the 1-hour TTL),
    `uncached`."""

    read: int
    written: int
    uncached: int
    written_1h: int = 0

    @property
    def prompt(self) -> int:
        return self.read + self.written + self.uncached


class CacheBreak(Struct):
    """Request `request` (its index in `Session.requests`) rewrote `tokens_rewritten` tokens of the prefix the
    request before it had cached; `cause` is one of CAUSES, `detail` says what was seen."""

    request: int
    cause: str
    tokens_rewritten: int
    cost_usd: float | None
    detail: str = ""
    message_index: int = -1  # the message the request produced (where the timeline marks it)


class CacheReport(Struct):
    """The prompt cache of `requests` (each one's `CacheUse`: `uses`) and its breaks."""

    requests: list[Request]
    breaks: list[CacheBreak]
    sums: tuple[int, int, int] | None = None  # `totals`, where the scan for breaks summed them

    @property
    def uses(self) -> list[CacheUse]:
        """Every request's prompt as the cache saw it (made when asked: report --json reads the requests' own
        figures, 50,000 objects fewer in a long session)."""
        return [CacheUse(r.cache_read, r.cache_creation, r.input_tokens, _written_1h(r)) for r in self.requests]

    def totals(self) -> tuple[int, int, int]:
        """Tokens read, written and sent uncached over every request (C loops: 50,000 requests in a long
        session)."""
        if self.sums is not None:
            return self.sums
        reqs = self.requests
        return (sum(map(attrgetter("cache_read"), reqs)), sum(map(attrgetter("cache_creation"), reqs)),
                sum(map(attrgetter("input_tokens"), reqs)))

    @property
    def hit_ratio(self) -> float | None:
        """Cache reads over all prompt tokens sent (None: no request, or none with a prompt)."""
        return _hit_ratio(*self.totals())

    @property
    def caching_observed(self) -> bool:
        return any(r.cache_read or r.cache_creation for r in self.requests)

    def to_dict(self, session: Session, rows: bool = True) -> dict[str, Any]:
        """The report's `cache` key (docs/report-json.md). Without `rows`, `by_request` is left empty, for
        `report.write_json` to stream (`request_rows`)."""
        read, written, uncached = self.totals()  # once: three passes over every request
        n = len(self.requests) if rows else 0
        ratio = _hit_ratio(read, written, uncached)
        return {
            "hit_ratio": None if ratio is None else round(ratio, 6),
            "caching_observed": self.caching_observed,
            "read": read, "written": written, "uncached": uncached,
            "by_request": to_builtins(self.request_rows(0, n)),
            "breaks": [{"request": b.request, "id": self.requests[b.request].id, "cause": b.cause, "detail": b.detail,
                        "tokens_rewritten": b.tokens_rewritten, "cost_usd": usd}
                       for b, usd in zip(self.breaks, rounded([b.cost_usd for b in self.breaks]))],
            "breaks_cost_usd": round(sum(b.cost_usd or 0.0 for b in self.breaks), 6),
        }

    def request_rows(self, lo: int, hi: int) -> list[CacheRow]:
        """`by_request[lo:hi]` of the report's `cache` key: each request's `CacheUse`, read as `uses` reads it."""
        rows = []
        for r in self.requests[lo:hi]:
            written, one_hour = r.cache_creation, r.cache_write_1h  # the second no more than the first: _written_1h
            rows.append(CacheRow(r.id, r.cache_read, written, one_hour if one_hour < written else written,
                                 r.input_tokens))
        return rows


class CacheRow(Struct, gc=False):
    """A row of the report's `cache.by_request` as report --json streams it."""

    id: str
    cache_read: int
    cache_write: int
    cache_write_1h: int
    uncached: int


def _written_1h(r: Request) -> int:
    """What a request wrote to the cache with the one-hour TTL (never more than it wrote)."""
    return min(r.cache_write_1h, r.cache_creation)


def _hit_ratio(read: int, written: int, uncached: int) -> float | None:
    total = read + written + uncached
    return read / total if total else None


def cache_report(session: Session, table: PriceTable | None = None) -> CacheReport:
    """Every request's cache use and every break, with its cause and cost."""
    breaks, sums = _scan(session, table or prices(), 1, True)
    return CacheReport(list(session.requests), breaks, sums)


def cache_breaks(session: Session, table: PriceTable | None = None, start: int = 1) -> list[CacheBreak]:
    """The breaks at requests[start:] (each is read from its request and the one before: follow mode finds those of
    the requests an append added, and keeps the others)."""
    return _scan(session, table or prices(), start, False)[0]


def _scan(session: Session, table: PriceTable, start: int, sums: bool) -> tuple[list[CacheBreak], tuple[int, int, int]]:
    """The breaks at requests[start:], and with `sums`, `CacheReport.totals` of every request, in the same pass
    (each request's figures are read once: a walk over 50,000 requests costs mostly the memory it reaches)."""
    reqs = session.requests
    breaks: list[CacheBreak] = []
    first = max(1, start)
    micro: CompactionsByIndex | None = None  # made at the first break
    read = written = uncached = 0  # the sums
    if first <= len(reqs):
        r = reqs[first - 1]
        after = r.cache_read + r.cache_creation
        if sums:
            read, written, uncached = (sum(map(attrgetter(name), reqs[:first])) for name in
                                       ("cache_read", "cache_creation", "input_tokens"))
    for k, cur in zip(range(first, len(reqs)), reqs[first:]):
        got, wrote, fresh = cur.cache_read, cur.cache_creation, cur.input_tokens
        if sums:
            read += got
            written += wrote
            uncached += fresh
        cached, after = after, got + wrote  # what the request before left cached, and this one
        short = cached - got
        if cached <= 0 or short <= BREAK_SLACK or short <= BREAK_SHARE * cached:  # short <= max(both): no break
            continue
        rewritten = min(short, wrote + fresh)
        if rewritten <= 0:
            continue  # the prompt itself shrank (a compaction that wrote nothing yet): nothing paid again
        if micro is None:
            micro = CompactionsByIndex(session.compactions, "microcompact")
        cause, detail = _cause(session, k, micro)
        rates = table.rates(cur.model)
        cost = None
        if rates is not None:
            rt = rates.tier(cur.measured_context)
            write = rt.cache_write_1h if cur.cache_write_1h else rt.cache_write_5m
            cost = rewritten * (write - rt.cache_read) / MILLION
        breaks.append(CacheBreak(k, cause, rewritten, cost, detail, cur.message_index))
    return breaks, (read, written, uncached)


def _cause(session: Session, k: int, microcompactions: CompactionsByIndex) -> tuple[str, str]:
    reqs = session.requests
    prev, cur = reqs[k - 1], reqs[k]
    if cur.seen_start != prev.seen_start or cur.kind == "compaction" or prev.kind == "compaction":
        return "compaction", "the history before the request was replaced by a summary"
    micro = microcompactions.between(prev.seen_end, cur.seen_end)
    if micro:
        return "microcompaction", f"{sum(len(c.cleared_tool_ids) for c in micro)} tool results cleared"
    if (cur.model or "") != (prev.model or ""):
        return "model switch", f"{prev.model} -> {cur.model}"
    shaped = _shape_change(session, prev, cur)
    if shaped is not None:
        return shaped
    ttl = TTL_1H if prev.cache_write_1h else TTL_5M
    gap = _gap_beyond(prev.timestamp, cur.timestamp, ttl)
    if gap is not None:
        return "idle gap", f"{gap / 60:.1f} min since the previous request (TTL {ttl / 60:.0f} min)"
    edit = _rewritten(session, prev, cur)
    if edit is not None:
        return "edit before a breakpoint", edit
    return "unknown", "nothing in the transcript explains it (a server-side eviction, or an unrecorded edit)"


def _shape_change(session: Session, prev: Request, cur: Request) -> tuple[str, str] | None:
    log = session.sent
    if log is None:
        return None
    a, b = log.get(prev.sent_id), log.get(cur.sent_id)
    if a is None or b is None or a.shape == b.shape:
        return None
    sa, sb = log.shape(a), log.shape(b)
    if sa is None or sb is None:
        return "system prompt changed", "another request shape (system or tools)"
    if sa.system != sb.system:
        delta = len(str(sb.system)) - len(str(sa.system))
        return "system prompt changed", f"system blocks changed ({delta:+,} characters)"
    names_a = {t.get("name") for t in sa.tools if isinstance(t, dict)}
    names_b = {t.get("name") for t in sb.tools if isinstance(t, dict)}
    added, removed = len(names_b - names_a), len(names_a - names_b)
    return "tools changed", f"{added} tools added, {removed} removed" if added or removed else "tool schemas changed"


def _rewritten(session: Session, prev: Request, cur: Request) -> str | None:
    log = session.sent
    if log is None:
        return None
    a, b = log.get(prev.sent_id), log.get(cur.sent_id)
    if a is None or b is None or b.base != a.id:
        return None
    sent = log.length(a)
    if b.keep < sent:
        return f"message {b.keep} of {sent} re-sent changed"
    return None


def _gap_beyond(a: str | None, b: str | None, ttl: float) -> float | None:
    """The seconds from stamp a to stamp b where more than `ttl` (None: not more, or not known). Two UTC stamps of
    the same minute are not read (requests mostly follow each other within seconds: reading the stamps cost as much
    as finding the break)."""
    if isinstance(a, str) and isinstance(b, str) and len(a) > 16 and a[:16] == b[:16] and a[-1] == b[-1] == "Z":
        return None
    ta, tb = when(a), when(b)
    gap = (tb - ta).total_seconds() if ta is not None and tb is not None else None
    return gap if gap is not None and gap > ttl else None

