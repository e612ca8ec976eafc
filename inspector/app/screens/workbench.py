"""The compaction workbench: what each strategy would do to the session, applied one layer at a time, with undo.

Pushed over the session screen (key c). A thread worker plans the chosen strategy on the current step and computes
the figures before and after; the handlers show the structural diff, both context bars and, for the highlighted
row, the message before and after. Applying a step, undoing or redoing it hands the step's session to the session
screen, so its list, bar, timeline and prompt show that state. A summary is planned with its exact prompt; the model
writes it through the Anthropic provider when a key is set (streamed here, Esc cancels), or the user writes it; it
replaces history only once approved. Export writes the current step to a new file, never the original.

The figures after a step are accounted from the figures before it (`after_figures`), never from scratch: no request
has measured that state, and re-accounting it would throw away what usage measured. The after bar, the diff's rows
and its totals all read those figures, so they add up; the after bar follows a summary as it is written.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message as TMessage
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Button, ContentSwitcher, Footer, Input, Label, Select, Static, TextArea
from textual.worker import get_current_worker

from inspector.app.figures import Figures, Settings, compute, micro_saving, plan_estimates
from inspector.app.messages import FiguresReady
from inspector.app.text import human, plain, visible
from inspector.app.widgets.before_after import BeforeAfter
from inspector.app.widgets.context_bar import ContextBar
from inspector.app.widgets.diff_view import DiffView, MicroRows, SummaryRows
from inspector.core.compaction.diff import Diff, render_totals
from inspector.core.compaction.micro import CLEARABLE_TOOLS, ClearSettings, ContextEditSettings, SnipSettings
from inspector.core.compaction.pipeline import STRATEGIES, CompactionPolicy, plan_strategy
from inspector.core.gc_pause import gc_paused
from inspector.core.compaction.apply import apply
from inspector.core.compaction.estimates import Estimates
from inspector.core.compaction.plan import Plan, Row
from inspector.core.compaction.provider import SummaryError
from inspector.core.compaction.steps import (StepStack, Summarized, microcompacted, next_layer, resummarized,
                                             summarized)
from inspector.core.compaction.summary import PROMPT_STYLES, SummarySettings, complete_summary
from inspector.core.compaction.survival import Survival, claude_md_files, survival
from inspector.core.model import Session

if TYPE_CHECKING:
    from inspector.app.screens.main import MainScreen

NO_KEY = ("No model configured: ANTHROPIC_API_KEY is not set. For the model to write it, quit, run "
          "`export ANTHROPIC_API_KEY=sk-ant-…` (and `export ANTHROPIC_BASE_URL=https://…` for another "
          "Messages-compatible endpoint) and reopen. Or write or paste a summary here (e) and approve it (ctrl+s).")
PENDING_TEXT = "(summary pending)"
PREVIEWS_KEPT = 16
GONE_SHOWN = 2  # categories the after line names as taken by a summary (the largest), so it fits one line
REFIGURE_AFTER = 0.3  # seconds without typing before the after bar counts the summary being written
_STACKS: WeakKeyDictionary[MainScreen, StepStack] = WeakKeyDictionary()
_ESTIMATES: WeakKeyDictionary[MainScreen, tuple[str, Estimates]] = WeakKeyDictionary()
_FIGURES: WeakKeyDictionary[MainScreen, dict[int, Figures]] = WeakKeyDictionary()
# The last summary accounted, (figures before, session, its figures): the after bar follows the summary being written
# (and approving it) without sharing the kept messages between categories again.
_LAST_SUMMARIZED: list[tuple[Figures, Session, Summarized]] = []


def has_key() -> bool:
    return bool(os.environ.get("ANTHROPIC_API_KEY", "").strip())


@dataclass(slots=True)
class Preview:
    """One planned strategy on one step, with what the views draw for it."""

    plan: Plan
    rows: Sequence[Row]  # the plan's rows as the diff view reads them
    before: Figures
    after: Figures
    survival: Survival | None
    totals: str = ""  # the line under the diff (`totals`)
    planned: Plan | None = None  # the plan as made (a summary's pending), when `plan` has a summary written since

    @property
    def as_planned(self) -> Plan:
        return self.planned or self.plan


class Job:
    """A worker's arguments, held apart: Textual names each worker after the repr of its arguments, and the repr
    of a 100,000-message Session takes seconds."""

    __slots__ = ("args",)

    def __init__(self, args: tuple) -> None:
        self.args = args


class PreviewReady(TMessage):
    def __init__(self, preview: Preview, generation: int) -> None:
        super().__init__()
        self.preview, self.generation = preview, generation


class SavingReady(TMessage):
    """`figures.micro_saving` is known now (it was None when the preview was first shown)."""

    def __init__(self, figures: Figures) -> None:
        super().__init__()
        self.figures = figures


class PreviewFailed(TMessage):
    def __init__(self, error: str) -> None:
        super().__init__()
        self.error = error


class SummaryProgress(TMessage):
    """More summary text arrived (coalesced: the handler reads the whole buffer)."""

    def can_replace(self, message: TMessage) -> bool:
        return isinstance(message, SummaryProgress)


class SummaryDone(TMessage):
    def __init__(self, plan: Plan | None, error: str | None = None) -> None:
        super().__init__()
        self.plan, self.error = plan, error


class Exported(TMessage):
    def __init__(self, path: Path | None, fmt: str, error: str | None = None) -> None:
        super().__init__()
        self.path, self.fmt, self.error = path, fmt, error


def _int(text: str, default: int) -> int:
    text = text.strip().replace(",", "").replace("_", "")
    return int(text) if text.isdigit() else default


def _names(text: str) -> tuple[str, ...]:
    return tuple(n.strip() for n in text.split(",") if n.strip())


class WorkbenchScreen(Screen):
    CSS_PATH = "workbench.tcss"
    BINDINGS = [
        Binding("left_square_bracket", "strategy(-1)", "Prev strategy", show=False, id="workbench.prev_strategy"),
        Binding("right_square_bracket", "strategy(1)", "Strategy", id="workbench.next_strategy"),
        Binding("a", "apply", "Apply", id="workbench.apply"),
        Binding("ctrl+s", "apply", "Approve", show=False, priority=True, id="workbench.approve"),
        Binding("l", "next_layer", "Next layer", id="workbench.next_layer"),
        Binding("u,ctrl+z", "undo", "Undo", id="workbench.undo"),
        Binding("U,ctrl+y", "redo", "Redo", id="workbench.redo"),
        Binding("c", "compare", "Compare", id="workbench.compare"),
        Binding("r", "run_summary", "Run summary", id="workbench.run_summary"),
        Binding("ctrl+d", "discard", "Discard", show=False, id="workbench.discard"),
        Binding("e", "edit_summary", "Edit summary", show=False, id="workbench.edit_summary"),
        Binding("w", "panel('survival')", "Survives", id="workbench.survival"),
        Binding("b", "panel('before-after')", "Before/after", show=False, id="workbench.before_after"),
        Binding("x", "export", "Export", id="workbench.export"),
        Binding("escape", "back", "Back", id="workbench.back"),
    ]

    def __init__(self, main: MainScreen) -> None:
        super().__init__()
        assert main.session is not None and main.figures is not None
        self.main = main
        session = main.session
        self.original_format = session.format
        kept = _STACKS.get(main)  # steps survive closing and reopening the workbench on the same state
        self.stack = kept if kept is not None and kept.current.session is session else \
            StepStack.start(session, main.figures.window.used)
        _STACKS[main] = self.stack
        self.estimates: Estimates | None = None
        self.strategy = "snip" if main.settings.micro_strategy == "snip" else "clear"
        s = main.settings
        style = "two-phase" if session.format == "claude-code" else "reference"
        self.params: dict[str, object] = {
            "snip": SnipSettings(s.preserve_last_n, s.max_chars),
            "clear": ClearSettings(CLEARABLE_TOOLS, s.keep_recent),
            "clear_tool_uses": ContextEditSettings(),
            "summary": SummarySettings(prompt=style),  # type: ignore[arg-type]
        }
        self.preview: Preview | None = None
        self.compared: tuple[int, int, Diff] | None = None
        self._figures = _FIGURES.setdefault(main, {})  # id(step session) -> its figures, kept with the steps
        self._figures[id(session)] = main.figures
        self._generation = 0
        self._buffer: list[str] = []
        self._provider = None
        self._claude_md: list[tuple[str, int]] | None = None
        self._asking = ""  # what the input line at the bottom asks for: compare or export
        self._run_when_planned = False
        self._summary_note = ""
        self._refigure_timer: Timer | None = None
        self._previews: dict[tuple[int, str, object], Preview] = {}  # oldest first
        self.last_export: Path | None = None

    # -- layout -----------------------------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static("", id="wb-title")
        yield Static("", id="wb-steps")
        yield Label("now", classes="wb-bar-label")
        yield ContextBar(id="wb-bar-before")
        yield Label("after the previewed step", classes="wb-bar-label", id="wb-after-label")
        yield ContextBar(id="wb-bar-after")
        with Horizontal(id="wb-middle"):
            with VerticalScroll(id="wb-settings"):
                yield Label("Strategy ([ ] cycles)", classes="title")
                yield Select([(s, s) for s in STRATEGIES], value=self.strategy, allow_blank=False,
                             id="wb-strategy")
                with Vertical(id="set-snip", classes="wb-group"):
                    yield Label("last messages kept")
                    yield Input(str(self._p("snip").preserve_last_n), type="integer", id="snip-preserve")
                    yield Label("snip results over (chars)")
                    yield Input(str(self._p("snip").max_chars), type="integer", id="snip-maxchars")
                with Vertical(id="set-clear", classes="wb-group"):
                    yield Label("results kept (newest)")
                    yield Input(str(self._p("clear").keep_recent), type="integer", id="clear-keep")
                    yield Label("tools cleared")
                    yield Input(",".join(self._p("clear").tools), id="clear-tools")
                with Vertical(id="set-clear_tool_uses", classes="wb-group"):
                    yield Label("trigger (context tokens)")
                    yield Input(str(self._p("clear_tool_uses").trigger), type="integer", id="ctu-trigger")
                    yield Label("tool uses kept")
                    yield Input(str(self._p("clear_tool_uses").keep), type="integer", id="ctu-keep")
                    yield Label("clear at least (tokens)")
                    yield Input("0", type="integer", id="ctu-atleast")
                    yield Label("never clear tools")
                    yield Input("", placeholder="e.g. Read,Edit", id="ctu-exclude")
                    yield Label("clear tool inputs too")
                    yield Select([("no", False), ("yes", True)], value=False, allow_blank=False, id="ctu-inputs")
                with Vertical(id="set-summary", classes="wb-group"):
                    yield Label("share kept verbatim (0-1)")
                    yield Input(str(self._p("summary").keep_ratio), id="sum-ratio")
                    yield Label("prompt")
                    yield Select([(p, p) for p in PROMPT_STYLES], value=self._p("summary").prompt,
                                 allow_blank=False, id="sum-style")
                    yield Label("instructions")
                    yield Input("", placeholder="e.g. focus on the failing tests", id="sum-instructions")
            with Vertical(id="wb-diff-pane"):
                yield Static(DiffView.header(), id="wb-diff-header")
                yield DiffView(id="wb-diff")
                yield Static("", id="wb-totals")
        with ContentSwitcher(initial="before-after", id="wb-bottom"):
            yield BeforeAfter(id="before-after")
            with Horizontal(id="summary"):
                with VerticalScroll(id="wb-prompt"):
                    yield Static("", id="wb-prompt-text")
                with Vertical(id="wb-summary-pane"):
                    yield Static("", id="wb-summary-status")
                    yield TextArea("", id="wb-summary-text", soft_wrap=True, show_line_numbers=False)
                    with Horizontal(id="wb-summary-buttons"):
                        yield Button("Run model (r)", id="wb-run", variant="primary")
                        yield Button("Approve (ctrl+s)", id="wb-approve", variant="success")
                        yield Button("Discard (ctrl+d)", id="wb-discard", variant="error")
            with VerticalScroll(id="survival"):
                yield Static("", id="wb-survival-text")
        with Horizontal(id="wb-ask"):
            yield Label("", id="wb-ask-label")
            yield Input("", id="wb-ask-input")
            yield Select([("neutral", "neutral"), ("Claude Code", "claude-code")], value="neutral",
                         allow_blank=False, id="wb-export-format")
        yield Footer()

    def _p(self, strategy: str):  # the settings object of a strategy, typed loosely for compose
        return self.params[strategy]

    def on_mount(self) -> None:
        self.query_one("#wb-ask").display = False
        self._show_groups()
        self.query_one(DiffView).focus()
        self._update_header()
        self.call_after_refresh(self.replan)  # the screen drawn first, without a worker competing for the GIL

    # -- planning (the worker posts; handlers change widgets) --------------------------------------------------------

    @property
    def session(self) -> Session:
        return self.stack.current.session

    def policy(self) -> CompactionPolicy:
        settings = self.main.settings
        figures = self._figures.get(id(self.stack.original.session)) or self.main.figures
        threshold = figures.window.thresholds.get("autocompact") if figures else None
        micro = settings.micro_strategy if settings.micro_strategy in ("snip", "clear") else "clear"
        return CompactionPolicy(threshold if threshold is not None else 0, micro,  # type: ignore[arg-type]
                                self.params[micro], self.params["summary"])  # type: ignore[arg-type]

    def replan(self) -> None:
        """Preview the chosen strategy on the current step: at once when planned before (undo, redo, going back
        to a setting), else in the planning worker."""
        self._generation += 1
        session, params = self.session, self.params[self.strategy]
        cached = self._previews.get((id(session), self.strategy, params))
        if cached is not None and cached.plan.session is session and cached.after.settings == self.main.settings:
            self.preview = cached
            self._show_preview()
            return
        self.query_one("#wb-totals", Static).update(
            Text(f"planning {self.strategy} on step {self.stack.position}…", style="italic"))
        self._plan_worker(Job((session, self.strategy, params, self._generation)))

    @work(thread=True, exclusive=True, exit_on_error=False, group="workbench-plan")
    def _plan_worker(self, job: Job) -> None:
        session, strategy, params, generation = job.args
        worker = get_current_worker()
        try:
            with gc_paused():  # tens of thousands of rows and messages next to a large session: see paused_gc
                preview = self._make_preview(session, strategy, params, worker)
            if preview is not None:
                self.post_message(PreviewReady(preview, generation))
        except Exception as exc:  # a plan must never take the app down: say what failed
            self.post_message(PreviewFailed(f"{type(exc).__name__}: {exc}"))

    def _make_preview(self, session: Session, strategy: str, params: object, worker) -> Preview | None:
        """Plan `strategy` on `session` with the figures before and after (None: cancelled meanwhile)."""
        settings = self.main.settings
        before = _step_figures(self.stack, self.stack.position, settings, self._figures, self.main.figures)
        if self.main.session is session and self.main.figures is not before:
            self.main.post_message(FiguresReady(before))  # the session screen computed a step from scratch
        est = self.estimates = self.estimates or self._estimates(before)
        plan = plan_strategy(strategy, session, params, est, context_tokens=self.stack.current.figure)
        if worker.is_cancelled:
            return None
        after_session = _applied(plan)
        if worker.is_cancelled:
            return None
        after = before if after_session is session else after_figures(before, plan, after_session, plan.pending)
        rows = _rows(plan, before, after)  # made here, not in a handler
        kept = None
        if plan.summary is not None and session.format == "claude-code":
            if self._claude_md is None:
                self._claude_md = claude_md_files(session, est)
            kept = survival(plan, self._claude_md, self.stack.original.session)
        return None if worker.is_cancelled else Preview(plan, rows, before, after, kept, totals(plan, before, after))

    def _estimates(self, figures: Figures) -> Estimates:
        """The estimates cache plans read: kept per session screen and estimator (reopening the workbench plans
        warm), and for estimators that price each message on its own, as accounting does, filled with the figures'
        own estimates of the current context instead of estimating 100,000 messages again."""
        name = figures.settings.estimator
        kept = _ESTIMATES.get(self.main)
        if kept is not None and kept[0] == name:
            return kept[1]
        est = plan_estimates(figures.session, name, figures.estimated, fitted_on=self.stack.original.session)
        _ESTIMATES[self.main] = (name, est)
        return est

    @work(thread=True, exclusive=True, exit_on_error=False, group="workbench-saving")
    def _saving_worker(self, job: Job) -> None:
        """The bar's microcompaction note for figures accounted from a step before (a plan of its own: not made
        while previewing, which must be quick)."""
        figures, = job.args
        figures.micro_saving, figures.micro_note = micro_saving(figures.session, figures.settings)
        self.post_message(SavingReady(figures))

    @on(SavingReady)
    def _saving_ready(self, event: SavingReady) -> None:
        for bar in [*self.query(ContextBar), *self.main.query(ContextBar)]:
            if bar.figures is event.figures:
                bar.refresh()

    @on(PreviewReady)
    def _preview_ready(self, event: PreviewReady) -> None:
        if event.generation != self._generation:
            return
        p = event.preview
        self._figures[id(p.before.session)] = p.before
        self._previews[(id(p.plan.session), p.plan.strategy, p.plan.settings)] = p
        while len(self._previews) > PREVIEWS_KEPT:
            del self._previews[next(iter(self._previews))]
        self.preview = p
        if self.compared is None:
            self._show_preview()
        if self._run_when_planned and p.plan.strategy == "summary":
            self._run_when_planned = False
            self.action_run_summary()

    @on(PreviewFailed)
    def _preview_failed(self, event: PreviewFailed) -> None:
        self.notify(visible(event.error), title="Cannot plan", severity="error", markup=False)

    def _show_preview(self) -> None:
        p = self.preview
        if p is None:
            return
        plan = p.plan
        if p.before.micro_saving is None:  # a step accounted from the one before it
            self._saving_worker(Job((p.before,)))
        self.query_one("#wb-bar-before", ContextBar).show(p.before)
        self.query_one("#wb-bar-after", ContextBar).show(p.after)
        self.query_one("#wb-after-label", Label).update(after_label(p))
        survives = p.survival.reinjected_messages if p.survival else set()
        self.query_one(DiffView).show(p.rows, survives)
        self.query_one("#wb-totals", Static).update(plain(p.totals))
        self.query_one("#wb-diff-header", Static).update(
            plain(f"{DiffView.header()}   [{plan.strategy} on step {self.stack.position}, estimator "
                  f"{plan.estimator}]"))
        self._show_summary_panel()
        self._show_survival()
        self._update_header()

    def _policy_name(self) -> str:
        figures = self._figures.get(id(self.stack.original.session)) or self.main.figures
        return figures.window.policy if figures else str(self.main.settings.policy or "default")

    def _update_header(self) -> None:
        stack = self.stack
        name = Path(stack.original.session.source).name
        step = stack.current
        threshold = self.policy().threshold
        self.query_one("#wb-title", Static).update(plain(
            f"Workbench · {name} · step {stack.position}/{len(stack.steps) - 1} {step.label} · "
            f"figure {step.figure:,}, auto-compact at {threshold:,} ({self._policy_name()})"))
        parts = Text("steps: ")
        for i, s in enumerate(stack.steps):
            if i:
                parts.append(" › ", style="dim")
            style = "bold reverse" if i == stack.position else ("" if i < stack.position else "dim")
            parts.append(f"{i} {s.label} {human(s.figure)}", style=style)
        if self.compared is not None:
            a, b, _ = self.compared
            parts.append(f"   comparing step {a} → step {b} (esc: back to the preview)", style="bold yellow")
        self.query_one("#wb-steps", Static).update(parts)

    # -- settings ---------------------------------------------------------------------------------------------------

    def _show_groups(self) -> None:
        for strategy in STRATEGIES:
            self.query_one(f"#set-{strategy}").display = strategy == self.strategy
        bottom = self.query_one(ContentSwitcher)
        if self.strategy == "summary" and bottom.current == "before-after":
            bottom.current = "summary"
        elif self.strategy != "summary" and bottom.current == "summary":
            bottom.current = "before-after"

    def set_strategy(self, strategy: str) -> None:
        if strategy == self.strategy:
            return
        self._run_when_planned = False
        self.strategy = strategy
        with self.prevent(Select.Changed):
            self.query_one("#wb-strategy", Select).value = strategy
        self._show_groups()
        self.compared = None
        self.replan()

    @on(Select.Changed, "#wb-strategy")
    def _strategy_changed(self, event: Select.Changed) -> None:
        if isinstance(event.value, str):
            self.set_strategy(event.value)

    def action_strategy(self, step: int) -> None:
        i = STRATEGIES.index(self.strategy)
        self.set_strategy(STRATEGIES[(i + step) % len(STRATEGIES)])

    @on(Input.Changed, "#wb-settings Input")
    @on(Select.Changed, "#ctu-inputs, #sum-style")
    def _setting_changed(self, event: Input.Changed | Select.Changed) -> None:
        v = self._value
        p = dict(self.params)
        p["snip"] = SnipSettings(_int(v("snip-preserve"), 6), _int(v("snip-maxchars"), 2000))
        p["clear"] = ClearSettings(_names(v("clear-tools")) or CLEARABLE_TOOLS, _int(v("clear-keep"), 5))
        p["clear_tool_uses"] = ContextEditSettings(
            _int(v("ctu-trigger"), 100_000), _int(v("ctu-keep"), 3), _int(v("ctu-atleast"), 0),
            _names(v("ctu-exclude")), bool(self.query_one("#ctu-inputs", Select).value))
        try:
            ratio = min(1.0, max(0.0, float(v("sum-ratio"))))
        except ValueError:
            ratio = 0.3
        style = self.query_one("#sum-style", Select).value
        p["summary"] = SummarySettings(ratio, style if isinstance(style, str) else "reference",  # type: ignore
                                       v("sum-instructions") or None)
        if p != self.params:  # inputs also post Changed when they mount: only a real change re-plans
            self.params = p
            self.replan()

    def _value(self, input_id: str) -> str:
        return self.query_one(f"#{input_id}", Input).value

    # -- the diff and the bottom panels -----------------------------------------------------------------------------

    @on(DiffView.Highlighted)
    def _row(self, event: DiffView.Highlighted) -> None:
        ba = self.query_one(BeforeAfter)
        row = event.row
        if row is None:
            ba.clear("a run of unchanged messages: K shows them one by one")
            return
        old_session, new_session = self._sides()
        before = old_session.messages[row.old] if row.old is not None else None
        if self.compared is not None:
            after = new_session.messages[row.new] if row.new is not None else None
        else:
            after = row.message if row.fate not in ("summarized", "removed") else None
        tokens = (row.before if row.old is not None else None, row.after if after else None)
        p = self.preview
        if self.compared is not None or p is None or p.before.session is not old_session:
            ba.show(before, after, tokens)
            return
        # the bars' figures: a share of measured usage where they count one, else the estimate
        was = row.old is not None and p.before.measured[row.old] is not None
        now = after is not None and row.new is not None and row.after is not None
        if was:
            tokens = (p.before.measured[row.old], tokens[1])  # type: ignore[index]
        if now:
            tokens = (tokens[0], p.after.size(row.new))  # type: ignore[arg-type]
        ba.show(before, after, tokens, (was, now and p.after.measured[row.new] is not None))  # type: ignore[index]

    def _sides(self) -> tuple[Session, Session]:
        if self.compared is not None:
            a, b, _ = self.compared
            return self.stack.steps[a].session, self.stack.steps[b].session
        return self.session, self.session

    def action_panel(self, name: str) -> None:
        bottom = self.query_one(ContentSwitcher)
        if name == "survival" and bottom.current == "survival":
            name = "summary" if self.strategy == "summary" else "before-after"
        bottom.current = name

    def _show_summary_panel(self) -> None:
        p = self.preview
        if p is None or p.plan.summary is None:
            text = Text("Nothing to summarize here." if self.strategy == "summary" else "", style="dim")
            if p is not None and p.plan.note:
                text = plain(p.plan.note)
            self.query_one("#wb-prompt-text", Static).update(text)
            return
        state = p.plan.summary
        head = Text()
        head.append(f"The exact request: ~{state.request_tokens:,} tokens", style="bold")
        head.append(f"  ({len(state.old):,} messages summarized, {p.plan.estimator} estimate)\n", style="dim")
        head.append("── system\n", style="dim bold")
        head.append(visible(state.system) + "\n")
        head.append(f"── {len(state.old):,} messages of conversation (the diff's summarized rows)\n",
                    style="dim bold")
        head.append("── prompt (last user turn)\n", style="dim bold")
        head.append(visible(state.prompt))
        self.query_one("#wb-prompt-text", Static).update(head)
        area = self.query_one("#wb-summary-text", TextArea)
        if state.text is not None and not area.text.strip():
            area.load_text(visible(state.text))
        self._summary_status()

    def _summary_status(self, note: str | None = None) -> None:
        """The line above the editor: what to do next, after `note` (kept until the next note; "" clears it)."""
        if note is not None:
            self._summary_note = note
        area = self.query_one("#wb-summary-text", TextArea)
        running = self._provider is not None
        if running:
            text = "The model is writing the summary… (esc cancels)"
        elif area.text.strip():
            est = self.estimates
            size = f"{est.text(area.text):,} tokens" if est else f"{len(area.text):,} characters"
            p = self.preview
            if p is not None and p.plan.summary is not None and p.plan.summary.text == area.text.strip() and \
                    p.after.session is not p.plan.session:  # the after bar counts it: as the message it becomes
                size += f" ({p.after.size(len(p.plan.session.messages)):,} in the new context, with its preamble)"
            text = (f"Summary: {size}. Read and edit it (e), then approve it (ctrl+s) to replace the summarized "
                    "messages, or discard it (ctrl+d).")
        elif has_key():
            text = "Run the model (r) to write the summary, or write one yourself (e), then approve it (ctrl+s)."
        else:
            text = NO_KEY
        if self._summary_note and not running:
            text = f"{self._summary_note}  {text}"
        self.query_one("#wb-summary-status", Static).update(plain(text))
        self.query_one("#wb-run", Button).disabled = running or not has_key()

    @on(Button.Pressed, "#wb-run")
    def _run_pressed(self) -> None:
        self.action_run_summary()

    @on(Button.Pressed, "#wb-approve")
    def _approve_pressed(self) -> None:
        self.action_apply()

    @on(Button.Pressed, "#wb-discard")
    def _discard_pressed(self) -> None:
        self.action_discard()

    @on(TextArea.Changed, "#wb-summary-text")
    def _summary_edited(self) -> None:
        if self._provider is None:
            self._summary_status()
            if self._refigure_timer is not None:
                self._refigure_timer.stop()
            self._refigure_timer = self.set_timer(REFIGURE_AFTER, self._refigure)

    def _refigure(self) -> None:
        """The summary in the editor changed (typed, pasted, discarded): the after bar, rows and totals count the
        text as it would be approved, or the summary as pending when there is none."""
        self._refigure_timer = None
        p = self.preview
        if p is None or p.plan.summary is None or p.plan.session is not self.session or self._provider is not None:
            return  # not a summary of the step shown (one was just approved: the next preview is being made)
        planned, text = p.as_planned, self.query_one("#wb-summary-text", TextArea).text
        try:
            plan = complete_summary(planned, text) if text.strip() else planned
        except SummaryError:
            plan = planned
        if plan.summary.text != p.plan.summary.text:  # type: ignore[union-attr]
            self._show_written(plan)

    def _show_survival(self) -> None:
        p = self.preview
        out = self.query_one("#wb-survival-text", Static)
        if self.original_format != "claude-code":
            out.update(Text("What survives is computed for Claude Code sessions: it re-injects recently read files, "
                            "the todo list and CLAUDE.md after a summary. This session is "
                            f"{self.original_format}.", style="dim"))
        elif p is None or p.survival is None:
            out.update(Text("Choose the summary strategy to see what Claude Code re-injects after it and what will "
                            "exist only in the summary.", style="dim"))
        else:
            out.update(plain("\n".join(p.survival.lines())))

    # -- steps ------------------------------------------------------------------------------------------------------

    def action_apply(self) -> None:
        p = self.preview
        if p is None or self.compared is not None:
            self.notify("nothing to apply here: wait for the preview, or leave the comparison (esc)")
            return
        plan = p.plan
        if plan.session is not self.session:
            return
        if not plan.changed:
            self.notify(f"{plan.strategy} changes nothing here" + (f": {plan.note}" if plan.note else ""),
                        markup=False)
            return
        summary = None
        if plan.summary is not None:
            summary = self.query_one("#wb-summary-text", TextArea).text
            try:
                complete_summary(plan, summary)
            except SummaryError as exc:
                self.query_one(ContentSwitcher).current = "summary"
                self.notify(f"no summary to approve: {exc}. Run the model (r) or write one.",
                            severity="warning", markup=False)
                return
        applied, after = (p.after.session, p.after) if summary is None else (None, None)
        if summary is not None and p.before.session is plan.session:  # the bars' figures with the text approved
            applied = apply(plan, summary)
            after = after_figures(p.before, plan, applied)
            was, record = p.before.window.used, applied.compactions[-1]  # recorded as Claude Code does: the window
            applied = after.session = applied.copy_with(compactions=[*applied.compactions[:-1], replace(
                record, pre_tokens=was, tokens_saved=was - after.window.used)])
        freed = p.before.window.used - after.window.used if after is not None else None
        step = self.stack.push(plan, summary, applied=applied, saved=freed)
        if after is not None:
            self._figures[id(applied)] = after
        self._summary_note = ""
        self.query_one("#wb-summary-text", TextArea).load_text("")
        self.query_one(DiffView).focus()
        self.notify(f"step {self.stack.position}: {step.label}", timeout=3)
        self._stepped()

    def action_next_layer(self) -> None:
        if self.estimates is None:
            return
        layer = next_layer(self.stack.current, self.policy(), self.estimates)
        if layer.plan is None:
            self.notify(layer.reason, markup=False)
            return
        if layer.plan.summary is not None:
            self.set_strategy("summary")
            self.notify(f"next layer: {layer.reason}. Run it (r) or write a summary, then approve (ctrl+s).",
                        markup=False, timeout=6)
            return
        plan, settings = layer.plan, self.main.settings
        before = self._figures.get(id(plan.session))
        if before is not None and before.session is plan.session and before.settings == settings:
            applied = apply(plan, trigger="auto")
            after = after_figures(before, plan, applied)
            step = self.stack.push(plan, trigger="auto", applied=applied, saved=before.window.used - after.window.used)
            self._figures[id(applied)] = after
        else:  # figures still being computed: the step's own are made when it is previewed
            step = self.stack.push(plan, trigger="auto")
        self.notify(f"step {self.stack.position}: {step.label} ({layer.reason})", markup=False, timeout=4)
        self._stepped()

    def action_undo(self) -> None:
        if self.stack.undo() is None:
            self.notify("nothing to undo: this is the original session")
            return
        self._stepped()

    def action_redo(self) -> None:
        if self.stack.redo() is None:
            self.notify("nothing to redo")
            return
        self._stepped()

    def _stepped(self) -> None:
        """The current step changed: the session screen shows it, the preview is planned again on it."""
        self.compared = None
        session = self.session
        self.main.session = session
        figures = self._figures.get(id(session))
        if figures is not None and figures.session is session and figures.settings == self.main.settings:
            self.main.post_message(FiguresReady(figures))  # known already: no need to compute them again
        # else the planning worker accounts the step (from the step before it) and hands its figures over
        self._update_header()
        self.replan()

    # -- summary through the provider -------------------------------------------------------------------------------

    def action_run_summary(self) -> None:
        p = self.preview
        if self.strategy != "summary":
            self.set_strategy("summary")
            self._run_when_planned = True
            return
        if p is None or p.plan.session is not self.session or p.plan.strategy != "summary":
            self._run_when_planned = True  # the summary plan is still being made: start as soon as it is
            return
        if p.plan.summary is None:
            self.notify(f"nothing to summarize here: {p.plan.note}", markup=False)
            return
        self.query_one(ContentSwitcher).current = "summary"
        if not has_key():
            self._summary_status()
            self.notify("ANTHROPIC_API_KEY is not set: write or paste a summary, or set the key (see the panel)",
                        severity="warning", timeout=6)
            return
        if self._provider is not None:
            self.notify("the model is already writing the summary (esc cancels it)")
            return
        from inspector.core.agent.provider import DEFAULT_MODEL, AnthropicProvider, MissingApiKey

        try:  # made here, not in the worker, so esc can always reach its cancel token
            self._provider = AnthropicProvider.from_env(os.environ.get("ANTHROPIC_MODEL") or DEFAULT_MODEL)
        except MissingApiKey:
            self._summary_status()
            return
        self._buffer = []
        area = self.query_one("#wb-summary-text", TextArea)
        area.load_text("")
        area.read_only = True
        self._summary_worker(Job((p.plan, self._provider)))
        self._summary_status("")

    @work(thread=True, exclusive=True, exit_on_error=False, group="workbench-summary")
    def _summary_worker(self, job: Job) -> None:
        from inspector.core.compaction.summary import run_summary

        plan, provider = job.args

        def on_text(piece: str) -> None:
            self._buffer.append(piece)
            self.post_message(SummaryProgress())

        try:
            done = run_summary(plan, provider, on_text)
        except SummaryError as exc:
            self.post_message(SummaryDone(None, str(exc)))
            return
        self.post_message(SummaryDone(done))

    @on(SummaryProgress)
    def _summary_progress(self) -> None:
        area = self.query_one("#wb-summary-text", TextArea)
        area.load_text(visible("".join(self._buffer)))  # model text is data: no escapes
        area.scroll_end(animate=False)

    @on(SummaryDone)
    def _summary_done(self, event: SummaryDone) -> None:
        self._provider = None
        area = self.query_one("#wb-summary-text", TextArea)
        area.read_only = False
        if event.plan is None:
            self._summary_status(f"Summary failed: {visible(event.error or 'unknown error')}.")
            self.notify(visible(event.error or "summary failed"), title="Summary", severity="warning",
                        markup=False)
            return
        self._show_written(event.plan)
        area.load_text(visible(event.plan.summary.text or ""))  # type: ignore[union-attr]
        self._summary_status("The model wrote this summary (its analysis removed).")

    def _show_written(self, plan: Plan) -> None:
        """The preview with `plan`'s summary (written, or pending again): its rows, the after bar, its line and the
        totals count it."""
        p = self.preview
        if p is None or p.plan.session is not plan.session or p.before.session is not plan.session:
            return
        if p.planned is None:
            p.planned = p.plan
        p.plan = plan
        p.after = after_figures(p.before, plan, _applied(plan), plan.pending)
        p.rows, p.totals = _rows(plan, p.before, p.after), totals(plan, p.before, p.after)
        if self.compared is None:
            self._show_preview()

    def action_edit_summary(self) -> None:
        if self.strategy != "summary":
            self.set_strategy("summary")
        self.query_one(ContentSwitcher).current = "summary"
        self.query_one("#wb-summary-text", TextArea).focus()

    def action_discard(self) -> None:
        self.query_one("#wb-summary-text", TextArea).load_text("")
        self._summary_status("Summary discarded; history is unchanged.")

    # -- compare and export (one input line at the bottom) -----------------------------------------------------------

    def _ask(self, label: str, value: str, kind: str) -> None:
        ask = self.query_one("#wb-ask")
        ask.display = True
        ask.set_class(kind == "export", "exporting")
        self.query_one("#wb-export-format").display = kind == "export"
        self.query_one("#wb-ask-label", Label).update(plain(label))
        box = self.query_one("#wb-ask-input", Input)
        box.value = value
        self._asking = kind
        box.focus()

    def action_compare(self) -> None:
        n = len(self.stack.steps)
        if n < 2:
            self.notify("only the original so far: apply a step first")
            return
        self._ask(f"compare steps (0-{n - 1}), from and to:", f"0 {self.stack.position or n - 1}", "compare")

    def action_export(self) -> None:
        source = Path(self.stack.original.session.source).resolve()
        fmt = "claude-code" if self.original_format == "claude-code" else "neutral"
        self.query_one("#wb-export-format", Select).value = fmt
        self._ask("export the current step to:", str(_free_path(source.with_name(f"{source.stem}.compacted.jsonl"))),
                  "export")

    @on(Input.Submitted, "#wb-ask-input")
    def _asked(self, event: Input.Submitted) -> None:
        self.query_one("#wb-ask").display = False
        self.query_one(DiffView).focus()
        if self._asking == "compare":
            self._compare(event.value)
        elif self._asking == "export":
            fmt = self.query_one("#wb-export-format", Select).value
            self._export_worker(Job((self.session, event.value.strip(), str(fmt))))

    def _compare(self, text: str) -> None:
        parts = text.replace(",", " ").split()
        n = len(self.stack.steps)
        if len(parts) != 2 or not all(p.isdigit() and int(p) < n for p in parts):
            self.notify(f"give two step numbers between 0 and {n - 1}, e.g. 0 {n - 1}", severity="warning")
            return
        a, b = int(parts[0]), int(parts[1])
        diff = self.stack.compare(a, b, self.estimates)
        self.compared = (a, b, diff)
        self.query_one(DiffView).show(diff.rows)
        self.query_one("#wb-totals", Static).update(plain(
            f"step {a} → step {b}: " + render_totals(diff.before, diff.after, diff.counts)))
        self.query_one("#wb-diff-header", Static).update(plain(f"{DiffView.header()}   [step {a} → step {b}]"))
        for side, step in (("before", a), ("after", b)):
            figures = self._figures.get(id(self.stack.steps[step].session))
            if figures is not None and figures.session is self.stack.steps[step].session:
                self.query_one(f"#wb-bar-{side}", ContextBar).show(figures)
        self.query_one("#wb-after-label", Label).update(f"step {b}")
        self.query_one(ContentSwitcher).current = "before-after"
        self._update_header()

    @work(thread=True, exclusive=True, exit_on_error=False, group="workbench-export")
    def _export_worker(self, job: Job) -> None:
        session, out, fmt = job.args
        from inspector.core.export import export_session

        if not out:
            self.post_message(Exported(None, fmt, "no file name given"))
            return
        try:
            path = export_session(session, out, fmt)  # type: ignore[arg-type]
        except Exception as exc:  # LoadError is the expected one: refusing the original, an unwritable path
            self.post_message(Exported(None, fmt, str(exc)))
            return
        self.post_message(Exported(path, fmt))

    @on(Exported)
    def _exported(self, event: Exported) -> None:
        if event.path is None:
            self.notify(visible(event.error or "export failed"), title="Export", severity="error", markup=False)
            return
        how = " (Claude Code: `claude --resume` finds it as <session-id>.jsonl in its project directory)" \
            if event.fmt == "claude-code" else ""
        self.notify(f"step {self.stack.position} written to {visible(str(event.path))} ({event.fmt}){how}; "
                    "the original is untouched", title="Exported", timeout=10, markup=False)
        self.last_export = event.path

    # -- leaving ----------------------------------------------------------------------------------------------------

    def action_back(self) -> None:
        """Esc: cancel a running summary, else leave an editor or input, a comparison, then the workbench."""
        if self._provider is not None:
            self._provider.cancel.cancel()
            return
        if isinstance(self.focused, (TextArea, Input)) and not self.query_one("#wb-ask").display:
            self.query_one(DiffView).focus()
            return
        if self.query_one("#wb-ask").display:
            self.query_one("#wb-ask").display = False
            self.query_one(DiffView).focus()
            return
        if self.compared is not None:
            self.compared = None
            self._show_preview()
            return
        self.app.pop_screen()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "undo":
            return True if self.stack.can_undo else None
        if action == "redo":
            return True if self.stack.can_redo else None
        return True


def _applied(plan: Plan) -> Session:
    """The session after `plan` for the after-bar: a pending summary counts as a placeholder."""
    if not plan.changed:
        return plan.session
    return apply(plan, PENDING_TEXT if plan.pending else None)


def step_figures(main: MainScreen, settings: Settings) -> Figures | None:
    """The figures of the session `main` shows when it is a workbench step (a microcompaction or a summary), under
    `settings`: accounted from the step before it (`after_figures`), as the workbench does. None for any other
    session: compute those from scratch. Accounting a microcompaction's step from scratch against usage that
    measured the unedited messages would put what the step freed into the unrecorded prefix; a summary's would drop
    the kept messages' measured shares for estimates (and take seconds at 100k messages)."""
    stack = _STACKS.get(main)
    if stack is None:
        return None
    index = next((i for i, s in enumerate(stack.steps) if s.session is main.session), None)
    plan = stack.steps[index].plan if index is not None else None
    if index is None or plan is None:
        return None
    figures = _step_figures(stack, index, settings, _FIGURES.setdefault(main, {}), main.figures)
    if figures.micro_saving is None:  # the bar's note, as compute() gives it (this runs in a worker)
        figures.micro_saving, figures.micro_note = micro_saving(figures.session, settings)
    return figures


