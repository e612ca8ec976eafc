"""The system prompt of a loaded session: what the source recorded, measured or lets us reconstruct.

Formats differ in what they keep. Anthropic requests (and our own neutral sessions) record the system prompt and
every tool schema; Codex records its instructions and the developer and environment messages it sends (shown part
by part), not its tool schemas nor the API's own system message (measured as the rest of the first request's
context). Claude Code 2.1.332 records each request as sent
(`Session.sent`): its system blocks (split at their markdown headings), every tool schema (MCP tools grouped by
server) and the system-reminders it injected, all exact. Older Claude Code records none of it, so its prefix
(system prompt, tool schemas, CLAUDE.md, environment) is known only by size, measured from the first request's
usage, and the CLAUDE.md files it would have loaded are re-read from disk when the session's working directory
exists here, labelled "reconstructed" because they may have changed since.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from inspector.core.estimators import Estimator, Exact, get_estimator
from inspector.core.model import Session
from inspector.core.prompt.builder import Section, claude_md_sections, match_exact
from inspector.core.sent_requests import SentRequest
from inspector.core.tokens import Accounting, account, estimator_for

MCP_PREFIX = "mcp__"


@dataclass(slots=True)
class SessionPrompt:
    sections: list[Section]
    notes: list[str] = field(default_factory=list)

    @property
    def tokens(self) -> int:
        return sum(s.tokens for s in self.sections if s.kind != "reconstructed")


def session_prompt(session: Session, estimator: str | Estimator = "script",
                   accounting: Accounting | None = None, request: SentRequest | None = None) -> SessionPrompt:
    """The prompt part of `session`'s context as sections: kind "recorded", "measured" or "reconstructed"; `notes`
    say what could not be shown and why. Reconstructed files are inside the measured prefix, so `tokens` skips
    them. A session that records its requests shows one of them, `request` (default: the last of the main
    thread)."""
    if isinstance(estimator, Estimator):
        est = estimator
    elif estimator == "calibrated" and session.requests:  # fitted on the session (and its tokenizer)
        est = estimator_for(session, "calibrated")
    else:
        est = get_estimator(estimator)
    result = SessionPrompt([])
    if session.sent is not None and session.sent.requests:
        _sent(session, result, est, request or latest(session))
        _count(result, est)
        return result
    if session.system:
        title = "Instructions" if session.format == "codex" else "System prompt"
        result.sections += [Section(t, text, "recorded", path=session.source, kind="recorded")
                            for t, text in split_headings(session.system, title)]
    if session.format == "codex":
        _codex_messages(session, result)
    for message in session.messages if session.format != "codex" else ():
        if message.kind == "system" and message.text() and message.attachment is None:
            result.sections.append(Section("System message", message.text(), "recorded", path=session.source,
                                           lines=message.lines[:1], kind="recorded"))
    for tool in session.tools:
        schema = {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}
        result.sections.append(Section(f"Tool: {tool.name}", json.dumps(schema, ensure_ascii=False, indent=1),
                                       "recorded", est.text(json.dumps(schema, ensure_ascii=False)),
                                       path=session.source, kind="recorded"))  # tokens as sent: compact JSON
    if session.format == "claude-code":
        _claude_code(session, result, est, accounting)
    elif session.format in UNRECORDED and not result.sections:
        _unrecorded_prefix(session, result, UNRECORDED[session.format], accounting)
    elif not result.sections:
        result.notes.append(f"this {session.format} session records no system prompt")
    elif session.format == "codex":
        result.notes.append("Codex does not record its tool schemas")
    _count(result, est)
    if session.format == "codex":
        _codex_unrecorded(session, result,
                          accounting or account(session, est, resumable=False) if session.requests else None)
    if isinstance(est, Exact) and [s for s in result.sections if s.kind == "recorded"]:
        recorded = [s for s in result.sections if s.kind == "recorded"]
        match_exact(recorded, est, "\n\n".join(s.text for s in recorded if not s.title.startswith("Tool: ")),
                    session.tools)
    return result


def _count(result: SessionPrompt, est: Estimator) -> None:
    for section in result.sections:
        if section.kind != "measured" and not section.tokens:
            section.tokens = est.text(section.text)


def latest(session: Session) -> SentRequest | None:
    """The last recorded request of the session's main thread (of its only thread, for a subagent's file)."""
    if session.sent is None or not session.sent.requests:
        return None
    main = [r for r in session.sent.requests if r.agent_id is None]
    return (main or session.sent.requests)[-1]


GROUP_TITLES = {"system": "System prompt", "tools": "Tools", "reminders": "System-reminders"}


def group_title(group: str, sections: list[Section]) -> str:
    """A group's heading: what it is and how many sections it holds ("MCP server lab (2 tools)")."""
    count = sum(1 for s in sections if s.group == group)
    if group.startswith("mcp:"):
        return f"MCP server {group[4:]} ({count} tool{'s' if count != 1 else ''})"
    return f"{GROUP_TITLES.get(group, group)} ({count})"


