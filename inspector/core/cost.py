"""What a session cost: each request priced from its usage, summed per model and per session, and shared out
over the messages that filled the context.

Prices come from data files (per model, USD per million tokens of input, output, cache writes with the 5-minute and
the 1-hour TTL and cache reads, with its date and source): `data/prices.json`, Claude Code's own catalog, over
`data/prices-models-dev.json`, the other makers' models (tools/models_dev_prices.py); a file of the user's
replaces or extends them (`--prices FILE` or CONTEXT_INSPECTOR_PRICES). A request costs input x input rate + cache
writes at their TTL's rate + cache reads + output, at the long-prompt rates where the model has them and the
prompt is above their bound (as Claude Code prices it). A model the table does not know is not priced (its
requests' cost is None and the model is named), never guessed. Where the agent recorded its own figure
(`Session.agent_cost`: Claude Code's cost-state, opencode's and Cline's per-request cost) both are given: the
agent's may include requests the transcript keeps elsewhere (subagents, title and summary side requests).

A message's share of the cost: every request's input cost spread over what it sent in proportion to each
message's token figure (the prefix gets its part), its output cost to the message it produced, summed over the
requests that saw the message. The shares of a window's messages and prefix add up to its requests' costs.
"""

from __future__ import annotations

import json
import os
import re
from array import array
from functools import lru_cache, reduce
from itertools import accumulate, chain, repeat
from operator import add, lt, mul, sub
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import orjson
from msgspec import Struct, field

from inspector.core.model import AgentCost, Request, Session
from inspector.core.rows import Columns, with_columns

if TYPE_CHECKING:
    from inspector.core.accounting import Accounting

PRICES = Path(__file__).with_name("data") / "prices.json"
# The other makers' models (tools/models_dev_prices.py): read first, so Claude Code's own catalog wins a model both name
OTHER_PRICES = PRICES.with_name("prices-models-dev.json")
PRICES_ENV = "CONTEXT_INSPECTOR_PRICES"
MILLION = 1_000_000
RATE_KEYS = ("input", "output", "cache_write_5m", "cache_write_1h", "cache_read")
_DATE = re.compile(r"-(\d{8})$")
_REGION = re.compile(r"^(?:us|eu|apac|global)\.")


class PriceError(ValueError):
    """A price file that cannot be used: says which file and what is wrong."""


class Rates(Struct, frozen=True):
    """USD per million tokens. `long_prompt`: the rates above `above` prompt tokens (None: one tier)."""

    input: float
    output: float
    cache_write_5m: float
    cache_write_1h: float
    cache_read: float
    long_prompt: Rates | None = None
    above: int | None = None

    def tier(self, prompt: int) -> Rates:
        """The rates of a prompt of `prompt` tokens: the highest tier whose bound it is above (tiers nest)."""
        return self.long_prompt.tier(prompt) if self.long_prompt is not None and self.above is not None \
            and prompt > self.above else self


class PriceTable(Struct):
    models: dict[str, Rates]
    date: str | None
    source: str
    aliases: dict[str, str] = field(default_factory=dict)  # another id of a model (a dated one) -> its key
    files: tuple[str, ...] = ()
    dates: tuple[str | None, ...] = ()  # each file's date (`date`: the last one's)
    dated: dict[str, str | None] = field(default_factory=dict)  # a model key -> the date of the file pricing it
    _keys: dict[str, str | None] = field(default_factory=dict)  # key()'s answers

    def key(self, model: str | None) -> str | None:
        """The table's key for a model id as transcripts write it (a date suffix, `[1m]`, a provider's prefix or
        region, a Vertex `@version`, a Bedrock `-v1:0` are looked through), or None when it has no price."""
        if not model:
            return None
        try:
            return self._keys[model]  # a session names a few models over thousands of requests
        except KeyError:
            pass
        name = model.strip().lower()
        found = next((self.aliases[c] if c not in self.models else c for c in _candidates(name)
                      if c in self.models or c in self.aliases), None)
        self._keys[model] = found
        return found

    def rates(self, model: str | None) -> Rates | None:
        """A model's rates (None: no price); `key` remembers its answers, so every request can ask."""
        key = self.key(model)
        return self.models[key] if key is not None else None

    def date_of(self, model: str | None) -> str | None:
        """The date of the price a model has (the file's that gave it), or None."""
        key = self.key(model)
        return self.dated.get(key) if key is not None else None

    def to_dict(self) -> dict[str, Any]:
        return {"date": self.date, "source": self.source, "files": list(self.files), "dates": list(self.dates)}


