"""The agent's tools: read_file, write_file, edit_file, bash, grep, glob, each with its Messages-API JSON schema.

A tool returns the text the model sees, or raises ToolError, whose message becomes an error result: the model
reads it and tries something else, the loop goes on. Every result is capped (`ToolContext.output_cap`) keeping its
head and tail, since one huge result would fill the window the inspector exists to watch. Permissions are not
checked here (see permissions.py): a tool runs only once the loop has decided it may.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shutil
import signal
import subprocess
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspector.core.agent.cancel import Cancel
from inspector.core.atomic import WriteFailed, write_atomic
from inspector.core.secrets import scrubbed_env

DEFAULT_OUTPUT_CAP = 30_000  # characters of one tool result
DEFAULT_BASH_TIMEOUT = 120.0
MAX_BASH_TIMEOUT = 600.0
READ_LIMIT = 2000  # lines read_file returns by default
LONG_LINE = 2000  # characters of one line read_file shows
SKIP_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".mypy_cache",
                       ".pytest_cache", ".tox"})
MAX_GREP_FILE = 5_000_000  # bytes; bigger files are skipped by grep


class ToolError(Exception):
    """The call failed in a way the model should read (bad path, no match...): an error tool_result."""


@dataclass(slots=True)
class ToolContext:
    cwd: Path
    cancel: Cancel = field(default_factory=Cancel)
    output_cap: int = DEFAULT_OUTPUT_CAP
    bash_timeout: float = DEFAULT_BASH_TIMEOUT


@dataclass(frozen=True, slots=True)
class Tool:
    """`path_keys` name the input fields holding paths: permissions confine them to the working directory."""

    name: str
    description: str
    input_schema: dict
    read_only: bool
    run: Callable[[dict, ToolContext], str]
    path_keys: tuple[str, ...] = ()

    def schema(self) -> dict:
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema}


def resolve(ctx: ToolContext, path: str) -> Path:
    """`path` made absolute against the working directory, `~` expanded, symlinks resolved."""
    if "\0" in path:
        raise ToolError("a path cannot contain a NUL character")
    return (ctx.cwd / Path(path).expanduser()).resolve()


def cap(text: str, limit: int) -> str:
    """`text` within `limit` characters: its head and tail around a marker saying how much was cut."""
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head
    return f"{text[:head]}\n[... {len(text) - head - tail} characters truncated ...]\n{text[-tail:]}"


def _string(args: dict, key: str, required: bool = True) -> str:
    value = args.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        raise ToolError(f"'{key}' must be a string")
    return value


def _int(args: dict, key: str, default: int, minimum: int = 0) -> int:
    value = args.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ToolError(f"'{key}' must be an integer >= {minimum}")
    return value


def _show(ctx: ToolContext, path: Path) -> str:
    """A path as the model should see it: relative inside the working directory, absolute outside."""
    try:
        return str(path.relative_to(ctx.cwd.resolve()))
    except ValueError:
        return str(path)


def _check_text_file(path: Path, shown: str) -> None:
    if not path.exists():
        raise ToolError(f"{shown}: no such file")
    if path.is_dir():
        raise ToolError(f"{shown}: is a directory (use glob to list it)")
    with path.open("rb") as f:
        if b"\0" in f.read(8192):
            raise ToolError(f"{shown}: binary file ({path.stat().st_size} bytes), not shown")


# --- read_file -------------------------------------------------------------------------------------------------

def read_file(args: dict, ctx: ToolContext) -> str:
    path = resolve(ctx, _string(args, "path"))
    offset = _int(args, "offset", 1, minimum=1)
    limit = _int(args, "limit", READ_LIMIT, minimum=1)
    shown = _show(ctx, path)
    _check_text_file(path, shown)
    chosen: list[str] = []
    total = 0
    with path.open(encoding="utf-8", errors="replace", newline=None) as f:  # line by line: any size reads
        for total, line in enumerate(f, 1):
            if offset <= total < offset + limit:
                chosen.append(line.rstrip("\n"))
    if total == 0:
        return f"({shown} is empty)"
    if offset > total:
        raise ToolError(f"{shown} has only {total} lines; offset {offset} is past the end")
    width = len(str(offset + len(chosen) - 1))
    out = [f"{n:>{width}}\t{_long(line)}" for n, line in enumerate(chosen, offset)]
    rest = total - (offset - 1 + len(chosen))
    if rest > 0:
        out.append(f"[{rest} more lines: read on with offset={offset + len(chosen)}]")
    return cap("\n".join(out), ctx.output_cap)


def _long(line: str) -> str:
    return line if len(line) <= LONG_LINE else line[:LONG_LINE] + f" [... {len(line) - LONG_LINE} more characters]"


# --- write_file / edit_file ------------------------------------------------------------------------------------

def write_file(args: dict, ctx: ToolContext) -> str:
    path = resolve(ctx, _string(args, "path"))
    content = _string(args, "content")
    if path.is_dir():
        raise ToolError(f"{_show(ctx, path)}: is a directory")
    existed = path.exists()
    path.parent.mkdir(parents=True, exist_ok=True)
    _replace(path, content)
    verb = "Overwrote" if existed else "Created"
    return f"{verb} {_show(ctx, path)} ({len(content.encode())} bytes, {content.count(chr(10)) + 1} lines)"


def edit_file(args: dict, ctx: ToolContext) -> str:
    path = resolve(ctx, _string(args, "path"))
    old, new = _string(args, "old_string"), _string(args, "new_string")
    replace_all = bool(args.get("replace_all", False))
    shown = _show(ctx, path)
    if old == "":
        raise ToolError("old_string is empty: use write_file to create a file")
    if old == new:
        raise ToolError("old_string and new_string are the same: nothing to change")
    _check_text_file(path, shown)
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"{shown}: not valid UTF-8; not edited, so that no byte of it is lost") from None
    if old not in text and "\r\n" in text and "\r" not in old:  # a CRLF file, edited with plain line breaks
        old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
    count = text.count(old)
    if count == 0:
        raise ToolError(f"{shown}: old_string not found (it must match the file exactly, whitespace included)")
    if count > 1 and not replace_all:
        raise ToolError(f"{shown}: old_string occurs {count} times; give more surrounding text to make it unique, "
                        "or set replace_all")
    _replace(path, text.replace(old, new))
    return f"Replaced {count} occurrence{'s' if count > 1 else ''} in {shown}"


def _replace(path: Path, text: str) -> None:
    """Write the user's file atomically, so that a full disk or a kill mid-write leaves the old content whole
    (writing in place would have emptied it first). `path` comes resolved, so a symlink stays a link and its target
    is what gets replaced."""
    try:
        write_atomic(path, [text], editor_mode=True)
    except WriteFailed as exc:
        raise ToolError(str(exc)) from None


# --- bash ------------------------------------------------------------------------------------------------------

class _Capture:
    """Reads a pipe to its end in a thread, keeping only the first and last `limit` bytes (a command printing
    gigabytes costs no memory) and the total."""

    def __init__(self, pipe: Any, limit: int) -> None:
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self._limit = limit
        self._thread = threading.Thread(target=self._read, args=(pipe,), daemon=True)
        self._thread.start()

    def _read(self, pipe: Any) -> None:
        for chunk in iter(lambda: pipe.read1(65536), b""):
            self.total += len(chunk)
            room = self._limit - len(self.head)
            if room > 0:
                self.head += chunk[:room]
                chunk = chunk[room:]
            if chunk:
                self.tail += chunk
                del self.tail[:-self._limit]
        pipe.close()

    def text(self, cap_chars: int, join_timeout: float = 2.0) -> str:
        self._thread.join(join_timeout)  # a daemon the command started may hold the pipe open: do not wait on it
        head = self.head.decode("utf-8", errors="replace")
        tail = self.tail.decode("utf-8", errors="replace")
        dropped = self.total - len(self.head) - len(self.tail)
        if dropped > 0:
            return cap(f"{head}\n[... {dropped} bytes truncated ...]\n{tail}", cap_chars)
        return cap(head + tail, cap_chars)


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def bash(args: dict, ctx: ToolContext) -> str:
    command = _string(args, "command")
    timeout = args.get("timeout", ctx.bash_timeout)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:  # NaN too
        raise ToolError("'timeout' must be a positive number of seconds")
    timeout = min(float(timeout), MAX_BASH_TIMEOUT)
    shell = shutil.which("bash") or "/bin/sh"
    proc = subprocess.Popen([shell, "-c", command], cwd=ctx.cwd, env=scrubbed_env(),  # no API key for commands
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    capture = _Capture(proc.stdout, ctx.output_cap)
    unregister = ctx.cancel.on_cancel(lambda: _kill_group(proc))
    try:
        proc.wait(timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc)
        proc.wait()
    finally:
        unregister()
    if proc.returncode != 0 or timed_out:
        _kill_group(proc)  # leftovers of a failed command must not outlive it
    output = capture.text(ctx.output_cap)
    if ctx.cancel.cancelled:
        raise ToolError(f"Interrupted by the user.\n{output}".rstrip())
    if timed_out:
        raise ToolError(f"Command timed out after {timeout:g} s and was killed.\n{output}".rstrip())
    if proc.returncode != 0:
        raise ToolError(f"{output}\n[exit status {proc.returncode}]".lstrip())
    return output or "(no output)"


# --- grep / glob -----------------------------------------------------------------------------------------------

def _walk(root: Path) -> Iterator[Path]:
    """Files under `root` in a stable order, skipping VCS, cache and dependency directories."""
    if root.is_file():
        yield root
        return
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in sorted(filenames):
            yield Path(dirpath) / name


def grep(args: dict, ctx: ToolContext) -> str:
    pattern = _string(args, "pattern")
    root = resolve(ctx, _string(args, "path", required=False) or ".")
    name_glob = _string(args, "glob", required=False)
    limit = _int(args, "max_results", 200, minimum=1)
    try:
        regex = re.compile(pattern, re.IGNORECASE if args.get("ignore_case") else 0)
    except re.error as exc:
        raise ToolError(f"bad regular expression {pattern!r}: {exc}") from None
    if not root.exists():
        raise ToolError(f"{_show(ctx, root)}: no such file or directory")
    hits: list[str] = []
    more = 0
    for path in _walk(root):
        if ctx.cancel.cancelled:
            raise ToolError("Interrupted by the user.")
        if name_glob and not fnmatch.fnmatch(path.name, name_glob):
            continue
        if path.is_symlink() and not path.resolve().is_relative_to(root):  # a link out of what was allowed
            continue
        try:
            if path.stat().st_size > MAX_GREP_FILE:
                continue
            data = path.read_bytes()
        except OSError:
            continue
        if b"\0" in data[:8192]:
            continue
        for n, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
            if regex.search(line):
                if len(hits) < limit:
                    hits.append(f"{_show(ctx, path)}:{n}:{_long(line)}")
                else:
                    more += 1
    if not hits:
        return "No matches."
    if more:
        hits.append(f"[{more} more matches not shown: narrow the pattern or the path]")
    return cap("\n".join(hits), ctx.output_cap)


def glob(args: dict, ctx: ToolContext) -> str:
    pattern = _string(args, "pattern")
    root = resolve(ctx, _string(args, "path", required=False) or ".")
    limit = _int(args, "max_results", 500, minimum=1)
    if not root.is_dir():
        raise ToolError(f"{_show(ctx, root)}: not a directory")
    if Path(pattern).is_absolute() or ".." in Path(pattern).parts:
        raise ToolError("pattern must be relative to path (use the path argument for another directory)")
    found = sorted(p for p in root.glob(pattern)
                   if p.is_file() and not SKIP_DIRS.intersection(p.relative_to(root).parts))
    if not found:
        return "No files found."
    lines = [_show(ctx, p) for p in found[:limit]]
    if len(found) > limit:
        lines.append(f"[{len(found) - limit} more files not shown]")
    return cap("\n".join(lines), ctx.output_cap)


# --- the tool table --------------------------------------------------------------------------------------------

def _schema(properties: dict, required: list[str]) -> dict:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


PATH = {"type": "string", "description": "File path, relative to the working directory or absolute"}

TOOLS: tuple[Tool, ...] = (
    Tool("read_file", "Read a text file. Returns numbered lines (line number, tab, text). Long files come in "
         "pages: pass offset (1-based first line) and limit to read on.",
         _schema({"path": PATH, "offset": {"type": "integer", "minimum": 1},
                  "limit": {"type": "integer", "minimum": 1}}, ["path"]),
         read_only=True, run=read_file, path_keys=("path",)),
    Tool("write_file", "Create a file, or overwrite one completely, with the given content. Parent directories "
         "are created. Prefer edit_file to change part of an existing file.",
         _schema({"path": PATH, "content": {"type": "string"}}, ["path", "content"]),
         read_only=False, run=write_file, path_keys=("path",)),
    Tool("edit_file", "Replace an exact string in a file. old_string must match the file exactly (whitespace "
         "included) and occur once, unless replace_all is true.",
         _schema({"path": PATH, "old_string": {"type": "string"}, "new_string": {"type": "string"},
                  "replace_all": {"type": "boolean", "default": False}}, ["path", "old_string", "new_string"]),
         read_only=False, run=edit_file, path_keys=("path",)),
    Tool("bash", "Run a shell command in the working directory (non-interactive: stdin is empty). Returns stdout "
         "and stderr combined; a non-zero exit status is reported as an error. Long output is cut in the middle.",
         _schema({"command": {"type": "string"},
                  "timeout": {"type": "number", "description": f"seconds (default {DEFAULT_BASH_TIMEOUT:g}, "
                              f"at most {MAX_BASH_TIMEOUT:g})"}}, ["command"]),
         read_only=False, run=bash),
    Tool("grep", "Search file contents with a Python regular expression. Returns path:line:text for each "
         "matching line. Skips binary files and .git, node_modules and similar directories.",
         _schema({"pattern": {"type": "string"}, "path": {**PATH, "description": "file or directory (default .)"},
                  "glob": {"type": "string", "description": "only files whose name matches, e.g. *.py"},
                  "ignore_case": {"type": "boolean"}, "max_results": {"type": "integer", "minimum": 1}},
                 ["pattern"]),
         read_only=True, run=grep, path_keys=("path",)),
    Tool("glob", "List files matching a glob pattern (e.g. **/*.py) under a directory, sorted by path.",
         _schema({"pattern": {"type": "string"}, "path": {**PATH, "description": "directory (default .)"},
                  "max_results": {"type": "integer", "minimum": 1}}, ["pattern"]),
         read_only=True, run=glob, path_keys=("path",)),
)

TOOLS_BY_NAME: dict[str, Tool] = {t.name: t for t in TOOLS}


def run_tool(tool: Tool, args: Any, ctx: ToolContext) -> tuple[str, bool]:
    """Run a tool; returns (text, is_error). Whatever goes wrong becomes an error result the model can read, so
    the turn and its history survive even a bug in a tool."""
    if not isinstance(args, dict):
        return "tool input must be a JSON object", True
    try:
        return tool.run(args, ctx), False
    except ToolError as exc:
        return cap(str(exc), ctx.output_cap), True
    except OSError as exc:
        return f"{exc.strerror or exc}: {exc.filename or ''}".rstrip(": "), True
    except Exception as exc:
        return f"internal error in {tool.name}: {type(exc).__name__}: {exc}", True
