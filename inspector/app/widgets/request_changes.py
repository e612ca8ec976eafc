"""What changed from one recorded request to the next (core `request_changes`), for sessions that record their
requests (Claude Code 2.1.332+): a table of the requests, one line each, and the selected one's changes in full.

The changes are computed in a worker (describing them may re-read message lines of the file); the view only lays
them out."""

from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import DataTable, Static

from inspector.app.text import counted, plain
from inspector.app.widgets.detail import DetailView
from inspector.core.model import Session
from inspector.core.request_changes import RequestChange


class ChangesReady(Message):
    def __init__(self, session: Session, changes: list[RequestChange]) -> None:
        super().__init__()
        self.session, self.changes = session, changes


class RequestChangesView(Vertical):
    DEFAULT_CSS = """
    RequestChangesView #changes-summary { height: auto; padding: 0 1; background: $panel; }
    RequestChangesView #changes-table { width: 2fr; height: 1fr; }
    RequestChangesView #changes-detail { width: 3fr; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.session: Session | None = None
        self.changes: list[RequestChange] = []

    def compose(self) -> ComposeResult:
        yield Static("", id="changes-summary")
        with Horizontal():
            yield DataTable(id="changes-table", cursor_type="row", zebra_stripes=True)
            yield DetailView(id="changes-detail")

    def on_mount(self) -> None:
        self.query_one("#changes-table", DataTable).add_columns("#", "line", "thread", "msgs", "what changed")

    def focus(self, scroll_visible: bool = True) -> RequestChangesView:
        self.query_one("#changes-table").focus(scroll_visible)
        return self

    def show(self, session: Session) -> None:
        """Compute (in a worker) and show the changes of `session`'s recorded requests; a session that records
        none says so."""
        if session is self.session:
            return
        self.session, self.changes = session, []
        self.query_one("#changes-table", DataTable).clear()
        if session.sent is None or not session.sent.requests:
            self._summary(f"this {session.format} session records no requests (Claude Code 2.1.332 and later do)")
            self.query_one(DetailView).show_text("", "")
            return
        self._summary(f"{counted(len(session.sent), 'recorded request')} · working out what changed…")
        self.compute(session)

    @work(thread=True, exclusive=True, exit_on_error=False, group="request-changes")
    def compute(self, session: Session) -> None:
        from inspector.core.request_changes import all_changes

        assert session.sent is not None
        self.post_message(ChangesReady(session, all_changes(session.sent)))

    @on(ChangesReady)
    def _ready(self, event: ChangesReady) -> None:
        if event.session is not self.session:
            return
        self.changes = event.changes
        table = self.query_one("#changes-table", DataTable)
        table.clear()
        for n, change in enumerate(self.changes, 1):
            r = change.request
            table.add_row(Text(str(n), justify="right"), Text(str(r.line or ""), justify="right"),
                          plain((r.agent_id or "main")[:12]), Text(str(change.messages), justify="right"),
                          plain(change.short()), key=str(n))
        threads = len({c.request.agent_id for c in self.changes})
        self._summary(f"{counted(len(self.changes), 'recorded request')} in {counted(threads, 'thread')} · what each "
                      "sent that the one before it did not (r: back to the prompt)")
        if self.changes:
            table.move_cursor(row=len(self.changes) - 1)
            self._show(table.cursor_row)

    @on(DataTable.RowHighlighted, "#changes-table")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show(event.cursor_row)

    def _show(self, row: int) -> None:
        if not 0 <= row < len(self.changes) or self.session is None or self.session.sent is None:
            return
        change = self.changes[row]
        r = change.request
        answered = self.session.sent.response_id(r)
        notes = [f"line {r.line} · {r.model or 'model not recorded'} · "
                 + (f"response {answered}" if answered else "no response (failed; retried as the next)")]
        self.query_one(DetailView).show_text(f"request {row + 1}", "\n".join(change.lines()), notes)

    def _summary(self, text: str) -> None:
        self.query_one("#changes-summary", Static).update(plain(text))
