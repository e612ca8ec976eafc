"""Write a Session to a new file, atomically: the neutral format, or Claude Code's JSONL for Claude Code input.

The file being inspected is never written: the output must be a different path. It is written atomically
(inspector.core.atomic): a reader, a full disk or a crash never sees half of it, a failed write leaves the old file
as it was and no temporary file, and the failure is one line naming the file and the reason. The Claude Code form
is what Claude Code itself writes for a conversation: a uuid/parentUuid chain of user/assistant lines, a
compact_boundary (parentUuid null, logicalParentUuid) before the summary line marked isCompactSummary, so
`claude --resume` can continue from the compacted context.
"""

from __future__ import annotations

import json
import os
import stat
import uuid as uuidlib
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from inspector.core.atomic import write_atomic
from inspector.core.formats.claude_code import CLEARED, EXTENSION
from inspector.core.formats.claude_code_records import WRAP_CLOSE, WRAP_OPEN
from inspector.core.formats.neutral import session_lines
from inspector.core.model import Compaction, LoadError, Message, Request, Session
from inspector.core.versions import Edit, edits
from inspector.core.secrets import redact

ExportFormat = Literal["neutral", "claude-code"]
SYNTHETIC_MODEL = "<synthetic>"  # Claude Code's model name for assistant messages it made itself (no API call)


def default_format(session: Session) -> ExportFormat:
    return "claude-code" if session.format == "claude-code" else "neutral"


def export_session(session: Session, out: str | os.PathLike[str], fmt: ExportFormat | None = None) -> Path:
    """Write `session` to `out` (a new path, never the session's own file) and return the path written.

    Raises LoadError (one line) when `out` is the input file or a directory, WriteFailed (a LoadError: "cannot write
    PATH: no space left on device") when it cannot be written.
    """
    target = check_target(session, out)
    fmt = fmt or default_format(session)
    lines = session_lines(session) if fmt == "neutral" else claude_code_lines(session, target)
    # backslashreplace writes a lone surrogate (from a "\ud800" escape in the input) as that same JSON escape
    write_atomic(target, _json_lines(lines), encoding_errors="backslashreplace")
    return target


