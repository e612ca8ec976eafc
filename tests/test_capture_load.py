"""Capture files read by the request/response loader and followed live; the `capture` command end to end."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import anthropic

from capture_helpers import RunningProxy
from inspector.capture.launch import child_environment, codex_arguments, codex_provider, exit_status
from inspector.core.formats import detect, load
from inspector.core.follower import Follower
from mock_api import MOCK_KEY, responses as r

HEADER = {"capture": {"version": 1, "started": "2026-12-01T10:00:00.000Z", "proxy": "http://127.0.0.1:1",
                      "upstreams": {}}}
TOOLS = [{"name": "Read", "description": "read a file", "input_schema": {"type": "object"}}]


def record(seq: int, messages: list, reply: str | None = "ok", *, system: str = "You are the agent.",
           tools: list | None = TOOLS, protocol: str = "anthropic-messages", status: int = 200,
           complete: bool = True, usage: dict | None = None, model: str = "claude-opus-4-5") -> dict:
    request = {"model": model, "max_tokens": 100, "system": system, "messages": messages}
    if tools:
        request["tools"] = tools
    response = {"id": f"msg_{seq}", "type": "message", "role": "assistant", "model": model,
                "content": [{"type": "text", "text": reply}], "stop_reason": "end_turn",
                "usage": usage or {"input_tokens": 100 * seq, "output_tokens": 10}} if reply is not None else None
    return {"seq": seq, "time": f"2026-12-01T10:00:{seq:02d}.000Z", "protocol": protocol, "method": "POST",
            "path": "/v1/messages", "request": request, "status": status, "response": response,
            "complete": complete, "error": None if complete else "the upstream broke off the answer"}


def write(path: Path, *lines: dict) -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def user(text: str) -> dict:
    return {"role": "user", "content": text}


def assistant(text: str) -> dict:
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


def test_a_capture_with_no_exchange_yet_loads_empty(tmp_path):
    path = write(tmp_path / "c.jsonl", HEADER)
    assert detect(path) == "anthropic-request"
    s = load(path)
    assert s.messages == [] and s.warnings == []


def test_side_conversations_are_named_and_the_agent_loop_is_the_session(tmp_path):
    main1 = [user("fix the bug")]
    main2 = main1 + [assistant("Looking."), user("go on")]
    path = write(tmp_path / "c.jsonl", HEADER,
                 record(1, [user("quota")], "ok", tools=None, system="", model="claude-haiku-4-5"),
                 record(2, main1, "Looking."),
                 record(3, [user("Write a title for: fix the bug")], "Bug fix", tools=None, system="Titles.",
                        model="claude-haiku-4-5"),
                 record(4, [user("count me")], None, protocol="anthropic-count-tokens"),
                 record(5, [user("Find where the bug is")], "In main.py", system="You are a subagent."),
                 record(6, main2, "Fixed."))
    s = load(path)
    assert [m.text() for m in s.messages] == ["fix the bug", "Looking.", "go on", "Fixed."]
    assert [q.id for q in s.requests] == ["msg_2", "msg_6"] and s.compactions == []
    assert s.system == "You are the agent." and [t.name for t in s.tools] == ["Read"]
    assert [m.timestamp for m in s.messages] == ["2026-12-01T10:00:02.000Z"] * 2 + ["2026-12-01T10:00:06.000Z"] * 2
    notes = [(w.line, w.message) for w in s.warnings]
    assert [line for line, _ in notes] == [2, 4, 6]
    assert "1 request, claude-haiku-4-5, no tools, starting \"quota\"" in notes[0][1]
    assert "with tools, starting \"Find where the bug is\"" in notes[2][1]


def test_compaction_and_rewritten_history_within_a_thread(tmp_path):
    first = [user("task"), assistant("step 1"), user("more")]
    summary = [user("This session is being continued from a previous conversation that ran out of context. ...")]
    path = write(tmp_path / "c.jsonl", HEADER, record(1, first, "step 2"),
                 record(2, summary, "Resuming.", usage={"input_tokens": 50, "output_tokens": 5}),
                 record(3, [user("task"), assistant("edited"), user("again")], "step 3"))
    s = load(path)
    kinds = [m.kind for m in s.messages]
    assert kinds == ["prompt", "assistant", "prompt", "assistant", "compact_summary", "assistant", "prompt",
                     "assistant", "prompt", "assistant"]
    assert [(c.index, c.line, c.pre_tokens) for c in s.compactions] == [(4, 3, 100), (6, 4, 50)]
    assert s.context_start == 6 and s.requests[2].seen_start == 6


def test_refused_and_partial_exchanges_keep_their_request_only(tmp_path):
    ask = [user("hello")]
    refused = record(1, ask, None, status=529)
    refused["response"] = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    path = write(tmp_path / "c.jsonl", HEADER, refused, record(2, ask, "Hel", complete=False),
                 record(3, ask, "Hello!"))
    s = load(path)
    assert [m.text() for m in s.messages] == ["hello", "Hello!"] and s.compactions == []
    assert [q.id for q in s.requests] == ["msg_3"]
    assert [(w.line, w.message[:40]) for w in s.warnings] == [
        (2, "exchange 1: the API answered 529 (Overlo"), (3, "exchange 2 ended before its answer did (")]


def test_responses_requests_with_server_side_history(tmp_path):
    def responses(seq, items, answer, previous=None):
        request = {"model": "gpt-test", "instructions": "Be Codex.", "input": items, "store": True}
        if previous:
            request["previous_response_id"] = previous
        return {"seq": seq, "protocol": "openai-responses", "request": request, "status": 200, "complete": True,
                "response": {"id": f"resp_{seq}", "output": [{"type": "message", "role": "assistant", "content": [
                    {"type": "output_text", "text": answer}]}], "usage": {"input_tokens": 10 * seq,
                                                                          "output_tokens": 2}}}

    path = write(tmp_path / "c.jsonl", HEADER, responses(1, "hi", "Hello."),
                 responses(2, [{"role": "user", "content": "and now?"}], "Now this.", previous="resp_1"))
    assert detect(path) == "openai-responses"
    s = load(path)
    assert s.format == "openai-responses" and s.system == "Be Codex."
    assert [m.text() for m in s.messages] == ["hi", "Hello.", "and now?", "Now this."]
    assert [q.measured_context for q in s.requests] == [10, 20] and s.warnings == []


def test_a_bare_responses_request_is_detected(tmp_path):
    path = tmp_path / "request.json"
    path.write_text(json.dumps({"model": "gpt-5", "instructions": "x", "input": [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}]}))
    assert detect(path) == "openai-responses" and [m.kind for m in load(path).messages] == ["prompt"]


def test_following_a_capture_while_the_proxy_writes_it(tmp_path, mock_api):
    mock_api.add(r.text("one"), r.text("two"))
    with RunningProxy(tmp_path / "c.jsonl", {"anthropic": mock_api.url, "openai": mock_api.url}) as proxy:
        follower = Follower(proxy.path)
        assert follower.open().messages == []  # the header alone: an empty session, no error
        sdk = anthropic.Anthropic(base_url=proxy.base_url("anthropic"), api_key=MOCK_KEY)
        history = [{"role": "user", "content": "first"}]
        with sdk.messages.stream(model="m", max_tokens=9, messages=history, tools=TOOLS) as stream:
            stream.get_final_message()
        proxy.records(1)
        change = follower.update()
        assert [m.text() for m in change.session.messages] == ["first", "one"] and change.new_requests == 1
        history += [{"role": "assistant", "content": "one"}, {"role": "user", "content": "second"}]
        with sdk.messages.stream(model="m", max_tokens=9, messages=history, tools=TOOLS) as stream:
            stream.get_final_message()
        proxy.records(2)
        change = follower.update()
    assert change.first_new == 2 and not change.rebuilt
    assert [m.text() for m in change.session.messages] == ["first", "one", "second", "two"]


# -- the command ------------------------------------------------------------------------------------------------------

def capture(*args: str, env: dict | None = None, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "inspector", "capture", *args], capture_output=True, text=True,
                          env=env or dict(os.environ), timeout=120, **kw)


def test_capture_runs_our_agent_and_exits_with_its_status(tmp_path, mock_api):
    mock_api.add(r.tool_calls(("read_file", {"path": "a.txt"})), r.text("It says hello."))
    (tmp_path / "a.txt").write_text("hello\n")
    out = tmp_path / "c.jsonl"
    env = dict(os.environ, ANTHROPIC_API_KEY="sk-ant-api03-commandsecret0123456789")
    done = capture("--out", str(out), "--upstream", mock_api.url, "--", sys.executable, "-m", "inspector", "run",
                   "--prompt", "what does a.txt say?", "--cwd", str(tmp_path), "--session", str(tmp_path / "s.jsonl"),
                   env=env)
    assert done.returncode == 0, done.stderr
    assert "2 exchanges recorded in" in done.stderr and "It says hello." in done.stdout
    assert "commandsecret" not in out.read_text()
    s = load(out)
    assert [m.kind for m in s.messages] == ["prompt", "assistant", "tool_result", "assistant"]
    assert len(s.requests) == 2 and env["ANTHROPIC_API_KEY"] in json.dumps(mock_api.message_requests[0].headers)
    failed = capture("--out", str(tmp_path / "d.jsonl"), "--", sys.executable, "-c", "import sys; sys.exit(3)")
    assert failed.returncode == 3 and "0 exchanges recorded" in failed.stderr


def test_capture_refuses_what_it_cannot_do(tmp_path):
    out = tmp_path / "c.jsonl"
    out.write_text("keep me\n")
    done = capture("--out", str(out), "--", "true")
    assert done.returncode == 2 and "exists" in done.stderr and out.read_text() == "keep me\n"
    missing = tmp_path / "m.jsonl"
    done = capture("--out", str(missing), "--", "no-such-program-xyz")
    assert done.returncode == 2 and "no-such-program-xyz: command not found" in done.stderr
    assert not missing.exists()
    done = capture("--out", str(missing), "--upstream", "ftp://x", "--", "true")
    assert done.returncode == 2 and "not an http(s) URL" in done.stderr
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = capture("--out", str(missing), "--port", str(port), "--", "true")
    assert done.returncode == 2 and done.stderr == f"context-inspector: cannot listen on 127.0.0.1:{port}: " \
        "address already in use\n" and not missing.exists()


def test_capture_without_a_command_prints_the_exports_and_stops_on_ctrl_c(tmp_path, mock_api):
    mock_api.add(r.text("through the printed address"))
    out = tmp_path / "c.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "inspector", "capture", "--out", str(out), "--upstream",
                             mock_api.url], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    exports = dict(proc.stdout.readline().removeprefix("export ").strip().split("=", 1) for _ in range(3))
    assert set(exports) == {"ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "OPENAI_API_BASE"}
    assert exports["ANTHROPIC_BASE_URL"].startswith("http://127.0.0.1:") and exports["ANTHROPIC_BASE_URL"].endswith(
        "/anthropic")
    sdk = anthropic.Anthropic(base_url=exports["ANTHROPIC_BASE_URL"], api_key=MOCK_KEY)
    assert sdk.messages.create(model="m", max_tokens=9, messages=[{"role": "user", "content": "hi"}]).content[
        0].text == "through the printed address"
    time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(30) == 0
    assert "1 exchange recorded" in proc.stderr.read()
    assert [m.text() for m in load(out).messages] == ["hi", "through the printed address"]


def test_codex_is_pointed_at_the_proxy_by_flag(tmp_path):
    home = tmp_path / "codex"
    home.mkdir()
    assert codex_provider({"CODEX_HOME": str(home)}) == (None, None)
    assert codex_arguments(["codex", "exec", "hi"], None, "http://127.0.0.1:9/openai") == [
        "codex", "-c", 'openai_base_url="http://127.0.0.1:9/openai"', "exec", "hi"]
    (home / "config.toml").write_text('model_provider = "mock"\n[model_providers.mock]\n'
                                      'base_url = "http://127.0.0.1:5000/v1"\nwire_api = "responses"\n')
    assert codex_provider({"CODEX_HOME": str(home)}) == ("mock", "http://127.0.0.1:5000/v1")
    assert codex_arguments(["/x/codex", "exec"], "mock", "http://p/openai")[1:3] == [
        "-c", 'model_providers.mock.base_url="http://p/openai"']
    env = child_environment({"NO_PROXY": "corp.example", "HTTPS_PROXY": "http://proxy:3128"},
                            {"anthropic": "http://127.0.0.1:9/anthropic", "openai": "http://127.0.0.1:9/openai"})
    assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9/anthropic" and env["OPENAI_API_BASE"].endswith("/openai")
    assert env["NO_PROXY"] == "corp.example,127.0.0.1,localhost" and env["no_proxy"] == "127.0.0.1,localhost"
    assert (exit_status(0), exit_status(4), exit_status(-signal.SIGINT)) == (0, 4, 130)
