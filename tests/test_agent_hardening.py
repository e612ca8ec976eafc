"""Hardening II, the agent's side (issue 15, items 1-7): what a hostile model, repository or server tries.

The key read back through /proc, git running repository-controlled programs, credentials in the endpoint URL,
Retry-After obeyed for days, a regex that backtracks forever, a FIFO, links and `**` patterns, lone surrogates,
duplicate tool ids, CLAUDE.md imports reaching out of the project, and a permission question that hides its tail.
"""

from __future__ import annotations

import base64
import json
import os
import re
import secrets as pysecrets
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from bad_inputs.proc import run
from inspector.core.agent.cancel import Cancel
from inspector.core.agent.tools import TOOLS_BY_NAME, ToolContext, run_tool
from mock_api import responses as r


def _key() -> str:
    """A key that looks real and that no other process on the machine holds."""
    return "sk-ant-api03-" + pysecrets.token_urlsafe(60) + "-AA"


def _decoded(text: str) -> str:
    """`text` with every base64 run in it decoded too: a model may encode what it leaks."""
    out = [text]
    for chunk in re.findall(r"[A-Za-z0-9+/=]{16,}", text):
        try:
            out.append(base64.b64decode(chunk + "=" * (-len(chunk) % 4)).decode("utf-8", "replace"))
        except ValueError:
            continue
    return "\n".join(out)


# --- item 5: the key out of every process the tools can read ---------------------------------------------------

def test_the_shell_cannot_read_the_key_from_any_process(mock_api, tmp_path):
    """The real `run` as a subprocess, its key in the environment it was started with: a command reading
    /proc/$PPID/environ (and every other process's) finds no key, in the clear or encoded."""
    key = _key()
    mock_api.add(r.tool_calls(("bash", {"command": "tr '\\0' '\\n' < /proc/$PPID/environ | base64 -w0; echo; "
                                                   "cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | "
                                                   "grep -a ANTHROPIC | base64 -w0"})),
                 r.text("done"))
    env = {**os.environ, "ANTHROPIC_API_KEY": key, "ANTHROPIC_BASE_URL": mock_api.url, "HOME": str(tmp_path),
           "XDG_DATA_HOME": str(tmp_path / "data"), "CONTEXT_INSPECTOR_MEMORY": str(tmp_path / "none.md")}
    session = tmp_path / "s.jsonl"
    result = run([sys.executable, "-m", "inspector", "run", "--prompt", "look", "--session", str(session),
                  "--cwd", str(tmp_path), "--allow-writes", "--json"], env=env)
    assert result.returncode == 0, result.stderr
    sent = mock_api.message_requests[1].text()
    assert "ANTHROPIC_BASE_URL" in _decoded(sent)  # the command did read the parent's environment
    for where, text in (("what the model was sent", sent), ("the session file", session.read_text()),
                        ("the output", result.stdout + result.stderr)):
        assert key not in _decoded(text), f"{where} holds the key"
    headers = mock_api.message_requests[0].headers
    assert key in headers.get("x-api-key", "") + headers.get("authorization", "")  # it did reach the API


def test_sealing_leaves_the_key_to_this_process_only(monkeypatch):
    """`seal()` takes the credentials out of what children inherit (the C environment), not out of os.environ:
    the code that reads the key still finds it."""
    from inspector.core.secrets import scrubbed_env, seal

    key = _key()
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    seal()
    child = subprocess.run(["sh", "-c", "echo \"[$ANTHROPIC_API_KEY]\""], capture_output=True, text=True)
    assert child.stdout.strip() == "[]"
    assert os.environ["ANTHROPIC_API_KEY"] == key and "ANTHROPIC_API_KEY" not in scrubbed_env()


# --- item 4: git runs nothing the repository chose, and never with the key ------------------------------------

