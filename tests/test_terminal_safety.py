"""Session text reaches the terminal inert: no Rich markup acted on, no Textual actions, no escape sequences.

Every path that shows session-derived text gets the same hostile text: the report table, compact --dry-run (plans
and the summary prompt), prompt (from a session and from instruction files), run's event text (model text, tool
calls, tool output) and the app's views. CLI output is checked as the bytes a terminal would receive (a
subprocess), so an encoding failure is caught too.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

from bad_inputs.build import SESSION
from bad_inputs.proc import Result, cli, run
from mock_api import responses as r

# Rich markup and a Textual action; SGR colour; OSC 0 (window title) and OSC 52 (clipboard write); clear screen and
# cursor home/moves; a C1 CSI; a bell; a carriage return that would overwrite the line; a lone surrogate.
MARKUP = "[bold red]x[/] [@click=app.quit]y[/] [link=file:///etc/passwd]z[/link]"
ESCAPES = ("\x1b[31mred\x1b[0m \x1b]0;pwned\x07 \x1b]52;c;ZXZpbA==\x07 \x1b[2J\x1b[H \x1b[10;10H \x9b2J "
           "\x07 over\rwrite \ud800")
HOSTILE = f"{MARKUP} {ESCAPES} end"
ACTION_TOOL = "[@click=app.quit]quit_tool[/]"  # a tool name is offered in the app's command palette
# What a terminal acts on: C0 controls but tab and newline, DEL, C1 controls.
ACTIVE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def assert_inert(text: str, where: str) -> None:
    found = ACTIVE.search(text)
    assert found is None, f"{where}: {found.group()!r} reached the terminal near {text[max(0, found.start() - 40):found.end() + 40]!r}"
    assert "\ud800" not in text


def assert_clean_run(result: Result, where: str) -> None:
    assert result.returncode == 0 and not result.timed_out, f"{where}: {result.stderr}"
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr, result.stderr
    assert_inert(result.stdout, where + " stdout")
    assert_inert(result.stderr, where + " stderr")


def _entry(kind: str, uuid: str, parent: str | None, content: object, **message: object) -> dict:
    return {"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": SESSION, "cwd": f"/work/{HOSTILE}",
            "version": HOSTILE, "timestamp": "2026-01-01T00:00:00Z",
            "message": {"role": kind, "content": content, **message}}


def hostile_session(directory: Path) -> Path:
    """A Claude Code session with the hostile text in every field a view may show: cwd, version, model, prompt,
    answer, thinking, tool name and input, a long tool result (so compaction previews it), an unknown entry type
    (its name lands in a warning), a microcompaction's trigger, a timestamp."""
    usage = {"input_tokens": 1000, "output_tokens": 50}
    long_result = (HOSTILE + "\n") * 200
    lines = [
        _entry("user", "u1", None, HOSTILE),
        _entry("assistant", "a1", "u1", [{"type": "thinking", "thinking": HOSTILE},
                                         {"type": "text", "text": HOSTILE},
                                         {"type": "tool_use", "id": "toolu_1", "name": f"Bash{ESCAPES}",
                                          "input": {"command": HOSTILE}}],
               id="msg_1", model=f"claude-{HOSTILE}", usage=usage),
        _entry("user", "u2", "a1", [{"type": "tool_result", "tool_use_id": "toolu_1", "content": long_result}]),
        _entry("assistant", "a2", "u2", [{"type": "tool_use", "id": "toolu_2", "name": "Read",
                                          "input": {"file_path": HOSTILE}}], id="msg_2", model="claude-sonnet-4-5",
               usage={**usage, "input_tokens": 6000}),
        _entry("user", "u3", "a2", [{"type": "tool_result", "tool_use_id": "toolu_2", "content": long_result}]),
        {"type": f"future{ESCAPES}", "uuid": "f1", "parentUuid": "u3", "sessionId": SESSION},
        {**_entry("assistant", "a3", "u3", [{"type": "text", "text": HOSTILE},
                                            {"type": "tool_use", "id": "toolu_3", "name": ACTION_TOOL, "input": {}}],
                  id="msg_3", model="claude-sonnet-4-5", usage={**usage, "input_tokens": 11000}),
         "timestamp": f"2026-01-01T0{ESCAPES}"},
        {"type": "system", "subtype": "microcompact_boundary", "uuid": "m1", "parentUuid": "a3", "sessionId": SESSION,
         "microcompactMetadata": {"trigger": HOSTILE, "preTokens": 11000, "tokensSaved": 10,
                                  "compactedToolIds": ["toolu_1"]}},
        {**_entry("user", "u4", "m1", [{"type": "tool_result", "tool_use_id": "toolu_3", "content": HOSTILE},
                                       {"type": "text", "text": HOSTILE}]), "timestamp": f"2026-01-01T{ESCAPES}"},
    ]
    path = directory / "hostile.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


