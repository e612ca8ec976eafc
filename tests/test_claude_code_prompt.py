"""What Claude Code 2.1.332's recorded requests let the views show: the real system prompt by block and heading,
each tool schema (MCP tools grouped by server), the system-reminders as their own category, and what changed from
one request to the next (core, `prompt --session`, and the app's prompt view)."""

from __future__ import annotations

import json
import re

import pytest
from app_helpers import ready, until
from bad_inputs.proc import cli

import lab
from claude_code import VERSION
from inspector.app import make_app
from inspector.app.widgets.prompt_view import PromptView
from inspector.app.widgets.request_changes import RequestChangesView
from inspector.core import categories as cat
from inspector.core.formats import load
from inspector.core.model import Session
from inspector.core.prompt.session_view import session_prompt, tool_group
from inspector.core.request_changes import all_changes, request_changes
from inspector.core.sent_requests import SentLog, SentRequest, TranscriptMessages, normalized
from inspector.core.tokens import account
from textual.widgets import DataTable


def fixture_session(scenario: str) -> Session:
    fixture = lab.load_fixture("claude-code", VERSION, scenario)
    return load(fixture.files("home/.claude/projects/*/*.jsonl")[0])


def sent_body(scenario: str, n: int) -> dict:
    """The body of the server's nth /v1/messages exchange, as a rebuilt request reads."""
    log = lab.load_fixture("claude-code", VERSION, scenario).server_log
    return normalized([e for e in log if e["path"] == "/v1/messages"][n]["body"])


def test_the_prompt_is_the_system_blocks_split_at_headings_then_the_tools():
    session = fixture_session("read-file")
    view = session_prompt(session)
    body = sent_body("read-file", 1)
    system = [s for s in view.sections if s.group == "system"]
    assert [s.title for s in system] == ["Block 1", "Block 2", "Block 2 › Harness", "Block 2 › Session-specific "
                                         "guidance", "Block 2 › Memory", "Block 2 › Environment",
                                         "Block 2 › Context management"]
    squeezed = re.compile(r"\s+")  # a section's text is stripped at its ends: every other character is there, in order
    assert squeezed.sub("", "".join(s.text for s in system)) == squeezed.sub("", "".join(
        b["text"] for b in body["system"]))
    tools = [s for s in view.sections if s.group == "tools"]
    assert [s.title for s in tools] == [f"Tool: {t['name']}" for t in body["tools"]]
    assert all(json.loads(s.text) == t for s, t in zip(tools, body["tools"]))
    assert all(s.kind == "recorded" and s.tokens > 0 for s in view.sections)
    assert not [s for s in view.sections if s.kind in ("measured", "reconstructed")]
    assert "as sent in request 2 of 2" in view.notes[0]


def test_mcp_tools_are_grouped_by_server_after_the_built_in_ones():
    view = session_prompt(fixture_session("mcp-tools"))
    groups = [s.group for s in view.sections if s.group not in ("system", "reminders")]
    assert groups == sorted(groups, key=lambda g: g != "tools") and groups[-2:] == ["mcp:lab", "mcp:lab"]
    assert [s.title for s in view.sections if s.group == "mcp:lab"] == ["MCP lab: list_queues",
                                                                       "MCP lab: lookup_ticket"]
    assert all("deferred" in s.note for s in view.sections if s.group == "mcp:lab")
    assert tool_group("mcp__lab__lookup_ticket") == "mcp:lab" and tool_group("Read") == "tools"
    first = session_prompt(fixture_session("mcp-tools"), request=fixture_session("mcp-tools").sent.requests[0])
    assert not [s for s in first.sections if s.group.startswith("mcp:")]  # loaded by ToolSearch later


def test_reminders_are_sections_and_a_category_of_their_own():
    session = fixture_session("read-file")
    reminders = [m for m in session.messages if m.attachment]
    assert {m.attachment for m in reminders} >= {"environment", "model", "date", "remote_session_change"}
    assert {m.role for m in reminders} == {"system", "user"}
    env = next(m for m in reminders if m.attachment == "environment")
    assert env.role == "system" and env.text().startswith("# Environment")  # sent without the wrapper
    sent = json.dumps(sent_body("read-file", 0)["messages"])
    assert all(json.dumps(m.text())[1:-1][:200] in sent for m in reminders)  # what was sent, verbatim
    view = session_prompt(session)
    assert [s.title for s in view.sections if s.group == "reminders"] == [f"Reminder: {m.attachment}"
                                                                         for m in reminders]
    acc = account(session)
    assert acc.by_category[cat.REMINDERS] > 0 and cat.label(cat.REMINDERS) == "system-reminders"
    assert {acc.category[i] for i, m in enumerate(session.messages) if m.attachment} == {cat.REMINDERS}


def test_the_corpus_keeps_its_measured_prefix():
    session = load(lab.REPO / "tests" / "corpus" / "claude-code-short.jsonl")
    assert session.sent is None
    assert session_prompt(session).sections[0].title == "Unrecorded prefix"


def test_changes_name_what_each_request_added():
    first, second = all_changes(fixture_session("parallel-tools").sent)
    assert first.first and [a.kind for a in first.added] == ["prompt", "system"]
    assert len(first.reminders) == 2  # the attribution reminder in the prompt, the environment message
    assert [(a.index, a.kind) for a in second.added] == [(2, "assistant"), (3, "tool_result")]
    assert second.added[0].summary == "calls Read ×2, Bash" and "3 result(s)" in second.added[1].summary
    assert not (second.dropped or second.replaced or second.cleared or second.tools_added)


