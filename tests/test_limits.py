"""Windows and policies: the thresholds each policy derives, overrides, and distances for a used figure."""

from __future__ import annotations

import pytest

from inspector.core.limits import POLICIES, max_output, window_info
from inspector.core.model import Request, Session


def session(model: str = "claude-opus-4-6", contexts: tuple[int, ...] = (30_000,), window: int | None = None,
            fmt: str = "claude-code") -> Session:
    reqs = [Request(f"r{i}", model, c, 0, 0, 10, i) for i, c in enumerate(contexts)]
    return Session(source="x", format=fmt, requests=reqs, models=[model], window=window)  # type: ignore[arg-type]


def test_claude_code_thresholds_on_200k():
    info = window_info(session(), "claude-code", environ={})
    assert (info.context_window, info.output_reserve, info.effective) == (200_000, 20_000, 180_000)
    assert info.thresholds.to_dict() == {"warning": 147_000, "autocompact": 167_000, "blocking": 177_000}
    assert info.reserved == 33_000  # /context's autocompact buffer


def test_small_max_output_lowers_the_reserve():
    assert max_output("claude-3-5-haiku-20241022") == 8_192
    info = window_info(session("claude-3-5-haiku-20241022"), "claude-code", environ={})
    assert info.output_reserve == 8_192 and info.effective == 191_808


