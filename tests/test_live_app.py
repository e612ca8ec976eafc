"""Follow mode in the app: a writer appends to the session file while the app runs under Pilot.

Every wait is bounded polling of app state (never a fixed sleep standing in for a condition)."""

from __future__ import annotations

import os
import threading
from contextlib import asynccontextmanager
from pathlib import Path

from inspector.app import make_app
from inspector.core.figures import compute
from inspector.app.follow_mode import LiveStatus
from inspector.app.screens.main import MainScreen, _at_bottom
from inspector.app.widgets.context_bar import ContextBar
from inspector.app.widgets.message_list import MessageList
from inspector.app.widgets.timeline import Timeline
from inspector.core.follower import Follower
from inspector.core.formats import load

from conftest import CORPUS

LINES = (CORPUS / "claude-code-manual-compact.jsonl").read_bytes().splitlines(keepends=True)
BOUNDARY = next(i for i, ln in enumerate(LINES) if b'"compact_boundary"' in ln)
SIZE = (140, 40)


async def until(pilot, condition, what: str, timeout: float = 20.0) -> None:
    """Poll `condition()` between short pauses, failing after `timeout` seconds of app time."""
    for _ in range(int(timeout / 0.02)):
        if condition():
            return
        await pilot.pause(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def settled(screen: MainScreen) -> bool:
    """The app shows the follower's latest session with its exact figures. (Check `follower.covered` first: the
    follower builds in a thread, and sets it after the session it describes.)"""
    live = screen.follow
    return (live.follower is not None and screen.session is not None and live.follower.session is screen.session
            and screen.shown.settled)


async def opened(app, pilot) -> MainScreen:
    await until(pilot, lambda: isinstance(app.screen, MainScreen) and app.screen.figures is not None, "the load")
    return app.screen


@asynccontextmanager
async def live_app(tmp_path, lines: int, follow: bool = True):
    """The app on a file holding the first `lines` corpus lines: (app, pilot, screen, path)."""
    path = tmp_path / "live.jsonl"
    path.write_bytes(b"".join(LINES[:lines]))
    app = make_app(path, follow=follow, home=False)
    async with app.run_test(size=SIZE) as pilot:
        yield app, pilot, await opened(app, pilot), path


def write(path: Path, data: bytes) -> None:
    with open(path, "ab") as f:
        f.write(data)


def assert_rows_once_in_order(screen: MainScreen) -> None:
    lst = screen.query_one(MessageList)
    n = len(screen.session.messages)
    assert [r for r in lst.rows if r >= 0] == list(range(n))
    assert [-1 - r for r in lst.rows if r < 0] == list(range(len(screen.session.compactions)))


def assert_matches_fresh_load(screen: MainScreen, path: Path) -> None:
    fresh = compute(load(path), screen.settings)
    f = screen.figures
    assert f.session.messages == fresh.session.messages
    assert f.window == fresh.window
    assert f.categories == fresh.categories
    assert f.estimated == fresh.estimated and f.measured == fresh.measured and f.cumulative == fresh.cumulative
    assert f.requests == fresh.requests


async def test_chunks_split_mid_line_a_compaction_and_a_burst_show_every_message_once(tmp_path):
    async with live_app(tmp_path, 300) as (app, pilot, screen, path):
        lst = screen.query_one(MessageList)
        follower = screen.follow.follower

        def read_up_to(n: int) -> bool:
            return follower.covered == sum(map(len, LINES[:n])) and settled(screen)

        assert _at_bottom(lst)  # where follow mode keeps it
        # 1. a burst of 1,000 lines in one write
        write(path, b"".join(LINES[300:1300]))
        await until(pilot, lambda: read_up_to(1300), "the burst")
        assert_rows_once_in_order(screen)
        assert lst.cursor == len(lst.rows) - 1  # follow mode kept the list at the bottom
        # 2. lines split mid-way, a few kB at a time, across the compaction boundary
        data = b"".join(LINES[1300:BOUNDARY + 30])
        step = len(data) // 23 + 1
        for pos in range(0, len(data), step):
            write(path, data[pos:pos + step])
            await pilot.pause(0.01)
        await until(pilot, lambda: read_up_to(BOUNDARY + 30), "the compaction")
        assert len(screen.session.compactions) == 1
        assert_rows_once_in_order(screen)
        separator = next(row for row, r in enumerate(lst.rows) if r < 0)
        assert lst.rows[separator + 1] == screen.session.compactions[0].index  # the boundary sits before the summary
        # 3. the rest, one line per write
        for line in LINES[BOUNDARY + 30:]:
            write(path, line)
        await until(pilot, lambda: read_up_to(len(LINES)), "the last line")
        assert_rows_once_in_order(screen)
        assert_matches_fresh_load(screen, path)
        assert screen.query_one(ContextBar).figures is screen.figures
        assert screen.query_one(Timeline).figures is screen.figures
        assert lst.cursor == len(lst.rows) - 1


async def test_rows_that_arrive_and_the_move_to_the_last_in_one_tick_leave_the_list_at_the_bottom(tmp_path):
    """The cause of a burst once left behind (cursor 62 of 247 rows): rows that outgrow the list have no scrollbar
    until the next layout, Textual dropped the scroll to the cursor, and follow mode saw the list scrolled away.
    Here rows arrive and the cursor moves to the last one in the same tick: the list is at the bottom at once."""
    from inspector.app.widgets.message_list import Filter

    async with live_app(tmp_path, 300, follow=False) as (app, pilot, screen, path):
        lst = screen.query_one(MessageList)
        screen.apply_filter(Filter.parse("kind:summary"))  # no rows: no scrollbar
        await pilot.pause()
        assert not lst.show_vertical_scrollbar
        screen.apply_filter(Filter())
        lst.action_last()
        assert lst.cursor == len(lst.rows) - 1 > lst.size.height
        assert lst.scroll_y == lst.max_scroll_y > 0 and _at_bottom(lst)
        await pilot.press("home")
        assert not _at_bottom(lst)


async def test_scrolled_away_the_list_stays_and_counts_new_rows_until_end(tmp_path):
    async with live_app(tmp_path, 300) as (app, pilot, screen, path):
        lst = screen.query_one(MessageList)
        await until(pilot, lambda: lst.cursor == len(lst.rows) - 1 and screen.follow.updates == 0, "the bottom")
        await pilot.press("home")
        assert lst.cursor == 0
        before = len(lst.rows)
        write(path, b"".join(LINES[300:360]))
        await until(pilot, lambda: len(lst.rows) > before, "the new rows")
        assert lst.cursor == 0  # the user's place is kept
        status = screen.query_one(LiveStatus)
        assert screen.follow.new_rows == len(lst.rows) - before
        assert f"{screen.follow.new_rows} new" in str(status.render())
        await pilot.press("end")
        assert lst.cursor == len(lst.rows) - 1 and screen.follow.new_rows == 0
        assert " new" not in str(status.render())
        before = len(lst.rows)
        write(path, b"".join(LINES[360:500]))
        await until(pilot, lambda: len(lst.rows) > before and lst.cursor == len(lst.rows) - 1, "following again")


async def test_follow_toggle_pauses_and_catches_up_and_is_a_bound_key(tmp_path):
    async with live_app(tmp_path, 300, follow=False) as (app, pilot, screen, path):  # the key turns following on
        assert any(b.id == "main.follow" and b.key == "f" for b in MainScreen.BINDINGS)
        n = len(screen.session.messages)
        write(path, b"".join(LINES[300:340]))
        await pilot.pause(0.2)  # nothing should happen: not following (this pause proves an absence)
        assert len(screen.session.messages) == n
        await pilot.press("f")
        await until(pilot, lambda: screen.follow.follower.covered == path.stat().st_size and settled(screen),
                    "catching up")
        assert len(screen.session.messages) > n
        assert "following" in str(screen.query_one(LiveStatus).render())
        await pilot.press("f")
        assert not screen.follow.following and "paused" in str(screen.query_one(LiveStatus).render())
        assert_matches_fresh_load(screen, path)


async def test_f_pressed_while_the_file_is_read_follows_once_it_is_and_never_reads_it_twice_at_once(
        tmp_path, monkeypatch):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(LINES[:300]))
    gate, reading, inside = threading.Event(), threading.Event(), []
    open_, update = Follower.open, Follower.update

    def held_open(self, *args, **kwargs):  # the initial read, held until the test has pressed f
        inside.append("open")
        reading.set()
        assert gate.wait(20)
        try:
            return open_(self, *args, **kwargs)
        finally:
            inside.remove("open")

    def checked_update(self):
        assert "open" not in inside, "the watcher read the file while the initial read was under way"
        return update(self)

    monkeypatch.setattr(Follower, "open", held_open)
    monkeypatch.setattr(Follower, "update", checked_update)
    app = make_app(path, home=False, follow=False)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, reading.is_set, "the initial read")
            screen = app.screen
            await pilot.press("f")
            await pilot.pause(0.1)  # the watcher must not start now (this pause proves an absence)
            assert screen.follow.following and not screen.follow.watching
            gate.set()
            write(path, b"".join(LINES[300:340]))
            await until(pilot, lambda: screen.follow.watching and settled(screen)
                        and screen.follow.follower.covered == path.stat().st_size, "following after the read")
            assert_matches_fresh_load(screen, path)
    finally:
        gate.set()


