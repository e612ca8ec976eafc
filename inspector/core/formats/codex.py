"""Codex CLI rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-<ts>-<uuid>.jsonl`), FORMATS.md section 2.

The model's context is the `response_item` stream: consecutive model-side items (reasoning, assistant text, tool
calls) form one assistant message, consecutive tool outputs one tool_result message. `event_msg` items mostly repeat
those for the UI and are skipped, except `token_count` (one Request per distinct value; Codex writes the same figure
several times) and `context_compacted`. Like the Claude Code loader it is stateful: `feed` lines, `build` any time.
"""

from __future__ import annotations

import json
from typing import Any

from inspector.core.formats.blocks import as_int, blocks_from_content, image_from_url, opt_int, opt_str
from inspector.core.formats.jsonl import Skipped, loads
from inspector.core.model import Block, Compaction, LoadWarning, Message, Request, Session

# Text Codex injects as user messages (environment, AGENTS.md, instructions): context, but not typed by the user.
META_PREFIXES = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<user_shell_command>",
                 "<turn_aborted>")
SKIPPED_ITEMS = frozenset({"ghost_snapshot"})
UI_EVENTS = frozenset({"user_message", "agent_message", "agent_reasoning", "agent_reasoning_raw_content",
                       "turn_aborted", "task_started", "task_complete", "exec_command_begin", "exec_command_end",
                       "patch_apply_begin", "patch_apply_end", "mcp_tool_call_begin", "mcp_tool_call_end",
                       "web_search_begin", "web_search_end", "turn_diff", "entered_review_mode",
                       "exited_review_mode", "agent_reasoning_section_break", "view_image_tool_call", "plan_update",
                       "background_event", "stream_error", "error", "warning", "reasoning_content_delta",
                       "item_completed", "undo_started", "undo_completed"})
CALL_ITEMS = frozenset({"function_call", "custom_tool_call", "local_shell_call", "web_search_call"})
OUTPUT_ITEMS = frozenset({"function_call_output", "custom_tool_call_output"})
LEGACY_ITEMS = CALL_ITEMS | OUTPUT_ITEMS | {"message", "reasoning"}