def _candidates(name: str) -> list[str]:
    name = name.replace("[1m]", "")
    out = [name]
    base = name.rsplit("/", 1)[-1].split("@", 1)[0]
    base = _REGION.sub("", base)
    if base.startswith("anthropic."):
        base = base[len("anthropic."):]
    base = re.sub(r"-v\d+(?::\d+)?$", "", base)
    out.append(base)
    undated = _DATE.sub("", base)
    if undated != base:
        out.append(undated)
    return out


def _rates(data: Any, where: str) -> Rates:
    if not isinstance(data, dict):
        raise PriceError(f"{where}: not an object of rates")
    try:
        values = {k: float(data[k]) for k in RATE_KEYS if k != "cache_write_1h"}
        values["cache_write_1h"] = float(data.get("cache_write_1h", values["cache_write_5m"]))
    except KeyError as exc:
        raise PriceError(f"{where}: no {exc.args[0]!r} rate") from None
    except (TypeError, ValueError):
        raise PriceError(f"{where}: a rate that is not a number") from None
    if any(v < 0 for v in values.values()):
        raise PriceError(f"{where}: a negative rate")
    long = data.get("long_prompt")
    if isinstance(long, dict):
        above = long.get("above_prompt_tokens")
        if not isinstance(above, int) or above <= 0:
            raise PriceError(f"{where}: long_prompt without a positive above_prompt_tokens")
        return Rates(**values, long_prompt=_rates(long, where + " long_prompt"), above=above)
    return Rates(**values)


def _read(path: Path) -> dict:
    try:
        data = json.loads(path.read_bytes())
    except OSError as exc:
        raise PriceError(f"cannot read the price file {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise PriceError(f"the price file {path} is not JSON: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("models"), dict):
        raise PriceError(f"the price file {path} has no \"models\" object")
    return data


def _merge(table: PriceTable, data: dict, path: Path) -> None:
    table._keys.clear()
    for key, entry in data["models"].items():
        rates = _rates(entry, f"{path}: model {key!r}")
        key = key.lower()
        table.models[key] = rates
        table.dated[key] = data.get("date")
        for other in entry.get("ids") or () if isinstance(entry, dict) else ():
            if isinstance(other, str):
                table.aliases[other.lower()] = key


@lru_cache(maxsize=8)
def _table(files: tuple[str, ...]) -> PriceTable:
    table = PriceTable({}, None, "")
    for n, path in enumerate([OTHER_PRICES, PRICES, *(Path(name).expanduser() for name in files)]):
        data = _read(path)
        _merge(table, data, path)
        table.files += (str(path),)
        table.dates += (data.get("date"),)
        table.date = data.get("date", table.date)
        source = str(data.get("source", "")) if n < 2 else f"models from {path}"
        table.source += f"; {source}" if table.source else source
    return table


def prices(path: str | os.PathLike[str] | None = None, environ: dict[str, str] | None = None) -> PriceTable:
    """The price table: the shipped one, with the user's file (`path`, else $CONTEXT_INSPECTOR_PRICES) over it."""
    env = os.environ if environ is None else environ
    extra = str(path) if path is not None else env.get(PRICES_ENV) or None
    return _table((extra,) if extra else ())


def request_cost(r: Request, rates: Rates) -> float:
    """What one request cost in USD: input, cache writes (1-hour part at its rate), cache reads and output (with
    the thinking billed as output that `output_tokens` leaves out)."""
    return _price([r], {r.model: rates}).usd[0]  # type: ignore[return-value]


class _Priced:
    """What pricing the requests gives: `usd` (`request_cost` of each; None: no rates) and, where the messages'
    shares are wanted (see `_shares`), each window's points (their `seen_end`s, a list of the requests' own ints, and
    costs per token of the measured context, an array: a session's 50,000 as pairs of objects took 4 MB), the
    prefix's share, and the output costs on the messages that produced them (`shares`, an array as well)."""

    __slots__ = ("usd", "windows", "prefix", "shares")

    def __init__(self, n: int) -> None:
        self.usd: list[float | None] = []
        self.windows: dict[int, tuple[list[int], array]] = {}
        self.prefix = 0.0
        self.shares = array("d", bytes(8 * n))


