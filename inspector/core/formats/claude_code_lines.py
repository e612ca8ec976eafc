"""The common lines of a Claude Code transcript, decoded straight into typed structs: the fast path of
`ClaudeCodeLoader` (claude_code.py).

Only what the loader reads is declared: the rest of a line (`toolUseResult`'s copies of whole files, progress
payloads, envelope fields) is skipped by the decoder without being built, and the blocks come typed, so turning a line
into a Message takes attribute reads instead of dict lookups. The types are strict on purpose: a line they do not fit
exactly (another kind of entry, a field of another type, an unknown block, an integer orjson would read as a float,
an odd encoding) is refused by `decode` and takes the generic path (orjson, then the standard library; the loader's
dict branch), so a line reads the same whichever path takes it.
"""

from __future__ import annotations

from collections import deque
from itertools import filterfalse
from sys import intern
from typing import Annotated, Any, Callable, ClassVar, Union

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType

from inspector.core.formats.blocks import MAX_NESTING, NestedTooDeep
from inspector.core.model import EMPTY_INPUT, Block

# orjson reads integers beyond 64 bits as floats: a line holding one takes the generic path, which reads it as before
Int = Annotated[int, Meta(ge=-(2**63), le=2**63 - 1)]
# A tool's input holds no float here (one that does takes the generic path): `_input_text` writes it with msgspec,
# whose floats are not Python's (1e16, not 1e+16)
_Scalar = Union[str, Int, bool, None]
# How deep a tool's input may nest here (deeper: the generic path). msgspec builds the decoder's nodes for each
# level twice over (lists and objects): 8 levels took 6 ms of every start-up, 6 take 1 (AskUserQuestion's options,
# among Claude Code's deepest inputs, nest 5).
VALUE_DEPTH = 6
Value: Any = _Scalar
for _ in range(VALUE_DEPTH):
    Value = Union[_Scalar, list[Value], dict[str, Value]]


class _Text(Struct, tag="text", gc=False):
    text: str = ""


class _Thinking(Struct, tag="thinking", gc=False):
    thinking: str = ""
    signature: str | None = None


class _Redacted(Struct, tag="redacted_thinking", gc=False):
    data: str = ""


class _Source(Struct, gc=False):
    type: str | None = None
    media_type: str | None = None
    data: str | None = None


class _Image(Struct, tag="image", gc=False):
    source: _Source | None = None


class _Document(Struct, tag="document", gc=False):
    source: _Source | None = None


class _ToolUse(Struct, tag="tool_use", gc=False):
    id: str | None = None
    name: str | None = None
    input: Value | UnsetType = UNSET


class _ToolResult(Struct, tag="tool_result", gc=False):
    tool_use_id: str | None = None
    content: str | list[_Block] | None = None
    is_error: bool = False


_Block = Union[_Text, _ToolUse, _ToolResult, _Thinking, _Redacted, _Image, _Document]


class _Split(Struct, gc=False):
    ephemeral_1h_input_tokens: Int = 0


class Usage(Struct, gc=False):
    input_tokens: Int = 0
    cache_creation_input_tokens: Int = 0
    cache_read_input_tokens: Int = 0
    output_tokens: Int = 0
    cache_creation: _Split | None = None


class _Message(Struct, gc=False):
    content: str | list[_Block] | None = None
    id: str | None = None
    model: str | None = None
    usage: Usage | None = None
    context_management: None = None  # the API's context editing: rare, the generic path reads it


class Line(Struct, tag_field="type", gc=False):
    """What linking reads from every entry: the loader's `feed` takes these and the generic path's `Loose`."""

    kind: ClassVar[str]
    uuid: str | None = None
    parentUuid: str | None = None
    isSidechain: bool = False


class Progress(Line, tag="progress"):
    kind: ClassVar[str] = "progress"


class Entry(Line):
    version: str | None = None
    timestamp: str | None = None


class Envelope(Struct, gc=False):
    """Where an entry was written: read from a raw line (`envelope`) only until the loader finds one that says (the
    first entry that names a cwd), not decoded into every entry (two strings a line)."""

    cwd: str | None = None
    sessionId: str | None = None


class AgentResult(Struct, gc=False):
    """Of a tool's result (`toolUseResult`), what the loader reads: the subagent it names, if it ran one."""

    agentId: str | None = None


class User(Entry, tag="user"):
    kind: ClassVar[str] = "user"
    message: _Message | None = None
    isCompactSummary: bool = False
    isMeta: bool = False
    isVisibleInTranscriptOnly: bool = False
    toolUseResult: AgentResult | str | list[msgspec.Raw] | Int | float | bool | None = None


class Assistant(Entry, tag="assistant"):
    kind: ClassVar[str] = "assistant"
    message: _Message | None = None
    requestRef: str | None = None
    contextInspector: None = None  # our export's mark of a summary's acknowledgement: the generic path reads it


