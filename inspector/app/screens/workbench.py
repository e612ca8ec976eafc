"""The compaction workbench: what each strategy would do to the session, applied one layer at a time, with undo.

Pushed over the session screen (key c). A thread worker plans the chosen strategy on the step shown and makes its
preview (`workbench_model.Preview`: the figures before and after the plan, from the core); the handlers show the
structural diff, both context bars and, for the highlighted row, the message before and after. Steps live with the
session screen's owner of what it shows (`shown.Shown`): applying a step, undoing or redoing one is a message to
the session screen (`ApplyStep`, `GoToStep`), which shows that state in its list, bar, timeline and prompt and
answers with `StepsChanged`. A summary is planned with its exact prompt; the model writes it through the Anthropic
provider when a key is set (streamed here, Esc cancels), or the user writes it; it replaces history only once
approved. Export writes the current step to a new file, never the original.
"""

from __future__ import annotations

import os
from pathlib import Path
from weakref import WeakKeyDictionary

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message as TMessage
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Button, ContentSwitcher, Input, Label, Select, Static, TextArea
from textual.worker import get_current_worker

from inspector.app.messages import ApplyStep, FiguresReady, GoToStep, StepsChanged
from inspector.app.shown import Shown, follow_steps
from inspector.app.widgets.footer import FittedFooter
from inspector.app.sizes import NARROW, SHORT
from inspector.app.text import human, middle, plain, visible
from inspector.app.widgets.before_after import BeforeAfter
from inspector.app.widgets.context_bar import ContextBar
from inspector.app.widgets.diff_view import DiffView
from inspector.app.widgets.title import TitleBar
from inspector.app.workbench_model import Preview, after_label, make_preview
from inspector.core.compaction.diff import Diff, render_totals
from inspector.core.compaction.estimates import Estimates
from inspector.core.compaction.micro import ClearSettings, ContextEditSettings, SnipSettings, clearable_tools
from inspector.core.compaction.pipeline import STRATEGIES, CompactionPolicy, plan_strategy
from inspector.core.compaction.plan import Plan
from inspector.core.compaction.provider import SummaryError
from inspector.core.compaction.steps import StepStack, next_layer
from inspector.core.compaction.summary import PROMPT_STYLES, SummarySettings, complete_summary
from inspector.core.compaction.survival import claude_md_files
from inspector.core.figures import Figures, after, plan_estimates
from inspector.core.gc_pause import gc_paused
from inspector.core.model import Session

NO_KEY = ("No model configured: ANTHROPIC_API_KEY is not set. For the model to write it, quit, run "
          "`export ANTHROPIC_API_KEY=sk-ant-…` (and `export ANTHROPIC_BASE_URL=https://…` for another "
          "Messages-compatible endpoint) and reopen. Or write or paste a summary here (e) and approve it (ctrl+s).")
PREVIEWS_KEPT = 16
# The estimates plans read, per step stack (reopening the workbench plans warm) and estimator.
_ESTIMATES: WeakKeyDictionary[StepStack, tuple[str, Estimates]] = WeakKeyDictionary()
REFIGURE_AFTER = 0.3  # seconds without typing before the after bar counts the summary being written


def has_key() -> bool:
    return bool(os.environ.get("ANTHROPIC_API_KEY", "").strip())


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


