"""Estimators: the reference formulas exactly, the script features, monotonicity and robustness on any block shape,
and `exact` through the real SDK against the local Messages-API server."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.core.estimators import (
    CJK, CODE, ESTIMATORS, JSON_, OTHER, PROSE, SCRIPT_RATIOS, SYMBOL, EstimatorUnavailable, Exact, Script,
    get_estimator, message_features, text_features)
from inspector.core.model import Block, Message
from mock_api import count_tokens

from conftest import FIXTURES

LOCAL = [n for n in ESTIMATORS if n != "exact"]


def msg(*blocks: Block, role: str = "user") -> Message:
    return Message(role, "prompt" if role == "user" else "assistant", list(blocks))  # type: ignore[arg-type]


def test_unknown_estimator_names_the_choices():
    with pytest.raises(ValueError, match="chars35"):
        get_estimator("tiktoken")


def test_chars35_counts_every_string_value_of_the_block_dicts():
    block = Block.of("tool_use", tool_id="t1", tool_name="Read", input={"path": "/a/b.py", "limit": 10})
    strings = "tool_use" + "t1" + "Read" + "/a/b.py"  # type, id, name and the string input; numbers are not strings
    assert get_estimator("chars35").blocks([block]) == int(len(strings) / 3.5)
    assert get_estimator("chars35").text("x" * 35) == 10


def test_blocks_estimator_follows_claude_code():
    est = get_estimator("blocks")
    text = Block("text", text="a" * 400)
    image = Block.of("image", media="image/png", size=10_000)
    use = Block.of("tool_use", tool_id="t", tool_name="Bash", input={"command": "ls"})
    result = Block("tool_result", tool_id="t", content=[Block("text", text="b" * 300), image])
    assert est.blocks([text]) == int(400 / 4 * 4 / 3)
    assert est.blocks([image]) == 2000
    assert est.blocks([use]) == int(len("Bash" + json.dumps({"command": "ls"})) / 4 * 4 / 3)
    assert est.blocks([result]) == int((300 / 4 + 1500) * 4 / 3)


def test_script_features_separate_scripts_and_kinds():
    f = [0.0] * len(SCRIPT_RATIOS)
    text_features("The quick brown fox jumps over the lazy dog", f)
    assert f[PROSE] == 43 and f[CODE] == 0
    f = [0.0] * len(SCRIPT_RATIOS)
    text_features("Hello, world. " * 10, f)  # 2 punctuation marks in 14 characters: past the share, all code-like
    assert f[CODE] == 140
    f = [0.0] * len(SCRIPT_RATIOS)
    text_features("a" * 96 + ".,;:", f)  # 4% punctuation: half way to the share, half code
    assert f[CODE] == pytest.approx(50) and f[PROSE] == pytest.approx(50)
    f = [0.0] * len(SCRIPT_RATIOS)
    text_features("def f(x): return {'a': x[0]};", f)
    assert f[CODE] == 29 and f[PROSE] == 0
    f = [0.0] * len(SCRIPT_RATIOS)
    text_features("日本語のテキスト Привет →", f)
    assert (f[CJK], f[OTHER], f[SYMBOL]) == (8, 6, 1)
    f = [0.0] * len(SCRIPT_RATIOS)
    text_features('{"a": 1}', f, as_json=True)
    assert f[JSON_] == 8


def test_script_counts_cjk_denser_than_latin_and_code_denser_than_prose():
    est = get_estimator("script")
    assert est.text("漢字" * 200) > est.text("ab" * 200)
    assert est.text("x = f(a[1]); y = {b: c};" * 20) > est.text("the cat sat on the mat " * 20)


def test_script_adds_structure_for_tool_blocks():
    est = Script()
    bare = est.message(msg(Block("text", text="ok")))
    with_tool = est.message(msg(Block("text", text="ok"), Block.of("tool_use", tool_id="t", tool_name="X", input={}),
                                role="assistant"))
    assert with_tool >= bare + 25


# -- properties --------------------------------------------------------------------------------------------------

texts = st.text(max_size=300)
leaf = st.one_of(
    st.builds(lambda t: Block("text", text=t), texts),
    st.builds(lambda t: Block("thinking", text=t), texts),
    st.builds(lambda t: Block("redacted_thinking", text=t), texts),
    st.builds(lambda n, i: Block.of("tool_use", tool_id="t", tool_name=n, input=i),
              st.one_of(st.none(), texts), st.recursive(st.one_of(st.none(), st.integers(), texts),
                                                      lambda c: st.lists(c, max_size=3) | st.dictionaries(
                                                          texts, c, max_size=3), max_leaves=8)),
    st.builds(lambda m, s: Block.of("image", media=m, size=s), st.one_of(st.none(), texts), st.integers(0, 10**7)),
    st.builds(lambda: Block("document")),
    st.builds(lambda r: Block.of("unknown", raw=r), st.one_of(st.none(), st.dictionaries(texts, texts, max_size=3))),
    # malformed: None text, a nested list holding non-blocks, an input JSON cannot hold (kept as its str)
    st.builds(lambda: Block("text", text=None)),  # type: ignore[arg-type]
    st.builds(lambda: Block("tool_result", tool_id=None, content=["not a block", None])),  # type: ignore[list-item]
    st.builds(lambda: Block.of("tool_use", tool_name="x", input={"at": object()})),
)
blocks = st.recursive(leaf, lambda inner: st.builds(
    lambda t, c, e: Block("tool_result", tool_id="t", text=t, content=c, is_error=e),
    texts, st.one_of(st.none(), st.lists(inner, max_size=3)), st.booleans()), max_leaves=10)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(blocks, max_size=6), st.sampled_from(LOCAL))
def test_every_estimator_takes_any_block_shape(bs, name):
    est = get_estimator(name)
    for role in ("user", "assistant"):
        n = est.message(msg(*bs, role=role))
        assert isinstance(n, int) and n >= 0
    assert est.blocks(bs) >= 0


@settings(max_examples=150, deadline=None)
@given(st.lists(blocks, max_size=4), blocks, st.sampled_from(LOCAL))
def test_estimators_are_monotonic_in_content(bs, extra, name):
    """Adding a block never lowers a message's estimate."""
    est = get_estimator(name)
    assert est.message(msg(*bs, extra)) >= est.message(msg(*bs))


