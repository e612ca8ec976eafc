"""Make inspector/core/data/prices-models-dev.json: the prices of the models other agents than Claude Code run
(OpenAI's for Codex, Google's for Gemini CLI, Alibaba's Qwen for Qwen Code, Moonshot's Kimi, and a few more), from
the models.dev catalog (MIT) that opencode builds into its binary, as a price file of cost.py's shape.

    python tools/models_dev_prices.py BINARY > inspector/core/data/prices-models-dev.json
    python tools/models_dev_prices.py BINARY --check    # exit 1 if the committed file differs

BINARY: opencode's own executable (`node_modules/opencode-linux-x64/bin/opencode` of the npm package the lab
installs), or a models.dev `api.json`. The catalog is a JavaScript object literal in the binary; Node.js evaluates it
(it is data: providers, their models, each with `cost` in USD per million tokens).

Only a model's maker is taken as its price (`PROVIDERS`: a reseller's prices differ), and only models that write
text. Where the catalog has no cache-read or cache-write rate, cached and written tokens are priced as input (what
a provider without such a discount charges). Context tiers (`cost.tiers`, else `cost.context_over_200k` above
200,000 tokens) become nested `long_prompt` rates.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "inspector" / "core" / "data" / "prices-models-dev.json"

# The makers whose own prices are taken, in order (a model id two of them list keeps the first's), with the id
# prefixes of their own models where they also resell others' (None: every model they list).
PROVIDERS: dict[str, tuple[str, ...] | None] = {
    "openai": None, "google": None, "moonshotai": None, "alibaba": ("qwen", "qwq", "qvq"), "deepseek": None,
    "xai": None, "mistral": None, "zai": None, "minimax": None,
}
_START = re.compile(rb"\(\{[\w\"-]+:\{id:\"[\w.-]+\",env:\[")


def catalog(path: Path) -> tuple[dict, str]:
    """The models.dev catalog in `path` (an api.json, or a binary holding it as an object literal), and what it is."""
    data = path.read_bytes()
    if data[:1] == b"{":
        return json.loads(data), f"models.dev api.json ({path.name})"
    found = _START.search(data)
    if found is None:
        raise SystemExit(f"{path}: no models.dev catalog found")
    start = found.start() + 1
    literal = data[start:_literal_end(data, start)].decode()
    script = "process.stdout.write(JSON.stringify((0, eval)('(' + require('fs').readFileSync(0, 'utf8') + ')')))"
    out = subprocess.run(["node", "-e", script], input=literal, capture_output=True, text=True, check=True).stdout
    return json.loads(out), "models.dev catalog built into opencode"


def _literal_end(data: bytes, start: int) -> int:
    """Just past the object literal that opens at `start` (brackets counted outside strings)."""
    depth, quote, i = 0, None, start
    while i < len(data):
        c = data[i:i + 1]
        if quote:
            if c == b"\\":
                i += 1
            elif c == quote:
                quote = None
        elif c in b"\"'`":
            quote = c
        elif c in b"{[":
            depth += 1
        elif c in b"}]":
            depth -= 1
            if not depth:
                return i + 1
        i += 1
    raise SystemExit("the catalog's object literal does not end")


def rates(cost: dict) -> dict:
    """One model's `cost` as price-file rates, its context tiers nested as `long_prompt`."""
    tiers = [t for t in cost.get("tiers") or () if (t.get("tier") or {}).get("type") == "context"]
    if not tiers and isinstance(cost.get("context_over_200k"), dict):
        tiers = [{**cost["context_over_200k"], "tier": {"type": "context", "size": 200_000}}]
    out = _flat(cost)
    inner = out
    for tier in sorted(tiers, key=lambda t: t["tier"]["size"]):
        inner["long_prompt"] = {**_flat({**cost, **tier}), "above_prompt_tokens": int(tier["tier"]["size"])}
        inner = inner["long_prompt"]
    return out


def _flat(cost: dict) -> dict:
    entered = float(cost["input"])
    write = float(cost.get("cache_write", entered))
    return {"input": entered, "output": float(cost["output"]), "cache_write_5m": write, "cache_write_1h": write,
            "cache_read": float(cost.get("cache_read", entered))}


def price_file(data: dict, what: str, date: str) -> dict:
    models: dict[str, dict] = {}
    for provider, own in PROVIDERS.items():
        for model_id, model in sorted((data.get(provider) or {}).get("models", {}).items()):
            key = model_id.lower()
            cost = model.get("cost")
            if (key in models or not isinstance(cost, dict) or "input" not in cost or "output" not in cost
                    or "text" not in (model.get("modalities") or {}).get("output", ["text"])
                    or (own is not None and not key.startswith(own))):
                continue
            models[key] = {"provider": provider, **rates(cost)}
    return {
        "about": "Prices of the models of agents other than Claude Code, in USD per million tokens, from the makers' "
                 "own entries in the models.dev catalog; cached and written tokens at the input rate where it has "
                 "no rate for them. Made by tools/models_dev_prices.py.",
        "date": date,
        "source": what,
        "licence": "Facts (prices) from models.dev (MIT, Copyright (c) 2025 SST); this file is part of "
                   "context-inspector (MIT).",
        "unit": "USD per 1,000,000 tokens",
        "models": models,
    }


def main(make=None, out: Path = OUT, description: str = __doc__, dump=None) -> int:
    """Write the file `make(catalog, source, date)` makes (as `dump` writes it: indented JSON by default) to
    stdout, or with --check compare it with `out`."""
    parser = argparse.ArgumentParser(description=description.split("\n\n")[0])
    parser.add_argument("binary", type=Path)
    parser.add_argument("--what", default=None, help="what the catalog is, for `source` (e.g. 'opencode 1.18.33')")
    parser.add_argument("--date", required=True, help="the catalog's date (the opencode release's), YYYY-MM-DD")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    data, what = catalog(args.binary)
    made = (dump or _indented)((make or price_file)(data, f"{what} {args.what}" if args.what else what,
                                                    args.date))
    if args.check:
        same = out.read_text() == made
        print(f"{out}: {'up to date' if same else 'differs from what the catalog makes'}", file=sys.stderr)
        return 0 if same else 1
    sys.stdout.write(made)
    return 0


def _indented(doc: dict) -> str:
    return json.dumps(doc, indent=1) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
