"""The one typed model every session format loads into.

Loaders build these objects; token accounting, compaction plans and the views only read them. Messages are kept in
Anthropic Messages-API shape (role user/assistant, a list of blocks) whatever the source format, so the rest of the
code handles one shape. Bulky bookkeeping from the source file (progress lines, `toolUseResult` copies, snapshots) is
never kept: a message records where it came from (line numbers and byte offset) so its raw lines can be re-read on
demand instead.

Blocks, messages and requests, a session's bulk (hundreds of thousands of each), are msgspec structs rather than
dataclasses: made in C (a third of a dataclass's time) and without the garbage collector's header or its walks (they
hold no cycles). They copy with `msgspec.structs.replace`, as dataclasses do with `dataclasses.replace`.
"""

from __future__ import annotations

import bisect
import json
from dataclasses import dataclass, field, replace
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Iterator, Literal

from msgspec import Struct, structs

if TYPE_CHECKING:
    from inspector.core.sent_requests import SentLog

# json.dumps(..., ensure_ascii=False, default=str) without building an encoder per call (accounting calls it for
# every tool call of a session): the standard library's C encoder made once, as JSONEncoder.encode makes it on
# every call (without its check for circular structures, which JSON from a file cannot hold: one would end in
# RecursionError, which every caller of `all_text` on untrusted blocks catches).
try:
    from json.encoder import c_make_encoder, encode_basestring

    _encode = c_make_encoder(None, str, encode_basestring, None, ": ", ", ", False, False, True)

    def input_json(value: Any) -> str:
        return "".join(_encode(value, 0))
except (ImportError, TypeError):  # no C accelerator (another Python implementation)
    input_json = json.JSONEncoder(ensure_ascii=False, default=str).encode

EMPTY_INPUT = input_json({})  # the `input_text` of a call without input


def text_of_input(value: Any) -> str | None:
    """What `Block.input_text` keeps of a tool call's input: its JSON (`input_json`, what accounting counts), None
    for None. What JSON cannot hold is kept as JSON writes it (another object as its `str`, a number key as text);
    a key of another type raises TypeError. Inputs read from JSON come back equal."""
    return None if value is None else input_json(value)


Format = Literal["claude-code", "codex", "anthropic-request", "openai-chat", "openai-responses", "neutral",
                 "copilot", "cline", "roo-code", "cline-sdk", "kimi", "kimi-code", "gemini-cli", "qwen-code",
                 "opencode"]
FORMATS: tuple[str, ...] = ("claude-code", "codex", "anthropic-request", "openai-chat", "openai-responses", "neutral",
                            "copilot", "cline", "roo-code", "cline-sdk", "kimi", "kimi-code", "gemini-cli", "qwen-code",
                            "opencode")

# Block types of the Messages API, plus "unknown" for anything a future format version adds.
BlockType = Literal[
    "text", "thinking", "redacted_thinking", "tool_use", "tool_result", "image", "document", "unknown"
]

# What a message is, beyond its role.
#   prompt: something the user typed;  assistant: model output;  tool_result: a user message carrying results;
#   meta: injected by the harness (caveats, command output, reminders, attachments);
#   compact_summary: the summary that replaces history after a compaction;  summary_ack: the assistant's
#   acknowledgement that follows it in the reference design;  system: a system message (OpenAI/neutral formats).
MessageKind = Literal["prompt", "assistant", "tool_result", "meta", "compact_summary", "summary_ack", "system"]


class BlockExtras(Struct, frozen=True, gc=False):
    """What few blocks state beyond the common fields (`Block.extras`; read as `Block.media` and so on). Frozen, so
    that one `NO_EXTRAS` serves every block without any: five fields fewer in each block (40 bytes)."""

    media: str | None = None
    size: int = 0
    raw: dict | None = None
    signature: str | None = None
    tokens: int | None = None


NO_EXTRAS = BlockExtras()


def _shared(extras: Any, none: Any) -> Any:
    """`extras`, or the shared `none` when they hold as little."""
    return none if extras == none else extras


