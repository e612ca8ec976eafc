"""What token accounting gives (`tokens.account`): per-message and per-request figures, and how accurate the
estimates were against measured usage. Held apart from the arithmetic that makes them so that what follows a
compaction no usage has seen (`compacted.py`) can take and give them too.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any, Iterator, Sequence

from inspector.core.model import Request, Session
from inspector.core.pricing import Pricing

@dataclass(slots=True)
class RequestFigures:
    """One request's figures. `predicted` is None for the session's first request (nothing earlier to use)."""

    request: Request
    window: int
    measured: int
    predicted: int | None
    estimated: int
    unrecorded: int = 0
    cause: str | None = None

    @property
    def prediction_error_pct(self) -> float | None:
        return None if self.predicted is None else _pct(self.predicted, self.measured)

    @property
    def estimation_error_pct(self) -> float:
        return _pct(self.estimated, self.measured)


class RequestColumns(Sequence[RequestFigures]):
    """Every request's figures, kept as columns (accounting makes tens of thousands of them in C-level passes): a
    sequence of RequestFigures, each made when asked for (so setting its fields changes nothing here). A slice is a
    list. `unrecorded` and `cause` hold the requests that have one (0 and None elsewhere)."""

    __slots__ = ("request", "window", "measured", "predicted", "estimated", "unrecorded", "cause")

    def __init__(self) -> None:
        self.request: list[Request] = []
        self.window: list[int] = []
        self.measured = array("q")  # ints of tens of thousands each: 8 bytes, where a list holds a 32-byte object too
        self.predicted: list[int | None] = []
        self.estimated = array("q")
        self.unrecorded: dict[int, int] = {}
        self.cause: dict[int, str] = {}

    def __len__(self) -> int:
        return len(self.measured)

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            at = range(*i.indices(len(self)))
            return list(map(RequestFigures, self.request[i], self.window[i], self.measured[i], self.predicted[i],
                            self.estimated[i], map(self.unrecorded.get, at, repeat(0)), map(self.cause.get, at)))
        if i < 0:
            i += len(self)
        return RequestFigures(self.request[i], self.window[i], self.measured[i], self.predicted[i],
                              self.estimated[i], self.unrecorded.get(i, 0), self.cause.get(i))

    def __iter__(self) -> Iterator[RequestFigures]:
        n = len(self)
        return map(RequestFigures, self.request, self.window, self.measured, self.predicted, self.estimated,
                   map(self.unrecorded.get, range(n), repeat(0)), map(self.cause.get, range(n)))

    def __eq__(self, other: object) -> bool:
        return list(self) == list(other) if isinstance(other, (RequestColumns, list)) else NotImplemented

    def __repr__(self) -> str:
        return f"RequestColumns({list(self)!r})"

    def head(self, k: int) -> RequestColumns:
        """A copy of the first k requests' figures."""
        out = RequestColumns()
        out.request, out.window, out.measured = self.request[:k], self.window[:k], self.measured[:k]
        out.predicted, out.estimated = self.predicted[:k], self.estimated[:k]
        out.unrecorded = {i: v for i, v in self.unrecorded.items() if i < k}
        out.cause = {i: v for i, v in self.cause.items() if i < k}
        return out


