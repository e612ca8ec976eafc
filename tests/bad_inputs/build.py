"""Builders of the bad inputs that are huge, binary or not files at all (the small ones are committed beside this).

Each builder takes a directory and returns the path to hand to `report` or the app, creating whatever it needs
there. `CASES` maps a case name to its builder and what the inspector must do with it: "load" (exit 0, warnings
allowed) or "error" (one line on stderr naming the path, exit 2). Big files are built once per test session.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

HERE = Path(__file__).parent
HUGE_LINE_BYTES = 50 * 1024 * 1024
DEEP = 100_000
SESSION = "bad00000-0000-4000-8000-000000000000"


def entry(kind: str, uuid: str, parent: str | None, content: object, **message: object) -> dict:
    """A minimal Claude Code user/assistant line."""
    return {"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": SESSION, "cwd": "/tmp/bad",
            "timestamp": "2026-01-01T00:00:00Z", "message": {"role": kind, "content": content, **message}}


def good_lines() -> list[bytes]:
    """Three well-formed lines: a prompt, an answer with usage, a second prompt."""
    usage = {"input_tokens": 100, "output_tokens": 10}
    return [json.dumps(x).encode() for x in (
        entry("user", "u1", None, "hello"),
        entry("assistant", "a1", "u1", [{"type": "text", "text": "hi"}], id="msg_1", model="claude-sonnet-4-5",
              usage=usage),
        entry("user", "u2", "a1", "bye"),
    )]


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def empty(d: Path) -> Path:
    return _write(d / "empty.jsonl", b"")


def whitespace(d: Path) -> Path:
    return _write(d / "whitespace.jsonl", b"  \n\t\n\r\n   \n\n")


def truncated_last_line(d: Path) -> Path:
    lines = good_lines()
    return _write(d / "truncated.jsonl", b"\n".join(lines) + b"\n" + lines[-1][: len(lines[-1]) // 2])


def invalid_utf8(d: Path) -> Path:
    lines = good_lines()
    bad = lines[0].replace(b"hello", b"hel\xff\xfe\xc3(lo")  # bytes no UTF-8 decoder accepts
    return _write(d / "invalid-utf8.jsonl", b"\n".join([bad, *lines[1:]]) + b"\n")


def lone_surrogate(d: Path) -> Path:
    lines = good_lines()
    bad = lines[0].replace(b'"hello"', b'"he\\ud800llo \\udfff"')  # valid JSON, but no valid UTF-8 encodes it
    return _write(d / "surrogate.jsonl", b"\n".join([bad, *lines[1:]]) + b"\n")


def nul_bytes(d: Path) -> Path:
    lines = good_lines()
    return _write(d / "nul.jsonl", lines[0] + b"\n\x00\x00\x00\n" + b"\n".join(lines[1:]) + b"\n")


def nul_late(d: Path) -> Path:
    """NUL bytes past the binary probe: a zero-filled block (what a crash leaves on some filesystems), then more
    lines appended after it."""
    lines = good_lines()
    filler = json.dumps(entry("user", "u0", None, "x" * 9000)).encode()
    return _write(d / "nul-late.jsonl", filler + b"\n" + lines[0] + b"\n" + b"\x00" * 4096 + b"\n"
                  + b"\n".join(lines[1:]) + b"\n")


def invalid_utf8_progress(d: Path) -> Path:
    """Invalid UTF-8 inside the ids of a progress entry (the loader reads those without a full parse)."""
    lines = good_lines()
    progress = (b'{"parentUuid":"u1\xff","isSidechain":false,"type":"progress","data":{"type":"hook_progress"},'
                b'"uuid":"p\xfe1","sessionId":"' + SESSION.encode() + b'"}')
    return _write(d / "invalid-utf8-progress.jsonl", b"\n".join([lines[0], progress, *lines[1:]]) + b"\n")


def huge_line(d: Path) -> Path:
    """A 50 MB single line: one tool result holding a whole build log."""
    use = entry("assistant", "a0", "u0", [{"type": "tool_use", "id": "toolu_big", "name": "Bash",
                                           "input": {"command": "make"}}], id="msg_0", model="claude-sonnet-4-5",
                usage={"input_tokens": 50, "output_tokens": 5})
    head = json.dumps(entry("user", "u1", "a0", [{"type": "tool_result", "tool_use_id": "toolu_big",
                                                  "content": "@@BODY@@"}])).encode()
    before, after = head.split(b"@@BODY@@")
    body = b"building target 0123456789 ok\\n" * ((HUGE_LINE_BYTES - len(head)) // 31)
    path = d / "huge-line.jsonl"
    with open(path, "wb") as f:
        f.write(json.dumps(entry("user", "u0", None, "build it")).encode() + b"\n")
        f.write(json.dumps(use).encode() + b"\n")
        f.write(before + body + after + b"\n")
    return path


def huge_garbage_line(d: Path) -> Path:
    """A 50 MB line that is not JSON at all, between good lines."""
    lines = good_lines()
    path = d / "huge-garbage.jsonl"
    with open(path, "wb") as f:
        f.write(lines[0] + b"\n")
        f.write(b"{" + b"garbage " * (HUGE_LINE_BYTES // 8) + b"\n")
        f.write(b"\n".join(lines[1:]) + b"\n")
    return path


def many_blocks(d: Path) -> Path:
    """One message of 100,000 text blocks, one response of 20,000 parallel tool calls and their results: views
    that handle a message's blocks one by one (or pair calls with results by scanning) meet their worst case."""
    usage = {"input_tokens": 100, "output_tokens": 10}
    calls = [{"type": "tool_use", "id": f"toolu_{i}", "name": "Bash", "input": {"command": f"echo {i}"}}
             for i in range(20_000)]
    results = [{"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": f"{i}"} for i in range(20_000)]
    lines = [entry("user", "u1", None, [{"type": "text", "text": "part"}] * 100_000),
             entry("assistant", "a1", "u1", calls, id="msg_1", model="claude-sonnet-4-5", usage=usage),
             entry("user", "u2", "a1", results)]
    return _write(d / "many-blocks.jsonl", b"".join(json.dumps(x).encode() + b"\n" for x in lines))


