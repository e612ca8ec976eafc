"""Qwen Code sessions: `~/.qwen/projects/<cwd with every non-alphanumeric character as '-'>/chats/<session-id>.jsonl`
(`$QWEN_RUNTIME_DIR`, else `$QWEN_HOME`, replaces `~/.qwen`), docs/qwen-code-format.md.

Records `{uuid, parentUuid, sessionId, timestamp, type, subtype, provenance, cwd, version, message{role, parts},
usageMetadata, contextWindowSize, systemPayload}` form a tree like Claude Code's. Qwen Code rebuilds the model's
history the way this loader does (`prepareTranscriptRecords` and `SessionApiHistoryAccumulator` in its core):
records sharing a uuid are fragments of one (parts joined, the last usage kept); the active chain runs from the
newest conversation record back through `parentUuid`; along it, `user`, `assistant` and `tool_result` records with
a message are turns (Gemini API parts, `parts.py`; thoughts are left out, as they are not sent back;
`realtime_message` ones are not sent, `mid_turn_user_message` ones join the user turn before them), a `system`
record with subtype `chat_compression` replaces the history with its `systemPayload.compressedHistory` (a
compaction: the history before it stays in `messages`), a `slash_command` result that was never sent takes back
the command's user turn, and every other system record is bookkeeping. Each assistant record's `usageMetadata` is
one Request; `contextWindowSize` is the window the session states.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspector.core.formats.blocks import as_int, opt_int, opt_str
from inspector.core.formats.harness_config import Stated, settings_share, system_settings
from inspector.core.formats.jsonl import ObjectLoader, UnknownKinds
from inspector.core.formats.parts import blocks_from_parts, part_text
from inspector.core.model import Block, Compaction, Message, Request, Session

RECORD_TYPES = frozenset({"user", "assistant", "tool_result", "system"})
NOT_CONVERSATION = frozenset({"session_artifact_event", "session_artifact_snapshot", "session_sources_snapshot",
                              "managed_session_header_v1", "managed_session_event_v1", "managed_session_commit_v1"})
SUMMARY_TAG = "<state_snapshot>"
ACK = "Got it. Thanks for the additional context"
META_PREFIXES = ("<system-reminder>", "<session_context>", "<task-notification>")
TRIGGERS = {"token_limit": "auto", "manual": "manual"}  # chat_compression info.triggerReason, as our triggers


@dataclass(slots=True)
class _Fragment:
    obj: dict
    line: int
    offset: int


@dataclass(slots=True)
class _Node:
    parent: str | None
    fragments: list[_Fragment] = field(default_factory=list)

    @property
    def first(self) -> dict:
        return self.fragments[0].obj

    @property
    def line(self) -> int:
        return self.fragments[0].line


def qwen_settings(path: Path, cwd: str | None) -> Stated:
    """The `qwen-code` policy's options as Qwen Code's settings set them: `context.autoCompactThreshold` in the
    settings.json of the Qwen home that holds the session (`projects/<project>/chats/`), then in the project's own
    `.qwen/settings.json`, layered as Gemini CLI's are: system defaults, the user's, the project's, then the system
    settings, the later winning (`harness_config.system_settings`; lab scenario system-threshold)."""
    parents = path.parents
    if len(parents) < 4 or parents[2].name != "projects":
        return Stated()
    project = [Path(cwd) / ".qwen" / "settings.json"] if cwd else []
    defaults, system = system_settings("QWEN_CODE", "/etc/qwen-code", "/Library/Application Support/QwenCode")
    return settings_share([defaults, parents[3] / "settings.json", *project, system], "context",
                          "autoCompactThreshold")


class QwenLoader(ObjectLoader):
    """Feed parsed lines in file order with `feed`, then `build` a Session (as often as you like)."""

    def __init__(self, source: str) -> None:
        self.session = Session(source=source, format="qwen-code")
        self.nodes: dict[str, _Node] = {}
        self.leaf: str | None = None  # the newest conversation record: the end of the active chain
        self._cache: dict[tuple, list[Message]] = {}
        self._unknown = UnknownKinds("record", "records")
        self._chain_warnings: set[str] = set()
        self._settings: tuple[str | None, dict[str, float]] = ("", {})  # (the cwd they were read for, them)

    def take(self, line_no: int, offset: int, obj: dict) -> None:
        kind, uuid = opt_str(obj.get("type")), opt_str(obj.get("uuid"))
        if kind not in RECORD_TYPES:
            self._unknown.note(kind, line_no)
            return
        if not uuid:
            self.warn(line_no, f"{kind} record without a uuid, skipped")
            return
        s = self.session
        s.session_id = s.session_id or opt_str(obj.get("sessionId"))
        s.cwd = s.cwd or opt_str(obj.get("cwd"))
        s.version = opt_str(obj.get("version")) or s.version
        window = opt_int(obj.get("contextWindowSize"))
        if window and window > 0:
            s.window = window
        node = self.nodes.get(uuid)
        if node is None:
            node = self.nodes[uuid] = _Node(opt_str(obj.get("parentUuid")))
        node.fragments.append(_Fragment(obj, line_no, offset))
        if not (kind == "system" and obj.get("subtype") in NOT_CONVERSATION):
            self.leaf = uuid

    def _chain(self) -> list[str]:
        """The active chain, oldest first: from the leaf back through parentUuid (stopping at a missing parent or
        a cycle, as Qwen Code does, with a warning)."""
        chain: list[str] = []
        seen: set[str] = set()
        uuid = self.leaf
        while uuid:
            if uuid in seen:
                self._chain_warning(self.nodes[uuid].line, f"parentUuid cycle at {uuid}: the chain stops there")
                break
            seen.add(uuid)
            node = self.nodes[uuid]
            chain.append(uuid)
            if node.parent and node.parent not in self.nodes:
                self._chain_warning(node.line, f"parent {node.parent} is not in the file: the history before it is "
                                               "not part of the active chain")
                break
            uuid = node.parent
        chain.reverse()
        return chain

    def _chain_warning(self, line: int, message: str) -> None:
        if message not in self._chain_warnings:
            self._chain_warnings.add(message)
            self.warn(line, message)

    def build(self) -> Session:
        s = self.session
        messages: list[Message] = []
        requests: list[Request] = []
        compactions: list[Compaction] = []
        models: list[str] = []
        start = 0
        last_user: dict | None = None  # the last record that made a user turn (a slash command may take it back)
        for uuid in self._chain():
            node = self.nodes[uuid]
            obj = _merged(node)
            kind, subtype = obj.get("type"), opt_str(obj.get("subtype"))
            if kind == "system":
                if subtype == "chat_compression":
                    payload = obj.get("systemPayload") if isinstance(obj.get("systemPayload"), dict) else {}
                    history = payload.get("compressedHistory")
                    if isinstance(history, list):
                        start = len(messages)
                        compactions.append(_compaction(payload, start, node))
                        messages += self._cached((uuid, "compressed"), lambda: _compressed(history, node))
                        last_user = None
                elif subtype == "slash_command" and last_user is not None and _unsent(obj, last_user):
                    if messages and messages[-1].uuid == last_user.get("uuid"):
                        messages.pop()
                    last_user = None
                continue
            message_obj = obj.get("message")
            if not isinstance(message_obj, dict) or subtype == "realtime_message":
                continue
            made = self._cached((uuid, len(node.fragments)), lambda: [_turn(obj, node)])
            message = made[0]
            if subtype == "mid_turn_user_message" and messages and messages[-1].role == "user" \
                    and messages[-1].kind != "tool_result":
                previous = messages[-1]
                messages[-1] = merged = previous.copy_with(blocks=previous.blocks + message.blocks)
                merged.lines = previous.lines + message.lines
                continue
            messages.append(message)
            last_user = obj if kind == "user" else None
            usage = obj.get("usageMetadata")
            if kind == "assistant" and isinstance(usage, dict) and as_int(usage.get("promptTokenCount")) > 0:
                model = opt_str(obj.get("model"))
                cached = as_int(usage.get("cachedContentTokenCount"))  # inside promptTokenCount
                requests.append(Request(uuid, model, max(0, as_int(usage.get("promptTokenCount")) - cached), 0,
                                        cached, as_int(usage.get("candidatesTokenCount")),
                                        message_index=len(messages) - 1, seen_start=start,
                                        seen_end=len(messages) - 1, line=_usage_line(node),
                                        timestamp=opt_str(obj.get("timestamp")),
                                        thinking_tokens=as_int(usage.get("thoughtsTokenCount"))))
                if model and model not in models:
                    models.append(model)
        warnings = list(s.warnings) + self._unknown.warnings()
        if self._settings[0] != s.cwd:  # read once its records have said where the session ran
            self._settings = (s.cwd, qwen_settings(Path(s.source), s.cwd))
        return s.copy_with(messages=messages, requests=requests, compactions=compactions, warnings=warnings,
                           models=models, compaction_settings=self._settings[1].copy())

    def _cached(self, key: tuple, make) -> list[Message]:
        made = self._cache.get(key)
        if made is None:
            made = self._cache[key] = make()
        return made


def _merged(node: _Node) -> dict:
    """A record's fragments as one: parts joined in order, the last usage, the first model and tool result."""
    if len(node.fragments) == 1:
        return node.first
    base = dict(node.first)
    parts: list = []
    role = None
    for fragment in node.fragments:
        obj = fragment.obj
        message = obj.get("message")
        if isinstance(message, dict):
            role = role or message.get("role")
            parts += message.get("parts") if isinstance(message.get("parts"), list) else []
        for key in ("usageMetadata", "contextWindowSize"):
            if key in obj:
                base[key] = obj[key]
        for key in ("model", "toolCallResult"):
            if key in obj and key not in base:
                base[key] = obj[key]
    base["message"] = {"role": role, "parts": parts}
    return base


