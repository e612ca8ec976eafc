"""The figures of a followed session extended by its appends (`figures.extend`): after every update they equal a
fresh `compute()` of the same session field by field, and their work does not grow with the session's history."""

from __future__ import annotations

import dataclasses
import random
import re

import pytest
from hypothesis import given, settings as hsettings, strategies as st

from inspector.core.figures import Figures, Settings, compute, extend, links
from inspector.core.follower import Change, Follower
from inspector.core.tokens import account, account_appended

from conftest import CORPUS, FIXTURES
from test_accounting_incremental import neutral_lines
from test_live import COMPACT, _tiles, append, chunks, write_tiles

FIELDS = [f.name for f in dataclasses.fields(Figures) if f.compare]


def assert_same(got: Figures, fresh: Figures) -> None:
    for name in FIELDS:
        if name != "prompt":
            assert getattr(got, name) == getattr(fresh, name), name
    assert (got.prompt.note, len(got.prompt.sections)) == (fresh.prompt.note, len(fresh.prompt.sections))


def follow(path, data: bytes, pieces: list[bytes], settings: Settings):
    """Write the first line, follow, append `pieces` one by one; after each update extend the previous figures (with
    the appended accounting, as follow mode does), check them against a fresh `compute` and yield them with the
    change and whether they were extended (not computed afresh)."""
    first = data.index(b"\n") + 1
    path.write_bytes(data[:first])
    follower = Follower(path)
    session = follower.open()
    acc = account(session, settings.estimator)
    figures = compute(session, settings, accounting=acc)
    for piece in pieces:
        append(path, piece)
        change = follower.update()
        acc = account_appended(acc, change.session, change, settings.estimator)
        full = 2 * len(change.session.messages) + len(change.session.requests)
        figures = extend(figures, change.session, settings, acc, change)
        assert_same(figures, compute(change.session, settings))
        yield figures, change, figures.work < full


@pytest.mark.parametrize("source, settings", [
    (COMPACT, Settings()), (COMPACT, Settings(estimator="chars35", micro_strategy="snip")),
    (CORPUS / "claude-code-subagent-explore.jsonl", Settings()),
    (FIXTURES / "formats" / "neutral.jsonl", Settings()), (FIXTURES / "formats" / "codex-rollout.jsonl", Settings()),
    (FIXTURES / "formats" / "anthropic-requests.jsonl", Settings(estimator="script"))])