def many_compactions(d: Path) -> Path:
    """20,000 compactions, each a compact boundary, its summary, an answer and a microcompact boundary: work per
    boundary that scans every earlier message makes this quadratic (hours)."""
    usage = {"input_tokens": 10, "output_tokens": 1}
    parent = None
    with open(d / "many-compactions.jsonl", "w") as f:
        for i in range(20_000):
            boundary = {"type": "system", "subtype": "compact_boundary", "uuid": f"b{i}", "parentUuid": None,
                        "logicalParentUuid": parent, "sessionId": SESSION,
                        "compactMetadata": {"trigger": "auto", "preTokens": 1000}}
            summary = {**entry("user", f"s{i}", f"b{i}", "This session is being continued from a previous "
                                                           "conversation."), "isCompactSummary": True}
            answer = entry("assistant", f"a{i}", f"s{i}", [{"type": "text", "text": "ok"}], id=f"m{i}",
                           model="claude-sonnet-4-5", usage=usage)
            micro = {"type": "system", "subtype": "microcompact_boundary", "uuid": f"mc{i}", "parentUuid": f"a{i}",
                     "sessionId": SESSION, "microcompactMetadata": {"preTokens": 5, "compactedToolIds": [f"t{i}"]}}
            f.write("".join(json.dumps(x) + "\n" for x in (boundary, summary, answer, micro)))
            parent = f"mc{i}"
    return d / "many-compactions.jsonl"


def deep_nesting(d: Path) -> Path:
    """JSON nested 100,000 deep inside an otherwise good line, and as a line of its own."""
    lines = good_lines()
    deep = b'{"type": "user", "uuid": "deep", "message": {"role": "user", "content": ' + b"[" * DEEP + b"]" * DEEP \
        + b"}}"
    return _write(d / "deep.jsonl", b"\n".join([lines[0], deep, b"{\"a\":" * DEEP + b"1" + b"}" * DEEP,
                                               *lines[1:]]) + b"\n")


def deep_document(d: Path) -> Path:
    """One JSON document (not JSONL) nested 100,000 deep."""
    return _write(d / "deep.json", b'{"messages": [' + b"[" * DEEP + b"]" * DEEP + b"]}")


