"""Load any supported session file (or a Claude Code project directory) into a Session.

`load(path)` resolves the path, refuses what is no session with a one-line LoadError naming it, detects the format
from the content and runs that format's loader. Loaders report per-line problems as LoadWarnings and never estimate
tokens: they only record what the file says.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

from inspector.core.formats.detect import detect
from inspector.core.formats.jsonl import Progress, first_object, loads, read_jsonl
from inspector.core.formats.values import check_figures
from inspector.core.gc_pause import gc_paused
from inspector.core.model import LoadError, LoadWarning, Session
from inspector.core.pairing import pairing_warnings

__all__ = ["load", "detect", "resolve", "subagent_files", "Progress", "split_address", "stamp"]

BINARY_PROBE = 8192
# How PATH may name a session, for the commands' --help: the directories and the opencode database address.
PATH_HELP = ("a session file (any supported format), a directory of sessions (a Claude Code project directory, a "
             "Gemini CLI or Qwen Code chats directory: its newest session), opencode's data directory or database "
             "(its newest session; DATABASE#SESSION-ID picks one, e.g. opencode.db#ses_...) or an opencode "
             "storage/ tree")
SQLITE_MAGIC = b"SQLite format 3\x00"


def load(path: str | os.PathLike[str], progress: Progress | None = None) -> Session:
    """The session at `path`. `progress(bytes_done, bytes_total)` is called every ~0.1 s while a large file reads.
    `DATABASE#ID` picks one session of an opencode database (the newest without it)."""
    from inspector.core.formats.cline_task import load_task, task_folder

    file, selector = split_address(path)
    file = resolve(file)
    folder = task_folder(file)
    fmt = None if folder is not None else detect(file)
    if selector is not None and fmt != "opencode":
        raise LoadError(f"{path}: '#ID' picks a session of an opencode database; {file} is a {fmt or 'task'} "
                        "session")
    if folder is not None:  # a Cline / Roo Code task: several files, loaded as one
        session = load_task(folder)
    elif fmt == "opencode":
        from inspector.core.formats import opencode

        session = opencode.load(file, selector)
    else:
        loader: Callable[[Path, Progress | None], Session] = _LOADERS[fmt]
        session = loader(file, progress)

    check_figures(session, lambda line, message: session.warnings.append(LoadWarning(line, message)))
    session.warnings.extend(pairing_warnings(session))
    return session


def split_address(path: str | os.PathLike[str]) -> tuple[Path, str | None]:
    """`opencode.db#ses_x` as (the database, "ses_x"); any other path as itself and None."""
    if "#" not in os.fspath(path):
        return Path(path).expanduser(), None  # without importing opencode's loader (and sqlite3)
    from inspector.core.formats.opencode import split_address as split

    return split(path)


def stamp(path: Path) -> tuple:
    """What changes when a document session changes: its size and modification time, and those of an SQLite
    write-ahead log beside it (a database's new rows may be only there)."""
    out: list = []
    for p in (path, Path(f"{path}-wal")):
        try:
            st = p.stat()
            out += [st.st_size, st.st_mtime_ns]
        except OSError:
            out += [None, None]
    return tuple(out)


def resolve(path: str | os.PathLike[str]) -> Path:
    """The session file `path` names: itself, or for a directory (a Claude Code project directory) its newest
    `*.jsonl` session by modification time; a directory of such directories (`~/.claude/projects`) gives the newest
    session of them all; opencode's data directory gives its database, an opencode `storage` tree its newest
    session file. A `DATABASE#ID` address names the database. LoadError for anything that cannot be a readable
    session."""
    p, _ = split_address(path)
    try:
        p.stat()
    except FileNotFoundError:
        if str(path) == "-":
            raise LoadError("-: sessions are read from files, not standard input; save it to a file first") from None
        raise LoadError(f"{p}: no such file or directory") from None
    except OSError as exc:  # a symlink loop, a directory we may not enter, a name too long
        raise LoadError(f"{p}: cannot open ({exc.strerror or exc})") from None
    if p.is_dir():
        from inspector.core.formats.agent_stores import session_file, sessions_under

        if session_file(p) is not None:  # a Copilot, Cline, Roo Code, Cline SDK, Kimi or Kimi Code session folder
            p = session_file(p)  # type: ignore[assignment]
        elif (listed := sessions_under(p)) is not None:  # Kimi Code's home, or a folder of its sessions
            if not listed:
                raise LoadError(f"{p}: holds no Kimi Code session yet")
            p = listed[0].path
    if p.is_dir():
        opencode = _opencode_in(p)
        if opencode is not None:
            return opencode
        try:
            found = _sessions_in(p)
            if not found:  # `~/.claude/projects` itself: the newest session of any project
                found = [s for d in sorted(p.iterdir()) if d.is_dir() for s in _sessions_in(d)]
        except OSError as exc:
            raise LoadError(f"{p}: cannot list directory ({exc.strerror or exc})") from None
        if not found:
            raise LoadError(f"{p}: directory holds no session (*.jsonl file), nor do its subdirectories")
        p = max(found)[2]
    if not p.is_file():
        raise LoadError(f"{p}: not a regular file")
    try:
        with open(p, "rb") as f:
            head = f.read(BINARY_PROBE)
    except OSError as exc:
        raise LoadError(f"{p}: cannot read ({exc.strerror or exc})") from None
    if b"\0" in head and not head.startswith(SQLITE_MAGIC):
        if _utf16(head):
            raise LoadError(f"{p}: UTF-16 text, not UTF-8 as sessions are; convert it first "
                            "(iconv -f UTF-16 -t UTF-8 FILE > FILE.jsonl)")
        raise LoadError(f"{p}: binary file, not a session")
    return p


def _utf16(head: bytes) -> bool:
    """A byte order mark of UTF-16, or ASCII text with a NUL beside every character (UTF-16 without one)."""
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return True
    even, odd = head[0::2], head[1::2]
    return len(head) >= 4 and (even.count(0) == len(even) or odd.count(0) == len(odd))


def _opencode_in(folder: Path) -> Path | None:
    """opencode's data directory (its database: `opencode.db`, else the newest `opencode-<channel>.db`; or its
    storage tree's newest session) or a storage tree."""
    from inspector.core.formats.opencode import newest_session_file, storage_root

    try:
        databases = [p for p in folder.glob("opencode*.db") if p.is_file()]  # opencode-<channel>.db beside it
        if databases:
            return max(databases, key=lambda p: (p.name == "opencode.db", p.stat().st_mtime))
        root = storage_root(folder)
        if root is None:
            return None
        newest = newest_session_file(root)
    except OSError as exc:
        raise LoadError(f"{folder}: cannot list directory ({exc.strerror or exc})") from None
    if newest is None:
        raise LoadError(f"{folder}: an opencode storage tree with no readable session")
    return newest


def _sessions_in(folder: Path) -> list[tuple[float, str, Path]]:
    """(mtime, name, path) of the non-empty session files directly in `folder` (subagent files excluded); a file
    that vanishes while we look is simply not there."""
    found = []
    for c in folder.iterdir():
        if c.suffix == ".jsonl" and not c.name.startswith("agent-"):
            try:
                st = c.stat()
            except OSError:
                continue
            if st.st_size > 0 and c.is_file():
                found.append((st.st_mtime, c.name, c))
    return found


def subagent_files(session_file: Path) -> list[str]:
    """Subagent windows of a Claude Code session: `<session-id>/subagents/*.jsonl`, and the older layout's
    `agent-*.jsonl` files beside the session whose lines name this session's id."""
    found = sorted(str(f) for f in (session_file.parent / session_file.stem / "subagents").glob("*.jsonl"))
    if not session_file.name.startswith("agent-"):
        needle = f'"sessionId":"{session_file.stem}"'.encode()
        for f in sorted(session_file.parent.glob("agent-*.jsonl")):
            try:
                with open(f, "rb") as fh:
                    head = fh.read(BINARY_PROBE)
            except OSError:
                continue
            if needle in head.replace(b'": "', b'":"'):
                found.append(str(f))
    return found


def _load_claude_code(path: Path, progress: Progress | None) -> Session:
    from inspector.core.formats.claude_code import ClaudeCodeLoader

    loader = ClaudeCodeLoader(str(path), subagent_files(path))
    with gc_paused():  # the build too: its objects all live on (the reading pauses on its own)
        if first_byte(path) == b"[":  # a JSON array of Claude Code lines (an export): entry N stands for line N
            from inspector.core.formats.jsonl import loads

            try:
                with open(path, "rb") as f:
                    entries = loads(f.read())
            except ValueError as exc:
                raise LoadError(f"{path}: not valid JSON ({exc})") from None
            for number, obj in enumerate(entries, 1):
                loader.feed(number, 0, obj)
        else:
            read_jsonl(path, loader.feed, loader.warn, progress, decoder=loader.decoder, feed_run=loader.feed_run)
        return loader.build()


def first_byte(path: Path) -> bytes:
    with open(path, "rb") as f:
        return f.read(4096).lstrip()[:1]


def _load_neutral(path: Path, progress: Progress | None) -> Session:
    from inspector.core.formats.neutral import load_neutral

    return load_neutral(path, progress)


def _load_codex(path: Path, progress: Progress | None) -> Session:
    from inspector.core.formats.codex import CodexLoader

    loader = CodexLoader(str(path))
    read_jsonl(path, loader.feed, loader.warn, progress)
    return loader.build()


def _load_anthropic(path: Path, progress: Progress | None) -> Session:
    from inspector.core.formats.conversations import load_conversation

    return load_conversation(path, "anthropic-request", progress)


def _load_openai(path: Path, progress: Progress | None) -> Session:
    from inspector.core.formats.conversations import load_conversation

    return load_conversation(path, "openai-chat", progress)


def _load_responses(path: Path, progress: Progress | None) -> Session:
    from inspector.core.formats.conversations import load_conversation

    return load_conversation(path, "openai-responses", progress)


def _load_copilot(path: Path, progress: Progress | None) -> Session:
    from inspector.core.formats.copilot import CopilotLoader

    loader = CopilotLoader(str(path))
    read_jsonl(path, loader.feed, loader.warn, progress)
    return loader.build()


def _load_qwen(path: Path, progress: Progress | None) -> Session:
    from inspector.core.formats.qwen import QwenLoader

    loader = QwenLoader(str(path))
    read_jsonl(path, loader.feed, loader.warn, progress)
    return loader.build()


def _load_kimi(path: Path, progress: Progress | None) -> Session:
    from inspector.core.formats.kimi import load_kimi

    return load_kimi(path, progress)


def _load_kimi_code(path: Path, progress: Progress | None) -> Session:
    from inspector.core.formats.kimi_code import load_kimi_code

    return load_kimi_code(path, progress)


def _load_cline_sdk(path: Path, progress: Progress | None) -> Session:
    from inspector.core.formats.cline_sdk import load_cline_sdk

    return load_cline_sdk(path)


def _load_gemini(path: Path, progress: Progress | None) -> Session:
    from inspector.core.formats.gemini import GeminiLoader

    loader = GeminiLoader(str(path))
    if first_object(path) is None:  # a legacy session-*.json, pretty-printed: one document
        loader.feed_document(_document(path))
    else:
        read_jsonl(path, loader.feed, loader.warn, progress)
    return loader.build()


def _document(path: Path) -> dict:
    try:
        with open(path, "rb") as f:
            doc = loads(f.read())
    except ValueError as exc:
        raise LoadError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(doc, dict):
        raise LoadError(f"{path}: not a JSON object")
    return doc


_LOADERS: dict[str, Callable[[Path, Progress | None], Session]] = {
    "claude-code": _load_claude_code,
    "codex": _load_codex,
    "anthropic-request": _load_anthropic,
    "openai-chat": _load_openai,
    "openai-responses": _load_responses,
    "neutral": _load_neutral,
    "copilot": _load_copilot,
    "kimi": _load_kimi,
    "kimi-code": _load_kimi_code,
    "cline-sdk": _load_cline_sdk,
    "gemini-cli": _load_gemini,
    "qwen-code": _load_qwen,
}
