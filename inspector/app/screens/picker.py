"""The session picker: bundled samples and recent sessions of every agent found (`discover.STORES`), newest first.

A DataTable is fine here (at most a few hundred rows). Message counts need a scan of each file, so they fill in from
a worker after the list has painted.
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Static
from textual.worker import get_current_worker

from inspector.app.discover import Entry, discover
from inspector.app.widgets.footer import FittedFooter
from inspector.app.text import plain


WIDTH = 30  # characters of a project or file name shown: every column fits 140 cells


def _clip(text: str, width: int, keep: str = "start") -> str:
    """`text` within `width` characters, an ellipsis where it was cut: a project keeps its end (the part that
    names it), a file name its start."""
    if len(text) <= width:
        return text
    return "…" + text[-(width - 1):] if keep == "end" else text[:width - 1] + "…"


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return str(n)


class Counted(Message):
    def __init__(self, row: int, count: int) -> None:
        super().__init__()
        self.row, self.count = row, count


class PickerScreen(Screen):
    CSS = """
    PickerScreen #picker-title { height: auto; padding: 1 2 0 2; }
    PickerScreen DataTable { height: 1fr; margin: 1 2; }
    """
    FOOTER_DROP = ("app.pick",)  # the footer's keys left out first when it is narrow
    BINDINGS = [
        Binding("enter", "open", "Open", id="picker.open", priority=False),
        Binding("j", "down", "Down", show=False, id="picker.down"),
        Binding("k", "up", "Up", show=False, id="picker.up"),
        Binding("escape", "back", "Back", id="picker.back"),
    ]

    def __init__(self, directory: Path | None = None, *, home: bool = True) -> None:
        super().__init__()
        self.directory, self.home = directory, home
        self.entries: list[Entry] = []

    def compose(self) -> ComposeResult:
        where = f"Sessions in {self.directory}" if self.directory else \
            "Pick a session: recent sessions of every agent found, then the bundled samples"
        yield Static(Text.assemble(("context-inspector", "bold"), "  ", plain(where), "\n",
                                   ("enter opens · F1 help · q quits", "dim")), id="picker-title")
        yield DataTable(cursor_type="row", zebra_stripes=True, id="sessions")
        yield FittedFooter()

    def on_mount(self) -> None:
        self.entries = discover(self.directory, home=self.home)
        table = self.query_one(DataTable)
        for label in ("modified", "source", "project", "file", "size", "messages", "started (UTC)"):
            table.add_column(label, key=label.split()[0])
        for n, e in enumerate(self.entries):
            table.add_row(e.modified, e.source, plain(_clip(e.project or "-", WIDTH, keep="end")),
                          plain(_clip(e.path.name, WIDTH)), Text(_size(e.size), justify="right"), "…",
                          plain(e.started), key=str(n))
        table.focus()
        self.count()

    @work(thread=True, exclusive=True, exit_on_error=False)
    def count(self) -> None:
        worker = get_current_worker()
        for n, e in enumerate(self.entries):
            if worker.is_cancelled:
                return
            try:
                self.post_message(Counted(n, e.count_messages()))
            except OSError:
                continue

    @on(Counted)
    def _counted(self, event: Counted) -> None:
        self.entries[event.row].messages = event.count
        self.query_one(DataTable).update_cell(str(event.row), "messages", Text(f"~{event.count:,}", justify="right"))

    @on(DataTable.RowSelected)
    def _selected(self, event: DataTable.RowSelected) -> None:
        self._open(int(event.row_key.value or 0))

    def action_open(self) -> None:
        self._open(self.query_one(DataTable).cursor_row)

    def _open(self, row: int) -> None:
        if 0 <= row < len(self.entries):
            self.app.open_session(self.entries[row].path)  # type: ignore[attr-defined]

    def action_down(self) -> None:
        self.query_one(DataTable).action_cursor_down()

    def action_up(self) -> None:
        self.query_one(DataTable).action_cursor_up()

    def action_back(self) -> None:
        if len(self.app.screen_stack) > 2:
            self.app.pop_screen()
