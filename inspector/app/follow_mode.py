"""Follow mode: a session screen keeps up with a file its agent is still writing.

`FollowMode` belongs to one session screen. Its `Follower` (core/follower.py) did the screen's initial load, so
following only reads what is appended. An exclusive async worker waits on `watchfiles.awatch` over the file's
*directory* (atomic saves rename files; a project directory gets new session files), runs `Follower.update` in a
thread and posts each change to the screen as `SessionGrew`; a burst of file events arrives as one batch, and a
message not yet handled absorbs the next one. A file (or a project directory) with nothing written yet is waited
for (`Waiting`, then the session as its first lines arrive), the watcher on the nearest directory that exists. The
screen's owner of the session (`shown.Shown`) shows it with
provisional figures and schedules the exact ones. Follow mode keeps the list's cursor on the last row while it is
there; once the user moves or scrolls away, new rows are counted as "N new" until they come back (end / G).
"""

from __future__ import annotations

import asyncio
import gc
from pathlib import Path

from rich.text import Text
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Static

from inspector.app.messages import LoadFailed, SessionGrew, Waiting
from inspector.app.text import counted, visible
from inspector.core.follower import Change, Follower, NotYet

DEBOUNCE_MS = 30  # awatch: wait this long for a burst of file events to settle
STEP_MS = 5  # and yield once none came for this long (10 ms: write to update took 19 ms median at 100k, 5 ms: 10)
POLL_MS = 1000  # and look at the file at least this often (events can be missed on network filesystems)
HOLD_GC = 0.5  # seconds the cyclic GC waits at most for the frame that shows an append (see `_hold_gc`)


class LiveStatus(Static):
    """One line under the list: following or paused, what came in last, and "N new" while the user is away."""

    DEFAULT_CSS = """
    LiveStatus { height: 1; background: $panel; color: $text-muted; padding: 0 1; }
    LiveStatus.-new { background: $warning 30%; color: $text; }
    """


