"""A compaction plan's figures: the state it makes, followed from the figures before it, and its rows.

`after` applies a plan and figures the new state from the figures before it (`compacted.after_step`: what a fresh
accounting of that state gives, without accounting the session again), so the header's "microcompact frees ~N",
`compact --dry-run`, the workbench's bars and rows, the step applied and the report of the exported file all state
the same numbers. A pending summary counts as its placeholder until it is written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from inspector.core.accounting import Accounting
from inspector.core.compaction.plan import Plan, Row
from inspector.core.compaction.diff import freed
from inspector.core.figures.compute import compute
from inspector.core.figures.model import Figures
from inspector.core.figures.preview import applied, followed
from inspector.core.model import Session


def after(before: Figures, plan: Plan, summary: str | None = None, session: Session | None = None,
          trigger: str = "manual") -> Figures:
    """The figures of the state `plan` makes from `before`'s (`session`: that state, when already applied)."""
    if plan.session is not before.session:
        raise ValueError("the plan was made for another state than these figures'")
    assert before.accounting is not None
    if session is None:
        session = applied(plan, summary, trigger, before.accounting.current_context)
    if session is before.session:
        return before
    return compute(session, before.settings, accounting=followed(before.accounting, session))


@dataclass(slots=True)
class PlanFigures:
    """A plan with the accountings of the state before it and of the state it makes, and its rows in them."""

    plan: Plan
    before: Accounting
    after: Accounting

    @property
    def saved(self) -> int:
        return self.before.current_context - self.after.current_context

    @property
    def rows(self) -> StepRows:
        return StepRows(self.plan, self.before, self.after)

    def totals(self) -> str:
        """One line: the context before and after (prefix included), what it frees, and the rows by fate."""
        plan, before, after = self.plan, self.before, self.after
        was, now = before.current_context, after.current_context
        counts = ", ".join(f"{n:,} {fate}" for fate, n in plan.counts.items() if n)
        out = f"context {was:,} -> {now:,}" + (" + the summary (pending)" if plan.pending else "") + \
            f", {freed(was - now, was)}; messages: {counts}"
        if plan.summary is not None and before.unrecorded:
            out += f"; unrecorded {-before.unrecorded:+,}"
        return out + f"; prefix {before.prefix:,} unchanged"


def plan_figures(before: Accounting, plan: Plan, summary: str | None = None, trigger: str = "manual") -> PlanFigures:
    """`plan` (made on `before.session`) with the accounting of the state it makes, followed from `before`."""
    if plan.session is not before.session:
        raise ValueError("the plan was made for another state than this accounting's")
    session = applied(plan, summary, trigger, before.current_context)
    return PlanFigures(plan, before, before if session is before.session else followed(before, session))


class StepRows(Sequence[Row]):
    """A plan's rows in the figures before and after it (`Accounting`s, or `Figures`: any with `size` per
    message), each built the first time it is read; `changes` are
    the positions of the rows that change, known without building any (the diff view folds the kept runs between
    them). Microcompaction: one row per context message. Summary: the folded messages, the added ones, the kept
    ones (`plan.rows`' order)."""

    def __init__(self, plan: Plan, before: Accounting | Figures, after: Accounting | Figures) -> None:
        self.plan, self.before, self.after = plan, before, after
        self._built: dict[int, Row] = {}
        if plan.summary is not None:
            self.folded = plan.summary.split - plan.start
            self.changes: Sequence[int] = range(self.folded + len(plan.added))
        else:
            self.folded = 0
            self.changes = [i - plan.start for i in sorted(plan.edits)] if plan.micro else []

    def __len__(self) -> int:
        return len(self.plan.tokens) + (len(self.plan.added) if self.plan.summary is not None else 0)

    def __getitem__(self, k):  # type: ignore[override]  # an int position: slices are not needed here
        row = self._built.get(k)
        if row is None:
            if not 0 <= k < len(self):
                raise IndexError(k)
            row = self._built[k] = self._row(k)
        return row

    def _row(self, k: int) -> Row:
        plan, before, after = self.plan, self.before, self.after
        start, messages = plan.start, plan.session.messages
        if plan.summary is None:
            i = start + k
            edit = plan.edits.get(i)
            if edit is None or after.session is plan.session:
                m = messages[i]
                return Row("kept", i, i, m.role, m.kind, before.size(i), after.size(i), m)
            return Row(edit.fate, i, i, edit.role, edit.kind, before.size(i), after.size(i),
                       after.session.messages[i], edit.note)
        added, n = len(plan.added), len(messages)
        if k < self.folded:
            m = messages[start + k]
            return Row("summarized", start + k, None, m.role, m.kind, before.size(start + k), 0, m)
        if k < self.folded + added:
            r = plan.added[k - self.folded]
            if r.new is None or r.new >= len(after.session.messages):
                return r
            pending = plan.pending and r.kind == "compact_summary"
            return Row("added", None, r.new, r.role, r.kind, 0, None if pending else after.size(r.new),
                       None if pending else after.session.messages[r.new], r.note)
        i = start + k - added
        j = i - plan.summary.split + n + added
        m = messages[i]
        later = after.size(j) if j < len(after.estimated) else before.size(i)
        return Row("kept", i, j, m.role, m.kind, before.size(i), later, m)

    def position(self, row: Row) -> int | None:
        """Where a row for `row`'s message is (by its old index, or its new one for an added row)."""
        plan, start = self.plan, self.plan.start
        if plan.summary is None:
            k = -1 if row.old is None else row.old - start
            return k if 0 <= k < len(self) else None
        folded, n = self.folded, len(plan.session.messages)
        if row.old is None:  # the summary or the acknowledgement: after the folded rows
            k = folded + (row.new - n) if row.new is not None else -1
            return k if folded <= k < folded + len(plan.added) else None
        k = row.old - start
        k = k if k < folded else k + len(plan.added)
        return k if 0 <= k < len(self) else None

    def tokens(self, a: int, b: int) -> int:
        """Tokens before of rows[a:b], without building them."""
        plan, start = self.plan, self.plan.start
        if plan.summary is None:
            return sum(map(self.before.size, range(start + a, start + b)))
        folded, added = self.folded, len(plan.added)
        old = [start + k if k < folded else start + k - added for k in range(a, b) if not folded <= k < folded + added]
        return sum(map(self.before.size, old))
