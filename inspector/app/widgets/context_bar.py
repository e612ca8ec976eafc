"""The context bar: the window as stacked categories, free and reserved space, and the policy's thresholds."""

from __future__ import annotations

from functools import lru_cache
from itertools import product

from rich.style import Style
from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from inspector.app.text import Part, fit, human, visible
from inspector.core import categories as cat
from inspector.core.figures import Figures

PALETTE = ["#5f87d7", "#af87d7", "#5fd75f", "#5fd7d7", "#87afaf", "#d7d75f", "#ffaf5f", "#d78700", "#d75f5f",
           "#d7875f", "#ff87af", "#87d7af", "#afaf87", "#8787af"]
KNOWN = {cat.SYSTEM_TOOLS: "#5f87d7", cat.SUMMARIZED: "#af5f87", cat.UNRECORDED: "#6c6c6c", cat.MEMORY: "#af87d7", cat.USER_PROMPTS: "#5fd75f",
         cat.ASSISTANT_TEXT: "#5fd7d7", cat.THINKING: "#87afaf", cat.TOOL_CALLS: "#d7d75f",
         cat.COMPACTION_SUMMARY: "#ff87af", cat.MEDIA: "#87d7af", cat.INJECTED: "#8a8a8a", cat.PROVISIONAL: "#6c6c6c",
         cat.NOT_READ: "#4e4e4e"}
FREE = Style(color="#3a3a3a")
RESERVED = Style(color="#875f5f")
MARKS = (("warning", ("warning", "warn", "w"), "yellow"),
         ("autocompact", ("auto-compact", "auto", "a"), "bold #ff8700"),
         ("blocking", ("blocking", "block", "b"), "red"))


@lru_cache(maxsize=64)  # the marks stay where they are from one live append's bar to the next
def place_labels(positions: tuple[int, ...], labels: tuple[tuple[str, ...], ...], start: int,
                 width: int) -> tuple[tuple[str, str], ...]:
    """For marks at `positions` (ascending, distinct; each with its label's forms, longest first) on a line of
    `width` cells whose first `start` are taken: each mark's label and its side ("right" of the ▲ or "left"), so
    that no two labels touch or run into a mark: as many marks labelled as possible, the auto-compact mark's (the
    middle of three) longest, then the most text. Three marks have few layouts: all are tried."""
    options = [[("", "")] + [(side, name) for name in forms for side in ("right", "left")] for forms in labels]
    best: tuple | None = None
    chosen: list[tuple[str, str]] = []
    for layout in product(*options):
        x, gap, ok = start, False, True  # the first free cell; whether what ends there needs a space after it
        for at, (side, name) in zip(positions, layout):
            begin = at - len(name) if side == "left" else at
            end = at + 1 + (len(name) if side == "right" else 0)
            # a label is kept apart from the item before it, two labels facing each other by three spaces (one
            # would read as one label); two bare marks may touch
            apart = 3 if gap and side == "left" and name else int(gap or (side == "left" and bool(name) and x > start))
            if begin < x + apart or end > width:
                ok = False
                break
            x, gap = end, side == "right" and bool(name)
        if not ok:
            continue
        main = layout[1][1] if len(layout) == 3 else ""
        score = (sum(1 for _, name in layout if name), len(main), sum(len(name) for _, name in layout),
                 sum(side == "right" for side, _ in layout))
        if best is None or score > best:
            best, chosen = score, list(layout)
    return tuple(chosen or [("", "")] * len(positions))


def colour(key: str, n: int) -> str:
    """A stable colour per category key: the known ones their own, tool results and the rest from a palette."""
    known = KNOWN.get(key)
    if known is not None:
        return known
    return PALETTE[(6 + n) % len(PALETTE)] if key.startswith(cat.TOOL_RESULTS) else PALETTE[n % len(PALETTE)]