def _price(requests: list[Request], rates_of: dict[str | None, Rates | None], held: Sequence[int] | None = None,
           table: PriceTable | None = None) -> _Priced:
    """Every request priced by its model's rates (`rates_of`, which gets those `table` gives of the models it lacks,
    in order of first use); with `held` (held[i]: the figures of the session's messages[:i]), what `_shares` needs
    of each request too. One loop over the requests, each read once (a session prices 50,000)."""
    n = len(held) - 1 if held is not None else 0
    priced = _Priced(n)
    usd, shares, windows = priced.usd, priced.shares, priced.windows
    prefix = 0.0
    window, ends, per_tokens = None, [], array("d")  # the last request's `seen_start`, its window's points
    for r in requests:
        try:
            rates = rates_of[r.model]
        except KeyError:  # a model not seen yet
            rates = rates_of[r.model] = table.rates(r.model)  # type: ignore[union-attr]
        if rates is None:
            usd.append(None)
            continue
        given, written, read = r.input_tokens, r.cache_creation, r.cache_read
        measured = given + written + read  # Request.measured_context
        rt = rates if rates.long_prompt is None else rates.tier(measured)
        one_hour = r.cache_write_1h  # min(max(0, it), written)
        if one_hour < 0:
            one_hour = 0
        if one_hour > written:
            one_hour = written
        out = (r.output_tokens + r.thinking_tokens) * rt.output
        cost = (given * rt.input + (written - one_hour) * rt.cache_write_5m + one_hour * rt.cache_write_1h
                + read * rt.cache_read + out) / MILLION
        usd.append(cost)
        if held is None or measured <= 0:
            continue
        # the message shares: this request's input cost per token, its window's point and what its prefix held
        out /= MILLION
        per_token = (cost - out) / measured
        start, end = r.seen_start, r.seen_end
        if start != window:
            window, (ends, per_tokens) = start, windows.setdefault(start, ([], array("d")))
            before = held[min(start, n)]  # what messages[:start] hold (none beyond the last)
        ends.append(end)
        per_tokens.append(per_token)
        try:
            explained = held[end] - before
        except IndexError:  # a request that names messages beyond the last: those hold nothing
            explained = held[min(end, n)] - before
        prefix += per_token * (measured - explained)  # below 0 where the estimates ran high: sums
        i = r.message_index
        if 0 <= i < n:
            shares[i] += out
    priced.prefix = prefix
    return priced


class SessionCost(Struct):
    """A session's cost. `by_request[k]` is request k's USD (None: its model has no price); `by_model` sums the
    priced ones; `total_usd` is their sum (None when no request is priced); `unpriced` names the models without a
    price; `agent` is the agent's own figure; `messages[i]` message i's share (see the module)."""

    total_usd: float | None
    by_model: dict[str, float]
    by_request: list[float | None]
    unpriced: list[str]
    table: PriceTable
    agent: AgentCost | None = None
    messages: Sequence[float] = field(default_factory=list)
    prefix_usd: float = 0.0  # the prefix's share (system prompt, tools and what no message explains)

    def to_dict(self, session: Session, rows: bool = True) -> dict[str, Any]:
        """The report's `cost` key (docs/report-json.md). Without `rows`, `by_request` is left empty, for
        `report.write_json` to stream (`request_columns`)."""
        n = len(session.requests) if rows else 0
        out: dict[str, Any] = {
            "total_usd": _round(self.total_usd),
            "by_model": {m: _round(v) for m, v in self.by_model.items()},
            "by_request": with_columns([{} for _ in range(n)], self.request_columns(session, 0, n)),
            "unpriced_models": list(self.unpriced),
            "prefix_share_usd": _round(self.prefix_usd),
            "prices": self.table.to_dict(),
            "agent": None if self.agent is None else {
                "total_usd": _round(self.agent.total_usd), "source": self.agent.source,
                "by_model": {m: _round(v) for m, v in self.agent.by_model.items()}},
        }
        return out

    def request_columns(self, session: Session, lo: int, hi: int) -> Columns:
        """`by_request[lo:hi]` of the report's `cost` key, as columns (`CostRow`'s fields)."""
        part = session.requests[lo:hi]
        return {"id": [r.id for r in part], "model": [r.model for r in part], "usd": rounded(self.by_request[lo:hi])}


