"""The column forms accounting computes in C-level passes give the very same floats as the forms one message, text
or request at a time: `text_columns` as `text_features`, `FeatureColumns` as `pricing.parts`, `observe_many` as
`observe`, and `RequestColumns` is a sequence of the RequestFigures it holds."""

from __future__ import annotations

from array import array
from itertools import accumulate

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.core import categories as cat, feature_columns
from inspector.core.accounting import RequestColumns, RequestFigures
from inspector.core.calibration import Calibrator, group_tokens
from inspector.core.estimators import (MESSAGE, N_FEATURES, O200K, PROSE, STATED, TOOL_RESULT, TOOL_USE, batched, dot,
                                      sum_in_order, text_columns, text_features)
from inspector.core.feature_columns import FeatureColumns, dots
from inspector.core.formats import load
from inspector.core.model import Block, Message, Request
from inspector.core.pricing import parts, vector
from inspector.core.request_runs import UNEXPLAINED_FACTOR, UNEXPLAINED_SLACK, spread, spread_growths

from conftest import CORPUS, FIXTURES

TEXTS = st.text(st.sampled_from("ab Z9 {}:;\"'.,→│漢字кирλ🙂\n\t\x00\ud800"), max_size=80)


def alone(text: str, as_json: bool, counter=None) -> list[float]:
    out = [0.0] * N_FEATURES
    text_features(text, out, as_json, counter)
    return out


def as_rows(cols: dict[int, list[float]], n: int) -> list[list[float]]:
    return [[cols[j][i] if j in cols else 0.0 for j in range(N_FEATURES)] for i in range(n)]


def bits(rows: list[list[float]]) -> list[list[str]]:
    return [[float(x).hex() for x in row] for row in rows]


@settings(max_examples=200, deadline=None)
@given(st.lists(TEXTS, max_size=12), st.booleans())
def test_text_columns_are_text_features_of_each_text(texts, as_json):
    assert bits(as_rows(text_columns(texts, as_json), len(texts))) == bits([alone(t, as_json) for t in texts])


@settings(max_examples=100, deadline=None)
@given(st.lists(TEXTS, max_size=12), st.integers(1, 40))
def test_text_columns_count_punctuation_a_part_of_the_texts_at_a_time(texts, part):
    """However the texts are cut into parts (`_PUNCT_PART` characters), each text's punctuation is its own."""
    from inspector.core import estimators

    kept, estimators._PUNCT_PART = estimators._PUNCT_PART, part
    try:
        assert bits(as_rows(text_columns(texts), len(texts))) == bits([alone(t, False) for t in texts])
    finally:
        estimators._PUNCT_PART = kept


def test_text_columns_of_texts_that_are_all_code_have_no_prose():
    texts = ["a.b", "", "{}", "x = f(y);", "→ {x}"]
    cols = text_columns(texts)
    assert PROSE not in cols
    assert bits(as_rows(cols, len(texts))) == bits([alone(t, False) for t in texts])
    assert PROSE in text_columns(texts + ["plain words"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(TEXTS, TEXTS), max_size=12), st.booleans())
def test_text_columns_of_heads_and_texts_are_those_of_the_joined_texts(pairs, as_json):
    heads, texts = [h for h, _ in pairs], [t for _, t in pairs]
    for counter in [None, O200K] if not any("\ud800" in h + t for h, t in pairs) else [None]:
        assert bits(as_rows(text_columns(texts, as_json, counter, heads), len(pairs))) == \
            bits(as_rows(text_columns([h + t for h, t in pairs], as_json, counter), len(pairs)))


def test_text_columns_count_tokens_with_a_tokenizer():
    texts = ["", "hello world", "漢字 and → arrows", '{"a": 1}']
    assert as_rows(text_columns(texts, True, O200K), 4) == [alone(t, True, O200K) for t in texts]


