"""maybe_compact: microcompaction first, re-check, then summary; the circuit breaker."""

import pytest
from compaction_sessions import RecordingProvider, tool_session

from inspector.core.compaction import (CircuitBreaker, ClearSettings, CompactionPolicy, Compactor, Estimates,
                                       SummaryError, find_orphans, maybe_compact, plan_strategy)


def size(session) -> int:
    return Estimates().total(session.context)


def test_below_threshold_nothing_happens():
    s = tool_session(10)
    out = maybe_compact(s, CompactionPolicy(threshold=size(s)))
    assert out.session is s and not out.fired and out.error is None
    assert "within threshold" in out.describe()


def test_microcompaction_alone_when_it_is_enough():
    s = tool_session(10)
    provider = RecordingProvider()
    out = maybe_compact(s, CompactionPolicy(threshold=size(s) - 1000), provider=provider)
    assert [p.strategy for p in out.plans] == ["snip"]
    assert not provider.calls
    assert out.after == out.figure - out.plans[0].saved <= out.threshold
    assert out.session.compactions[-1].kind == "microcompact" and out.session.compactions[-1].trigger == "auto"


def test_summary_after_microcompaction_when_still_above():
    s = tool_session(10)
    breaker = CircuitBreaker()
    breaker.record_failure("earlier")
    out = maybe_compact(s, CompactionPolicy(threshold=1000), provider=RecordingProvider(), breaker=breaker)
    assert [p.strategy for p in out.plans] == ["snip", "summary"]
    assert out.session.context[0].kind == "compact_summary"
    assert not find_orphans(out.session.context)
    assert breaker.failures == 0 and breaker.status() == "ready"
    assert out.after < out.figure
    assert "snip" in out.describe() and "summary" in out.describe()


def test_measure_is_the_figure_compared():
    s = tool_session(3)
    out = maybe_compact(s, CompactionPolicy(threshold=50_000), measure=lambda _: 60_000, provider=RecordingProvider())
    assert out.figure == 60_000 and out.fired


def test_breaker_opens_after_three_failures_and_resets():
    s = tool_session(10)
    compactor = Compactor(CompactionPolicy(threshold=1000, micro=None),
                          provider=RecordingProvider(fail=SummaryError("overloaded")))
    for k in range(3):
        out = compactor(s)
        assert out.error == "overloaded" and not out.fired
    assert compactor.breaker.open and out.breaker_open
    assert len(compactor.provider.calls) == 3
    out = compactor(s)
    assert len(compactor.provider.calls) == 3  # no fourth attempt
    assert "stopped after 3 consecutive failures" in out.error and "overloaded" in out.error
    compactor.breaker.reset()
    compactor.provider.fail = None
    out = compactor(s)
    assert out.fired and compactor.breaker.failures == 0


def test_breaker_open_still_allows_microcompaction():
    s = tool_session(10)
    breaker = CircuitBreaker(limit=1)
    breaker.record_failure("x")
    out = maybe_compact(s, CompactionPolicy(threshold=1000), breaker=breaker, provider=RecordingProvider())
    assert [p.strategy for p in out.plans] == ["snip"] and out.breaker_open


def test_a_summary_no_smaller_than_its_input_is_a_failure():
    s = tool_session(10, size=300)
    breaker = CircuitBreaker()
    out = maybe_compact(s, CompactionPolicy(threshold=10, micro=None), breaker=breaker,
                        provider=RecordingProvider(answer="z" * 100_000))
    assert "no smaller" in out.error and breaker.failures == 1 and out.session is s


def test_without_a_provider_the_summary_plan_is_left_pending():
    s = tool_session(10)
    out = maybe_compact(s, CompactionPolicy(threshold=1000, micro="clear"))
    assert [p.strategy for p in out.plans] == ["clear"]
    assert out.pending is not None and out.pending.pending and out.error is None
    assert "no provider" in out.describe()


def test_plan_strategy_checks_names_and_settings():
    with pytest.raises(ValueError, match="unknown strategy 'nope'"):
        plan_strategy("nope", tool_session(1))
    with pytest.raises(ValueError, match="snip takes SnipSettings, not ClearSettings"):
        plan_strategy("snip", tool_session(1), ClearSettings())
