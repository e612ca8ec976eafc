"""Compaction engine: every strategy is a Plan you can look at before `apply` turns it into a new Session.

plan.py (rows, apply), micro.py (snip, clear, clear_tool_uses), split.py (find_split_point), summary.py (prompts,
request, answer parser), provider.py (the summary call's protocol), pipeline.py (maybe_compact, circuit breaker),
pairing.py (orphan checker), diff.py (structural diff, text rendering), replay.py (what-if over a recorded session);
steps.py and survival.py serve the app's workbench (step stack; what survives a Claude Code summary).
"""

from __future__ import annotations

import importlib
from typing import Any

# Each name from the module that holds it, imported when first asked for: `import inspector.core.compaction.pairing`
# (every loader and the follower need it) then does not import the planners, the diff and the summary machinery.
_WHERE = {
    "CircuitBreaker": "inspector.core.compaction.pipeline",
    "ClearSettings": "inspector.core.compaction.micro",
    "CompactionOutcome": "inspector.core.compaction.pipeline",
    "CompactionPolicy": "inspector.core.compaction.pipeline",
    "Compactor": "inspector.core.compaction.pipeline",
    "ContextEditSettings": "inspector.core.compaction.micro",
    "Diff": "inspector.core.compaction.diff",
    "Estimates": "inspector.core.compaction.estimates",
    "Orphan": "inspector.core.compaction.pairing",
    "PendingSummary": "inspector.core.compaction.summary",
    "Plan": "inspector.core.compaction.plan",
    "Row": "inspector.core.compaction.plan",
    "STRATEGIES": "inspector.core.compaction.pipeline",
    "SnipSettings": "inspector.core.compaction.micro",
    "SummaryError": "inspector.core.compaction.provider",
    "SummaryProvider": "inspector.core.compaction.provider",
    "SummarySettings": "inspector.core.compaction.summary",
    "WhatIf": "inspector.core.compaction.replay",
    "apply": "inspector.core.compaction.apply",
    "complete_summary": "inspector.core.compaction.summary",
    "diff_sessions": "inspector.core.compaction.diff",
    "find_orphans": "inspector.core.compaction.pairing",
    "find_split_point": "inspector.core.compaction.split",
    "inert": "inspector.core.compaction.diff",
    "maybe_compact": "inspector.core.compaction.pipeline",
    "parse_summary_answer": "inspector.core.compaction.summary",
    "plan_clear": "inspector.core.compaction.micro",
    "plan_clear_tool_uses": "inspector.core.compaction.micro",
    "plan_snip": "inspector.core.compaction.micro",
    "plan_strategy": "inspector.core.compaction.pipeline",
    "plan_summary": "inspector.core.compaction.summary",
    "render_diff": "inspector.core.compaction.diff",
    "render_plan": "inspector.core.compaction.diff",
    "render_what_if": "inspector.core.compaction.replay",
    "replay": "inspector.core.compaction.replay",
    "run_summary": "inspector.core.compaction.summary",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "STRATEGIES", "CircuitBreaker", "ClearSettings", "CompactionOutcome", "CompactionPolicy", "Compactor",
    "ContextEditSettings", "Diff", "Estimates", "Orphan", "PendingSummary", "Plan", "Row", "SnipSettings",
    "SummaryError", "SummaryProvider", "SummarySettings", "WhatIf", "apply", "complete_summary", "diff_sessions",
    "find_orphans", "find_split_point", "inert", "maybe_compact", "parse_summary_answer", "plan_clear",
    "plan_clear_tool_uses", "plan_snip", "plan_strategy", "plan_summary", "render_diff", "render_plan",
    "render_what_if", "replay", "run_summary",
]
