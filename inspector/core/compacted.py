"""The figures after compactions no request has measured yet, followed from the figures before them.

A compaction after a session's last request (a step in the workbench, a summary the agent just made, the end of
an exported file) changes the context with no usage to say what it holds now. Accounting (`tokens.account`)
figures the session as of its last request and then follows each such compaction here, in order; the workbench
and the agent view follow one new step from the figures they already have with the same functions, so a step's
figures, a fresh accounting of the state it makes and the report of its export are one and the same:

- a microcompaction: each message it edited keeps its figure in the ratio of its estimates after and before the
  edit (`pricing.scaled`: a measured share stays what usage said of the message, less the part the estimate says
  the edit took); that figure is `derived`, no longer measured. The current figure drops by what they freed, and
  the categories move with them. The prefix and the unrecorded growth stay.
- a full compaction: a new window begins at it. Its added messages (the summary, an acknowledgement) count at
  their estimates, each message it kept verbatim at the figure it had (still measured when the growth it was a
  share of lies wholly after the cut, else derived), later messages at their estimates; the prefix stays and the
  old window's unrecorded growth goes with it.
"""

from __future__ import annotations

from dataclasses import replace

from inspector.core import categories as cat
from inspector.core.accounting import Accounting
from inspector.core.model import Compaction, Message, Session
from inspector.core.pricing import parts, scaled
from inspector.core.versions import Edit, edits


def after_all(acc: Accounting, trailing: list[tuple[Compaction, list[Edit]]]) -> Accounting:
    """`acc` followed through `trailing` (compactions of `acc.session` after its last request, with their edits).
    A summary counts each message of its window as it was right after it: as a later edit in `trailing` found it."""
    later: list[dict[int, Message]] = []
    found: dict[int, Message] = {}
    for _, changes in reversed(trailing):
        later.append(dict(found))
        found.update((e.index, e.before) for e in changes)
    for (c, changes), versions in zip(trailing, reversed(later)):
        acc = after_edit(acc, changes) if c.kind == "microcompact" else after_summary(acc, c, versions)
    return acc


def after_step(acc: Accounting, session: Session) -> Accounting:
    """The accounting of `session`, made from `acc`, the accounting of the state it grew from by compactions
    after its last request (a workbench step, the agent's compaction): equal to `tokens.account(session)`."""
    old = acc.session
    if session.requests != old.requests or len(session.compactions) < len(old.compactions):
        raise ValueError("not a step of this accounting's session: account it afresh")
    new = session.compactions[len(old.compactions):]
    acc = replace(acc, session=session, resume=None)
    changes = edits(session)[len(old.compactions):] if any(c.replaced for c in new) else [[] for _ in new]
    return after_all(acc, list(zip(new, changes)))


def after_edit(acc: Accounting, changes: list[Edit]) -> Accounting:
    """After a microcompaction: each edited message of the current window at its figure scaled by its estimates
    after and before the edit; the figure and the categories down by what that frees."""
    pricing = acc.pricing
    assert pricing is not None
    names = pricing.names
    estimated, measured, category = list(acc.estimated), list(acc.measured), list(acc.category)
    derived, by_category = dict(acc.derived), dict(acc.by_category)
    freed = 0
    for e in changes:
        i = e.index
        before, after = parts(e.before, names, pricing.counter), parts(e.after, names, pricing.counter)
        was, now = pricing.estimate(i, e.before, before), pricing.estimate(i, e.after, after)
        figure = acc.size(i)  # (`acc`'s lists are not changed: the figure before)
        estimated[i] = int(round(now))
        new = scaled(figure, was, now) if i >= acc.start else 0  # history is no part of the context
        category[i], shares = pricing.split(i, e.after, new, after)
        if i < acc.start:  # (a loader's boundary may name old results)
            continue
        for k, share in pricing.split(i, e.before, figure, before)[1].items():
            by_category[k] = by_category.get(k, 0) - share
        for k, share in shares.items():
            by_category[k] = by_category.get(k, 0) + share
        measured[i] = None
        if new == estimated[i]:
            derived.pop(i, None)
        else:
            derived[i] = new
        freed += figure - new
    return replace(acc, estimated=estimated, measured=measured, category=category, derived=derived,
                   by_category=by_category, current_context=acc.current_context - freed, resume=None)


def after_summary(acc: Accounting, c: Compaction, versions: dict[int, Message] | None = None) -> Accounting:
    """After a full compaction at `c.index`: a new window of its added messages, the copies of the messages it kept
    (at their figures) and whatever followed, on the same prefix; no unrecorded growth. `versions`: messages that
    later edits changed since, as they were right after this compaction."""
    pricing = acc.pricing
    assert pricing is not None
    session = acc.session
    messages, n = session.messages, len(session.messages)
    estimated, measured, category = list(acc.estimated), list(acc.measured), list(acc.category)
    derived = {i: v for i, v in acc.derived.items() if i < c.index}
    for j in range(len(estimated), n):  # messages the state before did not have (a step followed from it)
        estimated.append(int(round(pricing.estimate(j, messages[j]))))
        measured.append(None)
        category.append("")
    whole_from = _whole_growths_from(session, acc.start, c.kept_from) if c.kept_from is not None else 0
    first_copy = c.index + c.added
    for k in range(c.kept):
        o, j = c.kept_from + k, first_copy + k  # type: ignore[operator]
        if j >= n:
            break
        figure = acc.size(o)
        if acc.measured[o] is not None and o >= whole_from:
            measured[j] = acc.measured[o]
        elif figure != estimated[j]:
            derived[j] = figure
    by_category: dict[str, int] = {}
    current = acc.prefix
    for j in range(c.index, n):
        figure = measured[j] if measured[j] is not None else derived.get(j, estimated[j])
        top, shares = pricing.split(j, (versions or {}).get(j, messages[j]), figure)
        category[j] = top
        for k, share in shares.items():
            by_category[k] = by_category.get(k, 0) + share
        current += figure
    by_category[cat.prefix_key(session)] = acc.prefix
    return replace(acc, estimated=estimated, measured=measured, category=category, derived=derived,
                   by_category=by_category, current_context=current, current_measured=None, unrecorded=0,
                   start=c.index, resume=None)


def _whole_growths_from(session: Session, start: int, split: int) -> int:
    """The first session index from which every measured growth of the window at `start` lies wholly at or after
    `split`: `split` itself when a request's growth ends there (or the window starts there), else the end of the
    growth the cut falls in. Accounting spreads the first request's context over what it saw, and each later
    request's growth over the messages added since the one before: a share of a growth the cut splits is an
    apportioned estimate, no measured figure of the part kept."""
    ends = sorted({r.seen_end for r in session.requests if r.seen_start == start})
    if split == start or split in ends:
        return split
    return next((e for e in ends if e > split), split)
