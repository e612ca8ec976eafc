"""An agent's own settings files beside its sessions (Codex's and Kimi Code's `config.toml`, the settings.json of
Claude Code, Gemini CLI and Qwen Code, opencode's opencode.json), read for the options of its compaction rule:
defensively, as data from disk (the first MiB, bytes that are no UTF-8 replaced, a file that is missing or
unreadable read as empty), and as they are now, not as they were when the session ran."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

MAX_BYTES = 1 << 20


class Stated(dict):
    """A policy's options as an agent's settings state them, and where each was set (`files`: option -> the file,
    or the environment variable): a dict of the options, so it compares, copies into others and applies as one."""

    def __init__(self, options: Mapping[str, float] = (), files: Mapping[str, str] | None = None) -> None:
        super().__init__(options)
        self.files = {k: v for k, v in (files or {}).items() if k in self}

    def copy(self) -> Stated:
        return Stated(self, self.files)

    def set(self, option: str, value: float, where: object) -> None:
        self[option] = value
        self.files[option] = str(where)

    def drop(self, option: str) -> None:
        self.pop(option, None)
        self.files.pop(option, None)


def read_toml(path: Path) -> dict:
    """The TOML document at `path`, or {} when there is none to read."""
    import tomllib  # here: only Codex's config is TOML (2 ms of every other session's start-up)

    try:
        return tomllib.loads(path.read_bytes()[:MAX_BYTES].decode("utf-8", "replace"))
    except (OSError, ValueError, RecursionError):
        return {}


def read_json(path: Path, comments: bool = False, trailing_commas: bool = False) -> dict:
    """The JSON object at `path`, or {} when there is none to read; `comments`: `//` and `/* */` comments outside
    strings are allowed, as Gemini CLI and Qwen Code allow them in their settings (strip-json-comments);
    `trailing_commas`: a comma before a closing bracket too, as opencode's jsonc-parser allows (allowTrailingComma)."""
    try:
        data = path.read_bytes()[:MAX_BYTES]
        try:
            doc = json.loads(data)
        except ValueError:
            if not comments:
                raise
            text = without_comments(data.decode("utf-8", "replace"))
            doc = json.loads(without_trailing_commas(text) if trailing_commas else text)
    except (OSError, ValueError, RecursionError):
        return {}
    return doc if isinstance(doc, dict) else {}


def without_comments(text: str) -> str:
    """`text` with its `//` and `/* */` comments outside JSON strings replaced by spaces (line breaks kept)."""
    out: list[str] = []
    i, n, start = 0, len(text), 0
    while i < n:
        c = text[i]
        if c == '"':
            i = _past_string(text, i)
        elif text.startswith("//", i) or text.startswith("/*", i):
            end = text.find("\n", i) if text[i + 1] == "/" else text.find("*/", i + 2)
            end = n if end < 0 else end + (0 if text[i + 1] == "/" else 2)
            out.append(text[start:i])
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:end]))
            i = start = end
        else:
            i += 1
    out.append(text[start:])
    return "".join(out)


def without_trailing_commas(text: str) -> str:
    """`text` (no comments in it) with each comma outside strings that only whitespace parts from a closing bracket
    replaced by a space."""
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i = _past_string(text, i)
            continue
        if c == ",":
            j = i + 1
            while j < n and text[j] in " \t\r\n":
                j += 1
            if j < n and text[j] in "}]":
                out[i] = " "
        i += 1
    return "".join(out)


def _past_string(text: str, i: int) -> int:
    """The index after the JSON string that opens at `i` (escapes skipped; the end of `text` if it never closes)."""
    i += 1
    while i < len(text) and text[i] != '"':
        i += 2 if text[i] == "\\" else 1
    return i + 1


def system_settings(env_prefix: str, folder: str, mac_folder: str) -> tuple[Path, Path]:
    """The system defaults and system settings files of Gemini CLI (env_prefix GEMINI_CLI) or Qwen Code (QWEN_CODE):
    `<env_prefix>_SYSTEM_DEFAULTS_PATH` and `_SYSTEM_SETTINGS_PATH` in this process's environment (the agent's own is
    not recorded), else `folder` (`mac_folder` on macOS) /system-defaults.json and /settings.json. The defaults
    apply before the user's settings, the system settings after the project's."""
    env = os.environ
    system = Path(env.get(f"{env_prefix}_SYSTEM_SETTINGS_PATH") or
                  Path(mac_folder if sys.platform == "darwin" else folder) / "settings.json")
    defaults = Path(env.get(f"{env_prefix}_SYSTEM_DEFAULTS_PATH") or system.parent / "system-defaults.json")
    return defaults, system


def root_owned(path: Path) -> bool:
    """Whether `path` and every folder above it are owned by root and writable by no group or other user: Gemini
    CLI 0.61.0 skips a system settings file that is not (isFileAndDirectorySecureSync). Always true on Windows,
    whose ACL check is not modelled."""
    if os.name == "nt":
        return True
    try:
        return all((st := os.stat(p)).st_uid == 0 and not st.st_mode & 0o022 for p in (path, *path.parents))
    except OSError:
        return False


def settings_share(files: Iterable[Path], section: str, key: str) -> Stated:
    """A policy's `compact_pct` from settings.json files, lowest precedence first (the user's, then the project's):
    `section.key` where it is a share of the window in (0, 1] (Gemini CLI's model.compressionThreshold, Qwen Code's
    context.autoCompactThreshold; both CLIs take 0, or anything else, as their default)."""
    stated = Stated()
    for path in files:
        found = read_json(path, comments=True).get(section)
        value = found.get(key) if isinstance(found, dict) else None
        if value.__class__ in (int, float) and 0 < value <= 1:
            stated.set("compact_pct", round(value * 100, 6), path)
    return stated


def up_to_git_root(start: Path) -> list[Path]:
    """`start` and the folders above it up to the first that holds `.git` (the project's root: opencode's worktree,
    Codex's project root), or to the root of the file system."""
    folders = []
    for folder in (start, *start.parents):
        folders.append(folder)
        try:
            if (folder / ".git").exists():
                break
        except OSError:
            break
    return folders
