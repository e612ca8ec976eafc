"""The app lists a long session's end while the rest is read, then the whole session at the same message."""

from __future__ import annotations

import threading
from functools import partial

import pytest
from app_helpers import CORPUS, ready, row_text, until

from inspector.app import make_app
from inspector.app.follow_mode import FollowMode
from inspector.app.screens import main
from inspector.app.shown import Shown
from inspector.app.widgets.context_bar import ContextBar
from inspector.app.widgets.detail import DIM, DetailView
from inspector.app.widgets.message_list import MessageList
from inspector.core.formats.tail import tail
from inspector.samples import SAMPLE_DIR

SESSION = CORPUS / "claude-code-manual-compact.jsonl"


@pytest.fixture
def held_load(monkeypatch):
    """The full load waits until the test sets the event it yields (set at teardown, so no thread stays
    blocked)."""
    gate = threading.Event()
    read = FollowMode.open

    def held_open(self, path, progress):
        assert gate.wait(20)
        return read(self, path, progress)

    monkeypatch.setattr(FollowMode, "open", held_open)
    yield gate
    gate.set()


async def test_the_end_shows_first_then_the_whole_session_in_its_place(monkeypatch, held_load):
    # the corpus session is short enough to be read whole: preview its last 1.2 MB, and hold the full load back
    # until the preview has been looked at
    monkeypatch.setattr(main, "tail", partial(tail, tail_bytes=1_200_000, worth=0))
    gate = held_load
    counted = threading.Event()  # and the figures, until the whole session's rows have been looked at
    compute_now = Shown.compute_now

    def held_compute(self, session, links):
        assert counted.wait(20)
        return compute_now(self, session, links)

    monkeypatch.setattr(Shown, "compute_now", held_compute)
    app = make_app(SESSION, home=False)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = app.screen
        lst = screen.query_one(MessageList)
        await until(pilot, lambda: lst.session is not None)
        await pilot.pause()
        preview = lst.session
        n = len(preview.messages)
        assert screen.session is None and screen.figures is None
        assert lst.first_number == -n
        assert row_text(lst, len(lst.rows) - 1).lstrip().startswith("-1 ")
        assert row_text(lst, 0).lstrip().startswith(f"{-n} ") or lst.rows[0] < 0  # (a compaction's separator)
        assert f"of the last {n:,} messages shown" in str(screen.query_one("#status").render())
        assert f"Showing the last {n:,} messages" in str(screen.query_one("#loading-label").render())
        w = preview.requests[-1].measured_context
        assert f"used {w:,} of" in screen.query_one(ContextBar).placeholder
        detail = screen.query_one(DetailView)
        assert detail.lines[0][0].startswith("#-1 ")  # numbered as in the list
        assert ("source line ? (once all is read)", DIM) in detail.lines  # counted by the full load
        await until(pilot, lambda: lst.figures is not None)  # then the preview's own figures
        await pilot.pause()
        bar = screen.query_one(ContextBar)
        assert lst.figures.preview and bar.figures is lst.figures and screen.figures is None
        assert f"preview of the last {n:,} messages: used" in bar.render().plain
        assert "(the preview's own)" in screen.query_one(DetailView).lines[1][0]
        assert "…" not in row_text(lst, len(lst.rows) - 1)
        assert n > 2 * lst.size.height
        for key in ("pageup", "down", "down", "down", "down", "down"):  # a message high in the view
            await pilot.press(key)
        await pilot.pause()
        chosen = lst.current_index
        assert chosen is not None and 0 < lst.cursor - round(lst.scroll_offset.y) < lst.size.height - 5
        back = n - chosen
        uuid, height = preview.messages[chosen].uuid, lst.cursor - round(lst.scroll_offset.y)

        gate.set()
        await until(pilot, lambda: screen.session is not None)
        await pilot.pause()
        full = screen.session
        assert lst.session is full and screen.shown.preview is None
        assert lst.first_number == 0
        assert lst.current_index == len(full.messages) - back  # the same message, numbered as in the whole session
        assert full.messages[lst.current_index].uuid == uuid
        assert lst.cursor - round(lst.scroll_offset.y) == height  # at the same height in the view
        assert "of the last" not in str(screen.query_one("#status").render())
        assert detail.lines[0][0].startswith(f"#{lst.current_index} ")
        assert (f"source line {full.messages[lst.current_index].lines[0]}", DIM) in detail.lines

        counted.set()
        await ready(app, pilot)
        assert lst.current_index == len(full.messages) - back
        assert screen.query_one(ContextBar).figures is screen.figures


def test_preview_snapshot(snap_compare, monkeypatch, held_load):
    """The preview as a user sees it: the end of the session, numbered back from -1, with its own figures (the
    bar marked preview, its prefix and history as one part), the label saying the rest is being read."""
    monkeypatch.setattr(main, "tail", partial(tail, tail_bytes=300_000, worth=0))

    async def run_before(pilot) -> None:
        lst = pilot.app.screen.query_one(MessageList)
        await until(pilot, lambda: lst.figures is not None)  # the preview's own figures
        await pilot.pause()

    assert snap_compare(make_app(SAMPLE_DIR / "claude-code-autocompact.jsonl", home=False), terminal_size=(120, 40),
                        run_before=run_before)