class Written(TMessage):
    """The preview of a summary written (or typed) since it was planned."""

    def __init__(self, preview: Preview) -> None:
        super().__init__()
        self.preview = preview


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
    FOOTER_DROP = ("app.pick", "workbench.redo", "workbench.survival", "workbench.compare", "workbench.run_summary",
                   "workbench.next_strategy")  # the footer's keys left out first when it is narrow
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

    def __init__(self, shown: Shown, target: Screen) -> None:
        """`shown`: the session screen's owner of what it shows (read here, never written); `target`: the screen
        the steps are posted to."""
        super().__init__()
        assert shown.session is not None and shown.figures is not None
        self.shown, self.target = shown, target
        self.stack: StepStack = shown.open_steps()  # steps survive closing and reopening the workbench
        session = self.stack.original.session
        self.original_format = session.format
        self.estimates: Estimates | None = None
        s = shown.settings
        self.strategy = "snip" if s.micro_strategy == "snip" else "clear"
        style = "two-phase" if session.format == "claude-code" else "reference"
        self.params: dict[str, object] = {
            "snip": SnipSettings(s.preserve_last_n, s.max_chars),
            "clear": ClearSettings(clearable_tools(session.format), s.keep_recent),
            "clear_tool_uses": ContextEditSettings(),
            "summary": SummarySettings(prompt=style),  # type: ignore[arg-type]
        }
        self.preview: Preview | None = None
        self.compared: tuple[int, int, Diff] | None = None
        self._figures: dict[int, Figures] = dict(shown.step_figures)  # by step index: what this screen computed
        self._generation = 0
        self._buffer: list[str] = []
        self._provider = None
        self._claude_md: list[tuple[str, int]] | None = None
        self._asking = ""  # what the input line at the bottom asks for: compare or export
        self._run_when_planned = False
        self._summary_note = ""
        self._refigure_timer: Timer | None = None
        self._previews: dict[tuple[int, str, object], Preview] = {}  # oldest first
        self._applying = False
        self.last_export: Path | None = None
        self._diff_note = ""

    # -- layout -----------------------------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield TitleBar(id="wb-title")
        yield Static("", id="wb-steps")
        yield Label("now", classes="wb-bar-label", id="wb-now-label")
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
        yield FittedFooter()

    def _p(self, strategy: str):  # the settings object of a strategy, typed loosely for compose
        return self.params[strategy]

    def on_mount(self) -> None:
        self.query_one("#wb-ask").display = False
        self._fit(self.app.size.width, self.app.size.height)
        self._show_groups()
        self.query_one(DiffView).focus()
        self._update_header()
        self.call_after_refresh(self.replan)  # the screen drawn first, without a worker competing for the GIL

    def on_resize(self, event) -> None:
        self._fit(event.size.width, event.size.height)

    def _fit(self, width: int, height: int) -> None:
        """A short terminal keeps the rows for the diff (no "now" label, the steps line only with steps to show,
        a smaller bottom panel); a narrow one a narrower settings column."""
        self.set_class(height <= SHORT, "-short")
        self.set_class(width < NARROW, "-narrow")
        if self.is_mounted:
            self._update_header()

    # -- planning (the worker posts; handlers change widgets) --------------------------------------------------------

    @property
    def session(self) -> Session:
        return self.stack.current.session

    def policy(self) -> CompactionPolicy:
        settings = self.shown.settings
        figures = self._figures.get(0) or self.shown.figures
        threshold = figures.window.thresholds.get("autocompact") if figures else None
        micro = settings.micro_strategy if settings.micro_strategy in ("snip", "clear") else "clear"
        return CompactionPolicy(threshold if threshold is not None else 0, micro,  # type: ignore[arg-type]
                                self.params[micro], self.params["summary"])  # type: ignore[arg-type]

    def replan(self) -> None:
        """Preview the chosen strategy on the step shown: at once when planned before (undo, redo, going back to a
        setting), else in the planning worker."""
        self._generation += 1
        session, params = self.session, self.params[self.strategy]
        cached = self._previews.get((id(session), self.strategy, params))
        if cached is not None and cached.plan.session is session and cached.after.settings == self.shown.settings:
            self.preview = cached
            self._show_preview()
            return
        self.query_one("#wb-totals", Static).update(
            Text(f"planning {self.strategy} on step {self.stack.position}…", style="italic"))
        self._plan_worker(Job((self.stack.position, self.strategy, params, self._generation)))

    def _before(self, index: int) -> Figures:
        """The figures of step `index` under the current settings (in a worker): known, else followed from the
        step before it (`figures.after`), else the original's (the session screen's, or computed)."""
        return follow_steps(self.stack, index, self.shown.settings, self._figures, self.shown.figures)

    @work(thread=True, exclusive=True, exit_on_error=False, group="workbench-plan")
    def _plan_worker(self, job: Job) -> None:
        index, strategy, params, generation = job.args
        worker = get_current_worker()
        try:
            with gc_paused():  # tens of thousands of rows and messages next to a large session
                before = self._before(index)
                if worker.is_cancelled:
                    return
                est = self._estimates(before)
                plan = plan_strategy(strategy, before.session, params, est, context_tokens=before.window.used)
                if plan.summary is not None and before.session.format == "claude-code" and self._claude_md is None:
                    self._claude_md = claude_md_files(before.session, est)
                preview = None if worker.is_cancelled else make_preview(
                    before, plan, self._claude_md if plan.summary is not None else None, self.stack.original.session)
            if preview is not None:
                self.post_message(PreviewReady(preview, generation))
        except Exception as exc:  # a plan must never take the app down: say what failed
            self.post_message(PreviewFailed(f"{type(exc).__name__}: {exc}"))

    def _estimates(self, figures: Figures) -> Estimates:
        """The estimates cache plans read: kept per session screen and estimator (reopening the workbench plans
        warm), filled with the figures' own estimates of the current context where the estimator prices each
        message on its own instead of estimating 100,000 messages again."""
        name = figures.settings.estimator
        kept = _ESTIMATES.get(self.stack)
        if kept is not None and kept[0] == name:
            return kept[1]
        est = plan_estimates(figures.session, name, figures.estimated, fitted_on=self.stack.original.session)
        _ESTIMATES[self.stack] = (name, est)
        return est

    @on(PreviewReady)
    def _preview_ready(self, event: PreviewReady) -> None:
        if event.generation != self._generation:
            return
        p = event.preview
        index = next((i for i, s in enumerate(self.stack.steps) if s.session is p.before.session), None)
        if index is not None:
            self._figures[index] = p.before
            if p.before.session is self.shown.session and not self.shown.exact:
                self.target.post_message(FiguresReady(p.before))  # the session screen computed a step from scratch
        self._previews[(id(p.plan.session), p.plan.strategy, p.plan.settings)] = p
        while len(self._previews) > PREVIEWS_KEPT:
            del self._previews[next(iter(self._previews))]
        self.preview = p
        kept = _ESTIMATES.get(self.stack)
        self.estimates = kept[1] if kept else None
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
        self.query_one("#wb-bar-before", ContextBar).show(p.before)
        self.query_one("#wb-bar-after", ContextBar).show(p.after)
        self.query_one("#wb-after-label", Label).update(after_label(p))
        survives = p.survival.reinjected_messages if p.survival else set()
        self.query_one(DiffView).show(p.rows, survives)
        self.query_one("#wb-totals", Static).update(plain(p.totals))
        self._diff_header(f"{plan.strategy} on step {self.stack.position}, estimator {plan.estimator}")
        self._show_summary_panel()
        self._show_survival()
        self._update_header()

    def _diff_header(self, note: str | None = None) -> None:
        """The diff's column titles for the columns it shows, then what it shows (`note`; None: as before)."""
        if note is not None:
            self._diff_note = note
        columns = self.query_one(DiffView).columns
        self.query_one("#wb-diff-header", Static).update(plain(f"{DiffView.header(columns)}   [{self._diff_note}]"
                                                               if self._diff_note else DiffView.header(columns)))

    @on(DiffView.ColumnsChanged, "#wb-diff")
    def _diff_columns(self) -> None:
        self._diff_header()

    def _policy_name(self) -> str:
        figures = self._figures.get(0) or self.shown.figures
        return figures.window.policy if figures else str(self.shown.settings.policy or "default")

    def _update_header(self) -> None:
        stack = self.stack
        name = Path(stack.original.session.source).name
        step = stack.current
        threshold = self.policy().threshold
        self.query_one(TitleBar).show([
            ("Workbench", 0), ((visible(name), middle(visible(name), 30)), 1),
            (f"step {stack.position}/{len(stack.steps) - 1} {visible(step.label)}", 0),
            ((f"figure {step.figure:,}", f"{human(step.figure)}"), 2),  # (the bar below states both too)
            ((f"auto-compact at {threshold:,} ({self._policy_name()})", f"auto-compact at {human(threshold)}"), 3)])
        # a short terminal shows the steps line only when there is more than one step (the title names the step)
        self.query_one("#wb-steps").display = not self.has_class("-short") or len(stack.steps) > 1 or \
            self.compared is not None
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

    @on(StepsChanged)
    def _steps_changed(self) -> None:
        """The session screen took a step (or moved to one): show it and preview the strategy on it."""
        self._applying = False
        self._figures.update(self.shown.step_figures)
        self.compared = None
        self._update_header()
        self.replan()

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
        p["clear"] = ClearSettings(_names(v("clear-tools")) or clearable_tools(self.original_format),
                                   _int(v("clear-keep"), 5))
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
            after_ = new_session.messages[row.new] if row.new is not None else None
            ba.show(before, after_, (row.before if before else None, row.after if after_ else None))
            return
        after_ = row.message if row.fate not in ("summarized", "removed") else None
        p = self.preview
        tokens = (row.before if row.old is not None else None, row.after if after_ is not None else None)
        if p is None:
            ba.show(before, after_, tokens)
            return
        # how the bars' figures were made: a share of measured usage, derived from one, or estimated
        basis = (p.before.basis(row.old) if row.old is not None else "estimated",
                 p.after.basis(row.new) if row.new is not None and row.new < len(p.after.estimated) else "estimated")
        ba.show(before, after_, tokens, basis)

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
            self._write_worker(Job((p, plan)))

    @work(thread=True, exclusive=True, exit_on_error=False, group="workbench-written")
    def _write_worker(self, job: Job) -> None:
        p, plan = job.args
        self.post_message(Written(p.written(plan)))

    @on(Written)
    def _written(self, event: Written) -> None:
        p = event.preview
        if self.preview is None or self.preview.before is not p.before or p.plan.session is not self.session:
            return
        self.preview = p
        if self.compared is None:
            self._show_preview()

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
        if plan.session is not self.session or self._applying:
            return
        if not plan.changed:
            self.notify(f"{plan.strategy} changes nothing here" + (f": {plan.note}" if plan.note else ""),
                        markup=False)
            return
        if plan.summary is not None:
            text = self.query_one("#wb-summary-text", TextArea).text
            try:
                plan = complete_summary(plan, text)
            except SummaryError as exc:
                self.query_one(ContentSwitcher).current = "summary"
                self.notify(f"no summary to approve: {exc}. Run the model (r) or write one.",
                            severity="warning", markup=False)
                return
        self._applying = True
        self._summary_note = ""
        self.query_one("#wb-summary-text", TextArea).load_text("")
        self.query_one(DiffView).focus()
        if plan is p.plan:  # the preview's figures are the step's
            self.target.post_message(ApplyStep(plan, p.after.session, p.after))
        else:
            self._step_worker(Job((p.before, plan, "manual")))

    @work(thread=True, exclusive=True, exit_on_error=False, group="workbench-step")
    def _step_worker(self, job: Job) -> None:
        """The figures of a step to apply (its summary just approved, or the next layer), then the step."""
        before, plan, trigger = job.args
        try:
            figures = after(before, plan, trigger=trigger)
        except Exception as exc:
            self._applying = False
            self.post_message(PreviewFailed(f"{type(exc).__name__}: {exc}"))
            return
        self.target.post_message(ApplyStep(plan, figures.session, figures, trigger))

    def action_next_layer(self) -> None:
        p = self.preview
        if self.estimates is None or p is None or p.before.session is not self.session or self._applying:
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
        self._applying = True
        self.notify(f"next layer: {layer.plan.strategy} ({layer.reason})", markup=False, timeout=4)
        self._step_worker(Job((p.before, layer.plan, "auto")))

    def action_undo(self) -> None:
        if not self.stack.can_undo:
            self.notify("nothing to undo: this is the original session")
            return
        self.target.post_message(GoToStep(self.stack.position - 1))

    def action_redo(self) -> None:
        if not self.stack.can_redo:
            self.notify("nothing to redo")
            return
        self.target.post_message(GoToStep(self.stack.position + 1))

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
        self._summary_worker(Job((p.as_planned, self._provider)))
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
        area.load_text(visible(event.plan.summary.text or ""))  # type: ignore[union-attr]
        self._summary_status("The model wrote this summary (its analysis removed).")
        p = self.preview
        if p is not None and p.plan.session is event.plan.session:
            self._write_worker(Job((p, event.plan)))

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
        self.add_class("-asking")  # (a short terminal gives it the bottom panel's rows)
        ask.set_class(kind == "export", "exporting")
        self.query_one("#wb-export-format").display = kind == "export"
        self.query_one("#wb-ask-label", Label).update(plain(label))
        box = self.query_one("#wb-ask-input", Input)
        box.value = value
        self._asking = kind
        box.focus()

    def _hide_ask(self) -> None:
        self.query_one("#wb-ask").display = False
        self.remove_class("-asking")

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
        self._hide_ask()
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
            f"step {a} → step {b}: " + render_totals(diff.before, diff.after, diff.counts) + " (estimated)"))
        self._diff_header(f"step {a} → step {b}")
        for side, step in (("before", a), ("after", b)):
            figures = self._figures.get(step)
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
        how = ""
        if event.fmt == "claude-code":
            from inspector.core.export import claude_code_session_id

            sid = claude_code_session_id(event.path)
            how = f" (Claude Code: put it in the project's directory as {sid}.jsonl; `claude --resume {sid}`)"
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
            self._hide_ask()
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


def _free_path(path: Path) -> Path:
    """`path`, or the first `name-2.jsonl`, `name-3.jsonl`... that does not exist yet."""
    if not path.exists():
        return path
    for n in range(2, 1000):
        candidate = path.with_name(f"{path.stem}-{n}{path.suffix}")
        if not candidate.exists():
            return candidate
    return path
