"""Messages-API content (a string or a list of block dicts) to typed Blocks: shared by every loader whose content is
Anthropic-shaped (Claude Code, Anthropic requests, neutral).

Image and document data is base64 the views never show: only its media type and size are kept.
"""

from __future__ import annotations

import sys
from datetime import datetime, timezone
from typing import Any

from inspector.core.model import EMPTY_INPUT, Block, Message, text_of_input


MAX_NESTING = 16  # tool results inside tool results (the API allows none): deeper is a hostile file


class NestedTooDeep(ValueError):
    """Content nesting tool results more than MAX_NESTING deep (a 19 KB line can nest 330: every walk over the
    blocks would recurse that deep). The loader says so for the line, and keeps the rest of the file."""


def blocks_from_content(content: Any, depth: int = 0) -> list[Block]:
    """Typed blocks for a message's `content`; anything unrecognised becomes an `unknown` block keeping its dict.
    `depth`: how many tool results hold this content (NestedTooDeep past MAX_NESTING)."""
    cls = content.__class__
    if cls is list:
        if not depth and len(content) == 1 and content[0].__class__ is dict:  # most messages: one block
            return [block_from_dict(content[0])]
    elif cls is str:
        return [Block("text", content)]
    elif content is None:
        return []
    elif cls is dict:
        content = [content]
    else:
        return [Block("text", str(content))]
    if depth:
        if depth > MAX_NESTING:
            raise NestedTooDeep(f"tool results nested more than {MAX_NESTING} deep")
        return [block_from_dict(b, depth) if b.__class__ is dict else Block("text", str(b)) for b in content]
    return [block_from_dict(b) if b.__class__ is dict else Block("text", str(b)) for b in content]


def block_from_dict(b: dict, depth: int = 0) -> Block:
    # Positional arguments (type, text, tool_id, tool_name, input, is_error, content): every message of a session
    # comes through here. Tool names are interned (a session repeats a handful thousands of times), and tool ids (a
    # result then holds its call's id string, not a copy of its own: 80 bytes a result).
    get = b.get
    kind = get("type")
    if kind == "tool_result":
        inner, tool_id = get("content"), get("tool_use_id")
        tool_id = sys.intern(tool_id) if tool_id.__class__ is str else None
        if inner.__class__ is list:
            return Block("tool_result", "", tool_id, None, None, bool(get("is_error")),
                         blocks_from_content(inner, depth + 1))
        return Block("tool_result", inner if inner.__class__ is str else _str(inner), tool_id, None, None,
                     bool(get("is_error")))
    if kind == "tool_use":
        tool_id, name, value = get("id"), get("name"), get("input", _ABSENT)
        return Block("tool_use", "", sys.intern(tool_id) if tool_id.__class__ is str else None,
                     sys.intern(name) if name.__class__ is str else None,
                     EMPTY_INPUT if value is _ABSENT else text_of_input(value))
    if kind == "text":
        text = get("text")
        return Block("text", text if text.__class__ is str else _str(text))
    if kind == "thinking":  # an empty signature (a file that recorded none) is no signature
        return Block.of("thinking", _str(b.get("thinking")), signature=opt_str(b.get("signature")) or None)
    if kind == "redacted_thinking":
        return Block("redacted_thinking", _str(b.get("data")))
    if kind in ("image", "document"):
        source = b.get("source") if isinstance(b.get("source"), dict) else {}
        data = source.get("data")
        text = ""
        if kind == "document" and source.get("type") == "text":  # plain-text documents carry their text inline
            text, data = _str(data), None
        return Block.of(kind, text, media=opt_str(source.get("media_type")),
                        size=len(data) if isinstance(data, str) else 0)
    return Block.of("unknown", raw=b)


_ABSENT = object()  # a key the dict does not hold (a default `{}` would be made anew on every call)


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ("" if value is None else str(value))


def as_int(value: Any) -> int:
    """A token count from a file: ints only (a bool or a string is no count), else 0."""
    return value if value.__class__ is int else 0


def opt_int(value: Any) -> int | None:
    return value if value.__class__ is int else None


