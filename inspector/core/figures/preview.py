"""The microcompaction the settings preview ("microcompact frees ~N" on the bar), and what a plan is applied as.

The saving is the figure before minus the figure of the state the plan makes (`compacted.after_step`), so the bar
states what the workbench's step, `compact --dry-run` and the report of the export state.
"""

from __future__ import annotations

from inspector.core.accounting import Accounting
from inspector.core.compacted import after_step
from inspector.core.compaction.apply import apply
from inspector.core.compaction.estimates import Estimates
from inspector.core.compaction.plan import Plan
from inspector.core.figures.model import Figures, Settings
from inspector.core.model import Session

PENDING_TEXT = "(summary pending)"


def applied(plan: Plan, summary: str | None = None, trigger: str = "manual", pre_tokens: int | None = None) -> Session:
    """The session after `plan` (`summary`: its text; a pending summary without one: a placeholder; `pre_tokens`:
    the whole context before, which the compaction record states as Claude Code's preTokens)."""
    if not plan.changed:
        return plan.session
    if summary is None and plan.pending:
        summary = PENDING_TEXT
    return apply(plan, summary, trigger=trigger, pre_tokens=pre_tokens)


def followed(before: Accounting, session: Session) -> Accounting:
    """The accounting of `session`, a step just applied to `before.session` (`compacted.after_step`), its new
    compaction record stating what the step freed (the record is the step's own: nobody holds it yet)."""
    acc = after_step(before, session)
    if session.compactions and session is not before.session:
        session.compactions[-1].tokens_saved = before.current_context - acc.current_context
    return acc


def plan_estimates(session: Session, estimator: str | None, estimated: list[int],
                   fitted_on: Session | None = None) -> Estimates:
    """The estimates compaction plans of `session` read to decide what to change, by the estimator the figures
    use (`calibrated` fitted on `fitted_on`, by default the session itself), seeded with the figures' own
    estimates of the current context where the estimator gives a message the same figure alone (not the
    feature-fitted or exact ones, which estimate a whole state at once) instead of estimating 100,000 messages
    again."""
    from inspector.core.estimators import Exact, FeatureEstimator
    from inspector.core.tokens import estimator_for

    est = Estimates(estimator_for(fitted_on or session, estimator))
    if not isinstance(est.estimator, (FeatureEstimator, Exact)):
        start = session.context_start  # what plans read
        for m, tokens in zip(session.messages[start:], estimated[start:]):
            est.remember(m, tokens)
    return est


def micro_plan(session: Session, settings: Settings, estimates: Estimates | None = None) -> Plan:
    """The microcompaction the settings preview (clear, keep N, of the session's agent's tools; or snip, N chars)
    planned on `session`."""
    from inspector.core.compaction.micro import ClearSettings, SnipSettings, clearable_tools
    from inspector.core.compaction.pipeline import plan_strategy
    from inspector.core.tokens import estimator_for

    if settings.micro_strategy == "snip":
        params: object = SnipSettings(preserve_last_n=settings.preserve_last_n, max_chars=settings.max_chars)
    else:
        params = ClearSettings(clearable_tools(session.format), settings.keep_recent)
    if estimates is None:
        estimates = Estimates(estimator_for(session, settings.estimator))
    return plan_strategy(settings.micro_strategy, session, params, estimates)


def micro_saving(figures: Figures, estimates: Estimates | None = None) -> tuple[int | None, str]:
    """What the previewed microcompaction would free from `figures` (the figure before minus the figure after, as
    the workbench's step and the report of its export state it), and the plan's note; (None, why) where the
    figures cannot be followed (provisional ones)."""
    acc = figures.accounting
    if acc is None or figures.provisional:
        return None, ""
    session, settings = figures.session, figures.settings
    if estimates is None:
        estimates = plan_estimates(session, settings.estimator, figures.estimated)
    plan = micro_plan(session, settings, estimates)
    if not plan.changed:
        return 0, plan.note
    state = applied(plan)
    estimates.forget(state.messages[i] for i in plan.edits if i < len(state.messages))  # (edited copies: not kept)
    return acc.current_context - after_step(acc, state).current_context, plan.note
