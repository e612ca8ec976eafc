"""Gemini API content (`Content{role, parts}`, `PartListUnion`) to typed Blocks: shared by the loaders of agents
that record Gemini-shaped history (Gemini CLI, Qwen Code).

A part is `{text}` (with `thought: true` for a thought summary), `{functionCall{id, name, args}}`,
`{functionResponse{id, name, response}}` (the tool's output is `response.output`, an error `response.error`),
`{inlineData{mimeType, data}}` (base64: only its type and size are kept), `{fileData{mimeType, fileUri}}`, or a code
execution part; a bare string is text. Anything else becomes an `unknown` block keeping its dict.
"""

from __future__ import annotations

import json
from typing import Any

from inspector.core.formats.blocks import opt_str
from inspector.core.model import Block


def blocks_from_parts(content: Any) -> list[Block]:
    """Typed blocks for a `PartListUnion`: a string, one part, or a list of parts and strings."""
    if content is None:
        return []
    if isinstance(content, str):
        return [Block("text", content)] if content else []
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return [Block("text", str(content))]
    return [block_from_part(p) if isinstance(p, dict) else Block("text", p if isinstance(p, str) else str(p))
            for p in content]


def block_from_part(part: dict) -> Block:
    text = part.get("text")
    if isinstance(text, str):
        return Block("thinking", text) if part.get("thought") is True else Block("text", text)
    call = part.get("functionCall")
    if isinstance(call, dict):
        args = call.get("args")
        return Block.of("tool_use", tool_id=opt_str(call.get("id")), tool_name=opt_str(call.get("name")),
                        input=args if args is not None else {})
    response = part.get("functionResponse")
    if isinstance(response, dict):
        output, is_error = response_text(response.get("response"))
        return Block("tool_result", output, tool_id=opt_str(response.get("id")), is_error=is_error)
    inline = part.get("inlineData")
    if isinstance(inline, dict):
        media = opt_str(inline.get("mimeType"))
        data = inline.get("data")
        kind = "image" if (media or "").startswith("image/") else "document"
        return Block.of(kind, media=media, size=len(data) if isinstance(data, str) else 0)
    file_data = part.get("fileData")
    if isinstance(file_data, dict):
        return Block.of("document", opt_str(file_data.get("fileUri")) or "", media=opt_str(file_data.get("mimeType")))
    code = part.get("executableCode")
    if isinstance(code, dict):
        return Block("text", opt_str(code.get("code")) or "")
    result = part.get("codeExecutionResult")
    if isinstance(result, dict):
        return Block("text", opt_str(result.get("output")) or "")
    return Block.of("unknown", raw=part)


def response_text(response: Any) -> tuple[str, bool]:
    """A function response's text as the model reads it, and whether it reports an error: `output` when it is a
    string, else `error`, else the whole response as JSON."""
    if isinstance(response, dict):
        if isinstance(response.get("output"), str):
            return response["output"], False
        if isinstance(response.get("error"), str):
            return response["error"], True
    if isinstance(response, str):
        return response, False
    return json.dumps(response, ensure_ascii=False), False


def part_list(content: Any) -> list:
    """A `PartListUnion` as a list (a string or one part is a list of one)."""
    if isinstance(content, list):
        return content
    return [] if content is None or content == "" else [content]


def has_part(content: Any, key: str) -> bool:
    return any(isinstance(p, dict) and isinstance(p.get(key), dict) for p in part_list(content))


def part_text(content: Any) -> str:
    """The text parts of a `PartListUnion` joined (thoughts excluded): how the agents read a message's text."""
    out = []
    for p in part_list(content):
        if isinstance(p, str):
            out.append(p)
        elif isinstance(p, dict) and isinstance(p.get("text"), str) and p.get("thought") is not True:
            out.append(p["text"])
    return "".join(out)
