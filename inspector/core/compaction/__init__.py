"""Compaction engine: every strategy is a Plan you can look at before `apply` turns it into a new Session.

plan.py (rows, apply), micro.py (snip, clear, clear_tool_uses), split.py (find_split_point), summary.py (prompts,
request, answer parser), provider.py (the summary call's protocol), pipeline.py (maybe_compact, circuit breaker),
diff.py (structural diff, text rendering), replay.py (what-if over a recorded session);
steps.py and survival.py serve the app's workbench (step stack; what survives a Claude Code summary). The pairing
rule every plan keeps is `inspector.core.pairing` (the loaders and the follower check it too).
"""

from inspector.core.compaction.diff import Diff, diff_sessions, inert, render_diff, render_plan
from inspector.core.compaction.micro import (ClearSettings, ContextEditSettings, SnipSettings, plan_clear,
                                             plan_clear_tool_uses, plan_snip)
from inspector.core.pairing import Orphan, find_orphans
from inspector.core.compaction.pipeline import (STRATEGIES, CircuitBreaker, CompactionOutcome, CompactionPolicy,
                                                Compactor, maybe_compact, plan_strategy)
from inspector.core.compaction.apply import apply
from inspector.core.compaction.estimates import Estimates
from inspector.core.compaction.plan import Plan, Row
from inspector.core.compaction.provider import SummaryError, SummaryProvider
from inspector.core.compaction.replay import WhatIf, render_what_if, replay
from inspector.core.compaction.split import find_split_point
from inspector.core.compaction.summary import (PendingSummary, SummarySettings, complete_summary,
                                               parse_summary_answer, plan_summary, run_summary)

__all__ = [
    "STRATEGIES", "CircuitBreaker", "ClearSettings", "CompactionOutcome", "CompactionPolicy", "Compactor",
    "ContextEditSettings", "Diff", "Estimates", "Orphan", "PendingSummary", "Plan", "Row", "SnipSettings",
    "SummaryError", "SummaryProvider", "SummarySettings", "WhatIf", "apply", "complete_summary", "diff_sessions",
    "find_orphans", "find_split_point", "inert", "maybe_compact", "parse_summary_answer", "plan_clear",
    "plan_clear_tool_uses", "plan_snip", "plan_strategy", "plan_summary", "render_diff", "render_plan",
    "render_what_if", "replay", "run_summary",
]
