"""Categories for a `/context`-style breakdown of what fills the window.

Keys are stable identifiers (the report's JSON and the app's stacked bar use them); `LABELS` are for display.
Tool results are split per tool name as `tool_results:<name>`. Accounting (`tokens.py`) files every block under one
of these; a message's `category` is the one holding most of its tokens.
"""

from __future__ import annotations

from itertools import chain, compress, repeat
from operator import attrgetter, eq

from inspector.core.model import Block, Message

SYSTEM_TOOLS = "system_tools"
SUMMARIZED = "summarized_conversation"  # the prefix of a compaction request: the conversation it summarizes
MEMORY = "memory"
USER_PROMPTS = "user_prompts"
INJECTED = "injected"
REMINDERS = "system_reminders"
ASSISTANT_TEXT = "assistant_text"
THINKING = "thinking"
TOOL_CALLS = "tool_calls"
TOOL_RESULTS = "tool_results"
COMPACTION_SUMMARY = "compaction_summary"
MEDIA = "media"
UNRECORDED = "unrecorded"
FREE = "free"
RESERVED = "reserved"
PROVISIONAL = "provisional"  # follow mode, before the exact figures: everything since a new compaction
NOT_READ = "not_read"  # a preview of a session's end: the prefix and the history before it, measured as one

LABELS: dict[str, str] = {
    SYSTEM_TOOLS: "system prompt and tools",
    SUMMARIZED: "summarized conversation (from the cache)",
    MEMORY: "memory files",
    USER_PROMPTS: "user prompts",
    INJECTED: "injected by the harness",
    REMINDERS: "system-reminders",
    ASSISTANT_TEXT: "assistant text",
    THINKING: "thinking",
    TOOL_CALLS: "tool calls",
    TOOL_RESULTS: "tool results",
    COMPACTION_SUMMARY: "compaction summary",
    MEDIA: "images and documents",
    UNRECORDED: "unrecorded (not in the transcript)",
    FREE: "free",
    RESERVED: "reserved (output and compaction buffer)",
    PROVISIONAL: "since the compaction (provisional)",
    NOT_READ: "system, tools and history not read yet",
}

# Markers of memory files (CLAUDE.md, AGENTS.md) in text the harness injects as a message.
_MEMORY_MARKERS = ("Contents of ", "# claudeMd", "CLAUDE.md", "AGENTS.md")


# How Claude Code's summary request asks (its compaction subagent's transcript holds only this prompt and the answer;
# the conversation it summarizes went to the API before it, from the prompt cache).
SUMMARY_REQUEST = "Your task is to create a detailed summary of the conversation so far"


def prefix_key(session) -> str:
    """The category of the session's measured prefix: the system prompt and tools, or, in a compaction request, the
    conversation being summarized, which the file does not hold."""
    for m in session.messages[session.context_start:]:
        if m.kind == "prompt" and m.role == "user":
            return SUMMARIZED if m.text().lstrip().startswith(SUMMARY_REQUEST) else SYSTEM_TOOLS
    return SYSTEM_TOOLS


def label(category: str) -> str:
    if category.startswith(TOOL_RESULTS + ":"):
        return f"tool results: {category.split(':', 1)[1]}"
    return LABELS.get(category, category)


def tool_names(messages: list[Message]) -> dict[str, str]:
    """tool_use id -> tool name, so results can be filed under the tool that produced them (C-level passes over
    every block: accounting asks it of whole sessions)."""
    blocks = list(chain.from_iterable(map(attrgetter("blocks"), messages)))
    uses = list(compress(blocks, map(eq, map(attrgetter("type"), blocks), repeat("tool_use"))))
    ids = list(map(attrgetter("tool_id"), uses))
    names = list(map(attrgetter("tool_name"), uses))
    if not all(ids) or not all(names):
        return {b.tool_id: b.tool_name or "?" for b in uses if b.tool_id}
    return dict(zip(ids, names))


def result_ids(messages: list[Message]) -> set[str]:
    """The tool_use ids the tool results of `messages` answer."""
    return {b.tool_id for m in messages for b in m.blocks if b.type == "tool_result" and b.tool_id}


_RESULT_KEYS: dict[str, str] = {}
SUMMARY_KINDS = frozenset(("compact_summary", "summary_ack"))  # messages whose every block is COMPACTION_SUMMARY


def result_key(name: str) -> str:
    """The category of a result of tool `name`."""
    key = _RESULT_KEYS.get(name)
    if key is None:
        key = f"{TOOL_RESULTS}:{name}"
        if len(_RESULT_KEYS) < 4096:  # one string per tool name, not one per result (names come from files)
            _RESULT_KEYS[name] = key
    return key


def block_category(message: Message, block: Block, names: dict[str, str]) -> str:
    if block.type in ("image", "document"):
        return MEDIA
    if message.kind in SUMMARY_KINDS:
        return COMPACTION_SUMMARY
    if block.type == "tool_use":
        return TOOL_CALLS
    if block.type == "tool_result":
        return result_key(names.get(block.tool_id or "", "?"))
    if block.type in ("thinking", "redacted_thinking"):
        return THINKING
    if message.role == "assistant":
        return ASSISTANT_TEXT
    if message.attachment is not None:  # rendered from a Claude Code attachment: a system-reminder as sent
        return REMINDERS
    if message.kind in ("meta", "system"):
        text = block.text or ""
        return MEMORY if any(marker in text[:2000] for marker in _MEMORY_MARKERS) else INJECTED
    return USER_PROMPTS
