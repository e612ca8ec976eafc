"""GitHub Copilot CLI sessions: `~/.copilot/session-state/<session id>/events.jsonl` (`$COPILOT_HOME/session-state`).

Every line is an event `{type, id, parentId, timestamp, data}`; the shapes are the package's own schema
(`schemas/session-events.schema.json` in `@github/copilot`, checked against 1.0.102 and files it wrote). What the
model saw is rebuilt from:
    system.message           the system prompt (`content`, exactly as sent): `Session.system`
    user.message             a prompt; `transformedContent` is what was sent (with the datetime and other wrapping)
    assistant.message        a reply: `reasoningText`, `content`, `toolRequests[] {toolCallId, name, arguments}`; the
                             chunks of one response share `apiCallId`
    tool.execution_complete  a tool's result (`result.content`, what the model was given; `error` when it failed)
    session.usage_record     one model call's usage (`usage.inputTokens` includes `cacheReadTokens`), tied to its
                             reply by `apiCallId`; `assistant.usage` (declared ephemeral, so not on disk in 1.0.102)
                             is read the same way when a file has it
    session.compaction_start / _complete   a background compaction: started when the context passed 80% of the
                             token limit, applied later; the summary replaces what the context held at the start,
                             and what came while it ran is kept, so the summary is placed where the compaction
                             started. Both record the agent's own count by part (`systemTokens`,
                             `toolDefinitionsTokens`, `conversationTokens`): `Session.breakdowns`
    session.truncation       messages dropped to fit `tokenLimit` (no summary)
    session.context_cleared  /clear
`tokenLimit` and `maxPromptTokens` give the window. Every other event (UI, permissions, hooks, telemetry, ...) is
bookkeeping and skipped.
"""

from __future__ import annotations

import json
from typing import Any

from inspector.core.formats.blocks import as_int, opt_int, opt_str
from inspector.core.formats.jsonl import ObjectLoader
from inspector.core.model import (CONVERSATION, SYSTEM_PROMPT, TOOL_DEFINITIONS, Block, Breakdown, Compaction,
                                  Message, Request, Session)

USAGE_EVENTS = frozenset({"session.usage_record", "assistant.usage"})
SIDE_CALLS = ("compaction", "sub-agent", "subagent", "sampling", "background")  # calls outside the main window


