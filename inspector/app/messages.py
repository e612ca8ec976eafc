"""Messages to the session screen, which hands each to the one owner of the session it shows (`shown.Shown`).

Workers (loading, exact figures, the follow watcher, the agent's turn) and other screens (the workbench) only post
these; the screen's handlers change the owner's state and redraw the widgets.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from textual.message import Message

from inspector.core.figures import Figures, Links, Window
from inspector.core.formats.tail import Tail
from inspector.core.model import Session

if TYPE_CHECKING:
    from inspector.core.compaction.plan import Plan
    from inspector.core.follower import Change


class LoadProgress(Message):
    """`done` of `total` bytes read. Coalesced: a newer one replaces an unprocessed older one."""

    def __init__(self, done: int, total: int) -> None:
        super().__init__()
        self.done, self.total = done, total

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, LoadProgress)


class Previewed(Message):
    """The end of a long session, read before the rest (`core.formats.tail`): shown until `Loaded` replaces it.
    `links` lets the list show it; `window` is the context its last response measured (None: no usage). `painted`
    is set once it is on screen (the reading thread waits for it rather than compete with that frame)."""

    def __init__(self, tail: Tail, links: Links, window: Window | None) -> None:
        super().__init__()
        self.tail, self.links, self.window = tail, links, window
        self.painted = threading.Event()


class PreviewFigures(Message):
    """The figures of the previewed end alone (`figures.last_response.preview_figures`): shown with it until the
    whole session's figures come."""

    def __init__(self, figures: Figures) -> None:
        super().__init__()
        self.figures = figures


class Loaded(Message):
    """The file is read; figures follow in `FiguresReady`. `links` (None: not computed) lets the list show the
    session at once."""

    def __init__(self, session: Session, seconds: float, links: Links | None = None) -> None:
        super().__init__()
        self.session, self.seconds, self.links = session, seconds, links


class FiguresReady(Message):
    """Exact figures for a state of the shown session (dropped when a newer state is shown)."""

    def __init__(self, figures: Figures) -> None:
        super().__init__()
        self.figures = figures


class LoadFailed(Message):
    """Loading or computing failed: `error` is one line for the user."""

    def __init__(self, error: str) -> None:
        super().__init__()
        self.error = error


class Waiting(Message):
    """Nothing to show yet (a followed file not written yet): `reason` says what is waited for."""

    def __init__(self, reason: str) -> None:
        super().__init__()
        self.reason = reason


class SessionGrew(Message):
    """The session has a new state: a followed file was appended to (`change` from its Follower), or the agent
    changed it (`change` None: the owner works out what changed from the state it shows). An unhandled one absorbs
    a newer one from the same source (`can_replace`), so a burst is applied once."""

    def __init__(self, session: Session, change: Change | None = None, source: str = "follow") -> None:
        super().__init__()
        self.session, self.change, self.source = session, change, source

    def can_replace(self, message: Message) -> bool:
        """Textual asks the older of two queued messages whether the newer (`message`) supersedes it: it does, once
        it carries both changes."""
        if not isinstance(message, SessionGrew) or message.source != self.source:
            return False
        if self.change is not None and message.change is not None:
            from inspector.core.follower import merge

            message.change = merge(self.change, message.change)
        elif self.change is not None or message.change is not None:
            return False  # only changes of one kind merge
        return True


class ApplyStep(Message):
    """The workbench applied `plan` to the step shown: `figures` are those of the state it makes (`session`)."""

    def __init__(self, plan: Plan, session: Session, figures: Figures, trigger: str = "manual") -> None:
        super().__init__()
        self.plan, self.session, self.figures, self.trigger = plan, session, figures, trigger


class GoToStep(Message):
    """The workbench moved to step `index` (undo, redo, going back to the original)."""

    def __init__(self, index: int) -> None:
        super().__init__()
        self.index = index


class StepsChanged(Message):
    """To the workbench: the step stack or the step shown changed (its figures follow when computed)."""
