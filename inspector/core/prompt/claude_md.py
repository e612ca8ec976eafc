"""CLAUDE.md discovery: which instruction files an agent started in a directory would load, in load order.

Order follows Claude Code: the user's own file first (`~/.claude/CLAUDE.md`, or `$CLAUDE_CONFIG_DIR/CLAUDE.md`),
then for every directory from the repository root down to the working directory its `CLAUDE.md`,
`.claude/CLAUDE.md` and `CLAUDE.local.md`. Files nearer the working directory come later, so they read as the more
specific instructions. Outside any repository only the working directory itself is searched.

A file may import others with `@path` (relative to the importing file, absolute, or from `~`), as Claude Code
allows, up to MAX_IMPORT_DEPTH hops; `@` inside code spans and fenced blocks is text. Each imported file follows
the file that imports it.

A project's files come with the repository, which may not be the user's: an import from them that leads outside
the project (the repository root, else the working directory, and the extra directories the user added) is an
outside read, as `@~/.aws/credentials` would be. It is not followed unless `allow_outside` says so (Claude Code
asks the same question); the user's own file may import from anywhere.
"""

from __future__ import annotations

import errno
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from inspector.core.files import read_limited
from inspector.core.prompt.environment import find_repo_root

MAX_BYTES = 1_000_000  # a larger "instruction file" is a mistake: read this much and say so
MAX_IMPORT_DEPTH = 5
IMPORT = re.compile(r"(?:^|(?<=\s))@([\w~./-][^\s`]*)")
CODE_SPAN = re.compile(r"`[^`]*`")

Scope = Literal["user", "project", "local"]
SCOPE_TITLE = {"user": "User instructions", "project": "Project instructions", "local": "Local instructions"}
SCOPE_LABEL = {
    "user": "user instructions, for every project",
    "project": "project instructions, checked into the codebase",
    "local": "private project instructions, not checked in",
}


@dataclass(slots=True)
class InstructionFile:
    path: Path
    scope: Scope
    text: str
    first_line: int = 1  # line of the file where `text` starts (leading blank lines are dropped)
    imported_by: Path | None = None
    outside: bool = False  # a project's import from outside the project, read because it was allowed


@dataclass(slots=True)
class Discovery:
    """What `discover` found: the files in load order, notes on what could not be used, and the imports that lead
    outside the project (not read unless allowed; read and marked `outside` when allowed)."""

    files: list[InstructionFile]
    notes: list[str]
    outside: list[Path]


def short_path(path: Path, base: Path) -> str:
    """A path as a user thinks of it: relative to `base` when below it, else from `~` when below home."""
    for root, prefix in ((base, ""), (Path.home(), "~/")):
        try:
            return prefix + str(path.relative_to(root))
        except ValueError:
            continue
    return str(path)


def user_dir() -> Path:
    configured = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(configured).expanduser() if configured else Path.home() / ".claude"


def candidates(cwd: Path) -> list[tuple[Path, Scope]]:
    """Every path that would be read, existing or not, in load order."""
    cwd = cwd.resolve()
    root = find_repo_root(cwd) or cwd
    chain = [cwd, *cwd.parents]
    directories = list(reversed(chain[: chain.index(root) + 1]))
    found: list[tuple[Path, Scope]] = [(user_dir() / "CLAUDE.md", "user")]
    for directory in directories:
        found += [(directory / "CLAUDE.md", "project"), (directory / ".claude" / "CLAUDE.md", "project"),
                  (directory / "CLAUDE.local.md", "local")]
    return found


def discover(cwd: Path, allow_outside: bool = False, roots: tuple[Path, ...] = ()) -> Discovery:
    """The instruction files that exist under `cwd`'s chain (imports after their importer). `roots` are the extra
    directories the user added: imports into them are inside."""
    cwd = cwd.resolve()
    project = (find_repo_root(cwd) or cwd, *(r.expanduser().resolve() for r in roots))
    found = Discovery([], [], [])
    seen: set[Path] = set()
    for path, scope in candidates(cwd):
        if path.is_file():
            _add(path, scope, None, 0, found, seen, project, allow_outside)
    return found


def _add(path: Path, scope: Scope, importer: Path | None, depth: int, found: Discovery, seen: set[Path],
         project: tuple[Path, ...], allow_outside: bool) -> None:
    notes = found.notes
    try:
        real = path.resolve()
        if real in seen:
            return
        outside = importer is not None and scope != "user" and not any(real.is_relative_to(p) for p in project)
        if outside:
            found.outside.append(real)
            if not allow_outside:
                notes.append(f"{importer}: import of {path} not followed: outside the project (allow outside "
                             "imports to read it; its text is sent to the model, never saved)")
                return
        seen.add(real)
        text, first_line, truncated = read_capped(path)
    except OSError as exc:
        notes.append(f"{path}: skipped, cannot be read ({exc.strerror or exc})")
        return
    if not text:
        notes.append(f"{path}: skipped, the file is empty")
        return
    if truncated:
        notes.append(f"{path}: only the first {MAX_BYTES:,} bytes were read")
    found.files.append(InstructionFile(path, scope, text, first_line, importer, outside))
    for target in imports(text, path.parent):
        if depth + 1 > MAX_IMPORT_DEPTH:
            notes.append(f"{path}: import of {target} not followed (more than {MAX_IMPORT_DEPTH} hops)")
        elif target.is_file():
            _add(target, scope, path, depth + 1, found, seen, project, allow_outside)
        elif target.suffix:  # "@someone" is a mention; "@docs/setup.md" is meant as a file
            notes.append(f"{path}: imported file {target} does not exist")


def imports(text: str, base: Path) -> list[Path]:
    """Paths named by `@path` outside code, resolved against `base` (the importing file's directory)."""
    found: list[Path] = []
    fenced = False
    for line in text.split("\n"):
        if line.strip().startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        for match in IMPORT.finditer(CODE_SPAN.sub("", line)):
            target = Path(match.group(1).rstrip(".,;:)")).expanduser()
            found.append(target if target.is_absolute() else base / target)
    return found


def read_capped(path: Path) -> tuple[str, int, bool]:
    """At most MAX_BYTES of a text file, stripped: (text, the file line where it starts, whether it was cut). A
    binary file (NUL bytes) raises OSError: it is no instruction text, and callers skip it with a note. A FIFO
    reads what its writer sends (nothing, without one) and never blocks the prompt."""
    data = read_limited(path, MAX_BYTES + 1)
    if b"\0" in data:
        raise OSError(errno.EINVAL, "a binary file, not text")
    raw = data[:MAX_BYTES].decode("utf-8", "replace")
    first_line = raw[: len(raw) - len(raw.lstrip())].count("\n") + 1
    return raw.strip(), first_line, len(data) > MAX_BYTES
