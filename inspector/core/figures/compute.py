"""Figures of a session state, computed once from the core: the accounting, the window, the breakdown, the links.

`compute` calls `tokens.account` (or takes an accounting made already: followed through an append, a step) and
`limits.window_info` and flattens their answers into per-row arrays. `extend` makes the figures after a live append
from the figures before it (the same figures, made from the first changed message on). `ordered` (and
`window.window_figures`) are what `report` states too, so the app's header and bar and the CLI give the same numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from inspector.core import categories as cat
from inspector.core.pairing import PairingCheck
from inspector.core.figures.model import Figures, Links, PromptInfo, RequestPoint, Settings
from inspector.core.figures.preview import micro_saving, plan_estimates
from inspector.core.limits import WindowInfo, window_info
from inspector.core.model import Message, Session
from inspector.core.window import window_figures

if TYPE_CHECKING:
    from inspector.core.compaction.estimates import Estimates
    from inspector.core.follower import Change
    from inspector.core.accounting import Accounting

UNDO = 256  # messages whose pairing check `extend` can undo (a response's later line changes its last messages)

# Drawing order of the categories; tool results per tool come after tool calls, largest first.
ORDER = (cat.NOT_READ, cat.SYSTEM_TOOLS, cat.SUMMARIZED, cat.MEMORY, cat.UNRECORDED, cat.COMPACTION_SUMMARY,
         cat.USER_PROMPTS, cat.INJECTED, cat.ASSISTANT_TEXT, cat.THINKING, cat.TOOL_CALLS, cat.TOOL_RESULTS, cat.MEDIA,
         cat.PROVISIONAL)


def rank(key: str) -> int:
    """Where a category key goes in the drawing order."""
    base = key.split(":", 1)[0]
    return ORDER.index(base) if base in ORDER else len(ORDER)


def ordered(by_category: dict[str, int]) -> list[tuple[str, int]]:
    """The categories in drawing order, free and reserved left out; one at 0 is dropped, a negative one stays (so
    the parts still sum to the figure: usage measured below the prefix plus the estimates)."""
    skip = (cat.FREE, cat.RESERVED)
    return [(k, v) for k, v in sorted(by_category.items(), key=lambda kv: (rank(kv[0]), -kv[1]))
            if k not in skip and v]


def settings_window(session: Session, settings: Settings) -> WindowInfo:
    return window_info(session, policy=settings.policy, window=settings.window)


def links(session: Session) -> Links:
    lk = Links(session, {}, {}, {})
    _link(session.messages, 0, lk, set(), [])
    return lk


def _link(messages: Sequence[Message], lo: int, lk: Links, dups: set[str], linked: list[tuple[str, ...]]) -> None:
    """Add the tool calls and results of messages[lo:] to `lk` (a later one wins, as in a fresh walk) and what each
    message added to `linked`; the ids met again go to `dups` (taking such an id back out cannot restore the earlier
    entry: `extend` then walks anew)."""
    names, call_at, result_at = lk.tool_names, lk.call_at, lk.result_at
    for i in range(lo, len(messages)):
        ids: list[str] = []
        for b in messages[i].blocks:
            if b.tool_id and b.type == "tool_use":
                if b.tool_id in call_at:
                    dups.add(b.tool_id)
                call_at[b.tool_id] = i
                names[b.tool_id] = b.tool_name or "?"
                ids.append("u" + b.tool_id)
            elif b.tool_id and b.type == "tool_result":
                if b.tool_id in result_at:
                    dups.add(b.tool_id)
                result_at[b.tool_id] = i
                ids.append("r" + b.tool_id)
        linked.append(tuple(ids))


class _Trail:
    """What `extend` resumes from, besides the figures themselves: taken over (and changed in place) by the next
    `extend`, like an accounting's resume state."""

    __slots__ = ("session", "check", "dups", "linked", "upto", "request_at", "starts", "ordered", "prefix",
                 "estimates")

    def __init__(self, session: Session, check: PairingCheck, dups: set[str], linked: list[tuple[str, ...]],
                 upto: list[int], request_at: list[int], starts: set[int], ordered: bool, prefix: int) -> None:
        self.session = session  # the figures' session: the state belongs to it
        self.check = check  # the orphans of the whole history, with the last UNDO messages' checks undoable
        self.dups = dups  # tool ids met more than once (a superset only makes walking anew more frequent)
        self.linked = linked  # per message, "u" + the id of each tool_use it links, "r" + each tool_result's
        self.upto = upto  # upto[j]: the timeline's points made by requests[:j]
        self.request_at = request_at  # each request's message index
        self.starts = starts  # where compactions restart the context (not the session's list: a loader may grow it)
        self.ordered = ordered  # the requests' message indices (those >= 0) never go down
        self.prefix = prefix
        self.estimates: tuple[Estimates, int] | None = None  # the microcompaction note's, and the context's start


