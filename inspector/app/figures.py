"""What the views draw, computed once per (session, settings) from the core: the app's only bridge to the numbers.

Views never estimate and never parse: `compute` calls `inspector.core.tokens.account` and
`inspector.core.limits.window_info` and flattens their answers into plain per-row arrays, so drawing a row is a
lookup. Changing a setting means calling `compute` again (in a worker) and handing every view the new `Figures`.
Follow mode's exact figures after an append are `extend`ed from the previous ones instead (the same figures, made
from the first changed message on).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from inspector.core.compaction.pairing import PairingCheck
from inspector.core.model import Message, Session

if TYPE_CHECKING:
    from inspector.core.compaction.plan import Estimates
    from inspector.core.live import Change
    from inspector.core.tokens import Accounting

UNDO = 256  # messages whose pairing check `extend` can undo (a response's later line changes its last messages)


@dataclass(slots=True)
class Settings:
    """Everything the user can change in the settings panel; each change re-computes the figures at once."""

    policy: str | None = None  # None: the session's own (inspector.core.limits.default_policy)
    window: int | None = None  # None: the model's own window
    estimator: str = "calibrated"
    micro_strategy: str = "clear"  # clear (Claude Code) or snip (the reference design)
    keep_recent: int = 5  # clear: results kept
    preserve_last_n: int = 6  # snip: messages protected at the end
    max_chars: int = 2000  # snip: results longer than this are cut


@dataclass(slots=True)
class Window:
    """The window and the policy's thresholds, and how full it is now."""

    model: str | None
    window: int
    reserve: int
    policy: str
    thresholds: dict[str, int]  # warning / autocompact / blocking, in tokens (absent when the policy has none)
    used: int
    used_measured: bool  # True when `used` rests on the last request's measured usage
    free: int
    percent: float


@dataclass(slots=True)
class RequestPoint:
    """One request on the timeline: its measured context and, when known, what the hybrid figure predicted."""

    message_index: int
    measured: int
    predicted: int | None
    timestamp: str | None


@dataclass(slots=True)
class Forecast:
    """When the next auto-compact fires if the context keeps growing at the recent rate."""

    rate: float  # tokens per request, over the last `over` requests
    over: int
    requests_left: int | None  # None: not growing, or no threshold
    eta: datetime | None  # from the recent time per request


@dataclass(slots=True)
class Links:
    """How a session's tool calls and results refer to each other: known as soon as it is loaded, so the list and
    the detail pane can show it while the token figures are still being computed."""

    session: Session
    tool_names: dict[str, str]  # tool_use id -> tool name
    call_at: dict[str, int]  # tool_use id -> index of the message making the call
    result_at: dict[str, int]  # tool_use id -> index of the message with its result


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


@dataclass(slots=True)
class Figures:
    session: Session
    settings: Settings
    estimated: list[int]
    measured: list[int | None]
    cumulative: list[int]  # context the window held up to and including each message
    category: list[str]
    window: Window
    categories: list[tuple[str, int]]  # in drawing order, free and reserved excluded
    categories_measured: bool
    requests: list[RequestPoint]
    tool_names: dict[str, str] = field(default_factory=dict)  # tool_use id -> tool name
    call_at: dict[str, int] = field(default_factory=dict)  # tool_use id -> index of the message making the call
    result_at: dict[str, int] = field(default_factory=dict)  # tool_use id -> index of the message with its result
    orphans: set[int] = field(default_factory=set)  # indices of messages with an unanswered tool_use or lone result
    micro_saving: int | None = None  # what the chosen microcompaction would free now (None: not computed)
    micro_note: str = ""
    prompt: PromptInfo | None = None
    resume: _Trail | None = field(default=None, repr=False, compare=False)  # for `extend`
    work: int = field(default=0, repr=False, compare=False)  # messages + requests walked to make it (tests, benchmarks)

    def size(self, index: int) -> int:
        """A message's tokens as the list sorts and bars them: measured where known, else estimated."""
        m = self.measured[index]
        return self.estimated[index] if m is None else m


