"""The agent's tools: read_file, write_file, edit_file, bash, grep, glob, each with its Messages-API JSON schema.

A tool returns the text the model sees, or raises ToolError, whose message becomes an error result: the model
reads it and tries something else, the loop goes on. Every result is capped (`ToolContext.output_cap`) keeping its
head and tail, since one huge result would fill the window the inspector exists to watch. Permissions are not
checked here (see permissions.py): a tool runs only once the loop has decided it may.

The read-only tools run without asking, so each is bounded whatever the model passes: grep matches with RE2 (linear
time, as ripgrep's engine: a pattern cannot backtrack for hours, and the match runs without the GIL, so the app
keeps drawing), glob matches paths with an RE2 translation of the pattern over one walk of the tree (pathlib's
`**/**/**` re-walks the tree per `**`), every walk stops at MAX_WALK_ENTRIES and at `ToolContext.time_limit`,
grep reads at most MAX_GREP_BYTES in all, and cancel is checked between files and between matches. Only regular
files are opened (a FIFO would block the read forever, a device never end), and never through a symbolic link that
leads out of the directory searched.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import signal
import stat
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import re2

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
MAX_GREP_BYTES = 500_000_000  # bytes one grep reads in all
MAX_WALK_ENTRIES = 200_000  # directory entries one grep or glob looks at
MAX_EDIT_BYTES = 50_000_000  # a bigger file is not read whole to be edited
DEFAULT_TIME_LIMIT = 30.0  # seconds a read-only tool runs before it returns what it found so far
CHECK_EVERY = 512  # lines or matches between two looks at the cancel token and the clock
INTERRUPTED = "Interrupted by the user."


class ToolError(Exception):
    """The call failed in a way the model should read (bad path, no match...): an error tool_result."""


@dataclass(slots=True)
class ToolContext:
    cwd: Path
    cancel: Cancel = field(default_factory=Cancel)
    output_cap: int = DEFAULT_OUTPUT_CAP
    bash_timeout: float = DEFAULT_BASH_TIMEOUT
    time_limit: float = DEFAULT_TIME_LIMIT  # for read_file, grep and glob


class _Budget:
    """A read-only tool's limits: `spent()` says the time is up (the tool returns what it has, saying so); a cancel
    raises ToolError at once."""

    def __init__(self, ctx: ToolContext) -> None:
        self.cancel, self.limit = ctx.cancel, ctx.time_limit
        self.deadline = time.monotonic() + ctx.time_limit
        self.stopped = ""  # why the tool stopped early, for its last line

    def spent(self) -> bool:
        if self.cancel.cancelled:
            raise ToolError(INTERRUPTED)
        if not self.stopped and time.monotonic() > self.deadline:
            self.stopped = f"stopped after {self.limit:g} s"
        return bool(self.stopped)

    def stop(self, why: str) -> None:
        self.stopped = self.stopped or why


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


def _open_text_file(path: Path, shown: str) -> BinaryIO:
    """`path` opened for reading if it is a regular text file; ToolError saying why not otherwise. Opened without
    blocking, so a FIFO nobody writes to is refused instead of waiting forever."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise ToolError(f"{shown}: no such file") from None
    except IsADirectoryError:
        raise ToolError(f"{shown}: is a directory (use glob to list it)") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        if stat.S_ISDIR(mode):
            raise ToolError(f"{shown}: is a directory (use glob to list it)")
        raise ToolError(f"{shown}: not a regular file ({_kind(mode)}), not read")
    os.set_blocking(fd, True)
    f = os.fdopen(fd, "rb")
    try:
        if b"\0" in f.read(8192):
            raise ToolError(f"{shown}: binary file ({os.fstat(fd).st_size} bytes), not shown")
        f.seek(0)
    except BaseException:
        f.close()
        raise
    return f


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a file"


# --- read_file -------------------------------------------------------------------------------------------------

def read_file(args: dict, ctx: ToolContext) -> str:
    path = resolve(ctx, _string(args, "path"))
    offset = _int(args, "offset", 1, minimum=1)
    limit = _int(args, "limit", READ_LIMIT, minimum=1)
    shown = _show(ctx, path)
    budget = _Budget(ctx)
    chosen: list[str] = []
    total = 0
    with _open_text_file(path, shown) as f:
        while total < offset - 1 + limit:  # line by line, each read bounded: any size, any line length
            raw = f.readline(LONG_LINE * 4)  # UTF-8 takes at most 4 bytes a character
            if not raw:
                break
            more = 0 if raw.endswith(b"\n") else _skip_line(f, budget)
            total += 1
            if total >= offset:
                chosen.append(_long(raw, more))
            if total % CHECK_EVERY == 0 and budget.spent():
                break
        rest, counted = _count_lines(f, budget) if not budget.stopped else (0, False)
    if total == 0:
        return f"({shown} is empty)"
    if offset > total:
        raise ToolError(f"{shown} has only {total} lines; offset {offset} is past the end")
    width = len(str(offset + len(chosen) - 1))
    out = [f"{n:>{width}}\t{line}" for n, line in enumerate(chosen, offset)]
    if rest > 0 or not counted:
        what = f"{rest} more lines" if counted else "more lines follow (not counted: " + (budget.stopped or
                                                                                          "a large file") + ")"
        out.append(f"[{what}: read on with offset={offset + len(chosen)}]")
    return cap("\n".join(out), ctx.output_cap)


