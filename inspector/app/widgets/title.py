"""A one-line title that fits its width: parts (each with a rank, some with shorter forms) are shortened or left
out, least important first, instead of being cut mid-word (`text.fit`)."""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from inspector.app.text import Part, fit


class TitleBar(Widget):
    DEFAULT_CSS = """
    TitleBar { height: 1; text-wrap: nowrap; }
    """

    def __init__(self, text: str = "", *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.parts: list[Part] = [(text, 0)] if text else []

    def show(self, parts: list[Part]) -> None:
        self.parts = parts
        self.refresh()

    def render(self) -> Text:
        return fit(self.parts, self.content_region.width or self.size.width or 80)

    @property
    def text(self) -> str:
        """The whole title, every part at its longest (what a test or a screen reader wants)."""
        return fit(self.parts, 10_000).plain
