"""Conversations captured as request bodies: Anthropic Messages requests, OpenAI Chat and Responses requests
(FORMATS.md section 3), and the capture files `context-inspector capture` writes (docs/capture-format.md).

A file holds one request (a JSON object), or several (JSONL, or a JSON array), as a proxy or SDK hook captures them.
A capture may pair a request with its response (`{"request": {...}, "response": {...}}`; a capture record adds its
`protocol`, `status` and whether it `complete`d): the response becomes the assistant message and its usage a
Request, the only measured figure these formats carry. Anthropic requests record the real system prompt and tool
schemas, Responses requests their `instructions`: they fill `Session.system` and `Session.tools`.

Each request repeats the history so far, and an agent runs several conversations at once (its main loop, subagents,
side requests for a title or a quota check), so requests are sorted into threads: a request goes to the thread
whose messages it repeats and extends (a Responses request with `previous_response_id` extends the thread that
answered); one that starts like a thread (the same system prompt and first message) without extending it rewrote
that thread's history, as does one opening with Claude Code's compaction summary: a compaction, the old messages
kept as history. Any other request opens a thread. The session is the main thread, the first with tools (an agent's
loop sends its tools), else the one with the most requests; each other thread is named in a warning. A count_tokens
exchange is no turn of a conversation and is left out; an exchange the API refused or that ended early adds its
request's messages but not its answer (the client never got it whole), with a warning.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspector.core.formats.blocks import as_int, blocks_from_content, opt_str
from inspector.core.formats.claude_code import injected
from inspector.core.formats.codex import response_item
from inspector.core.formats.detect import CAPTURE_FORMATS
from inspector.core.formats.jsonl import Progress, first_object, read_jsonl
from inspector.core.formats.neutral import message_from_dict, read_document, system_text, tools_from
from inspector.core.model import Compaction, LoadError, LoadWarning, Message, Request, Session

SUMMARY_OPENING = "This session is being continued from a previous conversation"  # Claude Code's summary message
PREVIEW = 60  # characters of a thread's first message quoted in its warning

Key = tuple[str, str]  # (role, text): how a message is recognised when a later request repeats it


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


def responses_messages(items: Any) -> list[Message]:
    """A Responses `input` or `output` as Messages: a string is one user message; of a list, the items of one
    answer (reasoning, text, tool calls) form one assistant message and parallel tool outputs one result message."""
    if isinstance(items, str):
        return [Message("user", "prompt", blocks_from_content(items))]
    out: list[Message] = []
    joinable = False
    for item in items if isinstance(items, list) else ():
        converted = response_item(item) if isinstance(item, dict) else None
        if converted is None:
            continue
        role, kind, blocks, joins = converted
        if joins and joinable and out[-1].role == role and out[-1].kind == kind:
            out[-1].blocks.extend(blocks)
        else:
            out.append(Message(role, kind, list(blocks)))  # type: ignore[arg-type]
        joinable = joins
    return out


def is_request_lines(first: Any) -> bool:
    """Whether a file whose first JSON object is `first` is JSONL of requests (or a capture), not one document."""
    return isinstance(first, dict) and (isinstance(first.get("messages") or first.get("request"), (list, dict))
                                        or isinstance(first.get("capture"), dict)
                                        or isinstance(first.get("input"), list))


@dataclass
class _Thread:
    session: Session
    start: tuple[str, Key]  # (system prompt, first message): what a rewritten history of this thread keeps
    line: int | None
    keys: list[Key] = field(default_factory=list)  # the last request's messages and its answer
    exchanges: int = 0
    has_tools: bool = False


class ConversationLoader:
    """Feed request bodies (or request/response pairs, or capture records) in order; `build` the Session."""

    def __init__(self, source: str, fmt: str) -> None:
        self.source, self.format = source, fmt
        self.warnings: list[LoadWarning] = []
        self.threads: list[_Thread] = []
        self._answered: dict[str, _Thread] = {}  # Responses: response id -> the thread it answered in

    def warn(self, line: int | None, message: str) -> None:
        self.warnings.append(LoadWarning(line, message))

    def feed(self, line_no: int | None, offset: int | None, obj: Any) -> None:
        if not isinstance(obj, dict):
            self.warn(line_no, f"not a JSON object ({type(obj).__name__}), skipped")
            return
        fmt = self.format
        record = "protocol" in obj and "seq" in obj
        if isinstance(obj.get("capture"), dict) and not record:
            return  # the capture file's header
        if record:
            protocol = obj.get("protocol")
            if protocol not in CAPTURE_FORMATS:
                self.warn(line_no, f"exchange of unknown protocol {str(protocol)[:40]!r}, skipped")
                return
            fmt = CAPTURE_FORMATS[protocol]  # type: ignore[assignment]
            if fmt is None:
                return
        pair = isinstance(obj.get("request"), dict) or record
        request = obj.get("request") if pair else obj
        if not isinstance(request, dict):
            note = obj.get("request_note")
            self.warn(line_no, f"request body not recorded ({note}), skipped" if note else "no request, skipped")
            return
        converted = self._messages(line_no, request, fmt)
        if converted is None:
            return
        thread, new = self._thread_for(line_no, request, converted, fmt)
        s = thread.session
        stamp = opt_str(obj.get("time")) if record else None
        for message in new:
            self._add(s, message, line_no, offset, stamp)
        thread.exchanges += 1
        system = request.get("instructions") if fmt == "openai-responses" else request.get("system")
        if system is not None:
            s.system = system_text(system)
        if isinstance(request.get("tools"), list) and request["tools"]:
            s.tools = tools_from(request["tools"])
            thread.has_tools = True
        model = opt_str(request.get("model"))
        if model and model not in s.models:
            s.models.append(model)
        if pair and not self._answer_usable(line_no, obj):
            return
        response = obj.get("response") if pair else None
        if isinstance(response, dict):
            self._response(thread, line_no, offset, response, model, fmt, stamp)

    def _messages(self, line_no: int | None, request: dict, fmt: str) -> list[Message] | None:
        """The request's messages as Messages (None, with a warning, when it has none to read)."""
        if fmt == "openai-responses":
            items = request.get("input")
            if not isinstance(items, (list, str)):
                self.warn(line_no, "no \"input\" (string or array), skipped")
                return None
            return responses_messages(items)
        messages = request.get("messages")
        if not isinstance(messages, list):
            self.warn(line_no, "no \"messages\" array, skipped")
            return None
        given = [m for m in messages if isinstance(m, dict)]
        if len(given) < len(messages):
            self.warn(line_no, f"{len(messages) - len(given)} message(s) that are not objects skipped")
        to_message = anthropic_message if fmt == "anthropic-request" else message_from_dict
        return [to_message(d) for d in given]

    def _thread_for(self, line_no: int | None, request: dict, converted: list[Message],
                    fmt: str) -> tuple[_Thread, list[Message]]:
        """The thread the request belongs to, and which of its messages are new to it."""
        keys = [(m.role, m.text()) for m in converted]
        previous = self._answered.get(opt_str(request.get("previous_response_id")) or "")
        if previous is not None:  # the server holds the history: the input is only what is new
            previous.keys = previous.keys + keys
            return previous, converted
        system = system_text(request.get("instructions" if fmt == "openai-responses" else "system") or "")
        start = (system, keys[0] if keys else ("", ""))
        extended = [t for t in self.threads if t.session.format == fmt and keys[:len(t.keys)] == t.keys and t.keys]
        if extended:
            thread = max(extended, key=lambda t: len(t.keys))
            new = converted[len(thread.keys):]
        else:
            thread = self._rewritten(start, fmt) or self._new_thread(line_no, start, fmt)
            new = converted
            if thread.keys:  # the history was replaced: what came before is pre-compaction history
                s = thread.session
                before = s.requests[-1].measured_context if s.requests else None
                s.compactions.append(Compaction("compact", len(s.messages), pre_tokens=before, line=line_no))
                if new and new[0].role == "user" and new[0].text().startswith(SUMMARY_OPENING):
                    new[0].kind = "compact_summary"
        thread.keys = keys
        return thread, new

    def _rewritten(self, start: tuple[str, Key], fmt: str) -> _Thread | None:
        """The thread a request that extends none continues: the latest with the same start, else, for a request
        that opens with a compaction summary, the latest with the same system prompt."""
        same = [t for t in self.threads if t.session.format == fmt]
        for t in reversed(same):
            if t.start == start:
                return t
        if start[1][0] == "user" and start[1][1].startswith(SUMMARY_OPENING):
            for t in reversed(same):
                if t.start[0] == start[0]:
                    return t
        return None

    def _new_thread(self, line_no: int | None, start: tuple[str, Key], fmt: str) -> _Thread:
        thread = _Thread(Session(source=self.source, format=fmt), start, line_no)  # type: ignore[arg-type]
        self.threads.append(thread)
        return thread

    def _answer_usable(self, line_no: int | None, obj: dict) -> bool:
        """Whether a recorded answer belongs to the conversation: the API accepted the request and the exchange
        ended whole (a warning says why not)."""
        status = obj.get("status")
        seq = f"exchange {obj['seq']}" if "seq" in obj else "request"
        if isinstance(status, int) and status >= 400:
            error = obj.get("response")
            detail = error.get("error") if isinstance(error, dict) else None
            message = opt_str(detail.get("message")) if isinstance(detail, dict) else None
            self.warn(line_no, f"{seq}: the API answered {status}" + (f" ({message[:200]})" if message else ""))
            return False
        if obj.get("complete") is False:
            why = opt_str(obj.get("error")) or "it ended early"
            self.warn(line_no, f"{seq} ended before its answer did ({why}): the partial answer is not part of the "
                               "conversation")
            return False
        return True

    def _response(self, thread: _Thread, line_no: int | None, offset: int | None, response: dict,
                  model: str | None, fmt: str, stamp: str | None) -> None:
        """A captured response: the assistant message(s) the next request will repeat, and its measured usage."""
        s = thread.session
        usage = response.get("usage") if isinstance(response.get("usage"), dict) else {}
        if fmt == "openai-responses":
            replies = responses_messages(response.get("output"))
            details = usage.get("input_tokens_details")
            cached = as_int(details.get("cached_tokens")) if isinstance(details, dict) else 0
            figures = (as_int(usage.get("input_tokens")) - cached, 0, cached, as_int(usage.get("output_tokens")))
        elif "choices" in response:  # OpenAI chat: {"choices": [{"message": {...}}], "usage": {prompt_tokens, ...}}
            choice = (response.get("choices") or [{}])[0]
            reply = choice.get("message") if isinstance(choice, dict) else None
            replies = [message_from_dict(reply)] if isinstance(reply, dict) else []
            details = usage.get("prompt_tokens_details")
            cached = as_int(details.get("cached_tokens")) if isinstance(details, dict) else 0
            figures = (as_int(usage.get("prompt_tokens")) - cached, 0, cached, as_int(usage.get("completion_tokens")))
        else:
            content = response.get("content")
            replies = [anthropic_message({"role": "assistant", "content": content})] if content is not None else []
            figures = (as_int(usage.get("input_tokens")), as_int(usage.get("cache_creation_input_tokens")),
                       as_int(usage.get("cache_read_input_tokens")), as_int(usage.get("output_tokens")))
        if not replies:
            self.warn(line_no, "response without a message, skipped")
            return
        model = opt_str(response.get("model")) or model
        for message in replies:
            message.model = model
            self._add(s, message, line_no, offset, stamp)
        thread.keys = thread.keys + [(m.role, m.text()) for m in replies]
        rid = opt_str(response.get("id"))
        if rid and fmt == "openai-responses":
            self._answered[rid] = thread
        if usage:
            index = len(s.messages) - 1
            rid = rid or f"line-{line_no or index}"
            s.requests.append(Request(rid, model, *figures, message_index=index, seen_start=s.context_start,
                                      seen_end=index, line=line_no, timestamp=stamp))
            replies[-1].response_id = rid
        if model and model not in s.models:
            s.models.append(model)

    @staticmethod
    def _add(s: Session, message: Message, line_no: int | None, offset: int | None, stamp: str | None) -> None:
        message.lines = (line_no,) if line_no else ()
        message.offset = offset
        message.timestamp = message.timestamp or stamp
        s.messages.append(message)

    def main(self) -> _Thread | None:
        """The thread the session shows: the first with tools, else the one with the most requests."""
        if not self.threads:
            return None
        with_tools = [t for t in self.threads if t.has_tools]
        return with_tools[0] if with_tools else max(self.threads, key=lambda t: t.exchanges)

    def build(self) -> Session:
        main = self.main()
        if main is None:
            return Session(source=self.source, format=self.format, warnings=list(self.warnings))  # type: ignore
        s = main.session
        others = [_thread_note(t) for t in self.threads if t is not main]
        return s.copy_with(messages=list(s.messages), requests=list(s.requests), compactions=list(s.compactions),
                           warnings=list(self.warnings) + others, models=list(s.models), tools=list(s.tools))