def test_override_lowers_never_raises():
    low = window_info(session(), "claude-code", environ={"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "50"})
    assert low.thresholds.autocompact == 90_000 and low.thresholds.warning == 70_000
    high = window_info(session(), "claude-code", environ={"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "99"})
    assert high.thresholds.autocompact == 167_000
    bad = window_info(session(), "claude-code", environ={"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "lots"})
    assert bad.thresholds.autocompact == 167_000 and "ignored" in bad.notes[0]
    assert window_info(session(), "claude-code", environ={}, autocompact_pct=60).thresholds.autocompact == 108_000


def test_one_million_windows():
    assert window_info(session("claude-sonnet-4-5[1m]"), environ={}).context_window == 1_000_000
    assert window_info(session(contexts=(150_000, 250_000)), environ={}).context_window == 1_000_000
    assert window_info(session(), window=50_000, environ={}).context_window == 50_000


def test_reference_policy_is_70_percent_of_window_less_reserve():
    info = window_info(session(), "reference")
    assert info.thresholds.autocompact == 126_000
    assert info.thresholds.blocking == 180_000


def test_codex_compacts_at_90_percent_of_its_raw_window_or_its_configured_limit():
    """codex-rs: 90% of the raw window (the stated 258,400 is 95% of 272,000), lowered by
    `model_auto_compact_token_limit`; the lab's runs hold the line (test_formats_agents.py)."""
    info = window_info(session("gpt-5-codex", window=258_400, fmt="codex"), "codex")
    assert info.context_window == 258_400 and info.output_reserve == 0
    assert info.thresholds.to_dict() == {"warning": 217_600, "autocompact": 244_800, "blocking": 258_400}
    configured = session("gpt-5-codex", window=258_400, fmt="codex")
    configured.compaction_settings = {"auto_compact_limit": 200_000}
    info = window_info(configured, "codex")
    assert info.thresholds.autocompact == 200_000 and "auto_compact_limit 200000" in " ".join(info.notes)
    assert window_info(configured, "codex", auto_compact_limit=300_000).thresholds.autocompact == 244_800  # lowers only
    with pytest.raises(ValueError, match="positive"):
        window_info(configured, "codex", auto_compact_limit=-5)


def test_the_raw_window_behind_the_one_a_codex_rollout_states():
    from inspector.core.limits import codex_raw_window

    assert codex_raw_window(15_200, "0.171.0") == 16_000  # the lab's
    assert codex_raw_window(995_197, "0.124.0") == 1_047_575  # gpt-4.1's 1,047,576 at 95%, floored: by the version
    assert codex_raw_window(272_000, "0.58.0") == 272_000  # 0.58 stated the raw window
    assert codex_raw_window(258_400, "0.90.1") == codex_raw_window(258_400, None) == 272_000  # 95% of a whole number


def test_custom_percentages_and_their_order():
    info = window_info(session(), "custom", warning_pct=50, autocompact_pct=80, blocking_pct=90)
    assert info.thresholds.to_dict() == {"warning": 90_000, "autocompact": 144_000, "blocking": 162_000}
    with pytest.raises(ValueError, match="rise"):
        window_info(session(), "custom", warning_pct=90, autocompact_pct=80)
    with pytest.raises(ValueError, match="percentage"):
        window_info(session(), "custom", autocompact_pct=150)


def test_bad_policy_window_or_option():
    with pytest.raises(ValueError, match="claude-code"):
        window_info(session(), "gemini")
    with pytest.raises(ValueError, match="positive"):
        window_info(session(), window=0)
    with pytest.raises(ValueError, match="no option"):
        window_info(session(), "codex", warning_pct=3)


@pytest.mark.parametrize("policy", POLICIES)
def test_state_distances(policy):
    info = window_info(session(), policy, environ={})
    t = info.thresholds
    assert t.warning <= t.autocompact <= t.blocking <= info.context_window
    state = info.state(t.autocompact + 10)
    assert state.distance["autocompact"] == -10 and "autocompact" in state.crossed
    assert state.free == 0
    fresh = info.state(1_000)
    assert fresh.free == t.autocompact - 1_000 and fresh.crossed == []
    assert fresh.percent == pytest.approx(1_000 / info.context_window * 100, abs=0.01)


def test_no_session_defaults_to_claude():
    assert window_info(None, environ={}).context_window == 200_000


def test_a_live_sessions_window_follows_requests_appended_in_place():
    """A request measured past 200k means a 1M window; a live session's request list grows in place, and the
    answer follows it (only the new requests are looked at), a shorter or another list is looked at afresh."""
    from inspector.core.limits import context_window

    s = session("claude-sonnet-4-5", (50_000, 90_000))
    assert context_window(s) == 200_000
    s.requests.append(Request("r2", "claude-sonnet-4-5", 250_000, 0, 0, 10, 2))
    assert context_window(s) == 1_000_000
    s.requests.append(Request("r3", "claude-sonnet-4-5", 10_000, 0, 0, 10, 3))
    assert context_window(s) == 1_000_000
    del s.requests[2:]
    assert context_window(s) == 200_000
    s.requests[-1] = Request("r1", "claude-sonnet-4-5", 210_000, 0, 0, 10, 1)  # the last response grew
    assert context_window(s) == 1_000_000
    assert context_window(session("claude-sonnet-4-5", (50_000,))) == 200_000
    grown = session("claude-sonnet-4-5", (50_000,))  # the follower's next state: a new list, the same requests
    grown.requests = [*s.requests, Request("r2", "claude-sonnet-4-5", 20_000, 0, 0, 10, 2)]
    assert context_window(s) == 1_000_000 and context_window(grown) == 1_000_000



def test_a_context_past_200k_counts_its_cache_reads_and_writes():
    """The measured context is input + cache creation + cache read: 1,000 uncached tokens and 200,000 from the
    cache are past a 200k window, 199,000 are not."""
    from inspector.core.limits import context_window

    s = session("claude-sonnet-4-5", (50_000,))
    s.requests.append(Request("r1", "claude-sonnet-4-5", 1_000, 99_000, 99_000, 10, 1))
    assert context_window(s) == 200_000
    s.requests.append(Request("r2", "claude-sonnet-4-5", 1_000, 100_000, 100_000, 10, 2))
    assert context_window(s) == 1_000_000

def test_a_window_smaller_than_a_measured_context_is_called_out():
    info = window_info(session("claude-sonnet-4-5", (30_000, 45_000)), window=40_000, environ={})
    assert "the window 40,000 is smaller than a context this session measured (45,000)" in "; ".join(info.notes)
    assert info.warnings == [n for n in info.notes if "smaller" in n]
    assert not any("smaller" in n for n in window_info(session(), window=400_000, environ={}).notes)


def _t(info) -> tuple[int, int, int]:
    return info.thresholds.warning, info.thresholds.autocompact, info.thresholds.blocking


def test_gemini_cli_compresses_at_half_the_models_limit():
    """chatCompressionService.ts: compress once the last prompt reaches 0.5 x tokenLimit(model), keep 30%."""
    info = window_info(session("gemini-2.5-pro", fmt="gemini-cli"))
    assert info.policy == "gemini-cli" and info.policy_source == "default"
    assert (info.context_window, info.output_reserve) == (1_048_576, 0)
    assert _t(info) == (524_288, 524_288, 1_048_576) and any("30%" in n for n in info.notes)
    assert window_info(session("gemma-4-31b-it", fmt="gemini-cli")).thresholds.autocompact == 128_000
    assert window_info(session("gemini-2.5-pro", fmt="gemini-cli"), compact_pct=70).thresholds.autocompact == 734_003


@pytest.mark.parametrize("window, expected", [
    (1_000_000, (830_000, 850_000, 977_000)),  # 85% of the window
    (128_000, (75_000, 95_000, 105_000)),  # window - 20k reserve - 13k buffer is lower
    (32_000, (7_200, 27_200, 30_200)),  # that ceiling is negative: the percentage alone
])
def test_qwen_code_compacts_by_its_compute_thresholds(window, expected):
    info = window_info(session("qwen3-coder-plus", window=window, fmt="qwen-code"))
    assert info.policy == "qwen-code" and info.output_reserve == 20_000 and _t(info) == expected


@pytest.mark.parametrize("model, window, usable", [
    ("claude-sonnet-4-5", 1_000_000, 968_000),  # opencode's models snapshot: 1M for Sonnet 4.5
    ("claude-opus-4-5", 200_000, 168_000),
    ("some-other-model", 200_000, 168_000),
])
def test_opencode_overflows_at_the_window_less_the_output_limit(model, window, usable):
    info = window_info(session(model, fmt="opencode"))
    assert info.policy == "opencode" and info.context_window == window and _t(info) == (usable, usable, window)


def test_claude_opus_5_5_has_a_1m_window():
    """Claude Code 2.1.332 compacts claude-opus-5-5 sessions at 977,000 tokens (the lab's auto-compact scenario)."""
    from inspector.core.limits import LONG_WINDOW, context_window

    assert context_window(None, "claude-opus-5-5") == LONG_WINDOW
    assert context_window(None, "claude-opus-4-6") == 200_000
