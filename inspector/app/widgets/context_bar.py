"""The context bar: the window as stacked categories, free and reserved space, and the policy's thresholds."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from inspector.app.text import human, visible
from inspector.core import categories as cat
from inspector.core.figures import Figures

PALETTE = ["#5f87d7", "#af87d7", "#5fd75f", "#5fd7d7", "#87afaf", "#d7d75f", "#ffaf5f", "#d78700", "#d75f5f",
           "#d7875f", "#ff87af", "#87d7af", "#afaf87", "#8787af"]
KNOWN = {cat.SYSTEM_TOOLS: "#5f87d7", cat.SUMMARIZED: "#af5f87", cat.UNRECORDED: "#6c6c6c", cat.MEMORY: "#af87d7", cat.USER_PROMPTS: "#5fd75f",
         cat.ASSISTANT_TEXT: "#5fd7d7", cat.THINKING: "#87afaf", cat.TOOL_CALLS: "#d7d75f",
         cat.COMPACTION_SUMMARY: "#ff87af", cat.MEDIA: "#87d7af", cat.INJECTED: "#8a8a8a", cat.PROVISIONAL: "#6c6c6c"}
FREE = Style(color="#3a3a3a")
RESERVED = Style(color="#875f5f")
MARKS = (("warning", ("warning", "warn", "w"), "yellow"),
         ("autocompact", ("auto-compact", "auto", "a"), "bold #ff8700"),
         ("blocking", ("blocking", "block", "b"), "red"))


def colour(key: str, n: int) -> str:
    """A stable colour per category key: the known ones their own, tool results and the rest from a palette."""
    known = KNOWN.get(key)
    if known is not None:
        return known
    return PALETTE[(6 + n) % len(PALETTE)] if key.startswith(cat.TOOL_RESULTS) else PALETTE[n % len(PALETTE)]


class ContextBar(Widget):
    """`stale` is set while new settings are being computed: the figures shown are the previous ones."""

    DEFAULT_CSS = """
    ContextBar {
        height: auto; min-height: 4; padding: 0 1; background: $panel; text-wrap: nowrap; text-overflow: ellipsis;
    }
    """

    stale: reactive[bool] = reactive(False)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.figures: Figures | None = None

    def show(self, figures: Figures) -> None:
        self.figures = figures
        self.stale = False
        self.refresh(layout=True)

    def get_content_height(self, container, viewport, width: int) -> int:  # type: ignore[override]
        return self.render().plain.count("\n") + 1

    def render(self) -> Text:
        f = self.figures
        if f is None:
            return Text("token figures: computing…", style="dim")
        width = max(20, self.content_region.width or self.size.width or 100)
        w = f.window
        label = "measured" if w.used_measured else "estimated"
        head = Text()
        if self.stale:
            head.append("recomputing… ", style="bold reverse")
        elif f.provisional:
            head.append("provisional ", style="italic")
        head.append(f"used {w.used:,} of {w.window:,} ({w.percent:.1f}%) ", style="bold")
        head.append(label, style="green" if w.used_measured else "yellow")
        auto = w.thresholds.get("autocompact")
        if auto is not None and auto > w.used:
            head.append(f" · free {w.free:,} ")
            head.append(label, style="green" if w.used_measured else "yellow")
            head.append(f" before auto-compact at {auto:,}")
        elif auto is not None:
            head.append(f" · {w.used - auto:,} past auto-compact at {auto:,}", style="bold red")
        else:
            head.append(f" · free {max(0, w.free):,}")
        head.append(f" · policy {w.policy} · ")
        head.append(visible(w.model or "unknown model"), style="dim")
        for warning in w.warnings:  # a window smaller than a measured context, an override ignored
            head.append(f" · ⚠ {visible(warning)}", style="bold red")
        out = Text("\n").join([head, self._bar(f, width), self._marks(f, width), self._legend(f, width)])
        out.no_wrap, out.overflow = True, "ellipsis"
        return out

    def _bar(self, f: Figures, width: int) -> Text:
        window = max(1, f.window.window)
        text, cum, drawn = Text(), 0, 0
        for n, (key, tokens) in enumerate(f.categories):
            cum += tokens
            end = min(width, round(cum / window * width))
            text.append("█" * (end - drawn), style=colour(key, n))
            drawn = max(drawn, end)
        reserve_at = round((window - f.window.reserve) / window * width) if f.window.reserve else width
        text.append("░" * max(0, reserve_at - drawn), style=FREE)
        text.append("▒" * max(0, width - max(drawn, reserve_at)), style=RESERVED)
        return text

    def _marks(self, f: Figures, width: int) -> Text:
        """A ▲ under each threshold, each labelled as far as the room before the next one allows."""
        window = max(1, f.window.window)
        marks = sorted((min(width - 1, round(at / window * width)), label, style)
                       for key, label, style in MARKS if (at := f.window.thresholds.get(key)) is not None)
        text, x = Text(), 0
        if f.micro_saving is not None:
            s = f.settings
            how = f"keep {s.keep_recent}" if s.micro_strategy == "clear" else f"{s.max_chars} chars"
            note = f"microcompact ({s.micro_strategy}, {how}) frees ~{human(f.micro_saving)}"
            if not marks or len(note) < marks[0][0] - 1:
                text.append(note, style="#d7875f")
                x = len(note)
        for n, (at, labels, style) in enumerate(marks):
            if at < x:
                continue
            room = (marks[n + 1][0] if n + 1 < len(marks) else width) - at - 1
            label = next((name for name in labels if len(name) < room), "")  # the longest that fits
            before = "" if label else next((name for name in labels if len(name) < at - x), "")
            text.append(" " * (at - x - len(before)))  # no room after the mark (the window's end): label before it
            text.append(before + "▲" + label, style=style)
            x = at + 1 + len(label)
        return text

    def _legend(self, f: Figures, width: int) -> Text:
        # names hold tool names: session text. A negative category (usage measured below the prefix plus the
        # estimates: the estimate runs high) has no room in the bar, but stays in the legend so the figures add up.
        parts = [(colour(key, n), f"{visible(cat.label(key))} {human(t)}{_prefix_parts(f, key)}")
                 for n, (key, t) in enumerate(f.categories) if t]
        parts.append(("#3a3a3a", f"free {human(f.window.free)}"))
        if f.window.reserve:
            parts.append(("#875f5f", f"reserved {human(f.window.reserved)}"))
        text, line = Text(), 0
        for c, label in parts:
            piece = len(label) + 3
            if line and line + piece > width:
                text.append("\n")
                line = 0
            text.append("■ ", style=c)
            text.append(label + " ", style="dim" if not f.categories_measured else "")
            line += piece
        return text


def _prefix_parts(f: Figures, key: str) -> str:
    """The prefix by name after its category, its three largest parts (core: `Figures.prefix_sections`)."""
    if key != cat.SYSTEM_TOOLS or len(f.prefix_sections) < 2:
        return ""
    top = sorted(f.prefix_sections, key=lambda s: -s.tokens)[:3]
    rest = len(f.prefix_sections) - len(top)
    return " (" + ", ".join(f"{visible(s.name)} {human(s.tokens)}" for s in top) + (f", +{rest}" if rest else "") + ")"