class CopilotLoader(ObjectLoader):
    def __init__(self, source: str) -> None:
        self.session = Session(source=source, format="copilot")
        self.model: str | None = None
        self._open: Message | None = None  # the message consecutive replies or results are appended to
        self._usage: dict[str, tuple[dict, int, str | None]] = {}  # apiCallId -> (usage, line, timestamp)
        self._started: int | None = None  # message count when the running compaction started

    def take(self, line_no: int, offset: int, obj: dict) -> None:
        kind, data = obj.get("type"), obj.get("data")
        if not isinstance(kind, str) or not isinstance(data, dict):
            self.warn(line_no, "event without a type and a data object, skipped")
            return
        ts = opt_str(obj.get("timestamp"))
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(self, line_no, offset, ts, data)
        elif kind in USAGE_EVENTS:
            self._usage_event(line_no, ts, data)

    # -- events -------------------------------------------------------------------------------------------------

    def _start(self, line_no: int, offset: int, ts: str | None, data: dict) -> None:
        s = self.session
        s.session_id = opt_str(data.get("sessionId")) or s.session_id
        s.version = opt_str(data.get("copilotVersion")) or s.version
        context = data.get("context")
        if isinstance(context, dict):
            s.cwd = opt_str(context.get("cwd")) or s.cwd
        self.model = opt_str(data.get("selectedModel")) or self.model

    def _model_change(self, line_no: int, offset: int, ts: str | None, data: dict) -> None:
        self.model = opt_str(data.get("newModel")) or self.model

    def _system(self, line_no: int, offset: int, ts: str | None, data: dict) -> None:
        content = data.get("content")
        if isinstance(content, str):
            self.session.system = content
        else:
            self.warn(line_no, "system.message without text content, skipped")

    def _user(self, line_no: int, offset: int, ts: str | None, data: dict) -> None:
        text = data.get("transformedContent")
        if not isinstance(text, str):
            text = data.get("content")
        if not isinstance(text, str):
            self.warn(line_no, "user.message without text content, skipped")
            return
        kind = "meta" if data.get("source") or data.get("isAutopilotContinuation") else "prompt"
        self._add(Message("user", kind, [Block("text", text)], uuid=opt_str(data.get("messageId"))),
                  line_no, offset, ts)

    def _assistant(self, line_no: int, offset: int, ts: str | None, data: dict) -> None:
        blocks: list[Block] = []
        reasoning = data.get("reasoningText")
        if isinstance(reasoning, str) and reasoning:
            blocks.append(Block.of("thinking", reasoning, signature=opt_str(data.get("reasoningOpaque"))))
        content = data.get("content")
        if isinstance(content, str) and content:
            blocks.append(Block("text", content))
        requests = data.get("toolRequests")
        for call in requests if isinstance(requests, list) else ():
            if isinstance(call, dict):
                blocks.append(Block.of("tool_use", tool_id=opt_str(call.get("toolCallId")),
                                       tool_name=opt_str(call.get("name")), input=call.get("arguments", {})))
        api_call = opt_str(data.get("apiCallId"))
        model = opt_str(data.get("model")) or self.model
        open_ = self._open
        if open_ is not None and open_.role == "assistant" and api_call and open_.response_id == api_call:
            open_.blocks.extend(blocks)  # a later chunk of the same response
            open_.lines += (line_no,)
            return
        message = Message("assistant", "assistant", blocks, uuid=opt_str(data.get("messageId")), model=model,
                          response_id=api_call)
        self._add(message, line_no, offset, ts)
        if model and model not in self.session.models:
            self.session.models.append(model)
        if api_call and api_call in self._usage:
            self._request(api_call, *self._usage.pop(api_call))

    def _reasoning(self, line_no: int, offset: int, ts: str | None, data: dict) -> None:
        text = data.get("content")
        if isinstance(text, str) and text:
            block = Block("thinking", text)
            if self._open is not None and self._open.role == "assistant":
                self._open.blocks.append(block)
                self._open.lines += (line_no,)
            else:
                self._add(Message("assistant", "assistant", [block], model=self.model), line_no, offset, ts)

    def _tool_result(self, line_no: int, offset: int, ts: str | None, data: dict) -> None:
        result = data.get("result") if isinstance(data.get("result"), dict) else {}
        error = data.get("error") if isinstance(data.get("error"), dict) else {}
        text = result.get("content")
        if not isinstance(text, str):
            text = error.get("message") if isinstance(error.get("message"), str) else (
                "" if text is None else json.dumps(text, ensure_ascii=False))
        block = Block("tool_result", text, tool_id=opt_str(data.get("toolCallId")),
                      is_error=data.get("success") is False)
        open_ = self._open
        if open_ is not None and open_.kind == "tool_result":
            open_.blocks.append(block)
            open_.lines += (line_no,)
        else:
            self._add(Message("user", "tool_result", [block]), line_no, offset, ts)

    def _usage_event(self, line_no: int, ts: str | None, data: dict) -> None:
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else data  # usage_record wraps it
        limit = opt_int(usage.get("maxPromptTokens"))
        if limit:
            self.session.window = limit
        kind = str(usage.get("interactionType") or "") + str(usage.get("initiator") or "")
        if any(side in kind for side in SIDE_CALLS):
            return
        api_call = opt_str(usage.get("apiCallId"))
        if api_call is None:
            return
        if any(m.response_id == api_call and m.role == "assistant" for m in self.session.messages[-8:]):
            self._request(api_call, usage, line_no, ts)
        else:
            self._usage[api_call] = (usage, line_no, ts)

    def _request(self, api_call: str, usage: dict, line_no: int, ts: str | None) -> None:
        s = self.session
        if any(r.id == api_call for r in s.requests):
            return
        index = next(i for i in range(len(s.messages) - 1, -1, -1) if s.messages[i].response_id == api_call)
        read, write = as_int(usage.get("cacheReadTokens")), as_int(usage.get("cacheWriteTokens"))
        total = as_int(usage.get("inputTokens"))
        uncached = total - read - write if total >= read + write else total  # inputTokens includes the cache
        s.requests.append(Request(api_call, opt_str(usage.get("model")) or s.messages[index].model, uncached,
                                  write, read, as_int(usage.get("outputTokens")), message_index=index,
                                  seen_start=s.context_start, seen_end=index, line=line_no, timestamp=ts))

    def _compaction_start(self, line_no: int, offset: int, ts: str | None, data: dict) -> None:
        self._started = len(self.session.messages)
        self._breakdown(self._started, line_no, ts, data, "currentTokens")

    def _compaction_complete(self, line_no: int, offset: int, ts: str | None, data: dict) -> None:
        s = self.session
        start, self._started = self._started, None
        if data.get("success") is not True:
            return  # cancelled or failed: the context is unchanged
        index = len(s.messages) if start is None else min(start, len(s.messages))
        summary = Message("user", "compact_summary", [Block("text", str(data.get("summaryContent") or ""))],
                          line=line_no, offset=offset, timestamp=ts)
        self._insert(index, summary)
        s.compactions.append(Compaction("compact", index, trigger=opt_str(data.get("trigger")),
                                        pre_tokens=opt_int(data.get("preCompactionTokens")),
                                        tokens_saved=opt_int(data.get("tokensRemoved")), line=line_no,
                                        timestamp=ts))
        self._breakdown(len(s.messages), line_no, ts, data, "postCompactionTokens")
        self._open = None

    def _truncation(self, line_no: int, offset: int, ts: str | None, data: dict) -> None:
        s = self.session
        kept = opt_int(data.get("postTruncationMessagesLength"))
        index = len(s.messages) if kept is None else max(0, len(s.messages) - kept)
        s.compactions.append(Compaction("compact", index, trigger="truncation",
                                        pre_tokens=opt_int(data.get("preTruncationTokensInMessages")),
                                        tokens_saved=opt_int(data.get("tokensRemovedDuringTruncation")),
                                        line=line_no, timestamp=ts))
        limit = opt_int(data.get("tokenLimit"))
        if limit:
            s.window = limit
        self._open = None

    def _cleared(self, line_no: int, offset: int, ts: str | None, data: dict) -> None:
        self.session.compactions.append(Compaction("compact", len(self.session.messages), trigger="clear",
                                                   line=line_no, timestamp=ts))
        self._open = None

    def _usage_info(self, line_no: int, offset: int, ts: str | None, data: dict) -> None:
        self._breakdown(len(self.session.messages), line_no, ts, data, "currentTokens")

    def _breakdown(self, index: int, line_no: int, ts: str | None, data: dict, total_key: str) -> None:
        parts = {key: opt_int(data.get(name)) for key, name in ((SYSTEM_PROMPT, "systemTokens"),
                                                                 (TOOL_DEFINITIONS, "toolDefinitionsTokens"),
                                                                 (CONVERSATION, "conversationTokens"))}
        known = {k: v for k, v in parts.items() if v is not None}
        limit = opt_int(data.get("tokenLimit"))
        if limit:
            self.session.window = limit
        if known:
            self.session.breakdowns.append(Breakdown(index, known, opt_int(data.get(total_key)), limit,
                                                     line_no, ts))

    # -- building -----------------------------------------------------------------------------------------------

    def _add(self, message: Message, line_no: int, offset: int, ts: str | None) -> None:
        message.lines, message.offset, message.timestamp = (line_no,), offset, ts
        self.session.messages.append(message)
        self._open = message

    def _insert(self, index: int, message: Message) -> None:
        """Put `message` at `index`, moving what refers to later messages along with them. A request sent while
        the compaction ran saw the history up to `index`, not the summary: its seen range stays, its reply moves."""
        s = self.session
        s.messages.insert(index, message)
        for r in s.requests:
            r.message_index += r.message_index >= index
            r.seen_end += r.seen_end > index
            r.seen_start += r.seen_start > index
        for b in s.breakdowns:
            b.index += b.index > index

    def build(self) -> Session:
        s = self.session
        if self.model and self.model not in s.models:
            s.models.append(self.model)
        return s.copy_with(messages=list(s.messages), requests=list(s.requests), compactions=list(s.compactions),
                           warnings=list(s.warnings), models=list(s.models), breakdowns=list(s.breakdowns))


_HANDLERS = {
    "session.start": CopilotLoader._start, "session.resume": CopilotLoader._start,
    "session.model_change": CopilotLoader._model_change, "system.message": CopilotLoader._system,
    "user.message": CopilotLoader._user, "assistant.message": CopilotLoader._assistant,
    "assistant.reasoning": CopilotLoader._reasoning, "tool.execution_complete": CopilotLoader._tool_result,
    "session.compaction_start": CopilotLoader._compaction_start,
    "session.compaction_complete": CopilotLoader._compaction_complete,
    "session.truncation": CopilotLoader._truncation, "session.context_cleared": CopilotLoader._cleared,
    "session.usage_info": CopilotLoader._usage_info, "session.shutdown": CopilotLoader._usage_info,
}


def is_copilot_event(obj: Any) -> bool:
    """A Copilot event line: a dotted `type`, a `data` object, and the event envelope's `id` / `parentId`."""
    kind = obj.get("type") if isinstance(obj, dict) else None
    return isinstance(kind, str) and "." in kind and isinstance(obj.get("data"), dict) and "parentId" in obj