class CodexLoader:
    def __init__(self, source: str) -> None:
        self.session = Session(source=source, format="codex")
        self.model: str | None = None
        self._last_total: Any = None
        self._open: Message | None = None  # the message consecutive items of the same side are appended to
        self._unknown = Skipped()
        self._compacted_pending = False  # a `compacted` item was just seen: its `context_compacted` event repeats it

    def warn(self, line: int | None, message: str) -> None:
        self.session.warnings.append(LoadWarning(line, message))

    def feed(self, line_no: int, offset: int, obj: Any) -> None:
        if not isinstance(obj, dict):
            self.warn(line_no, f"not a JSON object ({type(obj).__name__}), skipped")
            return
        kind, payload = opt_str(obj.get("type")), obj.get("payload")
        if "payload" not in obj:  # the older rollout layout (before `{timestamp, type, payload}` lines)
            kind, payload = _legacy(obj)
        if not isinstance(payload, dict):
            self._unknown.note(str(kind), line_no)
            return
        s = self.session
        ts = opt_str(obj.get("timestamp"))
        if kind == "session_meta":
            s.session_id = opt_str(payload.get("id")) or s.session_id
            s.cwd = opt_str(payload.get("cwd")) or s.cwd
            s.version = opt_str(payload.get("cli_version")) or s.version
            instructions = payload.get("instructions") or payload.get("base_instructions")
            if isinstance(instructions, dict):
                instructions = instructions.get("text")
            if isinstance(instructions, str):
                s.system = instructions
        elif kind == "turn_context":
            self.model = opt_str(payload.get("model")) or self.model
            s.cwd = opt_str(payload.get("cwd")) or s.cwd
        elif kind == "response_item":
            self._item(line_no, offset, ts, payload)
        elif kind == "event_msg":
            self._event(line_no, ts, payload)
        elif kind == "compacted":
            self._compacted(line_no, offset, ts, payload)
        elif kind != "state":
            self._unknown.note(str(kind), line_no)

    def _item(self, line_no: int, offset: int, ts: str | None, item: dict) -> None:
        kind = opt_str(item.get("type"))
        if kind == "message":
            role = item.get("role")
            blocks = blocks_from_content([_content_part(p) for p in item.get("content") or () if isinstance(p, dict)])
            if role == "assistant":
                self._append("assistant", "assistant", blocks, line_no, offset, ts)
            elif role in ("developer", "system"):
                self._add(Message("system", "system", blocks), line_no, offset, ts)
            else:
                text = blocks[0].text.lstrip() if blocks and blocks[0].type == "text" else ""
                self._add(Message("user", "meta" if text.startswith(META_PREFIXES) else "prompt", blocks),
                          line_no, offset, ts)
        elif kind == "reasoning":
            summary = "\n\n".join(p.get("text", "") for p in item.get("summary") or () if isinstance(p, dict))
            blocks = [Block("thinking", summary)] if summary else []
            encrypted = item.get("encrypted_content")
            if isinstance(encrypted, str) and encrypted:  # opaque: its size in tokens is unknown, so no text
                blocks.append(Block("redacted_thinking", size=len(encrypted)))
            self._append("assistant", "assistant", blocks, line_no, offset, ts)
        elif kind in CALL_ITEMS:
            self._append("assistant", "assistant", [_call_block(item)], line_no, offset, ts)
        elif kind in OUTPUT_ITEMS:
            self._append("user", "tool_result", [_output_block(item)], line_no, offset, ts)
        elif kind not in SKIPPED_ITEMS:
            self._unknown.note(f"response_item/{kind}", line_no)

    def _event(self, line_no: int, ts: str | None, payload: dict) -> None:
        kind = opt_str(payload.get("type"))
        if kind == "token_count":
            self._token_count(line_no, ts, payload.get("info"))
        elif kind == "context_compacted":
            if not self._compacted_pending:
                self._compaction(line_no, ts)
            self._compacted_pending = False
        elif kind not in UI_EVENTS:
            self._unknown.note(f"event_msg/{kind}", line_no)

    def _token_count(self, line_no: int, ts: str | None, info: Any) -> None:
        if not isinstance(info, dict):
            return  # rate-limit only updates carry no usage
        s = self.session
        window = opt_int(info.get("model_context_window"))
        if window:
            s.window = window
        last, total = info.get("last_token_usage"), info.get("total_token_usage")
        if not isinstance(last, dict) or total == self._last_total:
            return  # the same figure written again
        self._last_total = total
        index = next((i for i in range(len(s.messages) - 1, -1, -1) if s.messages[i].role == "assistant"), None)
        if index is None:
            self.warn(line_no, "token count before any model output, skipped")
            return
        cached = as_int(last.get("cached_input_tokens"))  # already inside input_tokens: never add it again
        request = Request(f"codex-line-{line_no}", self.model, max(0, as_int(last.get("input_tokens")) - cached), 0,
                          cached, as_int(last.get("output_tokens")), message_index=index,
                          seen_start=s.context_start, seen_end=index, line=line_no, timestamp=ts)
        s.requests.append(request)
        message = s.messages[index]
        if message.response_id is None:
            message.response_id = request.id
            message.model = self.model
        if self.model and self.model not in s.models:
            s.models.append(self.model)
        self._open = None  # the next model output belongs to a new response

    def _compacted(self, line_no: int, offset: int, ts: str | None, payload: dict) -> None:
        self._compaction(line_no, ts)
        summary = opt_str(payload.get("message")) or ""
        history = payload.get("replacement_history")
        if isinstance(history, list):
            for item in history:
                if isinstance(item, dict):
                    self._item(line_no, offset, ts, item)
            for m in reversed(self.session.context):
                if m.role == "user" and summary and summary.strip() in m.text():
                    m.kind = "compact_summary"
                    break
            else:
                if summary:
                    self._add(Message("user", "compact_summary", [Block("text", summary)]), line_no, offset, ts)
        elif summary:
            self._add(Message("user", "compact_summary", [Block("text", summary)]), line_no, offset, ts)
        self._open = None
        self._compacted_pending = True

    def _compaction(self, line_no: int, ts: str | None) -> None:
        s = self.session
        self._open = None
        if s.compactions and s.compactions[-1].index == len(s.messages):
            return  # the same compaction, recorded by both its item and its event
        before = s.requests[-1].measured_context if s.requests else None
        s.compactions.append(Compaction("compact", len(s.messages), pre_tokens=before, line=line_no, timestamp=ts))

    def _append(self, role: str, kind: str, blocks: list[Block], line_no: int, offset: int, ts: str | None) -> None:
        """Add blocks to the open message of the same side, or start one."""
        open_ = self._open
        if open_ is not None and open_.role == role and open_.kind == kind:
            open_.blocks.extend(blocks)
            open_.lines += (line_no,)
            return
        self._add(Message(role, kind, list(blocks)), line_no, offset, ts)  # type: ignore[arg-type]

    def _add(self, message: Message, line_no: int, offset: int, ts: str | None) -> None:
        message.lines, message.offset, message.timestamp = (line_no,), offset, ts
        self.session.messages.append(message)
        self._open = message
        self._compacted_pending = False  # a context_compacted event after new messages is a new compaction

    def build(self) -> Session:
        s = self.session
        warnings = list(s.warnings) + self._unknown.warnings()
        return s.copy_with(messages=list(s.messages), requests=list(s.requests), compactions=list(s.compactions),
                           warnings=warnings, models=list(s.models))