def test_real_sessions_in_random_chunks_extend_to_a_fresh_compute_after_every_update(tmp_path, source, settings):
    """Chunks split lines mid-way, responses grow over several lines (an earlier message changes), the compaction
    boundary arrives: every update's extended figures are a fresh compute's, and most were extended."""
    data = source.read_bytes()
    first = data.index(b"\n") + 1
    largest = max(200, len(data) // 100)
    out = [(change, extended) for _, change, extended in follow(
        tmp_path / f"s{source.suffix}", data, chunks(data[first:], random.Random(5), largest), settings)
        if not change.empty]
    assert out
    if len(data) > 1_000_000:
        assert sum(extended for _, extended in out) > 0.7 * len(out)
        assert any(change.updated for change, _ in out) or any(c.compactions for c, _ in out)


@hsettings(max_examples=25, deadline=None)
@given(lines=neutral_lines(), seed=st.integers(0, 2 ** 16), largest=st.integers(16, 1500), reuse=st.booleans(),
       estimator=st.sampled_from(["calibrated", "script"]))
def test_generated_neutral_sessions_extend_to_a_fresh_compute_after_every_update(tmp_path_factory, lines, seed,
                                                                               largest, reuse, estimator):
    """Generated sessions of our agent (compactions, orphans, answers without usage, a model switch), and with
    `reuse` their tool ids reused (a call or result repeating an id), split anywhere."""
    if reuse:
        lines = [re.sub(rb"toolu_(\d+)", lambda m: b"toolu_%d" % (int(m.group(1)) % 3), x) for x in lines]
    data = b"".join(lines)
    first = data.index(b"\n") + 1
    path = tmp_path_factory.mktemp("neutral") / "s.jsonl"
    for _ in follow(path, data, chunks(data[first:], random.Random(seed), largest), Settings(estimator=estimator)):
        pass


def test_reused_tool_ids_in_growing_responses_extend_to_a_fresh_compute(tmp_path):
    """The corpus session's first third with its tool ids folded onto 5 (calls and results repeating ids, responses that grow
    over several lines taking such ids back): still a fresh compute's figures after every update."""
    data = COMPACT.read_bytes()
    data = data[:data.index(b"\n", len(data) // 3) + 1]
    ids = {}
    data = re.sub(rb'"toolu_[A-Za-z0-9]+"', lambda m: b'"toolu_%d"' % (ids.setdefault(m.group(), len(ids)) % 5), data)
    first = data.index(b"\n") + 1
    out = list(follow(tmp_path / "s.jsonl", data, chunks(data[first:], random.Random(3), 12000), Settings()))
    assert any(change.updated for _, change, _ in out)


def test_rebuilds_other_settings_and_known_links_compute_afresh(tmp_path):
    """What `extend` cannot resume from is computed afresh, and still right: a rebuilt session, other settings,
    figures made from known links (their repeated ids unknown), figures whose state an earlier extend took over."""
    data = COMPACT.read_bytes()
    cut = data.index(b"\n", len(data) // 2) + 1
    path = tmp_path / "s.jsonl"
    path.write_bytes(data[:cut])
    follower = Follower(path)
    session = follower.open()
    base = compute(session, Settings())
    append(path, data[cut:data.index(b"\n", cut + 5000) + 1])
    change = follower.update()
    new = change.session
    fresh = compute(new, Settings())
    assert_same(extend(base, new, Settings(), account(new), Change(new, rebuilt=True)), fresh)
    other = Settings(keep_recent=2)
    assert_same(extend(compute(session, Settings()), new, other, account(new, other.estimator), change),
                compute(new, other))
    known = compute(session, Settings(), links(session))
    assert known.resume is None
    assert_same(extend(known, new, Settings(), account(new), change), fresh)
    first = extend(base, new, Settings(), account(new), change)
    assert base.resume is None and first.work < fresh.work
    second = extend(base, new, Settings(), account(new), change)
    assert second.work == fresh.work
    assert_same(first, fresh)
    assert_same(second, fresh)


@pytest.mark.parametrize("flat", [False, True])
def test_append_work_is_the_same_after_1_or_5_tiles_of_history(tmp_path, flat):
    """The same appended lines cost the same figures work (messages linked and pairing-checked, cumulative entries
    and timeline points made) after 1 tile of history as after 5: 5x the messages and requests, and when `flat` (no
    compaction) 5x the context. An append that moves the window's prefix (the first request after the compaction)
    shifts the whole cumulative column: those few cost the session, once."""
    tile = _tiles(flat)
    settings = Settings(estimator="script")
    work, sizes, moved = {}, {}, {}
    for n in (1, 5):
        path = tmp_path / f"s{n}.jsonl"
        parent = write_tiles(path, tile, n)
        follower = Follower(path)
        session = follower.open()
        acc = account(session, settings.estimator)
        figures = compute(session, settings, accounting=acc)
        sizes[n] = len(session.messages), len(session.context)
        lines, _ = tile(n, parent)
        work[n], moved[n] = [], []
        for line in lines[:120]:
            append(path, line)
            change = follower.update()
            prefix = acc.prefix
            acc = account_appended(acc, change.session, change, settings.estimator)
            figures = extend(figures, change.session, settings, acc, change)
            work[n].append(None if acc.prefix != prefix else figures.work)
            moved[n].append(acc.prefix != prefix)
        assert_same(figures, compute(follower.session, settings))
    assert sizes[5][0] > 4 * sizes[1][0] and (sizes[5][1] > 4 * sizes[1][1]) == flat
    assert work[1] == work[5] and sum(w or 0 for w in work[1]) > 0
    assert moved[1] == moved[5] and sum(moved[1]) <= 1


def test_cache_breaks_extended_equal_fresh(tmp_path):
    """The cache breaks before the first request an append changed are kept, the later ones read again: a break
    appended shows, the earlier one stays, and they equal a fresh compute's."""
    import json

    from bad_inputs.build import entry

    def answer(n: int, parent: str, read: int, written: int) -> bytes:
        usage = {"input_tokens": 10, "cache_read_input_tokens": read, "cache_creation_input_tokens": written,
                 "output_tokens": 5}
        line = entry("assistant", f"a{n}", parent, [{"type": "text", "text": f"answer {n}"}], id=f"msg_{n}",
                     model="claude-sonnet-4-5", usage=usage)
        return json.dumps(line).encode() + b"\n"

    def prompt(n: int, parent: str | None) -> bytes:
        return json.dumps(entry("user", f"u{n}", parent, f"prompt {n}")).encode() + b"\n"

    data = (prompt(1, None) + answer(1, "u1", 0, 9000) + prompt(2, "a1") + answer(2, "u2", 0, 9100)
            + prompt(3, "a2") + answer(3, "u3", 9100, 50))
    rest = data[data.index(b"\n") + 1:]
    got = list(follow(tmp_path / "s.jsonl", data, [rest, prompt(4, "a3") + answer(4, "u4", 0, 9300)], Settings()))
    figures, _, extended = got[-1]
    assert extended and [b.request for b in got[0][0].cache_breaks] == [1]
    assert [b.request for b in figures.cache_breaks] == [1, 3]
    assert figures.cache_breaks == compute(figures.session, Settings()).cache_breaks


def test_provisional_figures_link_calls_and_results_as_a_fresh_compute(tmp_path):
    """Follow mode's provisional figures of each update (made from the figures before it: responses growing over
    several lines change an earlier message, whose links are taken back first) pair every call and result as the
    exact figures of the same state do, and count every message."""
    from inspector.core.figures.provisional import provisional

    data = COMPACT.read_bytes()
    data = data[:data.index(b"\n", len(data) // 3) + 1]
    first = data.index(b"\n") + 1
    path = tmp_path / "s.jsonl"
    prev, grown = None, 0
    for figures, change, _ in follow(path, data, chunks(data[first:], random.Random(8), 9000), Settings()):
        if prev is not None and not change.empty and not change.rebuilt:
            start = min(change.first_new, len(prev.estimated))
            grown += bool(change.updated)
            got = provisional(prev, change.session, start, change.updated)
            assert (got.call_at, got.result_at) == (figures.call_at, figures.result_at)
            assert len(got.estimated) == len(got.cumulative) == len(change.session.messages)
        prev = figures
    assert grown