def forecast(points: list[RequestPoint], threshold: int | None, over: int = 10) -> Forecast:
    """Linear forecast from the last `over` requests since the last drop in context (a compaction resets growth)."""
    recent: list[RequestPoint] = []
    for p in points:
        if recent and p.measured < recent[-1].measured * 0.7:
            recent = []
        recent.append(p)
    recent = recent[-(over + 1):]
    if len(recent) < 2:
        return Forecast(0.0, 0, None, None)
    rate = (recent[-1].measured - recent[0].measured) / (len(recent) - 1)
    left = None
    if threshold is not None and rate > 0:
        gap = threshold - recent[-1].measured
        left = max(0, int(gap / rate + 0.999))
    eta = None
    t0, t1 = _when(recent[0].timestamp), _when(recent[-1].timestamp)
    if left is not None and t0 and t1 and t1 > t0:
        eta = t1 + (t1 - t0) / (len(recent) - 1) * left
    return Forecast(rate, len(recent) - 1, left, eta)


def _when(stamp: str | None) -> datetime | None:
    if not stamp or not isinstance(stamp, str):  # a file may hold a number there
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None


@dataclass(slots=True)
class PromptInfo:
    """The prompt view's content: sections (core `Section`s) and lint findings, with a note on their provenance."""

    sections: list
    findings: list
    note: str = ""


# Drawing order of the bar's categories (core keys); tool results per tool come after tool_calls, largest first.
ORDER = ("system_tools", "memory", "unrecorded", "compaction_summary", "user_prompts", "injected", "assistant_text",
         "thinking", "tool_calls", "tool_results", "media")


def _ordered(by_category: dict[str, int]) -> list[tuple[str, int]]:
    from inspector.core.categories import label

    def key(item: tuple[str, int]) -> tuple[int, int]:
        name, tokens = item
        base = name.split(":", 1)[0]
        return (ORDER.index(base) if base in ORDER else len(ORDER), -tokens)

    skip = ("free", "reserved")  # a negative category stays: the legend shows it so that the figures add up
    return [(label(k), v) for k, v in sorted(by_category.items(), key=key) if k not in skip and v]


@dataclass(slots=True)
class _Trail:
    """What `extend` resumes from, besides the figures themselves: taken over (and changed in place) by the next
    `extend`, like an accounting's `_Resume`."""

    session: Session  # the figures' session: the state belongs to it
    check: PairingCheck  # the orphans of the whole history, with the last UNDO messages' checks undoable
    dups: set[str]  # tool ids met more than once (a superset only makes walking anew more frequent)
    linked: list[tuple[str, ...]]  # per message, "u" + the id of each tool_use it links, "r" + each tool_result's
    upto: list[int]  # upto[j]: the timeline's points made by requests[:j]
    request_at: list[int]  # each request's message index
    starts: set[int]  # where compactions restart the context (not the session's list: a loader may grow it)
    ordered: bool  # the requests' message indices (those >= 0) never go down
    prefix: int


def _cumulative(acc: Accounting, prev: list[int], d: int, starts: set[int], lo_request: int) -> list[int]:
    """Context held through each message: the prefix, then each message's size (and the window's growth no message
    explains at each request's message), restarting at every compaction; `prev[:d]` kept. The requests whose
    message is at `d` or later are those from `lo_request` on (the caller knows their indices never go down)."""
    prefix, estimated, measured = acc.prefix, acc.estimated, acc.measured
    extra = {rf.request.message_index: rf.unrecorded for rf in acc.requests[lo_request:] if rf.unrecorded}
    out = prev[:d]
    run = out[-1] if out else prefix
    for i in range(d, len(estimated)):
        if i in starts:
            run = prefix
        m = measured[i]
        run += (estimated[i] if m is None else m) + extra.get(i, 0)
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


def compute(session: Session, settings: Settings, known: Links | None = None, accounting=None) -> Figures:
    """Every figure the views draw, from the core, for `session` under `settings` (run it in a worker).
    `known`: the session's links if already computed; `accounting`: its token accounting if already made (follow
    mode makes it from the previous one, `tokens.account_appended`)."""
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
    trail = None if lk is known else _Trail(session, check, dups, linked, upto,
                                            [r.message_index for r in session.requests], starts,
                                            _ordered_requests(session.requests, 0, 0), acc.prefix)
    cumulative = _cumulative(acc, [], 0, starts, 0)
    return _figures(session, settings, acc, lk, check, points, cumulative, trail,
                    2 * len(session.messages) + len(acc.requests))


