"""The Agent view under Pilot: the real SDK against the local Messages-API server (tests/mock_api), the loop in the
panel's thread worker, every view updating from the snapshots it posts.

Every wait is bounded polling of app state or `wait_for_complete`, never a fixed sleep standing in for a condition.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from textual.widgets import Input

from inspector.app import make_app
from inspector.app.agent_bridge import AgentOptions
from inspector.core.figures import Settings
from inspector.app.screens.main import MainScreen
from inspector.app.widgets.agent_panel import AgentPanel, PermissionPrompt, _plain
from inspector.app.widgets.context_bar import ContextBar
from inspector.app.widgets.message_list import MessageList
from inspector.app.widgets.timeline import Timeline
from inspector.core.formats import load
from inspector.core.model import Block, Message, Session
from mock_api import MOCK_KEY, responses as r

SIZE = (120, 40)
FIXED = Settings(estimator="chars35")
SUMMARY = "<summary>The user and the assistant discussed topics 0 to 2; nothing is pending.</summary>"


@pytest.fixture(autouse=True)
def data_dir(tmp_path, monkeypatch) -> Path:
    """The per-user data directory (where agent sessions go by default) inside the test's tmp_path."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("CONTEXT_INSPECTOR_MEMORY", str(tmp_path / "no-memory.md"))
    monkeypatch.delenv("ANTHROPIC_MODEL", raising=False)
    return tmp_path / "data"


@pytest.fixture
def work(tmp_path) -> Path:
    d = tmp_path / "work"
    d.mkdir()
    return d


async def until(pilot, condition, what: str, timeout: float = 20.0) -> None:
    for _ in range(int(timeout / 0.02)):
        if condition():
            return
        await pilot.pause(0.02)
    panel = next(iter(pilot.app.screen.query(AgentPanel)), None)
    notes = [n.message for n in pilot.app._notifications]
    raise AssertionError(f"timed out waiting for {what}; notifications: {notes}; the agent log:\n"
                         f"{panel.transcript() if panel else ''}")


def text_of(widget, selector: str) -> str:
    return _plain(widget.query_one(selector))


def asking(panel) -> bool:
    """A question is pending and mounted (`pending` is set as the prompt is mounted: its parts follow)."""
    return panel.pending is not None and len(panel.pending.query(".question")) > 0


async def agent_view(app, pilot) -> tuple[MainScreen, AgentPanel]:
    await until(pilot, lambda: isinstance(app.screen, MainScreen), "the session screen")
    screen = app.screen
    panel = screen.query_one(AgentPanel)
    await until(pilot, lambda: panel.cancel is not None and screen.figures is not None, "the agent view")
    await screen.workers.wait_for_complete()
    await pilot.pause()
    return screen, panel


async def send(pilot, panel: AgentPanel, text: str, accepted: bool = True) -> None:
    box = panel.query_one("#agent-input", Input)
    box.focus()
    box.value = text
    await pilot.pause()  # focus changes are queued (call_later): let every one queued so far run first
    await until(pilot, lambda: panel.screen.focused is box, "the prompt box to have the focus")
    await pilot.press("enter")
    if accepted:
        await until(pilot, lambda: f"› {text}" in panel.transcript(), "the prompt in the log")


async def settled(pilot, panel: AgentPanel) -> None:
    await until(pilot, lambda: not panel.running, "the turn to end")
    await panel.screen.workers.wait_for_complete()
    await until(pilot, lambda: panel.settled, "exact figures for the last snapshot")


def history_valid(session: Session) -> bool:
    context = session.context
    for i, m in enumerate(context):
        uses = {b.tool_id for b in m.tool_uses()}
        answered = set()
        for later in context[i + 1:]:
            if later.role != "user":
                break
            answered |= {b.tool_id for b in later.tool_results()}
        if not uses <= answered:
            return False
    return True


def assert_views_show(screen: MainScreen) -> None:
    """The list, the bar and the timeline all draw the session on screen, every message once in order."""
    lst = screen.query_one(MessageList)
    session = screen.session
    assert [i for i in lst.rows if i >= 0] == list(range(len(session.messages)))
    assert lst.figures.session is session
    assert screen.query_one(ContextBar).figures.session is session
    assert screen.query_one(Timeline).figures.session is session
    assert len(screen.figures.requests) == len([q for q in session.requests if q.message_index >= 0])


