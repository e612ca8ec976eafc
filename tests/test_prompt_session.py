"""The prompt of loaded sessions: recorded (Anthropic, Codex), measured and reconstructed (Claude Code)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.core.estimators import get_estimator
from inspector.core.formats import load
from inspector.core.model import Block, Message, Request, Session, ToolSchema
from inspector.core.prompt.session_view import session_prompt

from conftest import FIXTURES

SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


@pytest.fixture(autouse=True)
def empty_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    (tmp_path / "home").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


def test_anthropic_request_shows_system_prompt_and_each_tool() -> None:
    session = Session("req.json", "anthropic-request", system="You are a careful assistant.",
                      tools=[ToolSchema("read_file", "Read a file.", SCHEMA), ToolSchema("bash", "Run a command.")])
    view = session_prompt(session)
    assert [(s.title, s.source, s.kind) for s in view.sections] == [
        ("System prompt", "recorded", "recorded"), ("Tool: read_file", "recorded", "recorded"),
        ("Tool: bash", "recorded", "recorded")]
    est = get_estimator("script")
    assert view.sections[0].tokens == est.text("You are a careful assistant.")
    tool = view.sections[1]
    assert json.loads(tool.text) == {"name": "read_file", "description": "Read a file.", "input_schema": SCHEMA}
    assert tool.tokens == est.text(json.dumps(json.loads(tool.text), ensure_ascii=False)) > 0
    assert view.tokens == sum(s.tokens for s in view.sections)
    assert view.notes == []


def test_codex_shows_its_instructions() -> None:
    view = session_prompt(Session("rollout.jsonl", "codex", system="You are Codex."))
    assert [(s.title, s.text, s.kind) for s in view.sections] == [("Instructions", "You are Codex.", "recorded")]
    assert view.notes == ["Codex does not record its tool schemas",
                          "no request with usage: the tool schemas' size cannot be measured"]


def test_codex_prefix_by_section_adds_up_to_the_first_request() -> None:
    """Codex 0.171 (the lab's rollout): its instructions by heading, its developer message part by part, the
    environment context, and the unrecorded rest (tool schemas, the API's system message) measured: together the
    first request's context less the user's prompt."""
    [path] = (FIXTURES / "agents" / "codex-0.171.0" / "read-file").glob("home/.codex/sessions/*/*/*/*.jsonl")
    session = load(path)
    view = session_prompt(session, "o200k")
    titles = [s.title for s in view.sections]
    assert titles[0] == "Instructions" and "Personality" in titles
    assert titles[-5:] == ["Skills instructions", "Permissions instructions", "Tools", "Environment context",
                           "Unrecorded: tool schemas, the API's system message"]
    assert all(s.tokens > 0 for s in view.sections)
    prompt = session.messages[next(i for i, m in enumerate(session.messages) if m.kind == "prompt")]
    assert abs(view.tokens + 12 - session.requests[0].measured_context) <= 30, (view.tokens, prompt.text())


def test_a_format_without_a_prompt_says_so() -> None:
    view = session_prompt(Session("chat.json", "openai-chat"))
    assert view.sections == [] and view.notes == ["this openai-chat session records no system prompt"]
    system = Message("system", "system", [Block("text", text="Be brief.")], line=1)
    view = session_prompt(Session("chat.json", "openai-chat", messages=[system]))
    assert [(s.title, s.text, s.path, s.file_line(1)) for s in view.sections] == [
        ("System message", "Be brief.", "chat.json", 1)]


def claude_code_session(cwd: str | None) -> Session:
    prompt = Message("user", "prompt", [Block("text", text="hello " * 70)], uuid="u1")
    answer = Message("assistant", "assistant", [Block("text", text="hi")], uuid="a1", response_id="r1")
    request = Request("r1", "claude-opus-4-6", 3, 20_000, 0, 5, message_index=1, seen_start=0, seen_end=1)
    return Session("s.jsonl", "claude-code", messages=[prompt, answer], requests=[request], cwd=cwd,
                   models=["claude-opus-4-6"])


def test_claude_code_prefix_is_measured_and_claude_md_reconstructed(tmp_path: Path) -> None:
    (tmp_path / "home" / ".claude").mkdir()
    (tmp_path / "home" / ".claude" / "CLAUDE.md").write_text("user rule\n")
    project = tmp_path / "project"
    project.mkdir()
    (project / "CLAUDE.md").write_text("project rule\n")
    view = session_prompt(claude_code_session(str(project)))
    prefix, user, own = view.sections
    assert (prefix.title, prefix.source, prefix.kind, prefix.text) == ("Unrecorded prefix", "measured", "measured",
                                                                       "")
    estimate = 20_003 - prefix.tokens  # measured context minus the prefix: what the messages were estimated at
    assert 0 < estimate < 1_000
    assert "measured from usage" in prefix.note
    assert [(s.source, s.kind) for s in (user, own)] == [
        (str(tmp_path / "home" / ".claude" / "CLAUDE.md"), "reconstructed"),
        (str(project / "CLAUDE.md"), "reconstructed")]
    assert "project rule" in own.text and own.tokens > 0 and "may differ" in own.note
    assert view.tokens == prefix.tokens  # reconstructed files are part of the measured prefix, not extra
    assert view.notes == [f"without the reconstructed files, about {prefix.tokens - user.tokens - own.tokens:,} "
                          "tokens of the prefix are the system prompt, tool schemas and environment"]


def test_claude_code_elsewhere_or_without_cwd(tmp_path: Path) -> None:
    view = session_prompt(claude_code_session(str(tmp_path / "gone")))
    assert [s.kind for s in view.sections] == ["measured"]
    assert view.notes == [f"{tmp_path / 'gone'} does not exist on this machine: CLAUDE.md files cannot be "
                          "reconstructed"]
    view = session_prompt(claude_code_session(None))
    assert "records no working directory" in view.notes[0]


def test_real_claude_code_transcript(corpus: Path) -> None:
    view = session_prompt(load(corpus / "claude-code-short.jsonl"))
    prefix = view.sections[0]
    assert prefix.kind == "measured"
    assert 20_000 < prefix.tokens < 25_353  # the first request's 25,353 minus what its messages hold


def test_recorded_prompt_split_at_its_headings() -> None:
    system = "You are helpful.\n\n# Tone\n\nBe brief.\n```\n# a comment in code\n```\n\n# Tools\n\nUse them."
    view = session_prompt(Session("req.json", "anthropic-request", system=system))
    assert [(s.title, s.text) for s in view.sections] == [
        ("System prompt", "You are helpful."), ("Tone", "# Tone\n\nBe brief.\n```\n# a comment in code\n```"),
        ("Tools", "# Tools\n\nUse them.")]
    assert "\n\n".join(s.text for s in view.sections) == system


def test_our_own_session_shows_the_built_sections(tmp_path: Path) -> None:
    from inspector.core.prompt import build_system_prompt, prompt_text

    built = build_system_prompt(tmp_path, memory=False)
    view = session_prompt(Session("ours.jsonl", "neutral", system=prompt_text(built)))
    # the git block continues the environment's list under its heading, so it is no heading of its own
    assert [s.title for s in view.sections] == [s.title for s in built if s.source != "git"]


def test_exact_estimator_on_recorded_prompt_and_tools(mock_api) -> None:
    from inspector.core.estimators import _COUNT_CACHE

    _COUNT_CACHE.clear()
    session = Session("req.json", "anthropic-request", system="Be brief.\n\n# Tools\n\nUse them well.",
                      tools=[ToolSchema("read_file", "Read a file.", SCHEMA)])
    view = session_prompt(session, "exact")
    body = next(r.body for r in mock_api.requests if r.body.get("system"))
    assert body["system"] == session.system and body["tools"][0]["name"] == "read_file"
    expected = sum(-(-len(t) // 4) for t in [session.system, "read_fileRead a file." + json.dumps(SCHEMA)])
    assert view.tokens == expected
