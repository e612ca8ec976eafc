"""The prompt view: the system prompt's sections with tokens and sources, the selected section's text, and lint
findings. The sections come from the core (`Figures.prompt`); this view only lays them out."""

from __future__ import annotations

import os

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import DataTable, Static

from inspector.app.figures import Figures
from inspector.app.text import human, one_line, plain, visible
from inspector.app.widgets.detail import DetailView


def _short(path: str) -> str:
    """A path relative to the working directory when it lies below it (shorter, and the same on every checkout)."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


class PromptView(Vertical, can_focus=False):
    DEFAULT_CSS = """
    PromptView #prompt-summary { height: auto; padding: 0 1; background: $panel; }
    PromptView #prompt-sections { width: 2fr; height: 1fr; }
    PromptView #prompt-text { width: 3fr; }
    PromptView #prompt-lint { height: 10; border-top: hkey $panel-lighten-2; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.figures: Figures | None = None

    def compose(self) -> ComposeResult:
        yield Static("", id="prompt-summary")
        with Horizontal():
            yield DataTable(id="prompt-sections", cursor_type="row", zebra_stripes=True)
            yield DetailView(id="prompt-text")
        yield DataTable(id="prompt-lint", cursor_type="row")

    def on_mount(self) -> None:
        self.query_one("#prompt-sections", DataTable).add_columns("section", "source", "kind", "tokens")
        self.query_one("#prompt-lint", DataTable).add_columns("rule", "where", "finding")

    @property
    def focusable(self) -> bool:  # focus goes to the section table
        return False

    def focus(self, scroll_visible: bool = True) -> PromptView:
        self.query_one("#prompt-sections").focus(scroll_visible)
        return self

    def show(self, figures: Figures) -> None:
        self.figures = figures
        prompt = figures.prompt
        table = self.query_one("#prompt-sections", DataTable)
        row = table.cursor_row
        table.clear()
        for n, s in enumerate(prompt.sections):
            table.add_row(plain(s.title[:40]), plain(s.source[:40]), plain(s.kind),
                          Text(f"{s.tokens:,}", justify="right"), key=str(n))
        lint = self.query_one("#prompt-lint", DataTable)
        lint.clear()
        for f in prompt.findings:
            lint.add_row(plain(f.rule), plain(f.location()[:50]), plain(one_line(f.message, 200)))
        total = sum(s.tokens for s in prompt.sections)
        summary = f"{len(prompt.sections)} sections, {human(total)} tokens ({figures.settings.estimator})" \
            f" · {len(prompt.findings)} lint finding(s)"
        if prompt.note:
            summary += f"\n{prompt.note}"
        self.query_one("#prompt-summary", Static).update(plain(summary))
        if prompt.sections:
            table.move_cursor(row=min(row, len(prompt.sections) - 1))
            self._show_section(table.cursor_row)
        else:
            self.query_one(DetailView).show_text("No prompt sections", "")

    @on(DataTable.RowHighlighted, "#prompt-sections")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_section(event.cursor_row)

    def _show_section(self, row: int) -> None:
        if self.figures is None or not 0 <= row < len(self.figures.prompt.sections):
            return
        s = self.figures.prompt.sections[row]
        notes = [f"source: {visible(s.source)}" + (f" ({visible(_short(s.path))})" if s.path else ""),
                 f"{s.tokens:,} tokens · {s.kind}"] + ([visible(s.note)] if s.note else [])
        self.query_one(DetailView).show_text(visible(s.title), s.text, notes)
