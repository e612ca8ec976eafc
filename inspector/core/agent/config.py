"""How one agent session runs: model, provider, tools, permissions, limits, and the cancel token.

`AgentConfig.from_env` is what the CLI and the app use; tests build the config directly with a provider pointed at
the local test server.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from msgspec import structs

from inspector.core.agent.cancel import Cancel
from inspector.core.agent.permissions import Permissions
from inspector.core.agent.provider import DEFAULT_MODEL, AnthropicProvider
from inspector.core.agent.tools import DEFAULT_BASH_TIMEOUT, DEFAULT_OUTPUT_CAP, TOOLS, Tool
from inspector.core.compaction.micro import ClearSettings
from inspector.core.compaction.pipeline import MICRO_STRATEGIES, CompactionPolicy, Compactor
from inspector.core.limits import max_output, window_info
from inspector.core.model import Session, ToolSchema
from inspector.core.tokens import account
DEFAULT_MAX_TOKENS = 32_000  # output tokens per response, or the model's maximum when lower
DEFAULT_MAX_ITERATIONS = 200  # model calls in one user turn before the loop stops by itself


@dataclass
class AgentConfig:
    """`cwd` is the working directory (tools run there; permissions confine paths to it and their extra roots).
    `compaction` is when and how to compact (None: never); the `compactor` built from it keeps its circuit breaker
    for the whole session, across turns, and writes summaries through the provider with this model and cancel."""

    provider: AnthropicProvider
    cwd: Path
    model: str = DEFAULT_MODEL
    max_tokens: int | None = None
    tools: tuple[Tool, ...] = TOOLS
    permissions: Permissions | None = None
    cancel: Cancel = field(default_factory=Cancel)
    bash_timeout: float = DEFAULT_BASH_TIMEOUT
    output_cap: int = DEFAULT_OUTPUT_CAP
    max_iterations: int = DEFAULT_MAX_ITERATIONS
    thinking_budget: int | None = None
    prompt_cache: bool = True
    compaction: CompactionPolicy | None = None
    compactor: Compactor | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.cwd = Path(self.cwd).expanduser().resolve()
        if self.max_tokens is None:
            self.max_tokens = min(max_output(self.model), DEFAULT_MAX_TOKENS)
        if self.permissions is None:
            self.permissions = Permissions([self.cwd])
        if self.compaction is not None:
            self.compactor = Compactor(self.compaction, provider=self.provider.bound(self.model, self.cancel),
                                       measure=context_figure)

    def new_session(self, system_prompt: str, source: str = "") -> Session:
        """An empty session for this configuration: what the session file's header records."""
        return Session(source=source, format="neutral", cwd=str(self.cwd), system=system_prompt,
                       tools=[ToolSchema(t.name, t.description, t.input_schema) for t in self.tools],
                       models=[self.model])

    @classmethod
    def from_env(cls, cwd: Path | str | None = None, model: str | None = None, **kwargs: object) -> AgentConfig:
        """Provider from ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL (MissingApiKey without a key); model from the
        argument, else ANTHROPIC_MODEL, else DEFAULT_MODEL."""
        model = model or os.environ.get("ANTHROPIC_MODEL") or DEFAULT_MODEL
        return cls(provider=AnthropicProvider.from_env(model), cwd=Path(cwd or os.getcwd()), model=model,
                   **kwargs)  # type: ignore[arg-type]


def compaction_policy(model: str, policy: str = "reference", window: int | None = None,
                      threshold: int | None = None, micro: str | None = "snip") -> CompactionPolicy:
    """When the agent compacts: above `threshold` tokens when given, else at the auto-compact threshold of the
    limits policy for the model's window (reference: 70% of the window less the output reserve). `micro` is the
    microcompaction tried before a summary (None: straight to the summary). ValueError for bad values."""
    if threshold is None:
        threshold = window_info(None, policy, window, model=model).thresholds.autocompact
    elif threshold <= 0:
        raise ValueError("the compaction threshold must be a positive number of tokens")
    if micro is not None and micro not in MICRO_STRATEGIES:
        raise ValueError(f"unknown microcompaction {micro!r}; choose from {', '.join(MICRO_STRATEGIES)}")
    # `clear` picks results by tool name: Claude Code's by default, ours here
    settings = ClearSettings(tools=tuple(t.name for t in TOOLS)) if micro == "clear" else None
    return CompactionPolicy(threshold, micro=micro, micro_settings=settings)  # type: ignore[arg-type]


def context_figure(session: Session) -> int:
    """What compaction decisions use: the last measured context plus the estimate of everything since
    (`account(...).current_context`), taken from the current window alone when the window has usage.

    The loop measures before every model call, in the app and in `context-inspector run` alike; accounting for a
    whole 10,000-message history took 170 ms of each, the window alone takes a few ms however long the history is.
    The figure is the same to a few tokens: only the estimate of the messages after the last response differs, its
    ratios fitted on this window's usage rather than the whole session's. Without a full compaction, or without
    usage since the last one (the prefix is then derived from earlier windows): the whole session's accounting."""
    start = session.context_start
    requests = session.requests
    first = len(requests)
    while first > 0 and requests[first - 1].seen_start == start:
        first -= 1
    if start == 0 or first == len(requests):
        return account(session, resumable=False).current_context
    window = session.copy_with(
        messages=session.messages[start:],
        requests=[structs.replace(r, message_index=r.message_index - start, seen_start=0, seen_end=r.seen_end - start)
                  for r in requests[first:]],
        compactions=[replace(c, index=c.index - start) for c in session.compactions
                     if c.kind == "microcompact" and c.index >= start])
    return account(window, resumable=False).current_context
