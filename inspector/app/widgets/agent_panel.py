"""The Agent view: a prompt box, the turn as it streams (text, thinking, tool calls and results, permission
questions answered inline, compaction as it fires, usage), and a status line with the session file, the model, the
compaction threshold and the circuit breaker.

The loop runs in this panel's thread worker (agent_bridge.run_turn), which posts one message per event; the
handlers here own the panel's widgets. Each snapshot the worker sends is posted to the session screen
(`SessionGrew`), whose owner of the session (`shown.Shown`) shows it in the other views with provisional figures at
once and exact ones when events pause. Model and tool text is data: it is drawn as `Text` with control characters
made visible, never as markup, and capped per entry (the Messages view has it all).

The agent package imports the SDK (over a second), so nothing of it is imported until the view is first shown;
a thread worker does the import then.
"""

from __future__ import annotations

import gc
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message as TMessage
from textual.widgets import Button, Input, Static, TabbedContent

from inspector.app.agent_bridge import (
    AgentEvent, AgentOptions, AgentReady, AgentSession, AgentStart, TurnEnded, agent_file, has_key, key_help,
    policy_for, run_turn,
)
from inspector.app.messages import SessionGrew
from inspector.app.shown import Shown
from inspector.app.text import counted, human, one_line, visible
from inspector.core.limits import AGENT_POLICY

if TYPE_CHECKING:
    from inspector.core.agent.cancel import Cancel
    from inspector.core.agent.events import PermissionAsked

VIEW = "agent"  # the id of the Agent tab in the session screen
STREAM_CAP = 6_000  # characters of a streaming entry drawn (its tail); the message itself is whole in the list
RESULT_LINES = 6
RESULT_CHARS = 2_000
MAX_ENTRIES = 300  # older entries leave the log (the session file and the Messages view keep everything)
FLUSH_SECONDS = 1 / 20  # streamed text reaches the screen at most this often
QUESTION_STYLES = {"label": "bold", "text": "", "mark": "reverse"}


class Prepared(TMessage):
    """The agent package is imported: the model's name and the cancel token the turns will share."""

    def __init__(self, model: str, default_model: str, cancel: Cancel) -> None:
        super().__init__()
        self.model, self.default_model, self.cancel = model, default_model, cancel


class Entry(Static):
    """One line or block of the log; its class says what it is (user, text, thinking, tool, result...)."""

    def __init__(self, kind: str, content: Text | str = "") -> None:
        super().__init__(content, classes=f"entry -{kind}", markup=False)
        self.kind = kind


class PermissionPrompt(Vertical, can_focus=True):
    """A tool's question, answered with the buttons or y / a / n. Posts `Answered` once."""

    BINDINGS = [
        Binding("y", "answer('allow_once')", "Allow once", id="agent.allow_once"),
        Binding("a", "answer('allow_session')", "Allow for this session", id="agent.allow_session"),
        Binding("n", "answer('deny')", "Deny", id="agent.deny"),
    ]

    class Answered(TMessage):
        def __init__(self, prompt: PermissionPrompt) -> None:
            super().__init__()
            self.prompt = prompt

    def __init__(self, asked: PermissionAsked) -> None:
        super().__init__(classes="entry -permission")
        self.asked = asked
        self.answered = False

    def compose(self) -> ComposeResult:
        from inspector.core.agent.permissions import question

        a = self.asked
        text = Text()
        text.append("? permission: ", style="bold")
        text.append(visible(a.reason))
        text.append("\n  ")
        text.append(visible(a.tool_name), style="bold")
        for line in question(a):  # every field whole, marks (cuts, controls, padding) drawn reversed
            text.append("\n    ")
            for part, kind in line:
                text.append(part, style=QUESTION_STYLES[kind])
        text.append("\n  allow for this session covers: ", style="dim")
        text.append(visible(a.scope), style="dim")
        with VerticalScroll(classes="question-scroll"):
            yield Static(text, classes="question", markup=False)
        with Horizontal(classes="choices"):
            yield Button("Allow once (y)", id="allow_once", variant="success", compact=True)
            yield Button("Allow for this session (a)", id="allow_session", variant="primary", compact=True)
            yield Button("Deny (n)", id="deny", variant="error", compact=True)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_answer(event.button.id or "deny")

    def action_answer(self, choice: str) -> None:
        from inspector.core.agent.events import Decision

        if self.answered:
            return
        decision = Decision(choice)
        self.asked.reply(decision)
        self.close({Decision.ALLOW_ONCE: "allowed once", Decision.ALLOW_SESSION: f"allowed for this session: "
                    f"{visible(self.asked.scope)}", Decision.DENY: "denied"}[decision], decision != Decision.DENY)
        self.post_message(self.Answered(self))

    def close(self, outcome: str, allowed: bool = False) -> None:
        """Replace the buttons with what was decided (an answer, or the turn's cancellation)."""
        self.answered = True
        self.can_focus = False
        for choices in self.query(".choices"):
            choices.remove()
        self.mount(Static(Text(f"  → {outcome}", style="green" if allowed else "red"), markup=False))


