"""The structural diff of a compaction: one row per message (kept / changed / removed / added), with its tokens
before and after and the delta, drawn with the Line API so a plan over 100,000 messages shows at once.

Rows are the core's `Row`s (a plan's or a diff's). Runs of kept rows fold into one line unless `show_kept`; the
display list holds a row index (>= 0) or a folded run (-1 - run number), built in one pass. Only visible lines are
rendered, each cached per (line, width, cursor, generation).
"""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message as TMessage
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from inspector.app.text import human, one_line
from inspector.app.widgets.message_list import KIND_LABEL, preview
from inspector.core.compaction.plan import Row

# Plan fates and diff statuses, grouped by what happened to the message.
STATUS = {"kept": "kept", "changed": "changed", "snipped": "changed", "cleared": "changed", "removed": "removed",
          "summarized": "removed", "added": "added"}
MARK = {"kept": " ", "changed": "~", "removed": "-", "added": "+"}
STYLE = {"kept": Style(dim=True), "changed": Style(color="yellow"), "removed": Style(color="red"),
         "added": Style(color="green", bold=True)}


class DiffView(ScrollView, can_focus=True, inherit_bindings=False):
    """Diff rows with a cursor; posts `Highlighted` with the row under it (None on a folded run)."""

    DEFAULT_CSS = """
    DiffView { background: $surface; scrollbar-gutter: stable; }
    DiffView > .diff-view--cursor { background: $accent 40%; }
    DiffView:focus > .diff-view--cursor { background: $accent; color: $text; }
    DiffView > .diff-view--dim { color: $text-muted; }
    DiffView > .diff-view--survives { color: $success; text-style: bold; }
    """
    COMPONENT_CLASSES = {"diff-view--cursor", "diff-view--dim", "diff-view--survives"}
    BINDINGS = [
        Binding("up,k", "cursor_up", "Up", show=False, id="diff.up"),
        Binding("down,j", "cursor_down", "Down", show=False, id="diff.down"),
        Binding("pageup", "page_up", "Page up", show=False, id="diff.page_up"),
        Binding("pagedown", "page_down", "Page down", show=False, id="diff.page_down"),
        Binding("home,g", "first", "First", show=False, id="diff.first"),
        Binding("end,G", "last", "Last", show=False, id="diff.last"),
        Binding("n", "next_change", "Next change", show=False, id="diff.next_change"),
        Binding("N", "previous_change", "Previous change", show=False, id="diff.previous_change"),
        Binding("K", "toggle_kept", "Kept rows", id="diff.toggle_kept"),
    ]

    cursor: reactive[int] = reactive(0, always_update=True, init=False)

    class Highlighted(TMessage):
        def __init__(self, row: Row | None) -> None:
            super().__init__()
            self.row = row

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: list[Row] = []
        self.runs: list[tuple[int, int]] = []  # folded kept runs: [start, end) in rows
        self.lines: list[int] = []
        self.show_kept = False
        self.survives: set[int] = set()  # old message indices whose content Claude Code re-injects
        self._cache: LRUCache[tuple, Strip] = LRUCache(1024)
        self._generation = 0

    # -- data -------------------------------------------------------------------------------------------------------

    def show(self, rows: list[Row], survives: set[int] | None = None) -> None:
        """Show new rows, keeping the cursor near the row it was on."""
        old = self.current
        self.rows = rows
        self.survives = survives or set()
        self._rebuild(old)

    def _rebuild(self, keep: Row | None = None) -> None:
        lines: list[int] = []
        runs: list[tuple[int, int]] = []
        rows, show_kept = self.rows, self.show_kept
        i, n = 0, len(rows)
        while i < n:
            if rows[i].fate != "kept" or show_kept:
                lines.append(i)
                i += 1
                continue
            j = i
            while j < n and rows[j].fate == "kept":
                j += 1
            if j - i == 1:
                lines.append(i)
            else:
                lines.append(-1 - len(runs))
                runs.append((i, j))
            i = j
        self.lines, self.runs = lines, runs
        self._generation += 1
        self._cache.clear()
        self.virtual_size = Size(self.size.width, len(lines))
        target = next((k for k, r in enumerate(lines) if r >= 0 and rows[r] is keep), None) if keep else None
        if target is None:  # a new diff: start on its first change
            target = next((k for k, r in enumerate(lines) if r >= 0 and rows[r].fate != "kept"), 0)
        self._move(target, force=True)
        self.refresh()

    @property
    def current(self) -> Row | None:
        if 0 <= self.cursor < len(self.lines) and self.lines[self.cursor] >= 0:
            return self.rows[self.lines[self.cursor]]
        return None

    # -- cursor -----------------------------------------------------------------------------------------------------

    def _move(self, line: int, force: bool = False) -> None:
        line = max(0, min(line, len(self.lines) - 1)) if self.lines else 0
        if line == self.cursor and not force:
            return
        old, self.cursor = self.cursor, line
        self.refresh_line(old)
        self.refresh_line(line)
        height = self.scrollable_content_region.height or self.size.height
        top = round(self.scroll_offset.y)
        if line < top:
            self.scroll_to(y=line, animate=False, immediate=True)
        elif height and line >= top + height:
            self.scroll_to(y=line - height + 1, animate=False, immediate=True)

    def watch_cursor(self, line: int) -> None:
        self.post_message(self.Highlighted(self.current))

    def _page(self) -> int:
        return max(1, (self.scrollable_content_region.height or self.size.height) - 1)

    def action_cursor_up(self) -> None:
        self._move(self.cursor - 1)

    def action_cursor_down(self) -> None:
        self._move(self.cursor + 1)

    def action_page_up(self) -> None:
        self._move(self.cursor - self._page())

    def action_page_down(self) -> None:
        self._move(self.cursor + self._page())

    def action_first(self) -> None:
        self._move(0)

    def action_last(self) -> None:
        self._move(len(self.lines) - 1)

    def _is_change(self, line: int) -> bool:
        r = self.lines[line]
        return r >= 0 and self.rows[r].fate != "kept"

    def action_next_change(self) -> None:
        for k in range(self.cursor + 1, len(self.lines)):
            if self._is_change(k):
                self._move(k)
                return

    def action_previous_change(self) -> None:
        for k in range(self.cursor - 1, -1, -1):
            if self._is_change(k):
                self._move(k)
                return

    def action_toggle_kept(self) -> None:
        self.show_kept = not self.show_kept
        self._rebuild(self.current)

    def on_click(self, event: events.Click) -> None:
        self.focus()
        line = round(self.scroll_offset.y) + event.y
        if 0 <= line < len(self.lines):
            self._move(line)

    def on_resize(self) -> None:
        self._cache.clear()
        self.virtual_size = Size(self.size.width, len(self.lines))

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._cache.clear()

    def on_focus(self) -> None:
        self.refresh_line(self.cursor)

    def on_blur(self) -> None:
        self.refresh_line(self.cursor)

    # -- drawing ----------------------------------------------------------------------------------------------------

    @staticmethod
    def header() -> str:
        """Column titles aligned with the rows."""
        return f"  {'fate':<10} {'old':>6} {'new':>6} {'kind':<11} {'before':>7} {'after':>7} {'delta':>8}  content"

    def render_line(self, y: int) -> Strip:
        line = round(self.scroll_offset.y) + y
        width = self.scrollable_content_region.width or self.size.width
        if not 0 <= line < len(self.lines):
            return Strip.blank(width, self.rich_style)
        is_cursor = line == self.cursor
        key = (line, width, is_cursor, self.has_focus, self._generation)
        strip = self._cache.get(key)
        if strip is None:
            strip = self._render(self.lines[line], width, is_cursor)
            self._cache[key] = strip
        return strip

    def line_text(self, line: int, width: int = 200) -> str:
        """The plain text of display line `line` (tests, snapshots of state)."""
        return "".join(s.text for s in self._render(self.lines[line], width, False))

    def _render(self, r: int, width: int, is_cursor: bool) -> Strip:
        base = self.rich_style
        dim = base + self.get_component_rich_style("diff-view--dim")
        if r < 0:
            a, b = self.runs[-1 - r]
            tokens = sum(row.before for row in self.rows[a:b])
            first = self.rows[a].old if self.rows[a].old is not None else self.rows[a].new
            last = self.rows[b - 1].old if self.rows[b - 1].old is not None else self.rows[b - 1].new
            segs = [Segment(f"  {'kept':<10} {first:>6} {last:>6} {f'{b - a:,} messages':<11} {human(tokens):>7} "
                            f"{human(tokens):>7} {'0':>8}  unchanged (K shows them)", dim)]
        else:
            row = self.rows[r]
            status = STATUS.get(row.fate, "changed")
            style = base + STYLE[status]
            after = "pending" if row.after is None else human(row.after)
            delta = "" if row.after is None else (f"{row.delta:+,}" if row.delta else "0")
            old = "" if row.old is None else str(row.old)
            new = "" if row.new is None else str(row.new)
            kind = KIND_LABEL.get(row.kind, row.kind)
            segs = [Segment(f"{MARK[status]} {row.fate:<10} ", style),
                    Segment(f"{old:>6} {new:>6} ", dim),
                    Segment(f"{kind:<11} ", base),
                    Segment(f"{human(row.before):>7} {after:>7} ", base),
                    Segment(f"{delta:>8}  ", style if row.delta else dim)]
            if row.old is not None and row.old in self.survives:
                segs.append(Segment("↻ re-injected ", base + self.get_component_rich_style("diff-view--survives")))
            content = preview(row.message, width) if row.message is not None else ""
            if row.note:
                content = f"[{row.note}] {content}" if content else row.note
            segs.append(Segment(one_line(content, width), base if status != "kept" else dim))
        if is_cursor:
            cursor = self.get_component_rich_style("diff-view--cursor")
            segs = [Segment(s.text, (s.style or base) + cursor) for s in segs]
            return Strip(segs).crop_extend(0, width, base + cursor)
        return Strip(segs).crop_extend(0, width, base)
