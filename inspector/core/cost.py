"""What a session cost: each request priced from its usage, summed per model and per session, and shared out
over the messages that filled the context.

Prices come from a data file (`data/prices.json`: per model, USD per million tokens of input, output, cache writes
with the 5-minute and the 1-hour TTL and cache reads, with its date and source), which a file of the user's
replaces or extends (`--prices FILE` or CONTEXT_INSPECTOR_PRICES). A request costs input x input rate + cache
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

import bisect
import json
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from inspector.core.model import AgentCost, Request, Session

if TYPE_CHECKING:
    from inspector.core.accounting import Accounting

PRICES = Path(__file__).with_name("data") / "prices.json"
PRICES_ENV = "CONTEXT_INSPECTOR_PRICES"
MILLION = 1_000_000
RATE_KEYS = ("input", "output", "cache_write_5m", "cache_write_1h", "cache_read")
_DATE = re.compile(r"-(\d{8})$")
_REGION = re.compile(r"^(?:us|eu|apac|global)\.")


class PriceError(ValueError):
    """A price file that cannot be used: says which file and what is wrong."""


@dataclass(frozen=True, slots=True)
class Rates:
    """USD per million tokens. `long_prompt`: the rates above `above` prompt tokens (None: one tier)."""

    input: float
    output: float
    cache_write_5m: float
    cache_write_1h: float
    cache_read: float
    long_prompt: Rates | None = None
    above: int | None = None

    def tier(self, prompt: int) -> Rates:
        return self.long_prompt if self.long_prompt is not None and self.above is not None and prompt > self.above \
            else self


@dataclass(slots=True)
class PriceTable:
    models: dict[str, Rates]
    date: str | None
    source: str
    aliases: dict[str, str] = field(default_factory=dict)  # another id of a model (a dated one) -> its key
    files: tuple[str, ...] = ()

    def key(self, model: str | None) -> str | None:
        """The table's key for a model id as transcripts write it (a date suffix, `[1m]`, a provider's prefix or
        region, a Vertex `@version`, a Bedrock `-v1:0` are looked through), or None when it has no price."""
        if not model:
            return None
        name = model.strip().lower()
        for candidate in _candidates(name):
            if candidate in self.models:
                return candidate
            if candidate in self.aliases:
                return self.aliases[candidate]
        return None

    def rates(self, model: str | None) -> Rates | None:
        key = self.key(model)
        return self.models[key] if key is not None else None

    def to_dict(self) -> dict[str, Any]:
        return {"date": self.date, "source": self.source, "files": list(self.files)}


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
    for key, entry in data["models"].items():
        rates = _rates(entry, f"{path}: model {key!r}")
        key = key.lower()
        table.models[key] = rates
        for other in entry.get("ids") or () if isinstance(entry, dict) else ():
            if isinstance(other, str):
                table.aliases[other.lower()] = key


@lru_cache(maxsize=8)
def _table(files: tuple[str, ...]) -> PriceTable:
    base = _read(PRICES)
    table = PriceTable({}, base.get("date"), str(base.get("source", "")), files=(str(PRICES),))
    _merge(table, base, PRICES)
    for name in files:
        path = Path(name).expanduser()
        data = _read(path)
        _merge(table, data, path)
        table.files += (str(path),)
        table.date = data.get("date", table.date)
        table.source += f"; models from {path}"
    return table


def prices(path: str | os.PathLike[str] | None = None, environ: dict[str, str] | None = None) -> PriceTable:
    """The price table: the shipped one, with the user's file (`path`, else $CONTEXT_INSPECTOR_PRICES) over it."""
    env = os.environ if environ is None else environ
    extra = str(path) if path is not None else env.get(PRICES_ENV) or None
    return _table((extra,) if extra else ())


def request_cost(r: Request, rates: Rates) -> float:
    """What one request cost in USD: input, cache writes (1-hour part at its rate), cache reads and output."""
    rt = rates.tier(r.measured_context)
    one_hour = min(max(0, r.cache_write_1h), r.cache_creation)
    return (r.input_tokens * rt.input + (r.cache_creation - one_hour) * rt.cache_write_5m
            + one_hour * rt.cache_write_1h + r.cache_read * rt.cache_read + r.output_tokens * rt.output) / MILLION