def _step_figures(stack: StepStack, index: int, settings: Settings, known: dict[int, Figures],
                  shown: Figures | None) -> Figures:
    """The figures of step `index` under `settings`: known ones, else a step's accounted from the step before it
    (`after_figures`), else the original's: the session screen's (`shown`) or computed; kept in `known`."""
    step = stack.steps[index]

    def fits(f: Figures | None) -> bool:
        return f is not None and f.session is step.session and f.settings == settings

    figures = known.get(id(step.session))
    if figures is None or not fits(figures):
        if step.plan is None and shown is not None and fits(shown):  # the session screen's, from scratch: right here
            figures = shown
        elif step.plan is not None:
            figures = after_figures(_step_figures(stack, index - 1, settings, known, shown), step.plan, step.session)
        else:
            figures = compute(step.session, settings)
    known[id(step.session)] = figures
    return figures


def after_label(p: Preview) -> Text:
    """The line above the after bar: its total, and what moved in its split, so the bar's colours can be read
    without a legend. A microcompaction: before → after per category, the rest as it was. A summary: the total as
    the sum it is (prefix + summary + acknowledgement + kept messages, how many of them measured) and the largest
    categories the folded messages took with them."""
    plan = p.plan
    out = Text(f"after {plan.strategy}", style="bold")
    if plan.pending:
        out.append(" (summary pending)")
    out.append(f": {human(p.after.window.used)} used")
    if p.after.session is plan.session:
        return out
    if plan.summary is not None:
        return _summary_label(p, out)
    out.append(", estimated: changed messages at their new size", style="yellow")
    was, now = dict(p.before.categories), dict(p.after.categories)
    for name, t in p.before.categories[:1]:  # the prefix (system prompt and tools) comes first
        if now.get(name) == t:
            out.append(f" · prefix {human(t)} unchanged", style="dim")
    moved = [f"{_short(name)} {human(was.get(name, 0))}→{human(t)}" for name, t in p.after.categories
             if t != was.get(name, 0)] + [f"{_short(name)} {human(t)}→0" for name, t in p.before.categories
                                          if name not in now]
    if moved:
        out.append(" · " + ", ".join(moved))
    return out