def _cumulative(acc: Accounting, prev: list[int], d: int, starts: set[int], lo_request: int) -> list[int]:
    """Context held through each message: the prefix, then each message's figure (and the window's growth no
    message explains at each request's message), restarting at every compaction; `prev[:d]` kept. The requests
    whose message is at `d` or later are those from `lo_request` on (the caller knows their indices never go
    down)."""
    prefix, estimated, measured, derived = acc.prefix, acc.estimated, acc.measured, acc.derived
    extra = {rf.request.message_index: rf.unrecorded for rf in acc.requests[lo_request:] if rf.unrecorded}
    out = prev[:d]
    run = out[-1] if out else prefix
    for i in range(d, len(estimated)):
        if i in starts:
            run = prefix
        m = measured[i]
        run += (derived.get(i, estimated[i]) if m is None else m) + extra.get(i, 0)
        out.append(run)
    return out


def _ordered_requests(requests: Sequence, lo: int, last: int) -> bool:
    """Whether requests[lo:]'s message indices (those >= 0) never go down, after `last`."""
    for r in requests[lo:]:
        if r.message_index >= 0:
            if r.message_index < last:
                return False
            last = r.message_index
    return True


def _points(acc: Accounting, lo: int, points: list[RequestPoint], upto: list[int]) -> None:
    """The timeline's points of acc.requests[lo:], appended to `points`, their counts to `upto` (in place)."""
    for rf in acc.requests[lo:]:
        if rf.request.message_index >= 0:
            points.append(RequestPoint(rf.request.message_index, rf.measured, rf.predicted, rf.request.timestamp))
        upto.append(len(points))


def compute(session: Session, settings: Settings, known: Links | None = None,
            accounting: Accounting | None = None) -> Figures:
    """Every figure the views draw, from the core, for `session` under `settings` (run it in a worker).
    `known`: the session's links if already computed; `accounting`: its token accounting if already made (an
    append's, `tokens.account_appended`; a step's, `compacted.after_step`)."""
    acc = _accounting(session, settings, accounting)
    dups: set[str] = set()
    linked: list[tuple[str, ...]] = []
    if known is not None and known.session is session:
        lk = known  # (its repeated ids are not known: these figures are not extended)
    else:
        lk = Links(session, {}, {}, {})
        _link(session.messages, 0, lk, dups, linked)
    check = PairingCheck(0, UNDO)
    check.check(session.messages)
    points: list[RequestPoint] = []
    upto = [0]
    _points(acc, 0, points, upto)
    starts = {c.index for c in session.compactions if c.kind == "compact"}
    trail = None if lk is known or acc.derived else _Trail(
        session, check, dups, linked, upto, [r.message_index for r in session.requests], starts,
        _ordered_requests(session.requests, 0, 0), acc.prefix)
    cumulative = _cumulative(acc, [], 0, starts, 0)
    return _figures(session, settings, acc, lk, check, points, cumulative, trail,
                    2 * len(session.messages) + len(acc.requests), changed=None)


