"""Agent safety against a model that tries: permission defaults, confinement to the working directory (through
`..`, absolute paths, `~`, symlinks, dangling links), bash timeouts a command fights, and output caps a command
floods. The end-to-end cases run the real headless `run` against the local Messages-API server.
"""

from __future__ import annotations

import json
import time
import tracemalloc
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.core.agent import AgentConfig
from inspector.core.agent.events import Decision
from inspector.core.agent.permissions import Permissions
from inspector.core.agent.provider import AnthropicProvider
from inspector.core.agent.tools import TOOLS, TOOLS_BY_NAME, ToolContext, run_tool
from mock_api import MOCK_KEY, responses as r

CAP = 2000


@pytest.fixture
def box(tmp_path) -> tuple[Path, Path]:
    """(work, outside): a working directory holding links that point out of it, and the directory they reach."""
    work, outside = tmp_path / "work", tmp_path / "outside"
    work.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("TOPSECRET\n")
    (work / "inside.txt").write_text("fine\n")
    (work / "link-file.txt").symlink_to(outside / "secret.txt")
    (work / "link-dir").symlink_to(outside)
    (work / "dangling.txt").symlink_to(outside / "created-through-a-dangling-link.txt")
    return work.resolve(), outside.resolve()


def ctx_for(work: Path, **kw) -> ToolContext:
    return ToolContext(work, output_cap=kw.pop("output_cap", CAP), **kw)


# --- permission defaults ---------------------------------------------------------------------------------------

def test_defaults_ask_before_changing_anything(box, mock_api):
    """A config built with no permissions: read-only tools inside run, everything else asks, and a question
    nobody answers is a denial."""
    work, _ = box
    config = AgentConfig(AnthropicProvider(MOCK_KEY, mock_api.url), work)
    perms, ctx = config.permissions, ctx_for(work)
    assert perms is not None and perms.auto is None and perms.roots == [work]
    for tool in TOOLS:
        args = {"path": "inside.txt", "pattern": "x", "command": "true", "content": "", "old_string": "a",
                "new_string": "b"}
        asked = perms.check(tool, {k: v for k, v in args.items() if k in tool.input_schema["properties"]}, ctx)
        assert (asked is None) == tool.read_only, tool.name
        if asked is not None:
            assert perms.decide(asked) is Decision.DENY  # unanswered


# --- confinement ---------------------------------------------------------------------------------------------------

ESCAPES = [
    ("read_file", {"path": "../outside/secret.txt"}),
    ("read_file", {"path": "sub/../../outside/secret.txt"}),
    ("read_file", {"path": "link-file.txt"}),
    ("read_file", {"path": "link-dir/secret.txt"}),
    ("read_file", {"path": "/etc/passwd"}),
    ("read_file", {"path": "~/.ssh/id_rsa"}),
    ("grep", {"pattern": "TOPSECRET", "path": "link-dir"}),
    ("glob", {"pattern": "*", "path": "link-dir"}),
    ("write_file", {"path": "link-dir/planted.txt", "content": "x"}),
    ("write_file", {"path": "dangling.txt", "content": "x"}),
    ("write_file", {"path": "../outside/planted.txt", "content": "x"}),
    ("edit_file", {"path": "link-file.txt", "old_string": "TOPSECRET", "new_string": "gone"}),
]


@pytest.mark.parametrize("name,args", ESCAPES, ids=[f"{n}:{next(iter(a.values()))}" for n, a in ESCAPES])
def test_every_way_out_needs_permission_even_with_writes_allowed(box, name, args):
    work, outside = box
    perms = Permissions([work], auto=lambda asked: Decision.ALLOW_ONCE if asked.directory is None
                        else Decision.DENY)  # run --allow-writes
    asked = perms.check(TOOLS_BY_NAME[name], args, ctx_for(work))
    assert asked is not None and "outside the working directory" in asked.reason
    assert perms.decide(asked) is Decision.DENY


def test_grep_inside_does_not_follow_a_link_out(box):
    """Searching the working directory must not read, through a symlinked file, a file outside it."""
    work, _ = box
    text, is_error = run_tool(TOOLS_BY_NAME["grep"], {"pattern": "TOPSECRET|fine"}, ctx_for(work))
    assert "inside.txt:1:fine" in text and "TOPSECRET" not in text


def test_glob_inside_lists_nothing_behind_a_link_out(box):
    work, _ = box
    text, _ = run_tool(TOOLS_BY_NAME["glob"], {"pattern": "**/*"}, ctx_for(work))
    assert "secret.txt" not in text