def _skip_line(f: BinaryIO, budget: _Budget) -> int:
    """Read past the rest of a line too long to show; the bytes skipped."""
    skipped = 0
    while True:
        chunk = f.readline(1 << 20)
        skipped += len(chunk)
        if not chunk or chunk.endswith(b"\n"):
            return skipped
        if budget.spent():
            return skipped


def _count_lines(f: BinaryIO, budget: _Budget) -> tuple[int, bool]:
    """The lines left after the current position, and whether all of them were counted (within the budget)."""
    count, last = 0, b"\n"
    while chunk := f.read(1 << 20):
        count += chunk.count(b"\n")
        last = chunk[-1:]
        if budget.spent():
            return count, False
    return count + (last != b"\n"), True


def _long(raw: bytes, more: int = 0) -> str:
    """One line as shown: at most LONG_LINE characters, the cut said."""
    line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
    if len(line) <= LONG_LINE and not more:
        return line
    kept = line[:LONG_LINE]
    if not more:
        return f"{kept} [... {len(line) - LONG_LINE} more characters]"
    dropped = len(raw) - len(kept.encode("utf-8", "replace")) + more  # the rest was skipped unread: bytes
    return f"{kept} [... {dropped} more bytes]"


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
    with _open_text_file(path, shown) as f:
        data = f.read(MAX_EDIT_BYTES + 1)
    if len(data) > MAX_EDIT_BYTES:
        raise ToolError(f"{shown}: larger than {MAX_EDIT_BYTES:,} bytes; not read whole to be edited")
    try:
        text = data.decode("utf-8")
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

def _walk(root: Path, budget: _Budget) -> Iterator[Path]:
    """The regular files under `root` in a stable order, skipping VCS, cache and dependency directories, FIFOs,
    devices and sockets, never entering a linked directory, and leaving out links to files outside `root`. Stops
    (saying so in `budget`) after MAX_WALK_ENTRIES entries or when the time is up."""
    if not root.is_dir():
        if _regular_inside(root, root):
            yield root
        return
    seen = 0
    stack = [root]
    while stack:
        directory = stack.pop()
        try:
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        subdirs = []
        for entry in entries:
            seen += 1
            if seen % CHECK_EVERY == 0 and budget.spent():
                return
            if seen > MAX_WALK_ENTRIES:
                budget.stop(f"stopped after {MAX_WALK_ENTRIES:,} entries")
                return
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in SKIP_DIRS:
                        subdirs.append(Path(entry.path))
                elif entry.is_file(follow_symlinks=False) or (entry.is_symlink()
                                                              and _regular_inside(Path(entry.path), root)):
                    yield Path(entry.path)
            except OSError:
                continue
        stack.extend(reversed(subdirs))  # depth first, in name order


def _regular_inside(path: Path, root: Path) -> bool:
    """A regular file (through its links) that stays inside `root`."""
    try:
        real = path.resolve()
        return real.is_relative_to(root) and stat.S_ISREG(real.stat().st_mode)
    except (OSError, RuntimeError):  # a dangling link, a loop
        return False


def _regex(pattern: str, ignore_case: bool = False, **options: bool) -> Any:
    """RE2 compiled (multi-line: ^ and $ at every line); ToolError for what RE2 does not take."""
    opts = re2.Options()
    opts.log_errors = False  # RE2 logs to stderr, over the app's screen
    opts.case_sensitive = not ignore_case
    for name, value in options.items():
        setattr(opts, name, value)
    try:
        return re2.compile("(?m)" + pattern if options.get("never_nl") else pattern, opts)
    except re2.error as exc:
        why = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise ToolError(f"bad regular expression {pattern!r}: {why} (RE2 syntax, as ripgrep's: no lookaround "
                        "or backreferences)") from None