def extend(previous: Figures, session: Session, settings: Settings, accounting: Accounting,
           change: Change | None) -> Figures:
    """`compute(session, settings, accounting=accounting)` from `previous`, the figures of the state `change` started
    from (follow mode): the tool links, the orphans, the cumulative context and the timeline are extended from the
    first changed message (and the first message the accounting re-estimated) instead of walked again, so an append
    costs what it adds. A rebuild, other settings, a change older than the undo log, a tool id taken back that
    appeared twice, figures that a compaction after the last request changed: computed afresh. Either way the
    figures equal a fresh `compute` (`resume` is consumed)."""
    state = previous.resume
    acc = _accounting(session, settings, accounting)
    old = previous.session
    if (not isinstance(state, _Trail) or change is None or change.rebuilt or change.session is not session
            or state.session is not old or previous.settings != settings or acc is not accounting or acc.derived):
        return compute(session, settings, accounting=acc)
    changed = min([change.first_new, *change.updated, len(state.linked)])
    taken = [x for ids in state.linked[changed:] for x in ids]  # (not the old messages: a loader may grow them)
    if state.dups.intersection(x[1:] for x in taken) or len(state.upto) <= (acc.resumed_at or 0):
        return compute(session, settings, accounting=acc)
    previous.resume = None  # taken over
    lk = Links(session, dict(previous.tool_names), dict(previous.call_at), dict(previous.result_at))
    for x in taken:  # each appeared once as what it is: its entries are the ones being taken back
        if x[0] == "r":
            del lk.result_at[x[1:]]
        else:
            del lk.tool_names[x[1:]], lk.call_at[x[1:]]
    del state.linked[changed:]
    _link(session.messages, changed, lk, state.dups, state.linked)
    check = state.check
    check.follow(session.messages, 0, changed)
    # The timeline: the requests before the first one the accounting redid kept their figures (and points).
    k = acc.resumed_at or 0
    del state.upto[k + 1:]
    points = previous.requests[:state.upto[k]]
    _points(acc, k, points, state.upto)
    # The cumulative context: kept up to the first message changed, re-estimated, or at a changed request's message
    # or compaction; from the start when the prefix moved or the requests' messages went back (then which ones
    # fall after `d` is not a suffix of them).
    reqs = session.requests
    before = next((reqs[j].message_index for j in range(k - 1, -1, -1) if reqs[j].message_index >= 0), 0)
    state.ordered = state.ordered and _ordered_requests(session.requests, k, before)
    was = state.request_at[k:]
    state.request_at[k:] = [r.message_index for r in session.requests[k:]]
    d = min([changed, acc.kept, len(previous.cumulative), *(at for at in was + state.request_at[k:] if at >= 0)])
    starts = {c.index for c in session.compactions if c.kind == "compact"}
    for i in starts.symmetric_difference(state.starts):
        d = min(d, i)
    state.starts = starts
    if acc.prefix != state.prefix or not state.ordered:
        d = 0
    lo_request = len(acc.requests)
    while lo_request and (acc.requests[lo_request - 1].request.message_index >= d
                          or acc.requests[lo_request - 1].request.message_index < 0):
        lo_request -= 1
    cumulative = _cumulative(acc, previous.cumulative, d, starts, lo_request)
    state.session, state.prefix = session, acc.prefix
    work = len(session.messages) - changed + check.steps + len(acc.requests) - k + len(cumulative) - d
    kept = [b for b in previous.cache_breaks if b.request < k]  # a break is read from its request and the one before
    return _figures(session, settings, acc, lk, check, points, cumulative, state, work, (kept, k),
                    (changed, old))


def _accounting(session: Session, settings: Settings, accounting: Accounting | None) -> Accounting:
    from inspector.core import tokens

    if accounting is not None and accounting.session is session and accounting.estimator == settings.estimator:
        return accounting
    return tokens.account(session, settings.estimator)


