"""Codex rollouts, Anthropic requests (one, or captured request/response pairs) and OpenAI chat, on hand-written
fixtures made from FORMATS.md's description; plus detection by content, not name."""

import shutil

import pytest

from inspector.core.formats import detect, load

from conftest import FIXTURES

F = FIXTURES / "formats"


@pytest.mark.parametrize("name, fmt", [
    ("codex-rollout.jsonl", "codex"),
    ("codex-rollout-legacy.jsonl", "codex"),
    ("anthropic-request.json", "anthropic-request"),
    ("anthropic-requests.jsonl", "anthropic-request"),
    ("openai-chat.json", "openai-chat"),
    ("neutral.jsonl", "neutral"),
])
def test_detected_by_content_whatever_the_name(tmp_path, name, fmt):
    renamed = tmp_path / "session.txt"
    shutil.copy(F / name, renamed)
    assert detect(F / name) == fmt and detect(renamed) == fmt
    assert load(renamed).format == fmt


def test_codex_rollout():
    s = load(F / "codex-rollout.jsonl")
    assert (s.session_id, s.cwd, s.version, s.window) == (
        "0199a1b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b", "/home/dev/shop", "0.46.0", 272_000)
    assert s.system.startswith("Follow the repository's AGENTS.md")
    assert s.models == ["gpt-5-codex"]
    # token_count repeated with the same figures counts once; input already includes the cached part
    assert [r.measured_context for r in s.requests] == [6100, 6900, 7400, 3100, 3500]
    split = [(r.input_tokens, r.cache_read, r.cache_creation) for r in s.requests]
    assert split[:2] == [(4052, 2048, 0), (884, 6016, 0)]
    assert [r.output_tokens for r in s.requests] == [310, 420, 60, 80, 40]
    assert [s.messages[r.message_index].role for r in s.requests] == ["assistant"] * 5
    kinds = [m.kind for m in s.messages]
    assert kinds[:3] == ["meta", "meta", "prompt"]
    first = s.messages[3]  # reasoning + two parallel calls: one assistant message
    assert [b.type for b in first.blocks] == ["thinking", "redacted_thinking", "tool_use", "tool_use"]
    assert first.blocks[1].text == "" and first.blocks[1].size > 0  # encrypted: unknown size, no text
    assert first.blocks[2].input["command"][-1] == 'rg -n "def sync" src'
    assert [b.tool_id for b in s.messages[4].blocks] == ["call_A1", "call_B2"]
    assert s.messages[5].blocks[-1].tool_name == "apply_patch"
    [c] = s.compactions  # the `compacted` item and its `context_compacted` event are one compaction
    assert (c.index, c.pre_tokens, c.line) == (9, 7400, 25)
    assert kinds[9:13] == ["meta", "prompt", "prompt", "compact_summary"]
    assert s.requests[3].seen_start == 9 and s.requests[0].seen_start == 0
    [w] = s.warnings
    assert w.line == 34 and "future_event" in w.message


def test_older_codex_rollout_layout():
    """Before `{timestamp, type, payload}` lines, rollouts held a meta line and bare Responses-API items."""
    s = load(F / "codex-rollout-legacy.jsonl")
    assert s.session_id == "5973b6c0-94b8-487b-a530-2aeb6098ae0e" and s.warnings == [] and s.requests == []
    assert [m.kind for m in s.messages] == ["meta", "prompt", "assistant", "tool_result", "assistant"]
    assert [b.type for b in s.messages[2].blocks] == ["thinking", "redacted_thinking", "tool_use"]
    assert s.messages[3].blocks[0].tool_id == "call_1"


