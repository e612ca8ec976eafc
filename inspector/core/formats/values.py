"""The ranges a session's figures must be in, checked once where every loader's session comes out (`load`, and the
live `Follower` for what each update built).

Loaders take a count only when it is an int (`blocks.as_int`), but an int may still be absurd: a 400-digit usage
figure overflows every float it meets (tokens, limits, the what-if replay), a negative one reads as a context of
"-999,998,997 tokens". Such a figure is counted as 0 (a compaction's as unknown), with a warning naming the line.
"""

from __future__ import annotations

from collections.abc import Callable

from inspector.core.model import Session

MAX_TOKENS = 10**10  # far beyond any context window or a session's total: a larger figure is corrupt
USAGE = ("input_tokens", "cache_creation", "cache_read", "output_tokens", "cache_write_1h")
Warn = Callable[[int | None, str], None]


def check_figures(session: Session, warn: Warn, start: int = 0, compactions_start: int = 0) -> None:
    """Zero (and warn of) every usage figure of `session.requests[start:]` out of 0..MAX_TOKENS; clear the same in
    `session.compactions[compactions_start:]` (pre_tokens, tokens_saved) and in the window the session states."""
    m = MAX_TOKENS
    for r in session.requests[start:]:
        if 0 <= r.input_tokens <= m and 0 <= r.cache_creation <= m and 0 <= r.cache_read <= m \
                and 0 <= r.output_tokens <= m and 0 <= r.cache_write_1h <= m:
            continue  # (the common case: one chained comparison per request)
        for name in USAGE:
            setattr(r, name, counted(getattr(r, name), f"usage {_name(name)}", r.line, warn))
    for c in session.compactions[compactions_start:]:
        for name in ("pre_tokens", "tokens_saved"):
            value = getattr(c, name)
            if value is not None and not 0 <= value <= m:
                warn(c.line, f"compaction {_name(name)} is {_shown(value)}, out of range (0 to {m:,}): ignored")
                setattr(c, name, None)
    if session.window is not None and not 0 < session.window <= m:
        warn(None, f"the window the session states is {_shown(session.window)}, out of range (1 to {m:,}): ignored")
        session.window = None


def counted(value: int, what: str, line: int | None, warn: Warn) -> int:
    """`value` when in 0..MAX_TOKENS, else 0 with a warning naming `what` and the line."""
    if 0 <= value <= MAX_TOKENS:
        return value
    warn(line, f"{what} is {_shown(value)}, out of range (0 to {MAX_TOKENS:,}): counted as 0")
    return 0


def _name(field: str) -> str:
    return field.replace("_", " ")


def _shown(value: int) -> str:
    """A figure in a warning, short: a 400-digit one is named by its length."""
    digits = int(abs(value).bit_length() * 0.30103) + 1
    return f"{value:,}" if digits <= 24 else f"{'-' if value < 0 else ''}a {digits}-digit number"
