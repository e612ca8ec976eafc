"""The subagents a session started: each one's own window (a file of its own), and where the main session started it.

A loader lists the windows' files (`Session.subagents`) and, where the format records it, which tool call started
each (`Session.spawns`: Claude Code's Agent / Task calls, whose result names the subagent's `agentId`, its window
being `agent-<agentId>.jsonl`). A subagent whose start the session records but whose file is not there (a copied
session) is listed too, without a file; a file no call is known to have started is listed without a start.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from inspector.core.formats.agent_stores import KIMI_CODE_WIRE
from inspector.core.model import Session

PREFIX = "agent-"


@dataclass(frozen=True, slots=True)
class Subagent:
    """One subagent: `path` its window (None: not found beside the session), `agent_id` its id where known,
    `index` the main session's message whose tool call started it (None: not recorded), `what` what that call
    asked for ("Explore: Count lines"), else the file's name."""

    number: int
    path: str | None
    agent_id: str | None
    index: int | None
    tool_id: str | None
    what: str


def subagents(session: Session, look: bool = True, call_at: Mapping[str, int] | None = None) -> list[Subagent]:
    """The subagents of `session`, in the order it started them (those with no recorded start after).
    `look`: also find windows written since the session was loaded (a live session's new subagent). `call_at`
    (tool id -> the message holding the call, as figures know it) spares a walk of every message."""
    files = list(session.subagents)
    if look and session.format == "claude-code" and Path(session.source).is_file():
        from inspector.core.formats import subagent_files

        files += [f for f in subagent_files(Path(session.source)) if f not in files]
    by_agent = {_agent_id(f): f for f in files}
    calls = _calls(session, call_at)
    found: list[tuple[int | None, str | None, str | None, str | None, str]] = []
    for tool_id, agent in session.spawns.items():
        index, what = calls.get(tool_id, (None, ""))
        found.append((index, by_agent.pop(agent, None), agent, tool_id, what))
    found.sort(key=lambda f: (f[0] is None, f[0] or 0))
    found += [(None, f, agent, None, "") for agent, f in by_agent.items()]
    return [Subagent(n, path, agent, index, tool_id, what or (Path(path).name if path else f"agent {agent}"))
            for n, (index, path, agent, tool_id, what) in enumerate(found, 1)]


def spawned_at(agents: list[Subagent]) -> dict[int, list[Subagent]]:
    """Message index -> the subagents its tool calls started."""
    out: dict[int, list[Subagent]] = {}
    for a in agents:
        if a.index is not None:
            out.setdefault(a.index, []).append(a)
    return out


def _agent_id(path: str) -> str:
    """The agent id a window's file is named for: `agent-<id>.jsonl` (Kimi Code: `agents/<id>/wire.jsonl`), else the
    file's stem."""
    if Path(path).name == KIMI_CODE_WIRE.name:
        return Path(path).parent.name
    stem = Path(path).name.split("#")[-1].removesuffix(".jsonl")
    return stem.removeprefix(PREFIX)


def _calls(session: Session, call_at: Mapping[str, int] | None) -> dict[str, tuple[int, str]]:
    """tool_use id -> (the message holding the call, what it asked for), for the calls that started subagents."""
    wanted = set(session.spawns)
    out: dict[str, tuple[int, str]] = {}
    if not wanted:
        return out
    msgs = session.messages
    at = range(len(msgs)) if call_at is None else \
        sorted({i for i in map(call_at.get, wanted) if i is not None and i < len(msgs)})
    for i in at:
        for b in msgs[i].tool_uses():
            if b.tool_id in wanted:
                args = b.input
                args = args if isinstance(args, dict) else {}
                kind, text = args.get("subagent_type"), args.get("description") or args.get("prompt")
                what = ": ".join(str(x) for x in (kind, text) if isinstance(x, str) and x)
                out[b.tool_id] = (i, what[:200])
    return out
