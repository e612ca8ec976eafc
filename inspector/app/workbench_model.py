"""What the compaction workbench shows for one planned strategy: the plan, the figures before and after it, its
rows and the lines that explain the after bar. Pure: the screen's workers make these, its handlers draw them.

The figures after a plan are the core's (`figures.after`: followed from the figures before it, what a fresh
accounting of that state and the report of its export say), so the bars, the rows, the totals and the step the
plan becomes all state one set of numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.text import Text

from inspector.app.text import human, visible
from inspector.core import categories as cat
from inspector.core.compaction.plan import Plan
from inspector.core.compaction.survival import Survival, survival
from inspector.core.figures import Figures, PlanFigures, StepRows, after
from inspector.core.model import Session

GONE_SHOWN = 2  # categories the after line names as taken by a summary (the largest), so it fits one line


@dataclass(slots=True)
class Preview:
    """One planned strategy on one step, with what the views draw for it. `planned` is the plan as made (a summary
    pending) when `plan` has a summary written since."""

    plan: Plan
    before: Figures
    after: Figures
    survival: Survival | None = None
    planned: Plan | None = None
    _rows: StepRows | None = field(default=None, repr=False)

    @property
    def as_planned(self) -> Plan:
        return self.planned or self.plan

    @property
    def figures(self) -> PlanFigures:
        assert self.before.accounting is not None and self.after.accounting is not None
        return PlanFigures(self.plan, self.before.accounting, self.after.accounting)

    @property
    def rows(self) -> StepRows:
        if self._rows is None:
            self._rows = StepRows(self.plan, self.before, self.after)
        return self._rows

    @property
    def totals(self) -> str:
        line = self.figures.totals()
        return f"{line}  ·  {self.plan.note}" if self.plan.note and self.plan.summary is None else line

    def written(self, plan: Plan) -> Preview:
        """This preview with `plan`, the same plan with its summary written (or pending again)."""
        return Preview(plan, self.before, after(self.before, plan), self.survival, self.planned or self.plan)


def make_preview(before: Figures, plan: Plan, claude_md: list[tuple[str, int]] | None,
                 original: Session) -> Preview:
    """The preview of `plan` (made on `before.session`); what Claude Code re-injects after a summary of a Claude
    Code session (`claude_md`: its memory files found on disk)."""
    kept = survival(plan, claude_md or [], original) if plan.summary is not None and claude_md is not None else None
    return Preview(plan, before, after(before, plan), kept)


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
    out.append(", derived: changed messages at their figures scaled by their estimates", style="yellow")
    was, now = dict(p.before.categories), dict(p.after.categories)
    if now.get(cat.SYSTEM_TOOLS) == was.get(cat.SYSTEM_TOOLS):
        out.append(f" · prefix {human(was.get(cat.SYSTEM_TOOLS, 0))} unchanged", style="dim")
    moved = [f"{_short(key)} {human(was.get(key, 0))}→{human(t)}" for key, t in p.after.categories
             if t != was.get(key, 0)] + [f"{_short(key)} {human(t)}→0" for key, t in p.before.categories
                                         if key not in now]
    if moved:
        out.append(" · " + ", ".join(moved))
    return out


def _summary_label(p: Preview, out: Text) -> Text:
    plan, before, after_ = p.plan, p.before, p.after
    assert plan.summary is not None
    n, added = len(plan.session.messages), len(plan.added)
    prefix = after_.accounting.prefix if after_.accounting else 0
    new = [after_.size(n + k) for k in range(added)]
    kept = range(n + added, len(after_.measured))
    terms = [f"prefix {human(prefix)}"] + ([] if plan.pending else [f"summary {human(new[0])}"]) + \
        [f"ack {human(t)}" for t in new[1:]] + [f"{len(kept):,} kept {human(sum(map(after_.size, kept)))}"]
    out.append(" = " + " + ".join(terms), style="yellow")
    measured = sum(after_.measured[j] is not None for j in kept)
    lost = sum(before.measured[i] is not None for i in range(plan.summary.split, n)) - measured
    if measured or lost:
        out.append(f" ({measured:,} measured" + (f", {lost:,} now derived: the cut splits the growth they were "
                                                "measured from" if lost else "") + ")", style="yellow")
    now = dict(after_.categories)
    now[cat.COMPACTION_SUMMARY] = now.get(cat.COMPACTION_SUMMARY, 0) - sum(new)  # the kept messages' part
    gone = sorted(((t - now.get(key, 0), key) for key, t in before.categories if key != cat.SYSTEM_TOOLS
                   and t > now.get(key, 0)), reverse=True)
    if gone:
        earlier = {cat.COMPACTION_SUMMARY: "earlier summary"}  # a summary folded into the new one
        shown = ", ".join(f"{earlier.get(key) or _short(key)} {human(t)}" for t, key in gone[:GONE_SHOWN])
        out.append(" · gone: " + shown + (f", +{len(gone) - GONE_SHOWN} more" if len(gone) > GONE_SHOWN else ""))
    return out


def _short(key: str) -> str:
    return visible(cat.label(key).removeprefix("tool results: ").split(" (")[0])