def input_cost(r: Request, rates: Rates) -> float:
    """The part of `request_cost` that paid for what was sent (all but the output)."""
    return request_cost(r, rates) - r.output_tokens * rates.tier(r.measured_context).output / MILLION


@dataclass(slots=True)
class SessionCost:
    """A session's cost. `by_request[k]` is request k's USD (None: its model has no price); `by_model` sums the
    priced ones; `total_usd` is their sum (None when no request is priced); `unpriced` names the models without a
    price; `agent` is the agent's own figure; `messages[i]` message i's share (see the module)."""

    total_usd: float | None
    by_model: dict[str, float]
    by_request: list[float | None]
    unpriced: list[str]
    table: PriceTable
    agent: AgentCost | None = None
    messages: list[float] = field(default_factory=list)
    prefix_usd: float = 0.0  # the prefix's share (system prompt, tools and what no message explains)

    def to_dict(self, session: Session) -> dict[str, Any]:
        """The report's `cost` key (docs/report-json.md)."""
        out: dict[str, Any] = {
            "total_usd": _round(self.total_usd),
            "by_model": {m: _round(v) for m, v in self.by_model.items()},
            "by_request": [{"id": r.id, "model": r.model, "usd": _round(c)}
                           for r, c in zip(session.requests, self.by_request)],
            "unpriced_models": list(self.unpriced),
            "prefix_share_usd": _round(self.prefix_usd),
            "prices": self.table.to_dict(),
            "agent": None if self.agent is None else {
                "total_usd": _round(self.agent.total_usd), "source": self.agent.source,
                "by_model": {m: _round(v) for m, v in self.agent.by_model.items()}},
        }
        return out


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 6)


def session_cost(session: Session, table: PriceTable | None = None,
                 accounting: Accounting | None = None) -> SessionCost:
    """Every request of `session` priced; with `accounting`, each message's share of the cost too."""
    table = table or prices()
    by_request: list[float | None] = []
    by_model: dict[str, float] = {}
    unpriced: list[str] = []
    for r in session.requests:
        rates = table.rates(r.model)
        if rates is None:
            by_request.append(None)
            if (r.model or "?") not in unpriced:
                unpriced.append(r.model or "?")
            continue
        usd = request_cost(r, rates)
        by_request.append(usd)
        by_model[r.model or "?"] = by_model.get(r.model or "?", 0.0) + usd
    priced = [c for c in by_request if c is not None]
    result = SessionCost(sum(priced) if priced else None, by_model, by_request, unpriced, table, session.agent_cost)
    if accounting is not None:
        result.messages, result.prefix_usd = _shares(session, accounting, table)
    return result


def _shares(session: Session, acc: Accounting, table: PriceTable) -> tuple[list[float], float]:
    """Each message's share of the session's cost, and the prefix's. A request's input cost per token of its
    measured context is the same for every token it sent; a message gets that for its figure from each request that
    saw it (requests of its window whose `seen_end` lies beyond it: a suffix of them, summed once per window), and
    the output cost of the request that produced it."""
    n = len(session.messages)
    shares = [0.0] * n
    prefix = 0.0
    held = [0]  # held[i]: the figures of messages[:i]
    for i in range(n):
        held.append(held[-1] + acc.size(i))
    windows: dict[int, list[tuple[int, float]]] = {}
    for r in session.requests:
        rates = table.rates(r.model)
        if rates is None or r.measured_context <= 0:
            continue
        per_token = input_cost(r, rates) / r.measured_context
        windows.setdefault(r.seen_start, []).append((r.seen_end, per_token))
        seen = held[min(r.seen_end, n)] - held[min(r.seen_start, n)]
        prefix += per_token * (r.measured_context - seen)  # below 0 where the estimates ran high: still sums
        if 0 <= r.message_index < n:
            shares[r.message_index] += r.output_tokens * rates.tier(r.measured_context).output / MILLION
    for start in sorted(windows):
        points = sorted(windows[start])
        ends = [e for e, _ in points]
        suffix = [0.0] * (len(points) + 1)
        for k in range(len(points) - 1, -1, -1):
            suffix[k] = suffix[k + 1] + points[k][1]
        hi = min(n, ends[-1])
        for i in range(start, hi):
            shares[i] += acc.size(i) * suffix[bisect.bisect_right(ends, i)]
    return shares, prefix

