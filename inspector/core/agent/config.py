"""How one agent session runs: model, provider, tools, permissions, limits, and the cancel token.

`AgentConfig.from_env` is what the CLI and the app use; tests build the config directly with a provider pointed at
the local test server.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from inspector.core.agent.cancel import Cancel
from inspector.core.agent.permissions import Permissions
from inspector.core.agent.provider import AnthropicProvider
from inspector.core.agent.tools import DEFAULT_BASH_TIMEOUT, DEFAULT_OUTPUT_CAP, TOOLS, Tool

DEFAULT_MODEL = "claude-sonnet-4-6"
DEFAULT_MAX_TOKENS = 32_000
DEFAULT_MAX_ITERATIONS = 200  # model calls in one user turn before the loop stops by itself


@dataclass
class AgentConfig:
    """`cwd` is the working directory (tools run there, permissions confine paths to it and `extra_dirs`).
    `compaction` is the compaction engine's settings object, or None to never compact."""

    provider: AnthropicProvider
    cwd: Path
    model: str = DEFAULT_MODEL
    max_tokens: int = DEFAULT_MAX_TOKENS
    tools: tuple[Tool, ...] = TOOLS
    permissions: Permissions | None = None
    cancel: Cancel = field(default_factory=Cancel)
    bash_timeout: float = DEFAULT_BASH_TIMEOUT
    output_cap: int = DEFAULT_OUTPUT_CAP
    max_iterations: int = DEFAULT_MAX_ITERATIONS
    thinking_budget: int | None = None
    prompt_cache: bool = True
    compaction: object | None = None

    def __post_init__(self) -> None:
        self.cwd = Path(self.cwd).expanduser().resolve()
        if self.permissions is None:
            self.permissions = Permissions([self.cwd])

    @classmethod
    def from_env(cls, cwd: Path | str | None = None, model: str | None = None, **kwargs: object) -> AgentConfig:
        """Provider from ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL (MissingApiKey without a key); model from the
        argument, else ANTHROPIC_MODEL, else DEFAULT_MODEL."""
        return cls(provider=AnthropicProvider.from_env(), cwd=Path(cwd or os.getcwd()),
                   model=model or os.environ.get("ANTHROPIC_MODEL") or DEFAULT_MODEL, **kwargs)  # type: ignore[arg-type]