COMPUTING = "token figures: computing…"


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
        self.placeholder = COMPUTING  # what it says before it has figures
        self.legend_lines: int | None = None  # the most lines the legend takes (None: as many as it needs)
        self._drawn: tuple[Figures | None, tuple, Text] | None = None  # the last render, by what it was made from

    def show(self, figures: Figures) -> None:
        """Draw `figures`; a layout of the screen only when the bar's height changes (each one redraws the whole
        screen: a live append's frame twice the cost)."""
        lines = self.get_content_height(None, None, 0) if self.figures is not None else None
        notes = figures.window.notes
        if self.figures is None or self.figures.window.notes != notes:  # where the lines came from, on hover
            self.tooltip = Text("\n".join(notes)) if notes else None
        self.figures = figures
        self.stale = False
        self.refresh(layout=lines != self.get_content_height(None, None, 0))

    def get_content_height(self, container, viewport, width: int) -> int:  # type: ignore[override]
        return self.render().plain.count("\n") + 1

    def render(self) -> Text:
        """The bar (made once per figures, width and state: its height is asked for too)."""
        f = self.figures
        if f is None:
            return Text(self.placeholder, style="dim")
        width = max(20, self.content_region.width or self.size.width or 100)
        state = (width, self.stale, self.legend_lines)
        if self._drawn is not None and self._drawn[0] is f and self._drawn[1] == state:
            return self._drawn[2]
        head = fit(self._head(f), width, seps=(" · ",))
        out = Text("\n").join([head, self._bar(f, width), self._marks(f, width), self._legend(f, width)])
        out.no_wrap, out.overflow = True, "ellipsis"
        self._drawn = f, state, out
        return out

    def _head(self, f: Figures) -> list[Part]:
        """The figures line as parts for `fit`: the context used first and always, then what is free before the
        auto-compact threshold, the warnings, the policy and the model, each shorter or left out as room runs
        short."""
        w = f.window
        label = "measured" if w.used_measured else "estimated"
        basis = Text(label, style="green" if w.used_measured else "yellow")
        prefix = Text()
        if self.stale:
            prefix.append("recomputing… ", style="bold reverse")
        elif f.provisional:
            prefix.append("provisional ", style="italic")
        elif f.preview:
            prefix.append(f"preview of the last {len(f.session.messages):,} messages: ", style="italic")
        used = [Text.assemble(prefix, (f"used {w.used:,} of {w.window:,} ({w.percent:.1f}%) ", "bold"), basis),
                Text.assemble(prefix, (f"used {human(w.used)} of {human(w.window)} ({w.percent:.1f}%) ", "bold"),
                              basis)]
        auto = w.thresholds.get("autocompact")
        if auto is not None and auto > w.used:
            free: tuple[str | Text, ...] = (
                Text.assemble(f"free {w.free:,} ", basis, f" before auto-compact at {auto:,}"),
                f"free {w.free:,} before auto-compact at {auto:,}", f"free {w.free:,} before auto-compact",
                f"free {w.free:,}")
            ranks: tuple[int, ...] = (6, 5, 3, 1)  # the number stays longest, the policy's name outlasts "at N"
        elif auto is not None:
            free = tuple(Text(t, style="bold red") for t in (f"{w.used - auto:,} past auto-compact at {auto:,}",
                                                              f"{w.used - auto:,} past auto-compact"))
            ranks = (5, 1)
        else:
            free, ranks = (f"free {max(0, w.free):,}",), (1,)
        parts: list[Part] = [(tuple(used), 0), (free, ranks)]
        # a window smaller than a measured context, an override ignored
        parts += [(Text(f"⚠ {visible(warning)}", style="bold red"), 2) for warning in w.warnings]
        parts += [(f"policy {w.policy}", 2), (Text(visible(w.model or "unknown model"), style="dim"), 4)]
        return parts

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
        """A ▲ under each threshold, labelled by `place_labels`; the microcompaction preview before them when it fits
        (its saving, or why it frees nothing: the core's note)."""
        window = max(1, f.window.window)
        marks: dict[int, tuple[tuple[str, ...], str]] = {}
        for key, labels, style in MARKS:  # two thresholds in one column: the later (auto-compact over warning) wins
            at = f.window.thresholds.get(key)
            if at is not None:
                marks[min(width - 1, round(at / window * width))] = (labels, style)
        text, start = Text(), 0
        if f.micro_saving is not None:
            s = f.settings
            how = f"keep {s.keep_recent}" if s.micro_strategy == "clear" else f"{s.max_chars} chars"
            what = f"frees ~{human(f.micro_saving)}" if f.micro_saving or not f.micro_note else \
                f"frees nothing: {visible(f.micro_note)}"
            for note in (f"microcompact ({s.micro_strategy}, {how}) {what}", f"microcompact {what}"):
                if not marks or len(note) < min(marks) - 1:
                    text.append(note, style="#d7875f")
                    start = len(note) + 1
                    break
        positions = tuple(sorted(marks))
        x = len(text)
        for at, (side, label) in zip(positions, place_labels(positions, tuple(marks[p][0] for p in positions), start,
                                                             width)):
            left, right = (label, "") if side == "left" else ("", label)
            text.append(" " * (at - len(left) - x))
            text.append(left + "▲" + right, style=marks[at][1])
            x = at + 1 + len(right)
        return text

    def _legend(self, f: Figures, width: int) -> Text:
        # names hold tool names: session text. A negative category (usage measured below the prefix plus the
        # estimates: the estimate runs high) has no room in the bar, but stays in the legend so the figures add up.
        parts = [(colour(key, n), key, t) for n, (key, t) in enumerate(f.categories) if t]
        folded = self.legend_lines is not None
        if not folded:  # free and reserved are on the figures line: the first to go when the legend must fold
            parts.append(("#3a3a3a", cat.FREE, f.window.free))
            if f.window.reserve:
                parts.append(("#875f5f", cat.RESERVED, f.window.reserved))
        entries = [(c, f"{_legend_label(key, folded)} {human(t)}{'' if folded else _prefix_parts(f, key)}", t)
                   for c, key, t in parts]
        text = Text()
        for n, line in enumerate(legend_layout(entries, width, self.legend_lines)):
            if n:
                text.append("\n")
            for c, label in line:
                if c is None:
                    text.append(label, style="dim")
                    continue
                text.append("■ ", style=c)
                text.append(label + " ", style="dim" if not f.categories_measured else "")
        return text


