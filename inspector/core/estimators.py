"""Token estimators, selectable by name: what every figure without measured usage relies on.

An estimator answers "how many tokens would this message (or text) take?" without the API. Token accounting
(`tokens.py`) mixes these with measured usage; compaction plans and prompt sections use them for hypothetical states.
"""

from __future__ import annotations

import json
from typing import Iterable

from inspector.core.model import Block, Message


class Estimator:
    """Base: subclasses define `text`; `message` and `blocks` follow from it unless a subclass knows better."""

    name = "base"

    def text(self, text: str) -> int:
        raise NotImplementedError

    def blocks(self, blocks: Iterable[Block]) -> int:
        return sum(self.text(b.all_text()) for b in blocks)

    def message(self, message: Message) -> int:
        return self.blocks(message.blocks)


def _strings(value: object) -> Iterable[str]:
    """Every string value inside a JSON-like value (the reference design counts these in block dicts)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


class Chars35(Estimator):
    """The reference design: total length of every string in the message's block dicts, / 3.5, truncated."""

    name = "chars35"

    def text(self, text: str) -> int:
        return int(len(text) / 3.5)

    def blocks(self, blocks: Iterable[Block]) -> int:
        return int(sum(len(s) for b in blocks for s in _strings(b.to_api())) / 3.5)


class BlockAware(Estimator):
    """Claude Code's way: text by length, tool_use as name + JSON input, images/documents a fixed 2,000, all x 4/3."""

    name = "blocks"
    FIXED_MEDIA = 2000

    def text(self, text: str) -> int:
        return int(len(text) / 4 * 4 / 3)

    def blocks(self, blocks: Iterable[Block]) -> int:
        return int(sum(self._chars_or_fixed(b) for b in blocks) * 4 / 3)

    def _chars_or_fixed(self, block: Block) -> float:
        if block.type in ("image", "document"):
            return self.FIXED_MEDIA * 3 / 4  # so the 4/3 factor leaves it at FIXED_MEDIA
        if block.type == "tool_use":
            return len((block.tool_name or "") + json.dumps(block.input, ensure_ascii=False, default=str)) / 4
        if block.content:
            return len(block.text) / 4 + sum(self._chars_or_fixed(b) for b in block.content)
        return len(block.text) / 4


ESTIMATORS: dict[str, type[Estimator]] = {"chars35": Chars35, "blocks": BlockAware}


def get_estimator(name: str = "chars35") -> Estimator:
    """An estimator by name; raises ValueError naming the choices for an unknown one."""
    try:
        return ESTIMATORS[name]()
    except KeyError:
        raise ValueError(f"unknown estimator {name!r}; choose from {', '.join(sorted(ESTIMATORS))}") from None
