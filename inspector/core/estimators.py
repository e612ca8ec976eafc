"""Token estimators, selectable by name: what every figure without measured usage relies on.

An estimator answers "how many tokens would this message (or text) take?" without the API. Token accounting
(`tokens.py`) mixes these with measured usage; compaction plans and prompt sections use them for hypothetical states.

    chars35     the reference design: every string / 3.5
    blocks      Claude Code's block-aware estimate (chars / 4, images 2,000, the total x 4/3)
    script      separate ratios per kind of text (prose, code, JSON, CJK, other scripts, symbols) plus the
                structural tokens of messages and tool blocks
    o200k       OpenAI's own tokenizer (o200k_base, the one GPT-4o, GPT-5 and the Codex models use) for the text,
                plus the framing the harmony format adds to each message, tool call and tool output
    calibrated  `script` with its ratios fitted on the session's own measured requests (see calibration.py); on a
                session of OpenAI models it starts from `o200k` instead
    exact       the API's own count (`messages.count_tokens`) of a whole state, one call per state

`script`, `o200k` and `calibrated` work on a feature vector per block (characters of each kind, or o200k tokens,
counts of structures) so that fitting and re-scoring are dot products: features are computed once per message,
ratios change freely. A block whose size the source states (`Block.tokens`: Codex's encrypted reasoning) counts
at that size under every feature estimator.
"""

from __future__ import annotations

import bisect
import json
import os
import sys
from contextlib import contextmanager, nullcontext
from functools import reduce
from itertools import accumulate, compress, repeat
from operator import add, mul, not_, sub, truediv
from typing import Any, Callable, ContextManager, Iterable, Iterator, Sequence

from inspector.core.model import Block, Message

Count = Callable[[str], int]  # a text's tokens: a Tokenizer, or what stands in for one


class EstimatorUnavailable(ValueError):
    """An estimator that cannot run here (the `exact` one without an API key): the message says what to do."""


class Estimator:
    """Base: subclasses define `text`; `message` and `blocks` follow from it unless a subclass knows better.

    `block`, `single` and `result` let a compaction plan price an edited one-block message without building it:
    `single(block(b))` is exactly `message` of a message whose only block is `b`, and `result(b, text)` is exactly
    `block` of the tool_result `b` holding the string `text` instead of its content (nested blocks dropped).
    """

    name = "base"

    @classmethod
    def unavailable(cls) -> str | None:
        """Why this estimator cannot run here (what to do about it), or None when it can."""
        return None

    def text(self, text: str) -> int:
        raise NotImplementedError

    def blocks(self, blocks: Iterable[Block]) -> int:
        return sum(self.text(block_text(b)) for b in blocks)

    def message(self, message: Message) -> int:
        return self.blocks(message.blocks)

    def block(self, block: Block) -> float:
        """One block's figure before the message's rounding (and without the message's own share)."""
        return float(self.text(block_text(block)))

    def single(self, figure: float) -> int:
        """The figure of a message whose only block has the `block` figure `figure`."""
        return int(figure)

    def result(self, block: Block, text: str) -> float:
        """`block` of tool_result `block` with `text` as its whole content; subclasses answer without building it."""
        return self.block(Block("tool_result", text, block.tool_id, block.tool_name, block.input_text, block.is_error))


def block_text(block: Block) -> str:
    """`Block.all_text`, tolerant of malformed blocks (None text, odd nested items, unserialisable input)."""
    try:
        return block.all_text() or ""
    except (TypeError, ValueError, AttributeError, RecursionError):
        return str(block.text or "")


def _strings(value: object) -> Iterable[str]:
    """Every string value inside a JSON-like value (the reference design counts these in block dicts)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


class Chars35(Estimator):
    """The reference design: total length of every string in the message's block dicts, / 3.5, truncated."""

    name = "chars35"

    def text(self, text: str) -> int:
        return int(len(text) / 3.5)

    def blocks(self, blocks: Iterable[Block]) -> int:
        total = 0
        for b in blocks:
            total += _api_chars(b)
        return int(total / 3.5)

    def block(self, block: Block) -> float:
        return _api_chars(block) / 3.5

    def result(self, block: Block, text: str) -> float:
        # The strings of {"type": "tool_result", "tool_use_id": id, "content": text[, "is_error": True]}.
        tool_id = block.tool_id
        return (_TOOL_RESULT_CHARS + (len(tool_id) if isinstance(tool_id, str) else 0) + len(text)) / 3.5


