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
import uuid as uuidlib
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from inspector.core.atomic import write_atomic
from inspector.core.formats.claude_code import CLEARED
from inspector.core.formats.neutral import session_lines
from inspector.core.model import Compaction, LoadError, Message, Request, Session
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
    lines = session_lines_neutral(session) if fmt == "neutral" else claude_code_lines(session, target)
    # backslashreplace writes a lone surrogate (from a "\ud800" escape in the input) as that same JSON escape
    write_atomic(target, _json_lines(lines), encoding_errors="backslashreplace")
    return target


def check_target(session: Session, out: str | os.PathLike[str]) -> Path:
    """The output path, or LoadError when it is the session's own file or a directory (checked before any work)."""
    target = Path(out).expanduser()
    if _same_file(target, Path(session.source)):
        raise LoadError(f"{target}: refusing to overwrite the session being inspected; choose another --out path")
    if target.is_dir():
        raise LoadError(f"{target}: is a directory; give a file name")
    return target


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def _json_lines(lines: Iterable[dict[str, Any]]) -> Iterator[str]:
    for line in lines:
        yield redact(json.dumps(line, ensure_ascii=False, separators=(",", ":"), default=str)) + "\n"


def _results_by_id(messages: list[Message]) -> dict[str, str]:
    from inspector.core.compaction.micro import result_text

    return {b.tool_id: result_text(b) for m in messages for b in m.blocks if b.type == "tool_result" and b.tool_id}


def session_lines_neutral(session: Session) -> Iterator[dict[str, Any]]:
    """The neutral writer's lines, with each microcompact's replacements set to the text its results now hold
    (a snip leaves its own text, not Claude Code's cleared marker)."""
    texts = _results_by_id(session.messages)
    for line in session_lines(session):
        if line.get("event") == "compaction" and line.get("kind") == "microcompact":
            line["replacements"] = {i: texts.get(i, CLEARED) for i in line.get("replacements") or {}}
        yield line


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

    Uuids repeated in the session (recent messages re-written after a summary) get fresh ones. System-reminders
    rendered from Claude Code's attachments (`Message.attachment`) are left out: Claude Code renders its own again
    when it resumes the file, and written as user lines they would read as prompts.
    """
    session_id = claude_code_session_id(target)
    base = {"isSidechain": False, "userType": "external", "cwd": session.cwd or str(Path.cwd()),
            "sessionId": session_id, "version": session.version or "2.1.39"}
    by_index: dict[int, list[Compaction]] = {}
    for c in session.compactions:
        by_index.setdefault(c.index, []).append(c)
    requests = {r.id: r for r in session.requests}
    texts = _results_by_id(session.messages)
    seen: set[str] = set()
    seen_responses: set[str] = set()
    parent: str | None = None
    namespace = uuidlib.uuid5(uuidlib.NAMESPACE_URL, f"context-inspector:{session_id}")
    for i in range(len(session.messages) + 1):
        for c in by_index.get(i, ()):
            line = _boundary(c, base, parent, texts, uuidlib.uuid5(namespace, f"boundary-{i}-{c.kind}"))
            if line is not None:
                yield line
                parent = line["uuid"]
        if i == len(session.messages):
            break
        m = session.messages[i]
        if m.attachment is not None:
            continue
        uid = m.uuid if m.uuid and m.uuid not in seen else str(uuidlib.uuid5(namespace, f"message-{i}"))
        seen.add(uid)
        response = m.response_id
        if response in seen_responses:  # a re-written copy: a new id, or Claude Code would merge it into the first
            m = m.copy_with(response_id=None)
        elif response:
            seen_responses.add(response)
        yield _message_line(m, base, parent, uid, requests.get(m.response_id or ""))
        parent = uid


def _boundary(c: Compaction, base: dict, parent: str | None, texts: dict[str, str],
              uid: uuidlib.UUID) -> dict[str, Any] | None:
    line: dict[str, Any] = {**base, "type": "system", "isMeta": False, "timestamp": c.timestamp or _now(),
                            "uuid": str(uid), "level": "info"}
    if c.kind == "compact":
        return {"parentUuid": None, "logicalParentUuid": parent, **line, "subtype": "compact_boundary",
                "content": "Conversation compacted",
                "compactMetadata": {"trigger": c.trigger or "manual", "preTokens": c.pre_tokens or 0}}
    # Claude Code reads a microcompact boundary as "these results now hold the cleared marker": list only those.
    # Results edited otherwise (snipped) already hold their new text in their own lines.
    ids = [i for i in c.cleared_tool_ids if texts.get(i) == CLEARED]
    if not ids:
        return None
    return {"parentUuid": parent, **line, "subtype": "microcompact_boundary", "content": "Context microcompacted",
            "microcompactMetadata": {"trigger": c.trigger or "manual", "preTokens": c.pre_tokens or 0,
                                     "tokensSaved": c.tokens_saved or 0, "compactedToolIds": ids}}


def _message_line(m: Message, base: dict, parent: str | None, uid: str, request: Request | None) -> dict[str, Any]:
    blocks = m.blocks
    content: Any = blocks[0].text if len(blocks) == 1 and blocks[0].type == "text" else [b.to_api() for b in blocks]
    line: dict[str, Any] = {"parentUuid": parent, **base}
    if m.role == "assistant":
        message: dict[str, Any] = {"model": m.model or SYNTHETIC_MODEL, "id": m.response_id or f"msg_{uid}",
                                   "type": "message", "role": "assistant", "content": [b.to_api() for b in blocks],
                                   "stop_reason": None, "stop_sequence": None}
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
