"""Who may run what: read-only tools run freely inside the working directory; writes and shell commands ask; any
path outside the working directory (and the extra directories the user added) asks, whatever the tool.

`check` returns None (go ahead) or an unanswered PermissionAsked. The loop puts the question to the consumer (the
app's prompt) or, when `auto` is set, answers it without asking (headless `run`). ALLOW_SESSION records the
question's scope, so the same kind of call is not asked again in this session: a tool inside the working
directory, or a tool under one outside directory. Paths are confined; a shell command is not (it can touch
anything the user can), which is why bash always asks.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspector.core.agent.events import Decision, PermissionAsked
from inspector.core.agent.tools import TOOLS_BY_NAME, Tool, ToolContext, ToolError, resolve
from inspector.core.inert import INVISIBLE
from inspector.core.secrets import redact

FIELD_CAP = 20_000  # characters of one input field a question shows; the rest is counted
SPACE_RUN = 8  # spaces in a row shown as a count, so padding cannot push a command's tail out of sight
Segment = tuple[str, str]  # (text, kind): kind "label", "text" or "mark" (what we drew, not what the model sent)
Line = list[Segment]


@dataclass
class Permissions:
    roots: list[Path]
    auto: Callable[[PermissionAsked], Decision] | None = None
    _tools_allowed: set[str] = field(default_factory=set, init=False, repr=False)
    _dirs_allowed: set[tuple[str, Path]] = field(default_factory=set, init=False, repr=False)

    def __post_init__(self) -> None:
        """`roots[0]` is the working directory; the others are directories the user added."""
        self.roots = [Path(r).expanduser().resolve() for r in self.roots]

    def inside(self, path: Path) -> bool:
        return any(path == root or path.is_relative_to(root) for root in self.roots)

    def check(self, tool: Tool, args: Any, ctx: ToolContext, tool_id: str = "") -> PermissionAsked | None:
        outside = self._outside_paths(tool, args, ctx)
        asked = self._ask(tool, args, ctx, tool_id, outside)
        if asked is not None:
            asked.targets = self._targets(tool, args, ctx)
        return asked

    def _ask(self, tool: Tool, args: Any, ctx: ToolContext, tool_id: str,
             outside: list[Path]) -> PermissionAsked | None:
        if outside:
            if all(self._dir_granted(tool.name, p) for p in outside):
                return None
            where = _dir_of(outside[0])
            listed = ", ".join(str(p) for p in outside)
            return PermissionAsked(tool_id, tool.name, args,
                                   reason=f"{listed} is outside the working directory {self.roots[0]}",
                                   scope=f"{tool.name} under {where}", directory=str(where))
        if tool.read_only or tool.name in self._tools_allowed:
            return None
        what = "runs a shell command" if tool.name == "bash" else "changes files"
        return PermissionAsked(tool_id, tool.name, args, reason=f"{tool.name} {what}",
                               scope=f"{tool.name} in {self.roots[0]}")

    def decide(self, asked: PermissionAsked) -> Decision:
        """The answer to `asked`: the consumer's reply, else the automatic policy, else DENY. Records session
        grants."""
        decision = asked.decision or (self.auto(asked) if self.auto else Decision.DENY)
        asked.decision = decision
        if decision is Decision.ALLOW_SESSION:
            if asked.directory is not None:
                self._dirs_allowed.add((asked.tool_name, Path(asked.directory)))
            else:
                self._tools_allowed.add(asked.tool_name)
        return decision

    def _outside_paths(self, tool: Tool, args: Any, ctx: ToolContext) -> list[Path]:
        return [Path(p) for p in self._targets(tool, args, ctx).values() if not self.inside(Path(p))]

    @staticmethod
    def _targets(tool: Tool, args: Any, ctx: ToolContext) -> dict[str, str]:
        """The call's path fields, resolved (missing or unusable ones left out: the tool reports them)."""
        if not isinstance(args, dict):
            return {}
        found = {}
        for key in tool.path_keys:
            try:
                found[key] = str(resolve(ctx, args[key]))
            except (KeyError, TypeError, ValueError, ToolError):
                continue
        return found

    def _dir_granted(self, tool_name: str, path: Path) -> bool:
        return any(name == tool_name and (path == d or path.is_relative_to(d)) for name, d in self._dirs_allowed)


