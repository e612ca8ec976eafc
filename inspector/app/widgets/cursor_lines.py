"""A focusable Line API list with a cursor: the scrolling, cursor movement and line cache every long list needs.

Only visible lines are rendered, each once per (line, width, cursor, focus, generation) thanks to an LRU cache of
Strips. A subclass says how many lines it has (`line_count`), draws one (`render_row`), calls `reset()` when its
lines change, and declares its own key bindings (with its own ids) for the actions here.
"""

from __future__ import annotations

from textual import events
from textual.cache import LRUCache
from textual.geometry import Size
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip


class CursorLines(ScrollView, can_focus=True, inherit_bindings=False):
    # Rows are drawn to the width: never a horizontal scrollbar (it would hide the last row from the cursor).
    DEFAULT_CSS = "CursorLines { overflow-x: hidden; }"
    cursor: reactive[int] = reactive(0, always_update=True, init=False)

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None,
                 cache_size: int = 1024) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._cache: LRUCache[tuple, Strip] = LRUCache(cache_size)
        self._generation = 0

    @property
    def line_count(self) -> int:
        raise NotImplementedError

    def render_row(self, line: int, width: int, is_cursor: bool) -> Strip:
        raise NotImplementedError

    def reset(self) -> None:
        """The lines changed: forget every cached strip and size the scroll area again."""
        self._generation += 1
        self._cache.clear()
        self.virtual_size = Size(self.size.width, self.line_count)
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
            return
        old, self.cursor = self.cursor, line
        self.refresh_line(old)
        self.refresh_line(line)
        self._keep_visible()

    def _keep_visible(self) -> None:
        # force: the scrollbars' state (allow_vertical_scroll) is only refreshed at the next layout, so right after
        # the rows grow it still says "nothing to scroll" and a plain scroll_to is dropped (the cursor then sits
        # below the view); the target is clamped to the new virtual size either way.
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
        self.virtual_size = Size(self.size.width, self.line_count)
        self._keep_visible()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._cache.clear()

    def on_focus(self) -> None:
        self.refresh_line(self.cursor)

    def on_blur(self) -> None:
        self.refresh_line(self.cursor)
