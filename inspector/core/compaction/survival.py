"""What survives a summary compaction in Claude Code besides the summary itself.

After it writes the summary, Claude Code re-injects some state as attachments: the most recently read files (up to
RESTORE_FILES of them; a file above RESTORE_FILE_TOKENS is named, not included), the todo list, the plan, and
CLAUDE.md (part of the system context, re-read from disk for every request, so never lost). Files whose read is
still in the kept messages are not re-injected: they are in context already. Everything else in the summarized
messages will exist only as far as the summary retells it. Figures are estimates: Claude Code re-reads the files
from disk at compaction time, and the transcript only has what they held when they were read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from inspector.core.compaction.micro import result_text, tool_names
from inspector.core.compaction.estimates import Estimates
from inspector.core.compaction.plan import Plan
from inspector.core.model import Session

RESTORE_FILES = 5
RESTORE_FILE_TOKENS = 5_000
READ_TOOLS = ("Read",)
WRITE_TOOLS = ("Write", "Edit", "MultiEdit", "NotebookEdit")  # they update the file state Claude Code restores
TODO_TOOL = "TodoWrite"
PLAN_TOOL = "ExitPlanMode"

FileFate = Literal["re-injected", "named only", "in kept messages", "summary only"]


@dataclass(slots=True)
class FileState:
    path: str
    last_index: int  # the message that last read or wrote it
    tokens: int | None  # estimate of its last known content (None: only edited, never read or written whole)
    fate: FileFate
    read_index: int | None = None  # the message holding its last Read result (marked in the diff)


@dataclass(slots=True)
class Survival:
    """What a summary plan keeps outside the summary. `summary_only` counts the summarized messages by kind."""

    files: list[FileState] = field(default_factory=list)
    todos: str | None = None  # the last todo list, as text
    todos_tokens: int = 0
    plan: str | None = None
    plan_tokens: int = 0
    claude_md: list[tuple[str, int]] = field(default_factory=list)  # (path, tokens) found on this machine
    summary_only: dict[str, tuple[int, int]] = field(default_factory=dict)  # kind -> (messages, tokens)

    @property
    def reinjected_tokens(self) -> int:
        files = sum(f.tokens or 0 for f in self.files if f.fate == "re-injected")
        return files + self.todos_tokens + self.plan_tokens

    @property
    def reinjected_messages(self) -> set[int]:
        """Indices of messages whose Read result Claude Code will re-inject."""
        return {f.read_index for f in self.files if f.fate == "re-injected" and f.read_index is not None}

    def lines(self) -> list[str]:
        """A plain-text account, one line per item (for the app and the CLI)."""
        out = [f"re-injected by Claude Code after the summary (~{self.reinjected_tokens:,} tokens):"]
        for f in self.files:
            size = "size unknown" if f.tokens is None else f"~{f.tokens:,} tokens"
            out.append(f"  {_FATE_MARK[f.fate]} {f.path}  ({size}, message {f.last_index}): {_FATE_TEXT[f.fate]}")
        if not self.files:
            out.append("  no files read or written in the summarized part")
        out.append(f"  {'↻' if self.todos else '·'} todo list: "
                   + (f"~{self.todos_tokens:,} tokens" if self.todos else "none recorded"))
        if self.plan:
            out.append(f"  ↻ plan: ~{self.plan_tokens:,} tokens")
        if self.claude_md:
            for path, tokens in self.claude_md:
                out.append(f"  ↻ {path} (~{tokens:,} tokens): system context, re-read for every request")
        else:
            out.append("  ↻ CLAUDE.md: system context, re-read from disk for every request (none found here)")
        out.append("only in the summary (what it does not retell is gone):")
        for kind, (n, tokens) in sorted(self.summary_only.items(), key=lambda kv: -kv[1][1]):
            out.append(f"  {n:,} {kind} message(s), ~{tokens:,} tokens")
        return out


_FATE_MARK = {"re-injected": "↻", "named only": "~", "in kept messages": "=", "summary only": "✗"}
_FATE_TEXT = {
    "re-injected": "re-read into the context",
    "named only": f"over {RESTORE_FILE_TOKENS:,} tokens: only its name is re-injected",
    "in kept messages": "its read is in the kept messages",
    "summary only": f"not among the {RESTORE_FILES} most recent: only in the summary",
}


def _path(block_input: object) -> str | None:
    if isinstance(block_input, dict):
        for key in ("file_path", "notebook_path", "path"):
            value = block_input.get(key)
            if isinstance(value, str) and value:
                return value
    return None


def survival(plan: Plan, claude_md: list[tuple[str, int]] | None = None, original: Session | None = None) -> Survival:
    """What survives `plan` (a summary plan) outside its summary, the Claude Code way. `claude_md` lists the
    instruction files (path, tokens) the caller found (see `claude_md_files`). `original` is the session before
    any microcompaction: Claude Code re-reads whole files, so a snipped or cleared read is sized from there."""
    session, est = plan.session, plan.estimates
    whole = {b.tool_id: result_text(b) for m in (original.messages if original else ()) for b in m.tool_results()
             if b.tool_id}
    out = Survival(claude_md=list(claude_md or []))
    if plan.summary is None:
        return out
    start, split = session.context_start, plan.summary.split
    messages = session.messages
    names = tool_names(messages[start:])
    last: dict[str, FileState] = {}
    read_ids: dict[str, str] = {}  # Read tool_use id -> path
    for i in range(start, len(messages)):
        m = messages[i]
        for b in m.blocks:
            if b.type == "tool_use" and b.tool_name in (*READ_TOOLS, *WRITE_TOOLS):
                path = _path(args := b.input)  # decoded at each read: once here
                if path is None:
                    continue
                state = last.setdefault(path, FileState(path, i, None, "summary only"))
                state.last_index = i
                if b.tool_name in READ_TOOLS and b.tool_id:
                    read_ids[b.tool_id] = path
                if b.tool_name == "Write" and isinstance(args.get("content"), str):
                    state.tokens, state.read_index = est.text(args["content"]), None
            elif b.type == "tool_use" and b.tool_name == TODO_TOOL and i < split:
                args = b.input
                out.todos = json.dumps(args.get("todos", args) if isinstance(args, dict) else args,
                                       ensure_ascii=False, indent=1)
            elif b.type == "tool_use" and b.tool_name == PLAN_TOOL and i < split and isinstance(args := b.input, dict):
                out.plan = str(args.get("plan") or "") or None
            elif b.type == "tool_result" and names.get(b.tool_id or "") in READ_TOOLS and not b.is_error:
                path = read_ids.get(b.tool_id or "")
                if path is not None:
                    text = whole.get(b.tool_id or "") or result_text(b)
                    last[path].tokens, last[path].read_index = est.text(text), i
    out.todos_tokens = est.text(out.todos) if out.todos else 0
    out.plan_tokens = est.text(out.plan) if out.plan else 0
    # The most recently touched files are restored, except those whose last read is still in the kept messages.
    recent = sorted(last.values(), key=lambda f: -f.last_index)
    restored = 0
    for f in recent:
        if f.read_index is not None and f.read_index >= split:
            f.fate = "in kept messages"
        elif restored < RESTORE_FILES:
            restored += 1
            f.fate = "named only" if f.tokens is not None and f.tokens > RESTORE_FILE_TOKENS else "re-injected"
    out.files = recent
    counts: dict[str, tuple[int, int]] = {}
    for i in range(start, split):
        n, t = counts.get(messages[i].kind, (0, 0))
        counts[messages[i].kind] = (n + 1, t + plan.tokens[i - start])
    out.summary_only = counts
    return out


def claude_md_files(session: Session, estimates: Estimates) -> list[tuple[str, int]]:
    """The CLAUDE.md files Claude Code would load for the session's working directory, if it exists here."""
    if not session.cwd or not Path(session.cwd).is_dir():
        return []
    from inspector.core.prompt.claude_md import discover, read_capped

    files = discover(Path(session.cwd)).files
    out = []
    for f in files:
        try:
            text, _, _ = read_capped(f.path)
        except OSError:
            continue
        out.append((str(f.path), estimates.text(text)))
    return out
