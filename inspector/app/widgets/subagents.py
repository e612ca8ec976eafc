"""The session's subagents (`core.subagents`): where the main session started each, what it asked, its window's file;
enter opens one as a session screen of its own (esc comes back)."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message as TMessage
from textual.widgets import DataTable, Static

from inspector.app.text import counted, plain
from inspector.core.model import Session
from inspector.core.subagents import Subagent

MARK = "⇢"  # beside a message whose tool call started a subagent, in the list and the detail


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

    def compose(self) -> ComposeResult:
        yield Static("", id="subagents-head")
        yield DataTable(cursor_type="row", zebra_stripes=True, id="subagents-table")

    def on_mount(self) -> None:
        self.query_one(DataTable).add_columns("#", "started at", "its window", "what it was asked")  # the long text last

    def show(self, session: Session, agents: list[Subagent]) -> None:
        if agents == self.agents and (session is self.session or self.session is not None and all(
                session.messages[a.index] is self.session.messages[a.index] for a in agents if a.index is not None
                and a.index < min(len(session.messages), len(self.session.messages)))):
            self.session = session  # (a live append: the same subagents, started by the same messages)
            return
        self.session, self.agents = session, agents
        self.query_one("#subagents-head", Static).update(Text.assemble(
            (counted(len(agents), "subagent"), "bold"),
            f" started by this session, each with a window of its own; {MARK} marks the message whose tool call "
            "started it. enter opens one (esc comes back)."))
        table = self.query_one(DataTable)
        row = table.cursor_row
        table.clear()
        for a in agents:
            at = "-"
            if a.index is not None and a.index < len(session.messages):
                stamp = session.messages[a.index].timestamp
                at = f"message #{a.index}" + (f" {stamp[11:19]}" if isinstance(stamp, str) else "")
            where = Path(a.path.split("#")[0]).name if a.path else "not beside the session"
            table.add_row(str(a.number), plain(at), plain(where, "" if a.path else "dim"), plain(a.what),
                          key=str(a.number))
        if agents:
            table.move_cursor(row=min(row, len(agents) - 1))

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