@pytest.fixture
def hostile_repo(tmp_path) -> tuple[Path, Path]:
    """A repository whose config runs a program from git status and log: fsmonitor, a clean filter, signature
    checking with its own gpg, hooks. The program logs its environment."""
    repo, log = tmp_path / "repo", tmp_path / "ran.log"
    repo.mkdir()
    hook = tmp_path / "hook.sh"
    hook.write_text(f"#!/bin/sh\necho \"ran $0\" >> {log}\nenv >> {log}\ncat\n")
    hook.chmod(0o755)
    git = ["git", "-C", str(repo), "-c", "user.email=a@b", "-c", "user.name=n"]
    subprocess.run([*git, "init", "-q"], check=True)
    (repo / "a.txt").write_text("x\n")
    (repo / ".gitattributes").write_text("*.txt filter=evil\n")
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "first"], check=True)
    for name, value in (("core.fsmonitor", hook), ("filter.evil.clean", hook), ("filter.evil.process", hook),
                        ("log.showSignature", "true"), ("gpg.program", hook), ("core.hooksPath", tmp_path)):
        subprocess.run([*git, "config", name, str(value)], check=True)
    for name in ("post-index-change", "post-checkout", "reference-transaction"):
        (tmp_path / name).symlink_to(hook)
    (repo / "a.txt").write_text("changed\n")
    os.utime(repo / "a.txt", (1, 1))  # racily clean: status has to run the clean filter to compare
    return repo, log


def test_git_runs_no_program_the_repository_chose(hostile_repo, monkeypatch):
    from inspector.core.prompt.environment import git_info

    repo, log = hostile_repo
    monkeypatch.setenv("ANTHROPIC_API_KEY", _key())
    info = git_info(repo)
    assert not log.exists(), log.read_text()[:500]
    assert info.error == "" and info.commits and info.commits[0].endswith("first")
    assert any("a.txt" in s for s in info.status or [])


def test_prompt_and_run_on_a_hostile_repository_run_nothing(hostile_repo, mock_api, tmp_path, monkeypatch):
    from inspector.cli import main

    repo, log = hostile_repo
    monkeypatch.setenv("CONTEXT_INSPECTOR_MEMORY", str(tmp_path / "none.md"))
    assert main(["prompt", "--cwd", str(repo)]) == 0
    mock_api.add(r.tool_calls(("grep", {"pattern": "x"}), ("read_file", {"path": "a.txt"})), r.text("ok"))
    assert main(["run", "--prompt", "hi", "--cwd", str(repo), "--session", str(tmp_path / "s.jsonl")]) == 0
    assert not log.exists()


# --- item 15: credentials in the endpoint URL ----------------------------------------------------------------

URL_SECRETS = ("hunter2pass", "t0kensecret", "s1gsecret")
CREDENTIAL_URL = "http://robot:hunter2pass@127.0.0.1:9/v1?token=t0kensecret&sig=s1gsecret"


def test_endpoint_credentials_never_reach_an_error_line(monkeypatch, tmp_path, capsys):
    from inspector.cli import main
    from inspector.core.agent.provider import AnthropicProvider, ProviderError
    from inspector.core.agent.provider import ModelRequest

    monkeypatch.setenv("ANTHROPIC_API_KEY", _key())
    monkeypatch.setenv("ANTHROPIC_BASE_URL", CREDENTIAL_URL)
    provider = AnthropicProvider.from_env(max_retries=0)
    assert not any(s in repr(provider) for s in URL_SECRETS)
    events = provider.stream(ModelRequest("m", "", [], [], 10), Cancel())
    with pytest.raises(ProviderError) as caught:
        list(events)
    assert "127.0.0.1:9" in str(caught.value)
    assert not any(s in str(caught.value) for s in URL_SECRETS), str(caught.value)
    monkeypatch.setenv("CONTEXT_INSPECTOR_MEMORY", str(tmp_path / "none.md"))
    main(["run", "--prompt", "hi", "--cwd", str(tmp_path), "--session", str(tmp_path / "s.jsonl")])
    out, err = capsys.readouterr()
    assert "127.0.0.1:9" in err
    assert not any(s in out + err + (tmp_path / "s.jsonl").read_text() for s in URL_SECRETS), err