def _summary_label(p: Preview, out: Text) -> Text:
    from inspector.core.categories import COMPACTION_SUMMARY, SYSTEM_TOOLS, label

    plan, before, after = p.plan, p.before, p.after
    assert plan.summary is not None
    n, added = len(plan.session.messages), len(plan.added)
    prefix = dict(before.categories).get(label(SYSTEM_TOOLS), 0)
    new = [after.size(n + k) for k in range(added)]
    kept = range(n + added, len(after.measured))
    terms = [f"prefix {human(prefix)}"] + ([] if plan.pending else [f"summary {human(new[0])}"]) + \
        [f"ack {human(t)}" for t in new[1:]] + [f"{len(kept):,} kept {human(sum(map(after.size, kept)))}"]
    out.append(", estimated = " + " + ".join(terms), style="yellow")
    measured = sum(after.measured[j] is not None for j in kept)
    lost = sum(before.measured[i] is not None for i in range(plan.summary.split, n)) - measured
    if measured or lost:
        out.append(f" ({measured:,} measured" + (f", {lost:,} now estimated: the cut splits the growth they were "
                                                "measured from" if lost else "") + ")", style="yellow")
    was, now = dict(before.categories), dict(after.categories)
    now[label(COMPACTION_SUMMARY)] = now.get(label(COMPACTION_SUMMARY), 0) - sum(new)  # the kept messages' part
    gone = sorted(((t - now.get(name, 0), name) for name, t in before.categories[1:] if t > now.get(name, 0)),
                  reverse=True)
    if gone:
        earlier = {label(COMPACTION_SUMMARY): "earlier summary"}  # a summary folded into the new one
        shown = ", ".join(f"{earlier.get(name) or _short(name)} {human(t)}" for t, name in gone[:GONE_SHOWN])
        out.append(" · gone: " + shown + (f", +{len(gone) - GONE_SHOWN} more" if len(gone) > GONE_SHOWN else ""))
    return out


