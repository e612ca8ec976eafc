"""The session's subagents (`core.subagents`): where the main session started each, what it asked, its window's file;
enter opens one as a session screen of its own (esc comes back)."""

from __future__ import annotations

from pathlib import Path

from rich.cells import cell_len
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message as TMessage
from textual.widgets import DataTable, Static

from inspector.app.text import counted, plain, visible
from inspector.core.formats.agent_stores import window_name
from inspector.core.model import Session
from inspector.core.subagents import Subagent

MARK = "⇢"  # beside a message whose tool call started a subagent, in the list and the detail
COLUMNS = ("#", "started at", "its window", "what it was asked")  # the long text last: the one cut to fit
MIN_WHAT = 16  # what a subagent was asked keeps this many cells however narrow the screen
SCROLLBAR = 2  # the table's vertical scrollbar, when its rows overflow


class SubagentsView(Vertical):
    DEFAULT_CSS = """
    SubagentsView { background: $surface; }
    SubagentsView #subagents-head { height: auto; padding: 0 1; color: $text-muted; }
    SubagentsView DataTable { height: 1fr; }
    """

    class Open(TMessage):
        """Open subagent `agent` as a session screen of its own."""

        def __init__(self, agent: Subagent) -> None:
            super().__init__()
            self.agent = agent

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.agents: list[Subagent] = []
        self.session: Session | None = None
        self._rows: list[tuple] | None = None  # what the table shows
        self._width = 0  # the width it was filled for

    def compose(self) -> ComposeResult:
        yield Static("", id="subagents-head")
        yield DataTable(cursor_type="row", zebra_stripes=True, id="subagents-table")

    def show(self, session: Session, agents: list[Subagent]) -> None:
        """List `agents`; the table is rebuilt only when its rows differ (not at a live append that starts none)."""
        rows = [(str(a.number), _started_at(session, a),
                 window_name(Path(a.path.split("#")[0])) if a.path else "not beside the session", a.what,
                 bool(a.path))
                for a in agents]
        self.session, self.agents = session, agents
        if rows == self._rows:
            return
        self._rows = rows
        self.query_one("#subagents-head", Static).update(Text.assemble(
            (counted(len(agents), "subagent"), "bold"),
            f" started by this session, each with a window of its own; {MARK} marks the message whose tool call "
            "started it. enter opens one (esc comes back)."))
        self._fill()

    def on_resize(self) -> None:
        if self._rows is not None and self.size.width != self._width:
            self._fill()

    def _fill(self) -> None:
        """The rows, what each subagent was asked cut to the width left (the detail of its message says it all):
        the table never scrolls sideways."""
        rows, self._width = self._rows or [], self.size.width
        table = self.query_one(DataTable)
        row = table.cursor_row
        table.clear(columns=True)  # (a column never narrows while it stays)
        widths = [max([cell_len(label), *(cell_len(visible(r[i])) for r in rows)]) for i, label in enumerate(COLUMNS)]
        widths[-1] = min(widths[-1], max(MIN_WHAT, self._width - SCROLLBAR - sum(widths[:-1])
                                         - 2 * table.cell_padding * len(COLUMNS)))
        for label, width in zip(COLUMNS, widths):
            table.add_column(label, width=width)
        for number, at, where, what, beside in rows:
            cell = plain(what)
            cell.truncate(widths[-1], overflow="ellipsis")
            table.add_row(number, plain(at), plain(where, "" if beside else "dim"), cell, key=number)
        if rows:
            table.move_cursor(row=min(row, len(rows) - 1))

    @on(DataTable.RowSelected, "#subagents-table")
    def _selected(self, event: DataTable.RowSelected) -> None:
        number = int(event.row_key.value or 0)
        agent = next((a for a in self.agents if a.number == number), None)
        if agent is not None:
            self.post_message(self.Open(agent))

    @property
    def focusable(self) -> bool:  # focus goes to the table
        return False

    def focus(self, scroll_visible: bool = True) -> SubagentsView:
        self.query_one(DataTable).focus(scroll_visible)
        return self


def _started_at(session: Session, agent: Subagent) -> str:
    """The message whose tool call started `agent`, and its time."""
    if agent.index is None or agent.index >= len(session.messages):
        return "-"
    stamp = session.messages[agent.index].timestamp
    return f"message #{agent.index}" + (f" {stamp[11:19]}" if isinstance(stamp, str) else "")