def blocks_of_every_kind() -> list[Message]:
    use = Block.of("tool_use", tool_id="t1", tool_name="Bash", input={"command": "ls →"})
    return [
        Message("user", "prompt", [Block("text", text="Fix the bug, please.")]),
        Message("assistant", "assistant", [use]),
        Message("user", "tool_result", [Block("tool_result", "a.py\nb.py", tool_id="t1")]),
        Message("user", "tool_result", [Block("tool_result", tool_id="t1", content=[Block("text", text="nested")])]),
        Message("assistant", "assistant", [Block.of("thinking", text="hmm", signature="s"), Block("text", text="ok")]),
        Message("assistant", "assistant", [Block.of("thinking", text="", tokens=120)]),
        Message("assistant", "assistant", [Block.of("tool_use", tool_id="t2", tool_name=None, input={"x": 1})]),
        Message("user", "tool_result", [Block("tool_result", None, tool_id="t2")]),  # type: ignore[arg-type]
        Message("user", "compact_summary", [Block("tool_result", "summary", tool_id="t9")]),
        Message("user", "meta", [Block("text", text="Contents of CLAUDE.md: be terse")]),
        Message("user", "prompt", [Block.of("image", media="image/png", size=10)]),
        Message("user", "prompt", []),
        Message("assistant", "assistant", [Block("text", text="a"), Block.of("tool_use", tool_id="t3", tool_name="Read",
                                                                            input={"path": "x"})]),
    ]


def sessions() -> list[list[Message]]:
    paths = [CORPUS / "claude-code-subagent-explore.jsonl", FIXTURES / "formats" / "codex-rollout.jsonl",
             FIXTURES / "formats" / "neutral.jsonl"]
    return [blocks_of_every_kind()] + [load(str(p)).messages for p in paths]


@pytest.mark.parametrize("counter", [None, O200K])
@pytest.mark.parametrize("messages", sessions())
def test_feature_columns_are_the_parts_of_each_message(messages, counter):
    names = cat.tool_names(messages)
    with batched(messages, counter):
        found = FeatureColumns(messages, counter)
        keys, multi = found.categorise(names)
        cols = found.columns()
        expected = [parts(m, names, counter) for m in messages]
    assert dict(zip(found.uses[1], found.uses[2])) == names
    assert keys == [next(iter(p)) if len(p) == 1 else None for p in expected]
    assert multi == {i: p for i, p in enumerate(expected) if len(p) > 1}
    rows = [[0.0 if c is None else c[i] for c in cols] for i in range(len(messages))]
    assert bits(rows) == bits([vector(p) for p in expected])


def rounds(n: int) -> list[Message]:
    """Tool calls and results in turn, a prompt now and then: each tool kind's positions in runs, the prompts few."""
    out = []
    for i in range(n):
        if i % 40 == 7:
            out.append(Message("user", "prompt", [Block("text", text="go on please " * (i % 7 + 1))]))
        out.append(Message("assistant", "assistant", [Block.of("tool_use", tool_id=f"t{i}", tool_name="Bash",
                                                               input={"command": "ls " * (i % 5)})]))
        out.append(Message("user", "tool_result", [Block("tool_result", "x = 1;\n" * (i % 3), tool_id=f"t{i}")]))
    return out


@pytest.mark.parametrize("messages", sessions() + [rounds(300)])
def test_running_sums_of_a_feature_are_those_of_its_column(messages):
    """`FeatureColumns.add_running` (from the messages that have the feature) adds what accumulating its column
    adds, after the sums it is given."""
    found = FeatureColumns(messages)
    found.categorise(cat.tool_names(messages))
    made = []
    for j in range(MESSAGE):  # (MESSAGE: 1.0 in every message, its sums counted)
        column, sums = found.column(j), array("d", [0.25, 0.5])
        if found.add_running(j, sums):
            made.append(j)
            assert column is not None
            assert bits([list(sums)]) == bits([[0.25, *accumulate(column, initial=0.5)]])
        else:
            assert list(sums) == [0.25, 0.5]
    if len(messages) == 608:  # `rounds`: a tool kind's in runs, the prompts' few
        assert {TOOL_USE, TOOL_RESULT, PROSE} <= set(made)


@pytest.mark.parametrize("part", [3, feature_columns.PART])
@pytest.mark.parametrize("messages", sessions())
def test_feature_columns_dots_are_the_dot_of_each_message(messages, part, monkeypatch):
    """`FeatureColumns.dots` (kind by kind, a part of each kind at a time) is each message's own `dot`."""
    monkeypatch.setattr(feature_columns, "PART", part)
    names = cat.tool_names(messages)
    found = FeatureColumns(messages)
    found.categorise(names)
    ratios = [0.3 + 0.7 * j for j in range(N_FEATURES)]
    assert bits([list(found.dots(ratios))]) == bits([[dot(ratios, vector(parts(m, names))) for m in messages]])