def _short(category: str) -> str:
    return visible(category.removeprefix("tool results: ").split(" (")[0])


def totals(plan: Plan, before: Figures, after: Figures) -> str:
    """The line under the diff. A summary's in the bars' figures, so it adds up: the window before and after, what
    it frees and where that comes from (the rows' deltas, the unrecorded growth that goes, the prefix that stays);
    a microcompaction's in the plan's estimates (its rows'), then the plan's note."""
    from inspector.core.categories import SYSTEM_TOOLS, label

    if plan.summary is None or after.session is plan.session:
        out = render_totals(plan.before, plan.after, plan.counts, plan.pending)
    else:
        was, now = before.window.used, after.window.used
        prefix = dict(before.categories).get(label(SYSTEM_TOOLS), 0)
        messages = sum(map(before.size, range(plan.start, len(plan.session.messages))))
        growth = was - prefix - messages  # what the window holds beyond the prefix and the messages
        freed = was - now
        pct = f" ({freed / was:.1%})" if was else ""
        counts = plan.counts
        out = (f"{was:,} -> {now:,}" + (" (summary pending)" if plan.pending else "") +
               f", freed {freed:,}{pct}: messages {now - prefix - messages:+,} ({counts['summarized']:,} summarized, "
               f"{counts['added']} added)" + (f", unrecorded {-growth:+,}" if growth else "") +
               f"; prefix {prefix:,} unchanged")  # last: the after line shows it too, where room is short
        return out  # the plan's note repeats the request's size, which the prompt panel shows
    return f"{out}  ·  {plan.note}" if plan.note else out


