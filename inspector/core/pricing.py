"""How accounting prices one message: its features per category, its estimate under the session's fit, and the
split of its figure between categories.

One place, so that accounting (`tokens.py`) and the figures of compactions no usage has seen yet (`compacted.py`,
which the workbench and the agent view use to follow a step without accounting the session again) price a message
the same way, to the last float addition: a step's figures then equal a fresh accounting of the state it makes.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from operator import add
from typing import Any, Sequence

from inspector.core import categories as cat
from inspector.core.estimators import N_FEATURES, Estimator, FeatureEstimator, Tokenizer, block_features, dot
from inspector.core.model import Message


def parts(message: Message, names: dict[str, str], counter: Tokenizer | None = None) -> dict[str, list[float]]:
    """The message's features per category (a message's own structure, its turn markers, goes with its first part);
    `counter`: the tokenizer that counts its text where we ship the session's (OpenAI's o200k)."""
    blocks = message.blocks
    if len(blocks) == 1:  # most messages: the same as the loop below, without its lookups
        key, features = one_part(message, names, counter)
        return {key: features}
    out: dict[str, list[float]] = {}
    for block in message.blocks:
        key = cat.block_category(message, block, names)
        features = out.get(key)
        if features is None:
            features = out[key] = [0.0] * N_FEATURES
        block_features(block, features, counter)
    if not out:
        out[cat.USER_PROMPTS if message.role == "user" else cat.ASSISTANT_TEXT] = [0.0] * N_FEATURES
    next(iter(out.values()))[-1] += 1.0  # MESSAGE: the turn's own markers
    return out


def one_part(message: Message, names: dict[str, str], counter: Tokenizer | None = None) -> tuple[str, list[float]]:
    """`parts` of a message of one block, as its one (category, features): accounting asks it of most messages."""
    block = message.blocks[0]
    features = [0.0] * N_FEATURES
    block_features(block, features, counter)
    features[-1] += 1.0
    return cat.block_category(message, block, names), features


def vector(p: dict[str, list[float]]) -> list[float]:
    """A message's whole feature vector from its parts."""
    return total(p.values()) if len(p) > 1 else next(iter(p.values()))


def total(vectors) -> list[float]:
    out = [0.0] * N_FEATURES
    for v in vectors:
        out = list(map(add, out, v))
    return out


def split(p: dict[str, list[float]], figure: int, ratios) -> tuple[str, dict[str, int]]:
    """A message's main category and its figure shared between its categories, in proportion to what the ratios
    give each part."""
    if len(p) == 1:
        key = next(iter(p))
        return key, {key: figure}
    return shares({k: dot(ratios, f) + 1e-9 for k, f in p.items()}, figure)


def shares(weights: dict[str, float], figure: int) -> tuple[str, dict[str, int]]:
    """The heaviest key and `figure` shared in proportion to `weights`, in integers that sum to the figure (the
    rounding goes with the heaviest)."""
    top = max(weights, key=weights.__getitem__)
    sum_w = sum(weights.values())
    shares: dict[str, int] = {}
    given = 0
    for k, wt in weights.items():
        share = int(figure * wt / sum_w)
        shares[k] = share
        given += share
    shares[top] += figure - given
    return top, shares


def scaled(figure: int, before: float, after: float) -> int:
    """A message's figure after an edit changed its estimate from `before` to `after`: the figure in the same
    ratio (a measured share keeps what usage said of the message, less the part the estimate says the edit took)."""
    if before <= 0:
        return figure
    return int(round(figure * after / before))


@dataclass(slots=True)
class Pricing:
    """What prices the messages of one accounting: its final estimator (per model, for `calibrated`), the model
    whose tokenizer counted each message (`first_model`; messages after the last request: `default_model`) and the
    tool names of the session's `messages` (results are filed under the tool that produced them: `names`)."""

    final: Estimator
    first_model: Sequence[str | None]
    default_model: str | None
    known: dict[str, str] | None  # `names`; None: let go (`lighten`), found again when asked
    fitted: bool
    by_features: bool
    counter: Tokenizer | None
    messages: Sequence[Message]

    @property
    def names(self) -> dict[str, str]:
        if self.known is None:
            self.known = cat.tool_names(self.messages)
        return self.known

    def lighten(self, runs: list[tuple[str | None, int, int]]) -> None:
        """For a one-shot accounting, whose pricing is seldom asked again (`compacted.py` follows a step with it):
        the names let go until asked (50,000 at 100,000 messages), the first models held as their `runs` (model,
        start, end: every message's in order)."""
        self.known = None
        self.first_model = Runs(runs)

    def model(self, i: int) -> str | None:
        return self.first_model[i] if i < len(self.first_model) else self.default_model

    def ratios(self, i: int):
        """The ratios a message's features are weighed with (None for estimators without features)."""
        if self.fitted:
            return self.final.for_model(self.model(i))  # type: ignore[attr-defined]
        return self.final.ratios if isinstance(self.final, FeatureEstimator) else None

    def estimate(self, i: int, message: Message, p: dict[str, list[float]] | None = None) -> float:
        """Message i's estimate as accounting makes it, for `message` (any version of it)."""
        if not self.by_features:
            return float(self.final.message(message))
        return max(0.0, dot(self.ratios(i), vector(p if p is not None else parts(message, self.names, self.counter))))

    def split(self, i: int, message: Message, figure: int,
              p: dict[str, list[float]] | None = None) -> tuple[str, dict[str, int]]:
        """Message i's main category and its figure shared between its categories: by what the ratios give each
        part, or for an estimator without features by what it estimates each part's blocks at."""
        p = p if p is not None else parts(message, self.names, self.counter)
        ratios = self.ratios(i)
        if ratios is not None or len(p) == 1:
            return split(p, figure, ratios)
        weights = {k: 1e-9 + self.final.blocks([b for b in message.blocks
                                                if cat.block_category(message, b, self.names) == k]) for k in p}
        return shares(weights, figure)


class Runs(Sequence):
    """The values of `runs` (value, start, end: in order from 0, each starting where the one before ends)."""

    def __init__(self, runs: list[tuple[Any, int, int]]) -> None:
        self.starts = [a for _, a, _ in runs]
        self.values = [value for value, _, _ in runs]
        self.n = runs[-1][2] if runs else 0

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i):  # type: ignore[override]  # an int position: slices are not needed here
        if not 0 <= i < self.n:
            raise IndexError(i)
        return self.values[bisect.bisect_right(self.starts, i) - 1]
