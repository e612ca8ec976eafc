"""Cline (VS Code extension 3.x and the CLI before 3.0) and Roo Code task folders:
`<VS Code globalStorage>/saoudrizwan.claude-dev/tasks/<task id>/` (Roo: `rooveterinaryinc.roo-cline/tasks/<id>/`).

A task is a folder; PATH may name it or any file in it, and the folder is loaded:
    api_conversation_history.json  the conversation as sent, Anthropic MessageParams (plus `ts`; Roo adds
                                   `isSummary`, `condenseId`, `condenseParent`, `truncationId`, `isTruncationMarker`,
                                   `truncationParent`)
    ui_messages.json               what the webview showed; each `say: "api_req_started"` message's `text` is JSON
                                   `{tokensIn, tokensOut, cacheWrites, cacheReads, cost}`, one model request, and
                                   its `conversationHistoryIndex` is the last message that request saw (so its reply
                                   is the next one); Cline's `conversationHistoryDeletedRange` and Roo's
                                   `condense_context` / `sliding_window_truncation` messages record compaction
    context_history.json           (Cline) text the extension substitutes in the history before sending it (a file
                                   read already in context replaced by a note, the truncation notice): applied here,
                                   so messages show what the model was sent
    task_metadata.json             the models used (`model_usage`)

Compaction, as each agent computes the history it sends (Cline `ContextManager.getAndAlterTruncatedMessages` at
v3.89.2; Roo `getEffectiveApiHistory`): Cline keeps the first user/assistant pair and drops the inclusive index range
`conversationHistoryDeletedRange`; Roo sends from its newest summary on (`isSummary`) and hides messages whose
`truncationParent` names an existing truncation marker. The hidden messages come first here, then a boundary, then
the messages the model saw in their order: for Cline that puts the first pair after the boundary, where it is in
the context.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from inspector.core.formats.blocks import as_int, iso_from_ms, opt_int, opt_str
from inspector.core.formats.conversations import anthropic_message
from inspector.core.formats.jsonl import loads
from inspector.core.model import Block, Compaction, LoadError, LoadWarning, Message, Request, Session

HISTORY = "api_conversation_history.json"
UI = "ui_messages.json"
CONTEXT_HISTORY = "context_history.json"
METADATA = "task_metadata.json"
TASK_FILES = (HISTORY, UI, CONTEXT_HISTORY, METADATA)
ROO_STORAGE = "rooveterinaryinc.roo-cline"
ROO_KEYS = frozenset({"isSummary", "condenseId", "condenseParent", "truncationId", "isTruncationMarker",
                      "truncationParent"})
ROO_SAYS = frozenset({"condense_context", "condense_context_error", "sliding_window_truncation"})


def task_folder(path: Path) -> Path | None:
    """The task folder `path` names (the folder itself, or one of its files), or None."""
    folder = path if path.is_dir() else path.parent if path.name in TASK_FILES else None
    return folder if folder is not None and (folder / HISTORY).is_file() else None


def load_task(folder: Path) -> Session:
    warnings: list[LoadWarning] = []
    history = _array(folder / HISTORY, warnings, required=True)
    ui = _array(folder / UI, warnings)
    roo = ROO_STORAGE in str(folder) or any(isinstance(m, dict) and ROO_KEYS & m.keys() for m in history) or any(
        isinstance(m, dict) and opt_str(m.get("say")) in ROO_SAYS for m in ui)
    s = Session(source=str(folder / HISTORY), format="roo-code" if roo else "cline", session_id=folder.name,
                warnings=warnings)
    raw = [m for m in history if isinstance(m, dict) and m.get("role") in ("user", "assistant")]
    if len(raw) < len(history):
        warnings.append(LoadWarning(None, f"{HISTORY}: {len(history) - len(raw)} entries that are not user or "
                                          "assistant messages skipped"))
    messages = [_message(m) for m in raw]
    if not roo:
        _apply_context_history(messages, folder / CONTEXT_HISTORY, warnings)
    visible = _roo_visible(raw) if roo else _cline_visible(raw, ui)
    hidden = [i for i in range(len(raw)) if i not in visible]
    if hidden and not roo:
        _repair_after_truncation(messages, min((i for i in visible if i >= 2), default=None))
    order = hidden + sorted(visible)
    position = {api_index: n for n, api_index in enumerate(order)}
    s.messages = [messages[i] for i in order]
    if hidden:
        summary = next((position[i] for i in sorted(visible) if raw[i].get("isSummary")), None)
        trigger = "condense" if summary is not None else "truncation"
        if summary is not None:
            s.messages[summary].kind = "compact_summary"
        s.compactions.append(Compaction("compact", len(hidden), trigger=trigger, pre_tokens=_pre_tokens(ui)))
    models = _models(folder / METADATA)
    _requests(s, ui, raw, position, models, roo)
    s.models = sorted({r.model for r in s.requests if r.model}, key=[r.model for r in s.requests].index) or models
    return s


def _array(path: Path, warnings: list[LoadWarning], required: bool = False) -> list:
    try:
        with open(path, "rb") as f:
            doc = loads(f.read())
    except FileNotFoundError:
        if required:
            raise LoadError(f"{path}: no such file") from None
        return []
    except OSError as exc:
        if required:
            raise LoadError(f"{path}: cannot read ({exc.strerror or exc})") from None
        warnings.append(LoadWarning(None, f"{path.name}: cannot read ({exc.strerror or exc}), ignored"))
        return []
    except ValueError as exc:
        if required:
            raise LoadError(f"{path}: not valid JSON ({exc})") from None
        warnings.append(LoadWarning(None, f"{path.name}: not valid JSON ({exc}), ignored"))
        return []
    if not isinstance(doc, list):
        if required:
            raise LoadError(f"{path}: not a JSON array of messages")
        warnings.append(LoadWarning(None, f"{path.name}: not a JSON array, ignored"))
        return []
    return doc


def _message(raw: dict) -> Message:
    message = anthropic_message(raw)
    message.timestamp = iso_from_ms(raw.get("ts"))
    info = raw.get("modelInfo") if isinstance(raw.get("modelInfo"), dict) else {}
    message.model = opt_str(info.get("modelId")) or opt_str(info.get("id"))
    if raw.get("isTruncationMarker"):
        message.kind = "meta"
    return message


def _cline_visible(raw: list[dict], ui: list) -> set[int]:
    """The api indices Cline sends: all but the last recorded `conversationHistoryDeletedRange` (first pair kept)."""
    deleted = None
    for m in ui:
        if isinstance(m, dict) and isinstance(m.get("conversationHistoryDeletedRange"), list):
            deleted = m["conversationHistoryDeletedRange"]
    everything = set(range(len(raw)))
    if not (isinstance(deleted, list) and len(deleted) == 2 and all(opt_int(x) is not None for x in deleted)):
        return everything
    start, end = max(2, deleted[0]), deleted[1]
    return everything - set(range(start, end + 1))


def _repair_after_truncation(messages: list[Message], after: int | None) -> None:
    """What Cline does to the first message after a dropped range before sending: its tool results lose their uses,
    so they go; the first assistant message's tool uses get "result missing" results there instead
    (`applyContextHistoryUpdates`, `ensureToolResultsFollowToolUse`)."""
    if after is None or messages[after].role != "user" or len(messages) < 2:
        return
    message = messages[after]
    kept = [b for b in message.blocks if b.type != "tool_result"]
    uses = [b.tool_id for b in messages[1].tool_uses()] if messages[1].role == "assistant" else []
    message.blocks = [Block("tool_result", "result missing", tool_id=u) for u in uses] + kept
    message.kind = "tool_result" if uses else ("prompt" if kept else message.kind)


def _roo_visible(raw: list[dict]) -> set[int]:
    """The api indices Roo sends (`getEffectiveApiHistory`): from the newest summary on, less truncated messages."""
    summaries = [i for i, m in enumerate(raw) if m.get("isSummary")]
    start = summaries[-1] if summaries else 0
    markers = {opt_str(m.get("truncationId")) for m in raw[start:] if m.get("isTruncationMarker")} - {None}
    return {i for i in range(start, len(raw)) if opt_str(raw[i].get("truncationParent")) not in markers}


def _apply_context_history(messages: list[Message], path: Path, warnings: list[LoadWarning]) -> None:
    """Cline's substitutions (`[[messageIndex, [editType, [[blockIndex, [[ts, "text", [text], meta], ...]]]]]]`):
    the latest text update of each block replaces its text (a tool result's first inner text block)."""
    if not path.is_file():
        return
    try:
        updates = loads(path.read_bytes())
        for message_index, (_edit_type, blocks) in updates:
            for block_index, changes in blocks:
                kind, update = changes[-1][1], changes[-1][2]
                if kind != "text" or not 0 <= message_index < len(messages):
                    continue
                message = messages[message_index]
                if 0 <= block_index < len(message.blocks):
                    message.blocks[block_index] = _with_text(message.blocks[block_index], str(update[0]))
    except (OSError, ValueError, TypeError, IndexError, KeyError) as exc:
        warnings.append(LoadWarning(None, f"{CONTEXT_HISTORY}: not in the expected shape ({type(exc).__name__}), "
                                          "its substitutions are not applied"))


def _with_text(block: Block, text: str) -> Block:
    if block.type == "tool_result" and block.content:
        first = block.content[0]
        if first.type == "text":
            return Block("tool_result", tool_id=block.tool_id, is_error=block.is_error,
                         content=[Block("text", text)] + block.content[1:])
    if block.type in ("text", "tool_result"):
        return Block(block.type, text, tool_id=block.tool_id, is_error=block.is_error)
    return block


def _pre_tokens(ui: list) -> int | None:
    """The context before the newest condense or truncation, as Roo recorded it."""
    for m in reversed(ui):
        if isinstance(m, dict):
            for key in ("contextCondense", "contextTruncation"):
                if isinstance(m.get(key), dict):
                    return opt_int(m[key].get("prevContextTokens"))
    return None


def _models(path: Path) -> list[str]:
    try:
        doc = loads(path.read_bytes())
    except (OSError, ValueError):
        return []
    usage = doc.get("model_usage") if isinstance(doc, dict) else None
    return [u["model_id"] for u in usage or () if isinstance(u, dict) and isinstance(u.get("model_id"), str)]


def _requests(s: Session, ui: list, raw: list[dict], position: dict[int, int], models: list[str], roo: bool) -> None:
    """One Request per `api_req_started` that carries usage. Its reply is the assistant message after the last
    message it saw (`conversationHistoryIndex`, which Cline records); without that index (Roo) requests and
    assistant messages are paired in order."""
    replies = iter([i for i, m in enumerate(raw) if m.get("role") == "assistant"])
    for n, m in enumerate(ui):
        if not isinstance(m, dict) or m.get("say") != "api_req_started":
            continue
        try:
            info = json.loads(m.get("text") or "")
        except (TypeError, ValueError, RecursionError):
            s.warnings.append(LoadWarning(None, f"{UI}: entry {n + 1} (api_req_started) has no readable usage"))
            continue
        if not isinstance(info, dict) or not any(k in info for k in ("tokensIn", "tokensOut")):
            continue  # started, never finished (cancelled before any output)
        seen = opt_int(m.get("conversationHistoryIndex"))
        reply = seen + 1 if seen is not None else next(replies, None)
        if reply is None or reply not in position or raw[reply].get("role") != "assistant":
            continue
        index = position[reply]
        read, write, given = (as_int(info.get(k)) for k in ("cacheReads", "cacheWrites", "tokensIn"))
        uncached = given - read - write if roo and info.get("apiProtocol") == "openai" and given >= read + write \
            else given  # Roo's OpenAI-protocol figures include the cache in tokensIn
        model_info = m.get("modelInfo") if isinstance(m.get("modelInfo"), dict) else {}
        model = opt_str(model_info.get("modelId")) or s.messages[index].model or (models[-1] if models else None)
        rid = f"ui-{m.get('ts', n)}"
        s.requests.append(Request(rid, model, uncached, write, read, as_int(info.get("tokensOut")),
                                  message_index=index, seen_start=s.context_start if index >= s.context_start else 0,
                                  seen_end=index, timestamp=s.messages[index].timestamp))
        s.messages[index].response_id = rid
        s.messages[index].model = s.messages[index].model or model
    s.requests.sort(key=lambda r: r.message_index)


def looks_like_ui_messages(doc: Any) -> bool:
    return isinstance(doc, list) and bool(doc) and all(
        isinstance(m, dict) and m.get("type") in ("say", "ask") and "ts" in m for m in doc[:20])
