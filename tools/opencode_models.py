"""Make inspector/core/data/opencode-models.json: the limits opencode gives each model of its catalog (context,
input, output), which its overflow rule compacts by, from the models.dev catalog (MIT) built into its binary.

    python tools/opencode_models.py BINARY --what '1.18.33 (npm opencode-ai@1.18.33)' --date YYYY-MM-DD > FILE
    python tools/opencode_models.py BINARY ... --check    # exit 1 if the committed file differs

Every provider of the catalog is kept (opencode calls a model through the provider a session records), as
`provider -> model -> [context, input, output]`, with 0 where the catalog states no limit (opencode reads a missing
context or output as 0, and a missing input as none). Models whose context is 0 are left out: opencode never
compacts for them, which is what a model missing from the file means too.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from models_dev_prices import main  # noqa: E402  (the catalog reader and the --check flow)

OUT = Path(__file__).resolve().parent.parent / "inspector" / "core" / "data" / "opencode-models.json"


def limits_file(data: dict, what: str, date: str) -> dict:
    providers: dict[str, dict[str, list[int]]] = {}
    for provider, entry in sorted(data.items()):
        models = {}
        for model_id, model in sorted((entry.get("models") or {}).items()):
            limit = model.get("limit") if isinstance(model.get("limit"), dict) else {}
            context, entered, output = (int(limit.get(k) or 0) for k in ("context", "input", "output"))
            if context > 0:
                models[model_id] = [context, entered, output]
        if models:
            providers[provider] = models
    return {
        "about": "The context, input and output limits (tokens; 0: none stated) opencode gives the models of its "
                 "catalog, by provider then model id. Made by tools/opencode_models.py.",
        "date": date,
        "source": what,
        "licence": "Facts (model limits) from models.dev (MIT, Copyright (c) 2025 SST); this file is part of "
                   "context-inspector (MIT).",
        "providers": providers,
    }


def one_line_a_provider(doc: dict) -> str:
    """The file with each provider's models on one line: small, and a catalog update diffs by provider."""
    head = {k: v for k, v in doc.items() if k != "providers"}
    lines = [json.dumps(head, indent=1)[:-2] + ',\n "providers": {']
    rows = [f" {json.dumps(p)}: {json.dumps(m, separators=(',', ':'))}" for p, m in doc["providers"].items()]
    return "\n".join(lines + [",\n".join(rows), "}}"]) + "\n"


if __name__ == "__main__":
    raise SystemExit(main(limits_file, OUT, __doc__, one_line_a_provider))
