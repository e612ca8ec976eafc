"""A plan's figures are the estimator's own: every changed message's figure after equals what the estimator gives
for the message `apply` builds, for every strategy and estimator, although plans price one-block messages without
building them (`Estimator.block`/`single`/`result`)."""

from pathlib import Path

import pytest
from compaction_sessions import call, prompt, results, sessions
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.core.compaction import (ClearSettings, ContextEditSettings, Estimates, SnipSettings, SummarySettings,
                                       apply, complete_summary, plan_clear, plan_clear_tool_uses, plan_snip,
                                       plan_summary)
from inspector.core.compaction.micro import CLEARED_MARKER, CONTEXT_EDIT_PLACEHOLDER, snip_text
from inspector.core.formats.blocks import edited_block
from inspector.core.estimators import SCRIPT_RATIOS, Calibrated, Estimator, Exact, get_estimator
from inspector.core.formats import load
from inspector.core.model import Block, Compaction, Message, Session

CORPUS = sorted((Path(__file__).parent / "corpus").glob("*.jsonl"))


def estimators() -> list[Estimator]:
    exact = Exact(client=object())  # only `state` calls the API: never here; the ratio of a past call is set
    exact.scale = 1.37
    factors = (1.3, 0.9, 1.1, 0.7, 1.2, 1, 0.8, 1.4, 0.6, 1.05, 1, 2)
    assert len(factors) == len(SCRIPT_RATIOS)
    fitted = Calibrated({"m": [r * f for r, f in zip(SCRIPT_RATIOS, factors)]}, model="m")
    return [get_estimator("chars35"), get_estimator("blocks"), get_estimator("script"), get_estimator("o200k"),
            fitted, exact]


def mixed_session() -> Session:
    """Shapes Claude Code sessions lack: parallel results in one message, a result with an image, non-Latin text."""
    nested = Block("tool_result", "", "n1", content=[Block("text", text="→ 目录 " * 900),
                                                     Block.of("image", media="png")])
    return Session("mixed", "neutral", [
        prompt("go"),
        call(("a1", "Read"), ("a2", "Bash"), text="two at once", response="r1"),
        results(("a1", "x" * 5000), ("a2", "déjà vu " * 700)),
        call(("n1", "Read"), response="r2"),
        Message("user", "tool_result", [nested]),
        call(("c1", "Grep"), response="r3"),
        results(("c1", "{\"k\": [1, 2]}" * 400), error=True),
        prompt("done?"),
    ])


SESSIONS = [load(p) for p in CORPUS] + [mixed_session()]


def plans(session: Session, est: Estimates) -> list:
    summary = plan_summary(session, SummarySettings(keep_ratio=0.3), est)
    return [plan_snip(session, SnipSettings(preserve_last_n=2, max_chars=300), est),
            plan_clear(session, ClearSettings(keep_recent=1), est),
            plan_clear_tool_uses(session, ContextEditSettings(trigger=0, keep=1), est),
            plan_clear_tool_uses(session, ContextEditSettings(trigger=0, keep=0, clear_tool_inputs=True), est),
            complete_summary(summary, "<summary>what happened, in short</summary>") if summary.summary else summary]


def check_figures(plan, estimator: Estimator) -> None:
    new = apply(plan)
    for row in plan.rows:
        if row.new is not None:
            assert row.after == estimator.message(new.messages[row.new]), (plan.strategy, row.fate, row.old)
    assert plan.after == sum(estimator.message(m) for m in new.context)


@pytest.mark.parametrize("estimator", estimators(), ids=lambda e: e.name)
def test_single_block_figures_are_the_message_figures(estimator):
    for session in SESSIONS:
        for m in session.messages:
            for b in m.blocks:
                assert estimator.single(estimator.block(b)) == estimator.message(Message(m.role, m.kind, [b]))
                if b.type == "tool_result":
                    snipped = snip_text(b.all_text(), 50) or ""
                    for text in (CLEARED_MARKER, CONTEXT_EDIT_PLACEHOLDER, snipped, "é→中"):
                        assert estimator.result(b, text) == estimator.block(edited_block(b, text, keep_media=False))


@pytest.mark.parametrize("estimator", estimators(), ids=lambda e: e.name)
def test_every_plan_figure_is_the_estimate_of_the_applied_message(estimator):
    changed = 0
    for session in SESSIONS:
        for plan in plans(session, Estimates(estimator)):
            check_figures(plan, estimator)
            changed += plan.changed
    assert changed >= 4 * len(SESSIONS)


@settings(max_examples=60, deadline=None)
@given(sessions(), st.sampled_from(["chars35", "blocks", "script"]))
def test_plan_figures_on_random_sessions(session, name):
    estimator = get_estimator(name)
    for plan in plans(session, Estimates(estimator)):
        check_figures(plan, estimator)


def test_the_context_is_reused_only_while_it_holds_the_same_messages():
    session = SESSIONS[-1]
    est = Estimates("chars35")
    context = est.context(session)
    assert est.context(session.copy_with(messages=list(session.messages))) is context  # same message objects
    swapped = list(session.messages)
    swapped[2] = swapped[2].copy_with()  # an equal message, but another object
    assert est.context(session.copy_with(messages=swapped)) is not context
    plan = plan_clear(session, ClearSettings(keep_recent=0), est)
    applied = apply(plan)
    assert est.context(applied) is not context
    assert est.context(applied).tokens == [est.estimator.message(m) for m in applied.messages]
    assert est.context(applied).tools == [
        (i, b) for i, m in enumerate(applied.messages) for b in m.blocks if b.type in ("tool_use", "tool_result")]
    later = applied.copy_with(compactions=[*applied.compactions, Compaction("compact", 3)])
    assert est.context(later).start == 3 and est.context(later).tokens == est.context(applied).tokens[3:]
    check_figures(plan_clear_tool_uses(later, ContextEditSettings(trigger=0, keep=0), est), est.estimator)
