"""Compaction plans: what a strategy would do to a session, row by row, before anything changes.

Every strategy returns a `Plan` instead of editing the session. A plan lists one `Row` per message of the new
context (plus rows for messages folded into a summary), each with its fate and its estimated tokens before and
after (what the strategy decided by; `inspector.core.figures` states the plan's figures), so the app's diff
preview, its step-through, the CLI's `--dry-run` and the agent loop all read the same object. `apply.apply` turns a
plan into a new Session and never touches the old one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from inspector.core.compaction.estimates import Estimates
from inspector.core.formats.blocks import edited_block, edited_message
from inspector.core.model import Block, Message, Session

# Plan fates (kept/snipped/cleared/summarized/added) and diff statuses (kept/changed/removed/added) share one row type.
Fate = Literal["kept", "snipped", "cleared", "summarized", "added", "changed", "removed"]


@dataclass(frozen=True, slots=True)
class SummaryState:
    """The summary part of a plan: the cut, the exact request (system, the `old` messages and the `prompt`: see
    `summary.request_messages`) and its estimated size, then the answer once there is one. `text` is the summary
    proper (analysis stripped); None while pending."""

    split: int
    system: str
    old: list[Message]
    prompt: str
    request_tokens: int
    style: str
    text: str | None = None
    answer: str | None = None


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
    message, `micro` the block edits of a microcompaction and the figure after each message they change, `added` the
    summary and acknowledgement rows of a summary plan (whose cut is `summary.split`). `edits` (the changed rows by
    session index, with their new messages) and `rows` (every row in the order of the new context, summarized rows
    first) are built on first use. Messages before `session.context_start` are history and appear in no row.
    `protected_from` is the session index from which the strategy promises to leave messages byte-identical.
    """

    strategy: str
    session: Session
    settings: object
    estimates: Estimates
    tokens: list[int]
    protected_from: int
    micro: MicroEdits | None = None
    cleared_tool_ids: tuple[str, ...] = ()
    summary: SummaryState | None = None
    added: list[Row] = field(default_factory=list)
    note: str = ""
    _rows: list[Row] | None = field(default=None, init=False, repr=False)
    _edits: dict[int, Row] | None = field(default=None, init=False, repr=False)

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
        return self.before - (self.micro.saved if self.micro else 0)

    @property
    def saved(self) -> int:
        return self.before - self.after

    @property
    def pending(self) -> bool:
        """True while the summary text is missing: `apply` then needs one supplied by hand."""
        return self.summary is not None and self.summary.text is None

    @property
    def changed(self) -> bool:
        return bool(self.micro and self.micro.after) or self.summary is not None

    @property
    def counts(self) -> dict[str, int]:
        """Number of rows per fate."""
        n = len(self.tokens)
        if self.summary is not None:
            folded = self.summary.split - self.start
            return {"summarized": folded, "added": len(self.added), "kept": n - folded}
        changed = len(self.micro.after) if self.micro else 0
        return {"kept": n - changed, self.micro.fate: changed} if self.micro and changed else {"kept": n}

    def changed_rows(self) -> list[Row]:
        if self.summary is not None:
            return [r for r in self.rows if r.fate != "kept"]
        return list(self.edits.values())

    @property
    def edits(self) -> dict[int, Row]:
        """The changed rows of a microcompaction by session index, in order, their new messages built now."""
        if self._edits is None:
            self._edits = self.micro.rows(self) if self.micro else {}
        return self._edits

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


# A block edit: (session index of the message, the block, the tool_result's new text; None: the tool_use loses its
# input). The block is found in its message by identity: recording block indices makes the scan a third slower.
BlockEdit = tuple[int, Block, str | None]


def with_edits(m: Message, edits: dict[int, BlockEdit], keep_media: bool) -> Message:
    """`m` with its edits (by id() of their block) made."""
    return edited_message(m, [b if (e := edits.get(id(b))) is None else edited_block(b, e[2], keep_media)
                              for b in m.blocks])


@dataclass(slots=True, eq=False)
class MicroEdits:
    """A microcompaction kept compact: the block edits it makes, the figure after each message they change and the
    tokens saved. Rows and new messages are built only when asked for (`rows`), so planning allocates next to
    nothing per edit."""

    fate: Fate
    what: str
    keep_media: bool
    edits: list[BlockEdit]
    after: dict[int, int]
    saved: int

    def rows(self, plan: Plan) -> dict[int, Row]:
        groups: dict[int, dict[int, BlockEdit]] = {}
        for e in self.edits:
            groups.setdefault(e[0], {})[id(e[1])] = e
        messages, start, tokens = plan.session.messages, plan.start, plan.tokens
        rows: dict[int, Row] = {}
        for i in sorted(self.after):
            m, group = messages[i], groups[i]
            rows[i] = Row(self.fate, i, i, m.role, m.kind, tokens[i - start], self.after[i],
                          with_edits(m, group, self.keep_media), f"{len(group)} {self.what}")
        return rows


def microcompact_plan(strategy: str, session: Session, settings: object, estimates: Estimates,
                      edits: list[BlockEdit], fate: Fate, keep_media: bool, protected_from: int,
                      cleared: list[str], what: str, tokens: list[int] | None = None, note: str = "") -> Plan:
    """A plan that edits blocks of some context messages in place (snip, clear, clear_tool_uses).

    Each changed message's figure after is what the estimator gives for the edited message; a one-block message
    whose result gets new text (every result in Claude Code sessions) is priced without building it
    (`Estimator.result`), others are built and estimated. A message whose edits would not save tokens keeps them
    all undone, so a microcompaction plan never adds tokens whatever the estimator. Each row's note counts the
    message's edits (`what` names them).
    """
    tokens = estimates.context(session).tokens if tokens is None else tokens
    start, messages, estimator = session.context_start, session.messages, estimates.estimator
    result, single = estimator.result, estimator.single
    after: dict[int, int] = {}
    others: dict[int, dict[int, BlockEdit]] = {}
    dropped: set[str | None] = set()
    saved = 0
    for e in edits:
        i, block, text = e
        m = messages[i]
        if text is None or len(m.blocks) > 1 or (keep_media and block.content):
            others.setdefault(i, {})[id(block)] = e
            continue
        new = single(result(block, text))
        before = tokens[i - start]
        if new < before or (new == before and len(text) < len(m.text())):
            if i not in after:
                saved += before - new
            after[i] = new
        else:
            dropped.add(block.tool_id)
    for i, group in others.items():
        m = messages[i]
        edited = with_edits(m, group, keep_media)
        new = estimator.message(edited)  # not cached: a plan's new messages only enter the cache when applied
        before = tokens[i - start]
        if new < before or (new == before and len(edited.text()) < len(m.text())):
            saved += before - new
            after[i] = new
        else:
            dropped.update(e[1].tool_id for e in group.values())
    if dropped:
        edits = [e for e in edits if e[0] in after]
        cleared = [t for t in cleared if t not in dropped]
    return Plan(strategy, session, settings, estimates, tokens, protected_from,
                MicroEdits(fate, what, keep_media, edits, after, saved), tuple(cleared), note=note)