def _legend_label(key: str, short: bool) -> str:
    """A category's legend label; `short`: without its parenthesis, "tool results: Read" as "Read results"."""
    if key in (cat.FREE, cat.RESERVED):
        return "free" if key == cat.FREE else "reserved"  # (the figures line says what is reserved)
    label = visible(cat.label(key))
    if not short:
        return label
    label = label.split(" (")[0]
    return f"{label.removeprefix('tool results: ')} results" if label.startswith("tool results: ") else label


def legend_layout(parts: list[tuple[str, str, int]], width: int, lines: int | None) -> list[list[tuple]]:
    """The legend's entries ((colour, text, tokens), in drawing order) on lines of `width` cells: all of them,
    or within `lines` lines the largest that fit, still in drawing order, and "+N more" for the rest."""
    entries = [(c, text) for c, text, _ in parts]

    def laid(shown: list[tuple[str | None, str]]) -> list[list[tuple]]:
        out: list[list[tuple]] = [[]]
        used = 0
        for c, label in shown:
            piece = len(label) + (3 if c is not None else 0)
            if out[-1] and used + piece > width:
                out.append([])
                used = 0
            out[-1].append((c, label))
            used += piece
        return out

    if lines is None or len(laid(entries)) <= lines:
        return laid(entries)
    by_size = sorted(range(len(parts)), key=lambda i: -abs(parts[i][2]))
    for keep in range(len(entries) - 1, -1, -1):
        chosen = sorted(by_size[:keep])
        shown = [entries[i] for i in chosen] + [(None, f"+{len(entries) - keep} more")]
        if len(laid(shown)) <= lines:
            return laid(shown)
    return laid([(None, f"+{len(entries)} more")])


def _prefix_parts(f: Figures, key: str) -> str:
    """The prefix by name after its category, its three largest parts (core: `Figures.prefix_sections`)."""
    if key != cat.SYSTEM_TOOLS or len(f.prefix_sections) < 2:
        return ""
    top = sorted(f.prefix_sections, key=lambda s: -s.tokens)[:3]
    rest = len(f.prefix_sections) - len(top)
    return " (" + ", ".join(f"{visible(s.name)} {human(s.tokens)}" for s in top) + (f", +{rest}" if rest else "") + ")"