def _usage_line(node: _Node) -> int:
    lines = [f.line for f in node.fragments if "usageMetadata" in f.obj]
    return lines[-1] if lines else node.line


def _blocks(parts: Any) -> list[Block]:
    """A turn's parts as sent back: thoughts (`thought: true` parts) are not (the requests of the lab's
    OpenAI-compatible runs carry no reasoning)."""
    return [b for b in blocks_from_parts(parts) if b.type != "thinking"]


def _turn(obj: dict, node: _Node) -> Message:
    message = obj["message"]
    blocks = _blocks(message.get("parts"))
    role = "assistant" if message.get("role") == "model" or obj.get("type") == "assistant" else "user"
    if role == "assistant":
        kind = "assistant"
    elif any(b.type == "tool_result" for b in blocks):
        kind = "tool_result"
    elif obj.get("provenance") not in (None, "real_user") or part_text(message.get("parts")).lstrip().startswith(
            META_PREFIXES):
        kind = "meta"
    else:
        kind = "prompt"
    return Message.of(role, kind, blocks, uuid=opt_str(obj.get("uuid")),  # type: ignore[arg-type]
                      parent_uuid=opt_str(obj.get("parentUuid")), line=node.fragments[0].line,
                      more_lines=tuple(f.line for f in node.fragments[1:]),
                      offset=node.fragments[0].offset, timestamp=opt_str(obj.get("timestamp")),
                      model=opt_str(obj.get("model")), response_id=opt_str(obj.get("uuid")) if
                      role == "assistant" and isinstance(obj.get("usageMetadata"), dict) else None)


