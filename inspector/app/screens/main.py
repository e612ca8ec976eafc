"""The session screen: context bar on top, then views in tabs (messages with detail, prompt, timeline, agent).

It paints at once and loads in a thread worker that only posts messages (progress, the session, the figures).
What it shows has one owner, `shown.Shown` (the session, its figures, the workbench's steps, the one scheduler of
exact figures): the load, follow mode, the agent view and the workbench post messages here, the handlers hand them
to the owner and redraw the widgets from what it holds.
"""

from __future__ import annotations

import gc
import os
import time
from dataclasses import replace
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Input, Label, ProgressBar, Static, TabbedContent, TabPane
from textual.worker import get_current_worker

from inspector.app.follow_mode import FollowMode, LiveStatus
from inspector.app.messages import (ApplyStep, FiguresReady, GoToStep, LoadFailed, Loaded, LoadProgress, Previewed,
                                    PreviewFigures, SessionGrew, StepsChanged, Waiting)
from inspector.app.screens.help import ABOUT
from inspector.app.shown import Shown, short_step_label, step_label
from inspector.app.sizes import DETAIL_FROM, SHORT
from inspector.app.widgets.footer import FittedFooter
from inspector.app.text import Part, counted, human, middle, plain, visible
from inspector.app.widgets.agent_panel import AgentPanel
from inspector.app.widgets.context_bar import COMPUTING, ContextBar
from inspector.app.widgets.detail import DetailView
from inspector.app.widgets.message_list import Filter, MessageList
from inspector.app.widgets.prompt_view import PromptView
from inspector.app.widgets.settings import SettingsPanel, estimator_names, policy_names
from inspector.app.widgets.timeline import Timeline
from inspector.app.widgets.subagents import MARK, SubagentsView
from inspector.app.widgets.title import TitleBar
from inspector.core.figures import Figures, Links, Settings, links
from inspector.core.figures.last_response import last_response_window, preview_figures
from inspector.core.formats.agent_stores import session_name
from inspector.core.formats.tail import tail
from inspector.core.follower import NotYet
from inspector.core.gc_pause import gc_paused
from inspector.core.model import Session
from inspector.core.subagents import Subagent, spawned_at, subagents

FREEZE_ABOVE = 60_000  # objects in the GC's oldest generation: above it, long-lived ones are frozen once shown
PAINT_WAIT = 1.0  # seconds the reading thread waits for the preview's frame at most (it shares the GIL)
VIEWS = ("messages", "prompt", "timeline", "agent", "subagents")


class Cancelled(Exception):
    """Raised from the progress callback to stop a load whose worker was cancelled."""


