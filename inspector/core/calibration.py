"""Fitting the `script` ratios on a session's own measured requests: the `calibrated` estimator.

Each growth between two consecutive requests of one window (same model, nothing unrecorded in between) is an
observation: measured growth ~ sum over groups of multiplier x the `script` tokens of that group in the messages
added. The multipliers are a Bayesian ridge fit toward 1 (the cited script ratios): with no data they are the
script ratios, a few large observations move them, and small noisy ones barely do. One fit per model, since
tokenizers differ between model generations.

The fit is incremental (normal equations accumulated per observation), so accounting can score every request with
the ratios known *before* it: the calibrated figure for request k never uses request k's own usage, or any later.

The ratios that estimate every message of the session (`Calibrator.estimator`) are *settled*: solved after each of
the first 32 observations of a model, then only when its observations have grown by a quarter since the last solve.
A new request then changes no earlier message's figure except at those points (a few dozen in a session's life), so
following a live session can account an append by what it adds (tokens.account_appended); the fit that many
observations moves barely changes between them.
"""

from __future__ import annotations

from itertools import repeat
from operator import add, mul, sub
from typing import Sequence

from inspector.core.estimators import (
    CJK, CODE, JSON_, MEDIA, MESSAGE, N_FEATURES, OTHER, PROSE, SCRIPT_RATIOS, STATED, SYMBOL, TOKENS, TOOL_RESULT,
    TOOL_USE, Calibrated, Tokenizer, sum_in_order)

GROUP_NAMES: tuple[str, ...] = ("prose", "code", "json", "scripts", "media", "structure", "tokens")
# STATED (sizes the source states) is in no group: it is not fitted, and an observation's growth is taken net of it.
_GROUP_OF = {PROSE: 0, CODE: 1, JSON_: 2, CJK: 3, OTHER: 3, SYMBOL: 3, MEDIA: 4, TOOL_USE: 5, TOOL_RESULT: 5,
             MESSAGE: 5, TOKENS: 6}
N_GROUPS = len(GROUP_NAMES)

PRIOR_SD = 0.3          # how far a multiplier may plausibly sit from 1 before any data (tokenizers differ ~1.5x)
NOISE_SHARE = 0.01      # an observation's noise: 5% of its size ...
NOISE_FLOOR = 20.0      # ... plus 20 tokens (reminders and wrappers the transcript does not record)
REFIT_EVERY = 8         # after the first 32 observations of a model, solve again every 8 (the fit moves slowly) ...
REFIT_SHARE = 64        # ... or, past 512, when its observations grew by 1/64 (a solve per 8 of 50,000 cost 0.15 s)
YOUNG = 32              # the settled fit is solved after each of a model's first YOUNG observations ...
SETTLE_GROWTH = 1.25    # ... then again when its observations grew by this factor


_MEMBERS = tuple(tuple(i for i in range(N_FEATURES) if _GROUP_OF.get(i) == g) for g in range(N_GROUPS))


# `group_tokens` spells the groups out (a call per observation: 50,000 in a long session); it must match them.
assert _MEMBERS == ((PROSE,), (CODE,), (JSON_,), (CJK, OTHER, SYMBOL), (MEDIA,), (TOOL_USE, TOOL_RESULT, MESSAGE),
                    (TOKENS,))


def group_tokens(features: Sequence[float], base: Sequence[float] = SCRIPT_RATIOS) -> list[float]:
    """The `base` tokens of each group in a feature vector (each group summed from 0.0 in feature order)."""
    t = list(map(mul, base, features))
    return [0.0 + t[PROSE], 0.0 + t[CODE], 0.0 + t[JSON_], 0.0 + t[CJK] + t[OTHER] + t[SYMBOL], 0.0 + t[MEDIA],
            0.0 + t[TOOL_USE] + t[TOOL_RESULT] + t[MESSAGE], 0.0 + t[TOKENS]]


