"""Structural diff, pairing checker, text rendering and what-if replay."""

from compaction_sessions import call, prompt, results, tool_session

from inspector.core.compaction import (CompactionPolicy, apply, diff_sessions, find_orphans, plan_snip,
                                       plan_summary, render_diff, render_plan)
from inspector.core.compaction.diff import inert, render_totals
from inspector.core.compaction.estimates import Estimates
from inspector.core.compaction.replay import render_what_if, replay
from inspector.core.formats import load
from inspector.core.limits import window_info
from inspector.core.model import Block, Compaction, Message, Request, Session


def test_diff_of_a_summary_shows_removed_added_and_kept(corpus):
    s = load(corpus / "claude-code-manual-compact.jsonl")
    plan = plan_summary(s)
    new = apply(plan, summary="done")
    diff = diff_sessions(s, new, plan.estimates)
    split = plan.summary.split
    assert diff.counts == {"removed": split - s.context_start, "added": 2, "kept": len(s.messages) - split}
    assert [r.fate for r in diff.rows[:split - s.context_start]] == ["removed"] * (split - s.context_start)
    assert diff.before == plan.before and diff.after == sum(r.after for r in diff.rows)
    kept = [r for r in diff.rows if r.fate == "kept"]
    assert all(r.new - r.old == len(s.messages) + 2 - split for r in kept)


def test_diff_of_a_snip_shows_changed_rows_with_deltas():
    s = tool_session(8)
    new = apply(plan_snip(s))
    diff = diff_sessions(s, new)
    changed = [r for r in diff.rows if r.fate == "changed"]
    assert [r.old for r in changed] == [2, 4, 6, 8, 10] and all(r.delta < 0 for r in changed)
    assert diff_sessions(s, s).counts == {"kept": len(s.messages)}


def test_rendering_is_inert_and_collapses_kept_runs():
    s = tool_session(8)
    s.messages[2].blocks[0].text = "\x1b[2J\x1b]0;owned\x07[bold]markup[/bold]" + "x" * 5000
    plan = plan_snip(s)
    lines = render_plan(plan, plan.rows, render_totals(plan.before, plan.after, plan.counts))
    text = "\n".join(lines)
    assert "\x1b" not in text and "\x07" not in text and "[bold]markup[/bold]" in text
    assert any("(unchanged)" in line for line in lines)
    assert lines[-1].startswith("tokens: ") and "saved" in lines[-1]
    full = render_diff(diff_sessions(s, apply(plan_snip(s))), show_kept=True)
    assert len(full) == len(s.messages) + 2
    assert inert("a\x1b[31mb\x9bc", 3) == "a?[…"


def test_pairing_checker_finds_orphans_both_ways():
    messages = [prompt("go"), results(("early", "r")), call(("a", "Read"), ("b", "Read")), results(("a", "1")),
                call(("c", "Bash")), Message("assistant", "assistant", [Block("tool_use", tool_id=None)])]
    found = [(o.kind, o.index, o.tool_id) for o in find_orphans(messages)]
    assert found == [("tool_result", 1, "early"), ("tool_use", 2, "b"), ("tool_use", 4, "c"), ("tool_use", 5, None)]
    assert "has no tool_result" in find_orphans(messages)[1].describe()
    assert not find_orphans(tool_session(3).messages)


def test_pairing_on_every_real_session(corpus):
    for name in ("claude-code-manual-compact.jsonl", "claude-code-short.jsonl", "claude-code-subagent-explore.jsonl"):
        s = load(corpus / name)
        assert find_orphans(s.context) == [], name


def _recorded(growth: list[int], compact_at: dict[int, str] | None = None) -> Session:
    """A session of one message per request with the given measured contexts."""
    messages, requests, compactions = [], [], []
    for k, size in enumerate(growth):
        trigger = (compact_at or {}).get(k)
        if trigger:
            compactions.append(Compaction("compact", len(messages), trigger=trigger, pre_tokens=growth[k - 1]))
            messages.append(Message("user", "compact_summary", [Block("text", text="s" * 350)]))
        messages.append(Message("assistant", "assistant", [Block("text", text="a")], response_id=f"r{k}"))
        requests.append(Request(f"r{k}", "claude-opus-4-6", size, 0, 0, 10, message_index=len(messages) - 1,
                                seen_start=0, seen_end=len(messages) - 1))
    return Session("mem", "claude-code", messages, requests, compactions)