def test_a_message_adds_its_terms_in_order_as_the_columns_do():
    """One message's estimate (`dot`) is the float its column pass (`dots`) makes: both add left to right. Python
    3.12's `sum` compensates rounding (1e16 + 1.0 + 1.0 is 1e16 added in order, 1.0000000000000002e16 compensated),
    which would set the two apart in the last bits."""
    assert sum_in_order([1e16, 1.0, 1.0]) == (1e16 + 1.0) + 1.0 == 1e16
    ratios = [1.0] * N_FEATURES
    features = [0.0] * N_FEATURES
    others = [j for j in range(N_FEATURES) if j != MESSAGE]
    features[MESSAGE] = 1.0
    for j, value in zip(others, (1e16, 1.0, 1.0)):
        features[j] = value
    assert dots(ratios, [[f] for f in features], 1) == [dot(ratios, features)] == [1e16]


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.lists(st.floats(0, 5000), min_size=N_FEATURES, max_size=N_FEATURES),
                          st.integers(-100, 20000)), min_size=1, max_size=80))
def test_observe_many_is_observe_one_at_a_time(observations):
    one, many = Calibrator(), Calibrator()
    x: list[list[float]] = [[] for _ in range(7)]
    totals, ys = [], []
    for f, growth in observations:
        one.observe("m", f, growth)
        groups = group_tokens(f, one.base)
        if sum_in_order(groups) > 0:
            for column, value in zip(x, groups):
                column.append(value)
            totals.append(sum_in_order(groups))
            ys.append(growth - f[STATED])
    many.observe_many("m", x, totals, ys)
    assert one.observations("m") == many.observations("m")
    assert one.ratios("m") == many.ratios("m") and one.estimator().per_model == many.estimator().per_model


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 3), st.integers(-50, 3000)), min_size=1, max_size=30),
       st.lists(st.floats(0.0, 4000.0), min_size=100, max_size=100), st.booleans())
def test_spread_growths_is_spread_of_each_growth(requests, weights, small):
    """`spread_growths` (a message position at a time over many requests) gives each message what `spread` of its
    request's growth gives it, and leaves the requests `spread` is not meant for (a growth below 0, far beyond what
    its messages weigh, or nothing to weigh it by) to the caller, their messages untouched."""
    if small:  # weights below 1.0 too: the guesses `spread_growths` cannot take its last shares' short cut for
        weights = [w / 3000 for w in weights]
    los, his, growths, at = [], [], [], 0
    for size, growth in requests:
        los.append(at)
        at += size
        his.append(at)
        growths.append(growth)
    many: list[int | None] = [None] * at
    left = spread_growths(many, weights, los, his, growths)
    one: list[int | None] = [None] * at
    for i, (lo, hi, growth) in enumerate(zip(los, his, growths)):
        guess = sum_in_order(weights[lo:hi])
        if guess > 0 and 0 <= growth <= UNEXPLAINED_FACTOR * guess + UNEXPLAINED_SLACK:
            spread(one, weights, lo, hi, growth)
        else:
            assert i in left
    assert many == one and left == sorted(left)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.one_of(st.none(), st.integers(0, 10**6)), st.integers(0, 10**6), st.booleans()),
                max_size=20))
def test_abs_errors_are_each_request_figures_error(rows):
    """The errors of many requests at once (a None left out, a measured 0 an error of 0.0) are each one's own."""
    from inspector.core.accounting import _pct
    from inspector.core.request_runs import _abs_errors

    values, measured, kept = [v for v, _, _ in rows], [m for _, m, _ in rows], [k for _, _, k in rows]
    expected = [abs(_pct(v, m)) for v, m, k in rows if k and v is not None]
    assert _abs_errors(values, measured, kept) == expected


def test_request_columns_are_a_sequence_of_request_figures():
    figures = RequestColumns()
    reqs = [Request(f"r{i}", "m", 10, i, 0, 1, 2 * i + 1, 0, 2 * i + 1) for i in range(4)]
    figures.request += reqs
    figures.window += [0, 0, 1, 1]
    figures.measured.extend([10, 11, 12, 13])
    figures.predicted += [None, 11, 14, 12]
    figures.estimated.extend([10, 9, 12, 15])
    figures.unrecorded[2], figures.cause[2] = 5, "after compaction"
    made = [RequestFigures(r, w, m, p, e) for r, w, m, p, e in
            zip(reqs, [0, 0, 1, 1], [10, 11, 12, 13], [None, 11, 14, 12], [10, 9, 12, 15])]
    made[2].unrecorded, made[2].cause = 5, "after compaction"
    assert list(figures) == made and figures[1:3] == made[1:3] and figures[-1] == made[-1] and len(figures) == 4
    assert figures == made and figures.head(3) == made[:3] and figures.head(2).cause == {}
    assert [f.prediction_error_pct for f in figures] == [f.prediction_error_pct for f in made]
