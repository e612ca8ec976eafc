"""The app's side of the agent loop: one agent session per session screen, one turn at a time in a thread worker.

`AgentSession` holds what lasts across turns: the config (its compactor keeps the circuit breaker), the loop's
state and the session writer. `turn` runs in the agent panel's thread worker: it iterates the loop through the
writer, so every event is on disk before the UI hears of it, and posts one `AgentEvent` per event. Events that
change the conversation carry a snapshot (a shallow copy of the session taken while the loop waits at that event),
so the UI thread shows snapshots and never reads the state the loop is changing. A permission question blocks the
worker in `wait_reply` until the UI answers it or the turn is cancelled (Esc: `cancel`).

The agent never writes to a file it did not create: a session of another format, or a neutral file from elsewhere,
is continued in a new agent file that starts with its whole history (SessionWriter does that); only the agent's own
files (the per-user data directory, or the file named with `open --agent FILE`) are continued in place.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from typing import TYPE_CHECKING

from textual.message import Message as TMessage

from inspector.core.model import LoadError, Session, ToolSchema
from inspector.core.prompt.memory import user_data_dir

if TYPE_CHECKING:
    from inspector.core.agent.cancel import Cancel
    from inspector.core.agent.config import AgentConfig
    from inspector.core.agent.events import Event
    from inspector.core.agent.writer import SessionWriter
    from inspector.core.compaction.pipeline import CompactionPolicy

KEY_HELP = """The agent needs an Anthropic API key, read from the environment (never saved, never shown).
Quit (q), set it, and start again:

    export ANTHROPIC_API_KEY=sk-ant-...
    export ANTHROPIC_BASE_URL=https://...      (optional: any Messages-compatible endpoint)
    context-inspector open --agent --model M   (optional: the model; default $ANTHROPIC_MODEL, else {model})

Everything else in the inspector works without a key."""


@dataclass(slots=True)
class AgentOptions:
    """How the app's agent runs (from `open --agent ...`); the compaction policy and window come from the app's
    settings, so the context bar's thresholds are the ones the agent compacts at."""

    model: str | None = None  # None: $ANTHROPIC_MODEL, else the provider's default
    cwd: Path | None = None  # where the tools run (None: the current directory)
    session: Path | None = None  # the agent file the app was opened on: continued in place
    compact_at: int | None = None  # compact above this many tokens instead of the policy's threshold
    compact: bool = True
    open_view: bool = False  # start on the Agent view

    @property
    def model_name(self) -> str:
        """Imports the SDK (through the agent package): call it off the UI thread or when the agent is wanted."""
        from inspector.core.agent.provider import DEFAULT_MODEL

        return self.model or os.environ.get("ANTHROPIC_MODEL") or DEFAULT_MODEL

    @property
    def workdir(self) -> Path:
        return Path(self.cwd or os.getcwd()).expanduser().resolve()


def has_key() -> bool:
    return bool(os.environ.get("ANTHROPIC_API_KEY", "").strip())


def key_help(default_model: str) -> str:
    return KEY_HELP.format(model=default_model)


def fresh_session(options: AgentOptions, path: Path | None = None) -> Session:
    """An empty agent session for `options`, to be written to `path` (default: the `--agent FILE`, else a new
    per-user data file). Its system prompt and tools are there before the first turn, so the prompt view and the
    bar show them."""
    from inspector.core.agent.tools import TOOLS
    from inspector.core.agent.writer import default_session_path
    from inspector.core.prompt.builder import assemble

    path = path or options.session or default_session_path()
    return Session(source=str(path), format="neutral", cwd=str(options.workdir),
                   system=assemble(options.workdir).text, models=[options.model_name],
                   tools=[ToolSchema(t.name, t.description, t.input_schema) for t in TOOLS])


def agent_file(shown: Session, options: AgentOptions) -> tuple[Path, bool]:
    """Where the agent writes when it continues `shown`, and whether that is in place (the file already holds
    `shown`). In place only for a neutral file the agent owns: not yet written, in the per-user data directory, or
    the one `open --agent FILE` named; anything else goes to a new per-user data file."""
    from inspector.core.agent.writer import default_session_path

    source = Path(shown.source) if shown.source else None
    if shown.format == "neutral" and source is not None:
        if not source.exists():
            return source, False
        own = [user_data_dir() / "sessions", *([options.session] if options.session else [])]
        resolved = source.resolve()
        if any(resolved == p.resolve() or resolved.is_relative_to(p.resolve()) for p in own):
            return source, True
    return default_session_path(), False


