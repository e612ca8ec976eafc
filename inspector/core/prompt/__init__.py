"""System prompt assembly and inspection: sections with sources and tokens, CLAUDE.md discovery, memory, lint.

The agent loop calls `build_system_prompt(cwd=...)` and sends `prompt_text(sections)`; the inspector shows the same
sections with where each came from and what it costs, and `lint` says which instructions belong in code. A loaded
session's prompt (recorded, measured or reconstructed) is `session_view.session_prompt(session)`, kept out of this
import so the agent loop does not load token accounting it does not use.
"""

from inspector.core.prompt.builder import Prompt, Section, assemble, build_system_prompt, prompt_text
from inspector.core.prompt.lint import Finding, lint
from inspector.core.prompt.memory import default_memory_path, remember
from inspector.core.prompt.template import DEFAULT_TEMPLATE, TemplateError

__all__ = ["DEFAULT_TEMPLATE", "Finding", "Prompt", "Section", "TemplateError", "assemble", "build_system_prompt",
           "default_memory_path", "lint", "prompt_text", "remember"]
