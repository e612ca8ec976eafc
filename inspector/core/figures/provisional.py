"""Follow mode's first figures for an append: the figures before it, extended in time proportional to what changed.

The exact figures (`compute`/`extend`, after `tokens.account_appended`) follow when the file goes quiet; until then
the new messages count at their `script` estimates alone, a new request at its measured context, and the window
at the last request's measured context plus the estimates after it. Marked `provisional`.
"""

from __future__ import annotations

from dataclasses import replace

from inspector.core import categories as cat
from inspector.core.estimators import get_estimator
from inspector.core.figures.model import Figures, RequestPoint
from inspector.core.window import Window
from inspector.core.model import Session


def moved(w: Window, used: int, measured: bool) -> Window:
    """`w` at another `used` figure: free room and the reserved band's remainder follow."""
    auto = w.thresholds.get("autocompact", w.window)
    return replace(w, used=used, used_measured=measured, free=max(0, auto - used),
                   reserved=max(0, min(w.reserve, w.window - used)),
                   percent=round(used / w.window * 100, 2) if w.window else 0.0)


def provisional(prev: Figures, session: Session, first: int, updated: list[int]) -> Figures:
    """`prev` extended to `session`: messages from `first` on (from the first of the `updated` ones, if earlier: a
    response grown by a line may hold a new tool call) are estimated alone with the script estimator and linked
    anew, requests after prev's keep their measured context, and the window's use is the last request's measured
    context plus the estimates after it."""
    first = min([first, *updated])
    est = get_estimator("script")
    messages = session.messages
    names = dict(prev.tool_names)
    call_at, result_at, derived = dict(prev.call_at), dict(prev.result_at), dict(prev.derived)
    by_cat = dict(prev.categories)
    for i in range(first, len(prev.estimated)):  # (usually none, or the last message, grown): made again below
        derived.pop(i, None)
        for b in prev.session.messages[i].blocks:
            for links in (call_at, result_at):
                if links.get(b.tool_id, -1) >= first:
                    del links[b.tool_id]
        key = prev.category[i]
        by_cat[key] = by_cat.get(key, 0) - prev.size(i)
    estimated, measured = prev.estimated[:first], prev.measured[:first]  # (a slice is a copy)
    category = prev.category[:first]
    orphans = {o for o in prev.orphans if o < first}
    for i in range(first, len(messages)):
        m = messages[i]
        for b in m.blocks:
            if b.type == "tool_use" and b.tool_id:
                names[b.tool_id] = b.tool_name or "?"
                call_at[b.tool_id] = i
                orphans.add(i)
            elif b.type == "tool_result" and b.tool_id:
                result_at[b.tool_id] = i
                orphans.discard(call_at.get(b.tool_id, -1))
        estimated.append(est.message(m))
        measured.append(None)
        key = cat.block_category(m, m.blocks[0], names) if m.blocks else cat.USER_PROMPTS
        category.append(key)
        by_cat[key] = by_cat.get(key, 0) + estimated[-1]

    def size(i: int) -> int:  # (the figures' `size`, over the lists made here: visited only where needed)
        x = measured[i]
        return derived.get(i, estimated[i]) if x is None else x

    prefix = prev.cumulative[0] - prev.size(0) if prev.cumulative else 0
    cumulative = prev.cumulative[:first]
    starts = {c.index for c in session.compactions if c.kind == "compact"}
    run = cumulative[-1] if cumulative else prefix
    for i in range(first, len(messages)):
        run = (prefix if i in starts else run) + size(i)
        cumulative.append(run)
    points = list(prev.requests)
    for r in session.requests[len(prev.session.requests):]:
        points.append(RequestPoint(r.message_index, r.measured_context, None, r.timestamp))
    start = session.context_start
    last = session.requests[-1] if session.requests else None
    if last is not None and last.seen_start == start and last.message_index >= 0:
        used, used_measured = last.measured_context + sum(map(size, range(last.seen_end, len(messages)))), True
    else:
        used, used_measured = prefix + sum(map(size, range(start, len(messages)))), False
    if session.compactions[len(prev.session.compactions):]:
        categories = [(k, v) for k, v in prev.categories if k in (cat.SYSTEM_TOOLS, cat.SUMMARIZED)]  # history is gone
        categories.append((cat.PROVISIONAL, max(0, used - sum(v for _, v in categories))))
    else:
        categories = [(k, v) for k, v in by_cat.items() if v > 0]
    return replace(prev, session=session, estimated=estimated, measured=measured, derived=derived,
                   cumulative=cumulative, category=category, window=moved(prev.window, used, used_measured),
                   categories=categories, categories_measured=False, requests=points, tool_names=names,
                   call_at=call_at, result_at=result_at, orphans=orphans, provisional=True, resume=None,
                   micro_saving=None, micro_note="")
