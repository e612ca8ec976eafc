"""Accounting a followed session by its appends (`account_appended`): after every update it equals a fresh
`account()` of the same session exactly, and its work does not grow with the session's history."""

from __future__ import annotations

import collections
import json
import random

import pytest
from hypothesis import given, settings, strategies as st

from inspector.core.follower import Follower
from inspector.core.tokens import Accounting, account, account_appended

from conftest import CORPUS, FIXTURES
from test_live import COMPACT, _tiles, append, chunks, write_tiles

FIELDS = ("estimator", "estimated", "measured", "category", "prefix", "prefix_measured", "unrecorded", "requests",
          "current_context", "current_measured", "prediction", "estimation", "ratios")


def assert_same(got: Accounting, fresh: Accounting) -> None:
    for name in FIELDS:
        assert getattr(got, name) == getattr(fresh, name), name
    assert list(got.by_category.items()) == list(fresh.by_category.items())  # the order ties are shown in too
    assert [(f.unrecorded, f.cause, f.window) for f in got.requests] == \
        [(f.unrecorded, f.cause, f.window) for f in fresh.requests]


def follow(path, data: bytes, pieces: list[bytes], estimator: str | None = None):
    """Write the first line, follow, append `pieces` one by one; after each update check the appended accounting
    against a fresh one and yield it with the update's change and where it resumed: "last" (the common case: from
    the previous accounting's last request), "earlier" (from a young model's first request) or None (fresh)."""
    first = data.index(b"\n") + 1
    path.write_bytes(data[:first])
    follower = Follower(path)
    acc = account(follower.open(), estimator)
    for piece in pieces:
        append(path, piece)
        change = follower.update()
        last = max(0, len(acc.session.requests) - 1)
        acc = account_appended(acc, change.session, change, estimator)
        assert_same(acc, account(change.session, estimator))
        yield acc, change, None if acc.resumed_at is None else "last" if acc.resumed_at == last else "earlier"


def resumed(acc: Accounting) -> bool:
    return acc.resumed_at is not None


@pytest.mark.parametrize("source, estimator", [
    (COMPACT, None), (COMPACT, "chars35"), (CORPUS / "claude-code-subagent-explore.jsonl", None),
    (CORPUS / "claude-code-subagent-explore.jsonl", "blocks"), (FIXTURES / "formats" / "neutral.jsonl", None),
    (FIXTURES / "formats" / "codex-rollout.jsonl", None), (FIXTURES / "formats" / "anthropic-requests.jsonl", None)])
def test_real_sessions_in_random_chunks_account_as_fresh_after_every_update(tmp_path, source, estimator):
    """Chunks split lines mid-way, responses grow over several lines, the compaction boundary arrives: every update
    is a fresh accounting's figures, and most of them resumed instead of starting over."""
    data = source.read_bytes()
    first = data.index(b"\n") + 1
    largest = max(200, len(data) // 200)
    kinds = collections.Counter(kind for _, change, kind in follow(
        tmp_path / f"s{source.suffix}", data, chunks(data[first:], random.Random(11), largest), estimator)
        if not change.empty)
    if len(data) > 1_000_000:  # a small session re-solves its fits (first 32 observations) on most requests
        assert kinds["last"] > (0.9 if estimator else 0.7) * sum(kinds.values()), kinds
        if estimator is None:  # the corpus session switches models: the earlier point serves some appends
            assert kinds["earlier"] > 0, kinds


# -- generated neutral sessions ---------------------------------------------------------------------------------------

TEXT = st.text(st.sampled_from("abc xyz 0123 {}:\"漢字 кир\n"), min_size=0, max_size=300)


@st.composite
def neutral_lines(draw) -> list[bytes]:
    """A neutral session our agent could write: prompts, answers with usage (growing, sometimes shrinking or jumping,
    a model switch), tool calls and results, a compact or microcompact now and then, answers without usage."""
    lines = [{"event": "session", "version": 1, "model": "claude-sonnet-4-5", "system": "You are terse."}]
    context = draw(st.integers(3000, 20000))
    calls: list[str] = []
    for turn in range(draw(st.integers(1, 40))):
        what = draw(st.sampled_from(["prompt", "answer", "answer", "call", "result", "compact", "micro", "bare"]))
        if what == "prompt":
            lines.append({"role": "user", "content": draw(TEXT) or "go"})
        elif what in ("answer", "call", "bare"):
            content: list = [{"type": "text", "text": draw(TEXT) or "ok"}]
            if what == "call":
                calls.append(f"toolu_{turn}")
                content.append({"type": "tool_use", "id": calls[-1], "name": draw(st.sampled_from(["Read", "Bash"])),
                                "input": {"path": draw(TEXT)}})
            line = {"role": "assistant", "content": content,
                    "model": draw(st.sampled_from(["claude-sonnet-4-5"] * 5 + ["claude-haiku-4-5"]))}
            if what != "bare":
                context = max(0, context + draw(st.integers(-500, 6000)))
                cached = draw(st.integers(0, context))
                line["usage"] = {"id": f"msg_{turn}", "input_tokens": context - cached, "cache_read_input_tokens":
                                 cached, "cache_creation_input_tokens": 0, "output_tokens": 10}
            lines.append(line)
        elif what == "result" and calls:
            lines.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": calls.pop(0),
                                                        "content": draw(TEXT)}]})
        elif what == "compact":
            lines.append({"event": "compaction", "kind": "compact", "trigger": "auto", "strategy": "summary",
                          "pre_tokens": context})
            lines.append({"role": "user", "kind": "compact_summary", "content": "Summary: " + draw(TEXT)})
            context = draw(st.integers(2000, 8000))
        elif what == "micro":
            lines.append({"event": "compaction", "kind": "microcompact", "trigger": "auto", "strategy": "clear",
                          "tokens_saved": 100})
    return [json.dumps(x, ensure_ascii=False).encode() + b"\n" for x in lines]


