"""Follow mode: the session screen keeps up with a file its agent is still writing.

`Live` belongs to one `MainScreen`. Its `Follower` (core/live.py) did the screen's initial load, so following only
reads what is appended. An exclusive async worker waits on `watchfiles.awatch` over the file's *directory* (atomic
saves rename files; a project directory gets new session files) and runs `Follower.update` in a thread; a burst of
file events arrives as one batch, and an `Appended` message not yet handled absorbs the next one (`can_replace`).

Each change reaches the views twice: at once with provisional figures (the new messages estimated alone, measured
context from any new request, O(appended)), then with the exact figures from `compute`, which a single thread
worker re-runs when the file goes quiet, never more than one at a time and never more often than it takes; figures
for a session older than the one on screen are dropped. The worker keeps the token accounting it made last and the
changes applied since, so the next one is `account_appended` (the appended tail only, equal to a fresh `account`),
and the figures it made, so the next ones are `figures.extend` (links, orphans, cumulative context and timeline from
the first changed message on, equal to a fresh `compute`). Follow mode keeps the list's cursor on the last row while it
is there; once the user moves or scrolls away, new rows are counted as "N new" until they come back (end / G).
"""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual.message import Message as TMessage
from textual.widgets import Static

from inspector.app.figures import Figures, RequestPoint, Window, compute, extend
from inspector.app.messages import FiguresReady
from inspector.app.text import visible
from inspector.core.live import Change, Follower
from inspector.core.tokens import Accounting, account, account_appended

if TYPE_CHECKING:
    from inspector.app.screens.main import MainScreen

DEBOUNCE_MS = 30  # awatch: wait this long for a burst of file events to settle
POLL_MS = 1000  # and look at the file at least this often (events can be missed on network filesystems)
EXACT_DELAY = 0.2  # seconds of quiet before the exact figures are computed again


class LiveMessage(TMessage):
    """Base of follow mode's messages: the screen hands all of them to `Live.handle`."""


class Appended(LiveMessage):
    """The followed file changed. An unhandled one absorbs a newer one, so a burst is applied once."""

    def __init__(self, change: Change) -> None:
        super().__init__()
        self.change = change

    def can_replace(self, message: TMessage) -> bool:
        """Textual asks the older of two queued messages whether the newer (`message`) supersedes it: it does, once
        it carries both changes."""
        if isinstance(message, Appended):
            message.change = merge(self.change, message.change)
            return True
        return False


class ExactFigures(LiveMessage):
    def __init__(self, figures: Figures) -> None:
        super().__init__()
        self.figures = figures


class WatchFailed(LiveMessage):
    def __init__(self, error: str) -> None:
        super().__init__()
        self.error = error


def merge(older: Change, newer: Change) -> Change:
    """One change covering `older` then `newer` (newer's session is the later state)."""
    if newer.rebuilt or older.rebuilt:
        first = 0
    else:
        first = min(older.first_new, newer.first_new)
    return Change(newer.session, first_new=first, updated=sorted(set(older.updated) | set(newer.updated)),
                  rebuilt=older.rebuilt or newer.rebuilt, new_requests=older.new_requests + newer.new_requests,
                  new_warnings=older.new_warnings + newer.new_warnings,
                  compactions=older.compactions + newer.compactions, reloaded=newer.reloaded or older.reloaded,
                  switched=newer.switched or older.switched, lines=older.lines + newer.lines,
                  bytes=older.bytes + newer.bytes)