def _compressed(history: list, node: _Node) -> list[Message]:
    """The compressed history a chat_compression record holds, as messages on that record's line."""
    out = []
    for n, content in enumerate(history):
        if not isinstance(content, dict):
            continue
        parts = content.get("parts")
        blocks = _blocks(parts)
        text = part_text(parts)
        if content.get("role") == "model":
            role, kind = "assistant", "summary_ack" if text.startswith(ACK) else "assistant"
        else:
            role = "user"
            kind = "tool_result" if any(b.type == "tool_result" for b in blocks) else \
                "compact_summary" if SUMMARY_TAG in text else "meta"
        out.append(Message(role, kind, blocks, uuid=f"{node.first.get('uuid')}:{n}",  # type: ignore[arg-type]
                           line=node.line, offset=node.fragments[0].offset,
                           timestamp=opt_str(node.first.get("timestamp"))))
    return out


def _compaction(payload: dict, index: int, node: _Node) -> Compaction:
    info = payload.get("info") if isinstance(payload.get("info"), dict) else {}
    reason = opt_str(info.get("triggerReason"))
    before, after = opt_int(info.get("originalTokenCount")), opt_int(info.get("newTokenCount"))
    return Compaction("compact", index, trigger=TRIGGERS.get(reason or "", reason), pre_tokens=before,
                      tokens_saved=before - after if before is not None and after is not None else None,
                      line=node.line, timestamp=opt_str(node.first.get("timestamp")))


def _unsent(obj: dict, user: dict) -> bool:
    """A slash command's result record that was never sent to the model, answering the user turn that typed the
    command: Qwen Code drops that turn from the history it rebuilds."""
    payload = obj.get("systemPayload") if isinstance(obj.get("systemPayload"), dict) else {}
    items = payload.get("outputHistoryItems")
    parts = (user.get("message") or {}).get("parts") if isinstance(user.get("message"), dict) else None
    return (payload.get("phase") == "result" and payload.get("sentToModel") is not True and isinstance(items, list)
            and bool(items) and all(isinstance(i, dict) and i.get("type") == "assistant" for i in items)
            and user.get("subtype") is None and isinstance(parts, list) and len(parts) == 1
            and isinstance(parts[0], dict) and set(parts[0]) == {"text"}
            and parts[0]["text"] == payload.get("rawCommand"))
