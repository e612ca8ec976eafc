"""Copilot CLI, Cline / Roo Code task folders, the Cline SDK and Kimi CLI: the real sessions in
tests/fixtures/agents/ (written by the programs offline, or built from their source where they cannot run here),
loaded and checked against what the agent's local server received (`server.jsonl`) or the source's own rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.core.formats import load, resolve
from inspector.core.formats.agent_stores import STORES, list_sessions, session_file
from inspector.core.limits import default_policy, window_info
from inspector.core.model import CONVERSATION, SYSTEM_PROMPT, TOOL_DEFINITIONS, LoadError

AGENTS = Path(__file__).parent / "fixtures" / "agents"


def only(pattern: str) -> Path:
    found = sorted(AGENTS.glob(pattern))
    assert len(found) == 1, found
    return found[0]


def server_log(scenario: Path) -> list[dict]:
    return [json.loads(line) for line in (scenario / "server.jsonl").read_text().splitlines()]


def test_copilot_basic_matches_what_the_server_received():
    scenario = AGENTS / "copilot-1.0.102" / "basic"
    s = load(only("copilot-1.0.102/basic/store/*"))  # the session folder: its events.jsonl
    assert s.format == "copilot" and default_policy(s) == "copilot"
    final = server_log(scenario)[-1]["request"]["messages"]
    assert s.system == final[0]["content"]  # system.message is the system prompt as sent
    assert [m.role for m in s.messages] == ["user", "assistant", "user", "assistant"]
    assert s.messages[0].text() == final[1]["content"]  # transformedContent, datetime included
    assert s.messages[2].blocks[0].type == "tool_result" and s.messages[2].text() == final[3]["content"]
    usages = [entry["reply"]["usage"] for entry in server_log(scenario)]
    assert [r.measured_context for r in s.requests] == [u["prompt_tokens"] for u in usages]
    assert [r.cache_read for r in s.requests] == [u["prompt_tokens_details"]["cached_tokens"] for u in usages]
    assert s.window == 64_000  # maxPromptTokens of a BYOK model with no stated limit


def test_copilot_background_compactions_are_boundaries_with_the_agents_breakdown():
    s = load(only("copilot-1.0.102/compaction/store/*/events.jsonl"))
    assert len(s.compactions) == 3 and s.window == 15_000
    for c in s.compactions:
        assert s.messages[c.index].kind == "compact_summary" and c.trigger == "threshold"
    # every request saw what the server received: after a compaction the summary, then what came while it ran
    sent = {e["reply"]["id"]: e["request"]["messages"] for e in server_log(AGENTS / "copilot-1.0.102" / "compaction")}
    assert len(s.requests) == 6 and all(r.model == "gpt-4.1" for r in s.requests)  # compaction calls left out
    for r in s.requests:
        seen = s.messages[r.seen_start:r.seen_end]
        assert len(seen) == len(sent[r.id]) - 1  # less the system message
        assert seen[-1].text() == sent[r.id][-1]["content"]
    assert sum(m.kind == "compact_summary" for r in s.requests for m in s.messages[r.seen_start:r.seen_end]) >= 4
    start = s.breakdowns[0]
    assert start.parts == {SYSTEM_PROMPT: 4724, TOOL_DEFINITIONS: 5748, CONVERSATION: 717}
    assert start.total == 12869 and start.limit == 15_000 and start.index == 3
    info = window_info(s)
    assert (info.thresholds.autocompact, info.thresholds.blocking) == (12_000, 14_250)
    assert start.total >= info.thresholds.autocompact  # Copilot started compacting past 80%, as the policy says


def test_kimi_requests_pair_the_usage_records_and_take_the_split_from_the_wire():
    folder = only("kimi-1.49.0/basic/store/sessions/*/*")
    s = load(folder)
    assert resolve(folder).name == "context.jsonl" and s.format == "kimi" and default_policy(s) == "kimi"
    log = server_log(AGENTS / "kimi-1.49.0" / "basic")
    assert s.system == log[0]["request"]["messages"][0]["content"]
    assert [r.measured_context for r in s.requests] == [e["reply"]["usage"]["prompt_tokens"] for e in log]
    assert [r.output_tokens for r in s.requests] == [e["reply"]["usage"]["completion_tokens"] for e in log]
    assert [r.id for r in s.requests] == [e["reply"]["id"] for e in log]
    assert s.requests[1].cache_read == log[1]["reply"]["usage"]["prompt_tokens_details"]["cached_tokens"]
    assert s.window == 262_144  # max_context_tokens from the wire
    assert s.messages[2].kind == "tool_result" and "tiny project" in s.messages[2].text()


def test_kimi_compaction_starts_the_context_with_the_summary():
    s = load(only("kimi-1.49.0/compaction/store/sessions/*/*/context.jsonl"))
    assert [c.index for c in s.compactions] == [0] and s.messages[0].kind == "compact_summary"
    assert "README.md was read" in s.messages[0].text()
    assert any("context_1.jsonl" in w.message for w in s.warnings)  # where the older history is
    last = server_log(AGENTS / "kimi-1.49.0" / "compaction")[-1]
    assert len(s.messages) == len(last["request"]["messages"])  # system prompt aside, plus the final answer
    info = window_info(s)
    assert info.thresholds.autocompact == min(int(262_144 * 0.85), 262_144 - 50_000)
    assert 230_000 >= info.thresholds.autocompact  # the reported usage that made Kimi compact
    assert s.compactions[0].trigger == "auto"  # its CompactionBegin came inside a step (wire.jsonl)


def test_kimi_compact_command_is_a_manual_compaction():
    s = load(only("kimi-1.49.0/manual-compact/store/sessions/*/*/context.jsonl"))
    assert [(c.index, c.trigger) for c in s.compactions] == [(0, "manual")]  # after TurnBegin "/compact", no step
    last = server_log(AGENTS / "kimi-1.49.0" / "manual-compact")[-1]
    assert len(s.messages) == len(last["request"]["messages"])  # system prompt aside, plus the final answer


def test_cline_cli_writes_the_sdk_format_with_per_call_metrics():
    scenario = AGENTS / "cline-cli-3.0.65" / "basic"
    s = load(only("cline-cli-3.0.65/basic/store/*"))
    assert s.format == "cline-sdk" and s.version == "3.0.65" and default_policy(s) == "cline-sdk"
    log = server_log(scenario)
    assert s.system == log[0]["request"]["messages"][0]["content"]
    assert [r.measured_context for r in s.requests] == [e["reply"]["usage"]["prompt_tokens"] for e in log]
    assert s.cwd and s.cwd.endswith("/work")  # from the manifest beside it


@pytest.mark.parametrize("name, boundary", [("basic.compaction.json", 0), ("agentic.compaction.json", 0),
                                            ("session.messages.json", None), ("success.messages.json", None)])
def test_cline_sdk_upstream_fixtures(name, boundary):
    s = load(AGENTS / "cline-sdk-upstream" / name)
    assert s.format == "cline-sdk" and not s.warnings
    assert [c.index for c in s.compactions] == ([] if boundary is None else [boundary])
    if name == "session.messages.json":
        assert len(s.messages) == 32 and len(s.requests) == 16 and s.system.startswith("You are Cline")
        assert s.requests[1].measured_context == 35912  # inputTokens, the cached 34,332 inside it


def test_cline_truncation_sends_the_first_pair_and_what_follows_the_range():
    s = load(AGENTS / "cline-3.89.2-sourced" / "truncated" / "ui_messages.json")  # any file of the folder
    assert s.format == "cline" and default_policy(s) == "cline" and not s.warnings
    c = s.compactions[0]
    assert c.trigger == "truncation" and c.index == 4
    context = [m.text() for m in s.context]
    assert context[0].startswith("<task>") and context[1].startswith("[NOTE] Some previous conversation")
    assert context[2] == "result missing"  # the orphaned result of message 6 replaced, as Cline sends it
    figures = [(r.input_tokens, r.cache_creation, r.cache_read, r.output_tokens) for r in s.requests]
    assert (3, 160, 14380, 90) in figures
    assert window_info(s).thresholds.autocompact == 160_000  # 200k window less 40k


def test_roo_condense_is_a_boundary_at_the_summary():
    s = load(AGENTS / "roo-code-3.x-sourced" / "condensed")
    assert s.format == "roo-code" and default_policy(s) == "roo-code"
    c = s.compactions[0]
    assert (c.index, c.trigger, c.pre_tokens) == (6, "condense", 16914)
    assert s.messages[6].kind == "compact_summary" and len(s.context) == 4
    assert len(s.requests) == 5 and s.requests[-1].message_index == 9
    assert window_info(s).thresholds.autocompact == int(200_000 * 0.9 - 8_192)


def test_stores_list_each_agents_sessions_from_its_env_override(tmp_path, monkeypatch):
    for var in ("COPILOT_HOME", "KIMI_SHARE_DIR", "KIMI_CODE_HOME", "CLINE_DIR", "CLINE_DATA_DIR",
                "CLINE_SESSION_DATA_DIR"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "nobody"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    assert all(list_sessions(store) == [] for store in STORES)  # missing stores list nothing
    monkeypatch.setenv("COPILOT_HOME", str(AGENTS / "copilot-1.0.102" / "basic" / "store" / ".."))
    monkeypatch.setenv("KIMI_SHARE_DIR", str(AGENTS / "kimi-1.49.0" / "compaction" / "store"))
    monkeypatch.setenv("CLINE_SESSION_DATA_DIR", str(AGENTS / "cline-cli-3.0.65" / "basic" / "store"))
    roo = tmp_path / "config" / "Code" / "User" / "globalStorage" / "rooveterinaryinc.roo-cline" / "tasks"
    roo.mkdir(parents=True)
    (roo / "t1").symlink_to(AGENTS / "roo-code-3.x-sourced" / "condensed")
    listed = {store.agent: list_sessions(store) for store in STORES}
    assert listed["cline-sdk"][0].path.name.endswith(".messages.json") and listed["cline-sdk"][0].project
    kimi = listed["kimi"][0]
    assert kimi.path.name == "context.jsonl" and kimi.project.startswith("/tmp/lab-kimi-")
    assert listed["roo-code"][0].path.name == "api_conversation_history.json"
    for refs in listed.values():
        for ref in refs:
            assert load(ref.path).format == ref.agent or ref.agent in ("cline", "roo-code")


def test_session_file_of_each_agents_folder():
    assert session_file(only("copilot-1.0.102/basic/store/*")).name == "events.jsonl"
    assert session_file(only("cline-cli-3.0.65/basic/store/*")).name.endswith(".messages.json")
    assert session_file(AGENTS / "roo-code-3.x-sourced" / "condensed").name == "api_conversation_history.json"
    assert session_file(AGENTS) is None


KIMI_CODE = AGENTS / "kimi-code-2.1.0"


def sent_text(message: dict) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else "".join(p.get("text", "") for p in content or ())


def test_kimi_code_session_is_what_its_requests_sent():
    check_kimi_code_basic(KIMI_CODE / "basic")


def check_kimi_code_basic(scenario: Path) -> None:
    """A Kimi Code session read against what its local server received (also run on a live recording:
    tests/test_lab_kimi_code.py)."""
    folder = one_session(scenario)
    s = load(folder)  # the session folder: agents/main/wire.jsonl
    assert resolve(folder).name == "wire.jsonl" and s.format == "kimi-code" and default_policy(s) == "kimi"
    log = server_log(scenario)
    last = log[-1]["request"]
    assert s.system == last["messages"][0]["content"]  # profile.bind's systemPrompt, as sent
    assert [t.name for t in s.tools] == [t["function"]["name"] for t in last["tools"]]
    assert [t.input_schema for t in s.tools] == [t["function"]["parameters"] for t in last["tools"]]
    usages = [e["reply"]["usage"] for e in log]
    assert [r.measured_context for r in s.requests] == [u["prompt_tokens"] for u in usages]
    assert [r.cache_read for r in s.requests] == [u["prompt_tokens_details"]["cached_tokens"] for u in usages]
    assert [r.output_tokens for r in s.requests] == [u["completion_tokens"] for u in usages]
    assert [r.id for r in s.requests] == [e["reply"]["id"] for e in log]
    for r, entry in zip(s.requests, log):  # each request saw what it sent, the system prompt aside
        sent = entry["request"]["messages"][1:]
        seen = s.messages[r.seen_start:r.seen_end]
        assert [m.role if m.kind != "tool_result" else "tool" for m in seen] == [m["role"] for m in sent]
        assert [m.text() for m in seen if m.role == "user"] == [sent_text(m) for m in sent if m["role"] != "assistant"]
    assert [m.kind for m in s.messages] == ["prompt", "meta", "meta", "assistant", "tool_result", "assistant"]
    assert s.messages[3].blocks[0].tool_name == "Read" and s.cwd and s.cwd.endswith("/work")
    assert window_info(s).thresholds.autocompact == min(int(262_144 * 0.85), 262_144 - 50_000)


def one_session(scenario: Path) -> Path:
    found = sorted(scenario.glob("store/sessions/wd_*/session_*"))
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize("scenario, trigger", [("compaction", "auto"), ("manual-compact", "manual")])
def test_kimi_code_compaction_holds_the_summary_and_the_kept_prompt(scenario, trigger):
    check_kimi_code_compaction(KIMI_CODE / scenario, trigger)


def check_kimi_code_compaction(scenario: Path, trigger: str) -> None:
    s = load(one_session(scenario) / "agents" / "main" / "wire.jsonl")
    (c,) = s.compactions
    assert c.trigger == trigger  # full_compaction.begin's source
    summary = s.messages[c.index]
    assert summary.kind == "compact_summary"
    log = server_log(scenario)
    after = log[-1]["request"]["messages"]
    assert summary.text() in [sent_text(m) for m in after]  # contextSummary, as sent after the compaction
    first_prompt = next(m for m in s.messages if m.kind == "prompt")
    assert s.messages[c.index + 1].text() == first_prompt.text() == sent_text(after[1])  # kept verbatim
    (own,) = [r for r in s.requests if r.kind == "compaction"]  # the summary's request: it saw the old context
    assert (own.seen_start, own.seen_end, own.message_index) == (0, c.index, c.index - 1)
    compaction_call = next(e for e in log if "handoff summary" in sent_text(e["request"]["messages"][-1]))
    assert own.measured_context == compaction_call["reply"]["usage"]["prompt_tokens"]
    assert c.pre_tokens == s.requests[s.requests.index(own) - 1].measured_context


def test_kimi_code_store_is_listed_and_told_from_kimi_cli(monkeypatch):
    monkeypatch.setenv("KIMI_CODE_HOME", str(KIMI_CODE / "compaction" / "store"))
    (store,) = [store for store in STORES if store.agent == "kimi-code"]
    (ref,) = list_sessions(store)
    assert ref.path.name == "wire.jsonl" and ref.project.endswith("/work")
    from inspector.core.formats.detect import detect

    assert detect(ref.path) == "kimi-code"
    old_wire = only("kimi-1.49.0/basic/store/sessions/*/*/wire.jsonl")  # Kimi CLI's UI log is no session at all
    with pytest.raises(LoadError, match="not a recognised session format"):
        detect(old_wire)


def test_kimi_code_subagent_is_its_own_window_started_by_the_agent_call():
    check_kimi_code_subagent(KIMI_CODE / "subagent")


def check_kimi_code_subagent(scenario: Path) -> None:
    s = load(one_session(scenario))
    assert not s.warnings
    from inspector.core.subagents import subagents

    (agent,) = subagents(s)
    call = s.messages[agent.index].blocks[0]
    assert call.tool_name == "Agent" and agent.tool_id == call.tool_id and agent.what  # the call that started it
    sub = load(agent.path)
    assert sub.messages[0].kind == "prompt" and sub.messages[0].text() == call.input["prompt"]  # its task
    log = server_log(scenario)
    own = [e for e in log if sent_text(e["request"]["messages"][1]) == call.input["prompt"]]
    assert [r.measured_context for r in sub.requests] == [e["reply"]["usage"]["prompt_tokens"] for e in own]
    assert sub.system == own[0]["request"]["messages"][0]["content"] != s.system  # a subagent's own prompt


def test_kimi_code_undo_leaves_what_the_next_request_sent():
    scenario = KIMI_CODE / "clear-undo"
    log = server_log(scenario)
    folders = sorted(scenario.glob("store/sessions/wd_*/session_*"), key=lambda f: json.loads(
        (f / "state.json").read_text())["createdAt"])
    assert len(folders) == 2  # /clear started a second session
    before, after = (load(f) for f in folders)
    assert not before.compactions and [m.text() for m in before.messages if m.kind == "prompt"] == [
        "Hello one\n/clear", "Hello two"]
    assert not after.warnings and len(after.requests) == 1  # the undone turn's request went with it
    (r,) = after.requests
    sent = log[-1]["request"]["messages"][1:]
    seen = after.messages[r.seen_start:r.seen_end]
    assert [m.text() for m in seen] == [sent_text(m) for m in sent]  # the reminders stayed, then the new prompt
    assert r.measured_context == log[-1]["reply"]["usage"]["prompt_tokens"]
    assert after.messages[-1].text() == log[-1]["reply"]["choices"][0]["message"]["content"]


def test_kimi_code_thinking_is_a_block_of_the_step_as_sent_back():
    check_kimi_code_thinking(KIMI_CODE / "thinking")


def check_kimi_code_thinking(scenario: Path) -> None:
    s = load(one_session(scenario))
    log = server_log(scenario)
    first, last = (s.messages[r.message_index] for r in s.requests)
    assert [b.type for b in first.blocks] == ["thinking", "tool_use"] and [b.type for b in last.blocks] == [
        "thinking", "text"]
    sent_back = next(m for m in log[-1]["request"]["messages"] if m["role"] == "assistant")
    assert first.blocks[0].text == sent_back["reasoning_content"] == log[0]["reply"]["choices"][0]["message"][
        "reasoning_content"]
    assert last.blocks[0].text == log[-1]["reply"]["choices"][0]["message"]["reasoning_content"]


def test_a_session_is_named_by_its_folder_where_every_file_is_named_alike():
    from inspector.core.formats.agent_stores import session_name

    wire = one_session(KIMI_CODE / "subagent") / "agents" / "main" / "wire.jsonl"
    assert session_name(wire) == wire.parent.parent.parent.name and session_name(wire).startswith("session_")
    assert session_name(wire.parent.parent / "agent-0" / "wire.jsonl").endswith(" (agent-0)")
    events = only("copilot-1.0.102/basic/store/*") / "events.jsonl"
    assert session_name(events) == events.parent.name
    assert session_name(Path("/x/y/claude-session.jsonl")) == "claude-session.jsonl"
    from inspector.core.formats.agent_stores import window_name

    assert window_name(wire.parent.parent / "agent-0" / "wire.jsonl") == "agent-0/wire.jsonl"
    assert window_name(Path("/p/subagents/agent-a1.jsonl")) == "agent-a1.jsonl"


def test_kimi_code_window_is_the_model_alias_of_the_stores_config(tmp_path):
    import shutil

    store = tmp_path / ".kimi-code"
    shutil.copytree(KIMI_CODE / "basic" / "store", store)
    folder = next(store.glob("sessions/wd_*/session_*"))
    assert load(folder).window is None  # the lab's model came from the environment: no file states its window
    (store / "config.toml").write_text('[models."__kimi_env_model__"]\nprovider = "local"\nmodel = "x"\n'
                                       "max_context_size = 131072\n")  # the alias profile.bind names
    s = load(folder)
    assert s.window == 131_072
    assert window_info(s).thresholds.autocompact == min(int(131_072 * 0.85), 131_072 - 50_000)
    (store / "config.toml").write_text("[models\nbroken")
    assert load(folder).window is None and not load(folder).warnings  # an unreadable config is no window, silently


def test_kimi_code_compaction_settings_of_its_config_move_the_kimi_policys_line(tmp_path):
    import shutil

    store = tmp_path / ".kimi-code"
    shutil.copytree(KIMI_CODE / "basic" / "store", store)
    folder = next(store.glob("sessions/wd_*/session_*"))
    (store / "config.toml").write_text("[loop_control]\ncompaction_trigger_ratio = 0.7\n"
                                       "reserved_context_size = 100000\n")
    s = load(folder)
    assert s.compaction_settings == {"compact_pct": 70.0, "reserved": 100_000}
    info = window_info(s)
    assert info.thresholds.autocompact == min(int(262_144 * 0.7), 262_144 - 100_000)  # the reserve decides here
    assert any("as its harness is set" in note for note in info.notes)
    assert window_info(s, compact_pct=90).thresholds.autocompact == 262_144 - 100_000  # the caller's wins
    other = window_info(s, "reference")  # another policy: the harness's settings are not its options
    assert not any("as its harness is set" in note for note in other.notes)
    (store / "config.toml").write_text("[loop_control]\ncompaction_trigger_ratio = 3\nreserved_context_size = -1\n")
    assert load(folder).compaction_settings == {}  # out of the ranges Kimi Code accepts: not its settings


def test_kimi_policy_reserve_applies_only_below_the_window():
    from inspector.core.model import Session

    s = Session(source="x", format="kimi-code", window=40_000)
    assert window_info(s).thresholds.autocompact == int(40_000 * 0.85)  # 50,000 reserved exceeds the window


def test_kimi_code_home_sessions_and_workspace_folders_open_their_newest_session(tmp_path):
    import os
    import shutil

    from inspector.core.discover import discover

    store = tmp_path / ".kimi-code"
    shutil.copytree(KIMI_CODE / "clear-undo" / "store", store)
    wires = sorted(store.glob("sessions/*/*/agents/main/wire.jsonl"))
    for n, wire in enumerate(wires):
        os.utime(wire, (1000 + n, 1000 + n))
    workspace = wires[0].parents[3]
    for folder in (store, store / "sessions", workspace):
        assert resolve(folder) == wires[-1]  # not the store's session_index.jsonl
        assert [e.path for e in discover(folder)] == wires[::-1] and discover(folder)[0].source == "kimi-code"
    (store / "sessions" / workspace.name).rename(store / "elsewhere")
    with pytest.raises(LoadError, match="holds no Kimi Code session yet"):
        resolve(store)


def test_kimi_code_image_part_keeps_its_media_type_and_size():
    from inspector.core.formats.kimi_code import KimiCodeLoader

    loader = KimiCodeLoader("x")
    loader.feed(1, 0, {"type": "context.append_message", "agentId": "main", "message": {
        "role": "user", "origin": {"kind": "user"}, "content": [
            {"type": "text", "text": "this"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,QUJD"}}],
        "toolCalls": [{"id": "c1", "name": "Read", "arguments": '{"path": "a"}'}]}})
    (m,) = loader.build().messages
    assert [(b.type, b.media, b.size) for b in m.blocks[:2]] == [("text", None, 0), ("image", "image/png", 4)]
    assert m.blocks[2].input == {"path": "a"}  # the call's JSON arguments, decoded as neutral.call_arguments does