async def test_a_turn_with_a_tool_call_updates_every_view_and_the_file(mock_api, work, data_dir):
    (work / "notes.txt").write_text("alpha\nbeta [bold]not markup[/bold]\n")
    mock_api.add(r.tool_calls(("read_file", {"path": "notes.txt"}), preamble="Let me look."),
                 r.text("notes.txt has two lines: alpha and beta."))
    app = make_app(None, home=False, settings=FIXED, agent=AgentOptions(cwd=work, open_view=True))
    async with app.run_test(size=SIZE) as pilot:
        screen, panel = await agent_view(app, pilot)
        assert screen.query_one("#views").active == "agent"
        before = screen.figures.window.used
        assert not screen.session.messages and screen.session.system  # the system prompt is there at once
        await send(pilot, panel, "What is in notes.txt?")
        await settled(pilot, panel)

        log = panel.transcript()
        assert "› What is in notes.txt?" in log
        assert "→ read_file" in log and '"notes.txt"' in log
        assert "✓ " in log and "[bold]not markup[/bold]" in log  # tool text drawn literally
        assert "notes.txt has two lines: alpha and beta." in log
        assert "usage: context" in log and "— end_turn · 2 model calls —" in log

        session = screen.session
        assert [(m.role, m.kind) for m in session.messages] == [
            ("user", "prompt"), ("assistant", "assistant"), ("user", "tool_result"), ("assistant", "assistant")]
        assert len(session.requests) == 2 and history_valid(session)
        assert_views_show(screen)
        assert screen.figures.window.used_measured and before != screen.figures.window.used  # measured now
        assert screen.figures.window.used >= session.requests[-1].measured_context
        assert screen.query_one(MessageList).cursor == len(session.messages) - 1  # the list follows the turn

        path = panel.agent.path
        assert path.parent == data_dir / "context-inspector" / "sessions"
        assert str(path) in text_of(panel, "#agent-status")
        assert MOCK_KEY not in text_of(panel, "#agent-status") + log
        loaded = load(path)
        assert not loaded.warnings
        assert [m.text() for m in loaded.messages] == [m.text() for m in session.messages]
        assert [q.measured_context for q in loaded.requests] == [q.measured_context for q in session.requests]
        assert MOCK_KEY not in path.read_text()


async def test_permission_denied_then_allowed_once_then_for_the_session(mock_api, work):
    mock_api.add(r.tool_calls(("write_file", {"path": "a.txt", "content": "A"})),
                 r.tool_calls(("write_file", {"path": "b.txt", "content": "B"})),
                 r.tool_calls(("write_file", {"path": "c.txt", "content": "C"})),
                 r.tool_calls(("write_file", {"path": "d.txt", "content": "D"})),
                 r.tool_calls(("read_file", {"path": "d.txt"})),
                 r.text("done"))
    app = make_app(None, home=False, settings=FIXED, agent=AgentOptions(cwd=work, open_view=True))
    async with app.run_test(size=SIZE) as pilot:
        screen, panel = await agent_view(app, pilot)
        await send(pilot, panel, "write some files")
        answers = iter(["n", "y", "a"])
        for expected in ("a.txt", "b.txt", "c.txt"):
            await until(pilot, lambda: asking(panel), f"the question about {expected}")
            prompt = panel.pending
            assert expected in text_of(prompt, ".question")
            await until(pilot, lambda: screen.focused is prompt, "the question to have the focus")
            await pilot.press(next(answers))
            await until(pilot, lambda: panel.pending is not prompt, "the answer to be taken")
        await settled(pilot, panel)

        prompts = list(panel.query(PermissionPrompt))
        assert len(prompts) == 3  # d.txt was covered by "allow for this session"; read_file never asks
        assert not (work / "a.txt").exists()
        assert [(work / n).read_text() for n in ("b.txt", "c.txt", "d.txt")] == ["B", "C", "D"]
        log = panel.transcript()
        assert "→ denied" in log and "→ allowed once" in log and "→ allowed for this session" in log
        denied = mock_api.message_requests[1].messages[-1]["content"][0]
        assert denied["type"] == "tool_result" and denied["is_error"] and "Permission denied" in str(denied)
        assert history_valid(screen.session)