def _read_regular(path: Path, limit: int) -> bytes | None:
    """The bytes of a regular file of at most `limit` bytes, else None (a FIFO, a device, too big, unreadable)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
                return None
            return f.read(limit + 1)[:limit]
        except OSError:
            return None


def grep(args: dict, ctx: ToolContext) -> str:
    pattern = _string(args, "pattern")
    root = resolve(ctx, _string(args, "path", required=False) or ".")
    name_glob = _string(args, "glob", required=False)
    limit = _int(args, "max_results", 200, minimum=1)
    regex = _regex(pattern, bool(args.get("ignore_case")), never_nl=True)
    if not root.exists():
        raise ToolError(f"{_show(ctx, root)}: no such file or directory")
    budget = _Budget(ctx)
    hits: list[str] = []
    more = read = 0
    for path in _walk(root, budget):
        if budget.spent():
            break
        if name_glob and not fnmatch.fnmatch(path.name, name_glob):
            continue
        data = _read_regular(path, MAX_GREP_FILE)
        if data is None or b"\0" in data[:8192]:
            continue
        read += len(data)
        if read > MAX_GREP_BYTES:
            budget.stop(f"stopped after reading {MAX_GREP_BYTES:,} bytes")
            break
        shown = _show(ctx, path)
        for n, line in _matching_lines(regex, data, budget):
            if len(hits) < limit:
                hits.append(f"{shown}:{n}:{_long(line)}")
            else:
                more += 1
    if more:
        hits.append(f"[{more} more matches not shown: narrow the pattern or the path]")
    if budget.stopped:
        hits.append(f"[{budget.stopped}: the search is incomplete; narrow the path or the glob]")
    return cap("\n".join(hits), ctx.output_cap) if hits else "No matches."


def _matching_lines(regex: Any, data: bytes, budget: _Budget) -> Iterator[tuple[int, bytes]]:
    """(line number, line) of each line of `data` holding a match: one search per matching line, each going on
    from the next line, so the whole file is scanned once."""
    pos = last = found = 0
    line_no = 1
    size = len(data)
    while pos <= size:
        match = regex.search(data, pos)
        if match is None:
            return
        start = match.start()
        if start == size and (size == 0 or data.endswith(b"\n")):
            return  # the empty "line" after the last line end
        line_start = data.rfind(b"\n", 0, start) + 1
        line_end = data.find(b"\n", start)
        line_end = size if line_end < 0 else line_end
        line_no += data.count(b"\n", last, line_start)
        last = line_start
        yield line_no, data[line_start:line_end]
        pos = line_end + 1
        found += 1
        if found % CHECK_EVERY == 0 and budget.spent():
            return


def _glob_regex(pattern: str) -> Any:
    """A path pattern as one RE2 matching whole relative paths: `*` and `?` within a name, `[...]` a class,
    `**` any number of directories (or, last, anything below)."""
    parts = [p for p in pattern.split("/") if p not in ("", ".")]
    out = []
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if part == "**":
            out.append(".*" if last else "(?:[^/]+/)*")
            continue
        out.append(_name_regex(part) + ("" if last else "/"))
    return _regex("".join(out) or r"[^\x00-\x{10FFFF}]")  # "." or "": the directory itself, no file


def _name_regex(part: str) -> str:
    """One name's pattern as RE2, read as fnmatch reads it (a `[` with no class after it is itself)."""
    out, i, n = [], 0, len(part)
    while i < n:
        c = part[i]
        close = -1
        if c == "[":
            j = i + 1 + (part[i + 1:i + 2] == "!")
            j += part[j:j + 1] == "]"
            close = part.find("]", j)
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif close > 0:
            body = part[i + 1:close]
            negate = body.startswith("!")
            members = "".join("\\" + ch if ch in "\\^[]" else ch for ch in body[negate:])
            out.append(f"[{'^/' if negate else ''}{members}]")
            i = close
        else:
            out.append(re2.escape(c))
        i += 1
    return "".join(out)


def glob(args: dict, ctx: ToolContext) -> str:
    pattern = _string(args, "pattern")
    root = resolve(ctx, _string(args, "path", required=False) or ".")
    limit = _int(args, "max_results", 500, minimum=1)
    if not root.is_dir():
        raise ToolError(f"{_show(ctx, root)}: not a directory")
    if Path(pattern).is_absolute() or ".." in Path(pattern).parts:
        raise ToolError("pattern must be relative to path (use the path argument for another directory)")
    regex = _glob_regex(pattern)
    budget = _Budget(ctx)
    found = sorted(p for p in _walk(root, budget)  # a byte of a name that is no UTF-8 matches as one character
                   if regex.fullmatch(p.relative_to(root).as_posix().encode("utf-8", "replace")))
    if not found and not budget.stopped:
        return "No files found."
    lines = [_show(ctx, p) for p in found[:limit]]
    if len(found) > limit:
        lines.append(f"[{len(found) - limit} more files not shown]")
    if budget.stopped:
        lines.append(f"[{budget.stopped}: the listing is incomplete; narrow the path or the pattern]")
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
    Tool("grep", "Search file contents with a regular expression (RE2 syntax, as ripgrep's: no lookaround or "
         "backreferences). Returns path:line:text for each matching line. Skips binary files, files over 5 MB "
         "and .git, node_modules and similar directories.",
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