def _filler() -> bytes:
    """A first line longer than the binary probe, so that what follows it is past the probe."""
    return json.dumps(entry("user", "u0", None, "x" * 9000)).encode()


def nul_tail(d: Path) -> Path:
    """Good lines, then 2 GB of NUL bytes and no newline: what `truncate -s 2G` (or a crash) leaves. Sparse: it
    takes no disk space."""
    path = _write(d / "nul-tail.jsonl", b"\n".join([_filler(), *good_lines()]) + b"\n")
    with open(path, "ab") as f:
        f.truncate(path.stat().st_size + 2 * 1024 ** 3)
    return path


def numeric_timestamp(d: Path) -> Path:
    lines = [json.loads(x) for x in good_lines()]
    for line, stamp in zip(lines, (1767225600, 1767225600123.5, True)):
        line["timestamp"] = stamp
    return _write(d / "numeric-timestamp.jsonl", "\n".join(json.dumps(x) for x in lines).encode() + b"\n")


def _good_with(d: Path, name: str, change: Callable[[list[dict]], object]) -> Path:
    """The three good lines, parsed, changed in place by `change`, written as `name`."""
    lines = [json.loads(x) for x in good_lines()]
    change(lines)
    return _write(d / name, "\n".join(json.dumps(x) for x in lines).encode() + b"\n")


def _usage(key: str, value: int) -> Callable[[Path], Path]:
    def build(d: Path) -> Path:
        return _good_with(d, f"usage-{key}.jsonl", lambda lines: lines[1]["message"]["usage"].update({key: value}))

    return build


def _compacted_ids(value: object) -> Callable[[Path], Path]:
    """A microcompact boundary between the answer and the second prompt whose compactedToolIds is `value`."""
    def change(lines: list[dict]) -> None:
        lines.insert(2, {**entry("system", "mc1", "a1", None), "subtype": "microcompact_boundary",
                         "content": "Context microcompacted",
                         "microcompactMetadata": {"trigger": "auto", "preTokens": 100, "tokensSaved": 50,
                                                  "compactedToolIds": value}})
        del lines[2]["message"]
        lines[3]["parentUuid"] = "mc1"

    return lambda d: _good_with(d, f"compacted-ids-{type(value).__name__}.jsonl", change)


def deep_tool_result(d: Path) -> Path:
    """A tool result holding a tool result ... 480 deep: a 30 KB line of 960 nested containers, which JSON parsers
    take (orjson's limit is 1,024) and every recursive walk of blocks did not (issue 15 found 330 enough)."""
    depth = 480
    nested = '{"type": "tool_result", "tool_use_id": "t1", "content": [' * depth + '{"type": "text", "text": "x"}' \
        + "]}" * depth
    path = _good_with(d, "deep-tool-result.jsonl", lambda lines: lines[2]["message"].update(content=["DEEP"]))
    return _write(path, path.read_bytes().replace(b'["DEEP"]', f"[{nested}]".encode()))


def parallel_calls(d: Path, calls: int, results: bool = True) -> Path:
    """One response of `calls` parallel tool calls, a line each as Claude Code writes them (one message id, the
    usage on every line), then (`results`) a line per result: issue 15's quadratic shapes (the pairing check, the
    response's lines joined a line at a time)."""
    usage = {"input_tokens": 100, "output_tokens": 10}
    path = d / f"parallel-{calls}{'' if results else '-no-results'}.jsonl"
    with open(path, "w") as f:
        f.write(json.dumps(entry("user", "u0", None, "go")) + "\n")
        parent = "u0"
        for i in range(calls):
            f.write(json.dumps(entry("assistant", f"a{i}", parent, [{"type": "tool_use", "id": f"t{i}", "name": "Bash",
                                                                    "input": {"command": "ls"}}],
                                     id="msg_1", model="claude-sonnet-4-5", usage=usage)) + "\n")
            parent = f"a{i}"
        for i in range(calls if results else 0):
            f.write(json.dumps(entry("user", f"r{i}", parent, [{"type": "tool_result", "tool_use_id": f"t{i}",
                                                                "content": "ok"}])) + "\n")
            parent = f"r{i}"
    return path


