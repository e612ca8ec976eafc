"""Messages-API content (a string or a list of block dicts) to typed Blocks: shared by every loader whose content is
Anthropic-shaped (Claude Code, Anthropic requests, neutral).

Image and document data is base64 the views never show: only its media type and size are kept.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from inspector.core.model import Block, Message


def blocks_from_content(content: Any) -> list[Block]:
    """Typed blocks for a message's `content`; anything unrecognised becomes an `unknown` block keeping its dict."""
    if content is None:
        return []
    if isinstance(content, str):
        return [Block("text", content)]
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return [Block("text", str(content))]
    return [block_from_dict(b) if isinstance(b, dict) else Block("text", str(b)) for b in content]


def block_from_dict(b: dict) -> Block:
    kind = b.get("type")
    if kind == "text":
        return Block("text", _str(b.get("text")))
    if kind == "thinking":  # an empty signature (a file that recorded none) is no signature
        return Block("thinking", _str(b.get("thinking")), signature=opt_str(b.get("signature")) or None)
    if kind == "redacted_thinking":
        return Block("redacted_thinking", _str(b.get("data")))
    if kind == "tool_use":
        return Block("tool_use", tool_id=opt_str(b.get("id")), tool_name=opt_str(b.get("name")),
                     input=b.get("input", {}))
    if kind == "tool_result":
        inner = b.get("content")
        if isinstance(inner, list):
            return Block("tool_result", tool_id=opt_str(b.get("tool_use_id")), content=blocks_from_content(inner),
                         is_error=bool(b.get("is_error")))
        return Block("tool_result", _str(inner), tool_id=opt_str(b.get("tool_use_id")),
                     is_error=bool(b.get("is_error")))
    if kind in ("image", "document"):
        source = b.get("source") if isinstance(b.get("source"), dict) else {}
        data = source.get("data")
        text = ""
        if kind == "document" and source.get("type") == "text":  # plain-text documents carry their text inline
            text, data = _str(data), None
        return Block(kind, text, media=opt_str(source.get("media_type")),
                     size=len(data) if isinstance(data, str) else 0)
    return Block("unknown", raw=b)


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ("" if value is None else str(value))


def as_int(value: Any) -> int:
    """A token count from a file: ints only (a bool or a string is no count), else 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def opt_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def opt_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def iso_from_ms(value: Any) -> str | None:
    """An epoch-milliseconds timestamp (Cline's `ts`) as ISO 8601 UTC, or None for anything that is not one."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < 1e14:
        return datetime.fromtimestamp(value / 1000, timezone.utc).isoformat(timespec="milliseconds")[:-6] + "Z"
    return None


def replace_results(messages: list[Message], replacements: dict[str, str]) -> None:
    """Give the tool results answering the listed tool_use ids the text they now hold (after a microcompact)."""
    for message in messages:
        if any(b.type == "tool_result" and b.tool_id in replacements for b in message.blocks):
            message.blocks = [Block("tool_result", replacements[b.tool_id], tool_id=b.tool_id, is_error=b.is_error)
                              if b.type == "tool_result" and b.tool_id in replacements else b
                              for b in message.blocks]


def image_from_url(url: object) -> dict:
    """A Messages-API image block for an OpenAI/Codex image URL (a `data:` URL keeps its media type and size)."""
    url = url if isinstance(url, str) else ""
    media = url[5:url.index(";")] if url.startswith("data:") and ";" in url else None
    return {"type": "image", "source": {"type": "base64", "media_type": media,
                                        "data": url.partition(",")[2] if media else ""}}
