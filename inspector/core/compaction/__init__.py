"""Compaction engine: every strategy is a Plan you can look at before `apply` turns it into a new Session.

plan.py (rows, apply), micro.py (snip, clear, clear_tool_uses), split.py (find_split_point), summary.py (prompts,
request, answer parser), provider.py (the summary call's protocol), pipeline.py (maybe_compact, circuit breaker),
diff.py (structural diff, text rendering), replay.py (what-if over a recorded session);
steps.py and survival.py serve the app's workbench (step stack; what survives a Claude Code summary). The pairing
rule every plan keeps is `inspector.core.pairing` (the loaders and the follower check it too).
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import Any

# each name's module, imported when the name is first read (PEP 562): `report` needs only replay.py, and importing
# every module here took 12 ms of its start-up
_MODULES = {
    "inspector.core.compaction.diff": ("Diff", "diff_sessions", "inert", "render_diff", "render_plan"),
    "inspector.core.compaction.micro": ("ClearSettings", "ContextEditSettings", "SnipSettings", "plan_clear",
                                        "plan_clear_tool_uses", "plan_snip"),
    "inspector.core.pairing": ("Orphan", "find_orphans"),
    "inspector.core.compaction.pipeline": ("STRATEGIES", "CircuitBreaker", "CompactionOutcome", "CompactionPolicy",
                                           "Compactor", "maybe_compact", "plan_strategy"),
    "inspector.core.compaction.apply": ("apply",),
    "inspector.core.compaction.estimates": ("Estimates",),
    "inspector.core.compaction.plan": ("Plan", "Row"),
    "inspector.core.compaction.provider": ("SummaryError", "SummaryProvider"),
    "inspector.core.compaction.replay": ("WhatIf", "render_what_if", "replay"),
    "inspector.core.compaction.split": ("find_split_point",),
    "inspector.core.compaction.summary": ("PendingSummary", "SummarySettings", "complete_summary",
                                          "parse_summary_answer", "plan_summary", "run_summary"),
}
_WHERE = {name: module for module, names in _MODULES.items() for name in names}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name]), name)
    globals()[name] = value
    return value


class _Package(ModuleType):
    """The package keeps the functions it exports under their module's names (`apply`, `replay`): importing the
    module `apply.py` sets the package's `apply` to the module, which the names imported up front used to undo."""

    def __setattr__(self, name: str, value: Any) -> None:
        if not (isinstance(value, ModuleType) and name in _WHERE):
            super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


__all__ = [
    "STRATEGIES", "CircuitBreaker", "ClearSettings", "CompactionOutcome", "CompactionPolicy", "Compactor",
    "ContextEditSettings", "Diff", "Estimates", "Orphan", "PendingSummary", "Plan", "Row", "SnipSettings",
    "SummaryError", "SummaryProvider", "SummarySettings", "WhatIf", "apply", "complete_summary", "diff_sessions",
    "find_orphans", "find_split_point", "inert", "maybe_compact", "parse_summary_answer", "plan_clear",
    "plan_clear_tool_uses", "plan_snip", "plan_strategy", "plan_summary", "render_diff", "render_plan",
    "render_what_if", "replay", "run_summary",
]
