"""Where the bundled sample sessions live: inside the package (`inspector/sessions/`, which the repository's
top-level `sessions/` links to), so they are found after a non-editable install too."""

from __future__ import annotations

from pathlib import Path

SAMPLE_DIR = Path(__file__).resolve().parent / "sessions"


def sample_paths() -> list[Path]:
    """The bundled sample sessions, sorted by name (empty when none ship)."""
    if not SAMPLE_DIR.is_dir():
        return []
    return sorted(p for p in SAMPLE_DIR.iterdir() if p.suffix in (".jsonl", ".json") and p.is_file())
