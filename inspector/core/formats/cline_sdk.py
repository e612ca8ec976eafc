"""Cline SDK sessions (the Cline CLI 3.x, the SDK-based extension): `~/.cline/data/sessions/<id>/<id>.messages.json`.

One JSON document `{version: 1, sessionId, agent, messages[], system_prompt?}` (`sdk/packages/core/docs/
messages-contract-v1.md`), rewritten whole on every turn. Messages are Anthropic-shaped (`user`/`assistant`, content
blocks `text`, `thinking`, `tool_use`, `tool_result`, plus `file {path, content}` attachments), with `ts`,
`modelInfo {id, provider}` and, on assistant messages, `metrics {inputTokens, outputTokens, cacheReadTokens,
cacheWriteTokens, cost}`: in the files the CLI writes each model call's own usage (with `inputTokens` including the
cached part, as the provider reported it), so each is one Request. Compaction rewrites the list: the removed messages
are gone, and the first kept message carries `metadata.kind` "compaction" (basic compaction: the original request
with a `<SYSTEM_NOTICE>` of what was done, `messagesRemoved`) or "compaction_summary" (agentic: an LLM summary);
it is the boundary here. The manifest `<id>.json` beside the file gives the session's cwd and model.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from inspector.core.formats.blocks import as_int, blocks_from_content, iso_from_ms, opt_str
from inspector.core.formats.jsonl import loads
from inspector.core.formats.neutral import read_document
from inspector.core.model import Block, Compaction, LoadError, LoadWarning, Message, Request, Session

COMPACTION_KINDS = frozenset({"compaction", "compaction_summary"})


def load_cline_sdk(path: Path, progress: object = None) -> Session:
    doc = read_document(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list):
        raise LoadError(f"{path}: not a Cline SDK messages file (no \"messages\" array)")
    s = Session(source=str(path), format="cline-sdk", session_id=opt_str(doc.get("sessionId")))
    if isinstance(doc.get("system_prompt"), str):
        s.system = doc["system_prompt"]
    origin = doc.get("origin") if isinstance(doc.get("origin"), dict) else {}
    s.version = opt_str(origin.get("version"))
    for n, raw in enumerate(doc["messages"]):
        where = f"message {n + 1}"
        if not isinstance(raw, dict) or raw.get("role") not in ("user", "assistant"):
            s.warnings.append(LoadWarning(None, f"{where}: not a user or assistant message, skipped"))
            continue
        message = _message(raw)
        message.timestamp = iso_from_ms(raw.get("ts"))
        metadata = raw.get("metadata") if isinstance(raw.get("metadata"), dict) else {}
        if opt_str(metadata.get("kind")) in COMPACTION_KINDS:
            message.kind = "compact_summary"
            s.compactions.append(Compaction("compact", len(s.messages), trigger=opt_str(metadata.get("reason"))))
        s.messages.append(message)
        metrics = raw.get("metrics")
        if message.role == "assistant" and isinstance(metrics, dict):
            index = len(s.messages) - 1
            read, write = as_int(metrics.get("cacheReadTokens")), as_int(metrics.get("cacheWriteTokens"))
            total = as_int(metrics.get("inputTokens"))
            uncached = total - read - write if total >= read + write else total  # inputTokens includes the cache
            rid = opt_str(raw.get("id")) or f"message-{n + 1}"
            s.requests.append(Request(rid, message.model, uncached, write, read, as_int(metrics.get("outputTokens")),
                                      message_index=index, seen_start=s.context_start, seen_end=index,
                                      timestamp=message.timestamp))
            message.response_id = rid
        if message.model and message.model not in s.models:
            s.models.append(message.model)
    _manifest(s, path.with_name(path.name.removesuffix(".messages.json") + ".json"))
    return s


def _message(raw: dict) -> Message:
    content = raw.get("content")
    blocks = [_block(b) for b in content] if isinstance(content, list) else blocks_from_content(content)
    info = raw.get("modelInfo") if isinstance(raw.get("modelInfo"), dict) else {}
    if raw["role"] == "assistant":
        return Message("assistant", "assistant", blocks, uuid=opt_str(raw.get("id")), model=opt_str(info.get("id")))
    kind = "tool_result" if any(b.type == "tool_result" for b in blocks) else "prompt"
    return Message("user", kind, blocks, uuid=opt_str(raw.get("id")))


def _block(b: Any) -> Block:
    """A content block; `file` attachments are the file's text as the model got it, and a tool result's list of
    `{query, result}` records (the SDK's tools answer so) is that JSON."""
    if not isinstance(b, dict):
        return Block("text", str(b))
    if b.get("type") == "file":
        return Block("text", f"{b.get('path', '')}\n{b.get('content', '')}")
    if b.get("type") == "tool_result" and isinstance(b.get("content"), list) and not all(
            isinstance(x, dict) and "type" in x for x in b["content"]):
        b = {**b, "content": json.dumps(b["content"], ensure_ascii=False)}
    return blocks_from_content([b])[0]


def _manifest(s: Session, path: Path) -> None:
    try:
        doc = loads(path.read_bytes())
    except (OSError, ValueError):
        return  # the manifest is optional: the messages file stands alone
    if isinstance(doc, dict):
        s.cwd = opt_str(doc.get("cwd")) or s.cwd
        model = opt_str(doc.get("model"))
        if model and model not in s.models:
            s.models.append(model)


def is_cline_sdk(doc: Any) -> bool:
    return (isinstance(doc, dict) and isinstance(doc.get("messages"), list) and isinstance(doc.get("version"), int)
            and "sessionId" in doc and ("agent" in doc or "updated_at" in doc))