@pytest.mark.parametrize("name,args", [
    ("read_file", {"path": "a\x00b"}), ("write_file", {"path": "a\x00b", "content": ""}),
    ("glob", {"pattern": "../*"}), ("glob", {"pattern": "/etc/*"}), ("read_file", {"path": 7}),
    ("bash", {"command": ["rm", "-rf", "/"]}), ("grep", {"pattern": "(unclosed"}),
])
def test_malformed_calls_are_error_results(box, name, args):
    text, is_error = run_tool(TOOLS_BY_NAME[name], args, ctx_for(box[0]))
    assert is_error and text


def test_run_allow_writes_still_keeps_the_model_inside(box, mock_api, capsys, monkeypatch):
    """End to end: a model trying the ways out under `run --allow-writes`: all refused, nothing outside changes,
    and the model is told each time."""
    work, outside = box
    monkeypatch.setenv("CONTEXT_INSPECTOR_MEMORY", str(work / "none.md"))
    mock_api.add(r.tool_calls(*[(n, a) for n, a in ESCAPES if n != "glob"] + [("write_file", {"path": "ok.txt",
                                                                                             "content": "ok"})]),
                 r.text("done"))
    assert main(["run", "--prompt", "escape", "--session", str(work / "s.jsonl"), "--cwd", str(work),
                 "--allow-writes"]) == 0
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == "TOPSECRET\n" and (work / "ok.txt").read_text() == "ok"
    results = mock_api.message_requests[1].messages[-1]["content"]
    denied = [b for b in results if b.get("is_error") and str(b["content"]).startswith("Permission denied")]
    assert len(denied) == len(ESCAPES) - 1  # every escape tried (all but the glob) was refused
    assert "TOPSECRET" not in json.dumps(results)  # no result carries the secret file's text


# --- bash timeouts ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("command", [
    "trap '' TERM INT HUP; sleep 30",  # ignores the polite signals
    "sleep 30 & sleep 30",  # a child in the background
    "(setsid sleep 30 &); sleep 30",  # a child in another session holding the output pipe open
])
def test_bash_timeout_beats_a_command_that_fights_it(box, command):
    start = time.monotonic()
    text, is_error = run_tool(TOOLS_BY_NAME["bash"], {"command": command, "timeout": 1}, ctx_for(box[0]))
    assert is_error and "timed out after 1 s" in text
    assert time.monotonic() - start < 8


def test_bash_timeout_default_applies_and_bad_values_are_refused(box):
    ctx = ctx_for(box[0], bash_timeout=1)
    start = time.monotonic()
    text, is_error = run_tool(TOOLS_BY_NAME["bash"], {"command": "sleep 30"}, ctx)
    assert is_error and "timed out" in text and time.monotonic() - start < 8
    for bad in (float("nan"), -1, 0, "5", True):
        text, is_error = run_tool(TOOLS_BY_NAME["bash"], {"command": "sleep 30", "timeout": bad}, ctx)
        assert is_error and "'timeout' must be a positive number" in text, bad


def test_a_daemon_holding_the_pipe_does_not_hang_a_finished_command(box):
    start = time.monotonic()
    text, is_error = run_tool(TOOLS_BY_NAME["bash"], {"command": "(setsid sleep 30 &); echo started",
                                                      "timeout": 20}, ctx_for(box[0]))
    assert not is_error and "started" in text and time.monotonic() - start < 8


# --- output caps ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("command", [
    "head -c 30000000 /dev/zero | tr '\\0' x",  # 30 MB, one line
    "yes 'a line of output' | head -n 2000000",  # 36 MB of lines
    "head -c 5000000 /dev/urandom",  # binary, invalid UTF-8
])
def test_bash_output_is_capped_in_bounded_memory(box, command):
    tracemalloc.start()
    try:
        text, _ = run_tool(TOOLS_BY_NAME["bash"], {"command": command, "timeout": 60}, ctx_for(box[0]))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(text) <= CAP + 100 and "truncated" in text
    assert peak < 2_000_000, f"capturing the output peaked at {peak:,} bytes"


def test_read_file_caps_a_huge_single_line(box):
    work, _ = box
    (work / "huge.txt").write_bytes(b"y" * 20_000_000)
    text, is_error = run_tool(TOOLS_BY_NAME["read_file"], {"path": "huge.txt"}, ctx_for(work))
    assert not is_error and len(text) <= CAP + 100