class CostRow(Struct, gc=False):
    """A row of the report's `cost.by_request` as report --json streams it."""

    id: str
    model: str | None
    usd: float | None


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 6)


def rounded(values: list[float | None]) -> list[float | None]:
    """`_round` of each of a list of floats, written to six places by one format and read back by orjson in one
    call: the same floats (both round the value's exact binary expansion correctly, ties to even; tests/test_cost.py
    checks it) in about a third of the time of a `round` call each (report --json rounds 100,000 message shares).
    A bytes format: str's took a tenth more."""
    try:
        return orjson.loads(b"[" + ((b"%.6f," * len(values)) % tuple(values))[:-1] + b"]")
    except (TypeError, ValueError):  # None (an unpriced request), or inf or nan, which JSON has no word for
        return list(map(_round, values))


def session_cost(session: Session, table: PriceTable | None = None,
                 accounting: Accounting | None = None) -> SessionCost:
    """Every request of `session` priced; with `accounting`, each message's share of the cost too."""
    table = table or prices()
    rates: dict[str | None, Rates | None] = {}  # each model's, in order of first use
    sizes = accounting.sizes() if accounting is not None else None
    held = None if sizes is None else array("q", accumulate(sizes, initial=0))  # 8 bytes each, not an int object
    priced = _price(session.requests, rates, held, table)
    del held
    by_request = priced.usd
    unpriced = list(dict.fromkeys(m or "?" for m, r in rates.items() if r is None))
    by_model: dict[str, float] = {}
    if len(rates) == 1 and not unpriced:  # one model: its sum in one C loop, in the same order
        by_model[next(iter(rates))] = reduce(add, by_request, 0.0)  # type: ignore[arg-type,index]
    else:
        for r, usd in zip(session.requests, by_request):
            if usd is not None:
                by_model[r.model] = by_model.get(r.model, 0.0) + usd  # type: ignore[index]
    priced_usd = [c for c in by_request if c is not None] if unpriced else by_request
    result = SessionCost(sum(priced_usd) if priced_usd else None, by_model, by_request, unpriced,  # type: ignore[arg-type]
                         table, session.agent_cost)
    if sizes is not None:
        result.messages, result.prefix_usd = _shares(priced, sizes), priced.prefix
    return result


def _shares(priced: _Priced, sizes: list[int]) -> array:
    """Each message's share of the session's cost (`sizes`: each message's figure). A request's input cost (its
    `request_cost` less its output's) per token of its measured context is the same for every token it sent; a
    message gets that for its figure from each request that saw it (requests of its window whose `seen_end` lies
    beyond it: a suffix of them, summed once per window), and the output cost of the request that produced it
    (`_price` gives both)."""
    shares, n = priced.shares, len(sizes)
    for start in sorted(priced.windows):
        ends, per_token = priced.windows[start]
        if not all(map(lt, ends, ends[1:])):  # not in the order of their ends already: sorted, as pairs
            ends, per_token = zip(*sorted(zip(ends, per_token)))
        # suffix[k]: what a token seen by the requests from the k-th on cost (summed from the last, from 0.0)
        suffix = list(accumulate(reversed(per_token), initial=0.0))[::-1]
        # messages[bounds[k]:bounds[k + 1]] were seen by the requests from the k-th on (ends ascend: clamped only
        # where one lies outside start..n)
        hi = min(n, ends[-1])
        bounds = [start, *(ends if start <= ends[0] and ends[-1] <= n else
                           map(max, repeat(start), map(min, ends, repeat(hi))))]
        top = bounds[-1]
        # each message's figure x its suffix, added to its share: C loops, the same products and sums as one
        # message at a time (each suffix repeated as a 1-tuple times its count: a repeat object each cost more)
        per_message = chain.from_iterable(map(mul, zip(suffix), map(sub, bounds[1:], bounds)))
        shares[start:top] = array("d", map(add, shares[start:top], map(mul, sizes[start:top], per_message)))
    return shares