async def test_a_button_answers_a_question_with_the_mouse(mock_api, work):
    mock_api.add(r.tool_calls(("bash", {"command": "echo hi > out.txt"})), r.text("ok"))
    app = make_app(None, home=False, settings=FIXED, agent=AgentOptions(cwd=work, open_view=True))
    async with app.run_test(size=SIZE) as pilot:
        screen, panel = await agent_view(app, pilot)
        await send(pilot, panel, "run it")
        await until(pilot, lambda: asking(panel), "the question")
        assert "runs a shell command" in text_of(panel.pending, ".question")
        await pilot.click("#allow_once")
        await settled(pilot, panel)
        assert (work / "out.txt").read_text().strip() == "hi"


def history_file(path: Path, model: str = "claude-sonnet-4-6") -> Path:
    """An agent session with three long exchanges, written by the agent's own writer."""
    from inspector.core.agent.writer import SessionWriter

    session = Session(source=str(path), format="neutral", system="You are a test agent.", models=[model])
    for i in range(3):
        session.messages += [Message("user", "prompt", [Block("text", f"topic {i}: " + "question " * 110)],
                                     uuid=f"u{i}"),
                             Message("assistant", "assistant", [Block("text", f"answer {i}: " + "reply " * 160)],
                                     uuid=f"a{i}")]
    SessionWriter(path, session).close()
    return path


async def test_compaction_fires_mid_turn_and_the_list_shows_the_boundary(mock_api, work, tmp_path):
    (work / "big.txt").write_text("line of a big file\n" * 700)
    path = history_file(tmp_path / "agent.jsonl")
    mock_api.add(r.tool_calls(("read_file", {"path": "big.txt"}), input_tokens=3000), r.text("read it"))
    mock_api.add_for(lambda req: not req.has_tools, r.text(SUMMARY))
    options = AgentOptions(cwd=work, session=path, compact_at=5000, open_view=True)
    app = make_app(path, home=False, settings=Settings(estimator="chars35", micro_strategy="snip"), agent=options)
    async with app.run_test(size=SIZE) as pilot:
        screen, panel = await agent_view(app, pilot)
        assert "compacts above 5,000 tokens" in text_of(panel, "#agent-status")
        await send(pilot, panel, "read big.txt")
        await settled(pilot, panel)

        log = panel.transcript()
        assert log.index("→ read_file") < log.index("⟳ compacting") < log.index("✓ compaction (summary)")
        assert "summary: " + SUMMARY in log  # the summary streamed into the log
        session = screen.session
        compact = session.compactions[-1]
        assert compact.kind == "compact" and session.context_start == compact.index > 6
        assert "discussed topics 0 to 2" in mock_api.message_requests[-1].text()
        lst = screen.query_one(MessageList)
        assert -len(session.compactions) in lst.rows  # the boundary is a row of the list
        assert lst.rows.index(-len(session.compactions)) < lst.rows.index(compact.index)
        assert_views_show(screen)
        assert history_valid(session)
        assert "breaker: ready" in text_of(panel, "#agent-status")

        assert panel.agent.path == path  # the agent's own file, named with --agent: continued in place
        loaded = load(path)
        assert loaded.context_start == session.context_start and len(loaded.messages) == len(session.messages)


async def test_failed_compactions_open_the_breaker_and_the_status_says_so(mock_api, work, tmp_path):
    path = history_file(tmp_path / "agent.jsonl")
    mock_api.add(*[r.tool_calls(("glob", {"pattern": "*"})) for _ in range(3)], r.text("finished anyway"))
    mock_api.add_for(lambda req: not req.has_tools, *[r.invalid_request("summary refused") for _ in range(3)])
    options = AgentOptions(cwd=work, session=path, compact_at=100, open_view=True)
    app = make_app(path, home=False, settings=Settings(estimator="chars35", micro_strategy="snip"), agent=options)
    async with app.run_test(size=SIZE) as pilot:
        screen, panel = await agent_view(app, pilot)
        await send(pilot, panel, "go")
        await settled(pilot, panel)
        log = panel.transcript()
        assert log.count("✗ compaction failed") == 3 and "circuit breaker open" in log
        status = text_of(panel, "#agent-status")
        assert "auto-compaction stopped after 3 consecutive failures" in status
        panel.reset_breaker()
        assert "breaker: ready" in text_of(panel, "#agent-status")