def _rows(plan: Plan, before: Figures, after: Figures) -> Sequence[Row]:
    """The plan's rows as the diff view reads them, built when drawn; a summary's with the bars' figures."""
    if plan.micro is not None:
        return MicroRows(plan)
    if plan.summary is not None and after.session is not plan.session:
        return SummaryRows(plan, before, after, plan.pending)
    return plan.rows


def after_figures(before: Figures, plan: Plan, session: Session, pending: bool = False) -> Figures:
    """The figures of `session` (`plan` applied to `before.session`), accounted from `before`: the result is an
    estimate (no request measured that state); `micro_saving` is left None (not computed: it needs a plan of its
    own). A microcompaction: the prefix, the unrecorded growth and every unchanged message keep their figures; each
    changed message counts at its new estimated size, so the total drops by what they freed, and the bar keeps the
    categories in the order and colours of the one before. A summary: see `_summary_after` (`pending`: `session`
    holds a placeholder for its text, which counts 0)."""
    from inspector.core import limits
    from inspector.core.categories import label

    if plan.summary is not None:
        return _summary_after(before, plan, session, pending)
    edit = microcompacted(plan, before.size, before.tool_names)
    estimated, measured, category = list(before.estimated), list(before.measured), list(before.category)
    for i, size in edit.sizes.items():
        estimated[i], measured[i] = size, None
    for i, key in edit.category.items():
        category[i] = key
    cumulative, run = list(before.cumulative), 0
    for j in range(min(edit.sizes, default=len(cumulative)), len(cumulative)):  # the current window: one sum
        size = edit.sizes.get(j)
        if size is not None:
            run += before.size(j) - size
        cumulative[j] -= run
    freed = {label(k): v for k, v in edit.by_category.items()}
    w = before.window
    info = limits.window_info(session, policy=before.settings.policy, window=before.settings.window)
    state = info.state(max(0, w.used - edit.freed))
    window = replace(w, used=state.used, used_measured=False, free=state.free, percent=state.percent)
    return replace(before, session=session, estimated=estimated, measured=measured, cumulative=cumulative,
                   category=category, window=window, categories_measured=False, micro_saving=None, micro_note="",
                   categories=[(name, t - freed.get(name, 0)) for name, t in before.categories])