def opt_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def as_list(value: Any) -> list:
    """A list from a file, else none (a `true` or a number where a list belongs is not iterable)."""
    return value if isinstance(value, list) else []


def iso_from_ms(value: Any) -> str | None:
    """An epoch-milliseconds timestamp (Cline's `ts`) as ISO 8601 UTC, or None for anything that is not one."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < 1e14:
        return datetime.fromtimestamp(value / 1000, timezone.utc).isoformat(timespec="milliseconds")[:-6] + "Z"
    return None


def edited_block(block: Block, text: str | None, keep_media: bool) -> Block:
    """The block after a compaction's edit: a tool_use without input (`text` None), or a tool_result holding `text`
    instead of its text (its images/documents kept when `keep_media`). Built field by field: dataclasses.replace
    costs several times more, and plans make tens of thousands of these."""
    if text is None:
        return Block("tool_use", block.text, block.tool_id, block.tool_name, EMPTY_INPUT, block.is_error, block.content,
                     block.extras)
    media = [b for b in block.content if b.type != "text"] if keep_media and block.content else None
    if media:
        return Block("tool_result", "", block.tool_id, block.tool_name, block.input_text, block.is_error,
                     [Block("text", text=text), *media], block.extras)
    return Block("tool_result", text, block.tool_id, block.tool_name, block.input_text, block.is_error, None,
                 block.extras)


def edited_message(m: Message, blocks: list[Block]) -> Message:
    """`m` with other blocks, every other field kept (field by field, as `edited_block`)."""
    return Message(m.role, m.kind, blocks, m.uuid, m.line, m.offset, m.timestamp, m.model, m.response_id, m.extras)


Replacement = str | list  # a tool_result's new content as written: its text, or its blocks in Messages-API form


def replacement_of(block: Block) -> Replacement:
    """What a microcompaction record writes for a result it edited: the text, or the blocks where media stayed."""
    return [b.to_api() for b in block.content] if block.content is not None else block.text


def micro_payload(before: Message, after: Message) -> tuple[dict[str, Replacement], dict[str, Any]]:
    """What a microcompaction record writes for one message it edited: the new content of each tool result and the
    new input of each tool use that changed from `before` to `after` (by tool id)."""
    results: dict[str, Replacement] = {}
    inputs: dict[str, Any] = {}
    for old, new in zip(before.blocks, after.blocks):
        if old == new or not new.tool_id:
            continue
        if new.type == "tool_result":
            results[new.tool_id] = replacement_of(new)
        elif new.type == "tool_use":
            inputs[new.tool_id] = new.input
    return results, inputs


def replaced_message(m: Message, results: dict[str, Replacement], inputs: dict[str, Any]) -> Message | None:
    """`m` with the listed tool results given their new content and the listed tool uses their new input, as a
    microcompaction record states them (None: `m` holds none of them). The inverse of `replacement_of`."""
    if not any((b.type == "tool_result" and b.tool_id in results) or (b.type == "tool_use" and b.tool_id in inputs)
               for b in m.blocks):
        return None
    blocks = []
    for b in m.blocks:
        if b.type == "tool_result" and b.tool_id in results:
            value = results[b.tool_id]
            b = Block("tool_result", "", b.tool_id, is_error=b.is_error, content=blocks_from_content(value)) \
                if isinstance(value, list) else Block("tool_result", _str(value), b.tool_id, is_error=b.is_error)
        elif b.type == "tool_use" and b.tool_id in inputs:
            b = Block.of("tool_use", tool_id=b.tool_id, tool_name=b.tool_name, input=inputs[b.tool_id])
        blocks.append(b)
    return edited_message(m, blocks)

def image_from_url(url: object) -> dict:
    """A Messages-API image block for an OpenAI/Codex image URL (a `data:` URL keeps its media type and size)."""
    url = url if isinstance(url, str) else ""
    media = url[5:url.index(";")] if url.startswith("data:") and ";" in url else None
    return {"type": "image", "source": {"type": "base64", "media_type": media,
                                        "data": url.partition(",")[2] if media else ""}}
