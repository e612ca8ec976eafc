"""Conversations captured as request bodies: Anthropic Messages requests and OpenAI chat (FORMATS.md section 3).

A file holds one request (a JSON object), or several (JSONL, or a JSON array), as a proxy or SDK hook captures them.
Each request repeats the history so far, so the session is built by appending what each request adds to the last
one; a request that does not start with the previous one's messages means the history was replaced (a compaction),
recorded as such with the old messages kept as history. A capture may pair a request with its response
(`{"request": {...}, "response": {...}}`): the response becomes the assistant message and its usage a Request, the
only measured figure these formats can carry. The Anthropic request is the only format that records the real system
prompt and tool schemas: they fill `Session.system` and `Session.tools`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from inspector.core.formats.blocks import as_int, blocks_from_content, opt_str
from inspector.core.formats.claude_code import injected
from inspector.core.formats.jsonl import Progress, first_object, read_jsonl
from inspector.core.formats.neutral import system_text, message_from_dict, read_document, tools_from
from inspector.core.model import Compaction, LoadError, LoadWarning, Message, Request, Session

ToMessage = Callable[[dict], Message]
SUMMARY_OPENING = "This session is being continued from a previous conversation"  # Claude Code's summary message


def anthropic_message(d: dict) -> Message:
    """A Messages-API message dict as a Message, with its kind."""
    blocks = blocks_from_content(d.get("content"))
    if d.get("role") == "assistant":
        return Message("assistant", "assistant", blocks)
    if any(b.type == "tool_result" for b in blocks):
        kind = "tool_result"
    elif injected(blocks):
        kind = "meta"
    else:
        kind = "prompt"
    return Message("user", kind, blocks)


class ConversationLoader:
    """Feed request bodies (or request/response pairs) in order; `build` the Session."""

    def __init__(self, source: str, fmt: str) -> None:
        self.session = Session(source=source, format=fmt)  # type: ignore[arg-type]
        self.to_message: ToMessage = anthropic_message if fmt == "anthropic-request" else message_from_dict
        self._current: list[tuple[str, str]] = []  # (role, text) of the last request's messages: the prefix the
        # next request extends (compared by content, so a response echoed back with other fields still matches)

    def warn(self, line: int | None, message: str) -> None:
        self.session.warnings.append(LoadWarning(line, message))

    def feed(self, line_no: int | None, offset: int | None, obj: Any) -> None:
        if not isinstance(obj, dict):
            self.warn(line_no, f"not a JSON object ({type(obj).__name__}), skipped")
            return
        request = obj.get("request") if isinstance(obj.get("request"), dict) else obj
        messages = request.get("messages")
        if not isinstance(messages, list):
            self.warn(line_no, "no \"messages\" array, skipped")
            return
        s = self.session
        given = [m for m in messages if isinstance(m, dict)]
        if len(given) < len(messages):
            self.warn(line_no, f"{len(messages) - len(given)} message(s) that are not objects skipped")
        converted = [self.to_message(d) for d in given]
        keys = [(m.role, m.text()) for m in converted]
        if keys[:len(self._current)] == self._current:
            new = converted[len(self._current):]
        else:  # the history was replaced: what came before is pre-compaction history
            s.compactions.append(Compaction("compact", len(s.messages), line=line_no))
            new = converted
            if new and new[0].role == "user" and new[0].text().startswith(SUMMARY_OPENING):
                new[0].kind = "compact_summary"
        for message in new:
            self._add(message, line_no, offset)
        self._current = keys
        if "system" in request:
            s.system = system_text(request["system"])
        if isinstance(request.get("tools"), list):
            s.tools = tools_from(request["tools"])
        model = opt_str(request.get("model"))
        response = obj.get("response") if obj is not request else None
        if isinstance(response, dict):
            self._response(line_no, offset, response, model)
        elif model and model not in s.models:
            s.models.append(model)

    def _response(self, line_no: int | None, offset: int | None, response: dict, model: str | None) -> None:
        """A captured response: the assistant message the next request will repeat, and its measured usage."""
        s = self.session
        if "choices" in response:  # OpenAI: {"choices": [{"message": {...}}], "usage": {prompt_tokens, ...}}
            choice = (response.get("choices") or [{}])[0]
            reply = choice.get("message") if isinstance(choice, dict) else None
            usage = response.get("usage") if isinstance(response.get("usage"), dict) else {}
            cached = as_int((usage.get("prompt_tokens_details") or {}).get("cached_tokens"))
            figures = (as_int(usage.get("prompt_tokens")) - cached, 0, cached, as_int(usage.get("completion_tokens")))
        else:
            reply = {"role": "assistant", "content": response.get("content")}
            usage = response.get("usage") if isinstance(response.get("usage"), dict) else {}
            figures = (as_int(usage.get("input_tokens")), as_int(usage.get("cache_creation_input_tokens")),
                       as_int(usage.get("cache_read_input_tokens")), as_int(usage.get("output_tokens")))
        if not isinstance(reply, dict):
            self.warn(line_no, "response without a message, skipped")
            return
        model = opt_str(response.get("model")) or model
        message = self.to_message(reply)
        message.model = model
        self._add(message, line_no, offset)
        self._current = self._current + [(message.role, message.text())]
        if usage:
            index = len(s.messages) - 1
            rid = opt_str(response.get("id")) or f"line-{line_no or index}"
            s.requests.append(Request(rid, model, *figures, message_index=index, seen_start=s.context_start,
                                      seen_end=index, line=line_no))
            message.response_id = rid
        if model and model not in s.models:
            s.models.append(model)

    def _add(self, message: Message, line_no: int | None, offset: int | None) -> None:
        message.lines = (line_no,) if line_no else ()
        message.offset = offset
        self.session.messages.append(message)

    def build(self) -> Session:
        s = self.session
        return s.copy_with(messages=list(s.messages), requests=list(s.requests), compactions=list(s.compactions),
                           warnings=list(s.warnings), models=list(s.models), tools=list(s.tools))


def load_conversation(path: Path, fmt: str, progress: Progress | None = None) -> Session:
    """A one-request JSON document, a JSON array of requests, or JSONL of requests."""
    loader = ConversationLoader(str(path), fmt)
    first = first_object(path)
    if isinstance(first, dict) and isinstance(first.get("messages") or first.get("request"), (list, dict)):
        read_jsonl(path, loader.feed, loader.warn, progress)
        return loader.build()
    doc = read_document(path)
    if isinstance(doc, list) and doc and all(isinstance(x, dict) and "role" in x for x in doc):
        doc = {"messages": doc}  # OpenAI chat as a bare list of messages
    for obj in doc if isinstance(doc, list) else [doc]:
        loader.feed(None, None, obj)
    if not loader.session.messages and loader.session.warnings:
        raise LoadError(f"{path}: {loader.session.warnings[0].message}")
    return loader.build()
