"""Persistent memory: notes the agent keeps across sessions, appended to the prompt under a `# Memory` heading.

The file is plain Markdown that users may read and edit. Its default place is a per-user data directory:
`$CONTEXT_INSPECTOR_MEMORY` if set, else `$XDG_DATA_HOME/context-inspector/memory.md` (`~/.local/share/...` when
XDG_DATA_HOME is unset; `~/Library/Application Support/...` on macOS, `%APPDATA%\\...` on Windows). Callers that
want memory per project pass their own path to `build_system_prompt(memory=...)`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from inspector.core.prompt.claude_md import MAX_BYTES, read_capped

APP_DIR = "context-inspector"


def user_data_dir() -> Path:
    """The per-user data directory of context-inspector (memory, the agent's saved sessions)."""
    if sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    elif os.name == "nt":
        base = Path(os.environ.get("APPDATA") or Path.home() / "AppData" / "Roaming")
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / APP_DIR


def default_memory_path() -> Path:
    configured = os.environ.get("CONTEXT_INSPECTOR_MEMORY")
    if configured:
        return Path(configured).expanduser()
    return user_data_dir() / "memory.md"


def read_memory(path: Path) -> tuple[str, int, str | None]:
    """The memory text (empty when there is none), the file line it starts at, and a note when the file exists
    but cannot be used whole."""
    try:
        text, first_line, truncated = read_capped(path)
    except FileNotFoundError:
        return "", 1, None
    except OSError as exc:
        return "", 1, f"{path}: memory skipped, cannot be read ({exc.strerror or exc})"
    return text, first_line, f"{path}: only the first {MAX_BYTES:,} bytes of memory were read" if truncated else None


def remember(note: str, path: Path | None = None) -> Path:
    """Append one note as a Markdown list item (creating the file and its directory); returns the file's path."""
    path = path or default_memory_path()
    text = " ".join(note.split())
    if not text:
        raise ValueError("an empty note cannot be remembered")
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(f"- {text}\n")
    return path
