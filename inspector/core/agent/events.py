"""The typed events the agent loop yields, in the order things happen.

Consumers (the headless `run` command, the session writer, the app) read one stream. Every event is a plain
dataclass that can cross threads as is. In a Textual app a thread worker iterates the loop and posts each event;
handlers on the UI thread update widgets, and cancelling is `config.cancel.cancel()` from the UI thread:

    @work(thread=True, exclusive=True, exit_on_error=False)
    def agent_turn(self, text: str) -> None:
        for event in writer.tee(run(text, state, config, system)):
            self.post_message(AgentEvent(event))
            if isinstance(event, PermissionAsked):
                event.wait_reply(config.cancel)   # the UI's prompt calls event.reply(Decision...)

`PermissionAsked` is the one event that wants an answer: the consumer replies before asking for the next event; an
unanswered question counts as a denial. `to_dict()` gives the JSON shape of `run --json`.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from inspector.core.agent.cancel import Cancel
from inspector.core.formats.blocks import micro_payload
from inspector.core.model import Compaction, Message, Request
from inspector.core.versions import Edit


class Decision(str, Enum):
    ALLOW_ONCE = "allow_once"
    ALLOW_SESSION = "allow_session"
    DENY = "deny"


@dataclass(slots=True)
class Event:
    """Base class: `kind` names the event in JSON output."""

    kind = "event"

    def to_dict(self) -> dict[str, Any]:
        return {"event": self.kind, **_plain(self)}


@dataclass(slots=True)
class Piece(Event):
    """A piece of streamed text; the subclass says whose."""

    text: str


@dataclass(slots=True)
class TextDelta(Piece):
    kind = "text"


@dataclass(slots=True)
class ThinkingDelta(Piece):
    kind = "thinking"


@dataclass(slots=True)
class ToolCall(Event):
    """The model asked for a tool; it runs (or is refused) next."""

    id: str
    name: str
    input: Any
    kind = "tool_call"


@dataclass(slots=True)
class PermissionAsked(Event):
    """A tool needs the user's consent. `scope` says what ALLOW_SESSION would cover ("write_file in /repo");
    `directory` is set when the call reaches outside the working directory: the directory a session grant covers.
    `permissions.question(asked)` is what to show of the call."""

    tool_id: str
    tool_name: str
    input: Any
    reason: str
    scope: str
    directory: str | None = None
    decision: Decision | None = None
    targets: dict[str, str] = field(default_factory=dict)  # the input's path fields, resolved
    _replied: threading.Event = field(default_factory=threading.Event, repr=False, compare=False)
    kind = "permission"

    def reply(self, decision: Decision) -> None:
        """Answer the question (from any thread)."""
        self.decision = decision
        self._replied.set()

    def wait_reply(self, cancel: Cancel | None = None, poll: float = 0.1) -> Decision | None:
        """Block until `reply` is called, or until `cancel` is set (then None: the question goes unanswered)."""
        while not self._replied.wait(poll):
            if cancel is not None and cancel.cancelled:
                return None
        return self.decision


@dataclass(slots=True)
class ToolResult(Event):
    id: str
    name: str
    content: str
    is_error: bool = False
    kind = "tool_result"


@dataclass(slots=True)
class Usage(Event):
    """Measured usage of one API response: `context` = input + cache creation + cache read."""

    request_id: str
    model: str | None
    input_tokens: int
    cache_creation: int
    cache_read: int
    output_tokens: int
    stop_reason: str | None
    kind = "usage"

    @property
    def context(self) -> int:
        return self.input_tokens + self.cache_creation + self.cache_read

    def to_dict(self) -> dict[str, Any]:
        return {**Event.to_dict(self), "context": self.context}


@dataclass(slots=True)
class MessageAdded(Event):
    """A message joined the conversation (the user prompt, an assistant response with its Request, tool results).

    Views refresh on it; the session writer appends it to the file."""

    message: Message
    request: Request | None = None
    kind = "message"

    def to_dict(self) -> dict[str, Any]:
        return {"event": self.kind, "role": self.message.role, "message_kind": self.message.kind,
                "content": self.message.to_api()["content"]}


@dataclass(slots=True)
class CompactionStarted(Event):
    tokens: int
    threshold: int
    kind = "compaction_started"


@dataclass(slots=True)
class CompactionText(Piece):
    """A piece of the summary being written."""

    kind = "compaction_text"


@dataclass(slots=True)
class CompactionFinished(Event):
    """One compaction step was applied (a compaction may take two: microcompaction, then a summary).

    `compaction` is the record added to the session; `plan` the compaction engine's plan (for diffs and undo).
    A microcompaction rewrote messages in place: `edits` are each one before and after (`replacements` maps the
    tool ids of the results it rewrote to their new content). A summary started a new context: `messages` are its
    messages (summary, acknowledgement, recent), which follow the marker in a session file."""

    strategy: str
    tokens_before: int
    tokens_after: int
    compaction: Compaction = field(repr=False)
    plan: Any = field(default=None, repr=False)
    edits: list[Edit] = field(default_factory=list, repr=False)
    messages: list[Message] = field(default_factory=list, repr=False)
    kind = "compaction_finished"

    @property
    def replacements(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for e in self.edits:
            out.update(micro_payload(e.before, e.after)[0])
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"event": self.kind, "strategy": self.strategy, "tokens_before": self.tokens_before,
                "tokens_after": self.tokens_after, "compaction": self.compaction.kind,
                "cleared_tool_ids": list(self.replacements)}


@dataclass(slots=True)
class CompactionFailed(Event):
    """A compaction attempt failed, or (once per turn) auto-compaction is off because the circuit breaker opened
    after consecutive failures: `breaker_open`."""

    error: str
    failures: int
    breaker_open: bool
    kind = "compaction_failed"


@dataclass(slots=True)
class Retrying(Event):
    """The API refused or dropped the request (`error_type`, HTTP `status` when there was one): it is sent again
    after `wait` seconds, unless the turn is cancelled first. `asked` is what the server's Retry-After asked for
    (None: it said nothing), `wait` at most the provider's cap; this is retry `attempt` of `attempts`."""

    error_type: str
    status: int | None
    wait: float
    asked: float | None
    attempt: int
    attempts: int
    kind = "retrying"

    def describe(self) -> str:
        why = f"{self.error_type} ({self.status})" if self.status else self.error_type
        asked = ""
        if self.asked is not None and self.asked > self.wait:
            asked = f"; the server asked for {self.asked:,.0f} s"
        return f"API {why}: retrying in {self.wait:.3g} s (retry {self.attempt} of {self.attempts}{asked})"


@dataclass(slots=True)
class Error(Event):
    """The turn could not continue: an API error after the SDK's retries, a dropped stream, a bad request."""

    message: str
    error_type: str
    status: int | None = None
    kind = "error"


@dataclass(slots=True)
class TurnDone(Event):
    """The last event of every run: `stop_reason` is the model's ("end_turn", "max_tokens"...), or "cancelled",
    "error" or "max_iterations"."""

    stop_reason: str
    iterations: int
    kind = "turn_done"


def _plain(event: Event) -> dict[str, Any]:
    out = {}
    for name in event.__dataclass_fields__:
        if name.startswith("_"):
            continue
        value = getattr(event, name)
        out[name] = value.value if isinstance(value, Enum) else value
    return out


__all__ = [
    "CompactionFailed", "CompactionFinished", "CompactionStarted", "CompactionText", "Decision", "Error", "Event",
    "MessageAdded", "PermissionAsked", "Piece", "Retrying", "TextDelta", "ThinkingDelta", "ToolCall", "ToolResult",
    "TurnDone", "Usage",
]
