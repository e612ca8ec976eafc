"""Applying a compaction plan: the new Session it makes, the old one untouched.

A microcompaction replaces the messages it edits and records them, as they were, in a microcompact Compaction; a
summary appends its new context after the old messages (which stay as history) and records what it kept verbatim.
Figures then tell what the requests saw from what the context holds (`versions.py`, `compacted.py`).
"""

from __future__ import annotations

from inspector.core.compaction.plan import Plan
from inspector.core.compaction.summary import summary_messages
from inspector.core.model import Compaction, Message, Session


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
        new_context = summary_messages(plan, summary)
        n = len(session.messages)
        compaction = Compaction("compact", n, trigger=trigger, pre_tokens=pre_tokens or plan.before,
                                tokens_saved=plan.before - plan.estimates.total(new_context),  # remembers them
                                kept_from=plan.summary.split if plan.summary.split < n else None,
                                added=len(plan.added))
        return session.copy_with(messages=[*session.messages, *new_context],
                                 compactions=[*session.compactions, compaction])
    if not plan.changed:
        return session.copy_with(messages=list(session.messages))
    messages = list(session.messages)
    replaced: dict[int, Message] = {}
    for i, row in plan.edits.items():
        replaced[i] = messages[i]
        messages[i] = row.message
        plan.estimates.remember(row.message, row.after)  # type: ignore[arg-type]
    compaction = Compaction("microcompact", len(messages), trigger=trigger, pre_tokens=pre_tokens or plan.before,
                            tokens_saved=plan.saved, cleared_tool_ids=plan.cleared_tool_ids, replaced=replaced)
    return session.copy_with(messages=messages, compactions=[*session.compactions, compaction])
