"""The session writer and the headless `run` command, against the local Messages-API server."""

import json
import os
import signal
import stat
import subprocess
import sys
import threading
import time

import pytest

from inspector.cli import main
from inspector.core.agent import AgentConfig, run
from inspector.core.agent.provider import AnthropicProvider
from inspector.core.agent.writer import SessionWriter, default_session_path, open_session
from inspector.core.formats import load
from mock_api import MOCK_KEY, responses as r


def test_writer_output_loads_back_with_usage_per_request(mock_api, tmp_path):
    (tmp_path / "a.txt").write_text("hello\n")
    mock_api.add(r.tool_calls(("read_file", {"path": "a.txt"}), output_tokens=9, cache_read_input_tokens=100),
                 r.text("It says hello.", output_tokens=4))
    config = AgentConfig(AnthropicProvider(MOCK_KEY, mock_api.url), tmp_path)
    path = tmp_path / "s.jsonl"
    state, previous = open_session(path, config.new_session("SYSTEM PROMPT", str(path)))
    assert previous is None
    with SessionWriter(path, state, previous) as writer:
        events = list(writer.tee(run("read a.txt", state, config, "SYSTEM PROMPT")))

    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert lines[0]["event"] == "session" and lines[0]["system"] == "SYSTEM PROMPT"
    assert [x.get("role") for x in lines[1:]] == ["user", "assistant", "user", "assistant"]
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert MOCK_KEY not in path.read_text() and MOCK_KEY not in repr(events)

    loaded = load(path)
    assert loaded.format == "neutral" and not loaded.warnings
    assert [(m.role, m.kind) for m in loaded.messages] == [(m.role, m.kind) for m in state.messages]
    assert [(q.id, q.cache_read, q.output_tokens) for q in loaded.requests] == [
        (q.id, q.cache_read, q.output_tokens) for q in state.requests]
    assert loaded.requests[0].cache_read == 100 and loaded.requests[1].output_tokens == 4
    assert loaded.system == "SYSTEM PROMPT" and {t.name for t in loaded.tools} >= {"read_file", "bash"}


def test_a_second_turn_continues_the_file(mock_api, tmp_path):
    path = tmp_path / "s.jsonl"
    for prompt, answer in (("one", "first"), ("two", "second")):
        mock_api.add(r.text(answer))
        config = AgentConfig(AnthropicProvider(MOCK_KEY, mock_api.url), tmp_path)
        state, previous = open_session(path, config.new_session("SYS", str(path)))
        with SessionWriter(path, state, previous) as writer:
            list(writer.tee(run(prompt, state, config, "SYS")))
    text = path.read_text()
    assert text.count('"event": "session"') == 1  # nothing changed in the header: written once
    second = mock_api.message_requests[1]
    assert [m["content"][0]["text"] for m in second.messages] == ["one", "first", "two"]
    assert len(load(path).requests) == 2


def test_default_session_path_is_in_the_user_data_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    path = default_session_path()
    assert path.parent == tmp_path / "context-inspector" / "sessions" and path.suffix == ".jsonl"


# --- the command ----------------------------------------------------------------------------------------------

def cli(*argv: str) -> int:
    return main(["run", *argv])


def test_run_without_a_key_says_how_to_set_one(monkeypatch, capsys, tmp_path):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert cli("--prompt", "hi", "--session", str(tmp_path / "s.jsonl")) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "export ANTHROPIC_API_KEY=" in err and "ANTHROPIC_BASE_URL" in err
    assert not (tmp_path / "s.jsonl").exists()