def test_anthropic_request_records_system_and_tools():
    s = load(F / "anthropic-request.json")
    assert s.system.startswith("You are Claude Code") and "Working directory" in s.system
    assert [t.name for t in s.tools] == ["Read", "Bash"] and s.tools[1].input_schema["required"] == ["command"]
    assert s.models == ["claude-sonnet-4-5-20250929"] and s.requests == []
    assert [m.kind for m in s.messages] == ["prompt", "assistant", "tool_result", "assistant", "tool_result",
                                            "assistant", "prompt"]
    results = list(s.messages[4].tool_results())
    assert results[0].content[0].text.startswith("build: config.h") and results[1].is_error
    image = s.messages[6].blocks[1]
    assert (image.type, image.media, image.size) == ("image", "image/png", 100)
    assert s.messages[0].lines == ()


def test_captured_request_response_pairs_give_measured_requests_and_compactions():
    s = load(F / "anthropic-requests.jsonl")
    assert [r.id for r in s.requests] == ["msg_01X", "msg_02Y", "msg_03Z"]
    assert [r.measured_context for r in s.requests] == [14_212, 14_623, 11_108]
    assert [m.kind for m in s.messages] == ["prompt", "assistant", "tool_result", "assistant", "compact_summary",
                                            "assistant"]
    [c] = s.compactions
    assert c.index == 4 and c.line == 3 and s.context_start == 4
    assert [m.lines for m in s.messages] == [(1,), (1,), (2,), (2,), (3,), (3,)]
    assert s.requests[2].seen_start == 4


def test_openai_chat():
    s = load(F / "openai-chat.json")
    assert [m.kind for m in s.messages] == ["system", "prompt", "assistant", "tool_result", "tool_result",
                                            "assistant"]
    calls = list(s.messages[2].tool_uses())
    assert [(b.tool_id, b.tool_name, b.input) for b in calls] == [
        ("call_1", "shell", {"cmd": "ls logs"}), ("call_2", "shell", {"cmd": "du -sh logs"})]
    assert s.messages[4].blocks[0].tool_id == "call_2"
    assert [t.name for t in s.tools] == ["shell"] and s.models == ["gpt-4o-2024-08-06"]


def test_openai_bare_list(tmp_path):
    path = tmp_path / "chat.json"
    path.write_text('[{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]')
    assert detect(path) == "openai-chat"
    assert [m.kind for m in load(path).messages] == ["system", "prompt"]


def test_loaders_never_estimate():
    """Loaders record what the file says; estimation belongs to token accounting (DESIGN.md: loaders never estimate)."""
    import ast

    from conftest import ROOT

    for source in sorted((ROOT / "inspector" / "core" / "formats").glob("*.py")):
        for node in ast.walk(ast.parse(source.read_text())):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
                assert not any("estimator" in n or n.endswith(".tokens") for n in names), (source.name, names)


def test_codex_058_layout_usage_precedes_the_items_it_measures():
    """0.58 writes a response's token_count before its items (they are recorded once the response completed),
    after an `info: null` placeholder, and repeats it after the tool outputs: each distinct figure measures the
    model output that follows it."""
    s = load(F / "codex-rollout-0.58.jsonl")
    assert s.warnings == [] and s.version == "0.58.0"
    assert [r.measured_context for r in s.requests] == [5000, 5500, 5600]
    assert [r.output_tokens for r in s.requests] == [300, 40, 20]  # summing to total_token_usage's 360
    assert [r.line for r in s.requests] == [7, 15, 22]
    kinds = [m.kind for m in s.messages]
    assert kinds == ["meta", "prompt", "assistant", "tool_result", "assistant", "prompt", "assistant"]
    first = s.messages[s.requests[0].message_index]
    assert [b.type for b in first.blocks] == ["thinking", "redacted_thinking", "tool_use", "tool_use"]
    assert first.blocks[1].tokens == 200 and first.blocks[0].tokens == 0  # the reasoning's size, from its usage
    assert [r.message_index for r in s.requests] == [2, 4, 6]
    assert [r.seen_end for r in s.requests] == [2, 4, 6]
    assert s.messages[4].text().startswith("main.c includes config.h")
