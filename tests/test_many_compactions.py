"""Sessions of thousands of compactions. The lookups asked per request (the context's start while a loader appends,
the microcompactions between two requests) answer as a scan of every compaction would. The long sessions
benchmarks/bench_formats.py times (lab recordings tiled by generate_agent_sessions.py) are what the loaders read
as the recording again and again: each copy adds the same messages and requests and one compaction, its ids its
own, with no warning; so the benchmark measures real records at length."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from inspector.core.formats import load
from inspector.core.model import Compaction, CompactionsByIndex, Session

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("generate_agent_sessions", ROOT / "benchmarks" / "generate_agent_sessions.py")
gen = sys.modules["generate_agent_sessions"] = importlib.util.module_from_spec(spec)  # (its dataclass looks itself up)
spec.loader.exec_module(gen)


@pytest.mark.parametrize("fmt", sorted(gen.RECORDINGS))
def test_each_copy_adds_the_recordings_messages_requests_and_a_compaction(fmt, tmp_path):
    sessions = [load(gen.generate(fmt, copies, tmp_path / str(copies) / gen.RECORDINGS[fmt].name.format(n="s")))
                for copies in (1, 2, 5)]
    one, two, five = sessions
    assert all(not s.warnings for s in sessions)
    assert [len(s.compactions) for s in sessions] == [1, 2, 5]
    assert all(c.trigger == one.compactions[0].trigger for c in five.compactions)
    for count in (lambda s: len(s.messages), lambda s: len(s.requests)):
        assert count(five) - count(two) == 3 * (count(two) - count(one)) > 0
    ids = [r.id for r in five.requests]
    assert len(set(ids)) == len(ids)
    # every window is the recording's own: its requests measure what the recording's did
    assert [r.measured_context for r in five.requests[-len(one.requests) + 1:]] == \
        [r.measured_context for r in two.requests[-len(one.requests) + 1:]]


STEPS = st.lists(st.tuples(st.sampled_from(["append", "trigger", "new list", "sort"]),
                           st.sampled_from(["compact", "microcompact"]), st.integers(0, 50)), max_size=40)


@settings(max_examples=200, deadline=None)
@given(STEPS, st.integers(-1, 51), st.integers(-1, 51))
def test_per_request_lookups_answer_as_a_scan_does(steps, lo, hi):
    """As loaders change compactions (append, a trigger told later, another list, a sort), `context_start` is the
    largest index of a full compaction and `CompactionsByIndex.between` those of a kind in (lo, hi]."""
    session = Session("s", "neutral")
    for op, kind, index in steps:
        cs = session.compactions
        if op == "append":
            cs.append(Compaction(kind, index))
        elif op == "trigger" and cs:
            cs[index % len(cs)] = Compaction(cs[index % len(cs)].kind, cs[index % len(cs)].index, trigger="auto")
        elif op == "new list":
            session.compactions = cs[index % (len(cs) + 1):]
        elif op == "sort":
            cs.sort(key=lambda c: -c.index)
        assert session.context_start == max((c.index for c in session.compactions if c.kind == "compact"), default=0)
    for kind in ("compact", "microcompact"):
        found = CompactionsByIndex(session.compactions, kind).between(lo, hi)
        assert sorted(map(id, found)) == sorted(id(c) for c in session.compactions if c.kind == kind and lo < c.index <= hi)