def _extra(name: str, none: Any) -> Any:
    """A rare field (`Block.media`, `Message.attachment`...): read from the object's extras (a getter in C), set by
    replacing them (`none`: the extras shared by every object without any)."""
    def put(owner: Any, value: Any) -> None:
        owner.extras = _shared(structs.replace(owner.extras, **{name: value}), none)
    return property(attrgetter(f"extras.{name}"), put)


class Block(Struct, gc=False):
    """One content block. `text` holds text/thinking text, a tool_result's string content, or a redacted blob.

    `Block.of` makes any block from its fields as values; the constructor takes them as the block keeps them (the
    input as text, the rarely set fields in `extras`), as the loaders make the common blocks.
    tool_use: `tool_id`, `tool_name`, `input` (kept as its JSON text, `input_text`).
    tool_result: `tool_id` (the tool_use it answers), `text` and/or `content` (nested blocks when the result was a
    list), `is_error`.  image/document: `media` (media type) and `size` (bytes of base64 data, which is not kept).
    unknown: `raw` holds the original dict.
    thinking: `signature`, the API's proof that the text is the model's own (None when the source recorded none):
    the API takes a thinking block back only with it, verbatim. redacted_thinking: `text` holds its opaque `data`.
    `tokens`: a size the source states for the block (Codex: an encrypted reasoning item, from the usage of the
    response that produced it), which estimators take instead of counting its text; None where nothing is stated.
    """

    type: BlockType
    text: str = ""
    tool_id: str | None = None
    tool_name: str | None = None
    input_text: str | None = None
    is_error: bool = False
    content: list[Block] | None = None
    extras: BlockExtras = NO_EXTRAS

    media = _extra("media", NO_EXTRAS)
    size = _extra("size", NO_EXTRAS)
    raw = _extra("raw", NO_EXTRAS)
    signature = _extra("signature", NO_EXTRAS)
    tokens = _extra("tokens", NO_EXTRAS)

    @classmethod
    def of(cls, type: BlockType, text: str = "", tool_id: str | None = None, tool_name: str | None = None,
           input: Any = None, is_error: bool = False, content: list[Block] | None = None, media: str | None = None,
           size: int = 0, raw: dict | None = None, signature: str | None = None, tokens: int | None = None) -> Block:
        """A block from every field as a value: the input kept as `input_json` writes it (`text_of_input`), the
        rare fields as extras (`NO_EXTRAS` when none is set)."""
        return cls(type, text, tool_id, tool_name, text_of_input(input), is_error, content,
                   _shared(BlockExtras(media, size, raw, signature, tokens), NO_EXTRAS))

    @property
    def input(self) -> Any:
        """A tool call's input, decoded from `input_text` at each read (a new copy: change it by assigning). A
        session holds tens of thousands of calls, and a dict of even one key costs 184 bytes: the text costs a
        third of the dict and its strings, and it is what accounting counts (`all_text`)."""
        return None if self.input_text is None else json.loads(self.input_text)

    @input.setter
    def input(self, value: Any) -> None:
        self.input_text = text_of_input(value)

    def all_text(self) -> str:
        """Every piece of text the model sees in this block, nested results included (tool_use: the JSON input)."""
        if self.type == "tool_use":
            return (self.tool_name or "") + (self.input_text or "null")
        if self.content:
            return self.text + "".join(b.all_text() for b in self.content)
        return self.text

    def to_api(self) -> dict:
        """The Messages-API dict for this block (image/document data is not kept, so it is left out)."""
        if self.type in ("text",):
            return {"type": "text", "text": self.text}
        if self.type == "thinking":
            return {"type": "thinking", "thinking": self.text, "signature": self.signature or ""}
        if self.type == "redacted_thinking":
            return {"type": "redacted_thinking", "data": self.text}
        if self.type == "tool_use":
            return {"type": "tool_use", "id": self.tool_id, "name": self.tool_name, "input": self.input}
        if self.type == "tool_result":
            d: dict[str, Any] = {"type": "tool_result", "tool_use_id": self.tool_id}
            d["content"] = [b.to_api() for b in self.content] if self.content is not None else self.text
            if self.is_error:
                d["is_error"] = True
            return d
        if self.type in ("image", "document"):
            return {"type": self.type, "source": {"type": "base64", "media_type": self.media, "data": ""}}
        return dict(self.raw or {"type": "unknown"})


