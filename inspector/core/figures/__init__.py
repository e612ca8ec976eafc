"""The figures of a session state, computed in one place for every view and command.

model.py (Settings, Figures, Links, RequestPoint, forecast), compute.py (compute, extend, links, the window
and the categories in drawing order), steps.py (a compaction plan's figures: the state after it, its rows),
preview.py (the microcompaction the bar previews), provisional.py (follow mode's quick figures before the exact ones). The token arithmetic
itself is `inspector.core.tokens` (accounting) and `inspector.core.compacted` (compactions no usage has seen); the
window as `report` states it is `inspector.core.window`.
"""

from inspector.core.figures.compute import compute, extend, links, ordered, rank, settings_window
from inspector.core.figures.model import Figures, Forecast, Links, PromptInfo, RequestPoint, Settings, forecast
from inspector.core.figures.provisional import provisional
from inspector.core.figures.preview import applied, micro_saving, plan_estimates
from inspector.core.figures.steps import PlanFigures, StepRows, after, plan_figures
from inspector.core.window import Window, window_figures

__all__ = [
    "Figures", "Forecast", "Links", "PlanFigures", "PromptInfo", "RequestPoint", "Settings", "StepRows", "Window",
    "after", "applied", "compute", "extend", "forecast", "links", "micro_saving", "ordered", "plan_estimates",
    "plan_figures", "provisional", "rank", "settings_window", "window_figures",
]
