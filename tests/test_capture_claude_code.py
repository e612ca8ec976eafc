"""The real Claude Code 2.1.332 through `context-inspector capture` to tests/mock_api (FORMATS.md section 8), run by
the lab's harness (tests/agents/lab.py) with only a fake key: the capture holds every request exactly as the server
received it, the answers as the server sent them, and loads as the conversation Claude Code wrote down."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import install
from claude_code import SUBAGENT_TASK, calls, subagent_request, use
from inspector.core.formats import load
from inspector.core.limits import default_policy
from lab import FAKE_KEY, Capture, Scratch, agent_env
from mock_api import MockAnthropicServer, responses as r

BINARY = install.binary("claude-code")
pytestmark = [pytest.mark.live, pytest.mark.skipif(
    BINARY is None, reason="Claude Code 2.1.332 is not installed here (python tests/agents/install.py claude-code)")]


def run_claude(scratch: Scratch, server: MockAnthropicServer, prompt: str, tools: str) -> tuple[Path, str]:
    """`capture --out FILE --upstream anthropic=SERVER -- claude -p PROMPT`; (the capture file, claude's output)."""
    out = scratch.root / "capture.jsonl"
    env = agent_env(scratch, {"ANTHROPIC_API_KEY": FAKE_KEY, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"})
    done = Capture(scratch).run([sys.executable, "-m", "inspector", "capture", "--out", str(out), "--upstream",
                                 f"anthropic={server.url}", "--", str(BINARY), "-p", prompt, "--allowedTools",
                                 tools], env, timeout=180)
    assert "recorded in" in done.stderr
    return out, done.stdout


def records(path: Path) -> list[dict]:
    return [x for x in map(json.loads, path.read_text().splitlines()) if "seq" in x]


def test_claude_code_through_the_proxy(tmp_path):
    scratch = Scratch.fresh("claude-code", "capture-read-file", base=tmp_path)
    notes = scratch.write("notes.txt", "The meeting moved to Thursday at 10:00.\n")
    with MockAnthropicServer(prompt_cache=True) as server:
        server.add(calls(use("Read", {"file_path": str(notes)}, "toolu_cap_read_1")),
                   r.text("notes.txt says the meeting moved to Thursday at 10:00."))
        out, said = run_claude(scratch, server, "What does notes.txt say?", "Read")
        received = [q for q in server.log if q["path"] == "/v1/messages"]
    assert "Thursday at 10:00" in said and server.pending == 0
    text = out.read_text()
    assert FAKE_KEY not in text
    got = records(out)
    assert [(x["protocol"], x["path"], x["query"], x["status"], x["complete"]) for x in got] == [
        ("anthropic-messages", "/v1/messages", {"beta": "true"}, 200, True)] * len(received)
    assert [x["request"] for x in got] == [q["body"] for q in received]  # exactly what the server received
    assert got[0]["request_headers"]["user-agent"].startswith("claude-cli/2.1.332")
    assert "x-api-key" not in got[0]["request_headers"] and "authorization" not in got[0]["request_headers"]
    # each answer rebuilt from the stream is the message the server streamed
    assert [x["response"] for x in got] == [q["response"]["body"] for q in received]
    s = load(out)
    assert [m.kind for m in s.messages if m.kind != "meta"][-4:] == ["prompt", "assistant", "tool_result",
                                                                    "assistant"]
    assert "Thursday at 10:00" in s.messages[-2].text() and s.messages[-1].text().startswith("notes.txt says")
    assert "Read" in [t.name for t in s.tools] and "cc_version=2.1.332" in s.system
    assert default_policy(s) == "claude-code"  # the capture of a request Claude Code sent: its own rule
    assert [q.measured_context for q in s.requests] == [
        sum(q["response"]["body"]["usage"][k] for k in ("input_tokens", "cache_creation_input_tokens",
                                                "cache_read_input_tokens")) for q in received]
    transcript = next(scratch.home.glob(".claude/projects/*/*.jsonl"))
    assert load(transcript).messages[-1].text() == s.messages[-1].text()


def test_claude_code_subagent_is_another_conversation_of_the_capture(tmp_path):
    scratch = Scratch.fresh("claude-code", "capture-subagent", base=tmp_path)
    notes = scratch.write("notes.txt", "first line\nsecond line\n")
    with MockAnthropicServer(prompt_cache=True) as server:
        server.add(calls(use("Agent", {"description": "Count lines", "prompt": SUBAGENT_TASK,
                                       "subagent_type": "Explore", "run_in_background": False}, "toolu_cap_agent_1")),
                   r.text("The subagent counted 2 lines in notes.txt."))
        server.add_for(subagent_request, calls(use("Read", {"file_path": str(notes)}, "toolu_cap_sub_read_1")),
                       r.text("notes.txt has 2 lines."))
        out, said = run_claude(scratch, server, "Use a subagent to count the lines of notes.txt.", "Agent,Read")
    assert "2 lines" in said and server.pending == 0
    s = load(out)
    assert s.messages[-1].text() == "The subagent counted 2 lines in notes.txt."
    assert any(b.tool_name == "Agent" for m in s.messages for b in m.tool_uses())
    others = [w.message for w in s.warnings if w.message.startswith("another conversation")]
    assert len(others) == 1 and "2 requests" in others[0] and SUBAGENT_TASK[:40] in others[0]

