"""Which format a file holds, decided by its content (never its name), and whether it is JSONL or one JSON document.

A JSONL file is classified by its first lines that parse (a corrupt first line does not hide the format); a file
whose first line does not parse but which starts like JSON is read as one (pretty-printed) document.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspector.core.formats.blocks import opt_str
from inspector.core.formats.jsonl import loads
from inspector.core.index import LineIndex
from inspector.core.model import Format, LoadError

PROBE_LINES = 20
CODEX_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
CLAUDE_TYPES = frozenset({"user", "assistant", "system", "summary", "file-history-snapshot", "queue-operation",
                          "progress", "attachment"})
ANTHROPIC_BLOCKS = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking", "image", "document"})
NEUTRAL_KEYS = frozenset({"event", "kind", "usage"})
CODEX_ITEMS = frozenset({"message", "reasoning", "function_call", "function_call_output", "local_shell_call",
                         "custom_tool_call", "custom_tool_call_output"})
CODEX_PARTS = frozenset({"input_text", "output_text", "input_image"})
GEMINI_TYPES = frozenset({"user", "gemini", "info", "error", "warning"})
QWEN_TYPES = frozenset({"user", "assistant", "tool_result", "system"})
SQLITE_MAGIC = b"SQLite format 3\x00"
# A capture record's protocol (docs/capture-format.md) and the format its requests are in; None: not a conversation
CAPTURE_FORMATS: dict[str, Format | None] = {
    "anthropic-messages": "anthropic-request", "anthropic-count-tokens": None, "openai-chat": "openai-chat",
    "openai-responses": "openai-responses"}


def classify_line(obj: Any) -> Format | None:
    """The format one JSONL line belongs to, or None when the line alone does not tell."""
    if not isinstance(obj, dict):
        return None
    kind = opt_str(obj.get("type"))
    if _gemini(obj, kind):
        return "gemini-cli"
    if kind in QWEN_TYPES and "uuid" in obj and _qwen(obj):
        return "qwen-code"
    if kind in CODEX_TYPES and "payload" in obj:
        return "codex"
    if obj.get("record_type") == "state" or (kind in CODEX_ITEMS and "payload" not in obj and _codex_item(obj)):
        return "codex"  # the older rollout layout: bare Responses-API items
    if kind in CLAUDE_TYPES and ("uuid" in obj or "sessionId" in obj or "messageId" in obj or "leafUuid" in obj):
        return "claude-code"
    from inspector.core.formats.copilot import is_copilot_event  # here, not at the top: a Claude Code or Codex
    from inspector.core.formats.kimi import is_kimi_record  # line (the status line's) never loads these loaders
    from inspector.core.formats.kimi_code import is_kimi_code_record

    if is_copilot_event(obj):
        return "copilot"
    if is_kimi_record(obj):
        return "kimi"
    if is_kimi_code_record(obj):
        return "kimi-code"
    if "event" in obj or ("role" in obj and "type" not in obj):
        return "neutral"
    if "protocol" in obj and "seq" in obj:  # a record of `context-inspector capture` (docs/capture-format.md)
        protocol = opt_str(obj.get("protocol")) or ""
        if protocol not in CAPTURE_FORMATS:
            return None
        return CAPTURE_FORMATS[protocol] or "anthropic-request"  # count_tokens: Anthropic traffic, though no turn
    if isinstance(obj.get("messages"), list):
        return classify_conversation(obj)
    request = obj.get("request")
    if isinstance(request, dict) and isinstance(request.get("messages"), list):  # a captured request/response pair
        return classify_conversation(request)
    if _responses_request(obj) or (isinstance(request, dict) and _responses_request(request)):
        return "openai-responses"
    return None


def _responses_request(obj: dict) -> bool:
    """An OpenAI Responses request body: `input` items (or a string) and a model."""
    return isinstance(obj.get("input"), (list, str)) and isinstance(obj.get("model"), str)


def capture_header(obj: Any) -> bool:
    """The first line of a capture file; alone it does not tell the protocol (a capture with no exchange yet loads
    as an empty Anthropic one, and its first record decides once it is written)."""
    return isinstance(obj, dict) and isinstance(obj.get("capture"), dict) and "seq" not in obj


def _gemini(obj: dict, kind: str | None) -> bool:
    """A Gemini CLI line: its metadata (`sessionId` with `projectHash`), a `$set` / `$rewindTo`, or a message
    record `{id, type, content}` (no uuid, role or message envelope)."""
    if isinstance(obj.get("$set"), dict) or isinstance(obj.get("$rewindTo"), str):
        return True
    if isinstance(obj.get("sessionId"), str) and isinstance(obj.get("projectHash"), str):
        return True
    return (kind in GEMINI_TYPES and isinstance(obj.get("id"), str) and "content" in obj
            and not {"uuid", "role", "message", "payload"} & obj.keys())


def _qwen(obj: dict) -> bool:
    """A Qwen Code record: a uuid chain like Claude Code's, but Gemini-shaped `message.parts`, a `systemPayload`,
    a `provenance` or a `tool_result` record type (none of which Claude Code writes)."""
    message = obj.get("message")
    return (isinstance(message, dict) and isinstance(message.get("parts"), list)) or "systemPayload" in obj \
        or "provenance" in obj or obj.get("type") == "tool_result"


def _codex_item(obj: dict) -> bool:
    """A Responses-API item: a message with `input_text`/`output_text` parts, or a reasoning / tool call item."""
    if obj.get("type") != "message":
        return "call_id" in obj or "summary" in obj or "encrypted_content" in obj
    content = obj.get("content")
    return isinstance(content, list) and any(isinstance(p, dict) and p.get("type") in CODEX_PARTS for p in content)


def classify_document(doc: Any) -> Format | None:
    """The format of a whole JSON document (an object or an array)."""
    from inspector.core.formats.cline_sdk import is_cline_sdk

    if isinstance(doc, dict):
        if is_cline_sdk(doc):
            return "cline-sdk"
        if isinstance(doc.get("sessionId"), str) and isinstance(doc.get("projectHash"), str):
            return "gemini-cli"  # a legacy Gemini CLI session-*.json
        if _opencode_session(doc):
            return "opencode"
        if isinstance(doc.get("messages"), list):
            return classify_conversation(doc)
        return classify_line(doc)
    if isinstance(doc, list) and doc and all(isinstance(x, dict) for x in doc):
        if all(isinstance(x.get("messages"), list) for x in doc):
            return classify_conversation(doc[-1])
        if all("role" in x or "event" in x for x in doc):
            return "neutral" if _neutral_only(doc) else "openai-chat"
        if any(classify_line(x) == "claude-code" for x in doc[:PROBE_LINES]):
            return "claude-code"  # a JSON array of Claude Code's lines
    return None


def _opencode_session(doc: dict) -> bool:
    """An opencode session info file (`storage/session/<project>/<id>.json`): `ses_` id and a `time` object."""
    sid = doc.get("id")
    return isinstance(sid, str) and sid.startswith("ses_") and isinstance(doc.get("time"), dict)


def classify_conversation(obj: dict) -> Format:
    """`{"messages": [...]}`: neutral when it uses keys only neutral has, OpenAI when it uses OpenAI's roles or
    tool calls, an Anthropic request when it uses its top-level keys or blocks, else OpenAI (the plainer reading)."""
    messages = [m for m in obj["messages"] if isinstance(m, dict)]
    if _neutral_only(messages) or any(k in obj for k in ("event", "session")):
        return "neutral"
    tools = obj.get("tools") if isinstance(obj.get("tools"), list) else []
    if any(m.get("role") in ("system", "tool") or "tool_calls" in m for m in messages) or any(
            isinstance(t, dict) and "function" in t for t in tools):
        return "openai-chat"
    if any(k in obj for k in ("system", "max_tokens", "thinking", "anthropic_version")) or any(
            isinstance(t, dict) and "input_schema" in t for t in tools) or any(
            isinstance(b, dict) and opt_str(b.get("type")) in ANTHROPIC_BLOCKS
            for m in messages if isinstance(m.get("content"), list) for b in m["content"]):
        return "anthropic-request"
    return "openai-chat"


def _neutral_only(messages: list[dict]) -> bool:
    for m in messages:
        if NEUTRAL_KEYS & m.keys():
            return True
        if m.get("role") == "tool" and isinstance(m.get("content"), list):
            return True
        calls = m.get("tool_calls")
        if isinstance(calls, list) and any(isinstance(c, dict) and "input" in c for c in calls):
            return True
        if m.get("role") in ("user", "assistant") and isinstance(m.get("content"), list) and any(
                isinstance(b, dict) and opt_str(b.get("type")) in ANTHROPIC_BLOCKS for b in m["content"]) and any(
                x.get("role") == "tool" or "tool_calls" in x for x in messages):
            return True
    return False


def detect(path: str | Path) -> Format:
    """The format of the file at `path`; LoadError naming it when the content is no known format."""
    with open(path, "rb") as f:
        if f.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC:
            from inspector.core.formats.opencode import check_database

            check_database(Path(path))
            return "opencode"
    index = LineIndex(path, chunk_size=1 << 16)
    first = b""
    tried = 0
    document = False
    header = False
    for _line_no, _offset, raw in index.read_new():
        text = raw.strip()
        if not text:
            continue
        first = first or text[:1]
        tried += 1
        try:
            obj = loads(text)
        except ValueError:
            if tried == 1 and first in (b"{", b"[") and text[-1:] not in (b"}", b"]"):
                document = True  # maybe one pretty-printed document (a whole but corrupt line is just skipped)
                break
        else:
            fmt = classify_document(obj) if isinstance(obj, list) else classify_line(obj)
            if fmt is not None:
                return fmt
            header = header or capture_header(obj)
        if tried >= PROBE_LINES:
            break
    else:
        text = index.tail().strip()
        if text and not tried:
            first = text[:1]
            document = first in (b"{", b"[")
    if header:
        return "anthropic-request"
    if document:
        try:
            with open(path, "rb") as f:
                fmt = classify_document(loads(f.read()))
        except ValueError as exc:
            raise LoadError(f"{path}: not valid JSON or JSONL ({exc})") from None
        if fmt is not None:
            return fmt
    if not first:
        raise LoadError(f"{path}: empty file, no session in it")
    raise LoadError(f"{path}: not a recognised session format (Claude Code, Codex, Gemini CLI, Qwen Code, opencode, "
                    "Copilot CLI, Cline, Roo Code, Cline SDK, Kimi CLI, Kimi Code, an Anthropic request, OpenAI chat "
                    "or Responses, a capture, or neutral)")
