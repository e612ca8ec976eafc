"""The message list: one row per message, drawn with Textual's Line API so 100,000 rows cost nothing to mount.

Scrolling, the cursor and the LRU cache of Strips (only visible rows are rendered) come from `CursorLines`. The
rows are a list of ints: a message index (>= 0) or a compaction separator (-1 - compaction number). Filtering and
sorting build a new row list; appending messages (live follow) extends it and refreshes only the new lines.
"""

from __future__ import annotations

from dataclasses import dataclass
from time import monotonic
from typing import Iterable

from rich.segment import Segment
from rich.style import Style
from textual import on, work
from textual.binding import Binding
from textual.message import Message as TMessage
from textual.strip import Strip
from textual.timer import Timer

from inspector.core.figures import Figures
from inspector.app.text import human, one_line, visible
from inspector.app.widgets.cursor_lines import CursorLines
from inspector.core.compaction.diff import freed
from inspector.core.model import Message, Session

KIND_LABEL = {"prompt": "user", "assistant": "assistant", "tool_result": "tool result", "meta": "meta",
              "compact_summary": "summary", "summary_ack": "ack", "system": "system"}
# Truecolor, not ANSI names: Textual converts ANSI colours to truecolor on every frame (ANSIToTruecolor filter).
KIND_STYLE = {"prompt": Style(color="#5fd75f", bold=True), "assistant": Style(color="#5fd7d7"),
              "tool_result": Style(color="#d7d75f"), "meta": Style(color="#8a8a8a"),
              "compact_summary": Style(color="#ff87ff", bold=True), "summary_ack": Style(color="#ff87ff"),
              "system": Style(color="#5f87ff")}
BAR = " ▏▎▍▌▋▊▉█"
BAR_WIDTH = 8
# The columns a row shows, widest first: the first that leaves the preview its cells is used (CursorLines).
# The least useful go first (the size bar, the time), then the measured and estimated figures become one, the
# figure the context counts (`tokens`: measured, ~derived, or estimated and dim), then the tool; the index, the
# kind and the context through each message always stay.
LAYOUTS = (
    ("time", "tool", "meas", "est", "size"),
    ("time", "tool", "meas", "est"),
    ("tool", "meas", "est"),
    ("tool", "tokens"),
    ("tokens",),
)
WIDTHS = {"time": 9, "tool": 13, "meas": 8, "est": 8, "tokens": 8, "size": BAR_WIDTH + 1}
HIGHLIGHT_EVERY = 0.05  # seconds between Highlighted messages while the cursor moves faster than that
THREADED_FILTER = 20_000  # messages: above this a text filter runs in a worker so the list never freezes


def bar(fraction: float, width: int = BAR_WIDTH) -> str:
    """A horizontal bar `width` cells wide filled to `fraction` with eighth-cell resolution."""
    eighths = max(0, min(width * 8, round(fraction * width * 8)))
    full, part = divmod(eighths, 8)
    return ("█" * full + (BAR[part] if part else "")).ljust(width)


def preview(message: Message, limit: int = 300) -> str:
    """A cheap one-line preview of a message: never joins or dumps a whole huge block."""
    for b in message.blocks:
        if b.type == "tool_use":
            args = b.input
            first = next((v for v in args.values() if isinstance(v, str)), "") if isinstance(args, dict) else ""
            return one_line(f"{b.tool_name or '?'}({first[:limit]})", limit)
        if b.type == "tool_result":
            text = b.text or next((c.text for c in b.content or () if c.text), "")
            return one_line(("error: " if b.is_error else "") + text[:limit], limit)
        if b.type in ("image", "document"):
            return f"[{b.type} {b.media or ''} {b.size:,} bytes]"
        if b.text.strip():
            return one_line(b.text.lstrip()[:limit], limit)
    return ""


