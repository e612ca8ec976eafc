"""The Textual application: screens for picking and inspecting sessions, app-wide keys and settings.

Build it with `inspector.app.make_app` (the CLI, the tests and the snapshots all do), never directly.
"""

from __future__ import annotations

import os
from pathlib import Path

from textual.app import App
from textual.binding import Binding

from inspector.app.agent_bridge import AgentOptions, fresh_session
from inspector.app.palette import InspectorCommands
from inspector.core.figures import Settings
from inspector.app.screens.help import HelpScreen
from inspector.app.screens.main import MainScreen
from inspector.app.screens.picker import PickerScreen
from inspector.app.threads import use_daemon_threads
from inspector.core.formats.agent_stores import session_file
from inspector.core.model import Session


class InspectorApp(App[None]):
    TITLE = "context-inspector"
    CSS_PATH = "app.tcss"
    COMMANDS = App.COMMANDS | {InspectorCommands}
    BINDINGS = [
        Binding("q", "quit", "Quit", id="app.quit"),
        Binding("f1,question_mark", "help", "Help", id="app.help"),
        Binding("ctrl+o", "pick", "Sessions", id="app.pick"),
        Binding("ctrl+n", "new_agent", "New agent session", show=False, id="app.new_agent"),
    ]

    def __init__(self, path: str | os.PathLike[str] | None = None, *, session: Session | None = None,
                 settings: Settings | None = None, home: bool = True, follow: bool = False,
                 agent: AgentOptions | None = None) -> None:
        super().__init__()
        self.follow = follow  # follow mode for sessions opened from the command line (a directory: its newest)
        self.path = Path(path) if path is not None else None
        self.initial_session = session
        self.settings = settings or Settings()
        self.home = home
        self.agent_options = agent or AgentOptions()  # how every session screen's Agent view runs the agent
        self.capture = None  # the capture the "Capture" command started (inspector.capture.background)
        self.told: set[str] = set()  # what the app says once per run (an estimator skipped, and why)

    def on_mount(self) -> None:
        use_daemon_threads()  # quitting never waits for a worker's computation
        if self.agent_options.open_view and (self.path is None or not self.path.exists()):
            self.push_screen(MainScreen(session=fresh_session(self.agent_options, self.path)))
        elif self.initial_session is not None:
            self.push_screen(MainScreen(session=self.initial_session))
        elif self.path is not None and self.path.is_dir() and session_file(self.path) is None and not self.follow:
            self.push_screen(PickerScreen(self.path, home=self.home))
        elif self.path is not None:
            self.push_screen(MainScreen(self.path, follow=self.follow))
        else:
            self.push_screen(PickerScreen(home=self.home))

    def open_session(self, path: Path) -> None:
        """Open `path` on a fresh main screen, replacing any session screen already open."""
        while len(self.screen_stack) > 1 and isinstance(self.screen, (MainScreen, PickerScreen)):
            if isinstance(self.screen, PickerScreen) and len(self.screen_stack) == 2:
                break
            self.pop_screen()
        self.push_screen(MainScreen(path))

    def action_new_agent(self) -> None:
        """A new agent session on its own session screen, its Agent view open (the SDK is imported here)."""
        self.push_screen(MainScreen(session=fresh_session(self.agent_options)))

    def action_capture(self) -> None:
        """Start a capture proxy (once) and follow the file it records; the variables to point agents at it are
        shown as a notification."""
        from inspector.capture.background import BackgroundCapture, new_capture_path
        from inspector.capture.proxy import upstream_defaults

        if self.capture is None:
            path = new_capture_path()
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                self.capture = BackgroundCapture(path, upstream_defaults(dict(os.environ))).start()
            except OSError as exc:
                self.notify(f"cannot start a capture: {exc}", severity="error", markup=False)
                return
        self.push_screen(MainScreen(self.capture.path, follow=True))
        self.notify("\n".join(["Recording to " + str(self.capture.path) + "; run agents with:",
                               *self.capture.exports()]), title="Capture", timeout=60, markup=False)

    def on_unmount(self) -> None:
        if self.capture is not None:
            self.capture.stop()

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))

    def action_pick(self) -> None:
        if not isinstance(self.screen, PickerScreen):
            self.push_screen(PickerScreen(home=self.home))
