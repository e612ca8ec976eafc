"""context-inspector: see what is really in an LLM agent's context window, and why it fills."""

__version__ = "0.1.0"
