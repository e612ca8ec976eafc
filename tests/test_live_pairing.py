"""Tool-pairing warnings of a followed session: after every update they equal a fresh `load()` of the file so far.
(That checking them costs what changed, not the context: test_live.py's append-work test.)"""

from __future__ import annotations

import json
import random

from hypothesis import given, settings, strategies as st

from inspector.core.pairing import MAX_PAIRING_WARNINGS, PairingCheck, find_orphans
from inspector.core.formats import load
from inspector.core.follower import Follower
from inspector.core.model import Block, Message

from test_live import COMPACT, append, chunks, same_as_fresh

REFUSE = "(the API would refuse this context)"


def pairing(session) -> list[str]:
    return [w.message for w in session.warnings if REFUSE in w.message or "more unpaired" in w.message]


def follow_in_chunks(path, data: bytes, pieces: list[bytes]):
    """Write the first line, follow, append `pieces` one by one: yields each update's change, checked against a
    fresh load (messages, compactions, every warning)."""
    first = data.index(b"\n") + 1
    path.write_bytes(data[:first])
    follower = Follower(path)
    same_as_fresh(follower.open(), path)
    for piece in pieces:
        append(path, piece)
        change = follower.update()
        same_as_fresh(change.session, path)
        yield follower, change


def with_orphans(lines: list[bytes], results: list[int]) -> list[bytes]:
    """The corpus with the tool_result of each message index in `results` answering an id no call has: an orphan
    result, and its call left unanswered."""
    session = load(COMPACT)
    out = list(lines)
    for index in results:
        message = session.messages[index]
        tool_id = next(b.tool_id for b in message.blocks if b.type == "tool_result").encode()
        line = message.lines[0] - 1
        out[line] = out[line].replace(b'"tool_use_id":"%s"' % tool_id, b'"tool_use_id":"toolu_nobody%d"' % index)
    return out


def test_claude_code_chunks_split_mid_line_warn_as_a_fresh_load_after_every_update(tmp_path):
    """Orphans before and after the compaction boundary, responses whose tool calls are answered chunks later,
    chunks ending mid-line: the followed warnings are a fresh load's every time."""
    lines = COMPACT.read_bytes().splitlines(keepends=True)
    session = load(COMPACT)
    start = session.context_start
    history = next(i for i, m in enumerate(session.messages[:start]) if m.kind == "tool_result" and i > 100)
    current = next(i for i, m in enumerate(session.messages) if m.kind == "tool_result" and i > start + 50)
    data = b"".join(with_orphans(lines, [history, current]))
    first = data.index(b"\n") + 1
    seen_history = seen_current = running = False
    for follower, change in follow_in_chunks(tmp_path / "s.jsonl", data,
                                             chunks(data[first:], random.Random(7), len(data) // 60)):
        shown = pairing(change.session)
        at_history = any(f"message {history}: tool_result toolu_nobody" in w for w in shown)
        seen_history |= at_history
        seen_current |= any(f"message {current}: tool_result toolu_nobody" in w for w in shown)
        if at_history:
            assert change.session.context_start == 0  # the boundary has not arrived yet
        context = change.session.context
        last = len(change.session.messages) - 1
        waiting = [o for o in find_orphans(context) if o.kind == "tool_use"
                   and change.session.context_start + o.index == last]
        if waiting:  # calls of the last message, maybe still running: no warning about them
            running = True
            assert not any(f"tool_use {o.tool_id} " in w for o in waiting for w in shown)
    final = pairing(follower.session)
    assert seen_history and seen_current and running
    assert not any(f"message {history}:" in w for w in final)  # history before the boundary is no longer context
    assert [w.split(":")[0] for w in final] == [f"message {current - 1}", f"message {current}"]


def test_a_rewind_re_checks_the_branch_near_and_far(tmp_path):
    """An entry hanging off an earlier message (the user rewound): the branch changes and the warnings follow, for
    a fork among the last messages (re-checked from it), and one before the compaction (the context starts over)."""
    lines = COMPACT.read_bytes().splitlines(keepends=True)
    session = load(COMPACT)
    path = tmp_path / "s.jsonl"
    cut = session.messages[-1].lines[-1]
    path.write_bytes(b"".join(lines[:cut]))
    follower = Follower(path)
    follower.open()
    template = json.loads(lines[session.messages[session.context_start + 2].lines[0] - 1])
    for n, back in enumerate((3, 120, 300)):
        fork = follower.session.messages[-back]
        entry = dict(template, uuid=f"rewind-{n}", parentUuid=fork.uuid)
        entry["message"] = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_gone{n}",
                                                        "content": "late"}]}
        append(path, json.dumps(entry).encode() + b"\n")
        change = follower.update()
        assert change.rebuilt or change.updated
        same_as_fresh(change.session, path)
        assert any(f"tool_result toolu_gone{n} answers no tool_use" in w for w in pairing(change.session))
        assert (change.session.context_start == 0) == (back == 300)


