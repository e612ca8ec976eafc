"""Crash safety: SIGKILL the real CLI during an agent turn and during an export. The session file and the export
are complete or absent, never half-written, apart from a final partial line that the loader tolerates; a session
continued after such a crash stays whole, and the temporary file a killed export leaves goes with the next export
to the same name.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bad_inputs.build import SESSION
from inspector.core.formats import load
from inspector.core.formats.jsonl import loads
from mock_api import responses as r

ROUNDS = 6


def check_lines(path: Path) -> list[dict]:
    """Every line but the last is complete JSON; the last is complete or a torn write without its newline."""
    data = path.read_bytes()
    lines = data.split(b"\n")
    complete, tail = lines[:-1], lines[-1]
    objs = [loads(line) for line in complete]  # raises on a half-written line in the middle
    if tail:
        with pytest.raises(ValueError):
            loads(tail)  # only a torn write may lack its newline (whole JSON would have had one)
    return objs


def _turn(mock_api, tmp_path: Path, rounds: int = ROUNDS) -> tuple[list[str], dict[str, str]]:
    """A long turn: `rounds` of tool calls with big results, then a long streamed answer."""
    for n in range(rounds):
        (tmp_path / f"f{n}.txt").write_text(f"file {n}\n" * 3000)
        mock_api.add(r.tool_calls(("read_file", {"path": f"f{n}.txt"}), ("bash", {"command": f"echo {n}"}),
                                  preamble=f"round {n} " * 50))
    mock_api.add(r.text("the end " * 400))
    env = {**os.environ, "CONTEXT_INSPECTOR_MEMORY": str(tmp_path / "none.md"), "HOME": str(tmp_path)}
    args = [sys.executable, "-m", "inspector", "run", "--prompt", "read them all", "--cwd", str(tmp_path),
            "--allow-writes", "--no-compact"]
    return args, env


@pytest.mark.parametrize("after_requests", [1, 4])
def test_sigkill_during_an_agent_turn(mock_api, tmp_path, after_requests):
    session = tmp_path / "s.jsonl"
    args, env = _turn(mock_api, tmp_path)
    proc = subprocess.Popen([*args, "--session", str(session)], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while len(mock_api.message_requests) < after_requests and time.monotonic() < deadline:
            time.sleep(0.005)
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(10) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
    objs = check_lines(session)
    assert objs[0]["event"] == "session"
    loaded = load(session)
    assert not loaded.warnings, loaded.warnings
    assert [m.kind for m in loaded.messages][:1] == ["prompt"]
    kinds = [m.kind for m in loaded.messages]
    assert kinds == ["prompt"] + ["assistant", "tool_result"] * ((len(kinds) - 1) // 2) + (
        ["assistant"] if len(kinds) % 2 == 0 else [])  # whole messages, in order, none torn


def test_a_session_continued_after_a_torn_write_stays_whole(mock_api, tmp_path):
    """A crash mid-line leaves a partial last line; the next turn must not glue its first line onto it."""
    session = tmp_path / "s.jsonl"
    args, env = _turn(mock_api, tmp_path, rounds=1)
    header = {"event": "session", "version": 1, "cwd": str(tmp_path), "model": "claude-sonnet-4-6"}
    first = {"role": "user", "content": "earlier"}
    answer = {"role": "assistant", "content": [{"type": "text", "text": "earlier answer"}]}
    torn = json.dumps({"role": "user", "content": "this line was being written when the power went"})[:30]
    session.write_text("\n".join(json.dumps(x) for x in (header, first, answer)) + "\n" + torn)
    result = subprocess.run([*args, "--session", str(session)], env=env, capture_output=True, timeout=120)
    assert result.returncode == 0, result.stderr
    check_lines(session)
    loaded = load(session)
    assert not loaded.warnings, loaded.warnings
    assert [m.text() for m in loaded.messages[:3]] == ["earlier", "earlier answer", "read them all"]
    assert loaded.messages[-1].text().startswith("the end")


def test_a_session_continued_after_a_missing_final_newline_keeps_that_line(mock_api, tmp_path):
    """A last line that is whole JSON (only its newline lost) is a message: it stays, and the next line follows."""
    session = tmp_path / "s.jsonl"
    args, env = _turn(mock_api, tmp_path, rounds=1)
    header = {"event": "session", "version": 1, "cwd": str(tmp_path), "model": "claude-sonnet-4-6"}
    lines = [header, {"role": "user", "content": "earlier"},
             {"role": "assistant", "content": [{"type": "text", "text": "kept"}]}]
    session.write_text("\n".join(json.dumps(x) for x in lines))
    result = subprocess.run([*args, "--session", str(session)], env=env, capture_output=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert [m.text() for m in load(session).messages[:3]] == ["earlier", "kept", "read them all"]


# --- exports ---------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def big_session(tmp_path_factory) -> Path:
    """A Claude Code session big enough (~40 MB) that writing its export takes a while."""
    path = tmp_path_factory.mktemp("export") / f"{SESSION}.jsonl"
    usage = {"input_tokens": 1000, "output_tokens": 10}
    with open(path, "w") as f:
        parent = None
        for n in range(1000):
            ids = (f"u{n}", f"a{n}", f"r{n}")
            for kind, uid, content, message in (
                    ("user", ids[0], "go on", {}),
                    ("assistant", ids[1], [{"type": "tool_use", "id": f"t{n}", "name": "Read",
                                            "input": {"file_path": f"/f{n}"}}],
                     {"id": f"msg_{n}", "model": "claude-sonnet-4-5", "usage": usage}),
                    ("user", ids[2], [{"type": "tool_result", "tool_use_id": f"t{n}",
                                       "content": f"line {n}\n" * (6000 if n else 20000)}], {})):
                f.write(json.dumps({"type": kind, "uuid": uid, "parentUuid": parent, "sessionId": SESSION,
                                    "cwd": "/w", "message": {"role": kind, "content": content, **message}}) + "\n")
                parent = uid
    return path


def _export(big_session: Path, out: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "inspector", "compact", str(big_session), "--strategy", "snip",
                             "--preserve-last-n", "2997", "--max-chars", "100000", "--out", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _wait_for(condition, proc: subprocess.Popen, timeout: float = 120) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        if condition():
            return True
        time.sleep(0.001)
    return False


def test_sigkill_while_the_export_is_written_leaves_no_export(big_session, tmp_path):
    out = tmp_path / "out.jsonl"
    proc = _export(big_session, out)
    try:
        writing = _wait_for(lambda: any(p.name.startswith(".out.jsonl.") and p.stat().st_size > 0
                                        for p in tmp_path.iterdir()), proc)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert writing, "the export finished before it could be interrupted: make the session bigger"
    assert not out.exists()  # absent, not half-written (a temporary file is left beside it, never the target)
    left = [p.name for p in tmp_path.iterdir()]
    assert len(left) == 1 and f"-{proc.pid}-" in left[0], left  # the temporary file names its dead writer
    retry = _export(big_session, out)
    assert retry.wait(120) == 0, retry.stderr.read() if retry.stderr else ""
    assert [p.name for p in tmp_path.iterdir()] == ["out.jsonl"]  # the next export to that name removed it
    assert len(load(out).messages) == 3000


def test_an_export_is_whole_once_it_exists(big_session, tmp_path):
    """Kill as soon as the target name appears: what is there is the whole export."""
    out = tmp_path / "out.jsonl"
    proc = _export(big_session, out)
    try:
        appeared = _wait_for(out.exists, proc)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert appeared or out.exists()
    objs = check_lines(out)
    assert out.read_bytes().endswith(b"\n")
    loaded = load(out)
    assert not loaded.warnings and len(loaded.messages) == 3000 and len(objs) >= 3000