def group_columns(features: Sequence[list[float] | float | None], base: Sequence[float]
                  ) -> tuple[list[list[float] | float | None], list[float] | float | None]:
    """`group_tokens` of many feature vectors, and their sums, as columns: each feature a list (one value per
    vector), a float (the same in each) or None (0.0 in each), and so each group and the sums (None: 0.0). The very
    same floats: a term of 0.0 leaves a group's sum or the total as it is, and none is -0.0 (features are never
    -0.0, nor are differences of their running sums, nor their products with the positive base ratios)."""
    x: list[list[float] | float | None] = []
    total: list[float] | float | None = None
    for members in _MEMBERS:
        group = None
        for i in members:
            column = features[i]
            if column is not None:
                t = base[i] * column if isinstance(column, float) else list(map(mul, repeat(base[i]), column))
                group = t if group is None else _plus(group, t)
        x.append(group)
        if group is not None and group != 0.0:  # (a group of 0.0 adds nothing to the total)
            total = group if total is None else _plus(total, group)
    return x, total


def _plus(a: list[float] | float, b: list[float] | float) -> list[float] | float:
    """a + b, each a list (one value per vector) or a float (the same in each)."""
    if isinstance(a, float) and isinstance(b, float):
        return a + b
    return list(map(add, repeat(a) if isinstance(a, float) else a, repeat(b) if isinstance(b, float) else b))