def _figures(session: Session, settings: Settings, acc: Accounting, lk: Links, check: PairingCheck,
             points: list[RequestPoint], cumulative: list[int], trail: _Trail | None, work: int,
             breaks: tuple[list, int] | None = None, changed: tuple[int, Session] | None = None) -> Figures:
    """The figures from their parts; the window, the categories, the microcompaction preview and the prompt view
    are made here. `breaks`: the cache breaks before a request index that are kept (`extend`), and that index;
    `changed`: the first message changed since the previous figures (`extend`), and their session."""
    window = window_figures(settings_window(session, settings), acc.current_context, acc.current_measured is not None)
    figures = Figures(
        session=session, settings=settings, accounting=acc, estimated=acc.estimated, measured=acc.measured,
        derived=acc.derived, cumulative=cumulative, category=acc.category, window=window,
        categories=ordered(acc.by_category), categories_measured=acc.current_measured is not None and not acc.derived,
        requests=points, tool_names=lk.tool_names, call_at=lk.call_at, result_at=lk.result_at,
        orphans={o.index for o in check.orphans()}, prompt=_prompt(session, settings, acc), resume=trail, work=work)
    figures.micro_saving, figures.micro_note = micro_saving(figures, _plan_estimates(figures, trail, changed))
    figures.prefix_sections, figures.cache_breaks = _prefix_and_cache(session, acc, breaks)
    return figures


def _plan_estimates(figures: Figures, trail: _Trail | None, changed: tuple[int, Session] | None) -> Estimates:
    """The estimates the microcompaction note plans with: those of the figures before (`trail`'s) when an append
    kept the current context's start and the estimator gives the same figures, its changed messages (from the
    first changed on, in either session: a loader may grow a message in place) estimated again; else new ones.
    A fitted estimator's are not the figures' own, so this saves estimating the whole context at every append."""
    session = figures.session
    est = plan_estimates(session, figures.settings.estimator, figures.estimated)
    start = session.context_start
    old, was = trail.estimates if trail is not None and trail.estimates is not None else (None, -1)
    if old is not None and changed is not None and was == start and _same(old.estimator, est.estimator) and \
            old.cached <= 2 * (len(session.messages) - start) + 256:  # (what left the context is dropped now and then)
        first, before = changed
        old.forget(session.messages[first:])
        old.forget(before.messages[first:])
        est = old
    if trail is not None:
        trail.estimates = est, start
    return est


def _same(a: object, b: object) -> bool:
    """Two estimators that give every message the same figure: the feature-fitted ones by equal ratios (the only
    ones kept: the others' plan estimates are the figures' own; `exact` asks the API)."""
    from inspector.core.estimators import Exact, FeatureEstimator

    return (type(a) is type(b) and isinstance(a, FeatureEstimator) and not isinstance(a, Exact)
            and vars(a).keys() == vars(b).keys()
            and all(v == vars(b)[k] for k, v in vars(a).items() if k != "_last_result"))


def _prefix_and_cache(session: Session, accounting: Accounting, breaks: tuple[list, int] | None) -> tuple[list, list]:
    """The prefix by name and the cache breaks: what the bar's legend, the prompt view and the timeline show."""
    from inspector.core.prefix import prefix_sections
    from inspector.core.prompt_cache import cache_breaks

    kept, start = breaks if breaks is not None else ([], 1)
    return prefix_sections(session, accounting), kept + cache_breaks(session, start=start)


def _prompt(session: Session, settings: Settings, accounting: Accounting) -> PromptInfo:
    from inspector.core.prompt import lint
    from inspector.core.prompt.session_view import session_prompt

    view = session_prompt(session, settings.estimator, accounting)
    return PromptInfo(view.sections, lint(view.sections, recommended=False), "; ".join(view.notes))
