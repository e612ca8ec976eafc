"""Compaction plans: what a strategy would do to a session, row by row, before anything changes.

Every strategy returns a `Plan` instead of editing the session. A plan lists one `Row` per message of the new
context (plus rows for messages folded into a summary), each with its fate and its tokens before and after, so the
app's diff preview, its step-through, the CLI's `--dry-run` and the agent loop all read the same object. `apply`
turns a plan into a new Session and never touches the old one.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from inspector.core.estimators import Estimator, get_estimator
from inspector.core.model import Block, Compaction, Message, Session

if TYPE_CHECKING:
    from inspector.core.compaction.summary import SummaryState

# Plan fates (kept/snipped/cleared/summarized/added) and diff statuses (kept/changed/removed/added) share one row type.
Fate = Literal["kept", "snipped", "cleared", "summarized", "added", "changed", "removed"]


class Estimates:
    """Per-message token estimates, computed once per Message object and reused by every plan and diff.

    Messages are never mutated (plans copy what they change), so a message's estimate never goes stale; the cache
    holds a reference to each message so its id() cannot be reused while the entry lives. The app and the agent loop
    keep one per session, so re-planning only estimates what a plan would create.
    """

    def __init__(self, estimator: Estimator | str = "chars35") -> None:
        self.estimator = get_estimator(estimator) if isinstance(estimator, str) else estimator
        self._cache: dict[int, tuple[Message, int]] = {}

    @property
    def name(self) -> str:
        return self.estimator.name

    def message(self, message: Message, remember: bool = True) -> int:
        """The message's estimate. Plans estimate the messages they would create with remember=False, so planning
        again and again (the app re-plans as settings change) does not keep every variant alive; `apply` then
        remembers the ones that became real."""
        hit = self._cache.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1]
        tokens = self.estimator.message(message)
        if remember:
            self._cache[id(message)] = (message, tokens)
        return tokens

    def remember(self, message: Message, tokens: int) -> None:
        self._cache[id(message)] = (message, tokens)

    def total(self, messages: list[Message]) -> int:
        return sum(self.message(m) for m in messages)

    def text(self, text: str) -> int:
        return self.estimator.text(text)


def estimates_for(estimates: Estimates | Estimator | str | None) -> Estimates:
    """Accept an Estimates cache, an estimator or an estimator name (None: chars35) wherever a strategy is called."""
    if isinstance(estimates, Estimates):
        return estimates
    return Estimates(estimates or "chars35")


@dataclass(slots=True)
class Row:
    """One message's fate. `old`/`new` are indices into the old and new session's `messages` (None where the message
    does not exist on that side); `after` is None while a summary is still pending."""

    fate: Fate
    old: int | None
    new: int | None
    role: str
    kind: str
    before: int
    after: int | None
    message: Message | None
    note: str = ""

    @property
    def delta(self) -> int:
        return (self.after or 0) - self.before


@dataclass(slots=True, eq=False)
class Plan:
    """What one strategy would do to `session`'s current context.

    Stored compactly (a plan over 100k messages must be quick to make): `tokens` holds the estimate of every context
    message, `edits` the changed rows of a microcompaction by session index, `added` the summary and acknowledgement
    rows of a summary plan (whose cut is `summary.split`). `rows` lists every row in the order of the new context,
    summarized rows first, built on first use. Messages before `session.context_start` are history and appear in no
    row. `protected_from` is the session index from which the strategy promises to leave messages byte-identical.
    """

    strategy: str
    session: Session
    settings: object
    estimates: Estimates
    tokens: list[int]
    protected_from: int
    edits: dict[int, Row] = field(default_factory=dict)
    cleared_tool_ids: tuple[str, ...] = ()
    summary: SummaryState | None = None
    added: list[Row] = field(default_factory=list)
    note: str = ""
    _rows: list[Row] | None = field(default=None, init=False, repr=False)

    @property
    def estimator(self) -> str:
        return self.estimates.name

    @property
    def start(self) -> int:
        return self.session.context_start

    @property
    def before(self) -> int:
        """Estimated tokens of the current context before the plan (history excluded)."""
        return sum(self.tokens)

    @property
    def after(self) -> int:
        """Estimated tokens after the plan; a pending summary counts as 0 until it is written (see `pending`)."""
        if self.summary is not None:
            return sum(self.tokens[self.summary.split - self.start:]) + sum(r.after or 0 for r in self.added)
        return self.before - sum(r.before - (r.after or 0) for r in self.edits.values())

    @property
    def saved(self) -> int:
        return self.before - self.after

    @property
    def pending(self) -> bool:
        """True while the summary text is missing: `apply` then needs one supplied by hand."""
        return self.summary is not None and self.summary.text is None

    @property
    def changed(self) -> bool:
        return bool(self.edits) or self.summary is not None

    @property
    def counts(self) -> dict[str, int]:
        """Number of rows per fate."""
        n = len(self.tokens)
        if self.summary is not None:
            folded = self.summary.split - self.start
            return {"summarized": folded, "added": len(self.added), "kept": n - folded}
        out: dict[str, int] = {"kept": n - len(self.edits)}
        for row in self.edits.values():
            out[row.fate] = out.get(row.fate, 0) + 1
        return out

    def changed_rows(self) -> list[Row]:
        if self.summary is not None:
            return [r for r in self.rows if r.fate != "kept"]
        return list(self.edits.values())

    @property
    def rows(self) -> list[Row]:
        if self._rows is None:
            self._rows = self._build_rows()
        return self._rows

    def _build_rows(self) -> list[Row]:
        messages, start, tokens = self.session.messages, self.start, self.tokens
        if self.summary is None:
            return [self.edits.get(i) or Row("kept", i, i, m.role, m.kind, t, t, m)
                    for i, m, t in zip(range(start, len(messages)), messages[start:], tokens)]
        split, shift = self.summary.split, len(messages) + len(self.added)
        rows = [Row("summarized", i, None, messages[i].role, messages[i].kind, tokens[i - start], 0, messages[i])
                for i in range(start, split)]
        rows += self.added
        rows += [Row("kept", i, i - split + shift, messages[i].role, messages[i].kind, tokens[i - start],
                     tokens[i - start], messages[i]) for i in range(split, len(messages))]
        return rows


def estimate_context(session: Session, estimates: Estimates) -> list[int]:
    message = estimates.message
    return [message(m) for m in session.messages[session.context_start:]]


Changes = dict[int, dict[int, Block]]  # session index of a message -> index of a block in it -> its new block


def microcompact_plan(strategy: str, session: Session, settings: object, estimates: Estimates, changes: Changes,
                      fate: Fate, protected_from: int, cleared: tuple[str, ...], what: str,
                      tokens: list[int] | None = None, note: str = "") -> Plan:
    """A plan that edits blocks of some context messages in place (snip, clear, clear_tool_uses).

    `changes` gives the new blocks per message; each row's note counts them (`what` names them). An edit that would
    not save tokens is dropped, so a microcompaction plan never adds tokens whatever the estimator.
    """
    tokens = estimate_context(session, estimates) if tokens is None else tokens
    start, messages, estimate = session.context_start, session.messages, estimates.estimator.message
    edits: dict[int, Row] = {}
    dropped: set[str | None] = set()
    for i, blocks in changes.items():
        m = messages[i]
        new_blocks = [blocks.get(j, b) for j, b in enumerate(m.blocks)] if len(m.blocks) > 1 else [blocks[0]]
        new = Message(m.role, m.kind, new_blocks, m.uuid, m.parent_uuid, m.lines, m.offset, m.timestamp, m.model,
                      m.response_id)  # field by field: dataclasses.replace costs several times more
        before = tokens[i - start]
        after = estimate(new)  # not cached: a plan's new messages only enter the cache when applied
        if after < before or (after == before and _shorter(new, m)):
            edits[i] = Row(fate, i, i, m.role, m.kind, before, after, new, f"{len(blocks)} {what}")
        else:
            dropped.update(b.tool_id for b in blocks.values())
    if dropped:
        cleared = tuple(t for t in cleared if t not in dropped)
    if any(a > b for a, b in zip(edits, list(edits)[1:])):
        edits = dict(sorted(edits.items()))
    return Plan(strategy, session, settings, estimates, tokens, protected_from, edits, cleared, note=note)


def _shorter(new: Message, old: Message) -> bool:
    return len(new.text()) < len(old.text())


@contextmanager
def paused_gc() -> Iterator[None]:
    """Hold off the cyclic garbage collector while a plan allocates tens of thousands of objects next to a large
    loaded session: each full collection would walk the whole session again (it more than doubles planning time
    at 100k messages). Nothing planned here creates reference cycles."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def apply(plan: Plan, summary: str | None = None, trigger: str = "manual") -> Session:
    """The session after the plan, as a new Session; `plan.session` is left untouched.

    Microcompaction replaces messages in place and records a microcompact Compaction. A summary plan appends the new
    context (summary, acknowledgement, recent messages) after the old messages, which stay as history, and records a
    compact Compaction at its start, as Claude Code's transcripts do. `summary` supplies (or overrides) the summary
    text, e.g. one the user typed; a pending summary plan without it raises `PendingSummary`.
    """
    session = plan.session
    if plan.summary is not None:
        from inspector.core.compaction.summary import summary_messages

        new_context = summary_messages(plan, summary)
        compaction = Compaction("compact", len(session.messages), trigger=trigger, pre_tokens=plan.before,
                                tokens_saved=plan.before - plan.estimates.total(new_context))  # remembers them
        return session.copy_with(messages=[*session.messages, *new_context],
                                 compactions=[*session.compactions, compaction])
    if not plan.changed:
        return session.copy_with(messages=list(session.messages))
    messages = list(session.messages)
    for i, row in plan.edits.items():
        messages[i] = row.message
        plan.estimates.remember(row.message, row.after)  # type: ignore[arg-type]
    compaction = Compaction("microcompact", len(messages), trigger=trigger, pre_tokens=plan.before,
                            tokens_saved=plan.saved, cleared_tool_ids=plan.cleared_tool_ids)
    return session.copy_with(messages=messages, compactions=[*session.compactions, compaction])