@settings(max_examples=150, deadline=None)
@given(texts, texts, st.sampled_from(LOCAL))
def test_estimators_are_monotonic_in_text(a, b, name):
    est = get_estimator(name)
    assert est.text(a + b) >= est.text(a)
    assert est.message(msg(Block("text", text=a + b))) >= est.message(msg(Block("text", text=a)))


def test_message_features_count_the_turn():
    assert message_features(msg())[-1] == 1.0


# -- exact -------------------------------------------------------------------------------------------------------

def test_exact_without_a_key_says_what_to_do(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(EstimatorUnavailable, match="ANTHROPIC_API_KEY"):
        get_estimator("exact")


def test_exact_counts_a_whole_state_in_one_cached_call(mock_api):
    est = get_estimator("exact")
    assert isinstance(est, Exact)
    messages = [msg(Block("text", text="hello there " * 50)),
                msg(Block("thinking", text="hmm"), Block("text", text="hi"),
                    Block.of("tool_use", tool_id="t1", tool_name="Read", input={"path": "a.py"}), role="assistant"),
                Message("user", "tool_result", [Block("tool_result", tool_id="t1", text="print(1)\n" * 20)])]
    n = est.state(messages, system="You are terse.", model="claude-opus-4-6")
    sent = [r for r in mock_api.requests if r.path == "/v1/messages/count_tokens"]
    assert len(sent) == 1
    assert n == count_tokens(sent[0].body)
    assert sent[0].body["system"] == "You are terse." and sent[0].body["model"] == "claude-opus-4-6"
    assert est.state(messages, system="You are terse.", model="claude-opus-4-6") == n
    assert len([r for r in mock_api.requests if r.path == "/v1/messages/count_tokens"]) == 1  # cached
    # sections scale to the whole: the messages' scaled estimates add up to the exact total (within rounding)
    assert abs(sum(est.message(m) for m in messages) - n) <= len(messages)


def test_o200k_counts_text_with_openais_tokenizer():
    from inspector.core.estimators import O200K, O200K_RATIOS, tokenizer_for

    est = get_estimator("o200k")
    assert est.text("hello world") == 2 and O200K("") == 0
    text = "def f(x):\n    return {'a': [1, 2, 3]}  # 日本語\n" * 40
    assert est.text(text) == O200K(text)  # no character heuristics: the tokenizer's count
    call = Block.of("tool_use", tool_id="c1", tool_name="exec_command", input={"cmd": "ls"})
    assert est.blocks([call]) == O200K(call.all_text()) + O200K_RATIOS[7]  # + the harmony call framing
    assert [tokenizer_for(m) is O200K for m in ("gpt-5.5", "gpt-4o-mini", "o3", "gpt-5.1-codex", "openai/gpt-4.1")]\
        == [True] * 5
    assert tokenizer_for("claude-sonnet-4-5") is None and tokenizer_for(None) is None


def test_a_stated_size_counts_as_stated_under_every_feature_estimator():
    """Codex's encrypted reasoning: its size is the response's reasoning tokens, whatever its (opaque) text."""
    from inspector.core.model import Block as B

    hidden = B.of("redacted_thinking", "x" * 9000, tokens=321)
    summary = B.of("thinking", "Looking at the files", tokens=0)
    for name in ("script", "o200k", "calibrated"):
        est = get_estimator(name)
        assert int(est.block(hidden)) == 321 and int(est.block(summary)) == 0, name


def test_calibrated_on_a_codex_session_starts_from_o200k():
    from inspector.core.estimators import O200K
    from inspector.core.formats import load
    from inspector.core.tokens import estimator_for, session_default

    session = load(FIXTURES / "formats" / "codex-rollout-0.58.jsonl")
    assert session_default(session) == "o200k"
    assert estimator_for(session).counter is O200K


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=300), max_size=30), st.text(max_size=300))
def test_a_batch_counts_as_a_call_each_does(texts, other):
    from inspector.core.estimators import O200K

    alone, outside = [O200K(t) for t in texts], O200K(other)
    with O200K.batch(texts):
        assert [O200K(t) for t in texts] == alone
        assert O200K(other) == outside  # a text the batch does not hold: counted alone
    assert not O200K._counted  # nothing kept once the batch is done


