"""Per-message token estimates for compaction plans, computed once per Message object and shared by every plan.

`Estimates` caches each message's estimate (messages are never mutated: plans copy what they change) and what plans
read about the current context whatever their settings (`Context`), so re-planning as settings change only
estimates what a plan would create.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from itertools import islice
from operator import is_, itemgetter

from inspector.core.compaction.cuts import unsafe_cuts
from inspector.core.estimators import Estimator, get_estimator
from inspector.core.model import Block, Message, Session


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

    @property
    def cached(self) -> int:
        """How many messages' estimates are kept (not `__len__`: an empty one must stay truthy)."""
        return len(self._cache)

    def forget(self, messages: Iterable[Message]) -> None:
        """Estimate `messages` again when next asked (and the current context): follow mode keeps one `Estimates`
        across appends, and a loader may grow an open message in place (a Codex turn), the same object."""
        for m in messages:
            self._cache.pop(id(m), None)
        self._context = None

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
            self._unsafe = unsafe_cuts(self.messages)
        return self._unsafe


def estimates_for(estimates: Estimates | Estimator | str | None) -> Estimates:
    """Accept an Estimates cache, an estimator or an estimator name (None: chars35) wherever a strategy is called."""
    if isinstance(estimates, Estimates):
        return estimates
    return Estimates(estimates or "chars35")
