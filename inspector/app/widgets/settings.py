"""The settings panel: policy, window, estimator and microcompaction parameters. Every change posts `Changed` at
once and the screen re-computes the figures, so the bar and the list move while the panel stays open.

The policy's first choice, "session's own" (`Settings.policy` None), follows each session opened: Codex's rule for a
Codex rollout, Claude Code's for its transcripts (`inspector.core.limits.default_policy`); a line under it names it.
"""

from __future__ import annotations

from dataclasses import replace

from textual import on
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Input, Label, Select, Static

from inspector.core.figures import Settings
from inspector.core.model import Session


def policy_names() -> list[str]:
    """Policy names from the core (limits), in its order."""
    from inspector.core import limits

    return list(limits.POLICIES)


def estimator_names() -> list[str]:
    from inspector.core.estimators import ESTIMATORS

    return list(ESTIMATORS)


class SettingsPanel(VerticalScroll):
    DEFAULT_CSS = """
    SettingsPanel { dock: right; width: 30; background: $panel; border-left: vkey $primary; padding: 0 1; }
    SettingsPanel Label { margin-top: 1; color: $text-muted; }
    SettingsPanel .title { color: $text; text-style: bold; margin-top: 0; }
    SettingsPanel #set-policy-own { color: $text-muted; }
    SettingsPanel Input, SettingsPanel Select { width: 100%; }
    """

    class Changed(Message):
        def __init__(self, settings: Settings) -> None:
            super().__init__()
            self.settings = settings

    def __init__(self, settings: Settings, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.settings = settings

    def compose(self) -> ComposeResult:
        s = self.settings
        yield Label("Settings (esc closes)", classes="title")
        yield Label("Threshold policy")
        yield Select([("session's own", None), *((p, p) for p in policy_names())], value=s.policy,
                     allow_blank=False, compact=True, id="set-policy")
        yield Static("", id="set-policy-own", markup=False)
        yield Label("Window tokens (blank: model's)")
        yield Input(str(s.window or ""), placeholder="e.g. 200000", type="integer", compact=True, id="set-window")
        yield Label("Estimator")
        yield Select([(e, e) for e in estimator_names()], value=s.estimator, allow_blank=False, compact=True,
                     id="set-estimator")
        yield Label("Microcompaction strategy")
        yield Select([("clear (Claude Code)", "clear"), ("snip (reference)", "snip")], value=s.micro_strategy,
                     allow_blank=False, compact=True, id="set-micro")
        yield Label("clear: results kept")
        yield Input(str(s.keep_recent), type="integer", compact=True, id="set-keep")
        yield Label("snip: messages protected")
        yield Input(str(s.preserve_last_n), type="integer", compact=True, id="set-preserve")
        yield Label("snip: max characters")
        yield Input(str(s.max_chars), type="integer", compact=True, id="set-maxchars")

    @on(Select.Changed)
    def _select(self, event: Select.Changed) -> None:
        key = {"set-policy": "policy", "set-estimator": "estimator", "set-micro": "micro_strategy"}.get(
            event.select.id or "")
        valid = isinstance(event.value, str) or (key == "policy" and event.value is None)
        if key and valid and event.value != getattr(self.settings, key):
            self._apply(**{key: event.value})

    @on(Input.Changed)
    def _input(self, event: Input.Changed) -> None:
        key = {"set-window": "window", "set-keep": "keep_recent", "set-preserve": "preserve_last_n",
               "set-maxchars": "max_chars"}.get(event.input.id or "")
        if key is None:
            return
        text = event.value.strip()
        if key == "window" and not text:
            value: int | None = None
        elif text.isdigit() and int(text) > 0 or (text == "0" and key != "window"):
            value = int(text)
        else:
            return
        if key == "window" and value is not None and value < 1000:
            return  # still typing
        if value != getattr(self.settings, key):
            self._apply(**{key: value})

    def _apply(self, **changes: object) -> None:
        self.settings = replace(self.settings, **changes)
        self.post_message(self.Changed(self.settings))

    def show_session(self, session: Session, notes: tuple[str, ...] = ()) -> None:
        """Name the policy "session's own" stands for with this session, and under it where the window and the
        lines in force came from (the settings file that moved a line, say): text shown as it is."""
        from inspector.core.limits import default_policy

        text = "\n".join([f"this session's own: {default_policy(session)}", *notes])
        own = self.query_one("#set-policy-own", Static)
        if str(own.content) != text:  # (every exact figures of a live append name the same one: no layout then)
            own.update(text)

    def sync(self, settings: Settings) -> None:
        """Show `settings` changed elsewhere (keys, palette) without posting them back."""
        self.settings = settings
        with self.prevent(Select.Changed, Input.Changed):
            self.query_one("#set-policy", Select).value = settings.policy
            self.query_one("#set-estimator", Select).value = settings.estimator
            self.query_one("#set-window", Input).value = str(settings.window or "")
