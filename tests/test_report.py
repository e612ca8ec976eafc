"""`context-inspector report`: the JSON contract (docs/report-json.md), the table, and one-line errors (exit 2)."""

import json
import subprocess
import sys

import pytest

from inspector.cli import main
from inspector.core.formats import load
from inspector.core.report import report_dict

from conftest import CORPUS, FIXTURES

MANUAL = CORPUS / "claude-code-manual-compact.jsonl"


def report_json(capsys, path):
    assert main(["report", str(path), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


KEYS = {"path", "format", "models", "messages", "requests", "compactions", "warnings", "subagents"}


def test_core_report_has_exactly_the_issue_2_keys():
    r = report_dict(load(MANUAL))
    assert set(r) == KEYS
    assert set(r["messages"][0]) == {"index", "role", "kind", "line"}
    assert set(r["requests"][0]) == {"id", "model", "measured_context", "output_tokens"}
    assert set(r["compactions"][0]) == {"trigger", "pre_tokens", "index"}
    assert set(r["warnings"][0] if r["warnings"] else {"line": 0, "message": ""}) == {"line", "message"}


def test_json_keeps_the_issue_2_keys(capsys):
    """Later issues add keys to the printed report; these must stay, with these meanings."""
    r = report_json(capsys, MANUAL)
    assert KEYS <= set(r)
    assert {"index", "role", "kind", "line"} <= set(r["messages"][0])
    assert {"id", "model", "measured_context", "output_tokens"} <= set(r["requests"][0])
    assert {"trigger", "pre_tokens", "index"} <= set(r["compactions"][0])
    assert r["path"] == str(MANUAL) and r["format"] == "claude-code"
    assert r["models"] == ["claude-opus-4-6", "claude-haiku-4-5-20251001"]
    assert len(r["requests"]) == 217
    assert r["requests"][0]["measured_context"] == 26_010 and r["requests"][-1]["measured_context"] == 102_168
    [c] = r["compactions"]
    assert (c["trigger"], c["pre_tokens"], c["index"]) == ("manual", 142_431, 288)
    m = r["messages"][288]
    assert (m["index"], m["role"], m["kind"], m["line"]) == (288, "user", "compact_summary", 1482)
    assert r["warnings"] == [] and r["subagents"] == []


def test_json_warnings_and_lineless_messages(capsys):
    r = report_json(capsys, FIXTURES / "formats" / "codex-rollout.jsonl")
    assert r["warnings"] == [{"line": 34, "message": "skipped 1 entry of unknown type 'event_msg/future_event'"}]
    r = report_json(capsys, FIXTURES / "formats" / "openai-chat.json")
    m = r["messages"][0]
    assert (m["index"], m["role"], m["kind"], m["line"]) == (0, "system", "system", None)


def test_table(capsys):
    assert main(["report", str(MANUAL)]) == 0
    out = capsys.readouterr().out
    assert "claude-opus-4-6, claude-haiku-4-5-20251001" in out
    assert "217; context 26,010 first, 102,168 last" in out
    assert "compact      at message 288 (line 1481): trigger manual, 142,431 tokens before" in out


def test_session_text_cannot_reach_the_terminal_as_escape_sequences(capsys, tmp_path):
    line = {"type": "assistant", "uuid": "a", "parentUuid": None, "sessionId": "s", "cwd": "/x\x1b]0;pwned\x07",
            "message": {"id": "m", "model": "\x1b[31mred", "role": "assistant", "content": "hi",
                        "usage": {"input_tokens": 1, "output_tokens": 1}}}
    path = tmp_path / "evil.jsonl"
    path.write_text(json.dumps(line) + "\n")
    assert main(["report", str(path)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "?[31mred" in out
    assert main(["report", str(path), "--json"]) == 0
    assert "\x1b" not in capsys.readouterr().out


@pytest.mark.parametrize("make", [
    lambda p: p / "missing.jsonl",
    lambda p: p,  # a directory holding no session
    lambda p: (p / "bin.jsonl").write_bytes(b"\x7fELF\x00\x00") and p / "bin.jsonl",
    lambda p: (p / "notes.txt").write_text("just some notes\n") and p / "notes.txt",
])
def test_bad_paths_exit_2_with_one_line(capsys, tmp_path, make):
    path = make(tmp_path)
    assert main(["report", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(path) in err and "Traceback" not in err


def test_console_entry_point_runs_headless():
    result = subprocess.run([sys.executable, "-m", "inspector", "report", str(CORPUS / "claude-code-short.jsonl"),
                             "--json"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["requests"][0]["measured_context"] == 25_353
