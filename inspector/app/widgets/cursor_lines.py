"""A focusable Line API list with a cursor: the scrolling, cursor movement and line cache every long list needs.

Only visible lines are rendered, each once per (line, width, cursor, focus, generation) thanks to an LRU cache of
Strips. A subclass says how many lines it has (`line_count`), draws one (`render_row`), calls `reset()` when its
lines change, and declares its own key bindings (with its own ids) for the actions here.

`at_end` says whether the view was last scrolled to show the end (kept from the last scroll, so lines not yet laid
out and a resize whose event is still queued leave it as it was: follow mode decides from it, never from a
geometry that a pending layout is changing).

A subclass with columns that come and go with the width lists its `LAYOUTS` (the optional columns, widest
first), their `WIDTHS` and the cells every layout takes (`fixed_cells`): `columns` is the first layout that leaves
the content `PREVIEW_MIN` cells, and `ColumnsChanged` says when it changes (for the header above the list).
"""

from __future__ import annotations

from textual import events
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widget import Widget


class CursorLines(ScrollView, can_focus=True, inherit_bindings=False):
    # Rows are drawn to the width: never a horizontal scrollbar (it would hide the last row from the cursor).
    DEFAULT_CSS = "CursorLines { overflow-x: hidden; }"
    cursor: reactive[int] = reactive(0, always_update=True, init=False)
    LAYOUTS: tuple[tuple[str, ...], ...] = ((),)
    WIDTHS: dict[str, int] = {}
    PREVIEW_MIN = 16

    class ColumnsChanged(Message):
        """The width now shows other columns (`columns`): the header above the lines follows."""

        def __init__(self, lines: CursorLines) -> None:
            super().__init__()
            self.lines = lines

        @property
        def control(self) -> CursorLines:
            return self.lines

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None,
                 cache_size: int = 1024) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._cache: LRUCache[tuple, Strip] = LRUCache(cache_size)
        self._generation = 0
        self.columns: tuple[str, ...] = self.LAYOUTS[0]
        self.at_end = True  # the last scroll left the end in view (see the module's docstring)

    @property
    def line_count(self) -> int:
        raise NotImplementedError

    def render_row(self, line: int, width: int, is_cursor: bool) -> Strip:
        raise NotImplementedError

    def size_lines(self) -> None:
        """Size the scroll area for `line_count` lines. Assigning `virtual_size` asks for a layout of the whole
        screen (in every live append's frame: tens of ms at 100,000 messages); while the vertical scrollbar stays
        shown (or hidden), updating it and repainting this widget is all more lines need (as `DetailView` does)."""
        size, height = Size(0, self.line_count), self.container_size.height
        if size == self.virtual_size:
            return
        if height and (size.height > height) == (self.virtual_size.height > height):
            self.set_reactive(Widget.virtual_size, size)
            self._scroll_update(size)
            self.refresh()
        else:
            self.virtual_size = size

    def reset(self) -> None:
        """The lines changed: forget every cached strip and size the scroll area again."""
        self._generation += 1
        self._cache.clear()
        self.virtual_size = Size(0, self.line_count)  # (rows fit the width: no horizontal scrolling)
        self.refresh()

    def render_line(self, y: int) -> Strip:
        line = round(self.scroll_offset.y) + y
        width = self.scrollable_content_region.width or self.size.width
        if not 0 <= line < self.line_count:
            return Strip.blank(width, self.rich_style)
        is_cursor = line == self.cursor
        key = (line, width, is_cursor, self.has_focus, self._generation)
        strip = self._cache.get(key)
        if strip is None:
            strip = self.render_row(line, width, is_cursor)
            self._cache[key] = strip
        return strip

    def _move(self, line: int, force: bool = False) -> None:
        n = self.line_count
        line = max(0, min(line, n - 1)) if n else 0
        if line == self.cursor and not force:
            self._keep_visible()  # (the view may have been scrolled away from it)
            return
        old, self.cursor = self.cursor, line
        self.refresh_line(old)
        self.refresh_line(line)
        self._keep_visible()

    def _keep_visible(self) -> None:
        # force: rows added in this tick have no scrollbar until the next layout, and Textual drops a scroll it
        # does not allow (the cursor then sits out of view, and follow mode sees the list scrolled away); the
        # target is clamped to the new virtual size either way.
        height = self.scrollable_content_region.height or self.size.height
        top = round(self.scroll_offset.y)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, force=True)
        elif height and self.cursor >= top + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False, force=True)

    def watch_show_vertical_scrollbar(self, shown: bool) -> None:
        # A scroll made while the bar was hidden (see _keep_visible) never reached it: put its thumb where we are.
        if shown:
            self.vertical_scrollbar.position = self.scroll_y

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        self.at_end = new >= self.max_scroll_y - 1

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
        self._move(self.line_count - 1)

    def on_click(self, event: events.Click) -> None:
        self.focus()
        line = round(self.scroll_offset.y) + event.y
        if 0 <= line < self.line_count:
            self._move(line)

    def on_resize(self) -> None:
        self._cache.clear()
        self.virtual_size = Size(0, self.line_count)  # (rows fit the width: no horizontal scrolling)
        self._keep_visible()
        width = self.scrollable_content_region.width or self.size.width
        columns = next((c for c in self.LAYOUTS if self.fixed_cells() + sum(self.WIDTHS[k] for k in c)
                        + self.PREVIEW_MIN <= width), self.LAYOUTS[-1])
        if columns != self.columns:  # (lines drawn for the new width before this event are drawn again)
            self.columns = columns
            self.refresh()
            self.post_message(self.ColumnsChanged(self))

    def fixed_cells(self) -> int:
        """The cells of the columns every layout shows."""
        return 0

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._cache.clear()

    def on_focus(self) -> None:
        self.refresh_line(self.cursor)

    def on_blur(self) -> None:
        self.refresh_line(self.cursor)