def test_redact_hides_url_credentials_wherever_they_appear(monkeypatch):
    from inspector.core.secrets import redact, safe_url

    monkeypatch.setenv("ANTHROPIC_BASE_URL", CREDENTIAL_URL)
    line = redact(f"GET {CREDENTIAL_URL} failed; password was hunter2pass")
    assert not any(s in line for s in URL_SECRETS), line
    assert safe_url(CREDENTIAL_URL) == "http://robot:[REDACTED]@127.0.0.1:9/v1?token=[REDACTED]&sig=[REDACTED]"
    assert safe_url("https://api.example.com/") == "https://api.example.com/"


# --- item 6: Retry-After capped, shown, and cancelled at once -------------------------------------------------

def _overloaded(seconds: str) -> r.ApiError:
    return r.ApiError(529, "overloaded_error", "Overloaded", retry_after_ms=None, headers={"retry-after": seconds})


def test_a_retry_wait_is_capped_shown_and_cancelled_at_once(mock_api):
    from inspector.core.agent.events import Retrying
    from inspector.core.agent.provider import MAX_RETRY_WAIT, AnthropicProvider, Cancelled, ModelRequest

    mock_api.add(_overloaded("100000"), r.text("never"))
    cancel = Cancel()
    events = AnthropicProvider("k", mock_api.url, max_retries=2).stream(
        ModelRequest("m", "", [], [], 10), cancel)
    first = next(events)
    assert isinstance(first, Retrying) and first.wait == MAX_RETRY_WAIT == 60
    assert first.status == 529 and first.attempt == 1 and first.attempts == 2 and first.asked == 100000
    timer = threading.Timer(0.2, cancel.cancel)
    timer.start()
    start = time.monotonic()
    with pytest.raises(Cancelled):
        next(events)
    assert time.monotonic() - start < 10  # not the 60 s wait
    assert len(mock_api.message_requests) == 1  # no retry was sent after the cancel


def test_a_short_retry_wait_is_obeyed_and_the_turn_goes_on(mock_api):
    from inspector.core.agent.events import Retrying
    from inspector.core.agent.provider import AnthropicProvider, ModelRequest, ProviderError, drain

    mock_api.add(_overloaded("0.1"), r.rate_limited(), r.text("fine"))
    events = AnthropicProvider("k", mock_api.url, max_retries=2).stream(ModelRequest("m", "", [], [], 10),
                                                                        Cancel())
    seen = []
    while True:
        try:
            seen.append(next(events))
        except StopIteration as stop:
            response = stop.value
            break
    assert response.blocks[0].text == "fine" and len(mock_api.message_requests) == 3
    waits = [e for e in seen if isinstance(e, Retrying)]
    assert [(e.status, e.attempt) for e in waits] == [(529, 1), (429, 2)] and 0 < waits[0].wait <= 0.1
    mock_api.add(_overloaded("0.1"))
    with pytest.raises(ProviderError, match="529"):  # no retries left: the error, at once
        drain(AnthropicProvider("k", mock_api.url, max_retries=0).stream(ModelRequest("m", "", [], [], 10),
                                                                         Cancel()), None)


