"""Session text made safe to draw: control and escape characters become visible symbols, never terminal codes.

Everything a session holds is data. Widgets build `rich.text.Text` from these strings (never markup), so `[bold]` or
`[@click=app.quit]` stay literal; this module takes care of the other half, bytes the terminal would act on.
"""

from __future__ import annotations

import re

from rich.text import Text

from inspector.core.inert import INVISIBLE, codepoint
from inspector.core.secrets import redact

# C0 controls except tab and newline, DEL, C1 controls (0x80-0x9f, which some terminals treat as CSI etc.), and
# lone surrogates (a JSON escape like "\ud800" makes one; no terminal encoding can write it).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x80-\x9f\ud800-\udfff]")


def _visible(match: re.Match[str]) -> str:
    c = ord(match.group())
    if c < 0x20:
        return chr(0x2400 + c)  # the Unicode "control pictures" block: ESC -> ␛
    if c == 0x7F:
        return "\u2421"
    if c >= 0xD800:
        return "\ufffd"
    return f"\\x{c:02x}"


def visible(text: str) -> str:
    """`text` with every control character (tab and newline kept) replaced by a visible stand-in, bidirectional
    and invisible characters shown as `<U+202E>`, API keys redacted (a tool may have printed one: the screen may be
    shared)."""
    return INVISIBLE.sub(codepoint, _CONTROL.sub(_visible, redact(text)))


def one_line(text: str, limit: int = 400) -> str:
    """A single-line preview: the first `limit` characters, newlines and tabs as spaces, controls visible."""
    head = text[:limit]
    return visible(head.replace("\r\n", " ").replace("\n", " ").replace("\t", " "))


def human(n: int | float | None) -> str:
    """Token counts the way the bar and list show them: 950, 12.3k, 1.25M."""
    if n is None:
        return "-"
    n = int(n)
    if abs(n) < 1000:
        return str(n)
    if abs(n) < 1_000_000:
        return f"{n / 1000:.1f}k"
    return f"{n / 1_000_000:.2f}M"


def counted(n: int, word: str, many: str | None = None) -> str:
    """"1 request", "2 requests" (`many`: the plural when it is not `word` + "s")."""
    return f"{n:,} {word if n == 1 else many or word + 's'}"


def plain(text: str, style: str = "") -> Text:
    """Session-derived text as a renderable that is never parsed as markup, controls made visible."""
    return Text(visible(text), style=style)


def middle(text: str, width: int) -> str:
    """`text` within `width` characters, cut in the middle (a file name keeps its start and its end)."""
    if len(text) <= width:
        return text
    head = (width - 1) // 2
    return text[:head] + "…" + text[len(text) - (width - 1 - head):]


Part = tuple  # (text, rank) or (text, rank, kept): text a str or Text, or a tuple of its forms, longest first;
# rank an int, or one per form


def fit(parts: list[Part], width: int, seps: tuple[str, ...] = ("  ·  ", " · "), sep_style: str = "") -> Text:
    """`parts` (in reading order) joined by a separator within `width` cells, never cut mid-part while dropping a
    part can help: the wide separator when everything fits, else the narrow one; then, while they do not fit, the
    part whose current form has the highest rank takes its next shorter form, or goes when it has none. A part
    can rank each form (it keeps a long form while less important parts go); a part of rank 0, or marked kept,
    is never dropped (what still does not fit is cut with an ellipsis)."""
    forms = [[Text(f) if isinstance(f, str) else f for f in (p[0] if isinstance(p[0], tuple) else (p[0],))]
             for p in parts]
    ranks = [list(p[1]) if isinstance(p[1], tuple) else [p[1]] * len(f) for p, f in zip(parts, forms)]
    kept = [(len(p) > 2 and p[2]) or r[-1] == 0 for p, r in zip(parts, ranks)]
    chosen: list[int | None] = [0 if f and f[0].plain else None for f in forms]  # a form's index, None: dropped

    def line(sep: str) -> Text:
        shown = [forms[i][k] for i, k in enumerate(chosen) if k is not None]
        return Text(sep, style=sep_style).join(shown)

    for sep in seps:
        out = line(sep)
        if out.cell_len <= width:
            return out
    sep = seps[-1]
    while True:
        movable = [i for i, k in enumerate(chosen) if k is not None and (k < len(forms[i]) - 1 or not kept[i])]
        if not movable:
            break
        i = max(movable, key=lambda i: (ranks[i][chosen[i]], i))  # type: ignore[index]
        chosen[i] = chosen[i] + 1 if chosen[i] < len(forms[i]) - 1 else None  # type: ignore[operator]
        if line(sep).cell_len <= width:
            return line(sep)
    out = line(sep)
    out.truncate(width, overflow="ellipsis")
    return out
