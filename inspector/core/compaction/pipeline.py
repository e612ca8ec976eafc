"""The compaction pipeline the agent loop runs at the top of every iteration, and its circuit breaker.

`maybe_compact`: when the context figure passes the threshold, microcompaction first (free), re-check, then a
summary through the provider. Each step is a Plan, applied and returned in the outcome so the caller can show or
undo it. After `limit` consecutive failed summaries the breaker opens: no more summary attempts until a success or
a reset by hand, as Claude Code stops auto-compacting after 3 failures. No UI here: the outcome says what happened.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from inspector.core.compaction.micro import (ClearSettings, ContextEditSettings, SnipSettings, plan_clear,
                                             plan_clear_tool_uses, plan_snip)
from inspector.core.compaction.apply import apply
from inspector.core.compaction.estimates import Estimates
from inspector.core.compaction.plan import Plan
from inspector.core.compaction.provider import SummaryError, SummaryProvider
from inspector.core.compaction.summary import SummarySettings, plan_summary, run_summary
from inspector.core.model import Session

MicroStrategy = Literal["snip", "clear", "clear_tool_uses"]
MICRO_STRATEGIES: tuple[str, ...] = ("snip", "clear", "clear_tool_uses")
STRATEGIES: tuple[str, ...] = (*MICRO_STRATEGIES, "summary")
SETTINGS: dict[str, type] = {"snip": SnipSettings, "clear": ClearSettings, "clear_tool_uses": ContextEditSettings,
                             "summary": SummarySettings}


def plan_strategy(strategy: str, session: Session, settings: object | None = None,
                  estimates: Estimates | None = None, context_tokens: int | None = None) -> Plan:
    """Plan any strategy by name with its settings (None: the strategy's defaults). ValueError for an unknown
    strategy or settings of another strategy's type."""
    kind = SETTINGS.get(strategy)
    if kind is None:
        raise ValueError(f"unknown strategy {strategy!r}; choose from {', '.join(STRATEGIES)}")
    settings = kind() if settings is None else settings
    if not isinstance(settings, kind):
        raise ValueError(f"{strategy} takes {kind.__name__}, not {type(settings).__name__}")
    if strategy == "snip":
        return plan_snip(session, settings, estimates)  # type: ignore[arg-type]
    if strategy == "clear":
        return plan_clear(session, settings, estimates)  # type: ignore[arg-type]
    if strategy == "clear_tool_uses":
        return plan_clear_tool_uses(session, settings, estimates, context_tokens)  # type: ignore[arg-type]
    return plan_summary(session, settings, estimates)  # type: ignore[arg-type]


class CircuitBreaker:
    """Counts consecutive failed compactions; open after `limit` of them until a success or `reset()`."""

    def __init__(self, limit: int = 3) -> None:
        self.limit = limit
        self.failures = 0
        self.last_error: str | None = None

    @property
    def open(self) -> bool:
        return self.failures >= self.limit

    def record_failure(self, reason: str) -> None:
        self.failures += 1
        self.last_error = reason

    def record_success(self) -> None:
        self.failures = 0
        self.last_error = None

    def reset(self) -> None:
        self.record_success()

    def status(self) -> str:
        if self.open:
            return (f"auto-compaction stopped after {self.failures} consecutive failures "
                    f"(last: {self.last_error}); reset it to try again")
        if self.failures:
            return f"{self.failures} of {self.limit} consecutive compaction failures (last: {self.last_error})"
        return "ready"


@dataclass
class CompactionPolicy:
    """When and how to compact. `threshold` is in tokens of the compaction figure; `micro` None skips layer 1."""

    threshold: int
    micro: MicroStrategy | None = "snip"
    micro_settings: object | None = None
    summary: SummarySettings = field(default_factory=SummarySettings)
    estimator: str = "chars35"

    @classmethod
    def for_session(cls, session: Session, policy: str | None = None, window: int | None = None,
                    **changes: object) -> CompactionPolicy:
        """A policy whose threshold is the auto-compact threshold of a limits policy (reference, claude-code,
        codex, custom; None: the session's own) for the session's model and window. ValueError for an unknown
        policy."""
        from inspector.core.limits import window_info

        threshold = window_info(session, policy, window).thresholds.autocompact
        return cls(threshold=threshold, **changes)  # type: ignore[arg-type]


@dataclass
class CompactionOutcome:
    """What maybe_compact did. `session` is the session to continue with (the input when nothing was applied);
    `plans` the applied plans in order; `pending` a summary plan that could not run (no provider)."""

    session: Session
    figure: int
    after: int
    threshold: int
    plans: list[Plan] = field(default_factory=list)
    error: str | None = None
    breaker_open: bool = False
    pending: Plan | None = None

    @property
    def fired(self) -> bool:
        return bool(self.plans)

    def describe(self) -> str:
        if not self.plans and self.error is None and self.pending is None and not self.breaker_open:
            return f"context {self.figure:,} tokens within threshold {self.threshold:,}"
        steps = " then ".join(f"{p.strategy} (-{p.saved:,})" for p in self.plans) or "nothing applied"
        text = f"compaction at {self.figure:,} > {self.threshold:,} tokens: {steps}; now {self.after:,}"
        if self.pending is not None:
            text += "; summary needed but no provider is configured"
        if self.error:
            text += f"; failed: {self.error}"
        return text


def estimated_figure(estimates: Estimates) -> Callable[[Session], int]:
    """A measure for sessions without usage: the estimated size of the current context."""
    return lambda session: estimates.total(session.context)


def maybe_compact(session: Session, policy: CompactionPolicy, *, measure: Callable[[Session], int] | None = None,
                  provider: SummaryProvider | None = None, breaker: CircuitBreaker | None = None,
                  on_text: Callable[[str], None] | None = None, estimates: Estimates | None = None,
                  trigger: str = "auto") -> CompactionOutcome:
    """Compact `session` if its figure (from `measure`, e.g. last measured context + estimate since) exceeds the
    policy's threshold. Savings are subtracted from the figure measured before, since a measured figure cannot see
    edits made after its request."""
    est = estimates or Estimates(policy.estimator)
    figure = (measure or estimated_figure(est))(session)
    outcome = CompactionOutcome(session, figure, figure, policy.threshold)
    if figure <= policy.threshold:
        return outcome
    if policy.micro is not None:
        plan = plan_strategy(policy.micro, session, policy.micro_settings, est, context_tokens=figure)
        if plan.changed:
            outcome.session = apply(plan, trigger=trigger)
            outcome.plans.append(plan)
            outcome.after -= plan.saved
        if outcome.after <= policy.threshold:
            if breaker is not None:
                breaker.record_success()
            return outcome
    if breaker is not None and breaker.open:
        outcome.breaker_open = True
        outcome.error = breaker.status()
        return outcome
    plan = plan_summary(outcome.session, policy.summary, est)
    if plan.summary is None:
        return _failed(outcome, breaker, "nothing left to summarize")
    if provider is None:
        outcome.pending = plan
        return outcome
    try:
        plan = run_summary(plan, provider, on_text)
        new_session = apply(plan, trigger=trigger)
    except SummaryError as exc:
        return _failed(outcome, breaker, str(exc))
    new_size = est.total(new_session.context)
    if new_size >= plan.before:
        return _failed(outcome, breaker, f"the summary ({new_size:,} tokens) is no smaller than what it replaces")
    outcome.session = new_session
    outcome.plans.append(plan)
    outcome.after -= plan.before - new_size
    if breaker is not None:
        breaker.record_success()
    return outcome


def _failed(outcome: CompactionOutcome, breaker: CircuitBreaker | None, reason: str) -> CompactionOutcome:
    outcome.error = reason
    if breaker is not None:
        breaker.record_failure(reason)
        outcome.breaker_open = breaker.open
    return outcome


class Compactor:
    """maybe_compact with its state held: the policy, the breaker across iterations, the provider and the measure.
    The agent loop keeps one and calls it at the top of every iteration."""

    def __init__(self, policy: CompactionPolicy, provider: SummaryProvider | None = None,
                 measure: Callable[[Session], int] | None = None, breaker: CircuitBreaker | None = None) -> None:
        self.policy = policy
        self.provider = provider
        self.measure = measure
        self.breaker = breaker or CircuitBreaker()
        self.estimates = Estimates(policy.estimator)

    def __call__(self, session: Session, on_text: Callable[[str], None] | None = None,
                 trigger: str = "auto") -> CompactionOutcome:
        return maybe_compact(session, self.policy, measure=self.measure, provider=self.provider,
                             breaker=self.breaker, on_text=on_text, estimates=self.estimates, trigger=trigger)