async def test_esc_cancels_the_turn_and_the_session_goes_on(mock_api, work):
    gate = threading.Event()
    mock_api.add(r.Reply([r.text_block("This answer is interrupted " * 20)], gate=gate), r.text("second answer"))
    app = make_app(None, home=False, settings=FIXED, agent=AgentOptions(cwd=work, open_view=True))
    try:
        async with app.run_test(size=SIZE) as pilot:
            screen, panel = await agent_view(app, pilot)
            await send(pilot, panel, "start")
            await until(pilot, lambda: "This answer" in panel.transcript(), "the first streamed text")

            await send(pilot, panel, "a second prompt while the first runs", accepted=False)
            assert panel.query_one("#agent-input", Input).value == "a second prompt while the first runs"
            assert len(mock_api.message_requests) == 1  # refused: nothing sent

            screen.action_view("messages")  # Esc cancels from any view
            await until(pilot, lambda: screen.focused is screen.query_one(MessageList), "the list's focus")
            await pilot.press("escape")
            await settled(pilot, panel)  # the stream is silent (the gate is shut): the cancel must not wait for it
            assert "— cancelled ·" in panel.transcript()
            assert history_valid(screen.session)
            assert_views_show(screen)

            await send(pilot, panel, "again")
            await settled(pilot, panel)
            assert "second answer" in panel.transcript()
            assert load(panel.agent.path).messages[-1].text() == "second answer"
    finally:
        gate.set()


async def test_without_a_key_the_view_says_how_to_set_one_and_the_rest_works(monkeypatch, work, data_dir):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    from inspector.samples import SAMPLE_DIR

    app = make_app(SAMPLE_DIR / "claude-code-tool-heavy.jsonl", home=False, settings=FIXED,
                   agent=AgentOptions(cwd=work))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, MainScreen) and app.screen.figures is not None, "load")
        screen = app.screen
        await pilot.press("4")
        panel = screen.query_one(AgentPanel)
        await until(pilot, lambda: panel.cancel is not None, "the agent view")
        help_text = text_of(panel, "#agent-help")
        for needed in ("export ANTHROPIC_API_KEY=", "ANTHROPIC_BASE_URL", "--model", "claude-sonnet-4-6"):
            assert needed in help_text
        await send(pilot, panel, "hello", accepted=False)
        assert not panel.running and panel.agent is None
        assert not (data_dir / "context-inspector" / "sessions").exists()
        screen.action_view("messages")
        await until(pilot, lambda: screen.focused is screen.query_one(MessageList), "the list's focus")
        await pilot.press("3")
        assert screen.query_one("#views").active == "timeline"
        assert len(screen.query_one(MessageList).rows) >= len(screen.session.messages)


SNAP_DIR = Path("/tmp/context-inspector-agent-snapshot")  # fixed: the view shows the working directory and file


