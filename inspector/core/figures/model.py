"""What the figures of one session state are: the values every view, the CLI and the agent view read.

`Figures` is made by `compute` (or followed from figures before by `extend`, `after` or `provisional`) and never
changed afterwards; drawing a row is a lookup. Categories are held as keys (`inspector.core.categories`) and
labelled only where they are drawn.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from inspector.core.accounting import MessageFigures
from inspector.core.model import Session
from inspector.core.stamps import when as _when
from inspector.core.window import Window

if TYPE_CHECKING:
    from inspector.core.accounting import Accounting


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything the user can change about how figures are made; each change re-computes them."""

    policy: str | None = None  # None: the session's own (inspector.core.limits.default_policy)
    window: int | None = None  # None: the model's own window
    estimator: str = "calibrated"
    micro_strategy: str = "clear"  # the microcompaction previewed: clear (Claude Code) or snip (the reference design)
    keep_recent: int = 5  # clear: results kept
    preserve_last_n: int = 6  # snip: messages protected at the end
    max_chars: int = 2000  # snip: results longer than this are cut


@dataclass(slots=True)
class RequestPoint:
    """One request on the timeline: its measured context and, when known, what the hybrid figure predicted."""

    message_index: int
    measured: int
    predicted: int | None
    timestamp: str | None


@dataclass(slots=True)
class Forecast:
    """When the next auto-compact fires if the context keeps growing at the recent rate."""

    rate: float  # tokens per request, over the last `over` requests
    over: int
    requests_left: int | None  # None: not growing, or no threshold
    eta: datetime | None  # from the recent time per request


@dataclass(slots=True)
class Links:
    """How a session's tool calls and results refer to each other: known as soon as it is loaded, so the list and
    the detail pane can show it while the token figures are still being computed."""

    session: Session
    tool_names: dict[str, str]  # tool_use id -> tool name
    call_at: dict[str, int]  # tool_use id -> index of the message making the call
    result_at: dict[str, int]  # tool_use id -> index of the message with its result


@dataclass(slots=True)
class PromptInfo:
    """The prompt view's content: sections (core `Section`s) and lint findings, with a note on their provenance."""

    sections: list
    findings: list
    note: str = ""


@dataclass(slots=True)
class Figures(MessageFigures):
    """Every figure the views draw for one session state under one set of settings.

    Per message: `estimated`, `measured` (None where no usage covers it), `derived` (a figure that is neither:
    see `tokens.Accounting`), `category` (a key), `cumulative` (what the window held up to and including it).
    `categories` is the current context per category key, in drawing order; `breakdown` the same with the free
    and reserved parts, summing to the window. `provisional`: follow mode's quick figures before the exact ones
    (`accounting` is then the last exact accounting, not this state's); `preview`: a session's end's own figures
    while the rest is read."""

    session: Session
    settings: Settings
    accounting: Accounting | None
    estimated: list[int]
    measured: list[int | None]
    derived: dict[int, int]
    cumulative: list[int]
    category: list[str]
    window: Window
    categories: list[tuple[str, int]]
    categories_measured: bool
    requests: list[RequestPoint]
    tool_names: dict[str, str] = field(default_factory=dict)
    call_at: dict[str, int] = field(default_factory=dict)
    result_at: dict[str, int] = field(default_factory=dict)
    orphans: set[int] = field(default_factory=set)  # indices of messages with an unanswered tool_use or lone result
    micro_saving: int | None = None  # what the previewed microcompaction would free now (None: not computed)
    micro_note: str = ""
    prompt: PromptInfo | None = None
    prefix_sections: list = field(default_factory=list)  # the prefix by name (core.prefix.PrefixSection)
    cache_breaks: list = field(default_factory=list)  # the prompt cache's breaks (core.prompt_cache.CacheBreak)
    provisional: bool = False
    preview: bool = False  # figures of a preview of the session's end alone (`last_response.preview_figures`)
    resume: object | None = field(default=None, repr=False, compare=False)  # for `extend`
    work: int = field(default=0, repr=False, compare=False)  # messages + requests walked to make it

    @property
    def breakdown(self) -> list[tuple[str, int]]:
        """`categories`, then free and reserved: the parts of the window."""
        from inspector.core import categories as cat

        w = self.window
        return [*self.categories, (cat.FREE, w.free), (cat.RESERVED, w.reserved)]


def forecast(points: list[RequestPoint], threshold: int | None, over: int = 10) -> Forecast:
    """Linear forecast from the last `over` requests since the last drop in context (a compaction resets growth)."""
    recent: list[RequestPoint] = []
    for p in points:
        if recent and p.measured < recent[-1].measured * 0.7:
            recent = []
        recent.append(p)
    recent = recent[-(over + 1):]
    if len(recent) < 2:
        return Forecast(0.0, 0, None, None)
    rate = (recent[-1].measured - recent[0].measured) / (len(recent) - 1)
    left = None
    if threshold is not None and rate > 0:
        gap = threshold - recent[-1].measured
        left = max(0, int(gap / rate + 0.999))
    eta = None
    t0, t1 = _when(recent[0].timestamp), _when(recent[-1].timestamp)
    if left is not None and t0 and t1 and t1 > t0:
        eta = t1 + (t1 - t0) / (len(recent) - 1) * left
    return Forecast(rate, len(recent) - 1, left, eta)