CODEX = HERE.parent / "fixtures" / "agents" / "codex-0.171.0" / "long-session" / "home" / ".codex" / "sessions"


def _codex(item_type: str, key: str, value: object) -> Callable[[Path], Path]:
    """A real Codex 0.171 rollout whose first `item_type` response item has `key` set to `value`."""
    def build(d: Path) -> Path:
        (source,) = CODEX.rglob("rollout-*.jsonl")
        lines = [json.loads(x) for x in source.read_text().splitlines()]
        item = next(x["payload"] for x in lines if x.get("type") == "response_item"
                    and x["payload"].get("type") == item_type)
        item[key] = value
        return _write(d / f"codex-{item_type}-{key}.jsonl", "\n".join(json.dumps(x) for x in lines).encode() + b"\n")

    return build


def utf16(d: Path) -> Path:
    return _write(d / "utf16.jsonl", b"\n".join(good_lines()).decode().encode("utf-16") + "\n".encode("utf-16-le"))


def json_array(d: Path) -> Path:
    """Claude Code's lines as one pretty-printed JSON array (an export)."""
    return _write(d / "array.json", json.dumps([json.loads(x) for x in good_lines()], indent=2).encode())


def bidi_and_huge_labels(d: Path) -> Path:
    """A model name with bidirectional controls, a 10 MB tool name and cwd: labels the report must cap and show."""
    lines = [json.loads(x) for x in good_lines()]
    lines[1]["message"]["model"] = "claude\u202e-evil\u2066"
    lines[1]["message"]["content"] = [{"type": "tool_use", "id": "t1", "name": "T" * 10_000_000, "input": {}}]
    lines[2]["cwd"] = "/" + "d" * 1_000_000
    return _write(d / "labels.jsonl", "\n".join(json.dumps(x) for x in lines).encode() + b"\n")


def directory(d: Path) -> Path:
    (d / "a-directory").mkdir()
    return d / "a-directory"


def directory_named_jsonl(d: Path) -> Path:
    (d / "looks-like.jsonl").mkdir()
    return d / "looks-like.jsonl"


def fifo(d: Path) -> Path:
    path = d / "pipe.jsonl"
    os.mkfifo(path)
    return path


def missing(d: Path) -> Path:
    return d / "no-such-session.jsonl"


def unreadable(d: Path) -> Path:
    path = _write(d / "secret.jsonl", b"\n".join(good_lines()) + b"\n")
    path.chmod(0)
    return path


def symlink_loop(d: Path) -> Path:
    (d / "loop-a.jsonl").symlink_to(d / "loop-b.jsonl")
    (d / "loop-b.jsonl").symlink_to(d / "loop-a.jsonl")
    return d / "loop-a.jsonl"


def dangling_symlink(d: Path) -> Path:
    (d / "dangling.jsonl").symlink_to(d / "gone.jsonl")
    return d / "dangling.jsonl"


def cline_task_bad_ui(d: Path) -> Path:
    """A Cline task folder whose ui_messages.json is cut short: the conversation loads, the usage is said lost."""
    task = d / "task-1767225600000"
    task.mkdir()
    (task / "api_conversation_history.json").write_text(json.dumps([
        {"role": "user", "content": [{"type": "text", "text": "<task>\nhello\n</task>"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "hi"}]}]))
    (task / "ui_messages.json").write_text('[{"ts": 1, "type": "say", "say": "api_req_started", "text": "{\\"tok')
    return task


OPENCODE_FIXTURE = HERE.parent / "fixtures" / "agents" / "opencode-1.18.33" / "parallel-tools" / "home" / ".local" \
    / "share" / "opencode" / "opencode.db"


def _opencode_copy(d: Path, name: str = "opencode.db") -> Path:
    return Path(shutil.copy(OPENCODE_FIXTURE, d / name))


