"""The agent that runs in place: a loop yielding typed events, the Anthropic provider, tools with permissions, and
the session writer. `run(user_message, state, config, system_prompt)` is the entry point."""

from inspector.core.agent.config import AgentConfig
from inspector.core.agent.loop import run

__all__ = ["AgentConfig", "run"]
