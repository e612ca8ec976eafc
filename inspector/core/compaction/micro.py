"""Microcompaction: shrink old tool results (and optionally tool inputs) without any model call.

Three strategies, each a plan over the current context:
- `snip` (the reference design): old results longer than `max_chars` keep their first half and last quarter of
  max_chars around a `[... N chars snipped ...]` marker.
- `clear` (Claude Code): results of a set of tools, all but the `keep_recent` newest, become a fixed marker.
- `clear_tool_uses` (the Messages API's context editing, done client side): above `trigger` tokens, every tool use
  but the `keep` newest loses its result (and optionally its input), unless that frees less than `clear_at_least`.
Blocks keep their tool ids, so tool_use/tool_result pairing is never broken.
"""

from __future__ import annotations

from dataclasses import dataclass

from inspector.core.gc_pause import gc_paused
from inspector.core.compaction.estimates import Estimates, estimates_for
from inspector.core.compaction.plan import BlockEdit, Plan, microcompact_plan
from inspector.core.estimators import Estimator
from inspector.core.model import EMPTY_INPUT, Block, Message, Session

CLEARABLE_TOOLS: tuple[str, ...] = ("Read", "Bash", "Grep", "Glob", "WebSearch", "WebFetch", "Edit", "Write")
# Each agent's counterparts of Claude Code's list (results that reading, running, searching or fetching again would
# bring back, and edits' confirmations), by the names the agent itself sends (its requests in the lab's fixtures
# and its source). Claude Code's names for any other session (Anthropic requests and captures of Claude Code).
CLEARABLE_BY_FORMAT: dict[str, tuple[str, ...]] = {
    "codex": ("exec_command", "write_stdin", "shell", "local_shell", "apply_patch", "view_image"),
    "gemini-cli": ("read_file", "read_many_files", "run_shell_command", "grep_search", "glob", "list_directory",
                   "web_fetch", "google_web_search", "replace", "write_file"),
    "qwen-code": ("read_file", "read_many_files", "run_shell_command", "grep_search", "glob", "list_directory",
                  "web_fetch", "edit", "write_file"),
    "opencode": ("read", "bash", "grep", "glob", "list", "webfetch", "edit", "write"),
    "neutral": ("read_file", "grep", "glob", "bash", "edit_file", "write_file"),  # our agent's tools
    "copilot": ("view", "bash", "grep", "glob", "edit", "create"),
    "cline": ("read_file", "execute_command", "search_files", "list_files", "replace_in_file", "write_to_file"),
    "roo-code": ("read_file", "execute_command", "search_files", "list_files", "apply_diff", "write_to_file"),
    "cline-sdk": ("read_files", "run_commands", "search_codebase", "fetch_web_content", "editor"),
    "kimi-code": ("Read", "Bash", "Grep", "Glob", "FetchURL", "ReadMediaFile", "Edit", "Write"),
    "kimi": ("ReadFile", "Shell", "Grep", "Glob", "SearchWeb", "FetchURL", "WriteFile", "StrReplaceFile"),
}


def clearable_tools(fmt: str) -> tuple[str, ...]:
    """The tools whose old results a `clear` drops in a session of format `fmt` (Claude Code's list by default)."""
    return CLEARABLE_BY_FORMAT.get(fmt, CLEARABLE_TOOLS)
CLEARED_MARKER = "[Old tool result content cleared]"
# The API's own placeholder text is not published; this one says what happened.
CONTEXT_EDIT_PLACEHOLDER = "[Tool result cleared by context editing]"


@dataclass(frozen=True, slots=True)
class SnipSettings:
    preserve_last_n: int = 6
    max_chars: int = 2000


@dataclass(frozen=True, slots=True)
class ClearSettings:
    tools: tuple[str, ...] = CLEARABLE_TOOLS
    keep_recent: int = 5


@dataclass(frozen=True, slots=True)
class ContextEditSettings:
    """`clear_tool_inputs`: True clears every cleared use's input, a tuple of names only those tools' inputs."""

    trigger: int = 100_000
    keep: int = 3
    clear_at_least: int = 0
    exclude_tools: tuple[str, ...] = ()
    clear_tool_inputs: bool | tuple[str, ...] = False
    placeholder: str = CONTEXT_EDIT_PLACEHOLDER


def result_text(block: Block) -> str:
    """The text a tool_result holds, nested text blocks included."""
    if block.content is None:
        return block.text
    return block.text + "".join(b.text for b in block.content if b.type == "text")


def _replaceable(block: Block, marker: str) -> bool:
    """Whether putting `marker` in place of this result can make it shorter (one already cleared, or shorter than
    the marker, is left alone; the plan drops any edit that saves nothing). Counted without joining the text."""
    return bool(block.content) or len(block.text) > len(marker)