@dataclass(slots=True)
class Filter:
    """Which messages the list shows: all of `roles`/`kinds` (empty: any), using tool `tool`, containing `text`."""

    kinds: frozenset[str] = frozenset()
    tool: str | None = None
    text: str = ""

    @classmethod
    def parse(cls, query: str) -> Filter:
        """`kind:tool_result tool:Bash some words`: kind/role/tool terms, the rest is text (case-insensitive)."""
        kinds: set[str] = set()
        tool, words = None, []
        for term in query.split():
            key, _, value = term.partition(":")
            if value and key in ("kind", "role"):
                kinds.update(_KIND_ALIASES.get(value.lower(), (value.lower(),)))
            elif value and key == "tool":
                tool = value
            else:
                words.append(term)
        return cls(frozenset(kinds), tool, " ".join(words))

    @property
    def active(self) -> bool:
        return bool(self.kinds or self.tool or self.text)

    def describe(self) -> str:
        parts = [f"kind:{'|'.join(sorted(self.kinds))}"] if self.kinds else []
        parts += [f"tool:{self.tool}"] if self.tool else []
        parts += [repr(self.text)] if self.text else []
        return " ".join(parts)

    def matches(self, m: Message, tool_names: dict[str, str]) -> bool:
        """Does `m` pass? `tool_names` maps tool_use ids to names, so a result matches its call's tool."""
        if self.kinds and m.kind not in self.kinds:
            return False
        if self.tool:
            want = self.tool.lower()
            names = [b.tool_name if b.type == "tool_use" else tool_names.get(b.tool_id or "", "")
                     for b in m.blocks if b.type in ("tool_use", "tool_result")]
            if not any(n and n.lower() == want for n in names):
                return False
        return not self.text or self.text.lower() in m.text().lower()


_KIND_ALIASES = {"user": ("prompt",), "tool": ("tool_result",), "result": ("tool_result",), "summary":
                 ("compact_summary",), "ai": ("assistant",)}