class _ModelFit:
    __slots__ = ("m", "v", "n", "mult", "solved_at", "ratios", "settled", "settle_at", "base", "active", "pending",
                 "clipped", "clipped_at")

    def __init__(self, base: tuple[float, ...] = SCRIPT_RATIOS) -> None:
        self.base = base
        prior = 1 / PRIOR_SD ** 2
        self.m = [[prior if i == j else 0.0 for j in range(N_GROUPS)] for i in range(N_GROUPS)]
        self.v = [prior] * N_GROUPS
        self.n = 0
        self.mult = [1.0] * N_GROUPS
        self.solved_at = 0
        self.ratios: tuple[float, ...] | None = None  # the feature ratios of `mult`, made once per solve
        self.settled: tuple[float, ...] = base  # the feature ratios of the settled fit
        self.settle_at = 1  # the observation count at which the settled fit is solved next
        self.active: list[int] = []  # the groups some observation had (the others are uncoupled: `_solve`)
        # Observations not yet in m and v, as columns (each group's x, the weights, the growths y): added when a
        # solve or a copy reads them (`_fold`)
        self.pending: tuple[list[list[float]], list[float], list[float]] = ([[] for _ in range(N_GROUPS)], [], [])
        # The clipped solution at observation count `clipped_at`: the settled fit and the multipliers solve at the
        # same counts (every one of the first 32), the same system: solved once (`_clipped`).
        self.clipped: list[float] = self.mult
        self.clipped_at = 0

    def copy(self) -> _ModelFit:
        self._fold()
        out = _ModelFit.__new__(_ModelFit)
        out.base = self.base
        out.m = [row[:] for row in self.m]
        out.v, out.mult = self.v[:], self.mult[:]
        out.n, out.solved_at, out.ratios = self.n, self.solved_at, self.ratios
        out.settled, out.settle_at = self.settled, self.settle_at
        out.active = self.active[:]
        out.pending = ([[] for _ in range(N_GROUPS)], [], [])
        out.clipped, out.clipped_at = self.clipped, self.clipped_at
        return out

    def add(self, x: Sequence[Sequence[float]], totals: Sequence[float], ys: Sequence[float]) -> None:
        """Observations: each group's tokens `x` (a column per group, one value per observation), their sums
        `totals`, the growths `ys`; added one after another as they came (the settled fit solves at its counts)."""
        # (1.0 / x is 1 / x: without int's conversion; a comprehension fuses the steps of each)
        ws = [1.0 / (sd * sd) for sd in [NOISE_SHARE * t + NOISE_FLOOR for t in totals]]
        px, pw, py = self.pending
        at, count = 0, len(ws)
        while at < count:
            upto = min(count, at + self.settle_at - self.n)  # the observations before the next settled solve
            for column, xs in zip(px, x):
                column += xs[at:upto]
            pw += ws[at:upto]
            py += ys[at:upto]
            self.n += upto - at
            at = upto
            if self.n >= self.settle_at:
                self.settled = _feature_ratios(self._clipped(), self.base)
                self.settle_at = self.n + 1 if self.n < YOUNG else -(-self.n * 5 // 4)  # ceil(n x SETTLE_GROWTH)

    def _fold(self) -> None:
        """Add the pending observations to the normal equations: m[i][j] += w x[i] x[j] and v[i] += w x[i] y, one
        observation after another as they came (the very same floats as adding each when it came), an entry at a
        time over all of them in C loops. A group an observation lacks adds 0.0 there, which changes nothing."""
        columns, ws, ys = self.pending
        if not ws:
            return
        m, v = self.m, self.v
        if len(ws) == 1:  # each of a model's first observations (solved at once): the same sums, unrolled
            x, w, y = [column[0] for column in columns], ws[0], ys[0]
            had = [j for j, xj in enumerate(x) if xj]
            for i in had:
                wx, row = w * x[i], m[i]
                for j in had:
                    row[j] = row[j] + wx * x[j]
                v[i] = v[i] + wx * y
            self._activate(had)
            self._clear()
            return
        # A group none of them had adds only (finite) x 0.0 terms to its row and column: entries that are never -0.0
        # stay as they are, so those entries are left alone.
        had = [j for j, column in enumerate(columns) if any(column)]
        for i in had:
            column = columns[i]
            wx = list(map(mul, ws, column))
            row = m[i]
            for j in had:
                row[j] = sum_in_order(map(mul, wx, columns[j]), row[j])
            v[i] = sum_in_order(map(mul, wx, ys), v[i])
        self._activate(had)
        self._clear()

    def _clear(self) -> None:
        for column in self.pending[0]:
            column.clear()
        self.pending[1].clear()
        self.pending[2].clear()

    def _activate(self, groups: list[int]) -> None:
        if any(g not in self.active for g in groups):
            self.active = sorted({*self.active, *groups})

    def due(self) -> bool:
        """Whether `multipliers` solves again (until then, `feature_ratios` is the same tuple)."""
        return self.n != self.solved_at and (
            self.n <= 32 or self.n - self.solved_at >= max(REFIT_EVERY, self.solved_at // REFIT_SHARE))

    def until_due(self) -> int:
        """How many more observations make `due` true (it is false: the multipliers were solved since)."""
        if self.n < 32:
            return 1
        return max(1, max(REFIT_EVERY, self.solved_at // REFIT_SHARE) - (self.n - self.solved_at))

    def multipliers(self) -> list[float]:
        if self.due():
            self.mult = self._clipped()
            self.solved_at = self.n
            self.ratios = None
        return self.mult

    def _clipped(self) -> list[float]:
        """The multipliers solved from every observation so far, each kept within [0.2, 5] (read only: shared)."""
        if self.clipped_at != self.n:
            self._fold()
            self.clipped = [max(0.2, min(5.0, s)) for s in _solve(self.m, self.v, self.active)]
            self.clipped_at = self.n
        return self.clipped

    def feature_ratios(self) -> tuple[float, ...]:
        """The base ratios scaled by the current multipliers: the same tuple object until the next solve."""
        mult = self.multipliers()
        if self.ratios is None:
            self.ratios = _feature_ratios(mult, self.base)
        return self.ratios


_GROUP_AT = tuple(_GROUP_OF.get(i) for i in range(N_FEATURES))  # each feature's group (None: STATED, not fitted)


def _feature_ratios(mult: Sequence[float], base: Sequence[float] = SCRIPT_RATIOS) -> tuple[float, ...]:
    return tuple(map(mul, base, [1.0 if g is None else mult[g] for g in _GROUP_AT]))


def _solve(m: list[list[float]], v: list[float], active: list[int] | None = None) -> list[float]:
    """Solve m x = v (symmetric positive definite: the prior keeps it so) by Gaussian elimination.

    A group no observation had keeps its prior row and column (zero but the diagonal): it is uncoupled from the
    others, its value is v/m of its diagonal, and eliminating the rest never touches it (never a pivot, every
    factor against it zero). So the `active` groups are solved alone: the very same floats as the whole system,
    for a fraction of the work (a session of tool calls has 3 or 4 of the 7 groups)."""
    if active is not None and len(active) < len(v):
        x = [v[i] / m[i][i] for i in range(len(v))]
        for i, xi in zip(active, _solve([[m[i][j] for j in active] for i in active], [v[i] for i in active])):
            x[i] = xi
        return x
    n = len(v)
    a = [row[:] + [v[i]] for i, row in enumerate(m)]
    for i in range(n):
        column = [abs(row[i]) for row in a[i:]]
        p = i + column.index(max(column))  # the first of the largest, as max(key=...) picks it
        a[i], a[p] = a[p], a[i]
        pivot = a[i][i]
        tail = a[i][i:]
        for row in a[i + 1:]:
            f = row[i] / pivot
            if f:
                row[i:] = map(sub, row[i:], map(mul, repeat(f), tail))
    x = [0.0] * n
    for i in reversed(range(n)):
        x[i] = (a[i][n] - sum(map(mul, a[i][i + 1:n], x[i + 1:]))) / a[i][i]
    return x


class Calibrator:
    """Accumulates observations per model; `ratios(model)` are the feature ratios fitted so far, from `base`
    (SCRIPT_RATIOS; O200K_RATIOS when a tokenizer counts the text, `counter`)."""

    def __init__(self, counter: Tokenizer | None = None) -> None:
        self.fits: dict[str, _ModelFit] = {}
        self.counter = counter
        self.base = Calibrated(counter=counter).base

    def copy(self) -> Calibrator:
        """An independent copy (accounting keeps one from before a session's last request, to resume from)."""
        out = Calibrator(self.counter)
        out.fits = {k: f.copy() for k, f in self.fits.items()}
        return out

    def observe(self, model: str | None, features: Sequence[float], measured_growth: float) -> bool:
        """Add an observation; True when `ratios(model)` may now answer otherwise (the fit solves again)."""
        x = group_tokens(features, self.base)
        total = sum_in_order(x)
        if total <= 0:
            return False
        self._fit(model).add([[g] for g in x], [total], [measured_growth - features[STATED]])
        return self.fits[model or ""].due()

    def observe_many(self, model: str | None, x: Sequence[Sequence[float]], totals: Sequence[float],
                     ys: Sequence[float]) -> None:
        """`observe` of several observations (each with `totals` > 0), as columns: each group's tokens, their sums,
        the growths net of stated sizes."""
        self._fit(model).add(x, totals, ys)

    def _fit(self, model: str | None) -> _ModelFit:
        fit = self.fits.get(model or "")
        if fit is None:  # not setdefault: that would build a fit (a 7x7 matrix) on every observation
            fit = self.fits[model or ""] = _ModelFit(self.base)
        return fit

    def until_due(self, model: str | None) -> int:
        """How many more observations of `model` make `ratios(model)` answer otherwise (just after it answered)."""
        fit = self.fits.get(model or "")
        return fit.until_due() if fit is not None else 1

    def observations(self, model: str | None) -> int:
        fit = self.fits.get(model or "")
        return fit.n if fit else 0

    def ratios(self, model: str | None) -> tuple[float, ...]:
        fit = self.fits.get(model or "")
        if fit is None or fit.n == 0:
            return self.base
        return fit.feature_ratios()

    def estimator(self, model: str | None = None) -> Calibrated:
        """A `calibrated` estimator holding every model's settled fit, answering for `model`."""
        per_model = {name: fit.settled for name, fit in self.fits.items() if fit.n}
        return Calibrated(per_model, model, self.counter)