class MessageExtras(Struct, frozen=True, gc=False):
    """What few messages state beyond the common fields (`Message.extras`; read as `Message.attachment` and so on),
    one shared `NO_MESSAGE_EXTRAS` for every message without any, as `BlockExtras` for blocks."""

    parent_uuid: str | None = None
    attachment: str | None = None
    more_lines: tuple[int, ...] = ()


NO_MESSAGE_EXTRAS = MessageExtras()


class Message(Struct, gc=False):
    """One message of the conversation, in source order after branch resolution.

    `lines` are the 1-based source lines it was built from (several for a Claude Code response split over lines),
    kept as `line`, the first (None: none), and `more_lines`, the rest: most messages come from one line, and a tuple
    of one costs 48 bytes a message. `offset` is the byte offset of the first. `response_id` links an assistant
    message to its Request.
    `attachment`: the message is a system-reminder the harness injected, rendered from an attachment of this type
    (Claude Code 2.1.332's `attachment` entries: "environment", "date", "file", ...).
    `parent_uuid`, `attachment` and `more_lines`, which few messages have, are kept in `extras`; `Message.of` takes
    them as values.
    """

    role: Literal["user", "assistant", "system"]
    kind: MessageKind
    blocks: list[Block]
    uuid: str | None = None
    line: int | None = None
    offset: int | None = None
    timestamp: str | None = None
    model: str | None = None
    response_id: str | None = None
    extras: MessageExtras = NO_MESSAGE_EXTRAS

    parent_uuid = _extra("parent_uuid", NO_MESSAGE_EXTRAS)
    attachment = _extra("attachment", NO_MESSAGE_EXTRAS)
    more_lines = _extra("more_lines", NO_MESSAGE_EXTRAS)

    @classmethod
    def of(cls, role: Literal["user", "assistant", "system"], kind: MessageKind, blocks: list[Block],
           uuid: str | None = None, parent_uuid: str | None = None, line: int | None = None, offset: int | None = None,
           timestamp: str | None = None, model: str | None = None, response_id: str | None = None,
           attachment: str | None = None, more_lines: tuple[int, ...] = ()) -> Message:
        """A message from every field as a value (the rare ones as extras)."""
        return cls(role, kind, blocks, uuid, line, offset, timestamp, model, response_id,
                   _shared(MessageExtras(parent_uuid, attachment, more_lines), NO_MESSAGE_EXTRAS))

    @property
    def lines(self) -> tuple[int, ...]:
        return () if self.line is None else (self.line, *self.more_lines) if self.more_lines else (self.line,)

    @lines.setter
    def lines(self, lines: tuple[int, ...]) -> None:
        self.line, self.more_lines = (lines[0], tuple(lines[1:])) if lines else (None, ())

    @property
    def tool_names(self) -> list[str]:
        return [b.tool_name for b in self.blocks if b.type == "tool_use" and b.tool_name]

    def tool_uses(self) -> Iterator[Block]:
        return (b for b in self.blocks if b.type == "tool_use")

    def tool_results(self) -> Iterator[Block]:
        return (b for b in self.blocks if b.type == "tool_result")

    def text(self) -> str:
        """All text of the message, blocks joined by blank lines (for search and previews)."""
        return "\n\n".join(b.all_text() for b in self.blocks)

    def to_api(self) -> dict:
        return {"role": self.role, "content": [b.to_api() for b in self.blocks]}

    def copy_with(self, **changes: Any) -> Message:
        """A copy with `changes`, fields and the properties over them (`lines`, `attachment`...) alike."""
        fields = {k: changes.pop(k) for k in self.__struct_fields__ if k in changes}
        copy = structs.replace(self, **fields)
        for name, value in changes.items():
            setattr(copy, name, value)  # a property replaces the copy's extras, never the shared ones
        return copy