def opencode_corrupt_row(d: Path) -> Path:
    """A real opencode database with one part row's JSON cut short and one of an unknown type."""
    import sqlite3

    path = _opencode_copy(d)
    conn = sqlite3.connect(path)
    rows = conn.execute("SELECT id, json_extract(data, '$.type') FROM part ORDER BY id").fetchall()
    step = next(pid for pid, kind in rows if kind == "step-start")
    text = next(pid for pid, kind in rows if kind == "text")
    conn.execute("UPDATE part SET data = json_set(data, '$.type', 'hologram') WHERE id = ?", (step,))
    conn.execute("UPDATE part SET data = '{\"type\": \"text\", \"text\": \"cut sh' WHERE id = ?", (text,))
    conn.commit()
    conn.close()
    return path


def opencode_truncated(d: Path) -> Path:
    """A database cut to its first pages (a copy interrupted half-way)."""
    path = _opencode_copy(d)
    with open(path, "r+b") as f:
        f.truncate(3 * 4096)
    return path


def opencode_foreign(d: Path) -> Path:
    """An SQLite database of some other program."""
    import sqlite3

    path = d / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE notes (body TEXT)")
    conn.commit()
    conn.close()
    return path


def opencode_no_such_session(d: Path) -> Path:
    return Path(f"{_opencode_copy(d)}#ses_nosuchsession")


def opencode_storage_corrupt(d: Path) -> Path:
    """An opencode storage/ tree (before the database) whose one message file is cut short."""
    root = d / "storage"
    for sub, name, body in (
            ("session/global", "ses_bad.json", {"id": "ses_bad", "directory": "/tmp/bad", "title": "bad",
                                                "version": "1.0.0", "time": {"created": 1, "updated": 2}}),
            ("message/ses_bad", "msg_1.json", {"id": "msg_1", "sessionID": "ses_bad", "role": "user",
                                               "time": {"created": 1}}),
            ("part/msg_1", "prt_1.json", {"id": "prt_1", "messageID": "msg_1", "sessionID": "ses_bad",
                                          "type": "text", "text": "list the files"})):
        (root / sub).mkdir(parents=True, exist_ok=True)
        (root / sub / name).write_text(json.dumps(body))
    (root / "message" / "ses_bad" / "msg_2.json").write_text('{"id": "msg_2", "role": "assist')
    return root / "session" / "global" / "ses_bad.json"


def committed(name: str) -> Callable[[Path], Path]:
    """A small committed file, copied so a test may not change the original."""

    def build(d: Path) -> Path:
        return Path(shutil.copy(HERE / name, d / name))

    build.__name__ = name
    return build


Expect = Literal["load", "error"]


@dataclass(frozen=True)
class Case:
    build: Callable[[Path], Path]
    expect: Expect
    says: str = ""  # a piece of the warning or error the user must see ("" = no particular wording)
    big: bool = False  # memory-checked, built once per session
    app: bool = True  # also opened in the app by the tests (False: too slow there for the suite's budget)


