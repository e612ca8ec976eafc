"""The workbench's step stack: compaction applied one layer at a time, with undo, redo and any two steps compared.

Each step holds the whole Session it produced (sessions are never mutated, and a step shares every message it did
not change with the step before, so a stack of steps costs little more than one session) and its context figure,
which the caller gives from the figures of the state (`inspector.core.figures.after`: followed from the step before,
equal to what a fresh accounting of it says). `next_layer` picks the layer `maybe_compact` would apply next: nothing
within the threshold, microcompaction while it still changes something, then a summary.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from inspector.core.compaction.diff import Diff, diff_sessions
from inspector.core.compaction.estimates import Estimates
from inspector.core.compaction.pipeline import CompactionPolicy, plan_strategy
from inspector.core.compaction.plan import Plan
from inspector.core.compaction.summary import plan_summary
from inspector.core.model import Session


@dataclass(frozen=True, slots=True)
class Step:
    """One state of the session. `plan` is None for the original; `figure` the context figure after the step."""

    session: Session
    label: str
    figure: int
    plan: Plan | None = None

    @property
    def strategy(self) -> str | None:
        return self.plan.strategy if self.plan is not None else None


@dataclass(frozen=True, slots=True)
class NextLayer:
    """What maybe_compact would do next: `plan` (None: nothing) and why."""

    plan: Plan | None
    reason: str


@dataclass(eq=False)  # a stack is itself: compared (and hashed) by identity
class StepStack:
    """Steps from the original session; `position` is the step shown. Applying a step after an undo drops the
    steps that were ahead (as any editor's undo does)."""

    steps: list[Step] = field(default_factory=list)
    position: int = 0

    @classmethod
    def start(cls, session: Session, figure: int) -> StepStack:
        return cls([Step(session, "original", figure)])

    @property
    def current(self) -> Step:
        return self.steps[self.position]

    @property
    def original(self) -> Step:
        return self.steps[0]

    @property
    def can_undo(self) -> bool:
        return self.position > 0

    @property
    def can_redo(self) -> bool:
        return self.position < len(self.steps) - 1

    def push(self, plan: Plan, figure: int, applied: Session, trigger: str = "manual") -> Step:
        """Make `applied` (`plan`, made on the current step's session, applied) the current step, with `figure`,
        its context figure. Applying a step after an undo drops the steps that were ahead."""
        if plan.session is not self.current.session:
            raise ValueError("the plan was made for another step; plan again on the current one")
        saved = self.current.figure - figure
        step = Step(applied, f"{plan.strategy} ({-saved:+,})", figure, plan)
        del self.steps[self.position + 1:]
        self.steps.append(step)
        self.position = len(self.steps) - 1
        return step

    def undo(self) -> Step | None:
        if not self.can_undo:
            return None
        self.position -= 1
        return self.current

    def redo(self) -> Step | None:
        if not self.can_redo:
            return None
        self.position += 1
        return self.current

    def go(self, index: int) -> Step:
        """Show step `index` (undo or redo several at once); the steps ahead stay until something new is applied."""
        if not 0 <= index < len(self.steps):
            raise IndexError(f"no step {index}; there are {len(self.steps)}")
        self.position = index
        return self.current

    def compare(self, a: int, b: int, estimates: Estimates | None = None) -> Diff:
        """The structural diff from step `a`'s context to step `b`'s."""
        return diff_sessions(self.steps[a].session, self.steps[b].session, estimates)


def next_layer(step: Step, policy: CompactionPolicy, estimates: Estimates, force: bool = False) -> NextLayer:
    """The layer maybe_compact would apply to `step` next under `policy` (`force`: as if over the threshold)."""
    if step.figure <= policy.threshold and not force:
        return NextLayer(None, f"context {step.figure:,} is within the threshold {policy.threshold:,}: "
                               "maybe_compact would do nothing")
    if policy.micro is not None:
        plan = plan_strategy(policy.micro, step.session, policy.micro_settings, estimates,
                             context_tokens=step.figure)
        if plan.changed:
            return NextLayer(plan, f"{policy.micro} first: it costs no model call")
    plan = plan_summary(step.session, policy.summary, estimates)
    if plan.summary is None:
        return NextLayer(None, f"nothing left to summarize ({plan.note})")
    why = "microcompaction has nothing left to free" if policy.micro is not None else "no microcompaction layer"
    return NextLayer(plan, f"summary: {why}")
