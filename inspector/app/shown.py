"""The one owner of what a session screen shows: the session, its figures, the workbench's steps over it, and the one
scheduler of exact figures.

Everything that changes the shown session reaches it as a message to the screen (`messages.py`): the load, a live
append from follow mode, a snapshot of the agent's turn, a step of the workbench, new settings. The screen's
handler hands it here and redraws what the answer says changed; follow mode, the agent view and the workbench never
write this state and never call the screen's handlers.

Exact figures are made by one thread worker at a time, after a short quiet (a live file or an agent writing many
events costs one computation per pause, never more often than one takes): from the last exact accounting and the
changes since when it can (`tokens.account_appended`, `figures.extend`: equal to a fresh `compute`), by following
the workbench's steps from the original's figures when a step is shown (`figures.after`), else afresh. Until they
arrive, a change shows at once with provisional figures (`figures.provisional`, O(what changed)).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from textual.dom import DOMNode

from inspector.app.messages import FiguresReady, LoadFailed
from inspector.core.accounting import Accounting
from inspector.core.compaction.plan import Plan
from inspector.core.compaction.steps import StepStack
from inspector.core.figures import Figures, Links, Settings, after, compute, extend, provisional
from inspector.core.follower import Change, diff, merge
from inspector.core.gc_pause import gc_paused
from inspector.core.model import Session
from inspector.core.tokens import account_appended

EXACT_DELAY = 0.2  # seconds of quiet before exact figures are computed again


@dataclass(slots=True, repr=False)  # (a repr would print the whole session)
class Shown:
    """State of one session screen. `figures` are those on screen (exact, or `provisional` until the exact ones
    come); `steps` the workbench's step stack over the session as it was when the workbench opened (None before);
    `step_figures` the exact figures of each step for the current settings, by step index. `preview`: the end of
    a long session (`core.formats.tail`, with its links) listed while the rest is read; None once it is read."""

    host: DOMNode
    session: Session | None = None
    figures: Figures | None = None
    links: Links | None = None
    preview: Links | Figures | None = None  # (its own figures once made: `Figures` have its links too)
    steps: StepStack | None = None
    step_figures: dict[int, Figures] = field(default_factory=dict)
    _base: tuple[Accounting, Figures] | None = None  # the last exact figures made by appends, the next ones' base
    _since: Change | None = None  # changes from the base's session to `session`
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _dirty: bool = False
    _running: bool = False
    _seconds: float = 0.0
    _last_change: float = 0.0

    @property
    def settings(self) -> Settings:
        return self.host.app.settings  # type: ignore[attr-defined]

    @property
    def exact(self) -> bool:
        """The figures on screen are the exact ones of the session shown."""
        f = self.figures
        return f is not None and not f.provisional and f.session is self.session

    @property
    def settled(self) -> bool:
        """No exact figures are pending: those on screen are the exact ones of the state shown."""
        return self.exact and not self._dirty and not self._running

    @property
    def step(self) -> int:
        """The index of the step shown (0: the session itself, or no workbench yet)."""
        return self.steps.position if self.steps is not None else 0

    # -- inputs (from the screen's handlers) ---------------------------------------------------------------------

    def loaded(self, session: Session, links: Links | None) -> None:
        self.session, self.links, self.preview = session, links, None

    def accept(self, figures: Figures) -> bool:
        """Exact figures arrived: shown when they are the shown state's (else a newer state is on its way)."""
        if self.session is not None and figures.session is not self.session:
            return False
        self.figures = figures
        if self.session is None:
            self.session = figures.session
        if self.steps is not None:
            for i, s in enumerate(self.steps.steps):
                if s.session is figures.session:
                    self.step_figures[i] = figures
        return True

    def grew(self, session: Session, change: Change | None) -> tuple[Figures | None, Change]:
        """A new state of the session (follow mode's `change`, or the agent's snapshot: worked out here). The
        workbench's steps were made on the state before: they go. Returns the provisional figures to show at once
        (None while no figures exist yet) and the change."""
        old = self.session
        if change is None:
            change = diff(old, session) if old is not None else Change(session, rebuilt=True)
        self.drop_steps()
        prev = self.figures
        with self._lock:  # the scheduler takes the session and the changes since its base together
            self._since = change if self._since is None else merge(self._since, change)
            self.session = session
        self._last_change = time.monotonic()
        figures = None
        if prev is not None:
            first = 0 if change.rebuilt else change.first_new
            figures = provisional(prev, session, min(first, len(prev.estimated)), [] if change.rebuilt else
                                  change.updated)
            self.figures = figures
        self.want_exact()
        return figures, change

    def drop_steps(self) -> None:
        if self.steps is not None and len(self.steps.steps) > 1 and self.steps.current.session is self.session:
            self.host.notify("the session changed: the workbench's steps were made on the state before it, and "
                             "are gone", timeout=5)
        self.steps, self.step_figures = None, {}

    def open_steps(self) -> StepStack:
        """The workbench's stack: the one it left (steps survive closing and reopening it), else a new one."""
        assert self.session is not None and self.figures is not None
        if self.steps is None or not any(s.session is self.session for s in self.steps.steps):
            self.steps = StepStack.start(self.session, self.figures.window.used)
            self.step_figures = {0: self.figures} if self.exact else {}
        return self.steps

    def push_step(self, plan: Plan, session: Session, figures: Figures, trigger: str) -> None:
        """The workbench applied `plan` to the step shown: the new step is shown with its figures."""
        assert self.steps is not None
        step = self.steps.push(plan, figures.window.used, applied=session, trigger=trigger)
        self.step_figures = {i: f for i, f in self.step_figures.items() if i < self.steps.position}
        self.step_figures[self.steps.position] = figures
        self.session, self.figures = step.session, figures

    def go_to_step(self, index: int) -> Figures | None:
        """Show step `index`: its figures when known (else they are made by the scheduler: None)."""
        assert self.steps is not None
        step = self.steps.go(index)
        self.session = step.session
        figures = self.step_figures.get(index)
        if figures is not None and figures.settings == self.settings:
            self.figures = figures
            return figures
        self.want_exact(now=True)
        return None

    def settings_changed(self) -> None:
        self.step_figures = {}
        self.want_exact(now=True)

    # -- the scheduler ----------------------------------------------------------------------------------------------

    def want_exact(self, now: bool = False) -> None:
        """Exact figures for the newest state, after a quiet (`now`: at once, e.g. new settings)."""
        with self._lock:
            self._dirty = True
            if now:
                self._last_change = 0.0
            if self._running:
                return
            self._running = True
        self.host.run_worker(self._exact_loop, thread=True, group="exact-figures", exit_on_error=False,
                             description="exact figures")

    def _exact_loop(self) -> None:
        while True:
            wait = max(EXACT_DELAY, self._seconds) - (time.monotonic() - self._last_change)
            if wait > 0:  # quiet first; never busier than half the time
                time.sleep(wait)
                continue
            with self._lock:
                if not self._dirty or self.session is None:
                    self._running = False
                    return
                self._dirty = False
                session, since, base = self.session, self._since, self._base
                self._since = None
                steps = self.steps
            started = time.perf_counter()
            try:
                with gc_paused():  # what is built lives on: a collection would only walk it (30-100 ms at 100k)
                    figures = self._figures(session, self.settings, steps, base, since)
            except Exception as exc:  # shown as one line; the figures on screen stay
                self._base = None
                self.host.post_message(LoadFailed(f"cannot compute figures: {type(exc).__name__}: {exc}"))
                continue
            self._seconds = time.perf_counter() - started
            self.host.post_message(FiguresReady(figures))

    def _figures(self, session: Session, settings: Settings, steps: StepStack | None,
                 base: tuple[Accounting, Figures] | None, since: Change | None) -> Figures:
        """The exact figures of `session` (run in the worker)."""
        if steps is not None:
            index = next((i for i, s in enumerate(steps.steps) if s.session is session), None)
            if index:  # a workbench step: followed from the step before it
                original = base[1] if base is not None else None
                return follow_steps(steps, index, settings, dict(self.step_figures), original)
        if base is not None and since is not None and base[0].session is not session \
                and base[1].settings == settings and since.session is session:
            accounting = account_appended(base[0], session, since, settings.estimator)
            figures = extend(base[1], session, settings, accounting, since)
        else:
            known = self.links if self.links is not None and self.links.session is session else None
            figures = compute(session, settings, known)
        self._base = (figures.accounting, figures) if figures.accounting is not None else None
        return figures

    def compute_now(self, session: Session, links: Links | None) -> Figures:
        """The first exact figures of a session just loaded (called in the load worker), kept as the base the next
        appends' figures are made from."""
        figures = compute(session, self.settings, links)
        self._base = (figures.accounting, figures) if figures.accounting is not None else None
        return figures


