"""Many requests at a time, for the request passes of token accounting (`tokens.py`): the runs of requests they can
take together, the measured growths spread over the messages each request saw first, and the requests' errors.

Each does the very same float operations as the one-request form (`spread`, `RequestFigures`' errors), a message
position or a figure at a time over all the requests of a run, in C loops: a long session has tens of thousands.
"""

from __future__ import annotations

import bisect
from itertools import compress, repeat
from operator import add, eq, is_not, itemgetter, le, lt, mul, ne, not_, or_, sub, truediv
from typing import Sequence

from inspector.core.estimators import sum_in_order

# Growth this far beyond the estimate of the messages added (x the estimate, plus tokens) is not theirs: the harness
# injected something the transcript does not record.
UNEXPLAINED_FACTOR = 2.0
UNEXPLAINED_SLACK = 1500.0  # (a float: added to floats only, where an int is converted first, it adds the same)


def runs_of(alone: set[int], kept: set[int], k: int, end: int) -> dict[int, int]:
    """Runs of the requests from k to `end` that are not `alone`: by first request, where each stops (before the
    next one alone or one whose state is kept)."""
    found, at = {}, k
    for stop in sorted(alone | kept | {end}):
        if stop > at:
            found[at] = stop
        at = max(at, stop + (stop in alone))
    return found


def same(values: list) -> list[tuple[int, int]]:
    """The runs of equal values: (start, end) of each."""
    cuts = [0, *compress(range(1, len(values)), map(ne, values[1:], values)), len(values)] if values else []
    return list(zip(cuts, cuts[1:]))


def picker(positions: Sequence[int]):
    """itemgetter(*positions), giving a tuple also for one position."""
    return itemgetter(*positions) if len(positions) != 1 else (lambda values: (values[positions[0]],))


def spread(measured: list[int | None], weights: list[float], lo: int, hi: int, total: int) -> int:
    """Give messages[lo:hi] integer shares of `total` in proportion to `weights` (equal shares where all weigh
    nothing); the shares sum to `total` exactly. Returns `total` (0 when there is no message to give it to)."""
    if hi <= lo:
        return 0
    w = weights[lo:hi]
    s = sum_in_order(w)
    if s <= 0:
        w = [1.0] * (hi - lo)
        s = float(hi - lo)
    given = 0
    acc = 0.0
    for k, x in enumerate(w):
        acc += x
        upto = int(round(total * acc / s))
        measured[lo + k] = upto - given
        given = upto
    return total


def spread_growths(measured: list[int | None], weights: list[float], los: list[int], his: list[int],
                   growths: list[int]) -> list[int]:
    """`spread` of each growth over messages[los[i]:his[i]] (each range past the one before), a message position at
    a time over all of them. Returns the requests (positions in the lists) left to the caller: a growth below 0,
    or far beyond what its messages weigh (`UNEXPLAINED_FACTOR`), or with nothing to weigh it by."""
    sizes, count = list(map(sub, his, los)), len(los)
    left: list[int] = []
    for size in set(sizes):
        # The requests of `size` messages; each saw its p-th message at starts[i] + p (a run of requests that see
        # the next `size` messages each: every size-th message, a slice).
        if min(sizes) == max(sizes):
            chosen, starts, growth = range(count), los, growths
        else:
            chosen = list(compress(range(count), map(eq, sizes, repeat(size))))
            pick = picker(chosen)
            starts, growth = list(pick(los)), list(pick(growths))
        row = slice(starts[0], his[-1], size) if len(chosen) == count and los[1:] == his[:-1] else None
        acc: list[list[float]] = []
        for p in range(size):
            w = weights[row.start + p:row.stop:size] if row else picker(list(map(add, starts, repeat(p))))(weights)
            acc.append(list(w) if p == 0 else list(map(add, acc[-1], w)))
        guess = acc[-1]  # sum(w) of each: the same additions
        beyond = [g > UNEXPLAINED_FACTOR * x + UNEXPLAINED_SLACK for g, x in zip(growth, guess)]
        if not (min(growth) >= 0 and min(guess) > 0 and not any(beyond)):
            bad = list(map(or_, map(or_, map(lt, growth, repeat(0)), map(le, guess, repeat(0))), beyond))
            left += (chosen[i] for i in compress(range(len(chosen)), bad))
            good = list(map(not_, bad))
            starts, growth = list(compress(starts, good)), list(compress(growth, good))
            acc = [list(compress(v, good)) for v in acc]
            guess, row = acc[-1], None
        given: list[int] | None = None  # the shares' ends so far (none: 0 each)
        # The last share's upto, round(g x s / s) with g below 2^40 and s (the guess) from 1.0 to 2^900 (g x s
        # finite), is g: the two roundings leave it within g x 2^-52 of g, short of the half round() needs to move
        whole = bool(guess) and min(guess) >= 1.0 and max(guess) < 2.0 ** 900 and max(growth) < 1 << 40
        for p, cumulated in enumerate(acc):
            upto = growth if whole and cumulated is guess else \
                list(map(float.__round__, map(truediv, map(mul, growth, cumulated), guess)))  # round(): a float's
            shares = upto if given is None else list(map(sub, upto, given))
            if row:
                measured[row.start + p:row.stop:size] = shares
            else:
                any(map(measured.__setitem__, map(add, starts, repeat(p)), shares))  # `any`: them all
            given = upto
    return sorted(left)


def turns(kinds: list[str], lo: int) -> list[bool]:
    """Which requests from lo on (of `kinds`) have errors: the turns, from the second request on (the first has no
    prediction, None, and its estimate is its measured figure)."""
    return list(map(eq, kinds[max(lo, 1) - lo:], repeat("turn")))


def add_errors(errors: list[float], values: list[int | None], measured: list[int], turn: list[bool], lo: int,
               hi: int, few: bool) -> list[float]:
    """Add the absolute errors of values[lo:hi] against measured[lo:hi] (those `turns` finds) to the sorted list (in
    place; `few`: insort, else sort once); returns what was added."""
    lo1 = max(lo, 1)
    added = _abs_errors(values[lo1:hi], measured[lo1:hi], turn)
    if few:
        for x in added:
            bisect.insort(errors, x)
    else:
        errors.extend(added)
        errors.sort()
    return added


def _abs_errors(values: list[int | None], measured: list[int], kept: list[bool]) -> list[float]:
    """abs(RequestFigures._pct) of each `kept` value (None: left out) against its measured figure."""
    if not all(kept):
        values, measured = list(compress(values, kept)), list(compress(measured, kept))
    try:  # (a None or a measured 0 stops this pass, made again below one figure at a time: rare)
        return [abs((v - m) / m * 100) for v, m in zip(values, measured)]  # (a comprehension: the steps fused)
    except (TypeError, ZeroDivisionError):
        pass
    kept = list(map(is_not, values, repeat(None)))
    return [abs((v - m) / m * 100 if m else 0.0)  # type: ignore[operator]
            for v, m in zip(compress(values, kept), compress(measured, kept))]