def test_a_codex_sessions_accounting_counts_its_texts_in_one_batch(monkeypatch):
    """The per-text calls cost a long rollout most of its report (benchmarks/bench_formats.py): every message's
    text goes to the tokenizer in one batch, on every core, and the figures are those of a call each."""
    import toktok

    from inspector.core.estimators import Tokenizer
    from inspector.core.formats import load
    from inspector.core.tokens import account

    session = load(next((FIXTURES / "agents" / "codex-0.171.0" / "long-session" / "home").rglob("rollout-*.jsonl")))
    calls: list[int] = []
    real = toktok.batch_count

    def counting(texts, *args, **kwargs):
        texts = list(texts)
        calls.append(len(texts))
        return real(texts, *args, **kwargs)

    monkeypatch.setattr(toktok, "batch_count", counting)
    batched = account(session)
    singles = [n for n in calls if n == 1]
    assert max(calls) > 20 and len(singles) <= len(calls) // 10, calls
    with monkeypatch.context() as m:  # a call each, as before batches
        m.setattr(Tokenizer, "batch", lambda self, texts: __import__("contextlib").nullcontext())
        calls.clear()
        alone = account(session)
        assert max(calls) == 1
    assert batched.estimated == alone.estimated and batched.measured == alone.measured
    assert [(f.predicted, f.estimated) for f in batched.requests] == \
        [(f.predicted, f.estimated) for f in alone.requests]
