"""The one call compaction makes to a model: write a summary. Kept as a protocol so the engine stays free of any SDK.

The agent loop supplies an Anthropic implementation (official SDK, streaming); tests use a small in-process class.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable


class SummaryError(Exception):
    """The summary could not be obtained or used (provider failure, empty or unusable answer): one line."""


@runtime_checkable
class SummaryProvider(Protocol):
    def summarize(self, system: str, messages: list[dict], on_text: Callable[[str], None] | None = None) -> str:
        """Send `system` and Messages-API `messages` to a model and return its whole answer text, passing each
        streamed piece to `on_text` as it arrives. Raise SummaryError (or any exception) on failure."""
        ...
