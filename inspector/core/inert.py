"""Session text made inert for a terminal: what a table, an error line or a status bar shows of a model name, a
path or a message must not move the cursor, reorder text or show a secret.

Apart from `report` (which imports the JSON writer and the subagent and usage summaries) so that a command that only
prints a line, such as `statusline`, need not import them.
"""

from __future__ import annotations

import re

# C0/C1 controls but tab and newline, and lone surrogates (valid JSON escapes no terminal encoding can write).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
# Characters that reorder or hide text without showing themselves: bidirectional controls (U+202E turns
# "exe.txt" into "txt.exe"), zero-width characters, spaces other than the plain one, soft hyphen, byte order mark.
INVISIBLE = re.compile("[\u00a0\u00ad\u061c\u180e\u2000-\u200f\u2028-\u202f\u205f-\u2064\u2066-\u206f"
                       "\u3000\ufeff]")

LABEL_CAP = 300  # characters of one label (a model, a path, a tool name) in a table or an error line


def safe(text: object) -> str:
    """Session-provided text made inert for a terminal: control characters (escape sequences) and lone
    surrogates shown as `?`, bidirectional and invisible characters as `<U+202E>`, API keys redacted (a tool may
    have printed one)."""
    return INVISIBLE.sub(codepoint, _CONTROL.sub("?", _redact(str(text))))


def _redact(text: str) -> str:
    """`secrets.redact`, imported when first needed (its patterns and urllib took 3 ms of every command's start-up,
    and `report --json` shows no session text): this binding then names it."""
    global _redact
    from inspector.core.secrets import redact

    _redact = redact
    return redact(text)


def codepoint(match: re.Match[str]) -> str:
    return f"<U+{ord(match.group()):04X}>"


def safe_line(text: object, limit: int = LABEL_CAP) -> str:
    """`safe`, kept on one line (newlines and tabs shown as `?` too) and to `limit` characters (the cut said): a
    table field or an error line that session text (a cwd, a model, a tool or file name) must not break into
    lines of its own, nor fill the screen with (a 10 MB model name)."""
    text = str(text)
    if len(text) > limit:
        text = f"{text[:limit]}… ({len(text) - limit:,} more characters)"
    return safe(text).replace("\n", "?").replace("\t", "?")