class MainScreen(Screen):
    CSS_PATH = "main.tcss"
    KEYS_ABOUT = ABOUT  # what F1 help says under the keys
    # the footer's keys left out first when it is narrow (the views' keys are on their tabs)
    FOOTER_DROP = ("app.pick", "list.sort", "main.follow", "main.estimator", "main.policy", "list.largest")
    BINDINGS = [
        Binding("1", "view('messages')", "Messages", show=False, id="view.messages"),
        Binding("2", "view('prompt')", "Prompt", show=False, id="view.prompt"),
        Binding("3", "view('timeline')", "Timeline", show=False, id="view.timeline"),
        Binding("4", "view('agent')", "Agent", show=False, id="view.agent"),
        Binding("5", "view('subagents')", "Subagents", show=False, id="view.subagents"),
        Binding("slash", "search", "Filter", id="list.search"),
        Binding("escape", "escape", "Clear", show=False, id="main.escape"),
        Binding("s", "settings", "Settings", id="main.settings"),
        Binding("p", "cycle_policy", "Policy", id="main.policy"),
        Binding("e", "cycle_estimator", "Estimator", id="main.estimator"),
        Binding("d", "toggle_detail", "Detail", show=False, id="main.detail"),
        Binding("W", "warnings", "Warnings", show=False, id="main.warnings"),
        Binding("O", "open_other", "Open…", show=False, id="main.open"),
        Binding("c", "workbench", "Compaction", id="main.workbench"),
        Binding("f", "toggle_follow", "Follow", id="main.follow"),
    ]

    def __init__(self, path: str | os.PathLike[str] | None = None, *, session: Session | None = None,
                 follow: bool = False, opener: tuple[MainScreen, Subagent] | None = None) -> None:
        """`opener`: the session screen this one was opened from to show its subagent (esc goes back to it)."""
        super().__init__()
        self.opener = opener
        self.subagents: list[Subagent] = []
        self._detail_chosen: bool | None = None  # the detail pane shown or hidden with d (else by the width)
        self._rows: MessageList.RowsChanged | None = None  # what the status line says of the list
        self.follow = FollowMode(self, follow)
        self.path = Path(path) if path is not None else None
        self.shown = Shown(self, session=session)
        self.load_seconds: float | None = None
        self._keys_for: tuple[bool, bool] | None = None  # what `check_action` read when the footer was last told

    @property
    def settings(self) -> Settings:
        return self.app.settings  # type: ignore[attr-defined]

    @property
    def session(self) -> Session | None:
        return self.shown.session

    @property
    def figures(self) -> Figures | None:
        return self.shown.figures

    def compose(self) -> ComposeResult:
        name = self.path.name if self.path else (self.session.source if self.session else "")
        yield TitleBar(visible(name), id="title")
        yield ContextBar(id="bar")
        with Vertical(id="loading"):
            yield Label("Reading…", id="loading-label")
            yield ProgressBar(total=100, show_eta=True, id="progress")
        with TabbedContent(id="views", initial="messages"):
            with TabPane("1 Messages", id="messages"):
                with Horizontal():
                    with Vertical(id="list-pane"):
                        yield Static("", id="list-header")
                        yield MessageList(id="list")
                        yield Input(placeholder="filter: words, kind:user|assistant|tool|meta|summary, tool:Bash  "
                                                "(enter applies, esc clears)", id="filter")
                    yield DetailView(id="detail")
            with TabPane("2 Prompt", id="prompt"):
                yield PromptView(id="prompt-view")
            with TabPane("3 Timeline", id="timeline"):
                yield Timeline(id="timeline-view")
            with TabPane("4 Agent", id="agent"):
                yield AgentPanel(self.shown, id="agent-panel")
            with TabPane("5 Subagents", id="subagents"):
                yield SubagentsView(id="subagents-view")
        yield SettingsPanel(self.settings, id="settings")
        yield LiveStatus("", id="live")
        yield Static("", id="status")
        yield FittedFooter()

    def on_mount(self) -> None:
        self.query_one("#filter").display = False
        self.query_one("#settings").display = False
        self.query_one(LiveStatus).display = False
        lst = self.query_one(MessageList)
        lst.focus()
        self.query_one(TabbedContent).hide_tab("subagents")  # shown once the session has any
        self._fit(self.app.size.width, self.app.size.height)
        self.watch(lst, "cursor", lambda _: self._list_moved(), init=False)
        self.watch(lst, "scroll_y", lambda _: self._list_moved(), init=False)
        if self.session is not None:
            self.query_one("#loading").display = False
            self.shown.want_exact(now=True)
        elif self.path is not None:
            self.call_after_refresh(self.load)  # paint first: the reading thread competes for the GIL

    def on_unmount(self) -> None:
        self.follow.stop()  # a screen closed while an append is read must not leave the cyclic GC held off

    def on_resize(self, event) -> None:
        self._fit(event.size.width, event.size.height)

    def _fit(self, width: int, height: int) -> None:
        """A short terminal keeps the rows for the messages: the legend folds to one line, the tabs lose their
        underline; a narrow one starts without the detail pane (unless d was pressed)."""
        bar = self.query_one(ContextBar)
        lines = 1 if height <= SHORT else None
        if lines != bar.legend_lines:
            bar.legend_lines = lines
            bar.refresh(layout=True)
        self.set_class(height <= SHORT, "-short")
        if self._detail_chosen is None:
            self.query_one(DetailView).display = width >= DETAIL_FROM
            self.update_status()

    # -- loading and computing (workers post; handlers below change widgets) ---------------------------------------

    @work(thread=True, exclusive=True, exit_on_error=False, group="load")
    def load(self) -> None:
        worker = get_current_worker()
        start = time.perf_counter()

        def progress(done: int, total: int) -> None:
            if worker.is_cancelled:
                raise Cancelled
            self.post_message(LoadProgress(done, total))

        try:
            assert self.path is not None
            end = tail(self.path)  # a long session's end first, where a user looks (None: not worth it, or no preview)
            if end is not None and not worker.is_cancelled:
                previewed = Previewed(end, links(end.session), last_response_window(end.session, self.settings))
                self.post_message(previewed)
                previewed.painted.wait(PAINT_WAIT)
                with gc_paused():  # then its own figures (a tenth of a second), before the whole file is read
                    self.post_message(PreviewFigures(preview_figures(end.session, self.settings)))
            with gc_paused():  # (see `Shown._exact_loop`)
                session = self.follow.open(self.path, progress)  # through a Follower: following reads only appends
                known = links(session)
                self.post_message(Loaded(session, time.perf_counter() - start, known))
                if not worker.is_cancelled:
                    self.post_message(FiguresReady(self.shown.compute_now(session, known)))
        except Cancelled:
            return
        except NotYet as exc:  # nothing written yet: follow mode shows the session as it arrives
            if self.follow.following:
                self.post_message(Waiting(str(exc)))
            else:  # (f starts following: it waits for the session)
                self.post_message(LoadFailed(f"{exc}; f follows it, to show the session as it is written"))
        except Exception as exc:  # LoadError is the expected case; anything else must not kill the app either
            self.post_message(LoadFailed(str(exc) if exc.args else type(exc).__name__))

    @on(LoadProgress)
    def _progress(self, event: LoadProgress) -> None:
        bar = self.query_one(ProgressBar)
        bar.update(total=max(1, event.total), progress=event.done)
        what = f"Reading {self.path.name if self.path else ''}"
        if self.shown.preview is not None:
            what = f"Showing the last {len(self.shown.preview.session.messages):,} messages while the rest is read"
        self.query_one("#loading-label", Label).update(plain(
            f"{what}: {event.done / 1e6:,.1f} of {event.total / 1e6:,.1f} MB"))

    @on(Previewed)
    def _previewed(self, event: Previewed) -> None:
        """The session's end, listed until the whole session replaces it (`_loaded` keeps the user's place)."""
        if self.session is not None:
            return  # the full load came first
        session = event.tail.session
        self.shown.preview = event.links
        lst = self.query_one(MessageList)
        lst.show_session(session, event.links.tool_names, first_number=-len(session.messages))
        lst.action_last()
        self.query_one("#list-header", Static).update(plain(lst.header(10_000)), layout=False)
        self.query_one("#loading-label", Label).update(plain(
            f"Showing the last {len(session.messages):,} messages (numbered back from the end) while the rest is "
            "read"))
        bar = self.query_one(ContextBar)
        w = event.window
        bar.placeholder = ("preview of the session's end: token figures once the whole session is read" if w is None
                           else f"preview: used {w.used:,} of {w.window:,} ({w.percent:.1f}%) measured at the last "
                                "response · the rest once all is read")
        bar.refresh(layout=True)
        self._show_detail()
        self.call_after_refresh(event.painted.set)

    @on(PreviewFigures)
    def _preview_figures(self, event: PreviewFigures) -> None:
        """The previewed end's own figures: its rows' token columns, the detail's and the bar, marked preview."""
        f = event.figures
        preview = self.shown.preview
        if self.session is not None or preview is None or preview.session is not f.session:
            return  # the full load came first
        self.shown.preview = f
        self.query_one(MessageList).add_figures(f)
        self.query_one(ContextBar).show(f)
        self._show_detail()

    @on(Waiting)
    def _waiting(self, event: Waiting) -> None:
        self.follow.wait(event.reason)
        name = self.path.name if self.path else ""
        what = "It shows here as it is written." if self.follow.following else \
            "f follows it, to show the session as it is written."
        self.query_one("#loading-label", Label).update(plain(f"Waiting for {name}: {event.reason}. {what}"))
        self.query_one(ProgressBar).display = False
        bar = self.query_one(ContextBar)
        bar.placeholder = "no session yet: nothing to count"
        bar.refresh()
        self._show_live()

    @on(Loaded)
    def _loaded(self, event: Loaded) -> None:
        preview = self.shown.preview
        self.shown.loaded(event.session, event.links)
        self.load_seconds = event.seconds
        self.query_one("#loading-label", Label).update(
            f"Read {len(event.session.messages):,} messages in {event.seconds:.1f} s; computing figures…")
        self.query_one(ProgressBar).update(total=100, progress=100)
        self._show_live()
        self._refresh_keys()
        if event.links is not None:  # the rows now, their token figures when computed
            lst = self.query_one(MessageList)
            keep = None
            if preview is not None:
                keep = _in_full(event.session, preview.session, lst.current_index)
                self.query_one(ContextBar).placeholder = COMPUTING
            lst.show_session(event.session, event.links.tool_names, keep=keep)
            if keep is None:
                lst.action_last()
            self.query_one("#list-header", Static).update(plain(lst.header(10_000)), layout=False)
            self._update_title()
            self._show_detail()
        if event.session.warnings:
            w = event.session.warnings
            self.notify(f"{counted(len(w), 'warning')} while loading; first: line {w[0].line}: "
                        f"{visible(w[0].message)[:200]} (W lists them)", severity="warning", timeout=8, markup=False)

    @on(FiguresReady)
    def _figures(self, event: FiguresReady) -> None:
        f = event.figures
        was = self.figures
        if not self.shown.accept(f):
            return  # computed for a state a live update has since replaced: newer figures follow
        lst = self.query_one(MessageList)
        at_bottom = _at_bottom(lst)
        self._redraw(f, first=was is None or was.session.source != f.session.source)  # another file: to its end
        if at_bottom and self.follow.following:
            lst.action_last()
        self.follow.loaded(ready=True)
        self._show_live()
        self._tell_workbench()

    def _redraw(self, f: Figures, first: bool = False) -> None:
        """Every view from `f` (the owner's figures)."""
        self.query_one("#loading").display = False
        self.query_one(ContextBar).show(f)
        self.query_one(SettingsPanel).show_session(f.session, f.window.notes)
        lst = self.query_one(MessageList)
        shown = lst.session is f.session  # already listed (from Loaded): keep where the user is
        lst.show(f)
        if first and f.session.messages and not shown:
            lst.action_last()
        self.query_one("#list-header", Static).update(plain(lst.header(10_000)), layout=False)
        self.query_one(Timeline).show(f)
        self.query_one(PromptView).show(f)
        self._show_subagents(f)
        self._update_title()
        self._show_detail()
        self._refresh_keys()  # keys that wait for figures (policy, estimator, compaction) are live now
        if len(gc.get_objects(2)) > FREEZE_ABOVE:
            # Every full collection of the cyclic GC walks all long-lived objects: with a large session loaded, a
            # pause of 100-300 ms in the middle of scrolling or of a live append (bench_follow: p95 append to row
            # 360 ms with, 113 ms without). Counted in objects, not messages: a session of 9k messages and 4k
            # requests holds enough of them. Refcounting still frees frozen objects; only cycles among them stay.
            gc.freeze()

    def _refresh_keys(self) -> None:
        """Tell the footer the keys changed when what `check_action` reads did: each telling recomposes the footer,
        which at every live append's exact figures mounted its keys again in the next append's frame."""
        keys = (self.session is not None, self.figures is not None)
        if keys != self._keys_for:
            self._keys_for = keys
            self.refresh_bindings()

    @on(LoadFailed)
    def _failed(self, event: LoadFailed) -> None:
        self.query_one(ContextBar).stale = False
        if self.figures is not None and self.figures.settings != self.settings:  # new settings failed (exact, no key)
            self.app.settings = self.figures.settings  # type: ignore[attr-defined]
            self.query_one(SettingsPanel).sync(self.figures.settings)
            self.notify(visible(event.error), title="Settings not applied", severity="error", timeout=10,
                        markup=False)
            return
        if self.figures is not None:  # following, or figures of a new state: what is shown stays
            self.notify(visible(event.error), severity="warning", timeout=6, markup=False)
            return
        self.shown.preview = None  # (the list keeps the session's end it showed: nothing more is being read)
        bar = self.query_one(ContextBar)
        bar.placeholder = "no token figures: the session could not be opened"  # none are coming
        bar.refresh()
        self.query_one("#loading-label", Label).update(plain(f"Cannot open: {event.error}"))
        self.query_one(ProgressBar).display = False
        self.notify(visible(event.error), title="Cannot open", severity="error", timeout=10, markup=False)

    def _update_title(self) -> None:
        s = self.session
        if s is None:
            return
        n = len(s.compactions)
        name = visible(session_name(Path(s.source)))
        parts: list[Part] = [((name, middle(name, 36)), 4, True), (s.format, 3),
                             ((counted(len(s.messages), "message"), counted(len(s.messages), "msg")), 1),
                             (counted(len(s.requests), "request"), 5), (counted(n, "compaction") if n else "", 6),
                             ((visible(s.cwd or ""), visible(_tail(s.cwd or ""))), 7)]
        if self.load_seconds is not None:
            parts.append(((f"read in {self.load_seconds:.2f} s", f"read {self.load_seconds:.2f} s"), 8))
        if self.opener is not None:
            screen, agent = self.opener
            parent = session_name(Path(screen.session.source)) if screen.session else ""
            parts.insert(1, ((f"subagent {agent.number} of {visible(parent)} (esc: back)",
                              f"subagent {agent.number} (esc: back)"), 0))
        label = step_label(self.shown)
        if label:
            forms = (label, label.removeprefix("workbench "), short_step_label(self.shown))
            parts.insert(1, (tuple(Text(visible(f), style="reverse") for f in forms), 0))
        self.query_one(TitleBar).show(parts)

    def set_settings(self, settings: Settings) -> None:
        """Adopt new settings (from the panel, a key or the palette) and re-compute at once."""
        self.app.settings = settings  # type: ignore[attr-defined]
        self.query_one(SettingsPanel).sync(settings)
        if self.session is not None:
            self.query_one(ContextBar).stale = True
            self.shown.settings_changed()

    @on(SettingsPanel.Changed)
    def _settings_changed(self, event: SettingsPanel.Changed) -> None:
        self.app.settings = event.settings  # type: ignore[attr-defined]
        if self.session is not None:
            self.query_one(ContextBar).stale = True
            self.shown.settings_changed()

    # -- list and detail --------------------------------------------------------------------------------------------

    @on(MessageList.Highlighted)
    def _highlighted(self, event: MessageList.Highlighted) -> None:
        self._show_detail(event.index, event.compaction)

    def _show_detail(self, index: int | None = None, compaction: int | None = None) -> None:
        lst = self.query_one(MessageList)
        source: Figures | Links | None = self.figures
        if source is None or source.session is not lst.session:
            source = self.shown.links  # figures still being computed: the message without its token figures
        if source is None or source.session is not lst.session:
            source = self.shown.preview  # the session's end, while the rest is read
        if source is None or source.session is not lst.session:
            return
        if index is not None and index >= len(source.session.messages):
            index = None  # a highlight posted before the rows changed (a live reload)
        if index is None and compaction is None:
            index = lst.current_index
            if index is None and 0 <= lst.cursor < len(lst.rows):
                compaction = -1 - lst.rows[lst.cursor]
        detail = self.query_one(DetailView)
        detail.first_number = lst.first_number
        detail.previewing = source is self.shown.preview
        detail.show_message(source, index, compaction)

    @on(MessageList.ColumnsChanged, "#list")
    def _columns_changed(self) -> None:
        self.query_one("#list-header", Static).update(plain(self.query_one(MessageList).header(10_000)))

    @on(MessageList.RowsChanged)
    def _rows_changed(self, event: MessageList.RowsChanged) -> None:
        self._rows = event
        self.update_status()

    def update_status(self) -> None:
        event = self._rows
        if event is None:
            return
        status = f"{event.shown:,} of {event.total:,} messages shown"
        if self.shown.preview is not None and self.session is None:
            status = f"{event.shown:,} of the last {event.total:,} messages shown (the rest is being read)"
        if event.description:
            status += f"  ·  {visible(event.description)}"
        if self.session and self.session.warnings:
            status += f"  ·  {counted(len(self.session.warnings), 'load warning')} (W)"
        follower = self.follow.follower
        held = follower.unfinished if follower is not None and not self.follow.opening else None
        if held is not None:  # a write in progress, or a file cut short: said, not warned (it may yet finish)
            line, size = held
            status += f"  ·  line {line:,} unfinished ({size:,} bytes, no newline): " + (
                "shown once written" if self.follow.following else "not read; f follows it")
        if not self.query_one(DetailView).display:
            status += "  ·  d shows the detail"
        self.query_one("#status", Static).update(plain(status), layout=False)  # (one line high, as #live)

    def action_search(self) -> None:
        self.action_view("messages")
        box = self.query_one("#filter", Input)
        box.display = True
        box.focus()

    @on(Input.Submitted, "#filter")
    def _filter(self, event: Input.Submitted) -> None:
        self.apply_filter(Filter.parse(event.value))
        self.query_one(MessageList).focus()

    def apply_filter(self, flt: Filter) -> None:
        lst = self.query_one(MessageList)
        lst.set_filter(flt)
        box = self.query_one("#filter", Input)
        box.display = flt.active
        if not flt.active:
            box.value = ""

    def action_escape(self) -> None:
        if self.query_one(AgentPanel).cancel_turn():  # a running agent turn is cancelled from any view
            return
        panel = self.query_one(SettingsPanel)
        if panel.display:
            panel.display = False
            self.query_one(MessageList).focus()
        elif self.query_one(MessageList).filter.active or self.query_one("#filter").display:
            self.apply_filter(Filter())
            self.query_one(MessageList).focus()
        elif self.opener is not None and self.app.screen is self:  # a subagent's window: back to its session
            self.app.pop_screen()

    def action_view(self, name: str) -> None:
        self.query_one(TabbedContent).active = name
        target = {"messages": MessageList, "prompt": PromptView, "timeline": Timeline, "agent": AgentPanel,
                  "subagents": SubagentsView}[name]
        widget = self.query_one(target)
        if widget.focusable or isinstance(widget, SubagentsView):
            widget.focus()

    def action_settings(self) -> None:
        panel = self.query_one(SettingsPanel)
        panel.display = not panel.display
        if panel.display:
            panel.query_one("#set-policy").focus()
        else:
            self.query_one(MessageList).focus()

    def action_toggle_detail(self) -> None:
        detail = self.query_one(DetailView)
        detail.display = self._detail_chosen = not detail.display
        self.update_status()

    def action_cycle_policy(self) -> None:
        names = policy_names()
        current = self.settings.policy or (self.figures.window.policy if self.figures else None)  # the session's own
        i = names.index(current) if current in names else -1
        self.set_settings(replace(self.settings, policy=names[(i + 1) % len(names)]))
        self.notify(f"policy: {self.settings.policy}", timeout=2)

    def action_cycle_estimator(self) -> None:
        """The next estimator that can run here; one that cannot (exact without a key) is skipped, saying why the
        first time."""
        from inspector.core.estimators import unavailable

        names = estimator_names()
        i = names.index(self.settings.estimator) if self.settings.estimator in names else -1
        for name in names[i + 1:] + names[:i + 1]:
            reason = unavailable(name)
            if reason is None:
                break
            told: set[str] = self.app.told  # type: ignore[attr-defined]
            if name not in told:
                told.add(name)
                self.notify(f"skipping {name}: {reason}", title="Estimator", timeout=8, markup=False)
        if name == self.settings.estimator:
            return
        self.set_settings(replace(self.settings, estimator=name))
        self.notify(f"estimator: {self.settings.estimator}", timeout=2)

    def action_warnings(self) -> None:
        s = self.session
        if not s or not s.warnings:
            self.notify("no load warnings")
            return
        lines = [f"line {w.line}: {visible(w.message)[:300]}" if w.line else visible(w.message)[:300]
                 for w in s.warnings[:20]]
        more = f"\n… and {len(s.warnings) - 20} more" if len(s.warnings) > 20 else ""
        self.notify("\n".join(lines) + more, title=counted(len(s.warnings), "load warning"), timeout=20, markup=False)

    # -- the session's new states: follow mode, the agent, the workbench -------------------------------------------

    @on(SessionGrew)
    def _grew(self, event: SessionGrew) -> None:
        lst = self.query_one(MessageList)
        at_bottom = _at_bottom(lst)
        before = len(lst.rows)
        prev = self.figures
        if event.source == "agent" and self.follow.following:  # the agent writes what is shown: its snapshots win
            self.notify(self.follow.toggle() + ": the agent is writing this session", timeout=3)
        figures, change = self.shown.grew(event.session, event.change)
        if change.started:
            self.query_one(ContextBar).placeholder = COMPUTING
            self.query_one("#loading-label", Label).update(plain(
                f"{Path(event.session.source).name}: {len(event.session.messages):,} messages so far; computing "
                "figures…"))
        elif change.reloaded or change.switched:
            what = f"now following {Path(change.switched).name}" if change.switched else change.reloaded
            self.notify(visible(f"{what}: reloaded {len(event.session.messages):,} messages"), title="Follow",
                        timeout=5, markup=False)
        if figures is None:
            return  # the first figures are still being computed: they will be of the newest state
        trailing = bool(prev and prev.session.compactions and prev.session.compactions[-1].index >= change.first_new)
        if change.rebuilt or trailing:  # rows before the new ones change too: redraw them all
            self._redraw(figures)
        else:
            if change.updated:
                lst.messages_changed(figures)
            lst.messages_appended(change.first_new, figures)
            self.query_one(ContextBar).show(figures)
            self.query_one(Timeline).show(figures)
            self._show_subagents(figures)
            self._update_title()
        jump = self.follow.grew(change, len(lst.rows) - before, at_bottom, lst) if event.source == "follow" \
            else at_bottom
        if jump:
            lst.action_last()
        self._show_live()

    @on(ApplyStep)
    def _apply_step(self, event: ApplyStep) -> None:
        self.shown.push_step(event.plan, event.session, event.figures, event.trigger)
        self._redraw(event.figures)
        self._tell_workbench()

    @on(GoToStep)
    def _go_to_step(self, event: GoToStep) -> None:
        figures = self.shown.go_to_step(event.index)
        if figures is not None:
            self._redraw(figures)
        else:  # computed by the scheduler: the list shows the step's messages meanwhile
            self.query_one(ContextBar).stale = True
        self._update_title()
        self._tell_workbench()

    def _tell_workbench(self) -> None:
        from inspector.app.screens.workbench import WorkbenchScreen

        for screen in self.app.screen_stack:
            if isinstance(screen, WorkbenchScreen) and screen.shown is self.shown:
                screen.post_message(StepsChanged())

    def _show_live(self) -> None:
        status = self.query_one(LiveStatus)
        text = self.follow.status(self.shown.exact)
        status.display = text is not None
        if text is not None:
            status.set_class(bool(self.follow.new_rows), "-new")
            status.update(text, layout=False)  # (one line high: a layout would redraw the whole screen)

    def _list_moved(self) -> None:
        if self.follow.new_rows and _at_bottom(self.query_one(MessageList)) and self.follow.back_at_bottom():
            self._show_live()

    def action_toggle_follow(self) -> None:
        note = self.follow.toggle()
        if self.follow.following:
            self.query_one(MessageList).action_last()
            self.follow.back_at_bottom()
        self._show_live()
        self.update_status()  # (an unfinished last line: "shown once written" now, or "f follows it")
        self.notify(note, timeout=2)

    # -- subagents ---------------------------------------------------------------------------------------------------

    def _show_subagents(self, f: Figures) -> None:
        """The subagents tab (shown when there are any), the list's and the detail's marks where each started."""
        session = f.session
        found = subagents(session, call_at=f.call_at)  # (a walk of every message at each live append, 70 ms at 100k)
        if found == self.subagents and (not found or self.query_one(SubagentsView).session is session):
            return  # (none before or now: a live append's frame need not hide the hidden tab again, 40-80 ms)
        self.subagents = found
        tabs = self.query_one(TabbedContent)
        if found:
            tabs.get_tab("subagents").label = f"5 Subagents ({len(found)})"
            tabs.show_tab("subagents")
        else:
            tabs.hide_tab("subagents")
        self.query_one(SubagentsView).show(session, found)
        at = spawned_at(found)
        self.query_one(MessageList).mark_spawns(at)
        self.query_one(DetailView).spawned = at

    @on(SubagentsView.Open)
    def _open_subagent_row(self, event: SubagentsView.Open) -> None:
        self.open_subagent(event.agent)

    @on(MessageList.Opened)
    def _open_from_list(self, event: MessageList.Opened) -> None:
        started = spawned_at(self.subagents).get(event.index)
        if started:
            self.open_subagent(started[0])
        else:
            self.notify(f"enter opens a subagent from a message marked {MARK}", timeout=3)

    def open_subagent(self, agent: Subagent) -> None:
        """The subagent's window as a session screen of its own, over this one (esc comes back)."""
        if agent.path is None:
            self.notify(f"subagent {agent.number} ({visible(agent.what)}): its window's file is not beside the "
                        "session (a copied session keeps only the main file)", severity="warning", markup=False)
            return
        self.app.push_screen(MainScreen(agent.path, follow=self.follow.following, opener=(self, agent)))

    def action_open_other(self) -> None:
        self.app.action_pick()  # type: ignore[attr-defined]

    def action_workbench(self) -> None:
        """The compaction workbench over this screen: its steps come back here as the session shown."""
        from inspector.app.screens.workbench import WorkbenchScreen

        self.app.push_screen(WorkbenchScreen(self.shown, self))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("cycle_policy", "cycle_estimator", "warnings") and self.session is None:
            return None
        if action == "workbench" and self.figures is None:
            return None
        return True

    def summary(self) -> str:
        """One line about the figures (for the palette's help text)."""
        if not self.figures:
            return ""
        w = self.figures.window
        return f"{human(w.used)} of {human(w.window)} used ({w.percent:.0f}%)"


def _tail(path: str, keep: int = 2) -> str:
    """The last `keep` components of a path, "…/" before them when it has more (the part that names a project)."""
    parts = path.rstrip("/").split("/")
    return path if len(parts) <= keep + 1 else "…/" + "/".join(parts[-keep:])


def _in_full(full: Session, preview: Session, index: int | None) -> int | None:
    """Where message `index` of a preview of the session's end is in the full session (None: off the list, or the
    preview was not its end after all)."""
    if index is None:
        return None
    at = len(full.messages) - len(preview.messages) + index
    if at < 0 or full.messages[at].uuid != preview.messages[index].uuid:
        return None
    return at


def _at_bottom(lst: MessageList) -> bool:
    """The cursor is on the last row and the view was left at the end of the list (or the list is empty)."""
    return not lst.rows or (lst.cursor >= len(lst.rows) - 1 and lst.at_end)