@pytest.fixture
def session(tmp_path) -> Path:
    return hostile_session(tmp_path)


def no_key_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}


def test_report_table(session):
    for args in ((), ("--messages",)):
        result = cli("report", str(session), *args)
        assert_clean_run(result, f"report {' '.join(args)}")
        assert "[bold red]x[/] [@click=app.quit]y[/]" in result.stdout  # the cwd, shown literally
        assert "?[31mred?[0m ?]0;pwned? ?]52;c;ZXZpbA==?" in result.stdout
        assert "future\\x1b[31mred" in result.stdout  # the unknown type's name, escaped in its warning


def test_report_json_is_ascii(session):
    result = cli("report", str(session), "--json")
    assert result.returncode == 0 and result.stdout.isascii()
    assert json.loads(result.stdout)["models"][0] == f"claude-{HOSTILE}"  # escaped, not lost


@pytest.mark.parametrize("args", [
    ("--strategy", "snip", "--all"),
    ("--strategy", "clear", "--keep-recent", "0", "--all"),
    ("--strategy", "clear_tool_uses", "--trigger", "0", "--keep", "0", "--clear-tool-inputs", "--all"),
    ("--strategy", "summary", "--keep-ratio", "0", "--show-prompt"),
])
def test_compact_dry_run(session, args):
    result = run([sys.executable, "-m", "inspector", "compact", str(session), "--dry-run", *args], env=no_key_env())
    assert_clean_run(result, f"compact {' '.join(args)}")
    assert "[@click=app.quit]y[/]" in result.stdout  # message previews, literal


