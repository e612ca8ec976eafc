"""The figures of a session state, computed in one place for every view and command.

model.py (Settings, Figures, Window, Links, RequestPoint, forecast), compute.py (compute, extend, links, the window
and the categories in drawing order), steps.py (a compaction plan's figures: the state after it, its rows),
preview.py (the microcompaction the bar previews), provisional.py (follow mode's quick figures before the exact ones). The token arithmetic
itself is `inspector.core.tokens` (accounting) and `inspector.core.compacted` (compactions no usage has seen).
"""

from __future__ import annotations

import importlib
from typing import Any

# Each name from its module, imported when first asked for (the status line needs `compute.window_figures` alone).
_WHERE = {
    "Figures": "inspector.core.figures.model",
    "Forecast": "inspector.core.figures.model",
    "Links": "inspector.core.figures.model",
    "PlanFigures": "inspector.core.figures.steps",
    "PromptInfo": "inspector.core.figures.model",
    "RequestPoint": "inspector.core.figures.model",
    "Settings": "inspector.core.figures.model",
    "StepRows": "inspector.core.figures.steps",
    "Window": "inspector.core.figures.model",
    "after": "inspector.core.figures.steps",
    "applied": "inspector.core.figures.preview",
    "compute": "inspector.core.figures.compute",
    "extend": "inspector.core.figures.compute",
    "forecast": "inspector.core.figures.model",
    "links": "inspector.core.figures.compute",
    "micro_saving": "inspector.core.figures.preview",
    "ordered": "inspector.core.figures.compute",
    "plan_estimates": "inspector.core.figures.preview",
    "plan_figures": "inspector.core.figures.steps",
    "provisional": "inspector.core.figures.provisional",
    "rank": "inspector.core.figures.compute",
    "settings_window": "inspector.core.figures.compute",
    "window_figures": "inspector.core.figures.compute",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "Figures", "Forecast", "Links", "PlanFigures", "PromptInfo", "RequestPoint", "Settings", "StepRows", "Window",
    "after", "applied", "compute", "extend", "forecast", "links", "micro_saving", "ordered", "plan_estimates",
    "plan_figures", "provisional", "rank", "settings_window", "window_figures",
]