class AgentPanel(Vertical):
    """The Agent tab of a session screen; see the module docstring."""

    DEFAULT_CSS = """
    AgentPanel { height: 1fr; }
    AgentPanel #agent-status { height: auto; background: $panel; padding: 0 1; }
    AgentPanel #agent-help { height: auto; margin: 1 2; padding: 1 2; border: round $warning; }
    AgentPanel #agent-log { height: 1fr; padding: 0 1; background: $surface; }
    AgentPanel #agent-input { height: 3; }
    AgentPanel .entry { height: auto; }
    AgentPanel .-user { margin-top: 1; color: $text; background: $boost; }
    AgentPanel .-done { margin-bottom: 1; }
    AgentPanel .-permission { height: auto; border: round $warning; padding: 0 1; }
    AgentPanel .-permission:focus-within, AgentPanel .-permission:focus { border: round $accent; }
    AgentPanel .-permission .choices { height: auto; }
    AgentPanel .-permission .question-scroll { height: auto; max-height: 16; }
    AgentPanel .-permission Button { margin-right: 2; }
    """

    BINDINGS = [Binding("escape", "cancel_turn", "Cancel turn", id="agent.cancel")]

    def __init__(self, shown: Shown, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.shown = shown  # read only: the views' session and whether their figures are exact
        self.agent: AgentSession | None = None
        self.cancel: Cancel | None = None
        self.model: str | None = None
        self.running = False
        self.plan_path: Path | None = None
        self.policy_note = ""
        self.last_usage: Any = None
        self.calls = 0  # model calls in the running turn
        self.compacting = False
        self.pending: PermissionPrompt | None = None
        self._preparing = False
        self._stream: Entry | None = None
        self._stream_kind = ""
        self._chunks: list[str] = []
        self._flush_due = False
        self._last_flush = 0.0  # time.monotonic() of the last flush

    @property
    def options(self) -> AgentOptions:
        return getattr(self.app, "agent_options", None) or AgentOptions()

    def compose(self) -> ComposeResult:
        yield Static("", id="agent-status", markup=False)
        yield Static("", id="agent-help", markup=False)
        yield VerticalScroll(id="agent-log")
        yield Input(placeholder="Ask the agent…  (enter sends · esc cancels a running turn, or leaves this box)",
                    id="agent-input")

    def on_mount(self) -> None:
        self.query_one("#agent-help").display = False
        tabs = next((a for a in self.ancestors if isinstance(a, TabbedContent)), None)
        if tabs is not None:
            self.watch(tabs, "active", self._tab_changed, init=False)
        self._show_status()
        if self._opens_first():
            self.call_after_refresh(self._open)

    def _opens_first(self) -> bool:
        """The screen was opened for the agent: `open --agent`, or a fresh agent session."""
        options = self.options
        if options.open_view:
            options.open_view = False  # the first screen only
            return True
        s = self.shown.session
        return (s is not None and getattr(self.screen, "path", None) is None and s.format == "neutral"
                and not s.messages and not Path(s.source).exists())

    def _open(self) -> None:
        action = getattr(self.screen, "action_view", None)
        if action is not None:
            action(VIEW)

    def _tab_changed(self, active: str) -> None:
        if active == VIEW:
            self._prepare_once()
            self.query_one("#agent-input").focus()

    def focus(self, scroll_visible: bool = True) -> AgentPanel:  # the view's focus goes to the prompt box
        self.query_one("#agent-input").focus(scroll_visible)
        return self

    # -- preparing (the SDK import, off the UI thread) --------------------------------------------------------------

    def _prepare_once(self) -> None:
        if self._preparing or self.cancel is not None:
            return
        self._preparing = True
        if not has_key():
            help_box = self.query_one("#agent-help", Static)
            help_box.display = True
            help_box.update(Text(key_help("the provider's default")))
            self.query_one("#agent-input", Input).placeholder = "no API key: see above"
        self._prepare()

    @work(thread=True, exclusive=True, exit_on_error=False, group="agent-prepare")
    def _prepare(self) -> None:
        from inspector.core.agent import loop  # noqa: F401  (the import the first turn would otherwise wait for)
        from inspector.core.agent.cancel import Cancel
        from inspector.core.agent.provider import DEFAULT_MODEL

        self.post_message(Prepared(self.options.model_name, DEFAULT_MODEL, Cancel()))

    @on(Prepared)
    def _prepared(self, message: Prepared) -> None:
        _freeze_once("imports")
        self.model, self.cancel = message.model, message.cancel
        if not has_key():
            self.query_one("#agent-help", Static).update(Text(key_help(message.default_model)))
        session = self.shown.session
        if session is not None and self.agent is None:
            self.plan_path, _ = agent_file(session, self.options)
        self._policy()
        self._show_status()

    # -- a turn ----------------------------------------------------------------------------------------------------

    @on(Input.Submitted, "#agent-input")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        if not text:
            return
        if not has_key():
            self._prepare_once()
            self.notify("no API key: set ANTHROPIC_API_KEY and start again (see the Agent view)", severity="error",
                        timeout=6)
            return
        if self.running:
            self.notify("a turn is running: wait for it to finish, or press esc to cancel it", severity="warning",
                        timeout=4)
            return
        shown = self.shown.session
        if shown is None or self.cancel is None:
            self._prepare_once()
            self.notify("the agent is still starting (or the session still loading): try again in a moment",
                        timeout=3)
            return
        policy = self._policy()
        plan = None
        if self.agent is None:
            path, in_place = agent_file(shown, self.options)
            self.plan_path = path
            plan = AgentStart(shown, self.options, path, in_place, policy, self.cancel)
            if shown.messages and not in_place:
                self._add("note", Text(visible(
                    f"continuing {Path(shown.source).name} ({shown.format}, {len(shown.messages):,} messages) in a "
                    f"new agent file that starts with its history; the original file is never written: {path}"),
                    style="italic"))
        else:
            self.agent.set_policy(policy)
        event.input.value = ""
        self._end_stream()
        self._add("user", Text("› " + visible(text), style="bold"))
        self.running, self.calls, self.compacting = True, 0, False
        self._show_status()
        self._turn(self.agent, plan, text)

    # Workers get a fixed description: without one Textual builds it from the repr of every argument, on the UI
    # thread, and the repr of a 10,000-message session takes ~300 ms.
    @work(thread=True, exclusive=True, exit_on_error=False, group="agent", description="agent turn")
    def _turn(self, agent: AgentSession | None, plan: AgentStart | None, text: str) -> None:
        run_turn(agent, plan, text, self.post_message)

    def _policy(self) -> Any:
        """The compaction policy under the app's current settings (None: off, with the reason in the status)."""
        settings = self.app.settings  # type: ignore[attr-defined]
        name = settings.policy or AGENT_POLICY  # "the session's own": our agent's, whatever session it continues
        try:
            policy = policy_for(self.options, name, settings.window, settings.micro_strategy)
        except ValueError as exc:
            self.policy_note = f"compaction off: {exc}"
            return None
        if policy is None:
            self.policy_note = "compaction off (--no-compact)"
        else:
            how = (f"above {self.options.compact_at:,} tokens" if self.options.compact_at
                   else f"at {policy.threshold:,} tokens ({name})")
            self.policy_note = f"compacts {how}" + (f", {policy.micro} first" if policy.micro else "")
        return policy

    def action_cancel_turn(self) -> None:
        """Esc: cancel the running turn; when none runs, leave the prompt box so the screen's keys (1-4...) work."""
        if not self.running or self.cancel is None:
            self.query_one("#agent-log").focus()
            return
        self.cancel.cancel()
        self._add("note", Text("cancelling…", style="italic"))
        self._show_status()

    def cancel_turn(self) -> bool:
        """Cancel the running turn from anywhere on the screen (Esc); False when none is running."""
        if not self.running:
            return False
        self.action_cancel_turn()
        return True

    def reset_breaker(self) -> None:
        compactor = self.agent.config.compactor if self.agent is not None else None
        if compactor is None:
            self.notify("no compaction circuit breaker yet: it starts with the first turn", timeout=3)
            return
        compactor.breaker.reset()
        self._add("note", Text("compaction circuit breaker reset: auto-compaction is on again", style="italic"))
        self._show_status()

    # -- events ----------------------------------------------------------------------------------------------------

    @on(AgentReady)
    def _ready(self, message: AgentReady) -> None:
        self.agent = message.agent
        self._show_status()

    @on(AgentEvent)
    def _event(self, message: AgentEvent) -> None:
        from inspector.core.agent import events as ev

        e = message.event
        if message.snapshot is not None:  # the other views show it: their owner takes it from the screen
            self.post_message(SessionGrew(message.snapshot, None, "agent"))
        if isinstance(e, ev.Piece):
            kind = {ev.TextDelta: "text", ev.ThinkingDelta: "thinking"}.get(type(e), "summary")
            self._piece(kind, e.text)
            return
        if not isinstance(e, (ev.MessageAdded, ev.PermissionAsked)):
            self._end_stream()
        if isinstance(e, ev.MessageAdded):
            if e.message.role == "assistant":
                self._end_stream()
        elif isinstance(e, ev.ToolCall):
            line = Text("→ ", style="bold cyan")
            line.append(visible(e.name), style="bold cyan")
            line.append(" " + one_line(_args(e.input), 300))
            self._add("tool", line)
        elif isinstance(e, ev.PermissionAsked):
            self._end_stream()
            if e.decision is None:
                self._ask(e)
        elif isinstance(e, ev.ToolResult):
            self._add("result-error" if e.is_error else "result", _result(e.content, e.is_error))
        elif isinstance(e, ev.Usage):
            self.calls += 1
            self.last_usage = e
            self._add("usage", Text(f"  usage: context {e.context:,} tokens (input {e.input_tokens:,} · cache "
                                    f"write {e.cache_creation:,} · cache read {e.cache_read:,}) · output "
                                    f"{e.output_tokens:,}", style="dim"))
        elif isinstance(e, ev.CompactionStarted):
            self.compacting = True
            self._add("compaction", Text(f"⟳ compacting: context {e.tokens:,} tokens > threshold "
                                         f"{e.threshold:,}; the summary streams below", style="bold magenta"))
        elif isinstance(e, ev.CompactionFinished):
            self.compacting = False
            cleared = counted(len(e.compaction.cleared_tool_ids), "tool result")
            boundary = f"; the list shows the boundary at message {e.compaction.index:,}" \
                if e.compaction.kind == "compact" else f"; {cleared} cleared"
            self._add("compaction", Text(f"✓ compaction ({visible(e.strategy)}): {e.tokens_before:,} → "
                                         f"{e.tokens_after:,} estimated tokens{boundary}", style="bold magenta"))
        elif isinstance(e, ev.CompactionFailed):
            self.compacting = False
            text = Text(f"✗ compaction failed ({e.failures} in a row): {visible(e.error)}", style="bold red")
            if e.breaker_open:
                text.append("\n  circuit breaker open: auto-compaction is off until a reset "
                            "(command palette: Agent: reset the compaction circuit breaker)")
            self._add("compaction-error", text)
        elif isinstance(e, ev.Retrying):
            self._add("error", Text(f"⏳ {visible(e.describe())} · esc cancels", style="yellow"))
        elif isinstance(e, ev.Error):
            status = f" (HTTP {e.status})" if e.status else ""
            self._add("error", Text(f"error{status}: {visible(e.message)}", style="bold red"))
        elif isinstance(e, ev.TurnDone):
            self._close_pending("turn cancelled: not run" if e.stop_reason == "cancelled" else "not answered")
            calls = f"{e.iterations} model call{'s' if e.iterations != 1 else ''}"
            self._add("done", Text(f"— {visible(e.stop_reason)} · {calls} —", style="dim"))
        self._show_status()

    @on(TurnEnded)
    def _ended(self, message: TurnEnded) -> None:
        self._end_stream()
        self._close_pending("turn ended")
        if message.error:
            self._add("error", Text(f"the turn could not run: {visible(message.error)}", style="bold red"))
        self.running = self.compacting = False
        if self.agent is not None:
            _freeze_once("first turn")
        self._show_status()
        if self.screen.focused is None or not self.screen.focused.is_attached:
            self.query_one("#agent-input").focus()
        self.shown.want_exact(now=True)

    def _ask(self, asked: PermissionAsked) -> None:
        prompt = PermissionPrompt(asked)
        self.pending = prompt
        self._mount_entry(prompt)
        tabs = next((a for a in self.ancestors if isinstance(a, TabbedContent)), None)
        if tabs is not None and tabs.active != VIEW:
            self._open()
        self.call_after_refresh(prompt.focus)
        self.notify(f"the agent asks permission: {visible(asked.reason)[:200]}", title="Permission", timeout=5,
                    markup=False)

    @on(PermissionPrompt.Answered)
    def _answered(self, message: PermissionPrompt.Answered) -> None:
        if message.prompt is self.pending:  # else the next question is already up and has the focus
            self.pending = None
            self.query_one("#agent-input").focus()
        self._show_status()

    def _close_pending(self, outcome: str) -> None:
        if self.pending is not None and not self.pending.answered:
            self.pending.close(outcome)
        self.pending = None

    # -- the log ---------------------------------------------------------------------------------------------------

    def _add(self, kind: str, content: Text) -> Entry:
        entry = Entry(kind, content)
        self._mount_entry(entry)
        return entry

    def _mount_entry(self, widget: Static | Vertical) -> None:
        log = self.query_one("#agent-log", VerticalScroll)
        at_end = log.scroll_y >= log.max_scroll_y - 1
        log.mount(widget)
        extra = len(log.children) - MAX_ENTRIES
        if extra > 0:
            log.remove_children(list(log.children)[:extra])
        if at_end:
            log.call_after_refresh(log.scroll_end, animate=False)

    def _piece(self, kind: str, text: str) -> None:
        if self._stream is None or self._stream_kind != kind:
            self._end_stream()
            self._stream = self._add(kind, Text(""))
            self._stream_kind, self._chunks = kind, []
        self._chunks.append(text)
        if self._flush_due:
            return
        wait = self._last_flush + FLUSH_SECONDS - time.monotonic()
        if wait <= 0:  # the first piece in a while is drawn at once; the ones after it at most every FLUSH_SECONDS
            self._flush()
        else:
            self._flush_due = True
            self.set_timer(wait, self._flush)

    def _flush(self) -> None:
        self._flush_due = False
        self._last_flush = time.monotonic()
        if self._stream is None:
            return
        whole = "".join(self._chunks)
        self._chunks = [whole]
        shown = whole if len(whole) <= STREAM_CAP else "… " + whole[-STREAM_CAP:]
        style = {"thinking": "dim italic", "summary": "magenta"}.get(self._stream_kind, "")
        text = Text("summary: " if self._stream_kind == "summary" else "", style="bold magenta")
        text.append(visible(shown), style=style)
        self._stream.update(text)
        log = self.query_one("#agent-log", VerticalScroll)
        if log.scroll_y >= log.max_scroll_y - 2:
            log.call_after_refresh(log.scroll_end, animate=False)

    def _end_stream(self) -> None:
        if self._stream is not None:
            self._flush()
        self._stream, self._chunks = None, []

    def transcript(self) -> str:
        """The log as plain text (tests, and what a screen reader would get)."""
        lines = []
        for child in self.query_one("#agent-log").children:
            for static in [child, *child.query(Static)]:
                if isinstance(static, Static):
                    lines.append(_plain(static))
        return "\n".join(lines)

    # -- the status line -------------------------------------------------------------------------------------------

    def _show_status(self) -> None:
        text = Text()
        text.append("agent ", style="bold")
        text.append(f"· model {visible(self.model or self.options.model or '…')} · tools in "
                    f"{visible(str(self.options.workdir))}\n")
        path = self.agent.path if self.agent is not None else self.plan_path
        if path is not None:
            text.append("saved to " if self.agent is not None else "will save to ")
            text.append(visible(str(path)), style="underline")
            text.append("  (context-inspector FILE reopens it, --follow follows it)\n", style="dim")
        if not has_key():
            text.append("no API key", style="bold red")
        elif self.pending is not None:
            text.append("? waiting for your answer: y allow once · a allow for this session · n deny",
                        style="bold yellow")
        elif self.running and self.cancel is not None and self.cancel.cancelled:
            text.append("cancelling…", style="bold yellow")
        elif self.compacting:
            text.append("⟳ compacting", style="bold magenta")
        elif self.running:
            text.append(f"● running (model call {max(1, self.calls + 1)}) · esc cancels", style="bold green")
        else:
            text.append("idle: type a prompt, enter sends", style="dim")
        if self.policy_note:
            text.append(f"  ·  {visible(self.policy_note)}")
        if self.agent is not None:
            breaker = self.agent.breaker
            text.append("  ·  breaker: ")
            text.append(visible(breaker), style="bold red" if self.agent.breaker_open else
                        ("yellow" if breaker not in ("ready", "compaction off") else "green"))
        if self.last_usage is not None:
            u = self.last_usage
            text.append(f"  ·  last response: context {human(u.context)}, output {human(u.output_tokens)}")
        self.query_one("#agent-status", Static).update(text)

    @property
    def settled(self) -> bool:
        """No turn running and the views show exact figures for the latest snapshot."""
        return not self.running and self.shown.settled

    def on_unmount(self) -> None:
        if self.cancel is not None:
            self.cancel.cancel()  # a turn still running ends now; its worker closes nothing we still use
        if self.agent is not None:
            self.agent.close()


_frozen: set[str] = set()


def _freeze_once(stage: str) -> None:
    """Once per process at each stage: move every object alive now out of the cyclic GC's reach. With the agent
    package imported ("imports": the SDK, pydantic, httpx) the app holds ~160,000 long-lived objects, and the first
    turn ("first turn") adds the client and the validators the SDK builds on first use; every full collection
    walked them all, pauses of 80-270 ms in the middle of a streamed answer (benchmarks/bench_agent_view.py)."""
    if stage not in _frozen:
        _frozen.add(stage)
        gc.freeze()


def _plain(static: Static) -> str:
    content = static.content
    return content.plain if isinstance(content, Text) else str(content)


def _args(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def _result(content: str, is_error: bool) -> Text:
    lines = content[:RESULT_CHARS].splitlines() or [""]
    text = Text("  ✗ " if is_error else "  ✓ ", style="bold red" if is_error else "bold green")
    shown = lines[:RESULT_LINES]
    text.append("\n    ".join(visible(line[:300]) for line in shown), style="red" if is_error else "")
    more = len(content.splitlines()) - len(shown)
    if more > 0:
        text.append(f"\n    … {counted(more, 'more line')} (the Messages view has the whole result)", style="dim")
    return text
