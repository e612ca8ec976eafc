"""Messages the loading and computing workers post; handlers on the screen own every widget change."""

from __future__ import annotations

from textual.message import Message

from inspector.app.figures import Figures, Links
from inspector.core.model import Session


class LoadProgress(Message):
    """`done` of `total` bytes read. Coalesced: a newer one replaces an unprocessed older one."""

    def __init__(self, done: int, total: int) -> None:
        super().__init__()
        self.done, self.total = done, total

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, LoadProgress)


class Loaded(Message):
    """The file is read; figures follow in `FiguresReady`. `links` (None: not computed) lets the list show the
    session at once."""

    def __init__(self, session: Session, seconds: float, links: Links | None = None) -> None:
        super().__init__()
        self.session, self.seconds, self.links = session, seconds, links


class FiguresReady(Message):
    def __init__(self, figures: Figures) -> None:
        super().__init__()
        self.figures = figures


class LoadFailed(Message):
    """Loading or computing failed: `error` is one line for the user."""

    def __init__(self, error: str) -> None:
        super().__init__()
        self.error = error
