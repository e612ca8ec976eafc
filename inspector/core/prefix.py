"""The prefix by name: what the system prompt and tools part of the context (`Accounting.prefix`, measured from the
first request's usage where there is one) is made of, in parts that sum to it.

- Where the session records the prefix (Claude Code 2.1.332's request shapes, captures and Messages requests, the
  Cline SDK, Kimi, Codex's instructions), its parts are what was sent: the system prompt, each built-in tool, each
  MCP server's tools; each part's share is its estimated size, scaled so the parts sum to the prefix.
- Where it does not (Claude Code before 2.1.332), the parts are estimated: each built-in tool the session used,
  at the size Piebald-AI/claude-code-system-prompts publishes for its description (`data/claude_code_prompts.json`,
  with its Claude Code version; MIT), MCP tools by server (`mcp__<server>__<tool>` names seen, each at the median
  published tool size), the CLAUDE.md and memory files Claude Code would load (re-read from disk when the session's
  directory exists here: they may have changed since), the skill tool when skills were used, and the system prompt
  itself as what is left; scaled down together when they exceed the prefix.

`source` is "measured" only for a part that is the whole measured prefix alone; a share is "estimated". The sum is
exact: `sum(tokens) == Accounting.prefix` (`report --json`: `prefix.sections` sums to `totals.prefix`).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from msgspec import Struct

from inspector.core import categories as cat
from inspector.core.model import Session
from inspector.core.pricing import shares

if TYPE_CHECKING:
    from inspector.core.accounting import Accounting

SIZES = Path(__file__).with_name("data") / "claude_code_prompts.json"
MCP_PREFIX = "mcp__"
SYSTEM = "system prompt"


class PrefixSection(Struct):
    """One named part of the prefix. `recorded`: its text is in the session (not only its name)."""

    name: str
    tokens: int
    source: str  # "measured" or "estimated"
    recorded: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "tokens": self.tokens, "source": self.source, "recorded": self.recorded}


@lru_cache(maxsize=1)
def published_sizes() -> dict[str, Any]:
    """The published tool sizes and where they come from (`data/claude_code_prompts.json`)."""
    return json.loads(SIZES.read_text(encoding="utf-8"))


def prefix_sections(session: Session, acc: Accounting) -> list[PrefixSection]:
    """The prefix's parts, summing to `acc.prefix` (none when it is 0)."""
    total = acc.prefix
    if total <= 0:
        return []
    key = cat.prefix_key(session)
    if key != cat.SYSTEM_TOOLS:  # a compaction request: its prefix is the conversation it summarizes
        return [PrefixSection(cat.label(key), total, "measured" if acc.prefix_measured else "estimated")]
    weights, recorded = _recorded(session, acc)
    if not weights and session.format == "claude-code":
        weights = _published(session, acc)
    if not weights:
        return [PrefixSection("system prompt and tools", total, "measured" if acc.prefix_measured else "estimated",
                              recorded=bool(session.system or session.tools))]
    if len(weights) == 1:
        name = next(iter(weights))
        return [PrefixSection(name, total, "measured" if acc.prefix_measured else "estimated", recorded)]
    _, split = shares({k: max(w, 0.0) + 1e-9 for k, w in weights.items()}, total)
    return [PrefixSection(name, tokens, "estimated", recorded) for name, tokens in split.items()]


def _recorded(session: Session, acc: Accounting) -> tuple[dict[str, float], bool]:
    """Parts of a recorded prefix, weighed by the estimate of their text."""
    from inspector.core.estimators import get_estimator

    est = get_estimator("script")
    weights: dict[str, float] = {}
    log = session.sent
    shape = None
    if log is not None:  # the prompt package is imported where it is needed: 30 ms of a report
        from inspector.core.prompt.session_view import latest

        request = latest(session)
        shape = log.shape(request) if request is not None else None
    if shape is not None:
        system = "\n\n".join(str(b.get("text", "")) for b in shape.system if isinstance(b, dict))
        weights[SYSTEM] = float(est.text(system))
        for tool in shape.tools:
            if isinstance(tool, dict):
                _add_tool(weights, str(tool.get("name", "?")), float(est.text(json.dumps(tool, ensure_ascii=False))))
        return weights, True
    if session.system:
        weights["instructions" if session.format == "codex" else SYSTEM] = float(est.text(session.system))
    for t in session.tools:
        size = est.text(json.dumps({"name": t.name, "description": t.description, "input_schema": t.input_schema},
                                   ensure_ascii=False))
        _add_tool(weights, t.name, float(size))
    return weights, bool(weights)


def _add_tool(weights: dict[str, float], name: str, size: float) -> None:
    from inspector.core.prompt.session_view import tool_group

    group = tool_group(name)
    key = f"tool: {name}" if group == "tools" else f"MCP server {group[4:]}"
    weights[key] = weights.get(key, 0.0) + size


def _published(session: Session, acc: Accounting) -> dict[str, float]:
    """An unrecorded Claude Code prefix split by published sizes: the tools used, MCP servers, memory files and
    skills; the system prompt is what is left (all scaled down when they exceed the prefix)."""
    sizes = published_sizes()["tools"]
    median = _median([v for v in sizes.values() if v])
    weights: dict[str, float] = {}
    used = {b.tool_name: None for m in session.messages for b in m.blocks if b.type == "tool_use"}  # in order
    for name in filter(None, used):
        if name.startswith(MCP_PREFIX) and "__" in name[len(MCP_PREFIX):]:
            key = f"MCP server {name[len(MCP_PREFIX):].split('__', 1)[0]}"
            weights[key] = weights.get(key, 0.0) + median
        elif name == "Skill":
            weights["skills"] = float(sizes.get("Skill", median))
        else:
            weights[f"tool: {name}"] = float(sizes.get(name, median))
    for title, tokens in _memory_files(session, acc):
        weights[f"memory: {title}"] = float(tokens)
    named = sum(weights.values())
    weights = {SYSTEM: float(max(0, acc.prefix - named)), **weights}
    return weights


def _median(values: list[int]) -> float:
    """statistics.median's (importing statistics, with fractions and decimal, took 3 ms of a report's start-up); 0
    for none."""
    data = sorted(values)
    n = len(data)
    if not n:
        return 0
    return data[n // 2] if n % 2 else (data[n // 2 - 1] + data[n // 2]) / 2


def _memory_files(session: Session, acc: Accounting) -> list[tuple[str, int]]:
    """The CLAUDE.md and memory files Claude Code would have loaded for the session's directory, re-read from disk
    (none when the directory is not here), with their estimated sizes (`acc` spares `session_prompt` an accounting
    of its own: seconds on a long session)."""
    if not session.cwd or not Path(session.cwd).is_dir():
        return []
    from inspector.core.prompt.session_view import session_prompt

    try:
        view = session_prompt(session, "script", accounting=acc)
    except (OSError, ValueError):
        return []
    return [(s.title, s.tokens) for s in view.sections if s.kind == "reconstructed" and s.tokens]


def prefix_dict(session: Session, acc: Accounting) -> dict[str, Any]:
    """The report's `prefix` key (docs/report-json.md)."""
    sections = prefix_sections(session, acc)
    return {"tokens": acc.prefix, "measured": acc.prefix_measured,
            "sections": [s.to_dict() for s in sections],
            "sizes": published_sizes()["source"] if any(not s.recorded for s in sections) and
            session.format == "claude-code" else None}
