"""The cost and prompt-cache part of `report`: keys added to the JSON report, and the text section that shows them.

Added keys (docs/report-json.md): top level `cost` (`session_cost`), `cache` (`cache_report`), `prefix` (the prefix
by name, `prefix.prefix_sections`); per message
`cost_share_usd` (its share of the session's cost, see inspector/core/cost.py).
"""

from __future__ import annotations

from typing import Any

from inspector.core.accounting import Accounting
from inspector.core.cost import PriceTable, SessionCost, rounded, session_cost
from inspector.core.model import Session
from inspector.core.prefix import prefix_dict
from inspector.core.prompt_cache import CacheReport, cache_report
from inspector.core.rows import Columns, with_columns


def add_cost_keys(report: dict[str, Any], session: Session, acc: Accounting,
                  table: PriceTable | None = None, rows: bool = True) -> tuple[SessionCost, CacheReport]:
    """Add the cost keys to a report dict; without `rows`, the per-request lists of `cost` and `cache` are left
    empty, for `report.write_json` to stream (`SessionCost.request_columns`, `CacheReport.request_rows`)."""
    cost = session_cost(session, table, acc)
    cache = cache_report(session, cost.table)
    report["cost"] = cost.to_dict(session, rows)
    report["cache"] = cache.to_dict(session, rows)
    report["prefix"] = prefix_dict(session, acc)
    messages = report.get("messages", [])
    with_columns(messages, share_columns(cost, 0, len(messages)))
    return cost, cache


def share_columns(cost: SessionCost, lo: int, hi: int) -> Columns:
    """The cost key of the report's `messages[lo:hi]` (report --json writes its rows a chunk at a time, after the
    totals), as a column."""
    return {"cost_share_usd": rounded(cost.messages[lo:hi])}


def usd(x: float | None) -> str:
    """A cost for people: cents above a dollar, more digits below (a short session costs fractions of a cent)."""
    if x is None:
        return "-"
    return f"${x:,.2f}" if abs(x) >= 1 else f"${x:.4f}"


def cost_text(session: Session, cost: SessionCost, cache: CacheReport, safe) -> str:
    """The text section: the session's cost (and the agent's own figure), per model, the cache and its breaks."""
    if not session.requests:
        return ""
    dates = sorted({d for d in map(cost.table.date_of, cost.by_model) if d}, reverse=True) or [cost.table.date]
    out = ["", f"Cost (prices of {', '.join(d or 'unknown date' for d in dates)}, {len(cost.table.files)} price file"
               f"{'s' if len(cost.table.files) > 1 else ''})",
           f"  total {usd(cost.total_usd)}" + (f"; the agent's own figure ({cost.agent.source}) "
                                               f"{usd(cost.agent.total_usd)}" if cost.agent else "")]
    for model, value in sorted(cost.by_model.items(), key=lambda kv: -kv[1]):
        agent = cost.agent.by_model.get(model) if cost.agent else None
        out.append(f"  {safe(model):<40} {usd(value):>10}" + (f"  (agent: {usd(agent)})" if agent is not None else ""))
    if cost.unpriced:
        out.append("  no price for: " + ", ".join(safe(m) for m in cost.unpriced))
    ratio = cache.hit_ratio
    read, written, uncached = cache.totals()
    out += ["", "Prompt cache",
            f"  hit ratio {ratio:.1%}" if ratio is not None else "  hit ratio -",
            f"  read {read:,}, written {written:,}, uncached {uncached:,} tokens"]
    if cache.breaks:
        out.append(f"  {len(cache.breaks)} cache break{'s' if len(cache.breaks) > 1 else ''} "
                   f"(cost {usd(sum(b.cost_usd or 0 for b in cache.breaks))}):")
        for b in cache.breaks[:50]:
            r = session.requests[b.request]
            out.append(f"  {b.request + 1:>5} line {r.line or '-':>7}  {b.cause:<25} {b.tokens_rewritten:>9,} "
                       f"{usd(b.cost_usd):>10}  {safe(b.detail)}")
        if len(cache.breaks) > 50:
            out.append(f"  ... {len(cache.breaks) - 50} more (report --json lists them all)")
    return "\n".join(out) + "\n"
