"""How full a session's window is, as `report` states it: the window, the policy's thresholds, the room left.

Apart from the figures package (whose `__init__` imports all of it) so that `statusline`, which needs only this,
starts quickly; the app's header and bar, `report` and `compact` take the same figures from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from inspector.core.limits import WindowInfo


@dataclass(frozen=True, slots=True)
class Window:
    """The window and the policy's thresholds, and how full it is now. `reserve` is the band the policy keeps
    above its auto-compact threshold; `reserved` what of it the context has not taken (a context past the threshold
    eats into it), so that used + free + reserved is the window."""

    model: str | None
    window: int
    reserve: int
    policy: str
    thresholds: dict[str, int]  # warning / autocompact / blocking, in tokens (absent when the policy has none)
    used: int
    used_measured: bool  # True when `used` rests on the last request's measured usage
    free: int
    reserved: int
    percent: float
    warnings: tuple[str, ...] = ()  # what does not fit: a window below a measured context, the context past it
    policy_source: str = "chosen"
    notes: tuple[str, ...] = ()  # where the window and the lines came from (the policy's notes, but the warnings)



def window_figures(info: WindowInfo, used: int, measured: bool) -> Window:
    """How full `info`'s window is at `used` tokens: free room before auto-compaction and what is left of the
    reserved band, which sum with `used` to the window; the warnings say what does not fit."""
    t = info.thresholds
    state = info.state(used)
    reserved = max(0, min(info.reserved, info.context_window - used))
    warnings = list(info.warnings)
    if used > info.context_window:
        warnings.append(f"the context ({used:,}) is larger than the window ({info.context_window:,})")
    return Window(model=info.model, window=info.context_window, reserve=info.reserved, policy=info.policy,
                  thresholds=t.to_dict(), used=state.used, used_measured=measured, free=state.free,
                  reserved=reserved, percent=state.percent, warnings=tuple(warnings),
                  policy_source=info.policy_source,
                  notes=tuple(n for n in info.notes if n not in info.warnings))
