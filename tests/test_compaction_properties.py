"""Invariants of every plan on random sessions (parallel calls, error results, responses split over messages):
pairing stays intact, the protected recent messages stay byte-identical, no plan adds tokens, the input is never
mutated."""

import copy

from compaction_sessions import sessions
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.core.compaction import (ClearSettings, ContextEditSettings, Estimates, SnipSettings, SummarySettings,
                                       apply, diff_sessions, find_orphans, find_split_point, plan_clear,
                                       plan_clear_tool_uses, plan_snip, plan_summary)
from inspector.core.compaction.micro import tool_names
from inspector.core.compaction.cuts import unsafe_cuts
from inspector.core.compaction.summary import request_messages

BOUNDED = settings(max_examples=80, deadline=None)
ESTIMATORS = st.sampled_from(["chars35", "blocks"])


def check_common(session, plan, snapshot):
    new = apply(plan) if plan.summary is None else apply(plan, summary="a short summary")
    assert session == snapshot, "planning or applying mutated the input"
    assert not find_orphans(new.context)
    assert new.messages[plan.protected_from:len(session.messages)] == session.messages[plan.protected_from:]
    return new


@BOUNDED
@given(sessions(), st.integers(0, 8), st.sampled_from([10, 200, 2000]), ESTIMATORS)
def test_snip_invariants(session, keep, max_chars, estimator):
    snapshot = copy.deepcopy(session)
    plan = plan_snip(session, SnipSettings(preserve_last_n=keep, max_chars=max_chars), estimator)
    assert plan.protected_from == max(0, len(session.messages) - keep)
    check_common(session, plan, snapshot)
    assert all(r.after <= r.before for r in plan.rows) and plan.after <= plan.before


@BOUNDED
@given(sessions(), st.integers(0, 6), ESTIMATORS)
def test_clear_invariants(session, keep, estimator):
    snapshot = copy.deepcopy(session)
    plan = plan_clear(session, ClearSettings(keep_recent=keep), estimator)
    new = check_common(session, plan, snapshot)
    assert all(r.after <= r.before for r in plan.rows)
    names = tool_names(session.messages)
    eligible = [(i, j) for i, m in enumerate(session.messages) for j, b in enumerate(m.blocks)
                if b.type == "tool_result" and names.get(b.tool_id) in ClearSettings().tools]
    for i, j in eligible[len(eligible) - keep:] if keep else []:
        assert new.messages[i].blocks[j] == session.messages[i].blocks[j]
    for i, m in enumerate(session.messages):  # nothing but eligible results changes
        for j, b in enumerate(m.blocks):
            if (i, j) not in eligible:
                assert new.messages[i].blocks[j] == b


@BOUNDED
@given(sessions(), st.integers(0, 4), st.booleans(), st.sampled_from([0, 100, 10**9]), ESTIMATORS)
def test_clear_tool_uses_invariants(session, keep, inputs, at_least, estimator):
    snapshot = copy.deepcopy(session)
    plan = plan_clear_tool_uses(session, ContextEditSettings(trigger=0, keep=keep, clear_tool_inputs=inputs,
                                                             clear_at_least=at_least), estimator)
    new = check_common(session, plan, snapshot)
    assert all(r.after <= r.before for r in plan.rows)
    assert plan.saved >= at_least or not plan.changed
    uses = [b.tool_id for m in session.messages for b in m.blocks if b.type == "tool_use"]
    kept = set(uses[len(uses) - keep:]) if keep else set()
    for old, now in zip(session.messages, new.messages):
        for a, b in zip(old.blocks, now.blocks):
            if a.tool_id in kept:
                assert a == b


@BOUNDED
@given(sessions(), st.sampled_from([0.0, 0.1, 0.3, 0.7, 1.0]), ESTIMATORS)
def test_summary_invariants(session, ratio, estimator):
    snapshot = copy.deepcopy(session)
    split = find_split_point(session.messages, ratio, Estimates(estimator))
    assert not unsafe_cuts(session.messages)[split]
    plan = plan_summary(session, SummarySettings(keep_ratio=ratio), estimator)
    if plan.summary is None:
        return
    assert plan.summary.split == split == plan.protected_from
    new = check_common(session, plan, snapshot)
    assert new.context[2:] == session.messages[split:]
    request = request_messages(plan.summary.old, plan.summary.prompt)
    assert request[0]["role"] == "user" and all(a["role"] != b["role"] for a, b in zip(request, request[1:]))
    ids_use = [b["id"] for m in request for b in m["content"] if b["type"] == "tool_use"]
    ids_res = [b["tool_use_id"] for m in request for b in m["content"] if b["type"] == "tool_result"]
    assert sorted(ids_use) == sorted(ids_res)


@BOUNDED
@given(sessions())
def test_diff_of_a_plan_matches_its_totals(session):
    plan = plan_snip(session, SnipSettings(preserve_last_n=2, max_chars=100))
    diff = diff_sessions(session, apply(plan))
    assert diff.before == plan.before and diff.after == plan.after
    assert diff.counts.get("changed", 0) == plan.counts.get("snipped", 0)