def _dir_of(path: Path) -> Path:
    return path if path.is_dir() else path.parent


def headless(allow_writes: bool) -> Callable[[PermissionAsked], Decision]:
    """The policy of `run`: writes and shell commands inside the working directory run with --allow-writes;
    everything else that would ask is denied (nobody is there to answer)."""

    def answer(asked: PermissionAsked) -> Decision:
        return Decision.ALLOW_ONCE if allow_writes and asked.directory is None else Decision.DENY

    return answer


def imports_question(paths: list[Path]) -> PermissionAsked:
    """The question the app asks before a first turn when the project's CLAUDE.md imports files from outside it
    (headless, `run --allow-outside-imports` answers it)."""
    return PermissionAsked("", "CLAUDE.md imports", {"files": "\n".join(str(p) for p in paths)},
                           reason="the project's CLAUDE.md imports files from outside the project: their text "
                                  "would be sent to the model (never saved in the session file)",
                           scope="these imports, for this agent session")


def denial_text(asked: PermissionAsked) -> str:
    """The error result a denied call returns to the model."""
    return f"Permission denied: {asked.reason}. The user did not allow this call; do not retry it unchanged."


# --- what a question shows ------------------------------------------------------------------------------------

_SHOWN = re.compile(rf"[\x00-\x09\x0b-\x1f\x7f-\x9f\ud800-\udfff]|{INVISIBLE.pattern}| {{{SPACE_RUN},}}| +$")


def question(asked: PermissionAsked) -> list[Line]:
    """Every field of the call in full (each up to FIELD_CAP characters, the cut marked): the target paths first,
    as given and resolved, then the command, then the rest. Control characters, bidirectional and invisible
    characters, tabs and long runs of spaces are drawn as marks, so nothing in the input can hide or reorder what
    the user reads; keys are redacted."""
    tool = TOOLS_BY_NAME.get(asked.tool_name)
    args = asked.input if isinstance(asked.input, dict) else {"input": asked.input}
    first = [k for k in (*(tool.path_keys if tool else ()), "command") if k in args]
    lines: list[Line] = []
    for key in first + [k for k in args if k not in first]:
        value = args[key]
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
        head: Line = [(f"{key}: ", "label")]
        target = asked.targets.get(key)
        if isinstance(value, str) and key not in first:
            count = value.count("\n") + (not value.endswith("\n"))  # lines as an editor counts them
            head.append((f"{len(value):,} characters, {count:,} line{'s' if count != 1 else ''}", "mark"))
            lines.append(head)
            head = [("  ", "text")]
        body = _field(redact(text))
        lines.append(head + body[0])
        lines += [[("  ", "text"), *line] for line in body[1:]]
        if target is not None and target != value:
            lines[-len(body)].extend([("  → ", "mark"), *_segments(target)])
    return lines


def plain(lines: list[Line]) -> str:
    return "\n".join("".join(text for text, _ in line) for line in lines)


def _field(text: str) -> list[Line]:
    shown, rest = text[:FIELD_CAP], len(text) - FIELD_CAP
    lines = [_segments(part) for part in shown.split("\n")]
    if rest > 0:
        lines[-1].append((f"[… {rest:,} more characters not shown]", "mark"))
    return lines


def _segments(text: str) -> Line:
    out: Line = []
    at = 0
    for match in _SHOWN.finditer(text):
        if match.start() > at:
            out.append((text[at:match.start()], "text"))
        out.append((_mark(match.group()), "mark"))
        at = match.end()
    if at < len(text):
        out.append((text[at:], "text"))
    return out


def _mark(found: str) -> str:
    if found[0] == " ":
        return f"[{len(found)} space{'s' if len(found) > 1 else ''}]"
    c = ord(found)
    if c == 9:
        return "⇥"
    if c < 0x20:
        return chr(0x2400 + c)  # the control pictures: ESC -> ␛, CR -> ␍
    if c == 0x7F:
        return "\u2421"
    return f"<U+{c:04X}>"