@dataclass(slots=True)
class Accuracy:
    """Absolute percentage errors against measured contexts (p90: nearest rank)."""

    count: int
    median_abs_error_pct: float | None
    p90_abs_error_pct: float | None
    max_abs_error_pct: float | None

    @classmethod
    def of(cls, errors: Sequence[float]) -> Accuracy:
        return cls.of_sorted(sorted(abs(e) for e in errors))

    @classmethod
    def of_sorted(cls, a: list[float]) -> Accuracy:
        """From absolute errors already sorted (accounting keeps them so, to add an append's in order)."""
        if not a:
            return cls(0, None, None, None)
        p90 = a[max(0, -(-len(a) * 9 // 10) - 1)]
        i = len(a) // 2
        median = a[i] if len(a) % 2 else (a[i - 1] + a[i]) / 2  # statistics.median's, without sorting again
        return cls(len(a), round(median, 4), round(p90, 4), round(a[-1], 4))

    def to_dict(self) -> dict:
        return {"count": self.count, "median_abs_error_pct": self.median_abs_error_pct,
                "p90_abs_error_pct": self.p90_abs_error_pct, "max_abs_error_pct": self.max_abs_error_pct}


class MessageFigures:
    """Per-message figures chosen one way everywhere: measured share, else derived, else estimate. A mixin for
    classes with `measured`, `derived` and `estimated`, so the accounting and the figures drawn cannot disagree."""

    __slots__ = ()
    measured: list[int | None]
    derived: dict[int, int]
    estimated: list[int]

    def size(self, i: int) -> int:
        """Message i's figure: its measured share, else a derived figure, else its estimate."""
        m = self.measured[i]
        if m is not None:
            return m
        d = self.derived.get(i)
        return self.estimated[i] if d is None else d

    def sizes(self) -> list[int]:
        """Every message's `size`, in one pass."""
        out = [e if m is None else m for m, e in zip(self.measured, self.estimated)]
        measured = self.measured
        for i, d in self.derived.items():
            if measured[i] is None:
                out[i] = d
        return out

    def basis(self, i: int) -> str:
        """How message i's figure was made: "measured" (a share of usage), "derived", else "estimated"."""
        if self.measured[i] is not None:
            return "measured"
        return "derived" if i in self.derived else "estimated"

    def figure(self, i: int) -> tuple[int, str]:
        """Message i's figure and its basis."""
        return self.size(i), self.basis(i)


@dataclass
class Accounting(MessageFigures):
    """Token figures of a session. Per message: `estimated[i]` (its content as it is now, estimated), `measured[i]`
    (its share of measured usage; None where no usage covers it), `derived[i]` (a figure that is neither: a measured
    share after an edit no request has measured yet, or a copy's share that a summary's cut split), `category[i]`.
    `prefix` is the unrecorded prefix of the current window's model; `unrecorded` the growth of the current window
    no message explains; `current_context` the figure compaction decisions use; `start` where the current window
    begins. `pricing` prices any message as this accounting does (`compacted.py` uses it to follow an edit)."""

    session: Session
    estimator: str
    estimated: list[int]
    measured: list[int | None]
    category: list[str]
    prefix: int
    prefix_measured: bool
    unrecorded: int
    requests: RequestColumns
    current_context: int
    current_measured: int | None
    by_category: dict[str, int]
    prediction: Accuracy
    estimation: Accuracy
    ratios: dict[str, tuple[float, ...]] = field(default_factory=dict)
    derived: dict[int, int] = field(default_factory=dict)
    start: int = 0
    pricing: Pricing | None = field(default=None, repr=False, compare=False)
    resume: Any = field(default=None, repr=False, compare=False)  # what `tokens.account_appended` resumes from
    work: int = field(default=0, repr=False, compare=False)  # messages + requests visited to make it (tests, benchmarks)
    resumed_at: int | None = field(default=None, repr=False, compare=False)  # the request redone first (None: fresh)
    kept: int = field(default=0, repr=False, compare=False)  # messages whose figures are the previous accounting's
    fit: Any = field(default=None, repr=False, compare=False)  # the calibrated fit `tokens.account` was asked to keep

    @property
    def estimated_total(self) -> int:
        """The estimate of the current context without the last usage: prefix, the window's unrecorded growth and
        the estimates of every message in it."""
        return self.prefix + self.unrecorded + sum(self.estimated[self.start:])

    def worst_predictions(self, n: int = 5) -> list[RequestFigures]:
        scored = [r for r in self.requests if r.predicted is not None and r.request.kind == "turn"]
        return sorted(scored, key=lambda r: -abs(r.prediction_error_pct or 0))[:n]


def _pct(value: float, reference: float) -> float:
    return (value - reference) / reference * 100 if reference else 0.0
