"""Subagents in the app and in core: the lab's real Claude Code 2.1.332 session that started an Explore subagent
(its window a file of its own, `<session>/subagents/agent-<id>.jsonl`), and the corpus session whose subagent's file
was not copied with it."""

from __future__ import annotations

import shutil

from app_helpers import CORPUS, ready, row_text, until
from conftest import FIXTURES

from inspector.app import make_app
from inspector.app.screens.main import MainScreen
from inspector.app.widgets.detail import DetailView
from inspector.app.widgets.message_list import MessageList
from inspector.app.widgets.subagents import SubagentsView
from inspector.app.widgets.title import TitleBar
from inspector.core.formats import load
from inspector.core.report import report_text
from inspector.core.subagents import subagents
from textual.widgets import DataTable, TabbedContent

PROJECT = FIXTURES / "agents" / "claude-code-2.1.332" / "subagent" / "home" / ".claude" / "projects"
[SESSION] = PROJECT.glob("*/*.jsonl")
[WINDOW] = PROJECT.glob("*/*/subagents/agent-*.jsonl")


def test_a_subagent_is_linked_to_the_call_that_started_it():
    session = load(SESSION)
    [agent] = subagents(session)
    start = session.messages[agent.index]
    assert [b.tool_name for b in start.tool_uses()] == ["Agent"] and agent.tool_id == "toolu_lab_agent_1"
    assert agent.path == str(WINDOW) and agent.agent_id == WINDOW.stem.removeprefix("agent-")
    assert agent.what == "Explore: Count lines"
    assert len(load(agent.path).messages) > 0


def test_the_figures_calls_find_the_same_subagents_as_a_walk_of_every_message():
    """The app passes its figures' call positions (no walk of every message at each live append): same answer."""
    from inspector.core.figures import Settings, compute

    for path in (SESSION, CORPUS / "claude-code-manual-compact.jsonl"):
        session = load(path)
        walked = subagents(session)
        assert walked and subagents(session, call_at=compute(session, Settings()).call_at) == walked
        assert [a.index for a in subagents(session, call_at={})] == [None] * len(walked)  # (no call known)


def test_report_names_where_each_subagent_started():
    assert f"  1 started at message 8 (Explore: Count lines): {WINDOW}" in report_text(load(SESSION))


def test_a_subagent_whose_file_is_not_there_is_still_listed():
    session = load(CORPUS / "claude-code-manual-compact.jsonl")
    [agent] = subagents(session)
    assert agent.path is None and agent.agent_id == "aac57f5" and agent.index is not None
    assert agent.what.startswith("general-purpose: ")


def test_a_subagent_written_after_the_session_was_loaded_is_found(tmp_path):
    folder = tmp_path / "proj"
    folder.mkdir()
    copy = folder / SESSION.name
    shutil.copy(SESSION, copy)
    session = load(copy)
    assert subagents(session, look=False)[0].path is None  # not beside the copy
    (folder / copy.stem / "subagents").mkdir(parents=True)
    shutil.copy(WINDOW, folder / copy.stem / "subagents" / WINDOW.name)
    assert subagents(session)[0].path == str(folder / copy.stem / "subagents" / WINDOW.name)


async def test_the_app_lists_marks_and_opens_a_subagent_as_its_own_window():
    app = make_app(SESSION, home=False)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(app, pilot)
        [agent] = screen.subagents
        tabs = screen.query_one(TabbedContent)
        assert tabs.get_tab("subagents").label.plain == "5 Subagents (1)" and tabs.get_tab("subagents").display
        lst = screen.query_one(MessageList)
        assert "⇢ subagent 1" in row_text(lst, lst.rows.index(agent.index))
        assert "⇢ subagent" not in row_text(lst, lst.rows.index(agent.index + 1))
        lst.select_message(agent.index)
        await pilot.pause(0.2)
        assert "started subagent 1 (Explore: Count lines)" in screen.query_one(DetailView).plain

        await pilot.press("enter")  # from the marked message
        await until(pilot, lambda: isinstance(app.screen, MainScreen) and app.screen is not screen)
        sub = await ready(app, pilot)
        assert sub.session.source == str(WINDOW) and sub.opener == (screen, agent)
        assert "subagent 1 of " + SESSION.name in sub.query_one(TitleBar).text
        assert not sub.query_one(TabbedContent).get_tab("subagents").display  # a subagent has none of its own
        await pilot.press("escape")
        assert app.screen is screen

        await pilot.press("5")  # from the list of subagents
        table = screen.query_one(SubagentsView).query_one(DataTable)
        assert table.has_focus and table.row_count == 1
        await pilot.press("enter")
        await until(pilot, lambda: app.screen is not screen)
        assert app.screen.opener[1] == agent


async def test_a_session_without_subagents_has_no_subagents_tab():
    from inspector.samples import SAMPLE_DIR

    app = make_app(SAMPLE_DIR / "agent-short.jsonl", home=False)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(app, pilot)
        assert screen.subagents == [] and not screen.query_one(TabbedContent).get_tab("subagents").display
        await pilot.press("enter")  # on a message that started none: says what enter is for
        assert any("enter opens a subagent" in n.message for n in app._notifications)


async def test_the_subagents_table_fits_the_screen_what_was_asked_cut_to_the_room_left():
    app = make_app(CORPUS / "claude-code-manual-compact.jsonl", home=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await ready(app, pilot)
        [agent] = screen.subagents
        await pilot.press("5")
        await pilot.pause(0.2)
        table = screen.query_one(SubagentsView).query_one(DataTable)
        asked = str(table.get_row_at(0)[-1])
        assert asked.endswith("…") and agent.what.startswith(asked[:-1]) and len(agent.what) > len(asked)
        assert table.virtual_size.width <= table.size.width  # nothing to scroll sideways to
        await pilot.resize_terminal(160, 24)  # wider: the whole text, in a column that grew
        await pilot.pause(0.2)
        assert str(table.get_row_at(0)[-1]) == agent.what and table.virtual_size.width <= table.size.width
        await pilot.resize_terminal(80, 24)  # and narrower again: cut again
        await pilot.pause(0.2)
        assert str(table.get_row_at(0)[-1]) == asked and table.virtual_size.width <= table.size.width