class Request(Struct, gc=False):
    """One API response with its usage, counted once however many lines the source split it over.

    The request saw `messages[seen_start:seen_end]` (half-open; the message it produced is at `seen_end`).
    `kind` is "turn" for the agent's own requests, "compaction" for the request that wrote a compaction's summary
    (Codex sends it with the history, without tools, plus a summary prompt the rollout does not record).
    `sent_id` names the request as the session recorded sending it (`Session.sent`), when it did.
    `cache_write_1h`: the part of `cache_creation` written with the one-hour TTL (Claude Code's usage says so in
    `cache_creation.ephemeral_1h_input_tokens`; 0 where the source does not split it: the 5-minute TTL).
    `thinking_tokens`: output billed beyond `output_tokens` where the source counts the model's thinking apart
    (Gemini's `thoughtsTokenCount`, never sent back); where `output_tokens` includes it (Anthropic, OpenAI), 0.
    """

    id: str
    model: str | None
    input_tokens: int
    cache_creation: int
    cache_read: int
    output_tokens: int
    message_index: int
    seen_start: int = 0
    seen_end: int = 0
    line: int | None = None
    timestamp: str | None = None
    kind: Literal["turn", "compaction"] = "turn"
    sent_id: str | None = None
    cache_write_1h: int = 0
    thinking_tokens: int = 0

    @property
    def measured_context(self) -> int:
        """What the window held for this request: input + cache creation + cache read."""
        return self.input_tokens + self.cache_creation + self.cache_read


@dataclass(slots=True)
class Compaction:
    """A compaction recorded in the session. `index` is the first message after the boundary (the summary, for a
    full compaction). `kind` is "compact" (history replaced by a summary) or "microcompact" (tool results cleared).

    What it changed, so that figures can tell what the requests before it saw from what the context holds after:
    a microcompaction's `replaced` maps each message it edited (session index) to that message as it was just
    before (`messages[i]` holds the newest version; `versions.py` walks back through them). A full compaction's
    new context is its `added` messages (the summary, and an acknowledgement where one is written) then, when
    `kept_from` is set, copies of `messages[kept_from:index]` (the recent part a summary keeps verbatim), then
    whatever came after.
    """

    kind: Literal["compact", "microcompact"]
    index: int
    trigger: str | None = None
    pre_tokens: int | None = None
    tokens_saved: int | None = None
    cleared_tool_ids: tuple[str, ...] = ()
    line: int | None = None
    timestamp: str | None = None
    replaced: dict[int, Message] = field(default_factory=dict)
    kept_from: int | None = None
    added: int = 1

    @property
    def kept(self) -> int:
        """How many messages a full compaction keeps verbatim after its `added` ones."""
        return self.index - self.kept_from if self.kept_from is not None else 0


class CompactionsByIndex:
    """A session's compactions of one kind in index order, to find those in a range of messages by bisection: a
    question asked per request, of sessions that may hold thousands of compactions."""

    __slots__ = ("indices", "items")

    def __init__(self, compactions: list[Compaction], kind: str) -> None:
        ordered = sorted((c for c in compactions if c.kind == kind), key=lambda c: c.index)
        self.indices = [c.index for c in ordered]
        self.items = ordered

    def between(self, lo: int, hi: int) -> list[Compaction]:
        """Those with lo < index <= hi."""
        return self.items[bisect.bisect_right(self.indices, lo):bisect.bisect_right(self.indices, hi)]


@dataclass(slots=True)
class Breakdown:
    """The context split into parts as the agent itself counted it at one point (GitHub Copilot CLI records system
    prompt / tool definitions / conversation tokens at each compaction and at shutdown): measured by the agent's own
    count, not the API's. `index` is how many messages the context then held (a boundary in `messages`), `parts`
    maps `SYSTEM_PROMPT` / `TOOL_DEFINITIONS` / `CONVERSATION` to tokens, `total` and `limit` are the agent's whole
    count and the window it counted against."""

    index: int
    parts: dict[str, int]
    total: int | None = None
    limit: int | None = None
    line: int | None = None
    timestamp: str | None = None


SYSTEM_PROMPT = "system_prompt"
TOOL_DEFINITIONS = "tool_definitions"
CONVERSATION = "conversation"


@dataclass(slots=True)
class AgentCost:
    """The cost the agent itself recorded for the session (Claude Code's `cost-state`, opencode's and Cline's per
    request `cost`), in USD, shown beside ours (`inspector.core.cost`): `by_model` where it splits it."""

    total_usd: float
    source: str
    by_model: dict[str, float] = field(default_factory=dict)


