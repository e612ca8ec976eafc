"""The session picker: bundled samples and recent sessions of every agent found (`core.discover.STORES`), newest first.

A DataTable is fine here (at most a few hundred rows). Message counts need each session loaded (or, past a time
budget, scanned for an estimate, marked "~"), so they fill in from a worker after the list has painted.
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

from inspector.app.widgets.footer import FittedFooter
from inspector.core.discover import Entry, count_all, discover
from inspector.core.formats.agent_stores import session_name
from inspector.app.text import plain


NAMES = (12, 30)  # the fewest cells a project or a file name gets before another column goes, and the most
COLUMNS = (("modified", "modified", 16), ("source", "source", 11), ("project", "project", 0), ("file", "file", 0),
           ("size", "size", 9), ("messages", "messages", 8), ("started", "started (UTC)", 16))
NARROWER = (("started", None), ("modified", 11), ("source", None))  # in turn, while the names get too few cells
PADDING = 2  # a cell's padding, one each side


def columns(width: int) -> list[tuple[str, str, int]]:
    """(key, label, width) of the columns that fit `width` cells: project and file share what the others leave;
    while that is less than NAMES[0] each, the start goes (the last write stays), the last write loses its year,
    then the agent goes."""
    shown = list(COLUMNS)

    def names() -> int:
        fixed = sum(w + PADDING for k, _, w in shown if k not in ("project", "file")) + 2 * PADDING + 2  # scrollbar
        return (width - fixed) // 2

    for key, narrower in NARROWER:
        if names() >= NAMES[0]:
            break
        shown = [(k, label, narrower if k == key else w) for k, label, w in shown if k != key or narrower]
    return [(k, label, max(8, min(NAMES[1], names())) if k in ("project", "file") else w) for k, label, w in shown]


def _clip(text: str, width: int, keep: str = "start") -> str:
    """`text` within `width` characters, an ellipsis where it was cut: a project keeps its end (the part that
    names it), a file name its start and end (a session id starts differently, a sample's name ends differently:
    `claude-code-autocompact.jsonl` and `claude-code-tool-heavy.jsonl`), its .jsonl / .json suffix dropped first."""
    if len(text) <= width:
        return text
    if keep == "end":
        return "…" + text[-(width - 1):]
    stem = text.rsplit(".", 1)[0] if text.endswith((".jsonl", ".json")) else text
    if len(stem) <= width:
        return stem
    head = width // 2
    return stem[:head] + "…" + stem[len(stem) - (width - 1 - head):]


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return str(n)


class Counted(Message):
    def __init__(self, row: int, count: int, exact: bool) -> None:
        super().__init__()
        self.row, self.count, self.exact = row, count, exact


def _count_cell(e: Entry) -> Text:
    """The loader's count as it is, an estimate marked "~", "…" while it is being counted."""
    if e.messages is None:
        return Text("…", justify="right")
    return Text(f"{'' if e.exact else '~'}{e.messages:,}", justify="right")


class PickerScreen(Screen):
    CSS = """
    PickerScreen #picker-title { height: auto; padding: 1 2 0 2; }
    PickerScreen DataTable { height: 1fr; margin: 1 1; }
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
        self._layout: list[tuple[str, str, int]] | None = None

    def compose(self) -> ComposeResult:
        where = f"Sessions in {self.directory}" if self.directory else \
            "Pick a session: recent sessions of every agent found, then the bundled samples"
        yield Static(Text.assemble(("context-inspector", "bold"), "  ", plain(where), "\n",
                                   ("enter opens · F1 help · q quits", "dim")), id="picker-title")
        yield DataTable(cursor_type="row", zebra_stripes=True, id="sessions")
        yield FittedFooter()

    def on_mount(self) -> None:
        self.entries = discover(self.directory, home=self.home)
        self._fill()
        self.query_one(DataTable).focus()
        self.count()

    def _fill(self) -> None:
        """The table's columns for its width (`columns`) and a row per entry, the cursor kept where it was."""
        table = self.query_one(DataTable)
        layout = columns(table.size.width or self.app.size.width - 2)
        if layout == self._layout:
            return
        self._layout, row = layout, table.cursor_row
        table.clear(columns=True)
        for key, label, width in layout:
            table.add_column(label, key=key, width=width)
        widths = {key: width for key, _, width in layout}
        for n, e in enumerate(self.entries):
            modified = e.modified if widths.get("modified", 16) >= 16 or e.modified == "-" else e.modified[5:]
            cells = {"modified": modified, "source": e.source,
                     "project": plain(_clip(e.project or "-", widths.get("project", 0), keep="end")),
                     "file": plain(_clip(session_name(e.path), widths.get("file", 0))),
                     "size": Text(_size(e.size), justify="right"), "messages": _count_cell(e),
                     "started": plain(e.started)}
            table.add_row(*(cells[key] for key, _, _ in layout), key=str(n))
        table.move_cursor(row=row)

    def on_resize(self) -> None:
        if self._layout is not None:
            self.call_after_refresh(self._fill)

    @work(thread=True, exclusive=True, exit_on_error=False)
    def count(self) -> None:
        worker = get_current_worker()
        for row, n, exact in count_all(self.entries, lambda: worker.is_cancelled):
            self.post_message(Counted(row, n, exact))

    @on(Counted)
    def _counted(self, event: Counted) -> None:
        e = self.entries[event.row]
        e.messages, e.exact = event.count, event.exact
        self.query_one(DataTable).update_cell(str(event.row), "messages", _count_cell(e))

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
