"""Cost: the price table, each request priced, the agent's own figure beside ours, the messages' shares, and the
prompt cache's hit ratio and breaks with their causes."""

from __future__ import annotations

import json
import math
import random
import re
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

import install  # tests/agents/install.py (conftest puts tests/agents on the path)
from inspector.cli import main
from inspector.core.cost import PriceError, Rates, prices, request_cost, rounded, session_cost
from inspector.core.formats import load
from inspector.core.model import Compaction, Message, Block, Request, Session
from inspector.core.prompt_cache import cache_report
from inspector.core.tokens import account

HERE = Path(__file__).parent
LIVE = HERE / "fixtures" / "statusline" / "claude-code-2.1.332" / "session.jsonl"  # a real interactive session
CORPUS = HERE / "corpus" / "claude-code-manual-compact.jsonl"
DATA = HERE.parent / "inspector" / "core" / "data"
AGENTS = HERE / "fixtures" / "agents"
CODEX = next((AGENTS / "codex-0.171.0" / "auto-compact").rglob("rollout-*.jsonl"))
GEMINI = next((AGENTS / "gemini-0.61.0" / "edit-file").rglob("session-*.jsonl"))


def test_claude_codes_own_cost_matches_ours_per_model():
    """Claude Code 2.1.332 wrote `cost-state` with its cost per model; for the model whose every request is in the
    transcript (Opus 5.5: the summary request of the /compact went to Sonnet, in a side file) ours is the same."""
    session = load(LIVE)
    assert session.agent_cost is not None and session.agent_cost.source == "cost-state"
    cost = session_cost(session)
    assert cost.by_model["claude-opus-5-5"] == pytest.approx(session.agent_cost.by_model["claude-opus-5-5"], abs=1e-9)
    # Sonnet's requests include the compaction's summary request, which the main transcript does not hold
    assert cost.by_model["claude-sonnet-5-5"] < session.agent_cost.by_model["claude-sonnet-5-5"]
    assert cost.total_usd == pytest.approx(sum(cost.by_model.values()))


def test_model_ids_as_transcripts_write_them():
    table = prices()
    for model in ("claude-sonnet-4-5-20250929", "claude-opus-4-6", "claude-opus-4-6[1m]", "anthropic/claude-opus-4-6",
                  "us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-opus-4-5@20251101"):
        assert table.rates(model) is not None, model
    for model in ("gpt-5.5", "gemini-2.5-pro", "models/gemini-2.5-pro", "qwen3-coder-plus", "kimi-k2.7-code",
                  "openai/gpt-5.5"):
        assert table.rates(model) is not None, model
    assert table.rates("kimi-k2-scripted") is None and table.rates(None) is None


def test_other_makers_models_are_priced_by_their_own_catalog_entry(capsys):
    """A Codex session (gpt-5.5) is priced from the models.dev file, at its rates; Claude's models keep Claude
    Code's own catalog, and the text says whose date it is."""
    other = json.loads((DATA / "prices-models-dev.json").read_text())
    claude = json.loads((DATA / "prices.json").read_text())
    assert not other["models"].keys() & claude["models"].keys()  # no model priced twice
    assert {m["provider"] for m in other["models"].values()} >= {"openai", "google", "alibaba", "moonshotai"}
    session = load(CODEX)
    rates = other["models"]["gpt-5.5"]
    expected = sum((r.input_tokens * rates["input"] + r.cache_read * rates["cache_read"]
                    + r.cache_creation * rates["cache_write_5m"] + r.output_tokens * rates["output"]) / 1e6
                   for r in session.requests)
    cost = session_cost(session)
    assert expected > 0 and cost.total_usd == pytest.approx(expected, rel=1e-12) and not cost.unpriced
    assert prices().date_of("gpt-5.5") == other["date"] and prices().date_of("claude-opus-4-6") == claude["date"]
    assert main(["report", str(CODEX)]) == 0
    assert f"Cost (prices of {other['date']}, 2 price files)" in capsys.readouterr().out


