"""The versions of messages a microcompaction edited: what each request saw, what the context holds now.

A session holds every message as it is now; each microcompaction record keeps the messages it edited as they were
just before it (`Compaction.replaced`). Walking the records in order gives, for every edit, the message before and
after it, and the first version of each message (what the requests before any edit saw). Writers use this to
record an edit as a change of what came before (the neutral format) or what comes after (Claude Code's), and
accounting uses it to price what usage measured apart from what an edit freed since.
"""

from __future__ import annotations

from dataclasses import dataclass

from inspector.core.model import Compaction, Message, Session


@dataclass(frozen=True, slots=True)
class Edit:
    """One microcompaction's effect on one message: the message just before and just after it."""

    index: int
    before: Message
    after: Message


def edits(session: Session) -> list[list[Edit]]:
    """Per compaction of `session` (in its order; empty for full compactions), the messages it edited, by index."""
    records = session.compactions
    out: list[list[Edit]] = [[] for _ in records]
    after: dict[int, Message] = {}  # index -> the version the next edit (walking back) turned it into
    for k in range(len(records) - 1, -1, -1):
        c = records[k]
        for i, before in sorted(c.replaced.items()):
            out[k].append(Edit(i, before, after.get(i, session.messages[i] if i < len(session.messages) else before)))
            after[i] = before
    return out


def originals(session: Session) -> dict[int, Message]:
    """The first version of every message an edit changed (the others are as `session.messages` holds them)."""
    first: dict[int, Message] = {}
    for c in session.compactions:
        for i, before in c.replaced.items():
            first.setdefault(i, before)
    return first


def first_versions(session: Session) -> list[Message]:
    """`session.messages` with each edited message as it was before its first edit."""
    first = originals(session)
    if not first:
        return session.messages
    return [first.get(i, m) for i, m in enumerate(session.messages)]


def trailing(session: Session, after: int) -> list[Compaction]:
    """The compactions made after message index `after` was sent for (a request's `seen_end`): those no usage saw."""
    return [c for c in session.compactions if c.index > after]
