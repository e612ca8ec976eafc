"""Neutral format: the writer helpers and the loader agree (round trip), and hand-written files load as documented."""

import json

import pytest

from inspector.core.formats import detect, load
from inspector.core.formats.neutral import NeutralLoader, header_dict, message_to_dict, session_lines
from inspector.core.model import Block, Message, Request

from conftest import CORPUS, FIXTURES

NEUTRAL = FIXTURES / "formats" / "neutral.jsonl"


def write_jsonl(path, objs):
    path.write_text("".join(json.dumps(o) + "\n" for o in objs))
    return path


def test_claude_code_session_round_trips_through_neutral(tmp_path):
    original = load(CORPUS / "claude-code-manual-compact.jsonl")
    path = write_jsonl(tmp_path / "s.jsonl", session_lines(original))
    assert detect(path) == "neutral"
    copy = load(path)
    assert copy.warnings == []
    assert [m.to_api() for m in copy.messages] == [m.to_api() for m in original.messages]
    assert [m.kind for m in copy.messages] == [m.kind for m in original.messages]
    assert [m.uuid for m in copy.messages] == [m.uuid for m in original.messages]
    strip = lambda r: (r.id, r.model, r.measured_context, r.output_tokens, r.message_index, r.seen_start, r.seen_end)
    assert [strip(r) for r in copy.requests] == [strip(r) for r in original.requests]
    assert [(c.kind, c.index, c.trigger, c.pre_tokens) for c in copy.compactions] == \
           [(c.kind, c.index, c.trigger, c.pre_tokens) for c in original.compactions]
    assert copy.models == original.models and copy.context_start == original.context_start


def test_message_to_dict_shapes():
    m = Message("assistant", "assistant", [Block("text", "hi")], uuid="u1", model="claude-x")
    r = Request("msg_1", "claude-x", 1, 2, 3, 4, message_index=0)
    d = message_to_dict(m, r)
    assert d == {"role": "assistant", "kind": "assistant", "content": "hi", "id": "u1", "model": "claude-x",
                 "usage": {"id": "msg_1", "input_tokens": 1, "cache_creation_input_tokens": 2,
                           "cache_read_input_tokens": 3, "output_tokens": 4}}
    tool = Message("user", "tool_result", [Block("tool_result", "out", tool_id="t1", is_error=True)])
    assert message_to_dict(tool)["content"] == [
        {"type": "tool_result", "tool_use_id": "t1", "content": "out", "is_error": True}]


def test_header_dict_carries_system_and_tools():
    s = load(FIXTURES / "formats" / "neutral.jsonl")
    h = header_dict(s, created="2026-01-01T00:00:00+00:00")
    assert h["event"] == "session" and h["version"] == 1 and h["created"].startswith("2026")
    assert h["system"] == s.system and [t["name"] for t in h["tools"]] == ["read_file", "bash"]
    assert set(h) == {"event", "version", "cwd", "model", "system", "tools", "created"}


def test_hand_written_neutral_file():
    s = load(NEUTRAL)
    assert s.format == "neutral" and s.system.startswith("You are a coding agent")
    assert s.cwd == "/home/dev/app"
    assert [m.kind for m in s.messages] == [
        "prompt", "assistant", "tool_result", "tool_result", "assistant", "compact_summary", "summary_ack",
        "prompt", "assistant", "tool_result", "assistant"]
    a = s.messages[1]
    assert [(b.type, b.tool_name) for b in a.blocks] == [("text", None), ("tool_use", "read_file"),
                                                          ("tool_use", "bash")]
    assert a.blocks[2].input == {"command": "ls"}  # OpenAI-style arguments string parsed
    assert [r.measured_context for r in s.requests] == [1200, 5400, 2100, 2500]
    compact, micro = s.compactions
    assert (compact.kind, compact.index, compact.trigger, compact.pre_tokens) == ("compact", 5, "auto", 5400)
    assert s.context_start == 5 and s.requests[-2].seen_start == 5
    assert (micro.kind, micro.cleared_tool_ids) == ("microcompact", ("c3",))
    assert s.messages[9].blocks[0].text == "[Old tool result content cleared]"
    assert [w.line for w in s.warnings] == [14]
    assert "unknown event" in s.warnings[0].message


def test_plain_reference_design_list_loads_as_neutral(tmp_path):
    path = tmp_path / "msgs.json"
    path.write_text(json.dumps([
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "text", "text": "calling"}],
         "tool_calls": [{"id": "c1", "name": "bash", "input": {"command": "pwd"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "/home"},
    ]))
    assert detect(path) == "neutral"
    s = load(path)
    assert [m.kind for m in s.messages] == ["prompt", "assistant", "tool_result"]
    assert s.messages[2].blocks[0].tool_id == "c1" and s.messages[0].lines == ()


def test_loader_is_incremental():
    loader = NeutralLoader("mem")
    loader.feed(1, 0, {"role": "user", "content": "a"})
    first = loader.build()
    loader.feed(2, 10, {"role": "assistant", "content": "b"})
    assert len(first.messages) == 1 and len(loader.build().messages) == 2


@pytest.mark.parametrize("obj, text", [(["x"], "not a JSON object"), ({"foo": 1}, "neither a message")])
def test_odd_lines_warn(obj, text):
    loader = NeutralLoader("mem")
    loader.feed(3, 0, obj)
    [w] = loader.build().warnings
    assert w.line == 3 and text in w.message
