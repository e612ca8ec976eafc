"""Assembling the agent's system prompt as a list of sections, each with its source and token cost.

`build_system_prompt()` is what the agent loop calls for every session: it reads the template, fills in runtime
values, asks git, finds CLAUDE.md files and reads the memory file, and writes nothing anywhere. The prompt string is
`prompt_text(sections)`: the sections' texts joined by blank lines, so every character the model receives belongs
to exactly one section and the inspector can say where it came from.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Callable, Literal, Sequence

from inspector.core.estimators import Estimator, Exact, get_estimator
from inspector.core.model import Block, Message, ToolSchema
from inspector.core.prompt.claude_md import SCOPE_LABEL, SCOPE_TITLE, discover, short_path
from inspector.core.prompt.environment import environment, find_repo_root, git_info
from inspector.core.prompt.memory import default_memory_path, read_memory
from inspector.core.prompt.template import (
    DEFAULT_TEMPLATE, TemplateSection, fill_inline, load_template, placeholder_alone,
)

SEPARATOR = "\n\n"


@dataclass(slots=True)
class Section:
    """One piece of the prompt. `source` is "template", "runtime" (filled-in values), "git", "memory" or the path of
    the CLAUDE.md file it holds; for a loaded session's prompt, "recorded" or "measured". `kind` says how sure we
    are of the text: "built" (we assemble it), "recorded" (read from the session), "measured" (only its size is
    known) or "reconstructed" (what would have been loaded). `lines[i]` is the line of `path` that line i + 1 of
    `text` came from (None for generated lines); `filled` numbers the text lines holding runtime values. `group`
    gathers sections a view shows together (a recorded request's "system", "tools", "mcp:<server>", "reminders")."""

    title: str
    text: str
    source: str
    tokens: int = 0
    path: str | None = None
    lines: tuple[int | None, ...] = ()
    kind: str = "built"
    note: str = ""
    filled: frozenset[int] = frozenset()
    group: str = ""

    def file_line(self, line: int) -> int | None:
        """The line of `path` behind line `line` (1-based) of the text, if it came from a file."""
        return self.lines[line - 1] if 0 < line <= len(self.lines) else None

    def to_json(self) -> dict:
        first = next((n for n in self.lines if n is not None), None)
        data = {"title": self.title, "source": self.source, "tokens": self.tokens, "text": self.text,
                "kind": self.kind, "path": self.path, "line": first}
        if self.note:
            data["note"] = self.note
        if self.group:
            data["group"] = self.group
        return data


@dataclass(slots=True)
class Prompt:
    """A built prompt with what went into it: the template used, the memory file consulted, notes on files that
    were skipped or cut."""

    sections: list[Section]
    template: Path
    cwd: Path
    memory: Path | None
    estimator: str
    notes: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return prompt_text(self.sections)

    @property
    def default_template(self) -> bool:
        return self.template == DEFAULT_TEMPLATE


def prompt_text(sections: list[Section]) -> str:
    return SEPARATOR.join(s.text for s in sections)


MemoryChoice = Path | str | Literal[False] | None


def build_system_prompt(cwd: Path | str | None = None, template: Path | str | None = None,
                        memory: MemoryChoice = None, now: datetime | None = None,
                        estimator: str | Estimator = "script") -> list[Section]:
    """The system prompt's sections; see `assemble` for the arguments."""
    return assemble(cwd, template, memory, now, estimator).sections


def assemble(cwd: Path | str | None = None, template: Path | str | None = None, memory: MemoryChoice = None,
             now: datetime | None = None, estimator: str | Estimator = "script") -> Prompt:
    """Build the prompt for an agent working in `cwd` (default: the current directory).

    template: a template file (default: `template.md` beside this module). memory: the memory file (None: the
    per-user default of `memory.default_memory_path()`; False: no memory). now: the date to state (default: now).
    Raises TemplateError for an unusable template and NotADirectoryError when `cwd` is not a directory.
    """
    cwd = Path(cwd if cwd is not None else os.getcwd()).expanduser().resolve()
    if not cwd.is_dir():
        raise NotADirectoryError(f"{cwd}: working directory does not exist or is not a directory")
    template_path = Path(template).expanduser().resolve() if template is not None else DEFAULT_TEMPLATE
    parsed = load_template(template_path)
    est = estimator if isinstance(estimator, Estimator) else get_estimator(estimator)
    memory_path = None if memory is False else Path(memory).expanduser().resolve() if memory else default_memory_path()
    notes: list[str] = []
    blocks: dict[str, Callable[[], list[Section]]] = {
        "git": lambda: [Section("Git", git_info(cwd).render(), "git")],
        "claude_md": lambda: claude_md_sections(cwd, notes),
        "memory": lambda: _memory_sections(memory_path, notes),
    }
    values = environment(cwd, now).values()
    sections = _render(parsed, str(template_path), values, blocks)
    used = {placeholder_alone(line) for ts in parsed for _, line in ts.lines} - {None}
    for key in ("claude_md", "memory"):
        if key not in used:
            sections += blocks[key]()
    for section in sections:
        section.tokens = est.text(section.text)
    if isinstance(est, Exact) and sections:
        match_exact(sections, est, prompt_text(sections))
    return Prompt(sections, template_path, cwd, memory_path, est.name, notes)


def match_exact(sections: list[Section], est: Exact, system: str, tools: Sequence[ToolSchema] = ()) -> None:
    """Spread the API's exact count of `system` and `tools` over `sections` (which hold them) in proportion to their
    estimates: two calls, with and without them, so the request's own framing cancels out; never one per section."""
    probe = [Message("user", "prompt", [Block("text", text=".")])]
    exact = est.state(probe, system=system, tools=tools) - est.state(probe)
    guesses = [est.fallback.text(s.text) for s in sections]
    total = sum(guesses) or 1
    for section, guess in zip(sections, guesses):
        section.tokens = exact * guess // total
    largest = max(sections, key=lambda s: s.tokens)
    largest.tokens += exact - sum(s.tokens for s in sections)  # rounding: the sum is the API's figure exactly


def _render(parsed: list[TemplateSection], path: str, values: dict[str, str],
            blocks: dict[str, Callable[[], list[Section]]]) -> list[Section]:
    """Template sections with values filled in; a block placeholder splits its section around the block's own
    sections, the text after it continuing as "<title> (continued)"."""
    out: list[Section] = []
    for ts in parsed:
        buffer: list[tuple[int, str, bool]] = []  # (template line, text, holds a runtime value)
        title, runtime, headed = ts.title, False, ts.headed
        for number, line in ts.lines:
            key = placeholder_alone(line)
            if key is None:
                filled, had = fill_inline(line, values)
                runtime |= had
                buffer += [(number, part, had) for part in filled.split("\n")]
                continue
            block = blocks[key]()
            chunk = _chunk(title, buffer, "runtime" if runtime else "template", path)
            if chunk and (block or not headed or any(t.strip() for _, t, _ in buffer[1:])):
                out.append(chunk)  # a heading alone stays only when the block gives it something to head
            out += block
            title, buffer, runtime, headed = f"{ts.title} (continued)", [], False, False
        chunk = _chunk(title, buffer, "runtime" if runtime else "template", path)
        if chunk:
            out.append(chunk)
    return out


def _chunk(title: str, buffer: list[tuple[int, str, bool]], source: str, path: str) -> Section | None:
    while buffer and not buffer[-1][1].strip():
        buffer.pop()
    start = next((i for i, (_, t, _) in enumerate(buffer) if t.strip()), None)
    if start is None:
        return None
    kept = buffer[start:]
    return Section(title, "\n".join(t.rstrip() for _, t, _ in kept), source, path=path,
                   lines=tuple(n for n, _, _ in kept),
                   filled=frozenset(i for i, (_, _, had) in enumerate(kept, start=1) if had))


def _file_section(title: str, heading: str, body: str, first_line: int, source: str, path: Path) -> Section:
    lines = (None, None) + tuple(range(first_line, first_line + body.count("\n") + 1))
    return Section(title, f"{heading}{SEPARATOR}{body}", source, path=str(path), lines=lines)


def claude_md_sections(cwd: Path, notes: list[str]) -> list[Section]:
    """One section per CLAUDE.md file found for `cwd`; what was skipped (or that none exist) goes to `notes`."""
    files, skipped = discover(cwd)
    notes += skipped
    if not files:
        notes.append(f"no CLAUDE.md files found for {cwd}")
    base = find_repo_root(cwd) or cwd
    sections = []
    for f in files:
        label = SCOPE_LABEL[f.scope] + (f", imported by {short_path(f.imported_by, base)}" if f.imported_by else "")
        title = "Imported instructions" if f.imported_by else SCOPE_TITLE[f.scope]
        sections.append(_file_section(title, f"# Instructions from {f.path} ({label})", f.text, f.first_line,
                                      str(f.path), f.path))
    return sections


def _memory_sections(path: Path | None, notes: list[str]) -> list[Section]:
    if path is None:
        return []
    text, first_line, problem = read_memory(path)
    if problem:
        notes.append(problem)
    if not text:
        if not problem:
            notes.append(f"no memory yet ({path} is missing or empty)")
        return []
    return [_file_section("Memory", "# Memory", text, first_line, "memory", path)]