def _bookkeeping(kind: str) -> type[Entry]:
    return msgspec.defstruct(f"Bookkeeping_{kind}", [], bases=(Entry,), tag=kind, namespace={"kind": kind})


# Entries that only link the chain (claude_code.BOOKKEEPING less those whose content the loader reads)
BOOKKEEPING_KINDS = ("file-history-snapshot", "queue-operation", "summary", "custom-title", "agent-name", "tag",
                     "last-prompt", "pr-link", "worktree-state", "content-replacement", "marble-origami-commit",
                     "marble-origami-snapshot")
KINDS = (User, Assistant, Progress, *map(_bookkeeping, BOOKKEEPING_KINDS))
TYPED = frozenset(KINDS)

_decode = msgspec.json.Decoder(Union[KINDS]).decode  # type: ignore[valid-type]
envelope: Callable[[bytes], Envelope] = msgspec.json.Decoder(Envelope).decode  # ValueError: a value of another type


def decode(raw: bytes) -> Line:
    """The typed entry of one raw line; ValueError (msgspec's errors are ValueErrors) or RecursionError (nesting
    past the interpreter's limit) for a line the generic path must read (`jsonl.read_jsonl`). msgspec skips
    undeclared values without checking their UTF-8 (the generic path warns of invalid bytes), so a line that is not
    ASCII is checked first."""
    if not raw.isascii():
        raw.decode()  # UnicodeDecodeError is a ValueError
    return _decode(raw)


def decoder(raws: list[bytes]) -> Callable[[bytes], Line]:
    """`decode` fit for a run of raw lines: msgspec's own when they are all valid UTF-8 (the lines that are not ASCII
    checked here, in one C-level pass), so a C call a line, `jsonl.read_jsonl` maps it over the run; a run holding a
    line that is not checks each line as it decodes it."""
    try:
        deque(map(bytes.decode, filterfalse(bytes.isascii, raws)), 0)
    except UnicodeDecodeError:
        return decode
    return _decode


def blocks(content: str | list | None, calls: dict[str, str], depth: int = 0) -> list[Block]:
    """`blocks.blocks_from_content` for typed content (what it gives for the same JSON). `calls`: the ids of the tool
    calls not answered yet, each its own string: a result takes its call's (80 bytes a result), a call leaving the
    dict then. (A small dict, not `sys.intern`'s, whose every id is another look-up in a large table.)"""
    if content.__class__ is str:
        return [Block("text", content)]  # type: ignore[arg-type]
    if content is None:
        return []
    if depth > MAX_NESTING:
        raise NestedTooDeep(f"tool results nested more than {MAX_NESTING} deep")
    if len(content) == 1:  # most messages: a list made to measure (a list grown by appends takes 24 bytes more)
        return [block(content[0], calls, depth)]  # type: ignore[index]
    return [block(b, calls, depth) for b in content]  # type: ignore[union-attr]


def block(b: Any, calls: dict[str, str], depth: int) -> Block:
    """One typed block of content `depth` deep (`blocks`)."""
    cls = b.__class__
    if cls is _ToolResult:
        inner, tool_id = b.content, b.tool_use_id
        if tool_id is not None:
            tool_id = calls.pop(tool_id, tool_id)
        if inner.__class__ is list:
            return Block("tool_result", "", tool_id, None, None, b.is_error, blocks(inner, calls, depth + 1))
        return Block("tool_result", inner or "", tool_id, None, None, b.is_error)
    if cls is _ToolUse:  # tool names interned, as blocks_from_content does; the input as `text_of_input` keeps it
        tool_id, name, value = b.id, b.name, b.input
        return Block("tool_use", "", calls.setdefault(tool_id, tool_id) if tool_id is not None else None,
                     intern(name) if name is not None else None,
                     EMPTY_INPUT if value is UNSET else None if value is None else _input_text(value))
    if cls is _Text:
        return Block("text", b.text)
    if cls is _Thinking:
        return Block.of("thinking", b.thinking, signature=b.signature or None)
    if cls is _Redacted:
        return Block("redacted_thinking", b.data)
    return _media(b)


def _input_text(value: Any) -> str:
    """`model.input_json(value)` for a typed input (no floats): msgspec's encoding spaced as the standard library's
    (`format`'s indent 0: ", " and ": "; both escape strings alike). A fifth less time on a one-key input, half to
    four fifths less on an edit's or a write's."""
    return _format(_encode(value), indent=0).decode()


_encode, _format = msgspec.json.Encoder().encode, msgspec.json.format


def _media(b: _Image | _Document) -> Block:
    kind = "image" if b.__class__ is _Image else "document"
    source = b.source
    data = source.data if source is not None else None
    text = ""
    if kind == "document" and source is not None and source.type == "text":
        text, data = data or "", None
    return Block.of(kind, text, media=source.media_type if source is not None else None,
                    size=len(data) if data is not None else 0)
