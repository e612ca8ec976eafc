"""What the views draw, computed once per (session, settings) from the core: the app's only bridge to the numbers.

Views never estimate and never parse: `compute` calls `inspector.core.tokens.account` and
`inspector.core.limits.window_info` and flattens their answers into plain per-row arrays, so drawing a row is a
lookup. Changing a setting means calling `compute` again (in a worker) and handing every view the new `Figures`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from inspector.core.model import Session

if TYPE_CHECKING:
    from inspector.core.compaction.plan import Estimates


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
    call_at: dict[str, int] = {}
    result_at: dict[str, int] = {}
    names: dict[str, str] = {}
    for i, m in enumerate(session.messages):
        for b in m.blocks:
            if b.tool_id and b.type == "tool_use":
                call_at[b.tool_id] = i
                names[b.tool_id] = b.tool_name or "?"
            elif b.tool_id and b.type == "tool_result":
                result_at[b.tool_id] = i
    return Links(session, names, call_at, result_at)


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
    if not stamp:
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


def _cumulative(session: Session, sizes: list[int], prefix: int, extra: dict[int, int]) -> list[int]:
    """Context held through each message: the prefix, then each message's size, restarting at every compaction."""
    starts = {c.index for c in session.compactions if c.kind == "compact"}
    out, run = [], prefix
    for i, size in enumerate(sizes):
        if i in starts:
            run = prefix
        run += size + extra.get(i, 0)
        out.append(run)
    return out


def compute(session: Session, settings: Settings, known: Links | None = None, accounting=None) -> Figures:
    """Every figure the views draw, from the core, for `session` under `settings` (run it in a worker).
    `known`: the session's links if already computed; `accounting`: its token accounting if already made (follow
    mode makes it from the previous one, `tokens.account_appended`)."""
    from inspector.core import limits, tokens
    from inspector.core.compaction.pairing import find_orphans

    if accounting is not None and accounting.session is session and accounting.estimator == settings.estimator:
        acc = accounting
    else:
        acc = tokens.account(session, settings.estimator)
    sizes = [e if m is None else m for e, m in zip(acc.estimated, acc.measured)]
    unrecorded = {rf.request.message_index: rf.unrecorded for rf in acc.requests if rf.unrecorded}
    info = limits.window_info(session, policy=settings.policy, window=settings.window)
    state = info.state(acc.current_context)
    window = Window(model=info.model, window=info.context_window, reserve=info.reserved, policy=info.policy,
                    thresholds=info.thresholds.to_dict(), used=state.used,
                    used_measured=acc.current_measured is not None, free=state.free, percent=state.percent)
    lk = known if known is not None and known.session is session else links(session)
    saving, note = micro_saving(session, settings, plan_estimates(session, settings.estimator, acc.estimated))
    return Figures(
        session=session, settings=settings, estimated=acc.estimated, measured=acc.measured,
        cumulative=_cumulative(session, sizes, acc.prefix, unrecorded), category=acc.category, window=window,
        categories=_ordered(acc.by_category), categories_measured=acc.current_measured is not None,
        requests=[RequestPoint(rf.request.message_index, rf.measured, rf.predicted, rf.request.timestamp)
                  for rf in acc.requests if rf.request.message_index >= 0],
        tool_names=lk.tool_names, call_at=lk.call_at, result_at=lk.result_at,
        orphans={o.index for o in find_orphans(session.messages)},
        micro_saving=saving, micro_note=note, prompt=_prompt(session, settings, acc))


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
