"""Every message's features and category as token accounting keeps them (`tokens.py`): `pricing.parts` of each
message, made in C-level passes over all the messages of one kind at a time instead of one message at a time.

Most messages hold one block: a tool call, a tool result (without nested blocks) or a text (without a stated size).
Those are scored together, kind by kind, with the very same float operations `parts` makes for each of them (a
feature starts at 0.0, and adding a value to 0.0 gives that value); any other message is `parts`' own. Made in two
steps, so that the tool names the categories need can come from the same passes: the features and the tool calls
(`FeatureColumns`), then, given every tool's name, the categories (`categorise`); the features of every message as
columns (`columns`) are made where a pass needs them. All are pure functions of the messages: any slice of a
session, in any process.
"""

from __future__ import annotations

from array import array
from itertools import accumulate, chain, compress, repeat
from math import isfinite
from operator import add, eq, itemgetter, mul, ne, not_, sub
from typing import Iterable, Iterator, Sequence

from inspector.core import categories as cat
from inspector.core.estimators import (
    MESSAGE, N_FEATURES, TOOL_RESULT, TOOL_USE, Tokenizer, block_text, text_columns)
from inspector.core.model import Block, Message
from inspector.core.pricing import parts, vector

# The messages scored together, by the type of their one block (3: the others, `parts` one at a time).
_KIND = {"tool_use": 0, "tool_result": 1, "text": 2, "thinking": 2, "redacted_thinking": 2}
_MASKS = [bytes(int(b == k) for b in range(256)) for k in range(4)]  # bytes.translate tables: 1 for k's byte, else 0

Columns = list  # feature -> one float per message (a sequence), or None where every message has 0.0
PART = 1 << 14  # values made at a time where a pass makes a list of float objects for each


def zeros(n: int) -> array:
    """n floats 0.0, 8 bytes each."""
    return array("d", bytes(8 * n))


def _ones(n: int) -> array:
    return array("d", [1.0]) * n


