"""The full-screen app. `make_app` is the one way to build it: the CLI, the tests and the snapshots all call it."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from inspector.app.agent_bridge import AgentOptions
    from inspector.app.app import InspectorApp
    from inspector.core.figures import Settings
    from inspector.core.model import Session


def make_app(path: str | os.PathLike[str] | None = None, *, session: Session | None = None,
             settings: Settings | None = None, home: bool = True, follow: bool = False,
             agent: AgentOptions | None = None) -> InspectorApp:
    """The app for `path` (a session file; a directory lists its sessions; None opens the picker), or for an
    already loaded `session`. `home=False` keeps ~/.claude and ~/.codex out of the picker (tests, snapshots).
    `follow=True` follows `path` as its agent writes it (a directory: its newest session). `agent`: how the Agent
    view runs the agent; with `agent.open_view` the app starts there, on a new agent session when `path` is None
    or a file that does not exist yet."""
    from inspector.app.app import InspectorApp

    return InspectorApp(path, session=session, settings=settings, home=home, follow=follow, agent=agent)


__all__ = ["make_app"]