@pytest.mark.parametrize("size", [SIZE, (80, 24)], ids=lambda size: "x".join(map(str, size)))
def test_agent_view_snapshot(snap_compare, mock_api, monkeypatch, size):
    """The Agent view after a turn with a tool call, a denied write and compaction settings in the status line."""
    import shutil

    from inspector.core.prompt import builder
    from inspector.core.prompt.environment import Environment

    shutil.rmtree(SNAP_DIR, ignore_errors=True)
    (SNAP_DIR / "work").mkdir(parents=True)
    (SNAP_DIR / "work" / "notes.txt").write_text("alpha\nbeta\n")
    # every machine-dependent fact of the prompt fixed: its token count is on screen
    monkeypatch.setattr(builder, "environment", lambda cwd, now=None: Environment(
        cwd=cwd, os="Linux 6.1 (Debian GNU/Linux 12)", shell="/bin/bash", platform="linux (x86_64)",
        date="2026-01-02 (Friday)"))
    monkeypatch.setenv("HOME", str(SNAP_DIR / "home"))
    mock_api.add(r.tool_calls(("read_file", {"path": "notes.txt"}), preamble="Let me look."),
                 r.tool_calls(("write_file", {"path": "notes.txt", "content": "gone"})),
                 r.text("notes.txt has two lines; I left it unchanged."))
    options = AgentOptions(cwd=SNAP_DIR / "work", session=SNAP_DIR / "agent.jsonl", compact_at=50_000,
                           open_view=True)

    async def run_before(pilot) -> None:
        app = pilot.app
        screen, panel = await agent_view(app, pilot)
        await send(pilot, panel, "What is in notes.txt?")
        await until(pilot, lambda: asking(panel), "the question")
        await pilot.press("n")
        await settled(pilot, panel)
        app.clear_notifications()  # toasts time out: never in a snapshot
        box = panel.query_one("#agent-input", Input)
        box.cursor_blink = False
        box.focus()
        await pilot.pause()
        await until(pilot, lambda: screen.focused is box, "the prompt box's focus")

    app = make_app(SNAP_DIR / "agent.jsonl", home=False, settings=FIXED, agent=options)
    assert snap_compare(app, terminal_size=size, run_before=run_before)


async def test_esc_while_a_question_waits_cancels_the_turn_and_runs_nothing(mock_api, work):
    mock_api.add(r.tool_calls(("bash", {"command": "touch ran.txt"}), ("read_file", {"path": "x"})), r.text("next"))
    app = make_app(None, home=False, settings=FIXED, agent=AgentOptions(cwd=work, open_view=True))
    async with app.run_test(size=SIZE) as pilot:
        screen, panel = await agent_view(app, pilot)
        await send(pilot, panel, "run it")
        await until(pilot, lambda: asking(panel), "the question")
        prompt = panel.pending
        await until(pilot, lambda: screen.focused is prompt, "the question to have the focus")
        await pilot.press("escape")
        await settled(pilot, panel)
        assert prompt.answered and "→ turn cancelled: not run" in panel.transcript()
        assert not (work / "ran.txt").exists() and len(mock_api.message_requests) == 1
        results = list(screen.session.messages[-1].tool_results())
        assert len(results) == 2 and all(b.is_error for b in results)  # both calls answered: history valid
        assert history_valid(screen.session)


async def test_another_formats_session_continues_in_a_new_agent_file(mock_api, work, data_dir):
    from inspector.samples import SAMPLE_DIR

    source = SAMPLE_DIR / "claude-code-tool-heavy.jsonl"
    before = source.read_bytes()
    mock_api.add(r.text("I see the earlier work."))
    # 149k of context: under Claude Code's 167k; our agent's own policy (reference, 126k) would compact first
    claude = Settings(estimator="chars35", policy="claude-code")
    app = make_app(source, home=False, settings=claude, agent=AgentOptions(cwd=work, open_view=True))
    async with app.run_test(size=SIZE) as pilot:
        screen, panel = await agent_view(app, pilot)
        shown = len(screen.session.messages)
        await send(pilot, panel, "what happened so far?")
        await settled(pilot, panel)
        assert "continuing claude-code-tool-heavy.jsonl (claude-code" in panel.transcript()
        path = panel.agent.path
        assert path.parent == data_dir / "context-inspector" / "sessions"
        assert source.read_bytes() == before  # the inspected file is never written
        loaded = load(path)
        assert loaded.format == "neutral" and len(loaded.messages) == shown + 2
        assert len(screen.session.messages) == shown + 2
        assert_views_show(screen)
        sent = mock_api.message_requests[0].messages
        assert sent[-1]["content"][0]["text"] == "what happened so far?" and len(sent) > 2


def test_open_agent_options_are_checked(tmp_path, capsys):
    from inspector.cli import main

    assert main(["open", "--agent", "--compact-at", "0"]) == 2
    assert "--compact-at" in capsys.readouterr().err
    assert main(["open", "--agent", "--cwd", str(tmp_path / "missing")]) == 2
    assert main(["open", "--agent", str(tmp_path / "no" / "dir" / "s.jsonl")]) == 2
    assert "cannot write there" in capsys.readouterr().err
