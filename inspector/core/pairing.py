"""The pairing rule: every tool_use needs its tool_result after it, every tool_result a tool_use before it.

The API rejects a request that breaks it, so every compaction plan must keep it; the checker also finds orphans
that a loaded session already has (a crashed agent, a cut transcript) so the app can point at them. One checker
serves both a whole sequence (`find_orphans`, a fresh load's warnings) and a live file growing message by message
(`PairingCheck.follow`), so a followed session and a fresh load of the same file always agree.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Sequence, ValuesView
from dataclasses import dataclass
from heapq import merge
from itertools import islice
from typing import Literal

from inspector.core.model import LoadWarning, Message, Session

MAX_PAIRING_WARNINGS = 20  # orphans listed one by one; the rest are counted in one warning


@dataclass(frozen=True, slots=True)
class Orphan:
    """A tool block without its partner: `index` is the message's position in the sequence checked."""

    kind: Literal["tool_use", "tool_result"]
    index: int
    tool_id: str | None
    tool_name: str | None = None

    def describe(self) -> str:
        if self.kind == "tool_use":
            return f"message {self.index}: tool_use {self.tool_id} ({self.tool_name or '?'}) has no tool_result"
        return f"message {self.index}: tool_result {self.tool_id} answers no earlier tool_use"


_Open = tuple[int, int, str, "str | None"]  # (message index, order opened, tool id, tool name): sorts as opened
_Op = tuple[str, "_Open | None"]  # what checking a block did: ("final", None), ("open", call), ("close", call)


class PairingCheck:
    """The orphans of `messages[start:done]`, checked in order and kept current as messages are appended.

    State: the calls still unanswered (`open`, a dict in the order they were made, so closing one is O(1): one
    response of 400,000 parallel calls is checked in linear time) and the orphans that are final once seen (a
    result answering nothing, a call without an id or reusing an open one). With `undo` > 0 it logs what checking
    each of the last `undo` messages did, so a change to one of them (a response's later line adding a block) is
    undone and re-checked at a cost proportional to the messages after it, not to the context. Undoing a close
    puts the call back at the end of `open`; the order is restored by one sort, the next time it is read.
    """

    def __init__(self, start: int = 0, undo: int = 0) -> None:
        self._log: deque[list[_Op] | None] | None = deque(maxlen=undo) if undo else None
        self.steps = 0  # messages checked or undone by the last `follow` (a work counter for tests)
        self.reset(start)

    def reset(self, start: int) -> None:
        self.start = self.done = start
        self.open: dict[str, _Open] = {}  # in the order opened, unless `_unsorted`
        self._unsorted = False
        self.final: list[Orphan] = []  # by index (messages are checked in order)
        self._seq = 0
        if self._log is not None:
            self._log.clear()

    def check(self, messages: Sequence[Message]) -> None:
        """Check `messages[done:]`: the messages appended since the last check."""
        open_, final, log = self.open, self.final, self._log
        for i in range(self.done, len(messages)):
            ops: list[_Op] | None = None
            for b in messages[i].blocks:
                kind = b.type
                if kind == "tool_use":
                    tid = b.tool_id
                    if tid is None or tid in open_:
                        final.append(Orphan("tool_use", i, tid, b.tool_name))
                        op: _Op = ("final", None)
                    else:
                        self._seq += 1
                        entry = open_[tid] = (i, self._seq, tid, b.tool_name)  # opened last, so last
                        op = ("open", entry)
                elif kind == "tool_result":
                    tid = b.tool_id
                    entry = open_.pop(tid, None) if tid is not None else None
                    if entry is not None:
                        op = ("close", entry)
                    else:
                        final.append(Orphan("tool_result", i, b.tool_id))
                        op = ("final", None)
                else:
                    continue
                if log is not None:
                    if ops is None:
                        ops = []
                    ops.append(op)
            if log is not None:
                log.append(ops)
        self.steps += max(0, len(messages) - self.done)
        self.done = max(self.done, len(messages))

    def rollback(self, index: int) -> bool:
        """Undo the checks of messages from `index` on; False when they are older than the log reaches."""
        count = self.done - max(index, self.start)
        if count <= 0:
            return True
        if self._log is None or count > len(self._log):
            return False
        for _ in range(count):
            for what, entry in reversed(self._log.pop() or ()):
                if entry is None:
                    self.final.pop()
                elif what == "open":
                    del self.open[entry[2]]
                else:
                    self.open[entry[2]] = entry
                    self._unsorted = True
        self.done -= count
        self.steps += count
        return True

    def follow(self, messages: Sequence[Message], start: int, changed: int) -> None:
        """Bring the check up to `messages`, whose context begins at `start` and whose messages before `changed`
        are as last checked: re-check from `changed` (or the whole context when the start moved or the log is too
        short for it)."""
        self.steps = 0
        if start != self.start or not self.rollback(min(changed, len(messages))):
            self.reset(start)
        self.check(messages)

    def orphans(self) -> list[Orphan]:
        """Every orphan so far, in message order (at one message: the final ones, then the unanswered calls)."""
        return list(self._merged())

    def warnings(self, messages: Sequence[Message]) -> list[LoadWarning]:
        """Load warnings for the orphans of the context `messages[start:]`, but not the calls of the last message
        (its tools may still be running): at most MAX_PAIRING_WARNINGS, then one counting the rest. Costs the
        warnings it makes, not the size of the context."""
        last = len(messages) - 1
        hidden = 0  # orphan calls in the last message: at the end of both lists
        for entry in reversed(self._ordered()):
            if entry[0] != last:
                break
            hidden += 1
        for o in reversed(self.final):
            if o.index != last:
                break
            hidden += o.kind == "tool_use"
        total = len(self.final) + len(self.open) - hidden
        shown = (o for o in self._merged() if o.kind == "tool_result" or o.index != last)
        out = []
        for o in islice(shown, MAX_PAIRING_WARNINGS):
            lines = messages[o.index].lines
            what = (f"tool_result {o.tool_id} answers no tool_use" if o.kind == "tool_result"
                    else f"tool_use {o.tool_id} ({o.tool_name or '?'}) has no tool_result")
            out.append(LoadWarning(lines[0] if lines else None,
                                   f"message {o.index}: {what} (the API would refuse this context)"))
        if total > MAX_PAIRING_WARNINGS:
            out.append(LoadWarning(None, f"{total - MAX_PAIRING_WARNINGS} more unpaired tool calls or results"))
        return out

    def _ordered(self) -> ValuesView[_Open]:
        """The open calls by where they were made (one sort after an undo put some back out of order)."""
        if self._unsorted:
            self.open = {entry[2]: entry for entry in sorted(self.open.values())}
            self._unsorted = False
        return self.open.values()

    def _merged(self) -> Iterator[Orphan]:
        opened = (Orphan("tool_use", i, tid, name) for i, _, tid, name in self._ordered())
        return merge(self.final, opened, key=_index)  # on a tie the final orphans come first, as they were found


def _index(o: Orphan) -> int:
    return o.index


def find_orphans(messages: Sequence[Message]) -> list[Orphan]:
    """Orphan tool_uses and tool_results in `messages` (a session's `context`, or any slice), in message order."""
    check = PairingCheck()
    check.check(messages)
    return check.orphans()


def pairing_warnings(session: Session) -> list[LoadWarning]:
    """Tool calls and results in the current context that the API would refuse: a result answering no call, a
    call never answered (except in the last message, whose tools may still be running)."""
    check = PairingCheck(session.context_start)
    check.check(session.messages)
    return check.warnings(session.messages)


def pairs_intact(messages: Sequence[Message]) -> bool:
    return not find_orphans(messages)