def extend(previous: Figures, session: Session, settings: Settings, accounting: Accounting,
           change: Change | None) -> Figures:
    """`compute(session, settings, accounting=accounting)` from `previous`, the figures of the state `change` started
    from (follow mode): the tool links, the orphans, the cumulative context and the timeline are extended from the
    first changed message (and the first message the accounting re-estimated) instead of walked again, so an append
    costs what it adds. A rebuild, other settings, a change older than the undo log, a tool id taken back that
    appeared twice: computed afresh. Either way the figures equal a fresh `compute` (`resume` is consumed)."""
    state = previous.resume
    acc = _accounting(session, settings, accounting)
    old = previous.session
    if (state is None or change is None or change.rebuilt or change.session is not session or state.session is not old
            or previous.settings != settings or acc is not accounting):
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
    return _figures(session, settings, acc, lk, check, points, cumulative, state, work)


def _accounting(session: Session, settings: Settings, accounting: Accounting | None) -> Accounting:
    from inspector.core import tokens

    if accounting is not None and accounting.session is session and accounting.estimator == settings.estimator:
        return accounting
    return tokens.account(session, settings.estimator)


def _figures(session: Session, settings: Settings, acc: Accounting, lk: Links, check: PairingCheck,
             points: list[RequestPoint], cumulative: list[int], trail: _Trail | None, work: int) -> Figures:
    """The figures from their parts; the window, the bar's categories and notes, the prompt view are made here."""
    from inspector.core import limits

    info = limits.window_info(session, policy=settings.policy, window=settings.window)
    state = info.state(acc.current_context)
    window = Window(model=info.model, window=info.context_window, reserve=info.reserved, policy=info.policy,
                    thresholds=info.thresholds.to_dict(), used=state.used,
                    used_measured=acc.current_measured is not None, free=state.free, percent=state.percent)
    saving, note = micro_saving(session, settings, plan_estimates(session, settings.estimator, acc.estimated))
    return Figures(
        session=session, settings=settings, estimated=acc.estimated, measured=acc.measured,
        cumulative=cumulative, category=acc.category, window=window,
        categories=_ordered(acc.by_category), categories_measured=acc.current_measured is not None,
        requests=points, tool_names=lk.tool_names, call_at=lk.call_at, result_at=lk.result_at,
        orphans={o.index for o in check.orphans()},
        micro_saving=saving, micro_note=note, prompt=_prompt(session, settings, acc), resume=trail, work=work)


def plan_estimates(session: Session, estimator: str | None, estimated: list[int],
                   fitted_on: Session | None = None) -> Estimates:
    """The estimates compaction plans of `session` read, by the estimator the figures use (so that what the bar
    says a microcompaction frees is what the workbench shows; `calibrated` fitted on `fitted_on`, by default the
    session itself), seeded with the figures' own estimates of the current context where the estimator gives a
    message the same figure alone (not the feature-fitted or exact ones, which estimate a whole state at once)
    instead of estimating 100,000 messages again."""
    from inspector.core.compaction.plan import Estimates
    from inspector.core.estimators import Exact, FeatureEstimator
    from inspector.core.tokens import estimator_for

    est = Estimates(estimator_for(fitted_on or session, estimator))
    if not isinstance(est.estimator, (FeatureEstimator, Exact)):
        start = session.context_start  # what plans read
        for m, tokens in zip(session.messages[start:], estimated[start:]):
            est.remember(m, tokens)
    return est


def micro_saving(session: Session, settings: Settings,
                 estimates: Estimates | None = None) -> tuple[int | None, str]:
    """What the chosen microcompaction would free in the current context, estimated as the figures are, from the
    core's plan."""
    from inspector.core.compaction.micro import ClearSettings, SnipSettings
    from inspector.core.compaction.pipeline import plan_strategy

    if settings.micro_strategy == "snip":
        params: object = SnipSettings(preserve_last_n=settings.preserve_last_n, max_chars=settings.max_chars)
    else:
        params = ClearSettings(keep_recent=settings.keep_recent)
    if estimates is None:
        from inspector.core.compaction.plan import Estimates
        from inspector.core.tokens import estimator_for

        estimates = Estimates(estimator_for(session, settings.estimator))
    plan = plan_strategy(settings.micro_strategy, session, params, estimates)
    return plan.saved, plan.note


def _prompt(session: Session, settings: Settings, accounting: object) -> PromptInfo:
    from inspector.core.prompt import lint
    from inspector.core.prompt.session_view import session_prompt

    view = session_prompt(session, settings.estimator, accounting)  # type: ignore[arg-type]
    return PromptInfo(view.sections, lint(view.sections, recommended=False), "; ".join(view.notes))