def snip_text(text: str, max_chars: int) -> str | None:
    """The reference design's cut: first max_chars//2 and last max_chars//4 characters around a marker naming how
    many were removed; None when the text is short enough or the cut would not make it shorter."""
    if len(text) <= max_chars:
        return None
    head, tail = text[: max_chars // 2], text[len(text) - max_chars // 4:]
    removed = len(text) - len(head) - len(tail)
    snipped = f"{head}\n[... {removed} chars snipped ...]\n{tail}"
    return snipped if len(snipped) < len(text) else None


@gc_paused()
def plan_snip(session: Session, settings: SnipSettings = SnipSettings(),
              estimates: Estimates | Estimator | str | None = None) -> Plan:
    """Snip long tool results older than the last `preserve_last_n` messages (those stay byte-identical)."""
    est = estimates_for(estimates)
    messages = session.messages
    start = session.context_start
    cutoff = max(start, len(messages) - max(settings.preserve_last_n, 0))
    edits: list[BlockEdit] = []
    for i, block in est.context(session).tools:
        if i >= cutoff:
            break
        if block.type == "tool_result" and (new_text := snip_text(result_text(block), settings.max_chars)):
            edits.append((i, block, new_text))
    return microcompact_plan("snip", session, settings, est, edits, "snipped", True, cutoff,
                             [e[1].tool_id or "" for e in edits], "result(s) snipped")


def tool_names(messages: list[Message]) -> dict[str, str]:
    """tool_use id -> tool name, for the tool_use blocks in `messages`."""
    return {b.tool_id: b.tool_name or "" for m in messages for b in m.blocks if b.type == "tool_use" and b.tool_id}


@gc_paused()
def plan_clear(session: Session, settings: ClearSettings = ClearSettings(),
               estimates: Estimates | Estimator | str | None = None) -> Plan:
    """Replace the results of `settings.tools`, all but the `keep_recent` newest, with Claude Code's marker."""
    est = estimates_for(estimates)
    messages = session.messages
    start = session.context_start
    wanted = set(settings.tools)
    wanted_ids: set[str | None] = set()  # the uses of wanted tools seen so far (a use precedes its result)
    eligible: list[tuple[int, Block]] = []
    for tool in est.context(session).tools:
        b = tool[1]
        if b.type == "tool_use":
            if b.tool_name in wanted and b.tool_id:
                wanted_ids.add(b.tool_id)
        elif b.tool_id in wanted_ids and (b.content or b.text != CLEARED_MARKER):
            eligible.append(tool)  # (a result already holding the marker is not counted)
    keep = max(settings.keep_recent, 0)
    to_clear = eligible[: len(eligible) - keep] if keep else eligible
    protected = eligible[len(to_clear)][0] + 1 if len(to_clear) < len(eligible) else len(messages)
    if not to_clear:
        protected = start
    edits: list[BlockEdit] = [(i, b, CLEARED_MARKER) for i, b in to_clear if _replaceable(b, CLEARED_MARKER)]
    return microcompact_plan("clear", session, settings, est, edits, "cleared", False, protected,
                             [e[1].tool_id or "" for e in edits], "result(s) cleared",
                             note=_nothing_cleared(est.context(session).tools, wanted, len(eligible), keep)
                             if not to_clear else "")


def _nothing_cleared(tools: list[tuple[int, Block]], wanted: set[str], eligible: int, keep: int) -> str:
    """Why a clear changes nothing: every result of its tools is among the newest kept, or none of its tools ran
    (naming the tools that did)."""
    ran = {b.tool_name for _, b in tools if b.type == "tool_use" and b.tool_name}
    if eligible:
        return (f"{eligible} {_names(ran & wanted)} result{'s' if eligible > 1 else ''}, all among the {keep} newest "
                "kept")
    if not ran:
        return "no tool calls in the context"
    return (f"no results of the tools it clears; this session's {_names(ran)} "
            f"{'is not one of them' if len(ran) == 1 else 'are not among them'}")


def _names(names: set[str], shown: int = 3) -> str:
    first = sorted(names)[:shown]
    return ", ".join(first) + (f" and {len(names) - shown} more" if len(names) > shown else "")


@gc_paused()
def plan_clear_tool_uses(session: Session, settings: ContextEditSettings = ContextEditSettings(),
                         estimates: Estimates | Estimator | str | None = None,
                         context_tokens: int | None = None) -> Plan:
    """The Messages API's `clear_tool_uses_20250919`, planned locally.

    `context_tokens` is the figure compared with `trigger` (a measured one when the caller has it); by default the
    estimated size of the current context.
    """
    est = estimates_for(estimates)
    start = session.context_start
    tokens = est.context(session).tokens
    size = sum(tokens) if context_tokens is None else context_tokens
    if size < settings.trigger:
        return microcompact_plan("clear_tool_uses", session, settings, est, [], "cleared", False, start, [], "",
                                 tokens, note=f"context {size:,} tokens is below the trigger {settings.trigger:,}:"
                                              " nothing cleared")
    excluded = set(settings.exclude_tools)
    placeholder = settings.placeholder
    uses: list[tuple[int, Block]] = []
    results: dict[str | None, tuple[int, Block]] = {}
    for tool in est.context(session).tools:
        b = tool[1]
        if b.type == "tool_use":
            if b.tool_name not in excluded:
                uses.append(tool)
        else:
            results[b.tool_id] = tool
    keep = max(settings.keep, 0)
    to_clear = uses[: len(uses) - keep] if keep else uses
    inputs = settings.clear_tool_inputs
    input_tools = inputs if isinstance(inputs, tuple) else ()
    edits: list[BlockEdit] = []
    cleared: list[str] = []
    for i, use in to_clear:
        hit = results.get(use.tool_id)
        changed = hit is not None and _replaceable(hit[1], placeholder)
        if changed:
            edits.append((hit[0], hit[1], placeholder))  # type: ignore[index]
        if (inputs is True or use.tool_name in input_tools) and use.input_text not in (EMPTY_INPUT, None):
            edits.append((i, use, None))
            changed = True
        if changed:
            cleared.append(use.tool_id or "")
    protected = max(e[0] for e in edits) + 1 if edits else start
    plan = microcompact_plan("clear_tool_uses", session, settings, est, edits, "cleared", False, protected, cleared,
                             "block(s) cleared", tokens)
    if plan.saved < settings.clear_at_least:
        return microcompact_plan("clear_tool_uses", session, settings, est, [], "cleared", False, start, [], "",
                                 tokens, note=f"would free {plan.saved:,} tokens, less than clear_at_least"
                                              f" {settings.clear_at_least:,}: nothing cleared")
    return plan
