"""Who may run what: read-only tools run freely inside the working directory; writes and shell commands ask; any
path outside the working directory (and the extra directories the user added) asks, whatever the tool.

`check` returns None (go ahead) or an unanswered PermissionAsked. The loop puts the question to the consumer (the
app's prompt) or, when `auto` is set, answers it without asking (headless `run`). ALLOW_SESSION records the
question's scope, so the same kind of call is not asked again in this session: a tool inside the working
directory, or a tool under one outside directory. Paths are confined; a shell command is not (it can touch
anything the user can), which is why bash always asks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspector.core.agent.events import Decision, PermissionAsked
from inspector.core.agent.tools import Tool, ToolContext, ToolError, resolve


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
        if not isinstance(args, dict):
            return []
        paths = []
        for key in tool.path_keys:
            try:
                paths.append(resolve(ctx, args[key]))
            except (KeyError, TypeError, ValueError, ToolError):  # missing or unusable: the tool reports it
                continue
        return [p for p in paths if not self.inside(p)]

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


def denial_text(asked: PermissionAsked) -> str:
    """The error result a denied call returns to the model."""
    return f"Permission denied: {asked.reason}. The user did not allow this call; do not retry it unchanged."