def tool_group(name: str) -> str:
    """"tools" for a built-in tool, "mcp:<server>" for an MCP tool (`mcp__<server>__<tool>`)."""
    if name.startswith(MCP_PREFIX) and "__" in name[len(MCP_PREFIX):]:
        return "mcp:" + name[len(MCP_PREFIX):].split("__", 1)[0]
    return "tools"


def _sent(session: Session, result: SessionPrompt, est: Estimator, request: SentRequest | None) -> None:
    """A recorded request's system blocks (split at their headings), tools (MCP ones grouped by server) and the
    system-reminders among the messages it sent."""
    log = session.sent
    assert log is not None and request is not None
    shape = log.shape(request)
    number = log.index(request) + 1
    result.notes.append(f"as sent in request {number} of {len(log)} (line {request.line}"
                        + (f", {request.model}" if request.model else "") + "); the billing-header block Claude "
                        "Code sends first is not recorded")
    if shape is None:
        result.notes.append(f"the file holds no api-request-shape {request.shape[:12]}: no system prompt or tools")
        return
    marked = {path[1] for path, _ in request.cache_control if len(path) == 2}
    for i, block in enumerate(shape.system, 1):
        text = block.get("text", "") if isinstance(block, dict) else ""
        parts = split_headings(str(text), f"Block {i}")
        for n, (title, part) in enumerate(parts, 1):
            note = "a cache breakpoint ends this block" if (i - 1) in marked and n == len(parts) else ""
            result.sections.append(Section(title if title == f"Block {i}" else f"Block {i} › {title}", part,
                                           "recorded", path=session.source, lines=(shape.line,), kind="recorded",
                                           note=note, group="system"))
    tools = [t for t in shape.tools if isinstance(t, dict)]
    for tool in sorted(tools, key=lambda t: tool_group(str(t.get("name", ""))) != "tools"):  # built-ins first
        name = str(tool.get("name", "?"))
        group = tool_group(name)
        title = f"Tool: {name}" if group == "tools" else f"MCP {group[4:]}: {name[len(MCP_PREFIX + group[4:]) + 2:]}"
        note = ("deferred (defer_loading): the schema is sent, and enters the context once ToolSearch references "
                "it") if tool.get("defer_loading") else ""
        result.sections.append(Section(title, json.dumps(tool, ensure_ascii=False, indent=1), "recorded",
                                       est.text(json.dumps(tool, ensure_ascii=False)), path=session.source,
                                       lines=(shape.line,), kind="recorded", note=note, group=group))
    for message in _sent_reminders(session, request):
        result.sections.append(Section(f"Reminder: {message.attachment}", message.text(), "recorded",
                                       path=session.source, lines=message.lines[:1], kind="recorded",
                                       note=f"sent as a {message.role}-role message" if message.role == "system"
                                       else "", group="reminders"))
    changed = len({r.shape for r in log.requests if r.agent_id == request.agent_id})
    if changed > 1:
        result.notes.append(f"the system prompt or tools took {changed} forms in this session (see what changed "
                            "from one request to the next)")


def _sent_reminders(session: Session, request: SentRequest) -> list:
    """The reminders among the messages the request sent: those before its response, since the last compaction."""
    answered = next((r for r in session.requests if r.sent_id == request.id), None)
    end = answered.seen_end if answered is not None else len(session.messages)
    start = max((c.index for c in session.compactions if c.kind == "compact" and c.index <= end), default=0)
    return [m for m in session.messages[start:end] if m.attachment is not None]