def _legacy(obj: dict) -> tuple[str | None, Any]:
    """An older rollout line as (type, payload): a first line `{id, timestamp, instructions, git}` is the session
    meta, bare response items are response items, `{"record_type": "state"}` lines are bookkeeping."""
    if obj.get("record_type") == "state":
        return "state", {}
    if opt_str(obj.get("type")) in LEGACY_ITEMS:
        return "response_item", obj
    if "id" in obj and "timestamp" in obj and "type" not in obj:
        return "session_meta", obj
    return opt_str(obj.get("type")) or opt_str(obj.get("record_type")), None


def _content_part(part: dict) -> dict:
    """A Codex content item (`input_text`, `output_text`, `input_image`) as a Messages-API block."""
    kind = part.get("type")
    if kind in ("input_text", "output_text", "text"):
        return {"type": "text", "text": part.get("text", "")}
    if kind == "input_image":
        return image_from_url(part.get("image_url"))
    return part


def _call_block(item: dict) -> Block:
    kind = item.get("type")
    if kind == "function_call":
        args: Any = item.get("arguments")
        if isinstance(args, str):
            try:
                args = loads(args) if args.strip() else {}
            except ValueError:
                pass  # keep the malformed string: it is what the model produced
        name = item.get("name")
    elif kind == "custom_tool_call":
        args, name = item.get("input"), item.get("name")
    else:  # local_shell_call, web_search_call
        args, name = item.get("action"), kind.removesuffix("_call")
    return Block("tool_use", tool_id=opt_str(item.get("call_id")) or opt_str(item.get("id")),
                 tool_name=opt_str(name), input=args)


def _output_block(item: dict) -> Block:
    output = item.get("output")
    if isinstance(output, dict):
        output = output.get("content", output.get("content_items", output))
    if isinstance(output, list):
        return Block("tool_result", tool_id=opt_str(item.get("call_id")),
                     content=blocks_from_content([_content_part(p) for p in output if isinstance(p, dict)]))
    if not isinstance(output, str):
        output = json.dumps(output, ensure_ascii=False)
    return Block("tool_result", output, tool_id=opt_str(item.get("call_id")))