def test_run_shows_the_wait_and_the_first_ctrl_c_ends_it(mock_api, tmp_path):
    import signal

    mock_api.add(_overloaded("100000"))
    env = {**os.environ, "ANTHROPIC_API_KEY": _key(), "ANTHROPIC_BASE_URL": mock_api.url, "HOME": str(tmp_path),
           "XDG_DATA_HOME": str(tmp_path / "data"), "CONTEXT_INSPECTOR_MEMORY": str(tmp_path / "none.md")}
    proc = subprocess.Popen([sys.executable, "-m", "inspector", "run", "--prompt", "hi", "--cwd", str(tmp_path),
                             "--session", str(tmp_path / "s.jsonl")], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while not mock_api.message_requests and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        start = time.monotonic()
        out, err = proc.communicate(timeout=30)
        assert time.monotonic() - start < 15  # not the 60 s wait (a loaded machine can take seconds to exit)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "retrying in 60 s" in out + err and "100,000 s" in out + err, out + err


# --- item 3 and 7: every read-only tool bounded ---------------------------------------------------------------

CATASTROPHIC = "(.*.*)*QQQ"  # backtracking engines take exponential time on a line without QQQ


def _tool(name: str, args: dict, work: Path, **kw) -> tuple[str, bool]:
    return run_tool(TOOLS_BY_NAME[name], args, ToolContext(work, **kw))


def test_a_catastrophic_pattern_returns_at_once(tmp_path):
    """In a subprocess: a backtracking engine would hold the GIL for hours, and nothing in-process could stop it."""
    (tmp_path / "a.txt").write_text("a" * 60 + "\n")
    code = ("import sys; from pathlib import Path; from inspector.core.agent.tools import TOOLS_BY_NAME, "
            "ToolContext, run_tool; print(run_tool(TOOLS_BY_NAME['grep'], {'pattern': sys.argv[1]}, "
            "ToolContext(Path(sys.argv[2]))))")
    result = run([sys.executable, "-c", code, CATASTROPHIC, str(tmp_path)], timeout=20)
    assert not result.timed_out and result.returncode == 0, result.stderr
    assert "No matches" in result.stdout


def test_grep_speaks_re2_and_says_so(tmp_path):
    (tmp_path / "a.txt").write_text("alpha\nBeta gamma\nlast line without a newline")
    text, err = _tool("grep", {"pattern": "^beta", "ignore_case": True}, tmp_path)
    assert not err and text == "a.txt:2:Beta gamma"
    text, err = _tool("grep", {"pattern": "newline$"}, tmp_path)
    assert text == "a.txt:3:last line without a newline"
    text, err = _tool("grep", {"pattern": r"(a)\1"}, tmp_path)  # a backreference: not RE2
    assert err and "bad regular expression" in text and "RE2" in text
    text, err = _tool("grep", {"pattern": "a|"}, tmp_path)  # matches the empty string: every line, once
    assert not err and text.count("\n") == 2
    assert "RE2" in TOOLS_BY_NAME["grep"].description


def test_a_fifo_or_device_in_the_working_directory_hangs_nothing(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "a.txt").write_text("needle\n")
    text, err = _tool("grep", {"pattern": "needle"}, tmp_path)
    assert text == "a.txt:1:needle"
    text, err = _tool("read_file", {"path": "pipe"}, tmp_path)
    assert err and "not a regular file" in text
    text, err = _tool("edit_file", {"path": "pipe", "old_string": "a", "new_string": "b"}, tmp_path)
    assert err and "not a regular file" in text
    text, err = _tool("glob", {"pattern": "*"}, tmp_path)
    assert text == "a.txt"


@pytest.fixture
def linked(tmp_path) -> Path:
    work, outside = tmp_path / "work", tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "secret.txt").write_text("TOPSECRET\n")
    (outside / "deep" / "key.pem").write_text("TOPSECRET\n")
    work.mkdir()
    (work / "inside.txt").write_text("fine\n")
    (work / "link-dir").symlink_to(outside)
    (work / "link-file.txt").symlink_to(outside / "secret.txt")
    (work / "ok-link.txt").symlink_to(work / "inside.txt")
    return work


@pytest.mark.parametrize("pattern", ["link-dir/*", "*/*", "**/*.pem", "link-dir/**", "*/deep/*", "**"])
def test_glob_never_lists_names_behind_a_link_out(linked, pattern):
    text, err = _tool("glob", {"pattern": pattern}, linked)
    assert "secret" not in text and "key.pem" not in text, text


def test_glob_lists_links_that_stay_inside(linked):
    text, _ = _tool("glob", {"pattern": "*.txt"}, linked)
    assert text.splitlines() == ["inside.txt", "ok-link.txt"]