def _thread_note(t: _Thread) -> LoadWarning:
    s = t.session
    typed = (b.text for m in s.messages if m.role == "user" for b in m.blocks if b.type == "text")
    first = next((t for t in typed if not t.lstrip().startswith("<system-reminder>")), "")  # what was asked
    preview = " ".join(first.split())
    preview = preview[:PREVIEW] + ("…" if len(preview) > PREVIEW else "")
    what = f"{t.exchanges} request{'s' * (t.exchanges != 1)}"
    model = f", {s.models[0]}" if s.models else ""
    tools = ", with tools" if t.has_tools else ", no tools"
    return LoadWarning(t.line, f"another conversation in this file, not part of this window: {what}{model}{tools}, "
                               f"starting \"{preview}\"")


def load_conversation(path: Path, fmt: str, progress: Progress | None = None) -> Session:
    """A one-request JSON document, a JSON array of requests, or JSONL of requests (a capture file among them)."""
    loader = ConversationLoader(str(path), fmt)
    if is_request_lines(first_object(path)):
        read_jsonl(path, loader.feed, loader.warn, progress)
        return loader.build()
    doc = read_document(path)
    if isinstance(doc, list) and doc and all(isinstance(x, dict) and "role" in x for x in doc):
        doc = {"messages": doc}  # OpenAI chat as a bare list of messages
    for obj in doc if isinstance(doc, list) else [doc]:
        loader.feed(None, None, obj)
    if not loader.threads and loader.warnings:
        raise LoadError(f"{path}: {loader.warnings[0].message}")
    return loader.build()
