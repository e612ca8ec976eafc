"""What keeps the agent's cost flat however long the session (benchmarks/bench_agent_view.py and agent_loop.py have
the figures): the loop's compaction figure taken from the current window (in the app and in `context-inspector
run`), streamed pieces merged in the worker until the UI takes them, workers described without a repr of the
session, the first piece of a stream drawn at once, exact figures computed only when the turn's events pause (and
still computed after a turn that failed before any snapshot)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from msgspec import structs

from inspector.app import make_app
from inspector.app.agent_bridge import AgentEvent, AgentOptions, AgentSession, AgentStart
from inspector.core.figures import Settings
from inspector.app.widgets.agent_panel import _plain
from inspector.core.agent.cancel import Cancel
from inspector.cli import main
from inspector.core.agent import config as agent_config
from inspector.core.agent.config import compaction_policy, context_figure
from inspector.core.agent.events import MessageAdded, TextDelta, ThinkingDelta, ToolCall
from inspector.core.formats import load
from inspector.core.formats.neutral import session_lines
from inspector.core.model import Block, Compaction, Message, Request, Session
from inspector.core.tokens import account
from mock_api import responses as r
from test_app_agent import agent_view, send, settled, until

COMPACTED = "claude-code-manual-compact.jsonl"  # usage before and after its compaction


@pytest.fixture(autouse=True)
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("CONTEXT_INSPECTOR_MEMORY", str(tmp_path / "no-memory.md"))
    monkeypatch.delenv("ANTHROPIC_MODEL", raising=False)


def asked(session: Session, text: str = "next question " * 40) -> Session:
    """`session` with a new prompt after its last response, as the loop measures it before the next call."""
    return session.copy_with(messages=[*session.messages, Message("user", "prompt", [Block("text", text)])])


def whole(session: Session) -> int:
    """The figure from accounting for the whole history: what the window figure must match."""
    return account(session).current_context


def test_the_window_figure_is_the_whole_sessions_to_a_few_tokens(corpus):
    session = asked(load(corpus / COMPACTED))
    start = session.context_start
    assert start > 0 and any(q.seen_start == start for q in session.requests)
    assert abs(context_figure(session) - whole(session)) <= whole(session) / 1000


def test_history_before_the_last_compaction_does_not_change_the_window_figure(corpus):
    session = asked(load(corpus / COMPACTED))
    start = session.context_start
    longer = [structs.replace(m, blocks=[Block("text", "older history " * 2000)]) for m in session.messages[:start]]
    changed = session.copy_with(messages=longer + session.messages[start:])
    assert context_figure(changed) == context_figure(session)
    assert whole(changed) != whole(session)  # the whole session's fit does see it


def test_without_a_compaction_or_usage_since_one_it_is_the_whole_sessions_figure(corpus):
    short = asked(load(corpus / "claude-code-short.jsonl"))
    assert short.context_start == 0 and context_figure(short) == whole(short)
    session = load(corpus / COMPACTED)
    summary = Message("user", "compact_summary", [Block("text", "Summary: " + "done " * 200)])
    fresh = session.copy_with(messages=[*session.messages, summary],
                              compactions=[*session.compactions, Compaction("compact", len(session.messages))])
    assert context_figure(fresh) == whole(fresh)


def long_session(path: Path, n: int, segment: int = 600) -> Session:
    """A neutral agent file of `n` messages written to `path`: rounds of prompt, tool call, result and answer, usage
    on every response (the context growing by a quarter of each message's characters), a full compaction every
    `segment` messages, so the model sees only the last part, as in a real long session."""
    messages: list[Message] = []
    requests: list[Request] = []
    compactions: list[Compaction] = []
    context = 3_000

    def add(message: Message) -> None:
        nonlocal context
        if message.role == "assistant":
            start = compactions[-1].index if compactions else 0
            requests.append(Request(f"msg_{len(messages)}", "claude-sonnet-4-6", 3, 0, context, 50,
                                    len(messages), seen_start=start, seen_end=len(messages)))
            message.response_id = requests[-1].id
        messages.append(message)
        context += len(message.text()) // 4 + 10

    k = 0
    while len(messages) < n:
        if len(messages) - (compactions[-1].index if compactions else 0) >= segment:
            compactions.append(Compaction("compact", len(messages), trigger="auto", pre_tokens=context))
            context = 3_000
            add(Message("user", "compact_summary", [Block("text", f"Summary of tasks 0 to {k}: " + "done " * 150)]))
        tid = f"toolu_{k}"
        add(Message("user", "prompt", [Block("text", f"Task {k}: " + "look at the file and fix it " * 6)]))
        add(Message("assistant", "assistant", [Block("text", "Reading it."), Block.of(
               "tool_use", tool_id=tid, tool_name="read_file", input={"path": f"src/m{k}.py"})]))
        add(Message("user", "tool_result", [Block("tool_result", f"def f{k}():\n    return {k}\n" * (k % 7 + 1),
                                                  tool_id=tid)]))
        add(Message("assistant", "assistant", [Block("text", f"Fixed task {k}. " + "All tests pass. " * 5)]))
        k += 1
    session = Session(source=str(path), format="neutral", messages=messages, requests=requests,
                      compactions=compactions, models=["claude-sonnet-4-6"])
    path.write_text("".join(json.dumps(line) + "\n" for line in session_lines(session)), encoding="utf-8")
    return session


def test_the_headless_run_accounts_for_the_window_only_and_its_figure_is_the_whole_historys(mock_api, tmp_path,
                                                                                               monkeypatch, capsys):
    """`context-inspector run` continuing a 10,000-message session: the loop's compaction check accounts for the
    messages since the last compaction, not the history, and its figure is the whole accounting's to a few tokens."""
    path = tmp_path / "long.jsonl"
    long_session(path, 10_000)
    loaded = load(path)
    assert len(loaded.messages) >= 10_000 and not loaded.warnings
    window = len(loaded.messages) - loaded.context_start
    accounted: list[int] = []  # messages in each session the loop's figure accounted for

    def counting(session: Session, *args: object, **kwargs: object) -> object:
        accounted.append(len(session.messages))
        return account(session, *args, **kwargs)  # type: ignore[arg-type]

    measured: list[tuple[int, int]] = []  # (the loop's figure, the whole history's) at each check

    def recording(session: Session) -> int:
        figure = context_figure(session)
        measured.append((figure, whole(session.copy_with(messages=list(session.messages)))))
        return figure

    monkeypatch.setattr(agent_config, "account", counting)
    monkeypatch.setattr(agent_config, "context_figure", recording)  # what AgentConfig gives its compactor
    mock_api.add(r.text("carried on"))
    assert main(["run", "--prompt", "carry on", "--session", str(path), "--cwd", str(tmp_path)]) == 0
    assert "carried on" in capsys.readouterr().out
    assert len(measured) == 1 and accounted == [window + 1]  # the window and the new prompt: nothing before
    figure, full = measured[0]
    assert full > 3_000 and abs(figure - full) <= 5
    assert load(path).messages[-1].text() == "carried on"


def test_the_apps_agent_measures_with_the_window_figure(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    options = AgentOptions(cwd=tmp_path)
    shown = Session(source=str(tmp_path / "new.jsonl"), format="neutral")
    plan = AgentStart(shown, options, tmp_path / "new.jsonl", False, compaction_policy("claude-sonnet-4-6"), Cancel())
    agent = AgentSession.start(plan)
    assert agent.config.compactor is not None and agent.config.compactor.measure is context_figure


async def test_a_turn_never_reprs_the_session_streams_draw_at_once_and_exact_figures_wait_for_a_pause(mock_api, tmp_path, monkeypatch):
    work = tmp_path / "work"
    work.mkdir()
    reprs: list[int] = []
    monkeypatch.setattr(Session, "__repr__", lambda self: reprs.append(1) or "Session(...)")
    mock_api.add(r.tool_calls(("glob", {"pattern": "*"})), r.text("nothing here"))
    app = make_app(None, home=False, settings=Settings(estimator="chars35"),
                   agent=AgentOptions(cwd=work, open_view=True))
    async with app.run_test(size=(120, 40)) as pilot:
        screen, panel = await agent_view(app, pilot)
        await send(pilot, panel, "what is here?")
        await settled(pilot, panel)
        assert "nothing here" in panel.transcript()
        assert not reprs  # Textual describes a worker by the repr of its arguments unless given a description

        # the first piece of a stream is drawn at once; the ones after it at most every FLUSH_SECONDS
        panel._piece("text", "first words")
        assert _plain(panel._stream) == "first words"
        panel._piece("text", ", then more")
        await until(pilot, lambda: _plain(panel._stream) == "first words, then more", "the next flush")
        panel._end_stream()

        # a change arrived a moment ago: the exact figures wait for a quiet, then run once
        from inspector.app.shown import EXACT_DELAY, Shown

        started: list[float] = []
        real = Shown._figures
        monkeypatch.setattr(Shown, "_figures", lambda self, *a: started.append(time.monotonic()) or real(self, *a))
        shown, changed = screen.shown, time.monotonic()
        shown._last_change = changed
        shown.want_exact()
        assert not shown.settled
        await until(pilot, lambda: panel.settled, "the deferred exact figures")
        assert len(started) == 1 and started[0] - changed >= EXACT_DELAY
        assert screen.figures.session is screen.session


def test_pieces_join_the_posted_one_until_the_ui_takes_it():
    posted = AgentEvent(TextDelta("a"))
    assert posted.join(TextDelta("b")) and posted.join(TextDelta("c"))
    assert not posted.join(ThinkingDelta("x"))  # another kind: a message of its own
    assert posted.event == TextDelta("abc")
    assert not posted.join(TextDelta("d"))  # taken: the next piece goes out in a new message
    assert posted.event == TextDelta("abc")


def test_a_turn_posts_one_message_per_run_of_pieces_the_ui_did_not_take(mock_api, tmp_path):
    preamble, answer = "Let me look around. " * 20, "Nothing but an empty directory here. " * 30
    mock_api.add(r.tool_calls(("glob", {"pattern": "*"}), preamble=preamble), r.text(answer))
    options = AgentOptions(cwd=tmp_path)
    shown = Session(source=str(tmp_path / "agent.jsonl"), format="neutral")
    agent = AgentSession.start(AgentStart(shown, options, tmp_path / "agent.jsonl", False, None, Cancel()))
    messages: list[AgentEvent] = []
    agent.turn("what is here?", messages.append)  # nothing takes them: every run of pieces is one message
    agent.close()
    events = [m.event for m in messages]
    texts = [i for i, e in enumerate(events) if isinstance(e, TextDelta)]
    assert [events[i].text for i in texts] == [preamble, answer]
    call = next(i for i, e in enumerate(events) if isinstance(e, ToolCall))
    first_reply = next(i for i, e in enumerate(events) if isinstance(e, MessageAdded) and e.message.role == "assistant")
    assert texts[0] < first_reply and call < texts[1]  # the order of the stream is kept


async def test_exact_figures_still_come_after_a_turn_that_failed_before_any_snapshot(mock_api, tmp_path, monkeypatch):
    """A turn that cannot run (the session file cannot be written) ends with no snapshot; the exact figures asked
    for at its end must still be computed, and every turn after it must get its own."""
    data = tmp_path / "data"
    data.write_text("a file where the data directory should be")
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    work = tmp_path / "work"
    work.mkdir()
    mock_api.add(r.text("the answer"))
    app = make_app(None, home=False, settings=Settings(estimator="chars35"),
                   agent=AgentOptions(cwd=work, open_view=True))
    async with app.run_test(size=(120, 40)) as pilot:
        screen, panel = await agent_view(app, pilot)
        await send(pilot, panel, "zero")
        await settled(pilot, panel)  # the failed turn's own request for exact figures is served
        assert "the turn could not run: cannot write" in panel.transcript()

        data.unlink()
        await send(pilot, panel, "one")
        await settled(pilot, panel)
        assert "the answer" in panel.transcript()
        assert screen.figures.session is screen.session and screen.session.messages[-1].text() == "the answer"