class FeatureColumns:
    """The features of `messages` and their tool calls (`uses`: the position, id and name of each, in order, as
    `categories.tool_names` reads them); `categorise` adds the categories."""

    def __init__(self, messages: Sequence[Message], counter: Tokenizer | None = None) -> None:
        self.messages, self.counter = messages, counter
        n = len(messages)
        blocks = [m.blocks for m in messages]  # (a comprehension reads a field faster than attrgetter)
        sizes = list(map(len, blocks))
        every = sizes.count(1) == n  # (most sessions, whose loaders make a message of each block)
        one = repeat(True) if every else list(map(eq, sizes, repeat(1)))
        singles = range(n) if every else list(compress(range(n), one))
        firsts = list(map(itemgetter(0), blocks if every else compress(blocks, one)))
        del blocks, sizes
        # Each kind's messages, in order, picked by a mask of it (each message's kind a byte; 3: the others). Positions
        # as arrays: 8 bytes each, where a list holds an int object (32 bytes) besides.
        kind = bytes(map(_KIND.get, [b.type for b in firsts], repeat(3)))
        picked = [(array("q", compress(singles, mask)), list(compress(firsts, mask)))
                  for mask in map(kind.translate, _MASKS)]
        del firsts, kind
        self.rest = [*(() if every else compress(range(n), map(not_, one))), *picked[3][0]]
        # Per kind: the positions of its messages, their blocks, and their features (feature -> values: arrays, 8
        # bytes a value where a list holds a float object of 24 besides).
        self.kinds: list[tuple[Sequence[int], list[Block], dict[int, array]]] = []
        for k in range(3):
            at, group = picked[k]
            if k == 1 and any(contents := [b.content for b in group]):  # a result with nested blocks: `parts`
                at, group = self._plain(at, group, list(map(not_, contents)))
            elif k == 2 and not all(plain := [b.tokens is None for b in group]):  # a stated size: `parts`
                at, group = self._plain(at, group, plain)
            self.kinds.append((at, group, self._features(k, group)))
        self.rest.sort()
        self.uses = self._uses()

    def _plain(self, at: Sequence[int], group: list[Block], plain: list[bool]) -> tuple[array, list[Block]]:
        """The messages (positions, blocks) that are `plain`; the others go to `rest`."""
        self.rest += compress(at, map(not_, plain))
        return array("q", compress(at, plain)), list(compress(group, plain))

    def _features(self, k: int, group: list[Block]) -> dict[int, array]:
        """The features of messages of kind k whose blocks are `group` (each message has MESSAGE 1.0 besides)."""
        if k == 0:
            self.call_names = [b.tool_name for b in group]
        if not group:
            return {}
        if k == 0:
            try:  # the name and the input's JSON of each
                cols = _arrays(text_columns([b.input_text for b in group], True, self.counter,
                                            self.call_names))
            except (TypeError, ValueError, AttributeError, RecursionError):  # a name or an input that is None
                cols = _arrays(text_columns(list(map(block_text, group)), True, self.counter))
            cols[TOOL_USE] = _ones(len(group))
            return cols
        texts = [b.text for b in group]
        if not all(map(isinstance, texts, repeat(str))):  # `str(block.text or "")`
            texts = [str(t or "") for t in texts]
        cols = _arrays(text_columns(texts, False, self.counter))
        if k == 1:
            cols[TOOL_RESULT] = _ones(len(group))
        return cols

    def _uses(self) -> tuple[list[int], list[str], list[str]]:
        """The tool calls: those of the single tool calls (a name and an id each: most), else every call in order."""
        at, group, _ = self.kinds[0]
        ids, names = [b.tool_id for b in group], self.call_names
        others = [(i, b.tool_id, b.tool_name) for i in self.rest for b in self.messages[i].blocks
                  if b.type == "tool_use"]
        if not others and all(ids) and all(names):
            return at, ids, names
        found = sorted([*zip(at, ids, names), *others], key=itemgetter(0))  # stable: a message's calls in order
        found = [(i, tool_id, name or "?") for i, tool_id, name in found if tool_id]
        return [i for i, _, _ in found], [t for _, t, _ in found], [name for _, _, name in found]

    def categorise(self, names: dict[str, str]) -> tuple[list[str | None], dict[int, dict[str, list[float]]]]:
        """Each message's category, or None for a message of several categories, whose parts are then in the dict
        (by position). `names`: every tool's name (`categories.tool_names`)."""
        messages, counter = self.messages, self.counter
        n = len(messages)
        keys: list[str | None] = [None] * n
        self.scored: list[tuple[_Places, dict[int, array]]] = []  # each kind's places and features
        for k, (at, group, cols) in enumerate(self.kinds):
            places = _Places(at)
            self.scored.append((places, cols))
            if k == 0:
                places.put(keys, [cat.TOOL_CALLS] * len(at))
            elif k == 1:  # `names` holds truthy ids only: `block_category`'s `names.get(tool_id or "", "?")`
                tools = list(map(names.get, [b.tool_id for b in group], repeat("?")))
                key_of = {name: cat.result_key(name) for name in set(tools)}
                places.put(keys, map(key_of.__getitem__, tools))
            else:
                places.put(keys, map(cat.block_category, map(messages.__getitem__, at), group, repeat(names)))
        multi: dict[int, dict[str, list[float]]] = {}
        rows: list[list[float]] = []
        for i in self.rest:
            p = parts(messages[i], names, counter)
            if len(p) == 1:
                ((keys[i], f),) = p.items()
            else:
                f = vector(p)
                multi[i] = p
            rows.append(f)
        # A feature no message has is left out (features are never -0.0)
        self.scored.append((_Places(self.rest), {j: array("d", c) for j, c in enumerate(zip(*rows)) if any(c)}))
        for i in compress(range(n), map(cat.SUMMARY_KINDS.__contains__, [m.kind for m in messages])):
            if len(messages[i].blocks) == 1:  # the tool blocks of a compaction summary are of its category
                keys[i] = cat.block_category(messages[i], messages[i].blocks[0], names)
        self.kinds = []  # their blocks are done with: the features are in `scored`
        return keys, multi

    def columns(self) -> Columns:
        """The features of every message (after `categorise`), as columns."""
        return list(map(self.column, range(N_FEATURES)))

    def column(self, j: int) -> array | None:
        """Feature j of every message (after `categorise`), an array; None where every message has 0.0."""
        n = len(self.messages)
        if j == MESSAGE:
            return _ones(n)  # every message's (`pricing.parts`)
        out = None
        for places, cols in self.scored:
            values = cols.get(j)
            if values is not None:
                if out is None:
                    out = zeros(n)
                places.put(out, values)
        return out

    def add_running(self, j: int, sums: array) -> bool:
        """Append to `sums` the running sums of feature j, not MESSAGE (after `categorise`): after each message, its
        last sum plus the feature of that message and those before it, added in order. Made from the messages of
        the kinds that have the feature (the others add 0.0, which leaves a sum as it is): those of one kind whose
        positions come in runs (a run's sums spread over its messages by slices), or few (1 in 64 at most, one at a
        time). False (nothing appended) where no kind has it, or neither holds."""
        holders = [(places, cols[j]) for places, cols in self.scored if j in cols]
        n = len(self.messages)
        if len(holders) == 1 and holders[0][0].runs is not None:
            (places, values), = holders
            positions, at = places.positions, len(sums)
            own = array("d", sums[-1:])  # own[k]: with the first k of its messages
            add_sums(own, values)
            sums += zeros(n)
            sums[at:at + positions[0]] = own[:1] * positions[0]
            for a, b in places.runs:  # messages positions[a] .. positions[b - 1] - 1, `step` a sum, then to the next
                step = positions[a + 1] - positions[a] if b - a > 1 else 1
                for t in range(step):
                    sums[at + positions[a] + t:at + positions[b - 1]:step] = own[a + 1:b]
                end = positions[b] if b < len(positions) else n
                sums[at + positions[b - 1]:at + end] = own[b:b + 1] * (end - positions[b - 1])
            return True
        if not holders or sum(len(places.positions) for places, _ in holders) > n // 64:
            return False
        total, done = sums[-1], 0
        for i, x in sorted(chain.from_iterable(zip(places.positions, values) for places, values in holders)):
            sums += array("d", [total]) * (i - done)
            total += x
            sums.append(total)
            done = i + 1
        sums += array("d", [total]) * (n - done)
        return True

    def dots(self, ratios: Sequence[float]) -> array:
        """`dots` of every message (after `categorise`), kind by kind: a kind's messages lack the features it has
        no column for, which add r x 0.0 (nothing) to their sums there."""
        out = zeros(len(self.messages))
        for places, cols in self.scored:
            m, values = len(places.positions), array("d")
            for a in range(0, m, PART):  # a part at a time: its lists of float objects freed before the next
                values += array("d", dots(ratios, [None if c is None else c[a:a + PART] for c in
                                                   map(cols.get, range(N_FEATURES))], min(PART, m - a)))
            places.put(out, values)
        return out