def policy_for(options: AgentOptions, policy: str, window: int | None, micro: str) -> CompactionPolicy | None:
    """The agent's compaction policy under the app's settings; None when compaction is off. ValueError (with the
    reason) when the settings give no usable threshold."""
    from inspector.core.agent.config import compaction_policy

    if not options.compact:
        return None
    return compaction_policy(options.model_name, policy, window, options.compact_at,
                             micro if micro in ("snip", "clear", "clear_tool_uses") else None)


class AgentEvent(TMessage):
    """One event of the loop; `snapshot` is the session after it when the event changed the conversation.

    Streamed pieces are merged in the worker: while the UI has not taken a posted piece yet, the next pieces of the
    same kind join it (`join`) instead of being posted. A fast stream then costs the UI one message per batch it can
    take, rather than one wake-up of its event loop per piece, each waiting for the GIL the streaming worker holds;
    nothing waits to be merged, so the first piece is on its way at once."""

    _lock = threading.Lock()  # the worker joining pieces vs the UI taking them

    def __init__(self, event: Event, snapshot: Session | None = None) -> None:
        super().__init__()
        self._event, self.snapshot = event, snapshot
        self._more: list[str] = []  # text of pieces joined after `_event`, not yet taken
        self._taken = False

    def join(self, piece: Event) -> bool:
        """Add `piece` (in the worker) if this is a piece of its kind the UI has not taken yet."""
        with self._lock:
            if self._taken or type(piece) is not type(self._event):
                return False
            self._more.append(piece.text)  # type: ignore[attr-defined]
            return True

    @property
    def event(self) -> Event:
        """The event, with every piece joined so far (in the UI: no piece joins it after this)."""
        with self._lock:
            self._taken = True
            if self._more:
                first = self._event
                self._event = type(first)("".join([first.text, *self._more]))  # type: ignore[attr-defined,call-arg]
                self._more = []
            return self._event


class AgentReady(TMessage):
    """The agent of the panel exists (built in the worker: the SDK import and the client take a moment)."""

    def __init__(self, agent: AgentSession) -> None:
        super().__init__()
        self.agent = agent


class TurnEnded(TMessage):
    """The worker is done with the turn (after TurnDone, or with `error` when the turn could not run or broke
    off)."""

    def __init__(self, error: str | None = None) -> None:
        super().__init__()
        self.error = error


@dataclass(slots=True)
class AgentStart:
    """What the UI decided before the first turn: the session to continue, the file, the policy, the cancel token
    (the UI's, so Esc works before the agent exists)."""

    shown: Session
    options: AgentOptions
    path: Path
    in_place: bool
    policy: CompactionPolicy | None
    cancel: Cancel


