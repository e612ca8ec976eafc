"""An agent's own settings file beside its sessions (Codex's and Kimi Code's `config.toml`), read for the options of
its compaction rule: defensively, as data from disk (the first MiB, bytes that are no UTF-8 replaced, a file that
is missing or no TOML read as empty), and as it is now, not as it was when the session ran."""

from __future__ import annotations

import tomllib
from pathlib import Path

MAX_BYTES = 1 << 20


def read_toml(path: Path) -> dict:
    """The TOML document at `path`, or {} when there is none to read."""
    try:
        return tomllib.loads(path.read_bytes()[:MAX_BYTES].decode("utf-8", "replace"))
    except (OSError, ValueError, RecursionError):
        return {}