class FollowMode:
    """Follow mode of one session screen: the follower, the watcher worker and the status line's state."""

    def __init__(self, screen: Screen, follow: bool) -> None:
        self.screen = screen
        self.following = follow
        self.follower: Follower | None = None
        self.new_rows = 0  # rows appended while the user was away from the bottom
        self.updates = 0
        self.last_change: Change | None = None
        self._stop: asyncio.Event | None = None
        self.watching = False  # the watcher has caught up and waits for file events
        self.waiting: str | None = None  # what is waited for before there is a session to show (NotYet)
        self._gc_held: asyncio.TimerHandle | None = None  # the cyclic GC is off until an append is on screen
        self.opening = False  # the load thread is reading the file through the follower: nothing else may use it

    # -- loading (called from the screen's load worker thread) ------------------------------------------------------

    def open(self, path: Path, progress) -> object:
        """Read the session through a Follower, so following later only reads what is appended."""
        self.opening = True
        self.follower = Follower(path)
        try:
            return self.follower.open(progress)
        finally:
            self.opening = False

    def loaded(self, ready: bool) -> None:
        """The screen has its session (`ready`: and its first figures), or is waiting for one to be written:
        start watching if follow mode is on."""
        if ready:
            self.waiting = None
        if self.following and (ready or self.waiting) and not self.watching and self._stop is None:
            self.start()

    def wait(self, reason: str) -> None:
        """There is nothing to show yet (`reason`: what is waited for): watch for it if follow mode is on."""
        self.waiting = reason
        self.loaded(ready=False)

    # -- the watcher ------------------------------------------------------------------------------------------------

    def start(self) -> None:
        if self.follower is None or self.opening:  # (while the file is read: `loaded` starts it after)
            return
        self._stop = asyncio.Event()
        self.screen.run_worker(self._watch(self._stop), group="follow", exclusive=True, exit_on_error=False)

    def stop(self) -> None:
        if self._stop is not None:
            self._stop.set()
            self._stop = None
        self.screen.workers.cancel_group(self.screen, "follow")
        self._release_gc()

    def toggle(self) -> str:
        """Follow or pause; what to tell the user."""
        if self.follower is None:
            return "nothing to follow: this session was not read from a file"
        self.following = not self.following
        if self.following:
            self.start()
        else:
            self.stop()
        if not self.following:
            return "follow paused"
        return "following the file once it is read" if self.opening else "following the file"

    async def _watch(self, stop: asyncio.Event) -> None:
        from watchfiles import awatch

        follower = self.follower
        assert follower is not None
        await asyncio.to_thread(follower.settle)  # so the first append is no slower than the next ones
        await self._update(follower)  # catch up with what was written before watching began
        self.watching = True
        try:
            while not stop.is_set():
                where = follower.watch_dir()
                async for _changes in awatch(where, stop_event=stop, debounce=DEBOUNCE_MS, step=STEP_MS,
                                             rust_timeout=POLL_MS, yield_on_timeout=True, recursive=False):
                    await self._update(follower)
                    if follower.watch_dir() != where:
                        break  # what was waited for appeared (a project directory): watch inside it
        except Exception as exc:  # a watcher that cannot start (no inotify, the directory is gone): say so
            self.screen.post_message(LoadFailed(f"follow: cannot watch {follower.watch_dir()}: {exc}"))
        finally:
            self.watching = False

    async def _update(self, follower: Follower) -> None:
        self._hold_gc()
        held = follower.unfinished
        try:
            change = await asyncio.to_thread(follower.update)
        except NotYet as exc:  # still nothing written: keep waiting, saying what for
            self._release_gc()
            if str(exc) != self.waiting:
                self.screen.post_message(Waiting(str(exc)))
            return
        except Exception as exc:
            self._release_gc()
            self.screen.post_message(LoadFailed(f"follow: {str(exc) or type(exc).__name__}"))
            return
        if not change.empty or change.reloaded or change.switched:
            self.screen.post_message(SessionGrew(change.session, change, "follow"))  # `grew` releases the GC
        else:
            self._release_gc()
            if follower.unfinished != held:  # a line finished with nothing to show (a progress entry), or begun
                self.screen.update_status()  # type: ignore[attr-defined]

    def _hold_gc(self) -> None:
        """No cyclic collections from reading an append until the frame that shows it (at most HOLD_GC seconds).
        With a large session open, the new state's per-message lists (the messages, the provisional figures: a
        million references at 100,000 messages) are walked by each young collection they are in, and the frame's
        strips set one off at once: 10-60 ms inside the append's latency. Held, the collection runs after the
        frame, once."""
        if self._gc_held is None and gc.isenabled():
            gc.disable()
            self._gc_held = asyncio.get_running_loop().call_later(HOLD_GC, self._release_gc)

    def _release_gc(self) -> None:
        if self._gc_held is not None:
            self._gc_held.cancel()
            self._gc_held = None
            gc.enable()

    # -- what the status line and the list do with a change -----------------------------------------------------

    def grew(self, change: Change, added_rows: int, at_bottom: bool, shown_by: Widget) -> bool:
        """Count a change the screen applied (`shown_by` draws it); True when the list should jump to its new last
        row."""
        self.updates += 1
        self.last_change = change
        shown_by.call_after_refresh(self._release_gc)  # (the widget's: the screen's own runs before it repaints)
        if not at_bottom:
            self.new_rows += max(0, added_rows)
            return False
        if self.following:
            self.new_rows = 0
            return True
        return False

    def back_at_bottom(self) -> bool:
        """The user is back at the bottom of the list: the new rows are seen. True when that changed anything."""
        if self.new_rows:
            self.new_rows = 0
            return True
        return False

    def status(self, exact: bool) -> Text | None:
        """The status line (None: nothing to say: not a file, or one never followed that nothing has changed).
        `exact`: the figures shown are the exact ones."""
        f = self.follower
        if f is None or not (self.following or self.last_change or self.new_rows or f.error or self.waiting):
            return None
        text = Text()
        if self.following:
            text.append("● following " if self.waiting is None else "● waiting for ", style="bold green")
        else:
            text.append("‖ paused ", style="bold yellow")
        text.append(visible(f.path.name if f.path.name else str(f.path)))
        if self.waiting is not None:
            text.append(f"  ·  {visible(self.waiting)}" + ("; it shows as it is written" if self.following else
                                                          "; f follows it, to show it as it is written"))
        if self.last_change is not None:
            c = self.last_change
            text.append(f"  ·  last update: +{counted(c.new_messages, 'message')}, "
                        f"+{counted(c.new_requests, 'request')}")
            if c.compactions:
                text.append(f", {counted(len(c.compactions), 'compaction')}", style="magenta")
            if c.new_warnings:
                text.append(f", {counted(c.new_warnings, 'warning')} (W)", style="yellow")
            if not exact:
                text.append("  ·  figures provisional", style="dim")
        if f.error:
            text.append(f"  ·  {visible(f.error)[:120]}", style="red")
        if self.new_rows:
            text.append(f"  ·  {self.new_rows} new ↓ (end / G to jump)", style="bold")
        return text