def _summary_after(before: Figures, plan: Plan, session: Session, pending: bool) -> Figures:
    """The figures of `session` (`plan`, a summary, applied to `before.session`: the old messages stay as history,
    then [summary, acknowledgement, *kept messages]), accounted from `before` (`steps.summarized`): the prefix keeps
    its figure, the folded messages and the window's unrecorded growth go (no request has seen the new window), the
    summary and acknowledgement count at their estimated sizes and each kept message at the figure it had, still
    measured only where the cut left its growth whole. So the total is prefix + summary + kept, and the bar keeps
    the categories of the one before in their order (gone ones at 0: the colours stay), new ones in their place."""
    from inspector.core import limits
    from inspector.core.categories import COMPACTION_SUMMARY, SYSTEM_TOOLS, label

    assert plan.summary is not None
    last = next(iter(_LAST_SUMMARIZED[:1]), None)  # one read: the planning worker may replace it meanwhile
    if last is not None and last[0] is before and last[1] is plan.session and last[2].split == plan.summary.split:
        edit = resummarized(last[2], plan, session, pending)  # another text of the same summary: the kept part stays
    else:
        edit = summarized(plan, session, before.size, lambda i: before.measured[i] is not None, before.tool_names,
                          pending)
    _LAST_SUMMARIZED[:] = [(before, plan.session, edit)]
    n, split = len(plan.session.messages), edit.split
    shift = n + len(edit.added) - split  # a kept message's index in `session` minus its index before
    prefix = dict(before.categories).get(label(SYSTEM_TOOLS), 0)
    kept_range = range(split, n)
    measured = [*before.measured, *[None] * len(edit.added),
                *[before.measured[i] if real else None for i, real in zip(kept_range, edit.kept_measured)]]
    estimated = [*before.estimated, *edit.added,  # an apportioned share no longer measured: its figure, estimated
                 *[before.estimated[i] if real or before.measured[i] is None else size
                   for i, size, real in zip(kept_range, edit.kept, edit.kept_measured)]]
    category = [*before.category, *[COMPACTION_SUMMARY] * len(edit.added), *before.category[split:n]]
    cumulative, run = list(before.cumulative), prefix
    for size in (*edit.added, *edit.kept):
        run += size
        cumulative.append(run)
    call_at, result_at = dict(before.call_at), dict(before.result_at)
    for i in kept_range:  # a kept message's tool calls and results are found at its new index
        for b in plan.session.messages[i].blocks:
            if b.tool_id and b.type == "tool_use":
                call_at[b.tool_id] = i + shift
            elif b.tool_id and b.type == "tool_result":
                result_at[b.tool_id] = i + shift
    now = {label(k): v for k, v in edit.by_category.items()}
    now[label(SYSTEM_TOOLS)] = prefix
    categories = [(name, now.pop(name, 0)) for name, _ in before.categories]
    for name, t in sorted(now.items(), key=lambda item: _rank(item[0])):  # new ones: where compute() puts them
        at = next((k for k, (other, _) in enumerate(categories) if _rank(other) > _rank(name)), len(categories))
        categories.insert(at, (name, t))
    w = before.window
    info = limits.window_info(session, policy=before.settings.policy, window=before.settings.window)
    state = info.state(prefix + edit.total)
    window = replace(w, used=state.used, used_measured=False, free=state.free, percent=state.percent)
    return replace(before, session=session, estimated=estimated, measured=measured, cumulative=cumulative,
                   category=category, window=window, categories=categories, categories_measured=False,
                   call_at=call_at, result_at=result_at, micro_saving=None, micro_note="",
                   orphans=before.orphans | {i + shift for i in before.orphans if i >= split})


def _rank(name: str) -> int:
    """Where a category (its label) goes in the bar: ORDER's place of its key."""
    from inspector.app.figures import ORDER
    from inspector.core.categories import LABELS, TOOL_RESULTS

    if name.startswith("tool results: "):
        return ORDER.index(TOOL_RESULTS)
    key = next((k for k, v in LABELS.items() if v == name), None)
    return ORDER.index(key) if key in ORDER else len(ORDER)


def _free_path(path: Path) -> Path:
    """`path`, or the first `name-2.jsonl`, `name-3.jsonl`... that does not exist yet."""
    if not path.exists():
        return path
    for n in range(2, 1000):
        candidate = path.with_name(f"{path.stem}-{n}{path.suffix}")
        if not candidate.exists():
            return candidate
    return path

