"""The system prompt of a loaded session: what the source recorded, measured or lets us reconstruct.

Formats differ in what they keep. Anthropic requests (and our own neutral sessions) record the system prompt and
every tool schema; Codex records its instructions and the developer and environment messages it sends (shown part
by part), not its tool schemas nor the API's own system message (measured as the rest of the first request's
context); Claude Code records neither, so its prefix (system prompt, tool
schemas, CLAUDE.md, environment) is known only by size, measured from the first request's usage, and the CLAUDE.md
files it would have loaded are re-read from disk when the session's working directory exists here, labelled
"reconstructed" because they may have changed since.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from inspector.core.estimators import Estimator, Exact, get_estimator
from inspector.core.model import Session
from inspector.core.prompt.builder import Section, claude_md_sections, match_exact
from inspector.core.tokens import Accounting, account, estimator_for


@dataclass(slots=True)
class SessionPrompt:
    sections: list[Section]
    notes: list[str] = field(default_factory=list)

    @property
    def tokens(self) -> int:
        return sum(s.tokens for s in self.sections if s.kind != "reconstructed")


def session_prompt(session: Session, estimator: str | Estimator = "script",
                   accounting: Accounting | None = None) -> SessionPrompt:
    """The prompt part of `session`'s context as sections: kind "recorded", "measured" or "reconstructed"; `notes`
    say what could not be shown and why. Reconstructed files are inside the measured prefix, so `tokens` skips
    them."""
    if isinstance(estimator, Estimator):
        est = estimator
    elif estimator == "calibrated" and session.requests:  # fitted on the session (and its tokenizer)
        est = estimator_for(session, "calibrated")
    else:
        est = get_estimator(estimator)
    result = SessionPrompt([])
    if session.system:
        title = "Instructions" if session.format == "codex" else "System prompt"
        result.sections += [Section(t, text, "recorded", path=session.source, kind="recorded")
                            for t, text in split_headings(session.system, title)]
    if session.format == "codex":
        _codex_messages(session, result)
    for message in session.messages if session.format != "codex" else ():
        if message.kind == "system" and message.text():
            result.sections.append(Section("System message", message.text(), "recorded", path=session.source,
                                           lines=message.lines[:1], kind="recorded"))
    for tool in session.tools:
        schema = {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}
        result.sections.append(Section(f"Tool: {tool.name}", json.dumps(schema, ensure_ascii=False, indent=1),
                                       "recorded", est.text(json.dumps(schema, ensure_ascii=False)),
                                       path=session.source, kind="recorded"))  # tokens as sent: compact JSON
    if session.format == "claude-code":
        _claude_code(session, result, est, accounting)
    elif not result.sections:
        result.notes.append(f"this {session.format} session records no system prompt")
    elif session.format == "codex":
        result.notes.append("Codex does not record its tool schemas")
    for section in result.sections:
        if section.kind != "measured" and not section.tokens:
            section.tokens = est.text(section.text)
    if session.format == "codex":
        _codex_unrecorded(session, result, accounting or account(session, est) if session.requests else None)
    recorded = [s for s in result.sections if s.kind == "recorded"]
    if isinstance(est, Exact) and recorded:
        match_exact(recorded, est, "\n\n".join(s.text for s in recorded if not s.title.startswith("Tool: ")),
                    session.tools)
    return result


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


def _claude_code(session: Session, result: SessionPrompt, est: Estimator,
                 accounting: Accounting | None = None) -> None:
    accounting = accounting or account(session)  # the app passes the one it already has
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
