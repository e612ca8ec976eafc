"""The pairing rule: every tool_use needs its tool_result after it, every tool_result a tool_use before it.

The API rejects a request that breaks it, so every compaction plan must keep it; the checker also finds orphans
that a loaded session already has (a crashed agent, a cut transcript) so the app can point at them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from inspector.core.model import Message


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


def find_orphans(messages: Sequence[Message]) -> list[Orphan]:
    """Orphan tool_uses and tool_results in `messages` (a session's `context`, or any slice), in message order."""
    open_uses: dict[str, Orphan] = {}
    orphans: list[Orphan] = []
    for i, m in enumerate(messages):
        for b in m.blocks:
            if b.type == "tool_use":
                if b.tool_id is None or b.tool_id in open_uses:
                    orphans.append(Orphan("tool_use", i, b.tool_id, b.tool_name))
                else:
                    open_uses[b.tool_id] = Orphan("tool_use", i, b.tool_id, b.tool_name)
            elif b.type == "tool_result":
                if b.tool_id is not None and open_uses.pop(b.tool_id, None) is not None:
                    continue
                orphans.append(Orphan("tool_result", i, b.tool_id))
    orphans.extend(open_uses.values())
    orphans.sort(key=lambda o: o.index)
    return orphans


def pairs_intact(messages: Sequence[Message]) -> bool:
    return not find_orphans(messages)