def test_compact_summary_from_a_hostile_file(session, tmp_path):
    summary = tmp_path / "summary.md"
    summary.write_text(f"<summary>{HOSTILE.replace(chr(0xd800), '')}</summary>", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    result = run([sys.executable, "-m", "inspector", "compact", str(session), "--strategy", "summary",
                  "--keep-ratio", "0", "--summary-file", str(summary), "--out", str(out)], env=no_key_env())
    assert_clean_run(result, "compact --summary-file")
    assert out.exists() and "[@click=app.quit]y[/]" in result.stdout


def test_prompt_from_a_session(session):
    for args in ((), ("--text",), ("--lint",)):
        result = cli("prompt", "--session", str(session), *args)
        assert result.returncode in (0, 1), result.stderr
        assert_clean_run(Result(0, result.stdout, result.stderr, 0, False), f"prompt --session {args}")


def test_prompt_from_hostile_instruction_files(tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    (tmp_path / "CLAUDE.md").write_text(f"# Rules {MARKUP}\n\n{ESCAPES.replace(chr(0xd800), '')}\n- never {ESCAPES[:20]}\n",
                                        encoding="utf-8")
    env = {**no_key_env(), "HOME": str(tmp_path), "CONTEXT_INSPECTOR_MEMORY": str(tmp_path / "none.md")}
    for args in ((), ("--text",), ("--lint",)):
        result = run([sys.executable, "-m", "inspector", "prompt", "--cwd", str(tmp_path), *args], env=env)
        assert result.returncode in (0, 1), result.stderr
        assert_clean_run(Result(0, result.stdout, result.stderr, 0, False), f"prompt --cwd {args}")
        if args == ("--text",):
            assert f"# Rules {MARKUP}" in result.stdout


def test_run_event_text(mock_api, tmp_path):
    """Model text, thinking, a tool call's name and input, a tool's output: all printed inert."""
    hostile = HOSTILE.replace("\ud800", "")  # the API sends valid UTF-8 only
    (tmp_path / "evil.txt").write_text(hostile, encoding="utf-8")
    mock_api.add(
        r.tool_calls(("read_file", {"path": "evil.txt"}), (f"no_such_tool{ESCAPES[:-2]}", {"x": hostile}),
                     ("bash", {"command": "printf '\\033]52;c;ZXZpbA==\\007\\033[2J%s' '[@click=app.quit]q[/]'"}),
                     preamble=hostile),
        r.text(hostile))
    env = {**os.environ, "CONTEXT_INSPECTOR_MEMORY": str(tmp_path / "none.md"), "HOME": str(tmp_path)}
    result = run([sys.executable, "-m", "inspector", "run", "--prompt", hostile, "--session",
                  str(tmp_path / "s.jsonl"), "--cwd", str(tmp_path), "--allow-writes"], env=env)
    assert_clean_run(result, "run")
    assert result.stdout.count("[@click=app.quit]y[/]") >= 3  # preamble, the file read, the final answer
    assert "?]52;c;ZXZpbA==?" in result.stdout and "[@click=app.quit]q[/]" in result.stdout  # bash output
    mock_api.add(r.text(hostile))
    json_run = run([sys.executable, "-m", "inspector", "run", "--prompt", "again", "--session",
                    str(tmp_path / "s2.jsonl"), "--cwd", str(tmp_path), "--json"], env=env)
    assert json_run.returncode == 0 and json_run.stdout.isascii(), json_run.stderr


async def test_app_views_show_it_literally(session):
    """Every view of the app, drawn: no control character in any cell, the markup and the action as text, and
    the app still running after clicking where the fake action is drawn."""
    from inspector.app import make_app
    from app_helpers import ready

    app = make_app(session, home=False)
    async with app.run_test(size=(160, 50)) as pilot:
        await ready(app, pilot)
        seen = []
        for keys in (("g",), ("G",), ("2",), ("3",), ("1", "W"), ("escape", "s"), ("escape", "ctrl+p")):
            for key in keys:
                await pilot.press(key)
            await pilot.pause()
            screen = app.export_screenshot()
            assert_inert(re.sub(r"[\t\n]", "", screen), f"app after {keys}")
            seen.append(screen)
        assert any("[@click=app.quit]y[/]" in s for s in seen)
        await pilot.press(*"quit_tool")  # the palette is open: its hit for the hostile tool shows as text
        await pilot.pause(0.3)
        assert ACTION_TOOL in app.export_screenshot()
        await pilot.press("escape")
        await pilot.press("escape", "escape", "1", "g")
        for x in range(0, 100, 7):
            await pilot.click(offset=(x, 5))
        await pilot.pause()
        assert app.is_running and app.return_code is None


async def test_app_picker_shows_hostile_projects_literally(tmp_path):
    from inspector.app import make_app
    from inspector.app.screens.picker import PickerScreen

    hostile_session(tmp_path)
    (tmp_path / f"name{ESCAPES.replace(chr(0xd800), '').replace('/', '_')}.jsonl").write_bytes(
        (tmp_path / "hostile.jsonl").read_bytes())
    app = make_app(tmp_path, home=False)
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.pause(0.3)
        assert isinstance(app.screen, PickerScreen) and len(app.screen.entries) == 2
        assert_inert(re.sub(r"[\t\n]", "", app.export_screenshot()), "picker")


KINDS = {
    "osc52-clipboard-write": "\x1b]52;c;ZXZpbA==\x07",
    "osc0-title-change": "\x1b]0;pwned\x07",
    "osc8-hyperlink": "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\",
    "screen-clear": "\x1b[2J\x1b[3J",
    "cursor-move": "\x1b[H\x1b[10;10H\x1b[5A",
    "c1-csi": "\x9b2J",
    "dcs": "\x1bPq#0;2;0;0;0\x1b\\",
    "bell-backspace-cr": "\x07\b\rover",
    "lone-surrogate": "\ud800",
}


@pytest.mark.parametrize("kind", KINDS)
def test_each_escape_kind_is_inert_in_the_cli_and_the_app(kind):
    from rich.text import Text

    from inspector.app.text import one_line, plain, visible
    from inspector.core.inert import safe

    text = f"a {KINDS[kind]} b"
    for shown in (safe(text), visible(text), one_line(text), plain(text).plain):
        assert_inert(shown, kind)
        assert shown.startswith("a ") and shown.endswith(" b")
    assert plain(MARKUP).plain == MARKUP and isinstance(plain(MARKUP), Text)  # markup stays text
    assert not plain(MARKUP).spans
