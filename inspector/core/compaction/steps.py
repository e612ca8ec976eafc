"""The workbench's step stack: compaction applied one layer at a time, with undo, redo and any two steps compared.

Each step holds the whole Session it produced (sessions are never mutated, and a step shares every message it did
not change with the step before, so a stack of steps costs little more than one session). `next_layer` picks the
layer `maybe_compact` would apply next: nothing within the threshold, microcompaction while it still changes
something, then a summary. The figure each step carries follows maybe_compact's arithmetic: a measured figure cannot
see edits made after its request, so savings are subtracted from it.

`microcompacted` says what a microcompaction changes in the figures of the state before it, so the state after is
accounted from the one before instead of again from scratch: re-accounting the edited session against usage that
measured the unedited messages puts everything the step freed into the unrecorded prefix (and takes seconds at
100k messages).

`summarized` does the same for a summary: the prefix stays, the folded messages go, the summary and its
acknowledgement count at their estimated sizes and the kept messages at the figures they had, each still a share of
measured usage only where the cut left whole the growth it was measured from.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

from inspector.core import categories as cat
from inspector.core.compaction.diff import Diff, diff_sessions
from inspector.core.compaction.pipeline import CompactionPolicy, plan_strategy
from inspector.core.compaction.apply import apply
from inspector.core.compaction.estimates import Estimates
from inspector.core.compaction.plan import Plan
from inspector.core.compaction.summary import plan_summary
from inspector.core.model import Block, Message, Session


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


@dataclass
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

    def push(self, plan: Plan, summary: str | None = None, trigger: str = "manual",
             applied: Session | None = None, saved: int | None = None) -> Step:
        """Apply `plan` (made on the current step's session) and make the result the current step. `summary`
        supplies a summary plan's text (e.g. one edited by hand); a pending plan without it raises PendingSummary.
        `applied` is `apply(plan, summary, trigger=trigger)` when the caller already made it (a preview); `saved`
        what the step frees when the caller accounted it (the workbench's bars: the changed messages' figures before
        minus their new sizes), else the plan's estimate; the step's figure is the one before minus that."""
        if plan.session is not self.current.session:
            raise ValueError("the plan was made for another step; plan again on the current one")
        new = applied if applied is not None else apply(plan, summary, trigger=trigger)
        if saved is None:
            saved = plan.before - plan.estimates.total(new.context) if plan.summary is not None else plan.saved
        figure = max(0, self.current.figure - saved)
        step = Step(new, f"{plan.strategy} (-{saved:,})", figure, plan)
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


@dataclass(frozen=True, slots=True)
class Microcompacted:
    """The figures a microcompaction changes. Only its changed messages move: each now counts at its new estimated
    size; what it counted for before (its measured share of usage, or its estimate) minus that size is freed from
    the categories of its edited blocks. The prefix, the unrecorded growth and every other message keep their
    figures."""

    sizes: dict[int, int]  # session index of a changed message -> its estimated size after the step
    freed: int  # sum over the changed messages of (figure before - size after)
    by_category: dict[str, int]  # category key -> tokens freed in it
    category: dict[int, str]  # changed messages whose main category the edit changed -> the new one


def microcompacted(plan: Plan, figure: Callable[[int], int], names: Mapping[str, str] | None = None) -> Microcompacted:
    """What `plan` (a microcompaction) changes in the figures of `plan.session`, whose message i counts `figure(i)`
    tokens now. `names`: tool_use id -> tool name (found in the session when not given). A message whose edits touch
    several categories (results of different tools in one message) frees from each in proportion to what the
    estimator says its blocks of that category lost."""
    if plan.micro is None:
        raise ValueError(f"{plan.strategy} is not a microcompaction: account the state after it from scratch")
    messages = plan.session.messages
    if names is None:
        names = cat.tool_names(messages)
    touched: dict[int, set[int]] = {}  # message of several blocks -> id() of its edited blocks
    for i, block, _ in plan.micro.edits:
        if len(messages[i].blocks) > 1:
            touched.setdefault(i, set()).add(id(block))
    est = plan.estimates.estimator
    freed_in: dict[str, int] = {}
    category: dict[int, str] = {}
    freed = 0
    for i, size in plan.micro.after.items():
        old = messages[i]
        gone = figure(i) - size
        freed += gone
        if len(old.blocks) == 1:  # most: a tool result alone in its message
            key = cat.block_category(old, old.blocks[0], names)
            freed_in[key] = freed_in.get(key, 0) + gone
            continue
        new = plan.edits[i].message
        assert new is not None
        edited = touched.get(i, set())
        keys = {cat.block_category(old, b, names) for b in old.blocks if id(b) in edited} or \
            {cat.block_category(old, b, names) for b in old.blocks}
        if len(keys) == 1:
            key = keys.pop()
            freed_in[key] = freed_in.get(key, 0) + gone
        else:
            lost = {k: _tokens(est, old, k, names) - _tokens(est, new, k, names) for k in sorted(keys)}
            _share(freed_in, lost, gone)
        was = {k: _tokens(est, old, k, names) for k in {cat.block_category(old, b, names) for b in old.blocks}}
        top = max(sorted(was), key=was.__getitem__)
        now = {k: _tokens(est, new, k, names) for k in {cat.block_category(new, b, names) for b in new.blocks}}
        new_top = max(sorted(now), key=lambda k: (now[k], k == top))  # a tie keeps the category it had
        if new_top != top:
            category[i] = new_top
    return Microcompacted(dict(plan.micro.after), freed, freed_in, category)


@dataclass(frozen=True, slots=True)
class Summarized:
    """The figures of the new context a summary leaves, from the figures of the state before it: the summary and
    its acknowledgement at their estimated sizes (`added`), then every kept message at the figure it had (`kept`,
    session indices from `split` on). A kept message's share of measured usage stays measured (`kept_measured`)
    only when the growth it was a share of lies wholly after the cut: a growth the cut splits was spread over
    messages on both sides in proportion to their estimates, so the kept side's part is an apportioned estimate, no
    measured figure. `by_category` holds the new context's tokens per category key. The prefix and the state's other figures are the caller's: the new context's total is
    `sum(added) + sum(kept)`."""

    split: int
    added: tuple[int, ...]
    kept: list[int]
    kept_measured: list[bool]
    by_category: dict[str, int]

    @property
    def total(self) -> int:
        return sum(self.added) + sum(self.kept)


def summarized(plan: Plan, after: Session, figure: Callable[[int], int], measured: Callable[[int], bool],
               names: Mapping[str, str] | None = None, pending: bool = False) -> Summarized:
    """What `plan` (a summary) leaves in the figures of `plan.session`, whose message i counts `figure(i)` tokens
    now (`measured(i)`: a share of measured usage). `after` is the plan applied (with the summary, or a placeholder
    while it is pending): its summary and acknowledgement are priced by the plan's estimator. `names`: tool_use id
    -> tool name (found in the session when not given). A kept message of several categories (text and a tool
    call) shares its figure between them in proportion to what the estimator gives each. `pending`: the summary is
    not written yet (`after` holds a placeholder), so it counts 0 until it is."""
    state = plan.summary
    if state is None:
        raise ValueError(f"{plan.strategy} is not a summary: use microcompacted for it")
    session, split = plan.session, state.split
    messages, n = session.messages, len(session.messages)
    est = plan.estimates
    added = _added(plan, after, pending)
    if names is None:
        names = cat.tool_names(messages)
    by_category: dict[str, int] = {cat.COMPACTION_SUMMARY: sum(added)} if added else {}
    whole_from = _whole_growths_from(session, split)
    kept: list[int] = []
    kept_measured: list[bool] = []
    for i in range(split, n):
        m, size, real = messages[i], figure(i), measured(i)
        kept.append(size)
        kept_measured.append(real and i >= whole_from)
        blocks = m.blocks
        if len(blocks) <= 1:
            key = cat.block_category(m, blocks[0], names) if blocks else \
                (cat.USER_PROMPTS if m.role == "user" else cat.ASSISTANT_TEXT)
            by_category[key] = by_category.get(key, 0) + size
            continue
        keys = {cat.block_category(m, b, names) for b in blocks}
        if len(keys) == 1:
            key = keys.pop()
            by_category[key] = by_category.get(key, 0) + size
        else:
            _share(by_category, {k: _tokens(est.estimator, m, k, names) for k in sorted(keys)}, size)
    return Summarized(split, added, kept, kept_measured, by_category)


def resummarized(edit: Summarized, plan: Plan, after: Session, pending: bool = False) -> Summarized:
    """`edit` (`summarized` for a plan on the same session with the same cut) for `plan`, another text of that
    summary, applied as `after`: only the summary's and the acknowledgement's sizes move (the kept messages' shares
    between categories, the costly part, stay)."""
    if plan.summary is None or plan.summary.split != edit.split:
        raise ValueError("not a summary with the same cut: use summarized")
    added = _added(plan, after, pending)
    by_category = dict(edit.by_category)
    by_category[cat.COMPACTION_SUMMARY] = by_category.get(cat.COMPACTION_SUMMARY, 0) + sum(added) - sum(edit.added)
    return replace(edit, added=added, by_category=by_category)


def _added(plan: Plan, after: Session, pending: bool) -> tuple[int, ...]:
    """The estimated sizes of the messages `plan` (a summary) adds, as applied in `after` (a pending summary: 0)."""
    n, split = len(plan.session.messages), plan.summary.split  # type: ignore[union-attr]
    if len(after.messages) != n + len(plan.added) + n - split or after.context_start != n:
        raise ValueError("`after` is not this plan applied")
    return tuple(0 if pending and m.kind == "compact_summary" else plan.estimates.message(m, remember=False)
                 for m in after.messages[n:n + len(plan.added)])


def _whole_growths_from(session: Session, split: int) -> int:
    """The first session index from which every measured growth of the current window lies wholly at or after
    `split`: `split` itself when a request's growth ends there (or the window starts there), else the end of the
    growth the cut falls in. Accounting spreads the first request's context over what it saw, and each later
    request's growth over the messages added since the one before."""
    start = session.context_start
    ends = sorted({r.seen_end for r in session.requests if r.seen_start == start})
    if split == start or split in ends:
        return split
    return next((e for e in ends if e > split), split)


def _tokens(est, message: Message, key: str, names: Mapping[str, str]) -> int:
    blocks: list[Block] = [b for b in message.blocks if cat.block_category(message, b, names) == key]
    return est.blocks(blocks) if blocks else 0


def _share(out: dict[str, int], weights: dict[str, int], total: int) -> None:
    """Add integer shares of `total` to `out` in proportion to `weights` (equal shares when none is positive); the
    shares sum to `total` exactly."""
    w = {k: max(0, v) for k, v in weights.items()}
    s = sum(w.values())
    if s <= 0:
        w, s = dict.fromkeys(weights, 1), len(weights)
    given, run = 0, 0
    for k, x in w.items():
        run += x
        upto = round(total * run / s)
        out[k] = out.get(k, 0) + upto - given
        given = upto
