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
from inspector.core.model import LoadError, Session

__all__ = ["load", "detect", "resolve", "subagent_files", "Progress"]

BINARY_PROBE = 8192


def load(path: str | os.PathLike[str], progress: Progress | None = None) -> Session:
    """The session at `path`. `progress(bytes_done, bytes_total)` is called every ~0.1 s while a large file reads."""
    file = resolve(path)
    fmt = detect(file)
    loader: Callable[[Path, Progress | None], Session] = _LOADERS[fmt]
    session = loader(file, progress)
    from inspector.core.compaction.pairing import pairing_warnings  # the compaction package imports formats

    session.warnings.extend(pairing_warnings(session))
    return session


def resolve(path: str | os.PathLike[str]) -> Path:
    """The session file `path` names: itself, or for a directory (a Claude Code project directory) its newest
    `*.jsonl` session by modification time; a directory of such directories (`~/.claude/projects`) gives the newest
    session of them all. LoadError for anything that cannot be a readable session."""
    p = Path(path).expanduser()
    try:
        p.stat()
    except FileNotFoundError:
        if str(path) == "-":
            raise LoadError("-: sessions are read from files, not standard input; save it to a file first") from None
        raise LoadError(f"{p}: no such file or directory") from None
    except OSError as exc:  # a symlink loop, a directory we may not enter, a name too long
        raise LoadError(f"{p}: cannot open ({exc.strerror or exc})") from None
    if p.is_dir():
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
    if b"\0" in head:
        raise LoadError(f"{p}: binary file, not a session")
    return p


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
    read_jsonl(path, loader.feed, loader.warn, progress)
    return loader.build()


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


def _load_qwen(path: Path, progress: Progress | None) -> Session:
    from inspector.core.formats.qwen import QwenLoader

    loader = QwenLoader(str(path))
    read_jsonl(path, loader.feed, loader.warn, progress)
    return loader.build()


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
    "neutral": _load_neutral,
    "gemini-cli": _load_gemini,
    "qwen-code": _load_qwen,
}