def check_target(session: Session, out: str | os.PathLike[str]) -> Path:
    """The output path, or LoadError when it is the session's own file or anything but a regular file or a new
    path (checked before any work): the atomic rename would replace a symbolic link, a FIFO or a device node (as
    root, `/dev/null` itself) with a regular file."""
    if os.fspath(out) == "-":
        raise LoadError("--out -: a session is not written to standard output (the plan is printed there); "
                        "give a file name")
    target = Path(out).expanduser()
    if _same_file(target, Path(session.source)):
        raise LoadError(f"{target}: refusing to overwrite the session being inspected; choose another --out path")
    try:
        mode = os.lstat(target).st_mode
    except OSError:  # a new path (or one that cannot be: the write says why, in its own words)
        return target
    if not stat.S_ISREG(mode):
        what = next((name for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISLNK, "a symbolic link"),
                                             (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a device"),
                                             (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket"))
                     if test(mode)), "not a regular file")
        hint = "give the path it points to" if stat.S_ISLNK(mode) else "give a regular file or a new path"
        raise LoadError(f"{target}: --out is {what}, which writing would replace with a regular file; {hint}")
    return target


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def _json_lines(lines: Iterable[dict[str, Any]]) -> Iterator[str]:
    for line in lines:
        yield redact(json.dumps(line, ensure_ascii=False, separators=(",", ":"), default=str)) + "\n"


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def claude_code_session_id(target: Path) -> str:
    """The sessionId an exported Claude Code file gets: its own name when that is a uuid (Claude Code finds a
    session as `<session-id>.jsonl`), else one derived from its path."""
    try:
        return str(uuidlib.UUID(target.stem))
    except ValueError:
        return str(uuidlib.uuid5(uuidlib.NAMESPACE_URL, f"context-inspector:{target.resolve()}"))


def claude_code_lines(session: Session, target: Path) -> Iterator[dict[str, Any]]:
    """Claude Code JSONL lines for `session`: the whole active branch, history and compactions included.

    Each message is written as it is now, so `claude --resume` sends what the inspector shows. Each boundary also
    carries what the compaction changed (`EXTENSION`): a microcompaction the messages it edited as they were before
    (Claude Code's own `compactedToolIds` lists the results now holding its cleared marker), a summary the messages
    it kept verbatim; so the file reads back with what every request saw. Uuids repeated in the session (recent
    messages re-written after a summary) get fresh ones. System-reminders rendered from Claude Code's attachments
    (`Message.attachment`) are written back as attachment entries, as Claude Code wrote them (as user lines they
    would read as prompts).
    """
    session_id = claude_code_session_id(target)
    base = {"isSidechain": False, "userType": "external", "cwd": session.cwd or str(Path.cwd()),
            "sessionId": session_id, "version": session.version or "2.1.39"}
    by_index: dict[int, list[tuple[Compaction, list[Edit]]]] = {}
    for c, changes in zip(session.compactions, edits(session)):
        by_index.setdefault(c.index, []).append((c, changes))
    requests = {r.id: r for r in session.requests}
    uids: list[str] = []
    seen: set[str] = set()
    seen_responses: set[str] = set()
    parent: str | None = None
    namespace = uuidlib.uuid5(uuidlib.NAMESPACE_URL, f"context-inspector:{session_id}")
    for i in range(len(session.messages) + 1):
        for k, (c, changes) in enumerate(by_index.get(i, ())):
            line = _boundary(c, changes, base, parent, uids, uuidlib.uuid5(namespace, f"boundary-{i}-{k}-{c.kind}"))
            yield line
            parent = line["uuid"]
        if i == len(session.messages):
            break
        m = session.messages[i]
        uid = m.uuid if m.uuid and m.uuid not in seen else str(uuidlib.uuid5(namespace, f"message-{i}"))
        seen.add(uid)
        uids.append(uid)
        if m.attachment is not None:
            yield _attachment_line(m, base, parent, uid)
            parent = uid
            continue
        response = m.response_id
        if response in seen_responses:  # a re-written copy: a new id, or Claude Code would merge it into the first
            m = m.copy_with(response_id=None)
        elif response:
            seen_responses.add(response)
        yield _message_line(m, base, parent, uid, requests.get(m.response_id or ""))
        parent = uid


def _boundary(c: Compaction, changes: list[Edit], base: dict, parent: str | None, uids: list[str],
              uid: uuidlib.UUID) -> dict[str, Any]:
    line: dict[str, Any] = {**base, "type": "system", "isMeta": False, "timestamp": c.timestamp or _now(),
                            "uuid": str(uid), "level": "info"}
    if c.kind == "compact":
        out = {"parentUuid": None, "logicalParentUuid": parent, **line, "subtype": "compact_boundary",
               "content": "Conversation compacted",
               "compactMetadata": {"trigger": c.trigger or "manual", "preTokens": c.pre_tokens or 0}}
        if c.kept_from is not None:
            out[EXTENSION] = {"keptFrom": uids[c.kept_from], "added": c.added}
        return out
    cleared = [b.tool_id for e in changes for b in e.after.tool_results() if b.tool_id and b.text == CLEARED
               and not b.content]
    return {"parentUuid": parent, **line, "subtype": "microcompact_boundary", "content": "Context microcompacted",
            "microcompactMetadata": {"trigger": c.trigger or "manual", "preTokens": c.pre_tokens or 0,
                                     "tokensSaved": c.tokens_saved or 0, "compactedToolIds": cleared},
            EXTENSION: {"before": {uids[e.index]: [b.to_api() for b in e.before.blocks] for e in changes}}}


def _attachment_line(m: Message, base: dict, parent: str | None, uid: str) -> dict[str, Any]:
    """A system-reminder Claude Code rendered from an attachment: the entry it came from, with the text it sent."""
    system = m.role == "system"
    rendered = [{"type": "text", "content": f"{WRAP_OPEN}{b.text}{WRAP_CLOSE}" if system else b.text}
                for b in m.blocks if b.type == "text"]
    return {"parentUuid": parent, **base, "type": "attachment", "attachment": {"type": m.attachment},
            "rendered": rendered, "renderedRole": "system" if system else "user", "uuid": uid,
            "timestamp": m.timestamp or _now()}


def _message_line(m: Message, base: dict, parent: str | None, uid: str, request: Request | None) -> dict[str, Any]:
    blocks = m.blocks
    content: Any = blocks[0].text if len(blocks) == 1 and blocks[0].type == "text" else [b.to_api() for b in blocks]
    line: dict[str, Any] = {"parentUuid": parent, **base}
    if m.role == "assistant":
        message: dict[str, Any] = {"model": m.model or SYNTHETIC_MODEL, "id": m.response_id or f"msg_{uid}",
                                   "type": "message", "role": "assistant", "content": [b.to_api() for b in blocks],
                                   "stop_reason": None, "stop_sequence": None}
        if m.kind == "summary_ack":
            line[EXTENSION] = {"kind": "summary_ack"}
        if request is not None and m.model != SYNTHETIC_MODEL:
            message["usage"] = {"input_tokens": request.input_tokens,
                                "cache_creation_input_tokens": request.cache_creation,
                                "cache_read_input_tokens": request.cache_read, "output_tokens": request.output_tokens}
        line.update(message=message, type="assistant")
    else:
        line.update(type="user", message={"role": "user", "content": content})
        if m.kind == "compact_summary":
            line.update(isVisibleInTranscriptOnly=True, isCompactSummary=True)
        elif m.kind == "meta":
            line["isMeta"] = True
    line.update(uuid=uid, timestamp=m.timestamp or _now())
    return line