def test_grep_through_links_out_finds_nothing(linked):
    text, _ = _tool("grep", {"pattern": "TOPSECRET|fine"}, linked)
    assert text.splitlines() == ["inside.txt:1:fine", "ok-link.txt:1:fine"]


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """6 levels, 4 directories each (5,460 directories), a file in each: what `**/**/**/...` made exponential."""
    root = tmp_path_factory.mktemp("tree")

    def grow(d: Path, depth: int) -> None:
        (d / "f.py").write_text("x = 1\n")
        if depth:
            for i in range(4):
                (d / f"d{i}").mkdir()
                grow(d / f"d{i}", depth - 1)

    grow(root, 6)
    return root


def test_a_pattern_of_many_double_stars_is_linear(tree):
    code = ("import sys; from pathlib import Path; from inspector.core.agent.tools import TOOLS_BY_NAME, "
            "ToolContext, run_tool; t, e = run_tool(TOOLS_BY_NAME['glob'], {'pattern': sys.argv[1], "
            "'max_results': 100000}, ToolContext(Path(sys.argv[2]), output_cap=10**7)); "
            "print(len(t.splitlines()), e)")
    result = run([sys.executable, "-c", code, "**/" * 12 + "*.py", str(tree)], timeout=20)
    assert not result.timed_out, "the glob ran on past 20 s"
    assert result.stdout.split() == ["5461", "False"], result.stdout + result.stderr


def test_glob_matches_as_pathlib_does(tree):
    for pattern in ("*.py", "d1/*.py", "**/d3/f.py", "d[12]/d?/*.py", "d[!0]/*.py", "**/*.py", "d0/**/f.py"):
        expected = sorted(str(p.relative_to(tree)) for p in tree.glob(pattern) if p.is_file())
        text, _ = _tool("glob", {"pattern": pattern, "max_results": 100000}, tree, output_cap=10**7)
        assert text.splitlines() == expected, pattern
    text, _ = _tool("glob", {"pattern": "d0/d1/**"}, tree)  # a trailing ** lists every file below (pathlib: dirs)
    assert len(text.splitlines()) == 341 and all(line.startswith("d0/d1/") for line in text.splitlines())


def test_a_walk_stops_at_its_time_limit_and_at_cancel(tree):
    text, err = _tool("grep", {"pattern": "x"}, tree, time_limit=0.01)
    assert not err and "[stopped after 0.01 s" in text.splitlines()[-1]
    cancel = Cancel()
    cancel.cancel()
    text, err = _tool("glob", {"pattern": "**/*.py"}, tree, cancel=cancel)
    assert err and text.startswith("Interrupted by the user")