class AgentSession:
    """The agent of one session screen: config, the loop's state and the writer, across turns."""

    def __init__(self, config: AgentConfig, state: Session, system: str, path: Path, previous: Session | None) -> None:
        self.config, self.state, self.system, self.path = config, state, system, path
        self._previous = previous
        self.writer: SessionWriter | None = None  # opened by the first turn, in the worker (a copied history can
        self._lock = threading.Lock()             # be long to write)
        self._busy = self._closed = False
        self.outside_imports: list[Path] = []  # CLAUDE.md imports from outside the project: asked about once

    @classmethod
    def start(cls, plan: AgentStart) -> AgentSession:
        """Continue `plan.shown` (MissingApiKey without a key)."""
        from inspector.core.agent.config import AgentConfig
        from inspector.core.agent.provider import AnthropicProvider

        options, shown = plan.options, plan.shown
        provider = AnthropicProvider.from_env(options.model_name)
        config = AgentConfig(provider, options.workdir, model=options.model_name, compaction=plan.policy,
                             cancel=plan.cancel)
        header = fresh_session(options, plan.path)
        models = [m for m in shown.models if m not in header.models] + header.models
        state = shown.copy_with(source=str(plan.path), format="neutral", messages=list(shown.messages),
                                requests=list(shown.requests), compactions=list(shown.compactions), warnings=[],
                                cwd=header.cwd, system=header.system, tools=header.tools, models=models)
        agent = cls(config, state, header.system or "", plan.path, shown if plan.in_place else None)
        from inspector.core.prompt.builder import assemble

        agent.outside_imports = assemble(options.workdir).outside
        return agent

    def set_policy(self, policy: CompactionPolicy | None) -> None:
        """Settings changed between turns: the compactor takes the new policy and keeps its breaker."""
        if self.config.compactor is not None and policy is not None:
            self.config.compactor.policy = policy

    def turn(self, text: str, post: Callable[[TMessage], object]) -> None:
        """Run one user turn (in the worker thread), posting every event."""
        from inspector.core.agent.events import CompactionFinished, MessageAdded, PermissionAsked, Piece
        from inspector.core.agent.loop import run
        from inspector.core.agent.writer import SessionWriter

        with self._lock:
            if self._closed:
                return
            self._busy = True
        try:
            self._ask_outside_imports(post)
            if self.writer is None:
                self.writer = SessionWriter(self.path, self.state, self._previous)
            piece: AgentEvent | None = None  # the last piece posted: the next ones join it until the UI takes it
            with closing(run(text, self.state, self.config, self.system)) as events:
                for event in self.writer.tee(events):
                    if isinstance(event, Piece):
                        if piece is None or not piece.join(event):
                            piece = AgentEvent(event)
                            post(piece)
                        continue
                    piece = None  # later pieces come after this event: never joined to an earlier message
                    changed = isinstance(event, (MessageAdded, CompactionFinished))
                    post(AgentEvent(event, self.snapshot() if changed else None))
                    if isinstance(event, PermissionAsked) and event.decision is None:
                        event.wait_reply(self.config.cancel)  # the panel's prompt replies, or Esc cancels
        finally:
            with self._lock:
                self._busy = False
                if self._closed and self.writer is not None:
                    self.writer.close()

    def _ask_outside_imports(self, post: Callable[[TMessage], object]) -> None:
        """Before the first turn: may the prompt sent include the CLAUDE.md imports from outside the project? The
        saved prompt (`state.system`) never does."""
        from inspector.core.agent.events import Decision
        from inspector.core.agent.permissions import imports_question
        from inspector.core.prompt.builder import assemble

        if not self.outside_imports:
            return
        asked = imports_question(self.outside_imports)
        self.outside_imports = []
        post(AgentEvent(asked))
        if asked.wait_reply(self.config.cancel) in (Decision.ALLOW_ONCE, Decision.ALLOW_SESSION):
            self.system = assemble(self.config.cwd, allow_outside=True).text

    def snapshot(self) -> Session:
        s = self.state
        return s.copy_with(messages=list(s.messages), requests=list(s.requests),
                           compactions=list(s.compactions), models=list(s.models))

    def close(self) -> None:
        """Close the file now, or when the running turn ends (the screen went away: it was cancelled)."""
        with self._lock:
            self._closed = True
            if not self._busy and self.writer is not None:
                self.writer.close()

    @property
    def breaker(self) -> str:
        compactor = self.config.compactor
        return "compaction off" if compactor is None else compactor.breaker.status()

    @property
    def breaker_open(self) -> bool:
        return self.config.compactor is not None and self.config.compactor.breaker.open


def run_turn(agent: AgentSession | None, plan: AgentStart | None, text: str, post: Callable[[TMessage], object]) -> None:
    """The worker's body: build the agent on the first turn (`plan`), run the turn, always post TurnEnded last."""
    from inspector.core.agent.provider import MissingApiKey

    error = None
    try:
        if agent is None:
            assert plan is not None
            agent = AgentSession.start(plan)
            post(AgentReady(agent))
        agent.turn(text, post)
    except MissingApiKey:
        error = "no API key: see above"
    except LoadError as exc:  # the session file cannot be written ("cannot write PATH: REASON"): one line as is
        error = str(exc)
    except Exception as exc:  # a full disk, an unwritable file, a bug: the turn ends, the app stays usable
        error = f"{type(exc).__name__}: {exc}"
    finally:
        post(TurnEnded(error))