def add_sums(sums: array, values: Sequence[float]) -> None:
    """Append the running sums of `values` to `sums`, from its last, a part at a time (an array made of a list: made
    of an iterator, it takes longer; made of all of them, the list takes 4 times the array)."""
    for a in range(0, len(values), PART):
        part = list(accumulate(values[a:a + PART], initial=sums[-1]))
        del part[0]
        sums.fromlist(part)


def dots(ratios: Sequence[float], columns: Sequence[Sequence[float] | None], m: int) -> list[float]:
    """`dot(ratios, features)` of each of m messages whose features are `columns` (None: 0.0 in each; MESSAGE is
    1.0 in each, `pricing.parts`): a feature at a time, the very same float operations in the same order as one
    dot product per message."""
    out: Iterator[float] | None = None
    for j, (r, column) in enumerate(zip(ratios, columns)):
        # A feature no message has adds r x 0.0 = 0.0 to each sum, which leaves it as it is (a sum here is never
        # -0.0): skipped (most sessions have no CJK, other scripts, media or stated sizes).
        if j != MESSAGE and isfinite(r) and (column is None or not any(column)):
            continue
        if j == MESSAGE:
            terms = repeat(r, m)  # (r x 1.0 is r)
        elif column is not None and _same(column, m):  # the same in each (a tool call's 1.0): one product
            terms = repeat(r * column[0], m)
        else:
            terms = map(mul, repeat(r), repeat(0.0, m) if column is None else column)
        # The first term alone: 0.0 + x is x, unless x is -0.0, which a product of r > 0 and a feature is not. The
        # sums a chain of maps, each message's made in turn as the list is (no list a feature).
        out = terms if out is None and r > 0 else map(add, out or repeat(0.0, m), terms)
    return list(out) if out is not None else [0.0] * m


def _same(column: Sequence[float], m: int) -> bool:
    """Whether each of the m values equals the first: an array's compared as doubles in C (a memoryview's ==, no
    float object a value), as `count` compares them."""
    if isinstance(column, array):
        return memoryview(column) == memoryview(array("d", column[:1]) * m)
    return column.count(column[0]) == m


class _Places:
    """Positions to put values at, in order: as runs of evenly spaced positions (slice assignments), when the
    messages of a kind come in a few such runs (tool calls and results alternate), else one at a time."""

    def __init__(self, positions: Sequence[int]) -> None:
        self.positions = positions
        m = len(positions)
        steps = list(map(sub, positions[1:], positions))
        starts = [0, *compress(range(1, m - 1), map(ne, steps[1:], steps))] if m > 2 else list(range(m))
        self.runs = list(zip(starts, [*starts[1:], m])) if len(starts) <= m // 16 + 1 else None

    def put(self, target: list | array, values: Iterable) -> None:
        """values[i] at positions[i] of `target` (an array takes an array's values)."""
        positions = self.positions
        if self.runs is None:
            any(map(target.__setitem__, positions, values))  # each call gives None: `any` runs through them all
            return
        values = values if isinstance(values, (list, array)) else list(values)
        for a, b in self.runs:
            step = positions[a + 1] - positions[a] if b - a > 1 else 1
            target[positions[a]:positions[b - 1] + 1:step] = values[a:b]


def _arrays(cols: dict[int, list[float]]) -> dict[int, array]:
    """The columns as arrays, those all 0.0 left out (as a feature no message has: features are never -0.0)."""
    return {j: array("d", values) for j, values in cols.items() if any(values)}