def provisional(prev: Figures, session, first: int, updated: list[int]) -> Figures:
    """`prev` extended to `session` in time proportional to what changed: messages from `first` on (and the
    `updated` ones) are estimated alone with the script estimator, requests after prev's keep their measured
    context, and the window's use is the last request's measured context plus the estimates after it."""
    from inspector.core import categories as cat
    from inspector.core.estimators import get_estimator

    est = get_estimator("script")
    messages = session.messages
    names = dict(prev.tool_names)
    if first >= len(prev.estimated):  # the usual case: only appended messages
        call_at, result_at = dict(prev.call_at), dict(prev.result_at)
    else:
        call_at = {k: i for k, i in prev.call_at.items() if i < first}
        result_at = {k: i for k, i in prev.result_at.items() if i < first}
    estimated, measured = list(prev.estimated[:first]), list(prev.measured[:first])
    category = list(prev.category[:first])
    by_cat = dict(prev.categories)
    for i in updated:
        if i < first:
            old = prev.size(i)
            estimated[i], measured[i] = est.message(messages[i]), None
            label = cat.label(category[i])
            by_cat[label] = by_cat.get(label, 0) + estimated[i] - old
    orphans = {o for o in prev.orphans if o < first}
    for i in range(first, len(messages)):
        m = messages[i]
        for b in m.blocks:
            if b.type == "tool_use" and b.tool_id:
                names[b.tool_id] = b.tool_name or "?"
                call_at[b.tool_id] = i
                orphans.add(i)
            elif b.type == "tool_result" and b.tool_id:
                result_at[b.tool_id] = i
                orphans.discard(call_at.get(b.tool_id, -1))
        estimated.append(est.message(m))
        measured.append(None)
        key = cat.block_category(m, m.blocks[0], names) if m.blocks else cat.USER_PROMPTS
        category.append(key)
        by_cat[cat.label(key)] = by_cat.get(cat.label(key), 0) + estimated[-1]
    sizes = [e if x is None else x for e, x in zip(estimated, measured)]
    prefix = prev.cumulative[0] - prev.size(0) if prev.cumulative else 0
    cumulative = list(prev.cumulative[:first])
    starts = {c.index for c in session.compactions if c.kind == "compact"}
    run = cumulative[-1] if cumulative else prefix
    for i in range(first, len(messages)):
        run = (prefix if i in starts else run) + sizes[i]
        cumulative.append(run)
    points = list(prev.requests)
    for r in session.requests[len(prev.session.requests):]:
        points.append(RequestPoint(r.message_index, r.measured_context, None, r.timestamp))
    start = session.context_start
    last = session.requests[-1] if session.requests else None
    if last is not None and last.seen_start == start and last.message_index >= 0:
        used = last.measured_context + sum(sizes[last.seen_end:])
        used_measured = True
    else:
        used = prefix + sum(sizes[start:])
        used_measured = False
    w = prev.window
    free = max(0, w.thresholds.get("autocompact", w.window) - used)
    window = Window(w.model, w.window, w.reserve, w.policy, w.thresholds, used, used_measured, free,
                    round(used / w.window * 100, 2) if w.window else 0.0)
    if session.compactions[len(prev.session.compactions):]:
        categories = [(k, v) for k, v in prev.categories if k == cat.label(cat.SYSTEM_TOOLS)]  # history is gone
        categories.append(("since the compaction (provisional)", max(0, used - sum(v for _, v in categories))))
    else:
        categories = [(k, v) for k, v in by_cat.items() if v > 0]
    return replace(prev, session=session, estimated=estimated, measured=measured, cumulative=cumulative,
                   category=category, window=window, categories=categories, categories_measured=False,
                   requests=points, tool_names=names, call_at=call_at, result_at=result_at, orphans=orphans)


class LiveStatus(Static):
    """One line under the list: following or paused, what came in last, and "N new" while the user is away."""

    DEFAULT_CSS = """
    LiveStatus { height: 1; background: $panel; color: $text-muted; padding: 0 1; }
    LiveStatus.-new { background: $warning 30%; color: $text; }
    """

    def on_mount(self) -> None:
        self.call_after_refresh(self._watch_list)

    def _watch_list(self) -> None:
        from inspector.app.widgets.message_list import MessageList

        live = getattr(self.screen, "live", None)
        if live is None:
            return
        lst = self.screen.query_one(MessageList)
        self.watch(lst, "cursor", lambda _: live.cursor_moved(), init=False)
        self.watch(lst, "scroll_y", lambda _: live.cursor_moved(), init=False)