def step_label(shown: Shown) -> str:
    """What the session screen says of a workbench step it shows: "step 1 of 2 (not saved)", else ""."""
    steps = shown.steps
    if steps is None or steps.position == 0:
        return ""
    return f"workbench step {steps.position} of {len(steps.steps) - 1}: {steps.current.label} (not saved)"


def short_step_label(shown: Shown) -> str:
    """`step_label` for a narrow title: "step 1 of 2 (not saved)"."""
    steps = shown.steps
    if steps is None or steps.position == 0:
        return ""
    return f"step {steps.position} of {len(steps.steps) - 1} (not saved)"


def follow_steps(steps: StepStack, index: int, settings: Settings, known: dict[int, Figures],
                 original: Figures | None) -> Figures:
    """The figures of step `index` under `settings`: known ones (by step index, in `known`, which gets the ones
    made here), else followed from the step before it (`figures.after`), else the original's: `original` when it
    fits, or computed."""
    step = steps.steps[index]

    def fits(f: Figures | None) -> bool:
        return f is not None and f.session is step.session and f.settings == settings and not f.provisional

    figures = known.get(index)
    if not fits(figures):
        if step.plan is None:
            figures = original if fits(original) else compute(step.session, settings)
        else:
            figures = after(follow_steps(steps, index - 1, settings, known, original), step.plan,
                            session=step.session)
        known[index] = figures
    return figures  # type: ignore[return-value]