def split_headings(text: str, untitled: str) -> list[tuple[str, str]]:
    """(title, text) for each `# heading` of a recorded prompt (ours is built that way, and many others are), the
    text before the first heading titled `untitled`; headings inside ``` fences do not count."""
    parts: list[tuple[str, list[str]]] = [(untitled, [])]
    fenced = False
    for line in text.split("\n"):
        if line.strip().startswith("```"):
            fenced = not fenced
        if not fenced and line.startswith("# ") and line[2:].strip():
            parts.append((line[2:].strip(), []))
        parts[-1][1].append(line)
    return [(title, "\n".join(lines).strip()) for title, lines in parts if "\n".join(lines).strip()]


_TAG = re.compile(r"\s*<([a-z_ ]+)>")


def _codex_messages(session: Session, result: SessionPrompt) -> None:
    """The developer messages (skills, permissions, deferred tools: one section per part, titled by its tag) and
    the harness's user messages (environment context, AGENTS.md) before the current context's first prompt: the
    rest of the prefix Codex sends before the conversation."""
    for message in session.context:
        if message.kind == "prompt":
            break  # the conversation starts
        if message.kind not in ("system", "meta"):
            continue
        for block in message.blocks:
            if block.type != "text" or not block.text.strip():
                continue
            tag = _TAG.match(block.text)
            title = tag.group(1).replace("_", " ").capitalize() if tag else "Developer message"
            result.sections.append(Section(title, block.text, "recorded", path=session.source,
                                           lines=message.lines[:1], kind="recorded"))


def _codex_unrecorded(session: Session, result: SessionPrompt, accounting: Accounting | None) -> None:
    """What Codex sends that the rollout leaves out, by size: the first request's measured prefix (everything
    before its messages) less the recorded instructions."""
    if accounting is None or not accounting.prefix_measured:
        result.notes.append("no request with usage: the tool schemas' size cannot be measured")
        return
    instructions = sum(s.tokens for s in result.sections if s.kind == "recorded" and not s.lines)
    result.sections.append(Section(
        "Unrecorded: tool schemas, the API's system message", "", "measured", max(0, accounting.prefix - instructions),
        path=session.source, kind="measured",
        note="not in the rollout; measured as the first request's context less the estimates of the instructions "
             "and of the messages it saw"))


# What the measured prefix of the agents that record no prompt holds (their docs/*-format.md pages).
UNRECORDED = {
    "gemini-cli": "the system instruction and the tool declarations",
    "qwen-code": "the system prompt, the tool schemas and the system reminders added to the first message",
    "opencode": "the system prompt (with its environment block and skills list, and instruction files) and the tool "
                "schemas",
}


def _unrecorded_prefix(session: Session, result: SessionPrompt, holds: str,
                       accounting: Accounting | None = None) -> None:
    accounting = accounting or account(session, resumable=False)
    if not accounting.prefix_measured:
        result.notes.append(f"this {session.format} session records no system prompt, and no request with usage: "
                            "its size cannot be measured")
        return
    result.sections.append(Section(
        "Unrecorded prefix", "", "measured", accounting.prefix, path=session.source, kind="measured",
        note=f"{holds}: not in the session; measured from usage as the context of the model's first request minus "
             "the estimate of the messages it saw"))


def _claude_code(session: Session, result: SessionPrompt, est: Estimator,
                 accounting: Accounting | None = None) -> None:
    accounting = accounting or account(session, resumable=False)  # the app passes the one it already has
    if accounting.prefix_measured:
        result.sections.append(Section(
            "Unrecorded prefix", "", "measured", accounting.prefix, path=session.source, kind="measured",
            note="system prompt, tool schemas, CLAUDE.md and environment: not in the transcript; measured from "
                 "usage as the context of the model's first request minus the estimate of the messages it saw"))
    else:
        result.notes.append("no request with usage: the unrecorded prefix cannot be measured")
    if not session.cwd:
        result.notes.append("the session records no working directory: CLAUDE.md files cannot be reconstructed")
        return
    cwd = Path(session.cwd)
    if not cwd.is_dir():
        result.notes.append(f"{cwd} does not exist on this machine: CLAUDE.md files cannot be reconstructed")
        return
    notes: list[str] = []
    files = claude_md_sections(cwd, notes)
    for section in files:
        section.kind = "reconstructed"
        section.note = "as the file reads now, which may differ from when the session ran"
    result.sections += files
    result.notes += notes
    measured = next((s for s in result.sections if s.kind == "measured"), None)
    if measured and files:
        rest = measured.tokens - sum(est.text(s.text) for s in files)
        result.notes.append(f"without the reconstructed files, about {rest:,} tokens of the prefix are the system "
                            "prompt, tool schemas and environment")