def neutral_lines(events: list[tuple]) -> list[bytes]:
    out = [{"event": "session", "version": 1, "model": "m"}]
    for kind, arg in events:
        if kind == "user":
            out.append({"role": "user", "content": "go on"})
        elif kind == "calls":
            out.append({"role": "assistant", "content": "calling",
                        "tool_calls": [{"id": i, "name": f"tool{n}", "input": {}} for n, i in enumerate(arg)]})
        elif kind == "results":
            out.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": i, "content": "ok"}
                                                    for i in arg]})
        elif kind == "compact":
            out.append({"event": "compaction", "kind": "compact", "trigger": "auto"})
            out.append({"role": "user", "kind": "compact_summary", "content": "Summary so far"})
        else:
            out.append({"event": "compaction", "kind": "microcompact", "trigger": "auto",
                        "replacements": {i: "[cleared]" for i in arg if i}})
    return [json.dumps(o).encode() + b"\n" for o in out]


IDS = st.lists(st.sampled_from(["a", "b", "c", "d", "e", None]), min_size=1, max_size=3)
EVENTS = st.lists(st.one_of(st.tuples(st.just("user"), st.none()), st.tuples(st.just("calls"), IDS),
                            st.tuples(st.just("results"), IDS), st.tuples(st.just("results"), IDS),
                            st.tuples(st.just("compact"), st.none()), st.tuples(st.just("micro"), IDS)),
                  min_size=1, max_size=60)


@settings(max_examples=60, deadline=None)
@given(events=EVENTS, seed=st.integers(0, 2**16))
def test_any_neutral_session_written_in_chunks_warns_as_a_fresh_load(tmp_path_factory, events, seed):
    """Calls and results with repeated, reused and missing ids, compactions and microcompactions, appended in
    random chunks split mid-line: equal to a fresh load after every update (the cap of 20 included)."""
    data = b"".join(neutral_lines(events))
    path = tmp_path_factory.mktemp("live") / "n.jsonl"
    first = data.index(b"\n") + 1
    for _ in follow_in_chunks(path, data, chunks(data[first:], random.Random(seed), 300)):
        pass


def test_more_than_twenty_orphans_are_capped_with_a_count_and_the_last_message_calls_are_not_warned(tmp_path):
    events = [("results", [f"x{i}"]) for i in range(25)] + [("calls", ["late", None])]
    data = b"".join(neutral_lines(events))
    for follower, _ in follow_in_chunks(tmp_path / "n.jsonl", data, [data[data.index(b"\n") + 1:]]):
        shown = pairing(follower.session)
        assert len(shown) == MAX_PAIRING_WARNINGS + 1
        assert shown[0] == f"message 0: tool_result x0 answers no tool_use {REFUSE}"
        assert shown[-1] == "5 more unpaired tool calls or results"  # the last message's two calls not counted
    append(tmp_path / "n.jsonl", b"".join(neutral_lines([("user", None)])[1:]))
    change = follower.update()
    same_as_fresh(change.session, tmp_path / "n.jsonl")
    assert pairing(change.session)[-1] == "7 more unpaired tool calls or results"  # no longer the last message


def message(blocks: list[tuple[str, str | None]], n: int) -> Message:
    return Message("assistant", "assistant", [Block(kind, tool_id=tid, tool_name="t") for kind, tid in blocks],
                   line=n + 1)


MESSAGES = st.lists(st.lists(st.tuples(st.sampled_from(["tool_use", "tool_result", "text"]),
                                       st.sampled_from(["a", "b", "c", None])), max_size=4), max_size=30)


@settings(max_examples=200, deadline=None)
@given(old=MESSAGES, new=MESSAGES, keep=st.integers(0, 30), start=st.integers(0, 5), undo=st.integers(0, 12))
def test_rolling_back_and_re_checking_equals_checking_from_scratch(old, new, keep, start, undo):
    """Any messages checked, the last ones replaced (`follow` from where they differ): orphans and warnings are
    those of a fresh check of the result, whether the undo log reached back far enough or it started over."""
    before = [message(b, n) for n, b in enumerate(old)]
    keep = min(keep, len(before))
    after = before[:keep] + [message(b, keep + n) for n, b in enumerate(new)]
    live = PairingCheck(start, undo=undo)
    live.check(before)
    live.follow(after, start, keep)
    fresh = PairingCheck(start)
    fresh.check(after)
    assert live.orphans() == fresh.orphans()
    assert live.warnings(after) == fresh.warnings(after)
    if undo >= len(before) - max(keep, start):  # the log reached: only the replaced and new messages were checked
        assert live.steps == max(0, len(before) - max(keep, start)) + max(0, len(after) - max(keep, start))