class MessageList(CursorLines):
    """Rows of messages with a cursor; posts `Highlighted` whenever the cursor lands on a row."""

    DEFAULT_CSS = """
    MessageList { background: $surface; scrollbar-gutter: stable; }
    MessageList > .message-list--cursor { background: $accent 40%; }
    MessageList:focus > .message-list--cursor { background: $accent; color: $text; }
    MessageList > .message-list--separator { color: $warning; text-style: bold; }
    MessageList > .message-list--orphan { color: $error; text-style: bold; }
    MessageList > .message-list--dim { color: $text-muted; }
    MessageList > .message-list--bar { color: $primary; }
    MessageList > .message-list--spawn { color: $secondary; text-style: bold; }
    """
    LAYOUTS, WIDTHS = LAYOUTS, WIDTHS
    COMPONENT_CLASSES = {"message-list--cursor", "message-list--separator", "message-list--orphan",
                         "message-list--dim", "message-list--bar", "message-list--spawn"}
    BINDINGS = [
        Binding("up,k", "cursor_up", "Up", show=False, id="list.up"),
        Binding("down,j", "cursor_down", "Down", show=False, id="list.down"),
        Binding("pageup,ctrl+b", "page_up", "Page up", show=False, id="list.page_up"),
        Binding("pagedown,ctrl+f", "page_down", "Page down", show=False, id="list.page_down"),
        Binding("home,g", "first", "First", show=False, id="list.first"),
        Binding("end,G", "last", "Last", show=False, id="list.last"),
        Binding("L", "largest", "Largest", id="list.largest"),
        Binding("enter", "open", "Open subagent", show=False, id="list.open"),
        Binding("o", "toggle_sort", "Sort", id="list.sort"),
    ]

    class Highlighted(TMessage):
        """The cursor is on `index` (a message index, or None) or on compaction separator `compaction`."""

        def __init__(self, index: int | None, compaction: int | None) -> None:
            super().__init__()
            self.index, self.compaction = index, compaction

    class Opened(TMessage):
        """Enter on message `index` (the screen opens the subagent it started, if any)."""

        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    class RowsChanged(TMessage):
        """The set or order of rows changed (filter or sort): `shown` rows of `total` messages."""

        def __init__(self, shown: int, total: int, description: str) -> None:
            super().__init__()
            self.shown, self.total, self.description = shown, total, description

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes, cache_size=2048)
        self.figures: Figures | None = None  # None while the figures of `session` are still being computed
        self.session: Session | None = None
        self.tool_names: dict[str, str] = {}
        self.first_number = 0  # what the first message's row is numbered (see show_session)
        self.rows: list[int] = []
        self.filter = Filter()
        self.by_size = False
        self._largest: int | None = None  # the largest message's figure (a full size bar), found when first drawn
        self._styles: dict[str, Style] = {}
        self._highlighted_at = 0.0
        self._trailing: Timer | None = None
        self.spawns: dict[int, list] = {}  # message index -> the subagents its tool calls started

    # -- data -------------------------------------------------------------------------------------------------------

    def show_session(self, session: Session, tool_names: dict[str, str], first_number: int = 0,
                     keep: int | None = None) -> None:
        """Rows for a session whose figures are still being computed: token columns show … until `show`. Rows are
        numbered from `first_number` (a preview of a session's end counts back from -1, its last message).
        `keep`: the message to put the cursor on at the height in the view the cursor had (the full session in
        place of its preview)."""
        top = self.cursor - round(self.scroll_offset.y) if keep is not None else None
        if keep is None and self.session is session:
            keep = self.current_index
        self.session, self.tool_names, self.figures = session, tool_names, None
        self.first_number = first_number
        self._largest = None
        self._rebuild(keep)
        if top is not None and self.current_index == keep:
            self.scroll_to(y=max(0, self.cursor - top), animate=False, force=True)

    def add_figures(self, figures: Figures) -> None:
        """Figures of the session listed (a preview's, numbered as it is): its rows now with their token columns."""
        if figures.session is self.session:
            self.figures, self._largest = figures, None
            self.reset()

    def show(self, figures: Figures) -> None:
        """Show a new session or new figures for the same one, keeping the cursor on the same message if possible.
        New figures of the session listed keep its rows (unless they are sorted by size): rows are drawn from the
        figures as they come into view, so only the visible ones are drawn again (building 100,000 rows again
        took 50-70 ms of each live append's exact figures)."""
        same = figures.session is self.session and not self.by_size and self.first_number == 0
        keep = self.current_index
        self.figures, self.session, self.tool_names = figures, figures.session, figures.tool_names
        self.first_number = 0
        self._largest = None
        if same:
            self.reset()
        else:
            self._rebuild(keep)

    def set_filter(self, flt: Filter) -> None:
        self.filter = flt
        if flt.active and self.session is not None and len(self.session.messages) > THREADED_FILTER:
            self._filter_in_thread(flt, self.session, self.figures, self.by_size, self.current_index)
        else:
            self._rebuild(self.current_index)

    @work(thread=True, exclusive=True, exit_on_error=False, group="filter")
    def _filter_in_thread(self, flt: Filter, session: Session, figures: Figures | None, by_size: bool,
                          keep: int | None) -> None:
        rows = self._all_rows(session, figures, flt, by_size)
        self.post_message(self._Filtered(flt, session, rows, keep))

    class _Filtered(TMessage):
        def __init__(self, flt: Filter, session: Session, rows: list[int], keep: int | None) -> None:
            super().__init__()
            self.flt, self.session, self.rows, self.keep = flt, session, rows, keep

    @on(_Filtered)
    def _filtered(self, event: _Filtered) -> None:
        if event.flt is self.filter and event.session is self.session:  # else a newer filter or session won
            self._install(event.rows, event.keep)

    def set_sort(self, by_size: bool) -> None:
        self.by_size = by_size
        self._rebuild(self.current_index)

    def messages_appended(self, start: int, figures: Figures) -> None:
        """Messages from `start` on are new (live follow): add their rows and refresh only those lines."""
        self.figures, self.session, self.tool_names = figures, figures.session, figures.tool_names
        if self._largest is not None:
            self._largest = max([self._largest, *(figures.size(i) for i in range(start, len(figures.estimated)))])
        if self.by_size:
            self._rebuild(self.current_index)
            return
        old = len(self.rows)
        self.rows.extend(self._rows_for(range(start, len(figures.session.messages)), start))
        self.size_lines()
        self.refresh_lines(old, len(self.rows) - old)
        self._announce()

    def messages_changed(self, figures: Figures) -> None:
        """Messages already shown changed in place (live follow: a response's later lines): redraw visible rows."""
        self.figures, self.session, self.tool_names = figures, figures.session, figures.tool_names
        self._cache.clear()
        self.refresh()

    def _rows_for(self, indices: Iterable[int], start: int = 0, session: Session | None = None,
                  flt: Filter | None = None) -> list[int]:
        session = session or self.session
        assert session is not None
        msgs = session.messages
        bounds: dict[int, list[int]] = {}
        if not self.by_size:
            for k, c in enumerate(session.compactions):
                if c.index >= start:
                    bounds.setdefault(c.index, []).append(-1 - k)
        rows: list[int] = []
        flt = flt or self.filter
        for i in indices:
            rows.extend(bounds.pop(i, ()))
            if not flt.active or flt.matches(msgs[i], self.tool_names):
                rows.append(i)
        for rest in bounds.values():  # a boundary after the last message
            rows.extend(rest)
        return rows

    def _all_rows(self, session: Session, figures: Figures | None, flt: Filter, by_size: bool) -> list[int]:
        rows = self._rows_for(range(len(session.messages)), 0, session, flt)
        if by_size and figures is not None:
            rows.sort(key=lambda i: -figures.size(i))
        return rows

    def _rebuild(self, keep: int | None) -> None:
        if self.session is not None:
            self._install(self._all_rows(self.session, self.figures, self.filter, self.by_size), keep)

    def _install(self, rows: list[int], keep: int | None) -> None:
        self.rows = rows
        self.reset()
        target = rows.index(keep) if keep is not None and keep in rows and len(rows) < 200_000 else 0
        self._move(target, force=True)
        self.refresh()
        self._announce()

    def _announce(self) -> None:
        # Every compaction has its separator row, except sorted by size (counting the rows took 6-13 ms at 100,000).
        desc = self.filter.describe() + (" sorted by size" if self.by_size else "")
        separators = 0 if self.by_size or self.session is None else len(self.session.compactions)
        self.post_message(self.RowsChanged(len(self.rows) - separators,
                                           len(self.session.messages) if self.session else 0, desc.strip()))

    @property
    def current_index(self) -> int | None:
        """The message under the cursor (None on a separator or an empty list)."""
        if 0 <= self.cursor < len(self.rows) and self.rows[self.cursor] >= 0:
            return self.rows[self.cursor]
        return None

    def select_message(self, index: int) -> bool:
        """Put the cursor on message `index` if it is shown; False when the filter hides it."""
        try:
            self._move(self.rows.index(index))
        except ValueError:
            return False
        return True

    # -- cursor -----------------------------------------------------------------------------------------------------

    def watch_cursor(self, row: int) -> None:
        """Say where the cursor is at once, except while it races (a held key): then at most every
        HIGHLIGHT_EVERY seconds and once when it stops, so the list does not wait on the detail pane's redraws."""
        if self._trailing is not None:
            self._trailing.stop()
            self._trailing = None
        if monotonic() - self._highlighted_at >= HIGHLIGHT_EVERY:
            self._highlight()
        else:
            self._trailing = self.set_timer(HIGHLIGHT_EVERY, self._highlight)

    def _highlight(self) -> None:
        self._trailing = None
        self._highlighted_at = monotonic()
        row = self.cursor
        if 0 <= row < len(self.rows):
            r = self.rows[row]
            self.post_message(self.Highlighted(r if r >= 0 else None, None if r >= 0 else -1 - r))
        else:
            self.post_message(self.Highlighted(None, None))

    def mark_spawns(self, spawns: dict[int, list]) -> None:
        """Mark the messages whose tool calls started subagents (`core.subagents.spawned_at`)."""
        if spawns != self.spawns:
            self.spawns = spawns
            self._cache.clear()
            self.refresh()

    def action_open(self) -> None:
        if self.current_index is not None:
            self.post_message(self.Opened(self.current_index))

    def action_largest(self) -> None:
        f = self.figures
        shown = [r for r in self.rows if r >= 0]
        if f is None:
            self.notify("token figures are still being computed", timeout=2)
        elif shown:
            self.select_message(max(shown, key=f.size))

    def action_toggle_sort(self) -> None:
        if self.figures is None and not self.by_size:
            self.notify("token figures are still being computed", timeout=2)
            return
        self.set_sort(not self.by_size)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles.clear()

    # -- drawing ----------------------------------------------------------------------------------------------------

    def header(self, width: int) -> str:
        """The column titles, aligned with `render_line`'s columns."""
        cols = self.columns
        text = f"{'#':>{self._index_width()}} " + (f"{'time':<8} " if "time" in cols else "") + f"{'kind':<11} "
        text += f"{'tool':<12} " if "tool" in cols else ""
        text += "".join(f"{name:>7} " for name in ("meas", "est", "tokens") if name in cols)
        text += f"{'context':>8} " + (f"{'size':<{BAR_WIDTH}} " if "size" in cols else "") + "preview"
        return text[:width]

    def fixed_cells(self) -> int:
        return self._index_width() + 1 + 12 + 9  # the index, the kind and the context always show

    def _index_width(self) -> int:
        if self.session is None:
            return 3
        return max(len(str(self.first_number)), len(str(len(self.session.messages) + self.first_number)))

    def _style(self, name: str) -> Style:
        """The widget's base style, or base + a component style; looked up once per theme and focus state."""
        key = f"{name}:{self.has_focus}"
        style = self._styles.get(key)
        if style is None:
            base = self.rich_style
            style = base if name == "base" else base + self.get_component_rich_style(f"message-list--{name}")
            self._styles[key] = style
        return style

    @property
    def line_count(self) -> int:
        return len(self.rows)

    def render_row(self, line: int, width: int, is_cursor: bool) -> Strip:
        return self._render_row(self.rows[line], width, is_cursor)

    def _render_row(self, r: int, width: int, is_cursor: bool) -> Strip:
        f, session = self.figures, self.session
        assert session is not None
        base = self._style("base")
        if r < 0:
            c = session.compactions[-1 - r]
            label = f" {c.kind} ({visible(c.trigger or 'unknown trigger')})"
            if c.pre_tokens:
                label += f" · {c.pre_tokens:,} tokens before"
            if c.tokens_saved:
                label += f" · {freed(c.tokens_saved, word='saved')}"
            text = ("──" + label + " ").ljust(width, "─")[:width]
            style = self._style("cursor" if is_cursor else "separator")
            return Strip([Segment(text, style)], width)
        m = session.messages[r]
        w = self._index_width()
        cols = self.columns
        dim = self._style("dim")
        segs = [Segment(f"{r + self.first_number:>{w}} ", dim)]
        if "time" in cols:
            stamp = m.timestamp if isinstance(m.timestamp, str) else ""  # a file may hold a number there
            segs.append(Segment(f"{visible(stamp[11:19]):<8} ", dim))  # timestamps and tool names: session text
        segs.append(Segment(f"{KIND_LABEL.get(m.kind, m.kind):<11} ", base + KIND_STYLE.get(m.kind, Style())))
        if "tool" in cols:
            tools = m.tool_names
            if not tools and m.kind == "tool_result":
                tools = [self._tool_of_result(m)]
            segs.append(Segment(f"{visible(','.join(t for t in tools if t))[:12]:<12} ", base))
        orphan = False
        if f is None:
            figures = sum(name in cols for name in ("meas", "est", "tokens"))
            segs.append(Segment(f"{'…':>7} " * figures + f"{'…':>8} " + (" " * (BAR_WIDTH + 1) if "size" in cols
                                                                           else ""), dim))
        else:
            d = f.derived.get(r) if f.measured[r] is None else None  # derived from a measured share: marked ~
            if "meas" in cols:
                segs.append(Segment(f"{human(f.measured[r]):>7} " if d is None else f"{'~' + human(d):>7} ",
                                    base if d is None else dim))
                segs.append(Segment(f"{human(f.estimated[r]):>7} ", dim))
            else:  # one figure: what the context counts for it, marked as the bar and the detail mark it
                basis = f.basis(r)
                size = human(f.size(r))
                segs.append(Segment(f"{'~' + size if basis == 'derived' else size:>7} ",
                                    base if basis == "measured" else dim))
            segs.append(Segment(f"{human(f.cumulative[r]):>8} ", base))
            if "size" in cols:
                segs += [Segment(bar(f.size(r) / self._largest_size(f)), self._style("bar")), Segment(" ", base)]
            orphan = r in f.orphans
        if orphan:
            segs.append(Segment("orphan ", self._style("orphan")))
        started = self.spawns.get(r)
        if started:
            segs.append(Segment(f"⇢ subagent {', '.join(str(a.number) for a in started)} ", self._style("spawn")))
        used = sum(len(seg.text) for seg in segs)
        if width > used:
            segs.append(Segment(preview(m, width)[: width - used], base))
        if is_cursor:
            cursor = self._style("cursor")
            segs = [Segment(seg.text, seg.style + cursor if seg.style else cursor) for seg in segs]
            return Strip(segs).crop_extend(0, width, cursor)
        return Strip(segs).crop_extend(0, width, base)

    def _largest_size(self, f: Figures) -> int:
        if self._largest is None:
            self._largest = max(f.sizes(), default=1) or 1
        return self._largest

    def _tool_of_result(self, m: Message) -> str:
        """The tool a result answers, found through the tool-id map."""
        for b in m.blocks:
            if b.type == "tool_result" and b.tool_id:
                return self.tool_names.get(b.tool_id, "")
        return ""
