"""Compaction plans: what a strategy would do to a session, row by row, before anything changes.

Every strategy returns a `Plan` instead of editing the session. A plan lists one `Row` per message of the new
context (plus rows for messages folded into a summary), each with its fate and its tokens before and after, so the
app's diff preview, its step-through, the CLI's `--dry-run` and the agent loop all read the same object. `apply`
turns a plan into a new Session and never touches the old one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from inspector.core.estimators import Estimator, get_estimator
from inspector.core.model import Compaction, Message, Session

if TYPE_CHECKING:
    from inspector.core.compaction.summary import SummaryState

# Plan fates (kept/snipped/cleared/summarized/added) and diff statuses (kept/changed/removed/added) share one row type.
Fate = Literal["kept", "snipped", "cleared", "summarized", "added", "changed", "removed"]


class Estimates:
    """Per-message token estimates, computed once per Message object and reused by every plan and diff.

    Messages are never mutated (plans copy what they change), so a message's estimate never goes stale; the cache
    holds a reference to each message so its id() cannot be reused while the entry lives.
    """

    def __init__(self, estimator: Estimator | str = "chars35") -> None:
        self.estimator = get_estimator(estimator) if isinstance(estimator, str) else estimator
        self._cache: dict[int, tuple[Message, int]] = {}

    @property
    def name(self) -> str:
        return self.estimator.name

    def message(self, message: Message) -> int:
        hit = self._cache.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1]
        tokens = self.estimator.message(message)
        self._cache[id(message)] = (message, tokens)
        return tokens

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


class RowTotals:
    """Totals over `self.rows`, shared by plans and diffs."""

    __slots__ = ()
    rows: list[Row]

    @property
    def before(self) -> int:
        """Estimated tokens of the current context before (history excluded)."""
        return sum(r.before for r in self.rows)

    @property
    def after(self) -> int:
        """Estimated tokens after; a pending summary counts as 0 until it is written."""
        return sum(r.after or 0 for r in self.rows)

    @property
    def saved(self) -> int:
        return self.before - self.after

    @property
    def counts(self) -> dict[str, int]:
        """Number of rows per fate."""
        out: dict[str, int] = {}
        for row in self.rows:
            out[row.fate] = out.get(row.fate, 0) + 1
        return out


@dataclass(slots=True)
class Plan(RowTotals):
    """What one strategy would do to `session`'s current context.

    `rows` are in the order of the new context, with summarized rows first (they become the summary). Messages before
    `session.context_start` are history and appear in no row. `protected_from` is the session index from which the
    strategy promises to leave messages byte-identical. `summary` is set for the summary strategy only.
    """

    strategy: str
    session: Session
    settings: object
    estimates: Estimates
    rows: list[Row]
    protected_from: int
    cleared_tool_ids: tuple[str, ...] = ()
    summary: SummaryState | None = None
    note: str = ""

    @property
    def estimator(self) -> str:
        return self.estimates.name

    @property
    def pending(self) -> bool:
        """True while the summary text is missing: `apply` then needs one supplied by hand."""
        return self.summary is not None and self.summary.text is None

    @property
    def changed(self) -> bool:
        return any(r.fate != "kept" for r in self.rows)

    def changed_rows(self) -> list[Row]:
        return [r for r in self.rows if r.fate != "kept"]


def microcompact_plan(strategy: str, session: Session, settings: object, estimates: Estimates,
                      replacements: dict[int, tuple[Message, str]], fate: Fate, protected_from: int,
                      cleared: tuple[str, ...], note: str = "") -> Plan:
    """A plan that replaces some context messages in place (snip, clear, clear_tool_uses).

    `replacements` maps a session index to its new message and a note for its row. A replacement that would not save
    tokens is dropped, so a microcompaction plan never adds tokens whatever the estimator.
    """
    rows: list[Row] = []
    changed_ids: set[str] = set()
    for i in range(session.context_start, len(session.messages)):
        m = session.messages[i]
        before = estimates.message(m)
        hit = replacements.get(i)
        if hit is not None:
            new, row_note = hit
            after = estimates.message(new)
            if after < before or (after == before and _shorter(new, m)):
                rows.append(Row(fate, i, i, m.role, m.kind, before, after, new, row_note))
                changed_ids.update(b.tool_id for b in new.blocks if b.tool_id)
                continue
        rows.append(Row("kept", i, i, m.role, m.kind, before, before, m))
    return Plan(strategy, session, settings, estimates, rows, protected_from,
                tuple(t for t in cleared if t in changed_ids), note=note)


def _shorter(new: Message, old: Message) -> bool:
    return len(new.text()) < len(old.text())


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
                                tokens_saved=plan.before - plan.estimates.total(new_context))
        return session.copy_with(messages=[*session.messages, *new_context],
                                 compactions=[*session.compactions, compaction])
    if not plan.changed:
        return session.copy_with(messages=list(session.messages))
    messages = list(session.messages)
    for row in plan.rows:
        if row.fate != "kept":
            messages[row.old] = row.message
    compaction = Compaction("microcompact", len(messages), trigger=trigger, pre_tokens=plan.before,
                            tokens_saved=plan.saved, cleared_tool_ids=plan.cleared_tool_ids)
    return session.copy_with(messages=messages, compactions=[*session.compactions, compaction])