def test_read_file_is_bounded_on_a_huge_line_and_a_huge_file(tmp_path):
    import tracemalloc

    with open(tmp_path / "one-line", "wb") as f:  # 300 MB with no line end
        f.truncate(300_000_000)
        f.seek(0)
        f.write(b"start")
    f2 = tmp_path / "many"
    f2.write_bytes(b"line\n" * 2_000_000)
    tracemalloc.start()
    try:
        text, err = _tool("read_file", {"path": "one-line"}, tmp_path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert err and "binary" in text  # NUL bytes: not text
    (tmp_path / "long").write_bytes(b"y" * 50_000_000 + b"\nsecond\n")
    text, err = _tool("read_file", {"path": "long"}, tmp_path)
    assert not err and "2\tsecond" in text and "more bytes" in text
    text, err = _tool("read_file", {"path": "many", "offset": 1_999_999}, tmp_path)
    assert text.splitlines() == ["1999999\tline", "2000000\tline"]
    assert peak < 20_000_000


# --- item 7: text that cannot be encoded, and tool ids given twice -------------------------------------------

def _agent(mock_api, work: Path, **kw):
    from inspector.core.agent import AgentConfig
    from inspector.core.agent.permissions import Permissions, headless
    from inspector.core.agent.provider import AnthropicProvider

    return AgentConfig(AnthropicProvider("k", mock_api.url, max_retries=0), work,
                       permissions=Permissions([work], auto=headless(True)), **kw)


def test_lone_surrogates_never_reach_history(mock_api, tmp_path):
    """A file name that is no UTF-8 (glob gives it back with a surrogate escape) and a streamed lone surrogate:
    the next turn's request still encodes, and the session file loads back whole."""
    from inspector.core.agent.loop import run as run_turn
    from inspector.core.agent.writer import SessionWriter
    from inspector.core.formats import load

    (tmp_path / os.fsdecode(b"bad\xff.txt")).write_text("x")
    mock_api.add(r.tool_calls(("glob", {"pattern": "*.txt"}), preamble="half \ud83d emoji"), r.text("ok \udfff"),
                 r.text("second turn"))
    config = _agent(mock_api, tmp_path)
    state = config.new_session("system", str(tmp_path / "s.jsonl"))
    with SessionWriter(tmp_path / "s.jsonl", state) as writer:
        for text in ("list \udc80 files", "again"):
            done = [e for e in writer.tee(run_turn(text, state, config, "system"))][-1]
            assert done.stop_reason == "end_turn", done
    assert mock_api.message_requests[-1].text().count("\ufffd") >= 4
    for m in state.messages:
        for b in m.blocks:
            b.all_text().encode("utf-8")  # no lone surrogate left anywhere
    loaded = load(tmp_path / "s.jsonl")
    assert not loaded.warnings and len(loaded.messages) == len(state.messages)


def test_a_tool_id_given_twice_runs_once(mock_api, tmp_path):
    from inspector.core.agent.loop import run as run_turn
    from inspector.core.pairing import find_orphans

    call = {"command": "echo ran >> log.txt"}
    twice = r.Reply([r.tool_use_block("bash", call, id="toolu_dup"), r.tool_use_block("bash", call, id="toolu_dup"),
                     r.tool_use_block("bash", call, id="toolu_other")], stop_reason="tool_use")
    mock_api.add(twice, r.text("done"))
    config = _agent(mock_api, tmp_path)
    state = config.new_session("system")
    events = list(run_turn("go", state, config, "system"))
    assert (tmp_path / "log.txt").read_text() == "ran\nran\n"  # toolu_dup once, toolu_other once
    sent = mock_api.message_requests[1].messages
    uses = [b["id"] for b in sent[-2]["content"] if b["type"] == "tool_use"]
    results = [b for b in sent[-1]["content"] if b["type"] == "tool_result"]
    assert len(set(uses)) == 3 and sorted(b["tool_use_id"] for b in results) == sorted(uses)
    repeated = next(b for b in results if b["tool_use_id"] not in ("toolu_dup", "toolu_other"))
    assert repeated["is_error"] and "repeats the id toolu_dup" in str(repeated["content"])
    assert not find_orphans(state.messages) and events[-1].stop_reason == "end_turn"


# --- item 1: the permission question shows everything it asks about -----------------------------------------

def _asked(tool: str, args: dict, work: Path):
    from inspector.core.agent.permissions import Permissions

    asked = Permissions([work]).check(TOOLS_BY_NAME[tool], args, ToolContext(work), "toolu_1")
    assert asked is not None
    return asked


def test_a_padded_command_shows_its_tail_and_the_padding(tmp_path):
    from inspector.core.agent.permissions import plain, question

    command = "echo ok" + " " * 420 + "; echo PWNED > f"
    lines = question(_asked("bash", {"command": command}, tmp_path))
    text = plain(lines)
    assert "; echo PWNED > f" in text and "[420 spaces]" in text
    marks = [t for line in lines for t, kind in line if kind == "mark"]
    assert "[420 spaces]" in marks  # drawn as a mark, not as text the command could have typed itself


def test_the_path_comes_first_and_resolved_whatever_the_key_order(tmp_path):
    from inspector.core.agent.permissions import plain, question

    args = {"content": "x\n" * 50_000, "path": "sub/../../escape.txt"}
    text = plain(question(_asked("write_file", args, tmp_path)))
    first = text.splitlines()[0]
    assert first.startswith("path: sub/../../escape.txt") and str(tmp_path.parent / "escape.txt") in first
    assert "content: 100,000 characters, 50,000 lines" in text
    assert "more characters not shown" in text  # the cut is marked


def test_controls_bidi_and_tabs_are_visible_in_the_question(tmp_path):
    from inspector.core.agent.permissions import plain, question

    command = "ls\x1b[2J\r\u202eexe.txt\u2066\t#\u200b"
    lines = question(_asked("bash", {"command": command}, tmp_path))
    text = plain(lines)
    for seen in ("␛[2J", "␍", "<U+202E>", "<U+2066>", "<U+200B>", "⇥"):
        assert seen in text, seen
    assert not any(c in text for c in "\x1b\r\u202e\u2066\u200b\t")


async def _ready_panel(app, pilot):
    from inspector.app.widgets.agent_panel import AgentPanel

    for _ in range(1000):
        await pilot.pause(0.02)
        panels = list(app.screen.query(AgentPanel))
        if panels and panels[0].cancel is not None:
            return panels[0]
    raise AssertionError("the agent view never got ready")


async def _ask_and_wait(pilot, panel) -> None:
    """Send "go" and wait for the panel's question."""
    from textual.widgets import Input

    box = panel.query_one("#agent-input", Input)
    box.focus()
    box.value = "go"
    await pilot.pause()
    await pilot.press("enter")
    for _ in range(1000):
        await pilot.pause(0.02)
        if panel.pending is not None:
            return
    raise AssertionError("no question came")


async def test_the_app_question_shows_the_whole_command(mock_api, tmp_path, monkeypatch):
    from inspector.app import make_app
    from inspector.app.agent_bridge import AgentOptions

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("CONTEXT_INSPECTOR_MEMORY", str(tmp_path / "none.md"))
    command = "echo ok" + " " * 420 + "; echo PWNED > f"
    mock_api.add(r.tool_calls(("bash", {"command": command})), r.text("ok"))
    app = make_app(None, home=False, agent=AgentOptions(cwd=tmp_path, open_view=True))
    async with app.run_test(size=(100, 30)) as pilot:
        panel = await _ready_panel(app, pilot)
        await _ask_and_wait(pilot, panel)
        shown = panel.pending.query_one(".question").content.plain
        assert "; echo PWNED > f" in shown and "[420 spaces]" in shown
        await pilot.press("n")


# --- item 2: CLAUDE.md imports that reach out of the project -------------------------------------------------

@pytest.fixture
def importing(tmp_path, monkeypatch) -> Path:
    """A project whose CLAUDE.md imports a file beside the project and the user's AWS credentials."""
    home, project, outside = tmp_path / "home", tmp_path / "project", tmp_path / "outside"
    (home / ".aws").mkdir(parents=True)
    (home / ".aws" / "credentials").write_text("aws_secret_access_key = AWSSECRETVALUE\n")
    outside.mkdir()
    (outside / "x.md").write_text("OUTSIDE TEXT\n")
    (project / "docs").mkdir(parents=True)
    (project / "docs" / "style.md").write_text("Inside style guide.\n")
    (project / "CLAUDE.md").write_text("Rules.\n@docs/style.md\n@../outside/x.md\n@~/.aws/credentials\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    monkeypatch.setenv("CONTEXT_INSPECTOR_MEMORY", str(tmp_path / "none.md"))
    return project


def test_imports_outside_the_project_are_not_read_unless_allowed(importing):
    from inspector.core.prompt.builder import assemble

    prompt = assemble(importing)
    assert "Inside style guide." in prompt.text
    assert "OUTSIDE TEXT" not in prompt.text and "AWSSECRETVALUE" not in prompt.text
    assert len(prompt.outside) == 2 and any("outside the project" in n for n in prompt.notes)
    allowed = assemble(importing, allow_outside=True)
    assert "OUTSIDE TEXT" in allowed.text and "AWSSECRETVALUE" in allowed.text
    assert "OUTSIDE TEXT" not in allowed.saved_text and "AWSSECRETVALUE" not in allowed.saved_text
    assert "Inside style guide." in allowed.saved_text


def test_run_refuses_outside_imports_and_never_saves_them(importing, mock_api, tmp_path, capsys):
    from inspector.cli import main

    mock_api.add(r.text("one"), r.text("two"))
    session = tmp_path / "s.jsonl"
    assert main(["run", "--prompt", "hi", "--cwd", str(importing), "--session", str(session)]) == 0
    assert "OUTSIDE TEXT" not in json.dumps(mock_api.message_requests[0].body)
    assert "outside the project" in capsys.readouterr().err
    other = tmp_path / "t.jsonl"
    assert main(["run", "--prompt", "hi", "--cwd", str(importing), "--session", str(other),
                 "--allow-outside-imports"]) == 0
    assert "OUTSIDE TEXT" in json.dumps(mock_api.message_requests[1].body)
    for saved in (session, other):
        text = saved.read_text()
        assert "OUTSIDE TEXT" not in text and "AWSSECRETVALUE" not in text and "Inside style guide." in text


async def test_the_app_asks_before_sending_outside_imports(importing, mock_api, tmp_path, monkeypatch):
    from inspector.app import make_app
    from inspector.app.agent_bridge import AgentOptions

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    mock_api.add(r.text("one"))
    session = tmp_path / "agent.jsonl"
    app = make_app(None, home=False, agent=AgentOptions(cwd=importing, session=session, open_view=True))
    async with app.run_test(size=(100, 30)) as pilot:
        panel = await _ready_panel(app, pilot)
        assert "OUTSIDE TEXT" not in (app.screen.session.system or "")
        await _ask_and_wait(pilot, panel)
        shown = panel.pending.query_one(".question").content.plain
        assert "outside the project" in shown and "credentials" in shown and "x.md" in shown
        await pilot.press("y")
        for _ in range(1000):
            await pilot.pause(0.02)
            if mock_api.message_requests and not panel.running:
                break
    assert "OUTSIDE TEXT" in json.dumps(mock_api.message_requests[0].body)
    assert "OUTSIDE TEXT" not in session.read_text() and "Inside style guide." in session.read_text()


# --- fuzzing the question and the glob translation -------------------------------------------------------------

from hypothesis import given, strategies as st  # noqa: E402

from test_fuzz import FUZZ  # noqa: E402


@FUZZ
@given(st.text(alphabet=st.characters(codec="utf-8") | st.sampled_from(" \t\r\x1b\x9b\u202e\u2066\u200b\ud83d"),
               max_size=300))
def test_a_question_hides_nothing_and_lets_nothing_act(tmp_path_factory, command):
    from inspector.core.agent.permissions import plain, question

    work = tmp_path_factory.getbasetemp()
    text = plain(question(_asked("bash", {"command": command}, work)))
    assert not re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200b\ud800-\udfff]", text)
    words = [w for w in re.split(r"[\s\x00-\x1f\x7f-\x9f\u00a0\u2000-\u206f\ud800-\udfff]+", command) if w]
    at = 0
    for word in words:  # every visible part of the command, in order
        at = text.find(word, at)
        assert at >= 0, word


@FUZZ
@given(st.lists(st.sampled_from(["*", "?", "a", "b", "[ab]", "[!a]", "**", ".", "x*"]), min_size=1, max_size=4),
       st.lists(st.text(alphabet="abx.", min_size=1, max_size=3), min_size=1, max_size=3))
def test_glob_translation_agrees_with_fnmatch_on_names(parts, names):
    import fnmatch

    from inspector.core.agent.tools import _glob_regex

    pattern = "".join(p for p in parts if p != "**") or "*"
    if pattern in (".", ".."):  # the directory itself or its parent as a path: no file name
        return
    for name in (n for n in names if n not in (".", "..")):  # no file has these names
        assert bool(_glob_regex(pattern).fullmatch(name)) == fnmatch.fnmatchcase(name, pattern), (pattern, name)
