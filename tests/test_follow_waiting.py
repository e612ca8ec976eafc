"""Following before anything is written: a file that does not exist yet, an empty one, one whose first line is
half written, a Claude Code project directory with no session yet (or not created yet). The follower says what it
waits for; the app waits, says so, and shows the session as it arrives."""

from __future__ import annotations

import shutil

import pytest

from app_helpers import until
from conftest import CORPUS, FIXTURES

from inspector.app import make_app
from inspector.app.follow_mode import LiveStatus
from inspector.app.screens.main import MainScreen
from inspector.app.widgets.context_bar import ContextBar
from inspector.app.widgets.message_list import MessageList
from inspector.cli import main
from inspector.core.follower import Follower, NotYet
from inspector.core.formats import load

LINES = (CORPUS / "claude-code-short.jsonl").read_bytes().splitlines(keepends=True)
SUBAGENT_HOME = FIXTURES / "agents" / "claude-code-2.1.332" / "subagent" / "home" / ".claude" / "projects"


@pytest.mark.parametrize("make,says", [
    (lambda p: p, "does not exist yet"),
    (lambda p: p.write_bytes(b""), "is empty: nothing is written yet"),
    (lambda p: p.write_bytes(LINES[0][:40]), "first line of live.jsonl is still being written"),
])
def test_the_follower_waits_for_a_file_and_reads_it_once_written(tmp_path, make, says):
    path = tmp_path / "live.jsonl"
    make(path)
    follower = Follower(path)
    with pytest.raises(NotYet, match=says):
        follower.open()
    with pytest.raises(NotYet):
        follower.update()  # still nothing
    assert follower.watch_dir() == tmp_path
    path.write_bytes(b"".join(LINES))
    change = follower.update()
    assert change.started and change.rebuilt and change.first_new == 0
    assert len(change.session.messages) == len(load(path).messages) > 0
    assert follower.update().empty  # from here on it follows as any file


def test_the_follower_waits_for_a_project_directory_and_its_first_session(tmp_path):
    projects = tmp_path / "projects"
    projects.mkdir()
    folder = projects / "-work-proj"
    follower = Follower(folder)
    with pytest.raises(NotYet, match="does not exist yet"):
        follower.open()
    assert follower.watch_dir() == projects  # where the directory will appear
    folder.mkdir()
    (folder / "empty.jsonl").write_bytes(b"")  # created, not written yet
    with pytest.raises(NotYet, match="holds no session yet"):
        follower.update()
    assert follower.watch_dir() == folder
    [session] = SUBAGENT_HOME.glob("*/*.jsonl")
    shutil.copy(session, folder / session.name)
    change = follower.update()
    assert change.started and change.session.source.endswith(session.name)
    assert len(change.session.messages) == len(load(session).messages)


@pytest.mark.parametrize("name,data", [
    ("notes.txt", b"hello\nworld\n"),
    ("other.db", b"SQLite format 3\x00\x10\x00\x01\x01\x00@  \x00\x00\x00\x02"),  # no newline, not JSON
    ("notes.jsonl", b"just a sentence, no newline yet"),
])
def test_a_file_in_no_format_is_still_an_error(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(Exception) as info:
        Follower(path).open()
    assert not isinstance(info.value, NotYet)


def test_follow_accepts_a_path_not_written_yet_but_not_one_in_no_directory(tmp_path):
    assert main(["--follow", str(tmp_path / "no" / "dir" / "live.jsonl")]) == 2
    assert main([str(tmp_path / "live.jsonl")]) == 2  # without --follow: nothing to open


async def _waits_then_shows(pilot, app, path, write) -> None:
    await until(pilot, lambda: isinstance(app.screen, MainScreen) and app.screen.follow.waiting is not None)
    screen = app.screen
    status = str(screen.query_one(LiveStatus).render())
    assert "waiting for" in status and screen.follow.waiting in status
    assert "Waiting for" in str(screen.query_one("#loading-label").render())
    assert "no session yet" in screen.query_one(ContextBar).render().plain
    assert not any(n.severity == "error" for n in app._notifications)  # no "Cannot open"
    write()
    await until(pilot, lambda: screen.figures is not None and screen.shown.settled)
    assert len(screen.session.messages) == len(load(path).messages)
    assert screen.follow.waiting is None and screen.follow.following
    assert len([r for r in screen.query_one(MessageList).rows if r >= 0]) == len(screen.session.messages)


async def test_the_app_follows_an_empty_file_from_its_first_line(tmp_path):
    path = tmp_path / "live.jsonl"
    path.write_bytes(b"")
    app = make_app(path, follow=True, home=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await _waits_then_shows(pilot, app, path, lambda: path.write_bytes(b"".join(LINES)))


async def test_the_app_follows_a_project_directory_not_created_yet(tmp_path):
    projects = tmp_path / "projects"
    projects.mkdir()
    folder = projects / "-work-proj"
    [session] = SUBAGENT_HOME.glob("*/*.jsonl")

    def start() -> None:
        folder.mkdir()
        shutil.copy(session, folder / session.name)

    app = make_app(folder, follow=True, home=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await _waits_then_shows(pilot, app, folder / session.name, start)


async def test_without_follow_an_empty_file_says_f_follows_it(tmp_path):
    path = tmp_path / "live.jsonl"
    path.write_bytes(b"")
    app = make_app(path, home=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, MainScreen)
                    and "Cannot open" in str(app.screen.query_one("#loading-label").render()))
        screen = app.screen
        assert "is empty: nothing is written yet; f follows it" in str(screen.query_one("#loading-label").render())
        await pilot.press("f")
        await until(pilot, lambda: screen.follow.waiting is not None)  # following: it waits for the first lines
        assert str(screen.query_one("#loading-label").render()).startswith("Waiting for live.jsonl")
        path.write_bytes(b"".join(LINES))
        await until(pilot, lambda: screen.figures is not None and screen.shown.settled)
        assert len(screen.session.messages) == len(load(path).messages)


async def test_closing_the_app_while_an_append_is_read_leaves_the_gc_on(tmp_path):
    """Follow mode holds the cyclic GC off from reading an append to its frame; an app that quits meanwhile (its
    release timer never fires) must not leave it off for the rest of the process."""
    import gc

    path = tmp_path / "live.jsonl"
    path.write_bytes(b"".join(LINES))
    app = make_app(path, follow=True, home=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, MainScreen) and app.screen.shown.settled)
        app.screen.follow._hold_gc()
        assert not gc.isenabled()
    assert gc.isenabled()