_TOOL_RESULT_CHARS = len("tool_result")


def _api_chars(block: Block) -> int:
    """Characters of every string value in the block's API dict (the block's text for a malformed one), but a
    thinking block's signature: the API's proof of origin, which the model does not read."""
    try:
        return sum(len(s) for s in _strings(block.to_api())) - len(block.signature or "")
    except (TypeError, ValueError, AttributeError, RecursionError):
        return len(block_text(block))


class BlockAware(Estimator):
    """Claude Code's way: text by length, tool_use as name + JSON input, images/documents a fixed 2,000, all x 4/3."""

    name = "blocks"
    FIXED_MEDIA = 2000

    def text(self, text: str) -> int:
        return int(len(text) / 4 * 4 / 3)

    def blocks(self, blocks: Iterable[Block]) -> int:
        return int(sum(self._chars_or_fixed(b) for b in blocks) * 4 / 3)

    def block(self, block: Block) -> float:
        return self._chars_or_fixed(block) * 4 / 3

    def result(self, block: Block, text: str) -> float:
        return len(text) / 4 * 4 / 3

    def _chars_or_fixed(self, block: Block) -> float:
        if block.type in ("image", "document"):
            return self.FIXED_MEDIA * 3 / 4  # so the 4/3 factor leaves it at FIXED_MEDIA
        if block.type == "tool_use":
            return len(block_text(block)) / 4
        nested = block.content if isinstance(block.content, list) else []
        return len(str(block.text or "")) / 4 + sum(
            self._chars_or_fixed(b) for b in nested if isinstance(b, Block))


# ---------------------------------------------------------------------------------------------------------------
# Features: what `script` and `calibrated` score.

FEATURES: tuple[str, ...] = (
    "prose", "code", "json", "cjk", "other_script", "symbol", "media", "tool_use", "tool_result", "tokens", "stated",
    "message")  # "message" stays last: accounting adds a message's own markers at [-1]
N_FEATURES = len(FEATURES)
PROSE, CODE, JSON_, CJK, OTHER, SYMBOL, MEDIA, TOOL_USE, TOOL_RESULT, TOKENS, STATED, MESSAGE = range(N_FEATURES)

# Tokens per unit of each feature: the `script` estimator. Where each figure comes from:
#   prose        1/4.0  the published rule of thumb for English (4 characters a token); ../shared/FORMATS.md §6 uses
#                       it as the baseline the other figures are measured against.
#   code         1/3.1  FORMATS.md §6: 4 chars/token under-counts code by ~30% -> 4 / 1.3 characters a token.
#   json         1/2.5  FORMATS.md §6: 4 chars/token under-counts JSON by ~60% -> 4 / 1.6.
#   cjk          1/1.6  FORMATS.md §6: under-counts CJK text by 60-150%; the upper end, 4 / 2.5 characters a token
#                       (a CJK character is rarely merged with its neighbours).
#   other_script 1/2.0  Cyrillic, Greek, Arabic, Hebrew, Indic, Thai...: between CJK and Latin; no published figure
#                       for Claude, so a stated assumption that `calibrated` corrects where usage exists.
#   symbol       1.0    non-ASCII punctuation, arrows, box drawing, emoji: byte-level BPE gives each at least one
#                       token (Claude Code's Read output carries a "→" on every line).
#   media        2000   Claude Code's fixed figure for an image or document (the `blocks` estimator).
#   tool_use 25, tool_result 15, message 5: the structural tokens the API adds when it renders a tool call (its
#                       name and parameter tags), a tool result's wrapper and a turn's role markers. Read off the
#                       smallest growths between consecutive requests in a Claude Code transcript (a one-line Bash
#                       call and its empty result grow the window by ~105 tokens for ~105 characters).
#   tokens 1, stated 1  text already counted by a tokenizer (`o200k`), and sizes the source states (`Block.tokens`).
SCRIPT_RATIOS: tuple[float, ...] = (
    1 / 4.0, 1 / 3.1, 1 / 2.5, 1 / 1.6, 1 / 2.0, 1.0, 2000.0, 25.0, 15.0, 1.0, 1.0, 5.0)