CASES: dict[str, Case] = {
    "empty": Case(empty, "error", "empty file"),
    "whitespace": Case(whitespace, "error", "empty file"),
    "truncated-last-line": Case(truncated_last_line, "load", "line 4: unfinished last line not read"),
    "corrupt-mid": Case(committed("corrupt-mid.jsonl"), "load",
                        "line 3: corrupt line skipped (Unterminated string starting at column 56)"),
    "scalar-lines": Case(committed("scalar-lines.jsonl"), "load", "not a JSON object (list)"),
    "unknown-types": Case(committed("unknown-types.jsonl"), "load", "unknown type 'hologram'"),
    "invalid-utf8": Case(invalid_utf8, "load", "line 1: invalid UTF-8"),
    "invalid-utf8-progress": Case(invalid_utf8_progress, "load", "line 2: invalid UTF-8"),
    "lone-surrogate": Case(lone_surrogate, "load"),
    "nul-bytes": Case(nul_bytes, "error", "binary file"),
    "nul-late": Case(nul_late, "load", "line 3: corrupt line skipped"),
    "huge-line": Case(huge_line, "load", big=True),
    "huge-garbage-line": Case(huge_garbage_line, "load", "line 2: corrupt line skipped", big=True),
    "many-blocks": Case(many_blocks, "load", big=True),
    # the app takes ~17 s on this one (40,000 list rows with separators): report only; see docs/fuzzing.md
    "many-compactions": Case(many_compactions, "load", big=True, app=False),
    "deep-nesting": Case(deep_nesting, "load", "line 2: corrupt line skipped (nested too deeply", big=True),
    "deep-document": Case(deep_document, "error", "nested too deeply", big=True),
    "nul-tail": Case(nul_tail, "load", "line 5: unterminated last line at byte 9,962 not read: 2,147,483,648 "
                                       "bytes, NUL bytes", big=True),
    "numeric-timestamp": Case(numeric_timestamp, "load", "line 1: timestamp is not a string (int); ignored"),
    "usage-400-digits": Case(_usage("input_tokens", 10**400), "load",
                             "line 2: usage input tokens is a 401-digit number, out of range"),
    "usage-negative": Case(_usage("cache_read_input_tokens", -999_999_997), "load",
                           "line 2: usage cache read is -999,999,997, out of range"),
    "compacted-ids-number": Case(_compacted_ids(7), "load", "line 3: compactedToolIds is int, not a list"),
    "compacted-ids-true": Case(_compacted_ids(True), "load", "line 3: compactedToolIds is bool, not a list"),
    "deep-tool-result": Case(deep_tool_result, "load", "line 3: content not read: tool results nested more than"),
    "codex-content-true": Case(_codex("message", "content", True), "load",
                               "message content is bool, not str or list: not read"),
    "codex-summary-true": Case(_codex("reasoning", "summary", True), "load",
                               "reasoning summary is bool, not list: not read"),
    "utf16": Case(utf16, "error", "UTF-16 text"),
    "json-array": Case(json_array, "load"),
    "bidi-and-huge-labels": Case(bidi_and_huge_labels, "load", "more characters)"),
    "directory": Case(directory, "error", "no session"),
    "directory-named-jsonl": Case(directory_named_jsonl, "error", "no session"),
    "fifo": Case(fifo, "error", "not a regular file"),
    "missing": Case(missing, "error", "no such file"),
    "unreadable": Case(unreadable, "error", "ermission denied"),
    "symlink-loop": Case(symlink_loop, "error", "symbolic links"),
    "dangling-symlink": Case(dangling_symlink, "error", "no such file"),
    "orphan-tool-result": Case(committed("orphan-tool-result.jsonl"), "load", "toolu_never_issued"),
    # a resume repeats entries as they were: silent; a uuid reused for other content is warned once
    "duplicate-uuids": Case(committed("duplicate-uuids.jsonl"), "load",
                            "line 6: uuid 'a1' repeated at line 6 with different content than line 2"),
    "duplicate-uuids-resumed": Case(committed("duplicate-uuids-resumed.jsonl"), "load"),
    "parent-cycle": Case(committed("parent-cycle.jsonl"), "load", "cycle"),
    "copilot-corrupt": Case(committed("copilot-corrupt.jsonl"), "load", "line 2: corrupt line skipped"),
    "copilot-event-without-data": Case(committed("copilot-corrupt.jsonl"), "load",
                                       "line 4: event without a type and a data object"),
    "kimi-corrupt": Case(committed("kimi-corrupt.jsonl"), "load",
                         "line 4: usage record without an integer token_count"),
    "cline-sdk-bad-message": Case(committed("cline-sdk-bad-message.messages.json"), "load",
                                  "message 2: not a user or assistant message"),
    "cline-task-bad-ui": Case(cline_task_bad_ui, "load", "ui_messages.json: not valid JSON"),
    "gemini-bad-lines": Case(committed("gemini-bad.jsonl"), "load", "line 4: corrupt line skipped"),
    "qwen-bad-lines": Case(committed("qwen-bad.jsonl"), "load", "line 4: skipped 1 record of unknown type 'hologram'"),
    "opencode-corrupt-row": Case(opencode_corrupt_row, "load", ": corrupt JSON in data, skipped"),
    "opencode-truncated": Case(opencode_truncated, "error", "cannot be read (database disk image is malformed)"),
    "opencode-foreign": Case(opencode_foreign, "error", "not opencode's"),
    "opencode-no-such-session": Case(opencode_no_such_session, "error", "no session 'ses_nosuchsession'"),
    "opencode-storage-corrupt": Case(opencode_storage_corrupt, "load", "msg_2.json: cannot be read"),
}