@dataclass(slots=True)
class LoadWarning:
    """Something the loader skipped or doubted, with the source line it concerns (None: the file as a whole)."""

    line: int | None
    message: str


@dataclass(slots=True)
class ToolSchema:
    name: str
    description: str = ""
    input_schema: dict = field(default_factory=dict)


@dataclass(slots=True, weakref_slot=True)
class Session:
    """A loaded conversation. `messages` holds the whole active branch, history before a compaction included;
    the model's current context is `messages[context_start:]` (see `context_start`).

    `system` is the recorded system prompt (Anthropic requests; Codex instructions; Copilot, Cline SDK, Kimi) or None
    where the format does not record it (Claude Code). `window` is a context window the source states itself (Codex;
    Copilot's token limit; Kimi's max context), else None. `sent` holds the requests exactly as sent where the source
    records them (Claude Code 2.1.332+), else None. `breakdowns` are the agent's own counts of the context by part,
    where it records them (Copilot). `subagents` are the files (or addresses) of the subagents' own windows;
    `spawns` links the tool calls that started subagents to them, where the format records it (Claude Code's
    `toolUseResult.agentId`): tool_use id -> agent id. `agent_cost` is the agent's own figure of what the session
    cost, where it records one. `compaction_settings` are options of its harness's own compaction rule that its
    settings files beside the session state (Kimi Code's config: `compact_pct`, `reserved`; Codex's:
    `auto_compact_limit`; Gemini CLI's and Qwen Code's settings: `compact_pct`; Claude Code's settings env
    and config: `autocompact_pct`, `autocompact_enabled`; opencode's config: `autocompact_enabled`, `reserved`): that
    policy applies them unless told otherwise, and names where each was set (the loaders give a
    `harness_config.Stated`, whose `files` say). `providers` names the provider each model was called through, where the
    source records it (opencode: model id -> provider id), and `model_limits` the limits the agent's config states
    for a model (opencode's `provider.<id>.models.<id>.limit`: context, input, output), over its catalog's.
    """

    source: str
    format: Format
    messages: list[Message] = field(default_factory=list)
    requests: list[Request] = field(default_factory=list)
    compactions: list[Compaction] = field(default_factory=list)
    warnings: list[LoadWarning] = field(default_factory=list)
    subagents: list[str] = field(default_factory=list)
    models: list[str] = field(default_factory=list)
    cwd: str | None = None
    session_id: str | None = None
    version: str | None = None
    system: str | None = None
    tools: list[ToolSchema] = field(default_factory=list)
    window: int | None = None
    sent: SentLog | None = None
    breakdowns: list[Breakdown] = field(default_factory=list)
    spawns: dict[str, str] = field(default_factory=dict)
    agent_cost: AgentCost | None = None
    compaction_settings: dict[str, float] = field(default_factory=dict)
    providers: dict[str, str] = field(default_factory=dict)
    model_limits: dict[str, dict[str, int]] = field(default_factory=dict)
    # `context_start` so far: [the compactions list it read, how many of them, the answer]
    _start: list = field(default_factory=lambda: [None, 0, 0], init=False, repr=False, compare=False)

    @property
    def context_start(self) -> int:
        """Index of the first message in the current context: just after the last full compaction, else 0.
        Loaders ask it per request while compactions are appended: only those appended since the last call are
        read (a compaction replaced in place keeps its kind and index; another list is read afresh)."""
        cs, known = self.compactions, self._start
        if known[0] is not cs or known[1] > len(cs):
            known[:] = [cs, 0, 0]
        start = known[2]
        for c in cs[known[1]:]:
            if c.kind == "compact" and c.index > start:
                start = c.index
        known[1:] = [len(cs), start]
        return start

    @property
    def context(self) -> list[Message]:
        return self.messages[self.context_start:]

    def request_for(self, message: Message) -> Request | None:
        if message.response_id is None:
            return None
        for r in self.requests:
            if r.id == message.response_id:
                return r
        return None

    def copy_with(self, **changes: Any) -> Session:
        return replace(self, **changes)


class LoadError(Exception):
    """A session that cannot be loaded at all: the message is one line naming the path and what is wrong."""
