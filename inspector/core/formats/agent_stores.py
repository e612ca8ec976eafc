"""Where Copilot CLI, Cline / Roo Code, the Cline SDK, Kimi CLI and Kimi Code keep their sessions, for the picker and
for PATH.

`STORES` lists, per agent, the store's roots now (each agent's own environment override first, as its source
resolves it) and how to list the sessions in one: `sessions(root)` yields `SessionRef`s, newest write first is the
caller's sort. A missing or unreadable root lists nothing, and a session folder that vanishes while it is listed is
skipped. `session_file(folder)` is the file `load` reads for a session folder of any of these agents.

    copilot    `--config-dir`, else `$COPILOT_HOME`, else `~/.copilot`; sessions `session-state/<id>/events.jsonl`
    cline      VS Code's globalStorage `saoudrizwan.claude-dev/tasks/<id>/` (Code, Code - Insiders, VSCodium,
               Cursor, Windsurf), the CLI before 3.0 `$CLINE_DIR` else `~/.cline/data/tasks/<id>/`
    roo-code   globalStorage `rooveterinaryinc.roo-cline/tasks/<id>/`
    cline-sdk  `$CLINE_SESSION_DATA_DIR`, else `$CLINE_DATA_DIR/sessions`, else `$CLINE_DIR/data/sessions`, else
               `~/.cline/data/sessions`; `<id>/<id>.messages.json`
    kimi       `$KIMI_SHARE_DIR`, else `~/.kimi`; `sessions/<md5 of work dir>/<uuid>/context.jsonl` (the work dir of
               each hash is in `kimi.json`)
    kimi-code  `$KIMI_CODE_HOME`, else `~/.kimi-code`; `sessions/wd_<dir name>_<hash>/session_<uuid>/agents/main/
               wire.jsonl` (the work dir in the session's `state.json`)
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from inspector.core.formats.cline_task import HISTORY, task_folder

EDITORS = ("Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf")
CLINE_EXTENSION = "saoudrizwan.claude-dev"
ROO_EXTENSION = "rooveterinaryinc.roo-cline"


@dataclass(slots=True)
class SessionRef:
    """One listed session: the file `load` reads, its agent, last write and size, and the project when known."""

    path: Path
    agent: str
    mtime: float
    size: int
    project: str = ""


@dataclass(frozen=True, slots=True)
class AgentStore:
    agent: str
    roots: Callable[[], list[Path]]
    sessions: Callable[[Path], Iterator[SessionRef]]


def _home() -> Path:
    return Path.home()


def _env(var: str) -> Path | None:
    value = os.environ.get(var)
    return Path(value).expanduser() if value else None


def _global_storage(extension: str) -> list[Path]:
    """VS Code (and its forks') globalStorage folders of `extension`, on this platform."""
    if sys.platform == "darwin":
        base = _home() / "Library" / "Application Support"
    elif sys.platform == "win32":
        base = _env("APPDATA") or _home() / "AppData" / "Roaming"
    else:
        base = _env("XDG_CONFIG_HOME") or _home() / ".config"
    return [base / editor / "User" / "globalStorage" / extension for editor in EDITORS]


def copilot_roots() -> list[Path]:
    return [(_env("COPILOT_HOME") or _home() / ".copilot") / "session-state"]


def cline_roots() -> list[Path]:
    cli = (_env("CLINE_DIR") or _home() / ".cline") / "data"
    return [root / "tasks" for root in _global_storage(CLINE_EXTENSION)] + [cli / "tasks"]


def roo_roots() -> list[Path]:
    return [root / "tasks" for root in _global_storage(ROO_EXTENSION)]


def cline_sdk_roots() -> list[Path]:
    """`sdk/packages/shared/src/storage/paths.ts` `resolveSessionDataDir`."""
    data = _env("CLINE_DATA_DIR") or (_env("CLINE_DIR") or _home() / ".cline") / "data"
    return [_env("CLINE_SESSION_DATA_DIR") or data / "sessions"]


def kimi_roots() -> list[Path]:
    return [(_env("KIMI_SHARE_DIR") or _home() / ".kimi") / "sessions"]


def kimi_code_roots() -> list[Path]:
    return [(_env("KIMI_CODE_HOME") or _home() / ".kimi-code") / "sessions"]


def _ref(path: Path, agent: str, project: str = "") -> SessionRef | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return SessionRef(path, agent, st.st_mtime, st.st_size, project) if path.is_file() else None


def _children(root: Path) -> Iterable[Path]:
    try:
        return [c for c in root.iterdir() if c.is_dir()]
    except OSError:
        return []


def copilot_sessions(root: Path) -> Iterator[SessionRef]:
    for folder in _children(root):
        ref = _ref(folder / "events.jsonl", "copilot", _workspace_cwd(folder / "workspace.yaml"))
        if ref is not None:
            yield ref


def _workspace_cwd(path: Path) -> str:
    """`cwd:` from Copilot's workspace.yaml (one `key: value` a line; no YAML parser needed for that)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("cwd:"):
                    return line[4:].strip()
    except OSError:
        pass
    return ""


def task_sessions(agent: str) -> Callable[[Path], Iterator[SessionRef]]:
    def sessions(root: Path) -> Iterator[SessionRef]:
        for folder in _children(root):
            ref = _ref(folder / HISTORY, agent)
            if ref is not None:
                try:  # the UI file is written on every step: the task's last activity
                    ref.mtime = max(ref.mtime, (folder / "ui_messages.json").stat().st_mtime)
                except OSError:
                    pass
                yield ref
    return sessions


def cline_sdk_sessions(root: Path) -> Iterator[SessionRef]:
    for folder in _children(root):
        ref = _ref(folder / f"{folder.name}.messages.json", "cline-sdk", _manifest_cwd(folder / f"{folder.name}.json"))
        if ref is not None:
            yield ref


def _manifest_cwd(path: Path) -> str:
    try:
        doc = json.loads(path.read_bytes()[:1 << 20])
    except (OSError, ValueError, RecursionError):
        return ""
    return doc.get("cwd", "") if isinstance(doc, dict) and isinstance(doc.get("cwd"), str) else ""


def kimi_sessions(root: Path) -> Iterator[SessionRef]:
    projects = _kimi_work_dirs(root.parent / "kimi.json")
    for group in _children(root):
        for folder in _children(group):
            ref = _ref(folder / "context.jsonl", "kimi", projects.get(group.name, ""))
            if ref is not None:
                yield ref


def _kimi_work_dirs(path: Path) -> dict[str, str]:
    """md5(work dir) -> work dir, from Kimi's metadata file (`metadata.py`: the sessions folder is named so)."""
    from hashlib import md5

    try:
        doc = json.loads(path.read_bytes()[:1 << 22])
    except (OSError, ValueError, RecursionError):
        return {}
    found = {}
    for wd in doc.get("work_dirs", ()) if isinstance(doc, dict) else ():
        if isinstance(wd, dict) and isinstance(wd.get("path"), str):
            digest = md5(wd["path"].encode()).hexdigest()
            kaos = wd.get("kaos")
            found[digest if kaos in (None, "local") else f"{kaos}_{digest}"] = wd["path"]
    return found


def kimi_code_sessions(root: Path) -> Iterator[SessionRef]:
    for workspace in _children(root):
        yield from _kimi_code_workspace(workspace)


def _kimi_code_workspace(workspace: Path) -> Iterator[SessionRef]:
    for folder in _children(workspace):
        ref = _ref(folder / KIMI_CODE_WIRE, "kimi-code", _manifest_cwd(folder / "state.json"))
        if ref is not None:
            yield ref


def sessions_under(folder: Path) -> list[SessionRef] | None:
    """The sessions of an agent store's folder given as PATH (Kimi Code's home, its `sessions/`, or one workspace
    folder of it), newest first; None when `folder` is no such folder."""
    if (folder / "sessions").is_dir() and (folder / "session_index.jsonl").exists():
        found = list(kimi_code_sessions(folder / "sessions"))
    elif folder.name == "sessions" and (folder.parent / "session_index.jsonl").exists():
        found = list(kimi_code_sessions(folder))
    elif folder.name.startswith("wd_") and folder.parent.name == "sessions":
        found = list(_kimi_code_workspace(folder))
    else:
        return None
    return sorted(found, key=lambda r: r.mtime, reverse=True)


KIMI_CODE_WIRE = Path("agents") / "main" / "wire.jsonl"
STORES: tuple[AgentStore, ...] = (
    AgentStore("copilot", copilot_roots, copilot_sessions),
    AgentStore("cline", cline_roots, task_sessions("cline")),
    AgentStore("roo-code", roo_roots, task_sessions("roo-code")),
    AgentStore("cline-sdk", cline_sdk_roots, cline_sdk_sessions),
    AgentStore("kimi", kimi_roots, kimi_sessions),
    AgentStore("kimi-code", kimi_code_roots, kimi_code_sessions),
)


def list_sessions(store: AgentStore) -> list[SessionRef]:
    """Every session of `store` in all its roots, newest write first; missing or unreadable roots list nothing."""
    found = [ref for root in store.roots() for ref in store.sessions(root)]
    return sorted(found, key=lambda r: r.mtime, reverse=True)


def session_name(path: Path) -> str:
    """What names a session file to a reader: its own name, or for the files every session of an agent names alike
    (Copilot's `events.jsonl`, Kimi's `context.jsonl`, Kimi Code's `agents/main/wire.jsonl`, a Cline task's
    history) the session folder's."""
    if path.name == KIMI_CODE_WIRE.name and path.parent.parent.name == KIMI_CODE_WIRE.parts[0]:
        main = path.parent.name == KIMI_CODE_WIRE.parts[1]
        return path.parent.parent.parent.name + ("" if main else f" ({path.parent.name})")
    if path.name in ("events.jsonl", "context.jsonl", HISTORY):
        return path.parent.name
    return path.name


def window_name(path: Path) -> str:
    """A subagent's window as its session's listing names it: the file, or for Kimi Code (`agents/<id>/wire.jsonl`,
    one folder an agent) the agent's folder with it."""
    return f"{path.parent.name}/{path.name}" if path.name == KIMI_CODE_WIRE.name else path.name


def session_file(folder: Path) -> Path | None:
    """The file to load for a session folder of one of these agents, or None when `folder` is none of theirs."""
    if task_folder(folder) is not None:
        return folder / HISTORY
    for candidate in (folder / "context.jsonl", folder / "events.jsonl", folder / f"{folder.name}.messages.json",
                      folder / KIMI_CODE_WIRE):
        if candidate.is_file():
            return candidate
    return None