def test_changes_name_tools_added_and_a_compaction():
    _, loaded = all_changes(fixture_session("tool-search").sent)
    assert loaded.tools_added == ["WebFetch"] and loaded.tools_removed == []
    *_, after = all_changes(fixture_session("manual-compact").sent)
    assert after.dropped == 4 and after.added[0].kind == "compact_summary"
    assert any("Called the Read tool" in r for r in after.reminders)  # the file re-read after the compaction
    paused = all_changes(fixture_session("microcompact").sent)[2]
    assert paused.api_clearing.startswith("once 27 tool uses, all but the last 12 tool uses, at least 20,000")
    assert "API clearing asked" in paused.short()
    retry = all_changes(fixture_session("api-error-retry").sent)[1]
    assert retry.short() == "same (retry)" and retry.lines() == ["nothing changed (a retry of the same request)"]


def test_changes_see_a_result_cleared_in_place(tmp_path):
    """A request that sends an earlier tool result cleared (as Claude Code's time-based clearing does)."""
    use = {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]}
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "big " * 50}]}
    cleared = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                            "content": "[Old tool result content cleared]"}]}
    later = {"role": "user", "content": "<system-reminder>\nThis chat has resumed after a long pause.\n"
                                        "</system-reminder>"}
    from inspector.core.sent_requests import message_hash

    blobs = {message_hash(m): m for m in (use, result, cleared, later)}
    h = [message_hash(m) for m in (use, result, cleared, later)]
    one = SentRequest("r1", "s", {}, None, 0, (h[0], h[1]))
    two = SentRequest("r2", "s", {}, "r1", 1, (h[2], h[3]))
    log = SentLog([one, two], {}, blobs, TranscriptMessages(str(tmp_path / "none.jsonl")))
    change = request_changes(log, two)
    assert change.replaced == [1] and change.cleared == ["t1"] and change.dropped == 0
    assert [a.kind for a in change.added] == ["reminder"] and change.reminders == [
        "This chat has resumed after a long pause."]


def test_prompt_session_prints_groups_requests_and_changes():
    path = lab.load_fixture("claude-code", VERSION, "mcp-tools").files("home/.claude/projects/*/*.jsonl")[0]
    done = cli("prompt", "--session", str(path))
    assert done.returncode == 0, done.stderr
    for line in ("Request:           3 of 3 recorded", "System prompt (7)", "Tools (12)", "MCP server lab (2 tools)",
                 "System-reminders (7)", "MCP lab: lookup_ticket"):
        assert line in done.stdout
    first = cli("prompt", "--session", str(path), "--request", "1", "--json")
    data = json.loads(first.stdout)
    assert {s["group"] for s in data["sections"]} == {"system", "tools", "reminders"}
    changes = cli("prompt", "--session", str(path), "--changes")
    assert "#2 line" in changes.stdout and "tools added: mcp__lab__list_queues, mcp__lab__lookup_ticket" \
        in changes.stdout
    as_json = json.loads(cli("prompt", "--session", str(path), "--changes", "--json").stdout)
    assert [r["tools_added"] for r in as_json["requests"]][1] == ["mcp__lab__list_queues", "mcp__lab__lookup_ticket"]
    wrong = cli("prompt", "--session", str(path), "--request", "9")
    assert wrong.returncode == 2 and "records requests 1 to 3" in wrong.stderr
    old = cli("prompt", "--session", str(lab.REPO / "tests" / "corpus" / "claude-code-short.jsonl"), "--changes")
    assert old.returncode == 2 and "records no requests" in old.stderr


async def test_the_prompt_view_groups_sections_and_shows_request_changes():
    path = lab.load_fixture("claude-code", VERSION, "tool-search").files("home/.claude/projects/*/*.jsonl")[0]
    app = make_app(path, home=False)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(app, pilot)
        await pilot.press("2")
        view = screen.query_one(PromptView)
        table = view.query_one("#prompt-sections", DataTable)
        sections = screen.figures.prompt.sections
        groups = [s.group for s in sections]
        assert table.row_count == len(sections) + len(dict.fromkeys(groups))  # a heading row per group
        assert "System prompt" in str(table.get_row_at(0)[0])
        await pilot.press("r")
        changes = view.query_one(RequestChangesView)
        await until(pilot, lambda: len(changes.changes) == 2)
        assert changes.display and not view.query_one("#prompt-main").display
        rows = changes.query_one("#changes-table", DataTable)
        assert "tools +1/-0" in str(rows.get_row_at(1)[4])
        await pilot.press("r")
        assert view.query_one("#prompt-main").display and not changes.display


@pytest.mark.parametrize("scenario", ["microcompact", "auto-compact", "mcp-tools"])
async def test_the_app_shows_every_view_of_a_recorded_session(scenario):
    path = lab.load_fixture("claude-code", VERSION, scenario).files("home/.claude/projects/*/*.jsonl")[0]
    app = make_app(path, home=False)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await ready(app, pilot)
        for key in ("1", "3", "2", "r"):
            await pilot.press(key)
        changes = screen.query_one(RequestChangesView)
        await until(pilot, lambda: len(changes.changes) == len(screen.figures.session.sent.requests))
        assert app.return_code is None and screen.is_attached
