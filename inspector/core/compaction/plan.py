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
from itertools import islice
from operator import is_, itemgetter
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
    keep one per session, so re-planning only estimates what a plan would create. What plans read about the current
    context whatever their settings (`Context`) is kept for the last context asked about, as the app re-plans it on
    every change of settings.
    """

    def __init__(self, estimator: Estimator | str = "chars35") -> None:
        self.estimator = get_estimator(estimator) if isinstance(estimator, str) else estimator
        self._cache: dict[int, tuple[Message, int]] = {}
        self._context: Context | None = None

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

    def context(self, session: Session) -> Context:
        """The session's current context as plans read it; the last one is reused when it holds the very same
        message objects (checked one by one, in a C loop)."""
        start, messages = session.context_start, session.messages
        last = self._context
        if (last is not None and last.start == start and len(last.messages) == len(messages) - start
                and all(map(is_, last.messages, islice(messages, start, None)))):
            return last
        context = messages[start:]
        hits = list(map(self._cache.get, map(id, context)))  # all cached (re-planning after apply): C loops only
        if None not in hits and all(map(is_, map(itemgetter(0), hits), context)):
            tokens = list(map(itemgetter(1), hits))
        else:
            tokens = [self.message(m) for m in context]
        self._context = Context(tuple(context), start, tokens)
        return self._context

    def text(self, text: str) -> int:
        return self.estimator.text(text)


@dataclass(slots=True, eq=False)
class Context:
    """What every plan of one current context reads, whatever its settings: the messages (session indices from
    `start`), their estimates (shared by the plans made from it: read only) and, built on first use, where their
    tool blocks are."""

    messages: tuple[Message, ...]
    start: int
    tokens: list[int]
    _tools: list[tuple[int, Block]] | None = None
    _unsafe: list[bool] | None = None

    @property
    def tools(self) -> list[tuple[int, Block]]:
        """(session index of its message, block) of every tool_use and tool_result block, in order."""
        if self._tools is None:
            self._tools = [(i, b) for i, m in enumerate(self.messages, self.start) for b in m.blocks
                           if b.type == "tool_use" or b.type == "tool_result"]
        return self._tools

    def unsafe_cuts(self) -> list[bool]:
        """`split.unsafe_cuts` of the messages (indices from `start`)."""
        if self._unsafe is None:
            from inspector.core.compaction.split import unsafe_cuts  # split.py imports this module

            self._unsafe = unsafe_cuts(self.messages)
        return self._unsafe


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


def edited_block(block: Block, text: str | None, keep_media: bool) -> Block:
    """The block after an edit: a tool_use without input, or a tool_result holding `text` instead of its text (its
    images/documents kept when `keep_media`). Built field by field: dataclasses.replace costs several times more."""
    if text is None:
        return Block("tool_use", block.text, block.tool_id, block.tool_name, {}, block.is_error, block.content,
                     block.media, block.size, block.raw)
    media = [b for b in block.content if b.type != "text"] if keep_media and block.content else None
    if media:
        return Block("tool_result", "", block.tool_id, block.tool_name, block.input, block.is_error,
                     [Block("text", text=text), *media], block.media, block.size, block.raw)
    return Block("tool_result", text, block.tool_id, block.tool_name, block.input, block.is_error, None,
                 block.media, block.size, block.raw)


def edited_message(m: Message, edits: dict[int, BlockEdit], keep_media: bool) -> Message:
    """`m` with its edits (by id() of their block) made."""
    blocks = [b if (e := edits.get(id(b))) is None else edited_block(b, e[2], keep_media) for b in m.blocks]
    return Message(m.role, m.kind, blocks, m.uuid, m.parent_uuid, m.lines, m.offset, m.timestamp, m.model,
                   m.response_id)  # field by field: dataclasses.replace costs several times more


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
                          edited_message(m, group, self.keep_media), f"{len(group)} {self.what}")
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
        edited = edited_message(m, group, keep_media)
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


def apply(plan: Plan, summary: str | None = None, trigger: str = "manual", pre_tokens: int | None = None) -> Session:
    """The session after the plan, as a new Session; `plan.session` is left untouched.

    Microcompaction replaces messages in place and records a microcompact Compaction. A summary plan appends the new
    context (summary, acknowledgement, recent messages) after the old messages, which stay as history, and records a
    compact Compaction at its start, as Claude Code's transcripts do. `summary` supplies (or overrides) the summary
    text, e.g. one the user typed; a pending summary plan without it raises `PendingSummary`. `pre_tokens` is the
    whole context before (Claude Code's preTokens: prefix included) when the caller knows it, else the plan's own
    total of the messages.
    """
    session = plan.session
    if plan.summary is not None:
        from inspector.core.compaction.summary import summary_messages

        new_context = summary_messages(plan, summary)
        compaction = Compaction("compact", len(session.messages), trigger=trigger, pre_tokens=pre_tokens or plan.before,
                                tokens_saved=plan.before - plan.estimates.total(new_context))  # remembers them
        return session.copy_with(messages=[*session.messages, *new_context],
                                 compactions=[*session.compactions, compaction])
    if not plan.changed:
        return session.copy_with(messages=list(session.messages))
    messages = list(session.messages)
    for i, row in plan.edits.items():
        messages[i] = row.message
        plan.estimates.remember(row.message, row.after)  # type: ignore[arg-type]
    compaction = Compaction("microcompact", len(messages), trigger=trigger, pre_tokens=pre_tokens or plan.before,
                            tokens_saved=plan.saved, cleared_tool_ids=plan.cleared_tool_ids)
    return session.copy_with(messages=messages, compactions=[*session.compactions, compaction])
