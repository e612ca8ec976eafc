"""The timeline: measured context per request as a column chart, the policy's thresholds as lines, compactions as
markers, and a forecast of when the next auto-compact fires at the recent growth rate."""

from __future__ import annotations

import statistics

from rich.text import Text
from textual.binding import Binding
from textual.reactive import reactive
from textual.widget import Widget

from inspector.core.figures import Figures, forecast
from inspector.app.text import counted, human, visible

EIGHTHS = " ▁▂▃▄▅▆▇█"
LINES = (("blocking", "red"), ("autocompact", "#ff8700"), ("warning", "yellow"))


class Timeline(Widget, can_focus=True):
    DEFAULT_CSS = """
    Timeline { height: 1fr; padding: 0 1; background: $surface; text-wrap: nowrap; text-overflow: ellipsis; }
    """
    BINDINGS = [Binding("z", "zoom", "Zoom", id="timeline.zoom")]

    zoomed: reactive[bool] = reactive(False)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.figures: Figures | None = None

    def action_zoom(self) -> None:
        """Toggle the y axis between the whole window (thresholds in view) and the session's own range."""
        self.zoomed = not self.zoomed

    def show(self, figures: Figures) -> None:
        self.figures = figures
        self.refresh()

    def render(self) -> Text:
        f = self.figures
        if f is None:
            return Text("no session loaded", style="dim")
        points = f.requests
        if not points:
            return Text("This session records no usage, so there is no measured context to draw.\n"
                        "The list and the context bar show estimates.", style="dim")
        room = self.content_region.width or 100
        width = max(20, room - 8)
        # the lines under the chart wrap where they do not fit (a narrow terminal): the chart gives up the rows
        tail = [line for text in (self._legend(f), self._forecast(f), self._check(f))
                for line in text.wrap(self.app.console, room, overflow="fold", no_wrap=False)]
        height = max(4, (self.content_region.height or 24) - 3 - len(tail))
        peak = max(p.measured for p in points)
        top = max(1, int(peak * 1.1)) if self.zoomed else max(f.window.window, peak)
        cols = self._columns(f, width)
        marks = self._compaction_columns(f, width)
        grid: list[Text] = []
        for row in range(height, 0, -1):
            line = Text()
            lo, hi = (row - 1) / height * top, row / height * top
            label = human(hi) if row in (height, (height + 1) // 2) else ""
            line.append(f"{label:>6} ┤" if label else "       │", style="dim")
            for x in range(width):
                v = cols[x]
                if v is not None and v >= hi:
                    line.append("█", style="#5f87d7")
                elif v is not None and v > lo:
                    line.append(EIGHTHS[max(1, int((v - lo) / (hi - lo) * 8))], style="#5f87d7")
                elif x in marks:
                    line.append("┃", style="magenta")
                else:
                    line.append(self._threshold(f, lo, hi))
            grid.append(line)
        axis = Text("       └", style="dim")
        breaks = self._break_columns(f, width)
        for x in range(width):
            axis.append("▲", style="yellow") if x in breaks else axis.append("─", style="dim")
        first, last = (visible(p.timestamp if isinstance(p.timestamp, str) else "")  # session text, maybe no str
                       for p in (points[0], points[-1]))
        span = Text(f"        request 1 {first[:16].replace('T', ' ')}".ljust(width - 10) +
                    f"request {len(points)} {last[11:16]}".rjust(10), style="dim")
        return Text("\n").join([*grid, axis, span, *tail])

    def _columns(self, f: Figures, width: int) -> list[int | None]:
        """Each column's value: the largest measured context among the requests it covers."""
        pts, n = f.requests, len(f.requests)
        cols: list[int | None] = [None] * width
        for k, p in enumerate(pts):
            a, b = k * width // n, max(k * width // n + 1, (k + 1) * width // n)
            for x in range(a, min(b, width)):
                cols[x] = max(cols[x] or 0, p.measured)
        return cols

    def _compaction_columns(self, f: Figures, width: int) -> set[int]:
        pts, n, out = f.requests, len(f.requests), set()
        for c in f.session.compactions:
            k = next((k for k, p in enumerate(pts) if p.message_index >= c.index), n)
            out.add(min(width - 1, k * width // n))
        return out

    def _break_columns(self, f: Figures, width: int) -> set[int]:
        """The columns of the requests that broke the prompt cache (core: `Figures.cache_breaks`)."""
        pts, n, out = f.requests, len(f.requests), set()
        for b in f.cache_breaks:
            k = next((k for k, p in enumerate(pts) if p.message_index >= b.message_index), n - 1)
            out.add(min(width - 1, k * width // n))
        return out

    def _threshold(self, f: Figures, lo: float, hi: float) -> Text | str:
        for key, style in LINES:
            t = f.window.thresholds.get(key)
            if t is not None and lo < t <= hi:
                return Text("╌", style=style)
        return " "

    def _legend(self, f: Figures) -> Text:
        text = Text("  ")
        text.append("█ measured context per request  " if self.content_region.width > 130 else "█ measured  ",
                    style="#5f87d7")
        for key, style in LINES[::-1]:
            t = f.window.thresholds.get(key)
            if t is not None:
                text.append(f"╌ {key} {human(t)}  ", style=style)
        text.append(f"┃ compaction ({len(f.session.compactions)})  ", style="magenta")
        if f.cache_breaks:
            causes = sorted({b.cause for b in f.cache_breaks})
            text.append(f"▲ cache break ({len(f.cache_breaks)}: {', '.join(causes)})  ", style="yellow")
        text.append("z: window" if self.zoomed else "z: zoom", style="dim")
        return text

    def _check(self, f: Figures) -> Text:
        """How far the figure compaction decisions use (last usage + estimates since) was from what each request
        then measured: the reason to trust, or not, the forecast and the bar between requests."""
        errors = sorted(abs(p.predicted - p.measured) / p.measured * 100
                        for p in f.requests if p.predicted is not None and p.measured)
        text = Text("  prediction check: ", style="bold")
        if not errors:
            return text.append("no request to check against", style="dim")
        return text.append(f"last usage + estimates since: median error {statistics.median(errors):.2f}%, worst "
                           f"{errors[-1]:.1f}%, {counted(len(errors), 'request')} ({f.settings.estimator})")

    def _forecast(self, f: Figures) -> Text:
        auto = f.window.thresholds.get("autocompact")
        fc = forecast(f.requests, auto)
        text = Text("  forecast: ", style="bold")
        if fc.over < 2:
            return text.append("too few requests since the last compaction to estimate a growth rate")
        text.append(f"+{human(fc.rate)} tokens/request over the last {counted(fc.over, 'request')}; ")
        if auto is None:
            return text.append(f"the {f.window.policy} policy sets no auto-compact threshold")
        if fc.requests_left is None:
            return text.append("not growing, so no auto-compact is due")
        if fc.requests_left == 0:
            return text.append("already past the auto-compact threshold", style="bold red")
        text.append(f"auto-compact in about {counted(fc.requests_left, 'request')}", style="bold #ff8700")
        if fc.eta:
            text.append(f", around {fc.eta:%H:%M}")
        return text