class Live:
    """Follow mode of one session screen: the follower, the watcher worker, the exact-figures worker."""

    def __init__(self, screen: MainScreen, follow: bool) -> None:
        self.screen = screen
        self.following = follow
        self.follower: Follower | None = None
        self.new_rows = 0  # rows appended while the user was away from the bottom
        self.updates = 0
        self.last_change: Change | None = None
        self.last_applied: float | None = None  # perf_counter when the last change reached the widgets
        self.exact_for = None  # the session the exact figures on screen belong to (else they are provisional)
        self._lock = threading.Lock()
        self._dirty = False
        self._exact_running = False
        self._exact_seconds = 0.0
        self._accounting: Accounting | None = None  # the last accounting made (the base the next one resumes) ...
        self._figures: Figures | None = None  # ... and the figures made with it (the base `extend` resumes)
        self._since: Change | None = None  # ... the changes applied to the screen's session since `_since_from`
        self._since_from = None  # (a session: when it is the base's, the next accounting is `account_appended`)
        self._stop: asyncio.Event | None = None
        self.watching = False  # the watcher has caught up and waits for file events

    # -- loading (called from the screen's load worker thread) ------------------------------------------------------

    def open(self, path: Path, progress) -> object:
        """Read the session through a Follower, so following later only reads what is appended."""
        self.follower = Follower(path)
        return self.follower.open(progress)

    def loaded(self) -> None:
        """The screen has its session: start watching if follow mode is on."""
        self._show_status()
        if self.following:
            self.start()

    # -- the watcher ------------------------------------------------------------------------------------------------

    def start(self) -> None:
        if self.follower is None:
            return
        self._stop = asyncio.Event()
        self.screen.run_worker(self._watch(self._stop), group="follow", exclusive=True, exit_on_error=False)

    def stop(self) -> None:
        if self._stop is not None:
            self._stop.set()
        self.screen.workers.cancel_group(self.screen, "follow")

    def toggle(self) -> None:
        if self.follower is None:
            self.screen.notify("nothing to follow: this session was not read from a file", timeout=3)
            return
        self.following = not self.following
        if self.following:
            self.start()
            self.jump()
        else:
            self.stop()
        self._show_status()
        self.screen.notify("following the file" if self.following else "follow paused", timeout=2)

    async def _watch(self, stop: asyncio.Event) -> None:
        from watchfiles import awatch

        follower = self.follower
        assert follower is not None
        while self.screen.figures is None:  # the first figures are still being computed: appends can wait
            await asyncio.sleep(0.05)
        await self._update(follower)  # catch up with what was written before watching began
        self.watching = True
        try:
            async for _changes in awatch(follower.watch_dir(), stop_event=stop, debounce=DEBOUNCE_MS, step=10,
                                         rust_timeout=POLL_MS, yield_on_timeout=True, recursive=False):
                await self._update(follower)
        except Exception as exc:  # a watcher that cannot start (no inotify, the directory is gone): say so
            self.screen.post_message(WatchFailed(f"cannot watch {follower.watch_dir()}: {exc}"))
        finally:
            self.watching = False

    async def _update(self, follower: Follower) -> None:
        try:
            change = await asyncio.to_thread(follower.update)
        except Exception as exc:
            self.screen.post_message(WatchFailed(str(exc) or type(exc).__name__))
            return
        if not change.empty or change.reloaded or change.switched:
            self.screen.post_message(Appended(change))

    # -- the exact figures ------------------------------------------------------------------------------------------

    def _want_exact(self) -> None:
        with self._lock:
            self._dirty = True
            if self._exact_running:
                return
            self._exact_running = True
        self.screen.run_worker(self._exact_loop, thread=True, group="follow-figures", exit_on_error=False)

    def _exact_loop(self) -> None:
        while True:
            time.sleep(max(EXACT_DELAY, self._exact_seconds))  # quiet first; never busier than half the time
            with self._lock:
                if not self._dirty or self.screen.session is None:
                    self._exact_running = False
                    return
                self._dirty = False
                session = self.screen.session
                base, figures, since, origin = self._accounting, self._figures, self._since, self._since_from
                self._since, self._since_from = None, session
            settings = self.screen.settings
            started = time.perf_counter()
            try:
                if base is not None and since is not None and base.session is origin:
                    accounting = account_appended(base, session, since, settings.estimator)
                elif base is not None and base.session is session and base.estimator == settings.estimator:
                    accounting = base
                else:
                    accounting = account(session, settings.estimator)
                self._accounting = accounting
                if figures is not None and since is not None and figures.session is origin:
                    figures = extend(figures, session, settings, accounting, since)
                else:
                    figures = compute(session, settings, accounting=accounting)
                self._figures = figures
            except Exception as exc:
                self._accounting = self._figures = None
                self.screen.post_message(WatchFailed(f"cannot compute figures: {exc}"))
                continue
            self._exact_seconds = time.perf_counter() - started
            self.screen.post_message(ExactFigures(figures))

    def compute(self, session, settings, known=None):
        """`compute` for the screen's own figures (its load, a settings change), keeping their accounting as the
        base the exact figures of the next appends resume from when it accounts the state those changes start from."""
        accounting = account(session, settings.estimator)
        figures = compute(session, settings, known, accounting)
        with self._lock:  # (a base that is not where the changes start is never used: see `_exact_loop`)
            if self._since is not None:
                current = session is self._since_from
            else:  # at load the screen does not hold the session yet: the follower does
                current = session is self.screen.session or (self.follower is not None
                                                             and session is self.follower.session)
            if current:
                self._accounting, self._figures = accounting, figures
        return figures

    # -- handlers (the screen forwards every LiveMessage here, on the UI thread) ------------------------------------

    def handle(self, message: LiveMessage) -> None:
        if isinstance(message, Appended):
            self._apply(message.change)
        elif isinstance(message, ExactFigures):
            if message.figures.session is self.screen.session:  # else a newer change is on screen: wait for it
                self.screen._figures(FiguresReady(message.figures))
                self.exact_for = message.figures.session
                self._show_status()
        elif isinstance(message, WatchFailed):
            self.screen.notify(visible(message.error), title="Follow", severity="warning", timeout=6, markup=False)

    def _apply(self, change: Change) -> None:
        from inspector.app.widgets.context_bar import ContextBar
        from inspector.app.widgets.message_list import MessageList
        from inspector.app.widgets.timeline import Timeline

        screen = self.screen
        prev = screen.figures
        lst = screen.query_one(MessageList)
        at_bottom = self.at_bottom(lst)
        before = len(lst.rows)
        session = change.session
        with self._lock:  # the exact worker takes the session and the changes since its last accounting together
            if self._since is None:
                self._since_from = screen.session
            screen.session = session
            self._since = change if self._since is None else merge(self._since, change)
        self.updates += 1
        self.last_change = change
        if change.reloaded or change.switched:
            what = f"now following {Path(change.switched).name}" if change.switched else change.reloaded
            screen.notify(visible(f"{what}: reloaded {len(session.messages):,} messages"), title="Follow",
                          timeout=5, markup=False)
        trailing = bool(prev and prev.session.compactions and prev.session.compactions[-1].index >= change.first_new)
        if prev is None or change.rebuilt or trailing:  # rows before the new ones change too: redraw them all
            if prev is not None:
                first = min(change.first_new, len(prev.estimated))
                screen._figures(FiguresReady(provisional(prev, session, first, [])))
        else:
            figures = provisional(prev, session, change.first_new, change.updated)
            screen.figures = figures
            if change.updated:
                lst.messages_changed(figures)
            lst.messages_appended(change.first_new, figures)
            screen.query_one(ContextBar).show(figures)
            screen.query_one(Timeline).show(figures)
            screen._update_title()
        if not at_bottom:
            self.new_rows += max(0, len(lst.rows) - before)
        elif self.following:
            lst.action_last()
            self.new_rows = 0
        self.last_applied = time.perf_counter()
        self._show_status()
        self._want_exact()

    # -- the bottom of the list -------------------------------------------------------------------------------------

    @staticmethod
    def at_bottom(lst) -> bool:
        """The cursor is on the last row and the view shows the end of the list (or the list is empty)."""
        return not lst.rows or (lst.cursor >= len(lst.rows) - 1 and lst.max_scroll_y - lst.scroll_y <= 1)

    def jump(self) -> None:
        from inspector.app.widgets.message_list import MessageList

        self.screen.query_one(MessageList).action_last()
        self.cursor_moved()

    def cursor_moved(self) -> None:
        """The user is back at the bottom of the list: the new rows are seen."""
        from inspector.app.widgets.message_list import MessageList

        if self.new_rows and self.at_bottom(self.screen.query_one(MessageList)):
            self.new_rows = 0
            self._show_status()

    def _show_status(self) -> None:
        try:
            status = self.screen.query_one(LiveStatus)
        except Exception:
            return
        f = self.follower
        if f is None:
            status.display = False
            return
        status.display = True
        text = Text()
        if self.following:
            text.append("● following ", style="bold green")
        else:
            text.append("‖ paused ", style="bold yellow")
        text.append(visible(f.path.name))
        if self.last_change is not None:
            c = self.last_change
            text.append(f"  ·  last update: +{c.new_messages} message(s), +{c.new_requests} request(s)")
            if c.compactions:
                text.append(f", {len(c.compactions)} compaction(s)", style="magenta")
            if c.new_warnings:
                text.append(f", {c.new_warnings} warning(s) (W)", style="yellow")
        if f.error:
            text.append(f"  ·  {visible(f.error)[:120]}", style="red")
        if self.new_rows:
            text.append(f"  ·  {self.new_rows} new ↓ (end / G to jump)", style="bold")
        status.set_class(bool(self.new_rows), "-new")
        status.update(text)


