"""Codex CLI rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-<ts>-<uuid>.jsonl`), FORMATS.md section 2 and
docs/codex-format.md.

The model's context is the `response_item` stream: consecutive model-side items (reasoning, assistant text, tool
calls) form one assistant message, consecutive tool outputs one tool_result message. `event_msg` items mostly repeat
those for the UI and are skipped. Usage comes two ways:

- Codex 0.171 writes a `token_usage_record{response_id, usage}` right after each response's items: one Request per
  record, for the model output just before it (exact).
- Older rollouts only have `token_count` events (one Request per distinct cumulative total; Codex writes the same
  figure several times). Where they sit differs: 0.58 writes a response's `token_count` *before* that response's
  items (they are recorded once the response has completed), other files after them. The first usage of a turn
  tells which: before any model output of the turn, the figure belongs to the output that follows it.

A response's `reasoning_output_tokens` is the size of its encrypted reasoning, which Codex sends back with later
requests: the loader puts it on the reasoning blocks (`Block.tokens`), the only size the rollout states for them.
The summary request of a compaction (0.171 compacts with an ordinary request: history, no tools, a summary prompt
the rollout does not record) is a Request of kind "compaction". Like the Claude Code loader it is stateful: `feed`
lines, `build` any time.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from inspector.core.formats.blocks import as_int, blocks_from_content, image_from_url, opt_int, opt_str
from inspector.core.formats.harness_config import Stated, read_toml, up_to_git_root
from inspector.core.formats.jsonl import ObjectLoader, UnknownKinds, loads
from inspector.core.formats.values import counted
from inspector.core.model import Block, Compaction, Message, Request, Session

# Text Codex injects as user messages (environment, AGENTS.md, instructions): context, but not typed by the user.
META_PREFIXES = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<user_shell_command>",
                 "<turn_aborted>")
SKIPPED_ITEMS = frozenset({"ghost_snapshot"})
UI_EVENTS = frozenset({"user_message", "agent_message", "agent_reasoning", "agent_reasoning_raw_content",
                       "turn_aborted", "task_started", "task_complete", "thread_settings_applied",
                       "exec_command_begin", "exec_command_end",
                       "patch_apply_begin", "patch_apply_end", "mcp_tool_call_begin", "mcp_tool_call_end",
                       "web_search_begin", "web_search_end", "turn_diff", "entered_review_mode",
                       "exited_review_mode", "agent_reasoning_section_break", "view_image_tool_call", "plan_update",
                       "background_event", "stream_error", "error", "warning", "reasoning_content_delta",
                       "item_completed", "undo_started", "undo_completed"})
CALL_ITEMS = frozenset({"function_call", "custom_tool_call", "local_shell_call", "web_search_call"})
OUTPUT_ITEMS = frozenset({"function_call_output", "custom_tool_call_output"})
LEGACY_ITEMS = CALL_ITEMS | OUTPUT_ITEMS | {"message", "reasoning"}
# Records that only keep the harness's own state: `world_state` (what its developer messages are built from, the
# messages themselves being recorded), `state` (older rollouts).
STATE_RECORDS = frozenset({"state", "world_state"})


SYSTEM_CONFIG = Path("/etc/codex/config.toml")


def codex_settings(rollout: Path, cwd: str | None = None) -> Stated:
    """The `codex` policy's options as Codex's config layers set them for the Codex home holding `rollout` (its
    `sessions/YYYY/MM/DD/`) and the session's `cwd`: `model_auto_compact_token_limit`, which Codex takes when it is
    below its default line, from the last layer that sets it. The layers, as 0.171 stacks them: /etc/codex's
    config.toml, the home's, then for a project the home's config trusts (`[projects."<dir>"] trust_level =
    "trusted"`, for the session's directory or its git root) each `.codex/config.toml` from that root down to the
    directory (lab scenarios project-limit-trusted and -untrusted). A `--profile NAME` layer (`NAME.config.toml`) is
    not recorded in the rollout, so not read."""
    parents = rollout.parents
    if len(parents) < 5 or parents[3].name not in ("sessions", "archived_sessions"):
        return Stated()
    user = read_toml(parents[4] / "config.toml")
    layers = [(SYSTEM_CONFIG, read_toml(SYSTEM_CONFIG)), (parents[4] / "config.toml", user)]
    if cwd:
        folders = up_to_git_root(Path(cwd))
        if not (folders[-1] / ".git").exists():  # no repository: the directory is the project
            folders = folders[:1]
        projects = user.get("projects") if isinstance(user.get("projects"), dict) else {}
        if any(isinstance(projects.get(str(d)), dict) and projects[str(d)].get("trust_level") == "trusted"
               for d in (folders[0], folders[-1])):
            layers += [(d / ".codex" / "config.toml", read_toml(d / ".codex" / "config.toml"))
                       for d in reversed(folders)]
    stated = Stated()
    for path, layer in layers:
        found = layer.get("model_auto_compact_token_limit")
        if found.__class__ is int and found > 0:
            stated.set("auto_compact_limit", found, path)
    return stated


class CodexLoader(ObjectLoader):
    def __init__(self, source: str) -> None:
        self.session = Session(source=source, format="codex", compaction_settings=codex_settings(Path(source)))
        self.model: str | None = None
        self._last_total: Any = None
        self._open: Message | None = None  # the message consecutive items of the same side are appended to
        self._unknown = UnknownKinds()
        self._compacted_pending = False  # a `compacted` item was just seen: its `context_compacted` event repeats it
        self._records = False  # token_usage_record lines (0.171): they, not token_count, give the requests
        self._before: bool | None = None  # token_count layout: a response's usage precedes its items (0.58)
        self._pending: Request | None = None  # that usage, waiting for the first item of its response
        self._turn_output = False  # model output was seen since the last user input
        self._reasoning = 0  # reasoning_output_tokens of the last usage read
        # The trigger of a compaction, which the rollout does not record: `/compact` runs as a task of its own that
        # does nothing else (codex-rs CompactTask), an auto-compaction inline in a turn (before or between its
        # model calls). The current task's compactions whose trigger is not known yet (their positions), and
        # whether the task did a turn's work (`_turn_work`: the summary a compaction's own request writes is none).
        self._in_task = False
        self._untold: list[int] = []
        self._task_work = False

    def take(self, line_no: int, offset: int, obj: dict) -> None:
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
            cwd = opt_str(payload.get("cwd")) or s.cwd
            if cwd != s.cwd:  # the project's own config layers apply from here
                s.cwd, s.compaction_settings = cwd, codex_settings(Path(s.source), cwd)
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
            if _turn_work(payload):
                self._task_work = True
                self._tell("auto")
        elif kind == "event_msg":
            self._event(line_no, ts, payload)
        elif kind == "compacted":
            self._compacted(line_no, offset, ts, payload)
        elif kind == "token_usage_record":
            self._record(line_no, ts, payload)
        elif kind not in STATE_RECORDS:
            self._unknown.note(str(kind), line_no)

    def _item(self, line_no: int, offset: int, ts: str | None, item: dict) -> None:
        kind = opt_str(item.get("type"))
        if kind in SKIPPED_ITEMS:
            return
        converted = response_item(item)
        if converted is None:
            self._unknown.note(f"response_item/{kind}", line_no)
            return
        problem = item_problem(item)
        if problem:
            self.warn(line_no, problem)
        role, kind, blocks, joins = converted
        if joins:
            self._append(role, kind, blocks, line_no, offset, ts)
        else:
            self._add(Message(role, kind, blocks), line_no, offset, ts)  # type: ignore[arg-type]

    def _event(self, line_no: int, ts: str | None, payload: dict) -> None:
        kind = opt_str(payload.get("type"))
        if kind == "token_count":
            self._token_count(line_no, ts, payload.get("info"))
        elif kind == "context_compacted":
            if not self._compacted_pending:
                self._compaction(line_no, ts)
            self._compacted_pending = False
        elif kind == "task_started":
            self._in_task, self._task_work, self._untold = True, False, []
        elif kind == "task_complete" or kind == "turn_aborted":
            self._tell("auto" if self._task_work else "manual")
            self._in_task = False
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
        if self._records or not isinstance(last, dict) or total == self._last_total:
            return  # the records give the requests; or the same figure written again
        if not as_int(last.get("input_tokens")) and not as_int(last.get("output_tokens")):
            return  # Codex's own estimate of the history after a compaction: no response measured it
        self._last_total = total
        if self._before is None:
            self._before = not self._turn_output
        if self._before:  # the usage of the response whose items come next
            self._settle_pending()
            n = len(s.messages)
            self._pending = self._request(f"codex-line-{line_no}", last, n, line_no, ts)
            self._open = None
            return
        self._attach(self._request(f"codex-line-{line_no}", last, 0, line_no, ts), line_no)

    def _record(self, line_no: int, ts: str | None, payload: dict) -> None:
        """A 0.171 `token_usage_record`: the usage of the response whose items were just written."""
        usage = payload.get("usage")
        if not isinstance(usage, dict):
            self.warn(line_no, "token usage record without usage, skipped")
            return
        self._records = True
        self._settle_pending()
        rid = opt_str(payload.get("response_id")) or f"codex-line-{line_no}"
        self._attach(self._request(rid, usage, 0, line_no, ts), line_no)

    def _request(self, rid: str, usage: dict, index: int, line_no: int, ts: str | None) -> Request:
        cached = as_int(usage.get("cached_input_tokens"))  # already inside input_tokens: never add it again
        written = as_int(usage.get("cache_write_input_tokens"))
        fresh = max(0, as_int(usage.get("input_tokens")) - cached - written)
        request = Request(rid, self.model, fresh, written, cached, as_int(usage.get("output_tokens")),
                          message_index=index, seen_start=self.session.context_start, seen_end=index, line=line_no,
                          timestamp=ts)
        self._reasoning = counted(as_int(usage.get("reasoning_output_tokens")), "usage reasoning output tokens",
                                  line_no, self.warn)
        self.session.requests.append(request)
        if self.model and self.model not in self.session.models:
            self.session.models.append(self.model)
        return request

    def _attach(self, request: Request, line_no: int) -> None:
        """Link `request` to the model output just before it (the after-items layouts)."""
        s = self.session
        index = next((i for i in range(len(s.messages) - 1, -1, -1) if s.messages[i].role == "assistant"), None)
        if index is None:
            s.requests.pop()
            self.warn(line_no, "token usage before any model output, skipped")
            return
        self._link(request, index)
        self._open = None  # the next model output belongs to a new response

    def _link(self, request: Request, index: int) -> None:
        s = self.session
        request.message_index = request.seen_end = index
        message = s.messages[index]
        if message.response_id is None:
            message.response_id = request.id
            message.model = self.model
        _spread_reasoning(message, self._reasoning)

    def _settle_pending(self) -> None:
        """A before-layout usage whose response wrote no item: it measured the last model output there is."""
        request, self._pending = self._pending, None
        if request is None:
            return
        s = self.session
        index = next((i for i in range(len(s.messages) - 1, -1, -1) if s.messages[i].role == "assistant"), None)
        if index is None:
            s.requests.remove(request)
            self.warn(request.line, "token usage before any model output, skipped")
        else:
            self._link(request, index)

    def _compacted(self, line_no: int, offset: int, ts: str | None, payload: dict) -> None:
        summary = opt_str(payload.get("message")) or ""
        self._settle_pending()
        self._mark_summary_request(summary)
        self._compaction(line_no, ts)
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

    def _mark_summary_request(self, summary: str) -> None:
        """The request that wrote `summary` (its answer is the last model output, quoted in the summary message)
        is the compaction's own request."""
        s = self.session
        if not s.requests or not summary:
            return
        request = s.requests[-1]
        if request.message_index >= len(s.messages):
            return
        answer = s.messages[request.message_index].text().strip()
        if request.seen_start == s.context_start and answer and answer in summary:
            request.kind = "compaction"

    def _compaction(self, line_no: int, ts: str | None) -> None:
        s = self.session
        self._open = None
        if s.compactions and s.compactions[-1].index == len(s.messages):
            return  # the same compaction, recorded by both its item and its event
        before = s.requests[-1].measured_context if s.requests else None
        trigger = ("auto" if self._task_work else None) if self._in_task else None
        if self._in_task and trigger is None:
            self._untold.append(len(s.compactions))
        s.compactions.append(Compaction("compact", len(s.messages), pre_tokens=before, line=line_no, timestamp=ts,
                                        trigger=trigger))

    def _tell(self, trigger: str) -> None:
        """The trigger of the current task's compactions not known until now (new objects: a session built
        before holds the old ones)."""
        compactions = self.session.compactions
        for i in self._untold:
            compactions[i] = replace(compactions[i], trigger=trigger)
        self._untold.clear()

    def _append(self, role: str, kind: str, blocks: list[Block], line_no: int, offset: int, ts: str | None) -> None:
        """Add blocks to the open message of the same side, or start one."""
        open_ = self._open
        if open_ is not None and open_.role == role and open_.kind == kind:
            open_.blocks.extend(blocks)
            open_.lines += (line_no,)
            if role == "assistant" and open_.response_id is not None:
                _spread_reasoning(open_, self._reasoning)  # before-layout: usage came first
            return
        self._add(Message(role, kind, list(blocks)), line_no, offset, ts)  # type: ignore[arg-type]

    def _add(self, message: Message, line_no: int, offset: int, ts: str | None) -> None:
        message.lines, message.offset, message.timestamp = (line_no,), offset, ts
        if message.role == "assistant":
            self._turn_output = True
        elif message.kind in ("prompt", "meta"):
            self._turn_output = False
            self._settle_pending()
        self.session.messages.append(message)
        self._open = message
        self._compacted_pending = False  # a context_compacted event after new messages is a new compaction
        if message.role == "assistant" and self._pending is not None:
            request, self._pending = self._pending, None
            self._link(request, len(self.session.messages) - 1)

    def build(self) -> Session:
        s = self.session
        if self._pending is not None:  # a live file: keep the pending usage on the last output for now
            pending = self._pending
            self._settle_pending()
            self._pending = pending if pending in s.requests else None
        warnings = list(s.warnings) + self._unknown.warnings()
        return s.copy_with(messages=list(s.messages), requests=list(s.requests), compactions=list(s.compactions),
                           warnings=warnings, models=list(s.models))


def _turn_work(item: dict) -> bool:
    """Whether a response item is a turn's own: a prompt the user typed, a tool call or its output."""
    kind = opt_str(item.get("type"))
    if kind in CALL_ITEMS or kind in OUTPUT_ITEMS:
        return True
    if kind != "message" or item.get("role") != "user":
        return False
    converted = response_item(item)
    return converted is not None and converted[1] == "prompt"


def _spread_reasoning(message: Message, tokens: int) -> None:
    """Give a response's reasoning tokens to its encrypted reasoning blocks that have no size yet (in equal
    shares; the usage states one figure per response). Their summaries are for the UI: the model gets the
    reasoning back, not the summary, so a summary beside an encrypted item counts nothing."""
    blocks = message.blocks
    hidden = [k for k, b in enumerate(blocks) if b.type == "redacted_thinking" and b.tokens is None]
    if not hidden:
        return
    given = sum(b.tokens or 0 for b in blocks if b.type == "redacted_thinking")  # to the response's earlier items
    share, extra = divmod(max(0, tokens - given), len(hidden))
    for n, k in enumerate(hidden):
        blocks[k].tokens = share + (1 if n < extra else 0)
        if k and blocks[k - 1].type == "thinking" and blocks[k - 1].tokens is None:
            blocks[k - 1].tokens = 0


def response_item(item: dict) -> tuple[str, str, list[Block], bool] | None:
    """A Responses-API item (a rollout's `response_item`, a request's `input`, a response's `output`) as (role,
    kind, blocks, joins): `joins` when it belongs with the items of the same side around it (reasoning, text and
    tool calls of one answer; outputs of parallel calls), else it is a message of its own. None for an item type
    this does not know."""
    kind = opt_str(item.get("type")) or ("message" if "role" in item else None)
    if kind == "message":
        role = item.get("role")
        content = item.get("content")
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else [
            _content_part(p) for p in (content if isinstance(content, list) else ()) if isinstance(p, dict)]
        blocks = blocks_from_content(parts)
        if role == "assistant":
            return "assistant", "assistant", blocks, True
        if role in ("developer", "system"):
            return "system", "system", blocks, False
        text = blocks[0].text.lstrip() if blocks and blocks[0].type == "text" else ""
        return "user", "meta" if text.startswith(META_PREFIXES) else "prompt", blocks, False
    if kind == "reasoning":
        listed = item.get("summary")
        summary = "\n\n".join(opt_str(p.get("text")) or "" for p in (listed if listed.__class__ is list else ())
                               if p.__class__ is dict)
        blocks = [Block("thinking", summary)] if summary else []
        encrypted = item.get("encrypted_content")
        if isinstance(encrypted, str) and encrypted:  # opaque: its size in tokens is unknown, so no text
            blocks.append(Block.of("redacted_thinking", size=len(encrypted)))
        return "assistant", "assistant", blocks, True
    if kind in CALL_ITEMS:
        return "assistant", "assistant", [_call_block(item)], True
    if kind in OUTPUT_ITEMS:
        return "user", "tool_result", [_output_block(item)], True
    return None


_TYPED = {"message": ("content", (str, list)), "reasoning": ("summary", (list,))}  # what `response_item` reads


def item_problem(item: dict) -> str | None:
    """What `response_item` had to leave out of `item` because of a value of the wrong type (None: nothing)."""
    kind = opt_str(item.get("type")) or ("message" if "role" in item else None)
    field, allowed = _TYPED.get(kind or "", ("", ()))
    value = item.get(field) if field else None
    if value is None or value.__class__ in allowed:
        return None
    return f"{kind} {field} is {type(value).__name__}, not {' or '.join(t.__name__ for t in allowed)}: not read"


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
    return Block.of("tool_use", tool_id=opt_str(item.get("call_id")) or opt_str(item.get("id")),
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
