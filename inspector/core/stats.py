"""Across sessions: every session found summed per project and per day: sessions, compactions, the median context
at compaction, the categories that fill windows, cost and prompt-cache hit ratio.

Each session is summarised on its own (`summarise`: load, account, price: the figures `report` states), in worker
processes, largest files first; `aggregate` sums the summaries. A session that cannot be read is counted and named,
never fatal. Sessions are those of every agent store the picker knows (`discover.STORES`), or the session files
under the directories given.
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from inspector.core import categories as cat

TOP = 5  # categories listed per group
SKIP_DIRS = frozenset({"subagents"})


@dataclass(slots=True)
class Summary:
    """One session's figures (plain data: it crosses from a worker process)."""

    path: str
    agent: str
    project: str
    day: str
    compactions: int = 0
    at_compaction: list[int] = field(default_factory=list)  # the context each compaction fired at
    categories: dict[str, int] = field(default_factory=dict)  # the current window's context per category
    cost_usd: float = 0.0
    priced: bool = False
    cache_read: int = 0
    prompt: int = 0
    requests: int = 0
    error: str | None = None


def session_paths(directories: Iterable[Path]) -> list[tuple[Path, str]]:
    """(path, agent) of every session under `directories` (files an agent writes: JSONL sessions, Cline SDK
    message files, Cline / Roo Code task folders), subagent side files left out."""
    out: list[tuple[Path, str]] = []
    for d in directories:
        if d.is_file():
            out.append((d, "file"))
            continue
        for root, dirs, files in os.walk(d):
            dirs[:] = [x for x in dirs if x not in SKIP_DIRS]
            here = Path(root)
            if "api_conversation_history.json" in files:
                out.append((here, "task"))
                continue
            for name in files:
                if (name.endswith(".jsonl") and not name.startswith("agent-")) or name.endswith(".messages.json"):
                    out.append((here / name, "file"))
    return out


def store_paths() -> list[tuple[Path, str]]:
    """(path, agent) of every session of every agent store found here (all of them, not the picker's newest)."""
    from inspector.core.discover import STORES, store_entries

    return [(e.path, store.agent) for store in STORES for e in store_entries(store, limit=None)]


def summarise(path: str, agent: str) -> Summary:
    """One session's figures, or a Summary whose `error` says why it could not be read."""
    from inspector.core.gc_pause import gc_paused

    with gc_paused():  # as `report` runs: collections while a session is built free nothing and re-walk it all
        return _summary(path, agent)


def _summary(path: str, agent: str) -> Summary:
    from inspector.core.cost import session_cost
    from inspector.core.formats import load
    from inspector.core.model import LoadError
    from inspector.core.prompt_cache import cache_report
    from inspector.core.tokens import account

    try:
        session = load(path)
        acc = account(session, resumable=False)
    except (LoadError, OSError, ValueError, RecursionError) as exc:
        return Summary(path, agent, "", "", error=str(exc)[:300])
    s = Summary(path, session.format if agent in ("file", "task") else agent, session.cwd or _project(path),
                _day(session, path))
    for c in session.compactions:
        if c.kind != "compact":
            continue
        s.compactions += 1
        before = [r.measured_context for r in session.requests if r.message_index < c.index]
        at = c.pre_tokens if c.pre_tokens is not None else (before[-1] if before else None)
        if at is not None:
            s.at_compaction.append(at)
    s.categories = {k: v for k, v in acc.by_category.items() if v > 0}
    cost = session_cost(session)
    s.cost_usd, s.priced = cost.total_usd or 0.0, cost.total_usd is not None
    for u in cache_report(session, cost.table).uses:
        s.cache_read += u.read
        s.prompt += u.prompt
    s.requests = len(session.requests)
    return s


def _day(session, path: str) -> str:
    for m in session.messages:
        if isinstance(m.timestamp, str) and len(m.timestamp) >= 10:
            return m.timestamp[:10]
    try:
        return datetime.fromtimestamp(os.stat(path.split("#", 1)[0]).st_mtime, timezone.utc).strftime("%Y-%m-%d")
    except OSError:
        return "-"


def _project(path: str) -> str:
    return str(Path(path.split("#", 1)[0]).parent)


def summaries(paths: list[tuple[Path, str]], workers: int | None = None,
              progress: Callable[[int, int], None] | None = None) -> list[Summary]:
    """Every session summarised in worker processes (largest first, so the slowest start early)."""
    def size(p: Path) -> int:
        try:
            return os.stat(str(p).split("#", 1)[0]).st_size
        except OSError:
            return 0

    order = sorted(paths, key=lambda pa: -size(pa[0]))
    workers = workers or os.cpu_count() or 1
    out: list[Summary] = []
    if workers == 1 or len(order) < 2:
        for k, (p, agent) in enumerate(order, 1):
            out.append(summarise(str(p), agent))
            if progress:
                progress(k, len(order))
        return out
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(summarise, str(p), agent) for p, agent in order]
        for k, future in enumerate(as_completed(futures), 1):
            out.append(future.result())
            if progress:
                progress(k, len(order))
    return out


def _group(rows: list[Summary]) -> dict[str, Any]:
    at = [x for r in rows for x in r.at_compaction]
    categories: dict[str, int] = {}
    for r in rows:
        for k, v in r.categories.items():
            categories[k] = categories.get(k, 0) + v
    total = sum(categories.values())
    top = sorted(categories.items(), key=lambda kv: -kv[1])[:TOP]
    prompt = sum(r.prompt for r in rows)
    priced = [r for r in rows if r.priced]
    return {
        "sessions": len(rows), "requests": sum(r.requests for r in rows),
        "compactions": sum(r.compactions for r in rows),
        "median_tokens_at_compaction": int(statistics.median(at)) if at else None,
        "top_categories": [{"category": k, "label": cat.label(k), "tokens": v,
                            "share": round(v / total, 4) if total else 0.0} for k, v in top],
        "cost_usd": round(sum(r.cost_usd for r in priced), 6) if priced else None,
        "unpriced_sessions": len(rows) - len(priced),
        "cache_hit_ratio": round(sum(r.cache_read for r in rows) / prompt, 6) if prompt else None,
    }


def aggregate(rows: list[Summary]) -> dict[str, Any]:
    """The figures per project, per day and in all (the `stats --json` object)."""
    good = [r for r in rows if r.error is None]
    by_project: dict[str, list[Summary]] = {}
    by_day: dict[str, list[Summary]] = {}
    for r in good:
        by_project.setdefault(r.project or "-", []).append(r)
        by_day.setdefault(r.day or "-", []).append(r)
    return {
        "total": _group(good),
        "by_project": {k: _group(v) for k, v in sorted(by_project.items())},
        "by_day": {k: _group(v) for k, v in sorted(by_day.items())},
        "unreadable": [{"path": r.path, "error": r.error} for r in rows if r.error is not None],
    }