# `o200k`: the text is counted by the tokenizer; the structure is the harmony format's framing (the rendering
# OpenAI publishes for its open-weight models, and the closest public description of how its hosted models read a
# request), counted with o200k_base, its special tokens one each:
#   message 4       <|start|>ROLE<|message|> ... <|end|>
#   tool_use 13     <|start|>assistant<|channel|>commentary to=functions.NAME <|constrain|>json<|message|> ...
#                   <|call|> beyond the name and arguments (which are the block's text)
#   tool_result 13  <|start|>functions.NAME to=assistant<|channel|>commentary<|message|> ... <|end|> (the name is
#                   not in a result's text: ~2 tokens of it are in the figure)
#   media 765       an image at the API's high detail for a 1024x1024 picture (85 + 4 tiles x 170)
O200K_RATIOS: tuple[float, ...] = (
    1 / 4.0, 1 / 3.1, 1 / 2.5, 1 / 1.6, 1 / 2.0, 1.0, 765.0, 13.0, 13.0, 1.0, 1.0, 4.0)


class Tokenizer:
    """A real tokenizer's count, loaded on first use (its vocabulary takes ~0.3 s and ~60 MB)."""

    def __init__(self, encoding: str) -> None:
        self.encoding = encoding
        self._count = None
        self._counted: dict[str, int] = {}  # `batch`'s counts, while it lasts

    def __call__(self, text: str) -> int:
        if not text:
            return 0
        if self._counted:
            known = self._counted.get(text)
            if known is not None:
                return known
        if self._count is None:
            import toktok  # o200k_base compiled in: no download at run time

            encoding = self.encoding
            self._count = lambda t: toktok.batch_count([t], encoding, threads=1)[0]
        return self._count(text)

    @contextmanager
    def batch(self, texts: list[str]) -> Iterator[None]:
        """Within it, the calls for `texts` take their counts from one batch counted on every core instead of a call
        each: the tokenizer's time on a long Codex rollout halves on 2 cores (benchmarks/bench_formats.py). A count
        is the same either way, so a call for any other text (from any thread) is counted alone; the batch holds
        the texts only while it lasts."""
        import toktok

        unique = list(dict.fromkeys(texts))
        self._counted = dict(zip(unique, toktok.batch_count(unique, self.encoding, threads=0)))
        try:
            yield
        finally:
            self._counted = {}

    def __reduce__(self):  # pickled by name (the status line's cache keeps an accounting): the shared instance back
        return shared_tokenizer, (self.encoding,)


O200K = Tokenizer("o200k_base")


def shared_tokenizer(encoding: str) -> Tokenizer:
    """The module's tokenizer of `encoding` (a new one for an encoding it does not hold)."""
    return O200K if encoding == O200K.encoding else Tokenizer(encoding)

