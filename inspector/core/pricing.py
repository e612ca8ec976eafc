"""How accounting prices one message: its features per category, its estimate under the session's fit, and the
split of its figure between categories.

One place, so that accounting (`tokens.py`) and the figures of compactions no usage has seen yet (`compacted.py`,
which the workbench and the agent view use to follow a step without accounting the session again) price a message
the same way, to the last float addition: a step's figures then equal a fresh accounting of the state it makes.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import accumulate, chain, compress, repeat
from operator import add, attrgetter, eq, is_, is_not, itemgetter, not_
from typing import Sequence

from inspector.core import categories as cat
from inspector.core.estimators import (
    MESSAGE, N_FEATURES, TOOL_RESULT, TOOL_USE, Estimator, FeatureEstimator, Tokenizer, block_features, block_text, dot,
    text_columns)
from inspector.core.model import Block, Message, input_json


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


# The messages `columns` scores together, by the type of their one block (others: `parts`, one at a time).
_CLASS = {"tool_use": 0, "tool_result": 1, "text": 2, "thinking": 2, "redacted_thinking": 2}
Columns = list  # feature -> one float per message (a sequence), or None where every message has 0.0


def columns(messages: Sequence[Message], names: dict[str, str], counter: Tokenizer | None = None
            ) -> tuple[list[str | None], dict[int, dict[str, list[float]]], Columns]:
    """`parts` of each of `messages` as accounting keeps them: its category, or None for a message of several,
    whose parts are then in the dict (by position); and its feature vector, as columns. The very same floats as
    `parts`, from C-level passes over the messages of one tool call, one tool result (without nested blocks) or one
    text (without a stated size): most messages. A pure function of its arguments: any slice of a session."""
    n = len(messages)
    blocks = list(map(attrgetter("blocks"), messages))
    one = list(map(eq, map(len, blocks), repeat(1)))
    singles = range(n) if all(one) else list(compress(range(n), one))
    bs = list(map(itemgetter(0), compress(blocks, one)))
    cls = list(map(_CLASS.get, map(attrgetter("type"), bs), repeat(3)))
    # The messages of one block by class (positions in `singles`), each class a slice of `by_class`.
    by_class = sorted(range(len(bs)), key=cls.__getitem__)
    bounds = list(accumulate(map(cls.count, range(4)), initial=0))
    group = _take(bs, by_class)
    at = _take(singles, by_class)  # message positions in class order
    rest = [*compress(range(n), map(not_, one)), *at[bounds[3]:]]
    keys: list[str | None] = []
    found: list[tuple[int, dict[int, list[float]]]] = []  # (how many messages, their columns), in class order
    for c in range(3):
        lo, hi = bounds[c], bounds[c + 1]
        if c == 1 and any(map(attrgetter("content"), group[lo:hi])) or \
                c == 2 and any(map(is_not, map(attrgetter("tokens"), group[lo:hi]), repeat(None))):
            # a result with nested blocks, a text with a stated size: one at a time
            plain = list(map(not_, map(attrgetter("content" if c == 1 else "tokens"), group[lo:hi]))) if c == 1 else \
                list(map(is_, map(attrgetter("tokens"), group[lo:hi]), repeat(None)))
            rest += compress(at[lo:hi], map(not_, plain))
            cut = list(compress(range(lo, hi), plain))
            group[lo:hi], at[lo:hi] = _take(group, cut), _take(at, cut)
            bounds[c + 1:] = [b - (hi - lo - len(cut)) for b in bounds[c + 1:]]
            hi = lo + len(cut)
        if hi == lo:
            found.append((0, {}))
            continue
        these = group[lo:hi]
        if c == 0:
            try:
                texts = list(map(add, map(attrgetter("tool_name"), these), map(input_json, map(attrgetter("input"), these))))
            except (TypeError, ValueError, AttributeError, RecursionError):  # a name that is None, odd input
                texts = list(map(block_text, these))
            cols = text_columns(texts, True, counter)
            cols[TOOL_USE] = [1.0] * (hi - lo)
            keys += repeat(cat.TOOL_CALLS, hi - lo)
        elif c == 1:
            cols = text_columns(_texts(these), False, counter)
            cols[TOOL_RESULT] = [1.0] * (hi - lo)
            # `names` holds truthy ids only: `block_category`'s `names.get(tool_id or "", "?")`
            tools = list(map(names.get, map(attrgetter("tool_id"), these), repeat("?")))
            key_of = {name: cat.result_key(name) for name in set(tools)}
            keys += map(key_of.__getitem__, tools)
        else:
            cols = text_columns(_texts(these), False, counter)
            keys += map(cat.block_category, map(messages.__getitem__, at[lo:hi]), these, repeat(names))
        found.append((hi - lo, cols))
    if not cat.SUMMARY_KINDS.isdisjoint(map(attrgetter("kind"), _take(messages, at[:bounds[2]]))):
        for i, m in enumerate(_take(messages, at[:bounds[2]])):  # a compaction summary's are its own category
            if m.kind in cat.SUMMARY_KINDS:
                keys[i] = cat.block_category(m, m.blocks[0], names)
    # The others one at a time: several blocks (or none), nested results, media, stated sizes.
    multi: dict[int, dict[str, list[float]]] = {}
    rows: list[list[float]] = []
    rest.sort()
    for i in rest:
        p = parts(messages[i], names, counter)
        if len(p) == 1:
            ((key, f),) = p.items()
        else:
            key, f = None, vector(p)
            multi[i] = p
        keys.append(key)
        rows.append(f)
    # a feature no message has is left out (features are never -0.0); every message has MESSAGE 1.0
    found.append((len(rest), {j: list(c) for j, c in enumerate(zip(*rows)) if any(c) and j != MESSAGE}))
    order = at[:bounds[3]] + rest
    gather = list if n < 2 else itemgetter(*sorted(range(n), key=order.__getitem__))  # back in message order
    keys = list(gather(keys))
    out: Columns = [None] * N_FEATURES
    for j in range(N_FEATURES):
        if any(j in cols for _, cols in found):
            out[j] = gather(list(chain.from_iterable(cols.get(j) or repeat(0.0, m) for m, cols in found)))
    out[MESSAGE] = [1.0] * n
    return keys, multi, out


def _take(values: Sequence, positions: Sequence[int]) -> list:
    return list(itemgetter(*positions)(values)) if len(positions) > 1 else [values[i] for i in positions]


def _texts(blocks: list[Block]) -> list[str]:
    """`str(block.text or "")` of each block."""
    texts = list(map(attrgetter("text"), blocks))
    return texts if set(map(type, texts)) <= {str} else [str(t or "") for t in texts]


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
    session's tool names (results are filed under the tool that produced them)."""

    final: Estimator
    first_model: list[str | None]
    default_model: str | None
    names: dict[str, str]
    fitted: bool
    by_features: bool
    counter: Tokenizer | None = None

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