async def test_truncated_file_is_reloaded_with_a_notice(tmp_path):
    async with live_app(tmp_path, 400) as (app, pilot, screen, path):
        path.write_bytes(b"".join(LINES[:120]))
        await until(pilot, lambda: screen.follow.follower.covered == path.stat().st_size and settled(screen),
                    "the reload")
        assert any("truncated" in str(n.message) for n in app._notifications)  # noqa: SLF001
        assert_rows_once_in_order(screen)
        assert_matches_fresh_load(screen, path)


async def test_follow_a_project_directory_moves_to_a_new_session_with_a_notice(tmp_path):
    old = tmp_path / "1111.jsonl"
    old.write_bytes(b"".join(LINES[:200]))
    app = make_app(tmp_path, follow=True, home=False)  # a directory with --follow: its newest session, no picker
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(app, pilot)
        assert screen.follow.follower.path == old
        new = tmp_path / "2222.jsonl"
        new.write_bytes(b"".join(LINES[:80]))
        os.utime(new)
        await until(pilot, lambda: screen.follow.follower.path == new and screen.follow.follower.covered == new.stat(
        ).st_size and settled(screen), "the switch")
        assert any("2222.jsonl" in str(n.message) for n in app._notifications)  # noqa: SLF001
        assert_matches_fresh_load(screen, new)


def test_follow_flag_needs_a_path(capsys):
    from inspector.cli import main

    assert main(["--follow"]) == 2
    assert "--follow needs a PATH" in capsys.readouterr().err


async def test_an_unfinished_last_line_is_said_until_its_newline_comes(tmp_path):
    """Half a line at the end: the status line names it (not read while paused, shown once written when
    following), and it goes once the rest of the line is written."""
    line = LINES[40]
    path = tmp_path / "live.jsonl"
    path.write_bytes(b"".join(LINES[:40]) + line[:50])
    app = make_app(path, follow=False, home=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(app, pilot)
        status = lambda: str(screen.query_one("#status").render())  # noqa: E731
        await until(pilot, lambda: "line 41 unfinished (50 bytes, no newline): not read; f follows it" in status(),
                    "the unfinished line said")
        await pilot.press("f")
        await until(pilot, lambda: "shown once written" in status(), "following said")
        with open(path, "ab") as f:
            f.write(line[50:])
        await until(pilot, lambda: "unfinished" not in status() and settled(screen)
                    and len(screen.session.messages) == len(load(path).messages), "the line read")
