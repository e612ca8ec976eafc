"""Microcompaction plans: snip, clear, clear_tool_uses; apply leaves the original untouched."""

import copy

from compaction_sessions import call, prompt, results, tool_session

from inspector.core.compaction import (ClearSettings, ContextEditSettings, SnipSettings, apply, find_orphans,
                                       plan_clear, plan_clear_tool_uses, plan_snip)
from inspector.core.compaction.micro import CLEARED_MARKER, snip_text
from inspector.core.model import Block, Compaction, Message, Session


def test_snip_text_keeps_half_and_quarter_and_counts_removed_chars():
    text = "a" * 1000 + "b" * 3000 + "c" * 500
    out = snip_text(text, 2000)
    assert out == "a" * 1000 + "\n[... 3000 chars snipped ...]\n" + "c" * 500
    assert snip_text("x" * 2000, 2000) is None
    assert snip_text("x" * 12, 10) is None  # the marker would make it longer


def test_snip_touches_only_long_results_older_than_the_protected_tail():
    s = tool_session(8, size=5000)  # 17 messages
    s.messages[4].blocks[0].text = "short"
    plan = plan_snip(s, SnipSettings(preserve_last_n=6, max_chars=2000))
    snipped = [r.old for r in plan.rows if r.fate == "snipped"]
    assert snipped == [2, 6, 8, 10]  # long results before the last 6 messages (index 11 on)
    assert plan.protected_from == 11
    for r in plan.rows:
        if r.fate == "snipped":
            text = r.message.blocks[0].text
            assert text.startswith(s.messages[r.old].blocks[0].text[:1000])
            assert "[... 3500 chars snipped ...]" in text
            assert r.after < r.before
    assert plan.saved == sum(r.before - r.after for r in plan.rows)


def test_snip_keeps_images_of_a_nested_result():
    nested = Block("tool_result", tool_id="t0", content=[Block("text", text="y" * 6000),
                                                         Block.of("image", media="image/png", size=100)])
    s = Session("mem", "neutral", [prompt("go"), call(("t0", "Read")), Message("user", "tool_result", [nested]),
                                   *[prompt(str(k)) for k in range(6)]])
    plan = plan_snip(s)
    (row,) = plan.changed_rows()
    block = row.message.blocks[0]
    assert [b.type for b in block.content] == ["text", "image"]
    assert "[... 4500 chars snipped ...]" in block.content[0].text


def test_apply_returns_a_new_session_and_leaves_the_old_untouched():
    s = tool_session(8)
    snapshot = copy.deepcopy(s)
    plan = plan_snip(s)
    new = apply(plan)
    assert s == snapshot
    assert new is not s and new.messages is not s.messages
    assert new.compactions == [Compaction("microcompact", 17, trigger="manual", pre_tokens=plan.before,
                                          tokens_saved=plan.saved, cleared_tool_ids=plan.cleared_tool_ids,
                                          replaced={i: s.messages[i] for i in plan.edits})]
    assert [m.text() for m in new.messages] == [r.message.text() for r in plan.rows]
    assert not find_orphans(new.context)


def test_clear_keeps_the_newest_results_and_other_tools():
    s = tool_session(8, tool="Read")
    s.messages[5].blocks[1].tool_name = "Task"  # t2 is not a clearable tool
    plan = plan_clear(s, ClearSettings(keep_recent=5))
    cleared = {r.old for r in plan.rows if r.fate == "cleared"}
    # eligible: t0, t1, t3..t7 (t2 is Task); the 5 newest (t3..t7) stay
    assert cleared == {2, 4}
    assert all(r.message.blocks[0].text == CLEARED_MARKER for r in plan.rows if r.fate == "cleared")
    assert plan.cleared_tool_ids == ("t0", "t1")


def test_clear_skips_results_already_cleared_or_shorter_than_the_marker():
    s = tool_session(8)
    s.messages[2].blocks[0].text = CLEARED_MARKER
    s.messages[4].blocks[0].text = "ok"
    plan = plan_clear(s, ClearSettings(keep_recent=2))
    assert {r.old for r in plan.rows if r.fate == "cleared"} == {6, 8, 10, 12}
    again = plan_clear(apply(plan), ClearSettings(keep_recent=2))
    assert not again.changed


def test_clear_tool_uses_respects_trigger_keep_exclude_and_inputs():
    s = tool_session(6, size=4000)
    below = plan_clear_tool_uses(s, ContextEditSettings(trigger=10**9))
    assert not below.changed and "below the trigger" in below.note
    s.messages[3].blocks[1].tool_name = "Bash"
    plan = plan_clear_tool_uses(s, ContextEditSettings(trigger=0, keep=2, exclude_tools=("Bash",),
                                                       clear_tool_inputs=True))
    assert plan.cleared_tool_ids == ("t0", "t2", "t3")  # t1 is Bash (excluded); t4, t5 kept
    changed = {r.old for r in plan.rows if r.fate == "cleared"}
    assert changed == {1, 2, 5, 6, 7, 8}  # uses lose inputs, results their text
    assert plan.rows[1].message.blocks[1].input == {}
    by_name = plan_clear_tool_uses(s, ContextEditSettings(trigger=0, keep=2, clear_tool_inputs=("Bash",)))
    assert by_name.rows[3].message.blocks[1].input == {}  # the Bash use
    assert by_name.rows[1].message is s.messages[1]  # a Read use keeps its input


def test_clear_tool_uses_clear_at_least_refuses_a_small_gain():
    s = tool_session(4, size=400)
    plan = plan_clear_tool_uses(s, ContextEditSettings(trigger=0, keep=1, clear_at_least=10**6))
    assert not plan.changed and "clear_at_least" in plan.note


def test_plans_only_touch_the_current_context():
    s = tool_session(8)
    s.compactions.append(Compaction("compact", 9))
    for plan in (plan_snip(s, SnipSettings(preserve_last_n=0)), plan_clear(s, ClearSettings(keep_recent=0))):
        assert plan.rows[0].old == 9
        assert all(r.old >= 9 for r in plan.rows)
        assert apply(plan).messages[:9] == s.messages[:9]


def test_microcompaction_never_breaks_pairing_on_parallel_calls():
    s = Session("mem", "neutral", [prompt("go"), call(("a", "Read"), ("b", "Grep"), ("c", "Bash")),
                                   results(("a", "1" * 3000), ("b", "2" * 3000), ("c", "3" * 3000)),
                                   *[prompt(str(k)) for k in range(6)]])
    for plan in (plan_snip(s), plan_clear(s, ClearSettings(keep_recent=1)),
                 plan_clear_tool_uses(s, ContextEditSettings(trigger=0, keep=1, clear_tool_inputs=True))):
        assert plan.changed
        assert not find_orphans(apply(plan).context)


def test_replanning_does_not_grow_the_estimate_cache_but_applying_fills_it():
    from inspector.core.compaction import Estimates

    s = tool_session(20)
    est = Estimates()
    plan_clear(s, estimates=est)
    size = len(est._cache)
    assert size == len(s.messages)
    for keep in range(5):
        plan_clear(s, ClearSettings(keep_recent=keep), est)
        plan_snip(s, SnipSettings(max_chars=100 * (keep + 1)), est)
    assert len(est._cache) == size
    new = apply(plan_clear(s, estimates=est))
    assert all(id(m) in est._cache for m in new.messages)