def test_context_tiers_nest():
    """Qwen3-Coder 480B has two context tiers (above 32k and above 128k): each prompt gets its own."""
    rates = prices().rates("qwen3-coder-480b-a35b-instruct")
    assert [rates.tier(n).input for n in (32_000, 32_001, 128_000, 128_001)] == [1.5, 2.7, 2.7, 4.5]


def test_thinking_billed_apart_is_priced_as_output():
    """Gemini CLI counts a turn's thoughts apart from its output (`tokens.thoughts`): they are billed as output."""
    session = load(GEMINI)
    thoughts = [r.thinking_tokens for r in session.requests]
    assert any(thoughts) and sorted(set(thoughts)) == sorted({int(x) for x in re.findall(
        rb'"thoughts":(\d+)', GEMINI.read_bytes())})
    rates = prices().rates(session.models[0])
    with_thinking = session_cost(session).total_usd
    for r in session.requests:
        r.thinking_tokens = 0
    assert with_thinking - session_cost(session).total_usd == pytest.approx(sum(thoughts) * rates.output / 1e6)


@pytest.mark.skipif(not list(install.prefix("opencode").glob("node_modules/opencode-*/bin/opencode")),
                    reason="opencode is not installed in the lab (tests/agents/install.py opencode)")
def test_the_models_dev_prices_are_what_the_pinned_opencode_holds():
    """tools/models_dev_prices.py, run on the pinned opencode's binary, makes the committed file."""
    binary = sorted(install.prefix("opencode").glob("node_modules/opencode-*/bin/opencode"))[0]
    committed = json.loads((DATA / "prices-models-dev.json").read_text())
    pin = install.PINS["opencode"]
    assert pin.version in committed["source"]
    done = subprocess.run([sys.executable, str(HERE.parent / "tools" / "models_dev_prices.py"), str(binary),
                           "--what", f"{pin.version} (npm {pin.spec})", "--date", committed["date"], "--check"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_a_request_priced_with_ttl_and_long_prompt_rates():
    rates = Rates(1.0, 2.0, 3.0, 4.0, 0.5, long_prompt=Rates(10.0, 20.0, 30.0, 40.0, 5.0), above=1000)
    r = Request("r", "m", 100, 200, 300, 50, 0, cache_write_1h=50)
    assert request_cost(r, rates) == pytest.approx((100 * 1 + 150 * 3 + 50 * 4 + 300 * 0.5 + 50 * 2) / 1e6)
    big = Request("r", "m", 1000, 0, 1, 10, 0)  # a prompt of 1,001 tokens: above the bound
    assert request_cost(big, rates) == pytest.approx((1000 * 10 + 1 * 5 + 10 * 20) / 1e6)


def test_a_price_file_of_the_users_overrides_and_adds(tmp_path):
    own = tmp_path / "prices.json"
    own.write_text(json.dumps({"date": "2027-01-01", "models": {
        "gpt-5.5": {"input": 1.25, "output": 10, "cache_write_5m": 1.25, "cache_read": 0.125},
        "claude-opus-4-6": {"input": 1, "output": 1, "cache_write_5m": 1, "cache_write_1h": 1, "cache_read": 1}}}))
    table = prices(own)
    assert table.rates("gpt-5.5").cache_write_1h == 1.25  # absent: the 5-minute rate
    assert table.rates("claude-opus-4-6").input == 1
    assert table.date == "2027-01-01" and str(own) in table.files
    assert prices(environ={"CONTEXT_INSPECTOR_PRICES": str(own)}).rates("gpt-5.5") is not None


@pytest.mark.parametrize("text, says", [("{", "not JSON"), ("[]", "no \"models\""),
                                        ('{"models": {"m": {"input": 1}}}', "no 'output' rate"),
                                        ('{"models": {"m": {"input": "x", "output": 1, "cache_write_5m": 1, '
                                         '"cache_read": 1}}}', "not a number")])
def test_a_bad_price_file_is_named_with_what_is_wrong(tmp_path, text, says):
    bad = tmp_path / "bad.json"
    bad.write_text(text)
    with pytest.raises(PriceError, match=says):
        prices(bad)
    with pytest.raises(PriceError, match="cannot read"):
        prices(tmp_path / "missing.json")


def test_report_states_cost_cache_and_shares_that_add_up(capsys):
    assert main(["report", str(CORPUS), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    cost = report["cost"]
    assert cost["total_usd"] == pytest.approx(sum(r["usd"] for r in cost["by_request"]), abs=1e-5)
    assert cost["total_usd"] == pytest.approx(sum(cost["by_model"].values()), abs=1e-5)
    shares = sum(m["cost_share_usd"] for m in report["messages"]) + cost["prefix_share_usd"]
    assert shares == pytest.approx(cost["total_usd"], abs=1e-3)
    cache = report["cache"]
    assert 0 < cache["hit_ratio"] < 1
    assert cache["hit_ratio"] == pytest.approx(cache["read"] / (cache["read"] + cache["written"] + cache["uncached"]),
                                               abs=1e-6)
    assert {b["cause"] for b in cache["breaks"]} <= {"compaction", "model switch"}
    assert any(b["cause"] == "compaction" for b in cache["breaks"])


def test_report_refuses_a_bad_price_file_in_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    assert main(["report", str(CORPUS), "--prices", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "not JSON" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_report_text_shows_both_costs(capsys):
    assert main(["report", str(LIVE)]) == 0
    out = capsys.readouterr().out
    assert "the agent's own figure (cost-state) $0.1168" in out and "hit ratio" in out


def _session(*reqs: Request, compactions=()) -> Session:
    messages = [Message("user" if i % 2 == 0 else "assistant", "prompt" if i % 2 == 0 else "assistant",
                        [Block("text", "x" * 40)]) for i in range(2 * len(reqs) + 2)]
    return Session("mem", "claude-code", messages=messages, requests=list(reqs), compactions=list(compactions))


def _req(k: int, read: int, write: int, model="claude-opus-4-6", stamp="2026-01-01T10:00:00Z", start=0, **kw):
    return Request(f"r{k}", model, 3, write, read, 10, 2 * k + 1, seen_start=start, seen_end=2 * k + 1,
                   timestamp=stamp, **kw)


@pytest.mark.parametrize("second, compactions, cause", [
    (_req(1, 0, 40_000, stamp="2026-01-01T10:06:00Z"), (), "idle gap"),
    (_req(1, 0, 40_000, stamp="2026-01-01T10:04:00Z"), (), "unknown"),
    (_req(1, 0, 40_000, model="claude-sonnet-4-5"), (), "model switch"),
    (_req(1, 0, 40_000, start=2), (Compaction("compact", 2),), "compaction"),
    (_req(1, 1_000, 39_000), (Compaction("microcompact", 2, cleared_tool_ids=("a", "b")),), "microcompaction"),
    (_req(1, 39_500, 600), (), None),  # read nearly all of it: no break
])
def test_cache_break_causes(second, compactions, cause):
    session = _session(_req(0, 30_000, 10_000), second, compactions=compactions)
    report = cache_report(session)
    if cause is None:
        assert report.breaks == []
        return
    (b,) = report.breaks
    assert b.request == 1 and b.cause == cause
    rewritten = 40_000 - second.cache_read
    assert b.tokens_rewritten == rewritten
    rates = prices().rates(second.model)
    assert b.cost_usd == pytest.approx(rewritten * (rates.cache_write_5m - rates.cache_read) / 1e6)


def test_one_hour_writes_are_given_an_hours_ttl():
    first = _req(0, 0, 40_000, cache_write_1h=40_000)
    later = _req(1, 0, 40_000, stamp="2026-01-01T10:30:00Z")
    assert cache_report(_session(first, later)).breaks[0].cause == "unknown"  # 30 min: inside an hour's TTL
    first.cache_write_1h = 0
    assert cache_report(_session(first, later)).breaks[0].cause == "idle gap"


def test_shares_without_usage_are_zero_and_nothing_is_priced():
    session = _session()
    cost = session_cost(session, accounting=account(session))
    assert cost.total_usd is None and list(cost.messages) == [0.0] * len(session.messages)


def _exact(values):
    return [None if x is None else round(x, 6) for x in values]


@given(st.lists(st.floats() | st.none()))
def test_rounded_is_round_to_six_places(values):
    assert repr(rounded(values)) == repr(_exact(values))  # repr: -0.0 and nan compared as written


def test_rounded_is_round_to_six_places_on_random_bits_and_near_ties():
    rng = random.Random(19)
    values = [struct.unpack("d", struct.pack("Q", rng.getrandbits(64)))[0] for _ in range(50_000)]
    values = [x for x in values if math.isfinite(x)]  # every magnitude, both signs
    values += [rng.random() * 10.0 ** rng.randrange(-9, 4) for _ in range(50_000)]  # USD as sessions cost
    for _ in range(20_000):  # halfway between two six-place values, and the floats next to it
        half = (rng.randrange(10 ** rng.randrange(1, 10)) + 0.5) / 1e6
        values += [math.nextafter(half, -math.inf), half, math.nextafter(half, math.inf)]
    values += [m / 2 ** k for k in range(1, 24) for m in range(1, 400, 2)]  # exact binary ties
    assert rounded(values) == _exact(values) and any(a != b for a, b in zip(rounded(values), values))


def test_shares_of_requests_out_of_the_order_of_their_ends():
    """A window's requests whose `seen_end`s do not ascend (one repeated, one lower than the one before): each
    message gets its figure times the cost per token of every request that saw it."""
    ends = [5, 3, 3, 7]
    reqs = [Request(f"r{k}", "claude-opus-4-6", 3, 1_000 * (k + 1), 20_000, 10, end, seen_start=0, seen_end=end)
            for k, end in enumerate(ends)]
    session = _session(*reqs)
    acc = account(session)
    got = list(session_cost(session, accounting=acc).messages)
    rates, sizes = prices().rates("claude-opus-4-6"), acc.sizes()
    want = [0.0] * len(sizes)
    for r in reqs:
        out = r.output_tokens * rates.output / 1e6
        for i in range(r.seen_start, r.seen_end):
            want[i] += sizes[i] * (request_cost(r, rates) - out) / r.measured_context
        want[r.message_index] += out
    assert got == pytest.approx(want, rel=1e-12) and got[3] > got[5] > 0



class _Figures:
    """What `session_cost` reads of an accounting: each message's figure (set here: a request naming messages beyond
    the last is not one accounting takes)."""

    def __init__(self, sizes: list[int]) -> None:
        self._sizes = sizes

    def sizes(self) -> list[int]:
        return self._sizes


def test_prefix_share_of_windows_met_again_and_of_requests_beyond_the_last_message():
    """The prefix's share: each request's input cost per token times what no message of its window explains, summed
    in request order, where a window comes back after another (what its first messages hold is looked up anew) and
    where a request names messages beyond the last (those hold nothing)."""
    spans = [(0, 3), (2, 5), (0, 7), (4, 40), (50, 60), (2, 9)]
    reqs = [Request(f"r{k}", "claude-opus-4-6", 3, 1_000 * (k + 1), 20_000, 10, k, seen_start=start, seen_end=end)
            for k, (start, end) in enumerate(spans)]
    session = _session(*reqs)
    sizes = [100 + 37 * i for i in range(len(session.messages))]
    rates, n, want = prices().rates("claude-opus-4-6"), len(sizes), 0.0
    for r in reqs:
        per_token = (request_cost(r, rates) - r.output_tokens * rates.output / 1e6) / r.measured_context
        want += per_token * (r.measured_context - sum(sizes[min(r.seen_start, n):min(r.seen_end, n)]))
    got = session_cost(session, accounting=_Figures(sizes)).prefix_usd  # type: ignore[arg-type]
    assert got == pytest.approx(want, rel=1e-12) and got != 0