def test_run_prints_text_inertly_and_saves(mock_api, capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("CONTEXT_INSPECTOR_MEMORY", str(tmp_path / "no-memory.md"))
    (tmp_path / "evil.txt").write_text("\x1b[2J\x1b]0;pwned\x07 [bold]not markup[/bold]\n")
    mock_api.add(r.tool_calls(("read_file", {"path": "evil.txt"})), r.text("Result: \x1b[31mred\x1b[0m\tdone\n"))
    session = tmp_path / "s.jsonl"
    assert cli("--prompt", "look", "--session", str(session), "--cwd", str(tmp_path)) == 0
    out, err = capsys.readouterr()
    assert "\x1b" not in out and "\x07" not in out and "\x1b" not in err
    assert "Result: ?[31mred?[0m\tdone" in out
    assert "→ read_file" in out and "[bold]not markup[/bold]" in out
    assert "[usage " in out and "saved to" in err
    sent = mock_api.message_requests[0].body
    assert "Working directory: " + str(tmp_path.resolve()) in sent["system"]
    assert len(load(session).requests) == 2


def test_run_without_allow_writes_denies_writes_and_shell(mock_api, capsys, tmp_path):
    mock_api.add(r.tool_calls(("write_file", {"path": "x.txt", "content": "x"}), ("bash", {"command": "touch y"})),
                 r.text("I was not allowed."))
    assert cli("--prompt", "write", "--session", str(tmp_path / "s.jsonl"), "--cwd", str(tmp_path)) == 0
    out, err = capsys.readouterr()
    assert out.count("permission denied") == 2 and "--allow-writes" in err
    assert not (tmp_path / "x.txt").exists() and not (tmp_path / "y").exists()
    results = mock_api.message_requests[1].messages[2]["content"]
    assert all(b["is_error"] and b["content"].startswith("Permission denied") for b in results)


def test_run_with_allow_writes_and_json_lines(mock_api, capsys, tmp_path):
    mock_api.add(r.tool_calls(("write_file", {"path": "x.txt", "content": "x"})), r.text("Wrote \x1b it."))
    assert cli("--prompt", "write", "--session", str(tmp_path / "s.jsonl"), "--cwd", str(tmp_path),
               "--allow-writes", "--json") == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out
    events = [json.loads(line) for line in out.splitlines()]
    kinds = [e["event"] for e in events]
    assert kinds[0] == "session" and kinds[-1] == "turn_done"
    assert {"tool_call", "permission", "tool_result", "usage", "message", "text"} <= set(kinds)
    permission = next(e for e in events if e["event"] == "permission")
    assert permission["decision"] == "allow_once"
    assert (tmp_path / "x.txt").read_text() == "x"
    usage = next(e for e in events if e["event"] == "usage")
    assert usage["context"] == usage["input_tokens"] + usage["cache_creation"] + usage["cache_read"]


def test_run_api_failure_exits_1_with_a_clear_error(mock_api, capsys, tmp_path):
    mock_api.add(r.invalid_request("prompt is too long: 210000 tokens > 200000 maximum"))
    assert cli("--prompt", "x", "--session", str(tmp_path / "s.jsonl"), "--cwd", str(tmp_path)) == 1
    err = capsys.readouterr().err
    assert "error: API error 400 invalid_request_error: prompt is too long" in err


def test_run_refuses_a_foreign_session_file(mock_api, capsys, corpus):
    claude_code = next(corpus.glob("*.jsonl"))
    assert cli("--prompt", "x", "--session", str(claude_code)) == 2
    assert "not one the agent wrote" in capsys.readouterr().err


@pytest.mark.parametrize("bad", [["--cwd", "/nonexistent/dir"], ["--add-dir", "/nonexistent/dir"],
                                 ["--compact-at", "0"]])
def test_run_bad_arguments_exit_2(mock_api, capsys, tmp_path, bad):
    assert cli("--prompt", "x", "--session", str(tmp_path / "s.jsonl"), *bad) == 2
    assert capsys.readouterr().err.startswith("context-inspector: ")


def test_a_killed_run_loses_at_most_the_event_in_flight(mock_api, tmp_path):
    """SIGKILL while the second response streams: every line before it is on disk and the file loads."""
    gate = threading.Event()
    (tmp_path / "f.txt").write_text("x\n")
    mock_api.add(r.tool_calls(("read_file", {"path": "f.txt"})), r.text("streaming when killed " * 5, gate=gate))
    session = tmp_path / "s.jsonl"
    env = {**os.environ, "CONTEXT_INSPECTOR_MEMORY": str(tmp_path / "none.md")}
    proc = subprocess.Popen([sys.executable, "-m", "inspector", "run", "--prompt", "read f.txt", "--session",
                             str(session), "--cwd", str(tmp_path)], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while len(mock_api.message_requests) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.2)  # the first delta is out: the process is mid-stream
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        gate.set()
        if proc.poll() is None:
            proc.kill()
    loaded = load(session)
    assert not loaded.warnings
    assert [m.kind for m in loaded.messages] == ["prompt", "assistant", "tool_result"]
    assert len(loaded.requests) == 1