def test_what_if_fires_where_the_threshold_is_passed():
    s = _recorded([10_000, 50_000, 90_000, 130_000, 170_000, 40_000, 80_000], {5: "auto"})
    w = replay(s, 100_000, keep_ratio=0.3, summary_tokens=2_000)
    # r3 passes 100k; the recorded auto compaction at r5 is the policy's to decide, so growth continues from the
    # simulated 48k (+40k at r4, r4's answer before the boundary, +40k at r6) and r6 passes again
    assert [f.request_id for f in w.fires] == ["r3", "r6"]
    f = w.fires[0]
    assert f.context == 130_000 and f.after == int(w.prefix + 2_000 + 0.3 * (130_000 - w.prefix))
    answer = Estimates().message(s.messages[4])
    assert len(w.recorded) == 1 and w.peak == 130_000 and w.fires[1].context == 128_000 + answer
    assert [f.message_index for f in w.fires] == [3, 7]  # where each request's messages end
    text = "\n".join(render_what_if(w))
    assert "would fire" in text and "recorded    auto compaction" in text
    assert w.to_dict()["would_fire"][0]["request"] == "r3"


def test_what_if_fires_where_the_recording_compacted_when_what_came_before_it_passes():
    """Seen: the replay placed a compaction after messages that the recorded one came before, and left out the
    messages written after the last request before it."""
    s = _recorded([10_000, 60_000, 99_000, 20_000, 30_000], {3: "auto"})
    s.messages.insert(3, Message("user", "tool_result", [Block("tool_result", "x" * 7_000, tool_id="t")]))
    for c in s.compactions:
        c.index += 1
    for r in s.requests[3:]:
        r.message_index, r.seen_end = r.message_index + 1, r.seen_end + 1
    w = replay(s, 100_000, summary_tokens=2_000)
    (fire,) = w.fires  # 99k + r2's answer + the 7,000-character result written after it: over, at the boundary
    assert fire.message_index == s.compactions[0].index == 4 and fire.request_id == "r3"
    assert fire.context == 99_000 + Estimates().total(s.messages[2:4])
    lines = render_what_if(w)
    assert lines[1].startswith("  would fire") and lines[2].startswith("  recorded")  # the fire first


def test_what_if_from_figures_by_index_is_the_replay_from_estimates():
    """`report` passes its accounting's figures as a list: the same replay as an `Estimates` holding them."""
    s = _recorded([10_000, 60_000, 99_000, 20_000, 30_000, 95_000, 140_000], {3: "auto"})
    figures = [3_000 + 1_000 * i for i in range(len(s.messages))]  # not the estimator's: a list must be read
    est = Estimates()
    for m, tokens in zip(s.messages, figures):
        est.remember(m, tokens)
    by_list, by_estimates = replay(s, 100_000, estimates=figures), replay(s, 100_000, estimates=est)
    assert by_list == by_estimates and len(by_list.fires) == 2
    assert by_list.summary_tokens == figures[3] and by_list != replay(s, 100_000)


def test_what_if_honours_manual_compactions():
    s = _recorded([10_000, 90_000, 20_000, 95_000], {2: "manual"})
    w = replay(s, 100_000)
    assert w.fires == []
    assert replay(Session("m", "neutral"), 1).fires == []


def test_what_if_on_the_real_session_with_limits_policies(corpus):
    s = load(corpus / "claude-code-manual-compact.jsonl")
    claude = replay(s, window_info(s, "claude-code").thresholds.autocompact)
    assert claude.fires == []  # the session peaked at 142k, below Claude Code's 167k
    reference = replay(s, window_info(s, "reference").thresholds.autocompact)
    assert len(reference.fires) == 1 and reference.fires[0].context > reference.threshold
    assert CompactionPolicy.for_session(s, "reference").threshold == reference.threshold


def test_every_strategy_keeps_pairing_on_every_real_session(corpus):
    from inspector.core.compaction import STRATEGIES, ContextEditSettings, plan_strategy

    for name in ("claude-code-manual-compact.jsonl", "claude-code-short.jsonl", "claude-code-subagent-explore.jsonl"):
        s = load(corpus / name)
        for strategy in STRATEGIES:
            settings = ContextEditSettings(trigger=0, keep=1, clear_tool_inputs=True) \
                if strategy == "clear_tool_uses" else None
            plan = plan_strategy(strategy, s, settings)
            new = apply(plan, summary="s") if plan.summary is not None else apply(plan)
            assert find_orphans(new.context) == [], (name, strategy)
            assert plan.after <= plan.before or plan.summary is not None