# Model ids that use o200k_base: GPT-4o and later, the o-series and the Codex models.
_O200K_PREFIXES = ("gpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "gpt-6", "chatgpt-4o", "o1", "o3", "o4", "codex-")


def tokenizer_for(model: str | None) -> Tokenizer | None:
    """The tokenizer of `model` when we ship it (OpenAI's o200k models), else None."""
    m = (model or "").lower().rsplit("/", 1)[-1]
    return O200K if m.startswith(_O200K_PREFIXES) or "codex" in m else None

# A block whose ASCII punctuation is at least this share of its characters is code (prose runs at 2-5%, code and
# terminal output at 10-30%); below it, the block is that fraction code.
CODE_PUNCT_SHARE = 0.08

_ASCII_PUNCT = bytes(c for c in range(33, 127) if not chr(c).isalnum())
_NOT_PUNCT = bytes(c for c in range(256) if c not in _ASCII_PUNCT)


def _lead_table() -> bytes:
    """Map every UTF-8 byte to its script class, by lead byte: continuation and ASCII bytes to '.', else
    l (Latin supplements, U+0080-027F), o (other scripts U+0280-1FFF), s (symbols U+2000-2FFF and U+E000-FFFF),
    c (CJK and Hangul U+3000-DFFF), e (four-byte: emoji and rare ideographs)."""
    table = bytearray(b"." * 256)
    for b in range(0xC2, 0xCA):
        table[b] = ord("l")
    for b in range(0xCA, 0xE2):
        table[b] = ord("o")
    table[0xE2] = ord("s")
    for b in range(0xE3, 0xEE):
        table[b] = ord("c")
    table[0xEE] = table[0xEF] = ord("s")
    for b in range(0xF0, 0xF5):
        table[b] = ord("e")
    return bytes(table)


_LEADS = _lead_table()
_NOT_LEAD = bytes(b for b in range(256) if _LEADS[b] == ord("."))


def text_features(text: str, out: list[float], as_json: bool = False, counter: Count | None = None) -> None:
    """Add the character features of `text` to `out` (or, given a tokenizer, its tokens). Fast on large strings:
    C-level encode/translate/count only."""
    if not text:
        return
    if counter is not None:
        out[TOKENS] += counter(text)
        return
    n = len(text)
    latin = n
    if not text.isascii():
        raw = text.encode("utf-8", "surrogatepass")
        leads = raw.translate(_LEADS, _NOT_LEAD)  # one pass: only the lead bytes of non-Latin-1 text remain
        cjk = leads.count(b"c")
        other = leads.count(b"o")
        sym, emoji = leads.count(b"s"), leads.count(b"e")
        out[CJK] += cjk
        out[OTHER] += other
        out[SYMBOL] += sym + 2 * emoji
        latin = n - cjk - other - sym - emoji
    elif as_json:
        out[JSON_] += latin
        return
    else:
        raw = text.encode("ascii")
    if as_json:
        out[JSON_] += latin
        return
    # The code share rises linearly with punctuation up to CODE_PUNCT_SHARE: continuous, so appending text never
    # lowers an estimate (a hard switch would drop a block from code to prose ratios on one more letter).
    code = latin * min(1.0, len(raw.translate(None, _NOT_PUNCT)) / (CODE_PUNCT_SHARE * n))
    out[CODE] += code
    out[PROSE] += latin - code


def text_columns(texts: Sequence[str], as_json: bool = False, counter: Count | None = None,
                 heads: Sequence[str] | None = None) -> dict[int, list[float]]:
    """`text_features` of each of `texts` added to zeros, as columns: feature -> one value per text (the features
    some text may have). The very same floats, from C-level passes over all the texts: accounting scores every
    message's text at once. `heads`: each text is heads[i] + texts[i] (a tool call's name and its input's JSON),
    joined only where the features are more than an ASCII JSON text's length."""
    if heads is not None:
        if counter is None and as_json and all(map(str.isascii, heads)) and all(map(str.isascii, texts)):
            return {JSON_: list(map(float, map(add, map(len, heads), map(len, texts))))}
        texts = list(map(add, heads, texts))
    if counter is not None:
        return {TOKENS: [float(counter(t)) if t else 0.0 for t in texts]}
    lens = list(map(len, texts))
    out: dict[int, list[float]] = {}
    if all(map(str.isascii, texts)):  # most sessions: no lead bytes to count
        if as_json:
            return {JSON_: list(map(float, lens))}
        latin: list[int] = lens
        raws: list[bytes] | None = None
    else:  # the lead bytes of the texts that have them (an ASCII text counts none: `text_features`' shortcut)
        raws = list(map(str.encode, texts, repeat("utf-8"), repeat("surrogatepass")))
        wide = list(compress(range(len(texts)), map(not_, map(str.isascii, texts))))
        leads = list(map(bytes.translate, map(raws.__getitem__, wide), repeat(_LEADS), repeat(_NOT_LEAD)))
        counts = []
        for c in (b"c", b"o", b"s", b"e"):
            column = [0] * len(texts)
            any(map(column.__setitem__, wide, map(bytes.count, leads, repeat(c))))  # `any` runs through them all
            counts.append(column)
        cjk, other, sym, emoji = counts
        out[CJK], out[OTHER] = list(map(float, cjk)), list(map(float, other))
        out[SYMBOL] = list(map(float, map(add, sym, map(mul, repeat(2), emoji))))
        latin = list(map(sub, map(sub, map(sub, map(sub, lens, cjk), other), sym), emoji))
        if as_json:
            out[JSON_] = list(map(float, latin))
            return out
    # An empty text adds nothing: its share taken of 1 character instead of 0 gives 0.0 code and prose.
    chars = map(max, lens, repeat(1)) if 0 in lens else lens
    share = list(map(truediv, _punctuation(texts, lens, raws), map(mul, repeat(CODE_PUNCT_SHARE), chars)))
    if min(compress(share, lens) if chars is not lens else share, default=1.0) >= 1.0:
        # Every text code (most tool output; an empty one adds 0 x anything): latin x 1.0 each, and no prose (a
        # feature no text has is left out)
        out[CODE] = list(map(float, latin))
        return out
    code = list(map(mul, latin, map(min, repeat(1.0), share)))
    out[CODE], out[PROSE] = code, list(map(sub, latin, code))
    return out


_PUNCT_PART = 1 << 20  # characters (at most, but for a longer text alone) `_punctuation` joins at a time
_NOT_PUNCT_OR_CUT = bytes(c for c in range(256) if c not in _ASCII_PUNCT and c != 0xFF)


def _punctuation(texts: Sequence[str], lens: list[int], raws: list[bytes] | None) -> list[int]:
    """The ASCII punctuation bytes of each text (`raws`: their UTF-8, None for ASCII texts), counted a part of the
    texts at a time: joined by 0xFF (in no UTF-8 text), every other byte deleted, split again at 0xFF."""
    out: list[int] = []
    ends = list(accumulate(lens))
    a = 0
    while a < len(texts):
        b = max(a + 1, bisect.bisect_right(ends, (ends[a - 1] if a else 0) + _PUNCT_PART, a))
        joined = "\xff".join(texts[a:b]).encode("latin-1") if raws is None else b"\xff".join(raws[a:b])
        out += map(len, joined.translate(None, _NOT_PUNCT_OR_CUT).split(b"\xff"))
        a = b
    return out


def block_features(block: Block, out: list[float], counter: Count | None = None) -> None:
    """Add one block's features to `out`: its text by kind (or its tokens), plus the structure it carries."""
    kind = block.type
    if block.tokens is not None and isinstance(block.tokens, int) and kind != "tool_use" and kind != "tool_result":
        out[STATED] += max(0, block.tokens)
    elif kind == "tool_use":
        out[TOOL_USE] += 1
        text_features(block_text(block), out, True, counter)
    elif kind in ("image", "document"):
        out[MEDIA] += 1
    elif kind == "tool_result":
        out[TOOL_RESULT] += 1
        text_features(str(block.text or ""), out, False, counter)
        for nested in block.content if isinstance(block.content, list) else ():
            if isinstance(nested, Block):
                block_features(nested, out, counter)
    elif kind == "unknown":
        text_features(json.dumps(block.raw, ensure_ascii=False, default=str) if block.raw else "", out, True,
                      counter)
    else:
        text_features(str(block.text or ""), out, False, counter)


def batched(messages: Iterable[Message], counter: Tokenizer | None) -> ContextManager[None]:
    """`counter.batch` of every text the features of `messages` have it count, found by `block_features`' own walk
    with each text collected instead of counted; nothing without a counter."""
    if counter is None:
        return nullcontext()
    texts: list[str] = []

    def collect(text: str) -> int:
        texts.append(text)
        return 0

    scratch = [0.0] * N_FEATURES
    for message in messages:
        for block in message.blocks:
            block_features(block, scratch, collect)
    return counter.batch(texts)


def message_features(message: Message, counter: Tokenizer | None = None) -> list[float]:
    out = [0.0] * N_FEATURES
    out[MESSAGE] = 1.0
    for block in message.blocks:
        block_features(block, out, counter)
    return out


if sys.version_info >= (3, 12):
    def sum_in_order(values: Iterable[float], start: float = 0.0) -> float:
        """`start` and the values added one at a time, left to right: the very additions the columnar passes make
        (`sum` of floats compensates its rounding from Python 3.12 on, so its last bits may differ from theirs)."""
        return reduce(add, values, start)
else:
    def sum_in_order(values: Iterable[float], start: float = 0.0) -> float:
        """`start` and the values added one at a time, left to right: before 3.12 `sum` makes those very additions
        (in C, without a float object for each: twice as fast)."""
        return sum(values, start)


def dot(ratios: Sequence[float], features: Sequence[float]) -> float:
    return sum_in_order(map(mul, ratios, features))


class FeatureEstimator(Estimator):
    """Tokens = ratios . features. `script` uses the cited SCRIPT_RATIOS; `calibrated` swaps in fitted ones.
    `counter`, a tokenizer, counts the text instead of its characters (`o200k`)."""

    name = "script"

    def __init__(self, ratios: Sequence[float] = SCRIPT_RATIOS, counter: Tokenizer | None = None) -> None:
        self.ratios = tuple(ratios)
        self.counter = counter
        self._last_result: tuple[str, tuple[float, ...], float] = ("", (), 0.0)

    def text(self, text: str) -> int:
        out = [0.0] * N_FEATURES
        text_features(text, out, False, self.counter)
        return int(dot(self.ratios, out))

    def blocks(self, blocks: Iterable[Block]) -> int:
        out = [0.0] * N_FEATURES
        for block in blocks:
            block_features(block, out, self.counter)
        return int(dot(self.ratios, out))

    def message(self, message: Message) -> int:
        return int(dot(self.ratios, message_features(message, self.counter)))

    def features(self, features: Sequence[float]) -> int:
        return int(dot(self.ratios, features))

    def block(self, block: Block) -> float:
        out = [0.0] * N_FEATURES
        block_features(block, out, self.counter)
        return dot(self.ratios, out)  # MESSAGE (the last feature) is 0 here: the same additions as `message`

    def single(self, figure: float) -> int:
        return int(figure + self.ratios[MESSAGE])

    def result(self, block: Block, text: str) -> float:
        """Scored once per text: clearing plans give tens of thousands of results the same marker."""
        last_text, last_ratios, figure = self._last_result
        if text is not last_text or self.ratios is not last_ratios:
            out = [0.0] * N_FEATURES
            out[TOOL_RESULT] = 1.0
            text_features(text, out, False, self.counter)
            figure = dot(self.ratios, out)
            self._last_result = (text, self.ratios, figure)
        return figure


class Script(FeatureEstimator):
    name = "script"


class O200k(FeatureEstimator):
    """OpenAI's o200k_base tokenizer for the text, the harmony framing for the structure (O200K_RATIOS)."""

    name = "o200k"

    def __init__(self) -> None:
        super().__init__(O200K_RATIOS, O200K)


class Calibrated(FeatureEstimator):
    """`script` with ratios fitted on a session's measured requests (calibration.py); alone it is `script`.

    `per_model` holds one fit per model: tokenizers differ between model generations, so a model switch in a
    session switches ratios. `ratios` (what `text`/`blocks`/`message` use) are those of `model`. With a tokenizer
    (`counter`: a session of OpenAI models) the fit starts from O200K_RATIOS (`base`) instead of SCRIPT_RATIOS.
    """

    name = "calibrated"

    def __init__(self, per_model: dict[str, Sequence[float]] | None = None, model: str | None = None,
                 counter: Tokenizer | None = None) -> None:
        self.per_model = {k: tuple(v) for k, v in (per_model or {}).items()}
        self.model = model
        self.base = O200K_RATIOS if counter is not None else SCRIPT_RATIOS
        super().__init__(self.per_model.get(model or "", self.base), counter)

    def for_model(self, model: str | None) -> tuple[float, ...]:
        return self.per_model.get(model or "", self.ratios)


# ---------------------------------------------------------------------------------------------------------------
# exact: the API's count of a whole state.

DEFAULT_COUNT_MODEL = "claude-sonnet-4-5"
_COUNT_CACHE: dict[str, int] = {}


class Exact(Estimator):
    """The API's own figure, through the official SDK's `messages.count_tokens`.

    Every call carries fixed overhead (the request framing), so sums of per-section calls over-count: `state`
    counts a whole request in one call (cached by a hash of its content) and is the only method that calls the API.
    `text`, `blocks` and `message` scale the `fallback` estimator by the ratio the last `state` call measured, so
    sections of that state add up to its exact total instead of each paying the overhead.
    """

    name = "exact"

    @classmethod
    def unavailable(cls) -> str | None:
        if os.environ.get("ANTHROPIC_API_KEY"):
            return None
        return ("the exact estimator asks the API (messages.count_tokens) and needs ANTHROPIC_API_KEY in the "
                "environment; set it, or choose --estimator calibrated/script")

    def __init__(self, fallback: Estimator | None = None, model: str | None = None, client: Any = None) -> None:
        if client is None:
            reason = self.unavailable()
            if reason is not None:
                raise EstimatorUnavailable(reason)
            import anthropic  # the official SDK reads ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL itself

            client = anthropic.Anthropic()
        self.client = client
        self.fallback = fallback or Script()
        self.model = model or os.environ.get("ANTHROPIC_MODEL") or DEFAULT_COUNT_MODEL
        self.scale = 1.0
        self.calls = 0

    def state(self, messages: Sequence[Message], system: str | None = None, tools: Sequence[Any] = (),
              model: str | None = None) -> int:
        """Exact tokens of a whole request (messages, system prompt, tool schemas): one API call, cached."""
        body: dict[str, Any] = {"model": _api_model(model or self.model), "messages": _api_messages(messages)}
        if system:
            body["system"] = system
        if tools:
            body["tools"] = [{"name": t.name, "description": t.description,
                              "input_schema": t.input_schema or {"type": "object"}} for t in tools]
        import hashlib  # here: only the API counter hashes (its import alone costs a status line ~5 ms)

        key = hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()
        if key not in _COUNT_CACHE:
            _COUNT_CACHE[key] = self._count(body)
        total = _COUNT_CACHE[key]
        guess = sum(self.fallback.message(m) for m in messages)
        if guess > 0:
            self.scale = total / guess
        return total

    def _count(self, body: dict) -> int:
        import anthropic

        self.calls += 1
        try:
            return self.client.messages.count_tokens(**body).input_tokens
        except anthropic.BadRequestError:
            # A state the API refuses as a request (an unpaired tool call after an edit, say) still has a size:
            # count it with tool blocks flattened to text.
            body = {**body, "messages": _flatten_tools(body["messages"])}
            return self.client.messages.count_tokens(**body).input_tokens
        except anthropic.APIError as exc:
            raise EstimatorUnavailable(f"the exact estimator could not reach the API: {exc}") from None

    def text(self, text: str) -> int:
        return int(self.fallback.text(text) * self.scale)

    def blocks(self, blocks: Iterable[Block]) -> int:
        return int(self.fallback.blocks(blocks) * self.scale)

    def message(self, message: Message) -> int:
        return int(self.fallback.message(message) * self.scale)

    def block(self, block: Block) -> float:
        return self.fallback.block(block)

    def single(self, figure: float) -> int:
        return int(self.fallback.single(figure) * self.scale)

    def result(self, block: Block, text: str) -> float:
        return self.fallback.result(block, text)


def _api_model(model: str) -> str:
    return model.replace("[1m]", "")


def _api_messages(messages: Sequence[Message]) -> list[dict]:
    """Messages as count_tokens accepts them: thinking as text (a transcript's signature may be missing or
    redacted), system messages as user text, media without its data (not kept) as a placeholder, a user turn
    first."""
    out: list[dict] = []
    for m in messages:
        content = []
        for b in m.blocks:
            if b.type in ("thinking", "redacted_thinking"):
                if b.text:
                    content.append({"type": "text", "text": b.text})
            elif b.type in ("image", "document", "unknown"):
                content.append({"type": "text", "text": f"[{b.type}]"})
            else:
                content.append(b.to_api())
        if not content:
            content = [{"type": "text", "text": "."}]
        out.append({"role": "assistant" if m.role == "assistant" else "user", "content": content})
    if not out or out[0]["role"] != "user":
        out.insert(0, {"role": "user", "content": [{"type": "text", "text": "."}]})
    return out


def _flatten_tools(messages: list[dict]) -> list[dict]:
    def flat(block: dict) -> dict:
        if block.get("type") in ("tool_use", "tool_result"):
            return {"type": "text", "text": json.dumps(block, ensure_ascii=False, default=str)}
        return block

    return [{**m, "content": [flat(b) for b in m["content"]]} for m in messages]


ESTIMATORS: dict[str, type[Estimator]] = {
    "chars35": Chars35, "blocks": BlockAware, "script": Script, "o200k": O200k, "calibrated": Calibrated,
    "exact": Exact}


def unavailable(name: str) -> str | None:
    """Why estimator `name` cannot run here (the `exact` one without an API key), or None when it can."""
    cls = ESTIMATORS.get(name)
    return cls.unavailable() if cls is not None else f"unknown estimator {name!r}"


def get_estimator(name: str = "chars35") -> Estimator:
    """An estimator by name; raises ValueError naming the choices for an unknown one, EstimatorUnavailable (a
    ValueError) for `exact` without an API key. `calibrated` comes unfitted here (it is `script`);
    `inspector.core.tokens.estimator_for(session)` gives one fitted on a session, and accounting fits its own."""
    try:
        cls = ESTIMATORS[name]
    except KeyError:
        raise ValueError(f"unknown estimator {name!r}; choose from {', '.join(sorted(ESTIMATORS))}") from None
    return cls()