@settings(max_examples=50, deadline=None)
@given(lines=neutral_lines(), seed=st.integers(0, 2 ** 16), largest=st.integers(16, 1500),
       estimator=st.sampled_from([None, "script", "chars35"]))
def test_generated_neutral_sessions_account_as_fresh_after_every_update(tmp_path_factory, lines, seed, largest,
                                                                        estimator):
    data = b"".join(lines)
    first = data.index(b"\n") + 1
    path = tmp_path_factory.mktemp("neutral") / "s.jsonl"
    for _ in follow(path, data, chunks(data[first:], random.Random(seed), largest), estimator):
        pass


def _followed_part(tmp_path, part: int):
    """The compaction corpus's first 1/`part` (whole lines) followed and accounted: (data, cut, path, follower,
    accounting)."""
    data = COMPACT.read_bytes()
    cut = data.index(b"\n", len(data) // part) + 1
    path = tmp_path / "s.jsonl"
    path.write_bytes(data[:cut])
    follower = Follower(path)
    return data, cut, path, follower, account(follower.open())


def test_a_rebuilt_change_and_another_estimator_start_over(tmp_path):
    """What cannot be resumed is accounted from scratch (and still equals a fresh accounting)."""
    data, cut, path, follower, acc = _followed_part(tmp_path, 2)
    path.write_bytes(data[:cut // 2])  # truncated: read again
    change = follower.update()
    assert change.rebuilt
    again = account_appended(acc, change.session, change)
    assert not resumed(again)
    assert_same(again, account(change.session))
    append(path, data[cut // 2:cut])
    change = follower.update()
    other = account_appended(again, change.session, change, "chars35")
    assert other.estimator == "chars35" and not resumed(other)
    assert_same(other, account(change.session, "chars35"))


@pytest.mark.parametrize("flat, estimator", [(False, "script"), (True, "script"), (True, "chars35"), (True, None)])
def test_append_work_is_the_same_after_1_or_5_tiles_of_history(tmp_path, flat, estimator):
    """The same appended lines cost the same accounting work (messages + requests visited) after 1 tile of history
    as after 5: 5x the messages and requests, and when `flat` (no compaction) 5x the context. With the calibrated
    estimator an append that re-solves a settled fit starts over: at most a few in 400 lines, fewer with more
    history; the others cost the same."""
    tile = _tiles(flat)
    work, starts, sizes = {}, {}, {}
    for n in (1, 5):
        path = tmp_path / f"s{n}.jsonl"
        parent = write_tiles(path, tile, n)
        follower = Follower(path)
        acc = account(follower.open(), estimator)
        sizes[n] = len(acc.session.context), len(acc.session.requests)
        lines, _ = tile(n, parent)
        work[n], starts[n] = [], 0
        for line in lines[:400]:
            append(path, line)
            change = follower.update()
            last = len(acc.session.requests) - 1
            acc = account_appended(acc, change.session, change, estimator)
            work[n].append(acc.work if acc.resumed_at == max(0, last) else None)
            starts[n] += acc.resumed_at != max(0, last)  # from scratch, or from the newest model's first request
        assert_same(acc, account(follower.session, estimator))
    assert (sizes[5][0] > 4 * sizes[1][0]) == flat and sizes[5][1] > 4 * sizes[1][1]
    both = [(a, b) for a, b in zip(work[1], work[5]) if a is not None and b is not None]
    assert all(a == b for a, b in both) and len(both) > 390, (starts, both)
    assert starts[5] <= starts[1] <= (3 if estimator is None else 0), starts


def test_an_accounting_resumes_once(tmp_path):
    """`account_appended` takes the previous accounting's state over: asked again from the same one, it starts over
    (and is still a fresh accounting's figures)."""
    data, cut, path, follower, acc = _followed_part(tmp_path, 3)
    append(path, data[cut:data.index(b"\n", cut + 20_000) + 1])
    change = follower.update()
    first, second = (account_appended(acc, change.session, change) for _ in range(2))
    assert resumed(first) and not resumed(second)
    assert_same(first, account(change.session))
    assert_same(second, account(change.session))


async def test_follow_mode_exact_figures_resume_the_screens_accounting(tmp_path):
    """In the app, the exact figures after each append come from the accounting the screen made at load, then from
    each one before: resumed, not made again, and what a fresh load computes."""
    from test_live_app import LINES, assert_matches_fresh_load, live_app, settled, until, write

    async with live_app(tmp_path, 600) as (app, pilot, screen, path):
        live, exact, again = screen.follow, 0, 0
        base = screen.shown._base  # noqa: SLF001  (the last exact figures: the next ones' base)
        assert base is not None and base[0].session is screen.session
        for n in range(600, 660):
            updates = live.updates
            write(path, LINES[n])
            await until(pilot, lambda: live.follower.covered == sum(map(len, LINES[:n + 1])), f"line {n}")
            if live.updates == updates and live.follower.session is screen.session:
                continue  # the line changed nothing shown (progress): no figures to wait for
            await until(pilot, lambda: settled(screen), f"the figures after line {n}")
            acc = screen.shown._base[0]  # noqa: SLF001
            assert acc is not None and acc.session is screen.session
            exact += 1
            again += not resumed(acc)  # a settled calibrated fit re-solved (see calibration.py)
        assert exact >= 10 and again <= 2, (exact, again)
        assert_matches_fresh_load(screen, path)
