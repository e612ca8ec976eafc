"""`context-inspector compact`: dry run, --out, summary from a file, from the model (local mock API), or pending."""

import json
import shutil

import pytest
from mock_api import MOCK_KEY, responses

from inspector import cli
from inspector.core.formats import load


@pytest.fixture
def run(monkeypatch, capsys):
    monkeypatch.setattr(cli, "SUBCOMMANDS", {"compact": cli.SUBCOMMANDS["compact"]})  # only the command tested

    def call(*argv):
        code = cli.main(["compact", *map(str, argv)])
        out, err = capsys.readouterr()
        return code, out, err

    return call


@pytest.fixture
def session_file(corpus, tmp_path):
    path = tmp_path / "in.jsonl"
    shutil.copy(corpus / "claude-code-manual-compact.jsonl", path)
    return path


def test_dry_run_prints_rows_and_totals_and_writes_nothing(run, session_file, tmp_path):
    before = sorted(p.name for p in tmp_path.iterdir())
    code, out, _ = run(session_file, "--strategy", "clear", "--keep-recent", "3", "--dry-run", "--out",
                       tmp_path / "x.jsonl")
    assert code == 0
    assert "cleared" in out and "[Old tool result content cleared]" in out
    assert out.strip().splitlines()[-1].startswith("context 102,484 -> ")
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_snip_to_out_writes_claude_code_that_reloads(run, session_file, tmp_path):
    out_file = tmp_path / "snipped.jsonl"
    code, out, _ = run(session_file, "--strategy", "snip", "--max-chars", "500", "--out", out_file)
    assert code == 0 and f"wrote {out_file} (claude-code)" in out
    back = load(out_file)
    assert back.format == "claude-code"
    assert any("chars snipped" in m.text() for m in back.context)


def test_refuses_to_overwrite_the_input(run, session_file):
    data = session_file.read_bytes()
    code, _, err = run(session_file, "--strategy", "snip", "--out", session_file)
    assert code == 2 and "refusing to overwrite" in err and "\n" == err[-1] and err.count("\n") == 1
    assert session_file.read_bytes() == data


def test_summary_without_a_key_prints_the_prompt_and_how_to_configure(run, session_file, monkeypatch, tmp_path):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    code, out, _ = run(session_file, "--strategy", "summary", "--instructions", "keep \x1b[31mred")
    assert code == 0
    assert "summary pending" in out and "<analysis>" in out and "ANTHROPIC_API_KEY" in out
    assert "Additional Instructions:\nkeep ?[31mred" in out and "\x1b" not in out
    code, _, err = run(session_file, "--strategy", "summary", "--out", tmp_path / "s.jsonl")
    assert code == 2 and "summary is pending" in err
    assert not (tmp_path / "s.jsonl").exists()


def test_summary_from_a_file(run, session_file, tmp_path, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    summary = tmp_path / "summary.txt"
    summary.write_text("<analysis>PRIVATE-NOTES</analysis>"
                       "<summary>1. Primary Request and Intent:\n   ship it</summary>")
    out_file = tmp_path / "out.json"
    code, out, _ = run(session_file, "--strategy", "summary", "--summary-file", summary, "--format", "neutral",
                       "--out", out_file)
    assert code == 0 and "ship it" in out and "PRIVATE-NOTES" not in out
    back = load(out_file)
    assert back.format == "neutral" and back.context[0].kind == "compact_summary"
    assert back.context[0].text().endswith("ship it")


def test_summary_written_by_the_model(run, session_file, tmp_path, mock_api):
    mock_api.add(responses.text("<analysis>thinking</analysis>\n<summary>1. Current Work:\n   tests</summary>"))
    out_file = tmp_path / "out.jsonl"
    code, out, err = run(session_file, "--strategy", "summary", "--keep-ratio", "0.5", "--out", out_file)
    assert code == 0, err
    request = mock_api.message_requests[0]
    assert request.messages[-1]["content"][-1]["text"].startswith("Write a detailed summary")
    assert request.body["system"].startswith("You write summaries")
    lines = [json.loads(x) for x in out_file.read_text().splitlines()]
    summaries = [x for x in lines if x.get("isCompactSummary")]
    assert summaries[-1]["message"]["content"].endswith("1. Current Work:\n   tests")
    assert mock_api.message_requests[0].streamed


def test_model_failure_is_one_line(run, session_file, tmp_path, mock_api):
    mock_api.add(responses.invalid_request("prompt is too long"))
    code, _, err = run(session_file, "--strategy", "summary", "--out", tmp_path / "o.jsonl")
    assert code == 2 and "summary failed" in err and "prompt is too long" in err
    assert MOCK_KEY not in err


def test_bad_flags_are_usage_errors(run, session_file):
    with pytest.raises(SystemExit) as exc:
        run(session_file, "--keep-ratio", "2")
    assert exc.value.code == 2


def test_report_shows_the_what_if_replay(monkeypatch, capsys, corpus):
    monkeypatch.setattr(cli, "SUBCOMMANDS", {"report": cli.SUBCOMMANDS["report"]})
    path = corpus / "claude-code-manual-compact.jsonl"
    assert cli.main(["report", str(path), "--policy", "reference"]) == 0
    out = capsys.readouterr().out
    assert "1 compaction(s) would fire, 1 recorded" in out and "recorded    manual compaction" in out
    assert cli.main(["report", str(path), "--json"]) == 0
    what_if = json.loads(capsys.readouterr().out)["what_if"]
    assert what_if["would_fire"] == [] and what_if["recorded"][0]["pre_tokens"] == 142431


def test_json_plan(run, session_file, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    code, out, _ = run(session_file, "--strategy", "snip", "--json")
    plan = json.loads(out)
    assert code == 0 and plan["strategy"] == "snip" and plan["saved"] == plan["before"] - plan["after"] > 0
    assert plan["rows"] and all(r["fate"] == "snipped" and r["after"] < r["before"] for r in plan["rows"])
    code, out, _ = run(session_file, "--strategy", "summary", "--json")
    plan = json.loads(out)
    assert plan["pending"] and plan["summary"]["text"] is None and plan["summary"]["prompt"].startswith("Write")


def test_clear_tool_uses_flags(run, session_file):
    code, out, _ = run(session_file, "--strategy", "clear_tool_uses", "--trigger", "0", "--keep", "2",
                       "--exclude-tools", "Bash,Task", "--clear-tool-inputs", "--json")
    plan = json.loads(out)
    assert code == 0 and plan["cleared_tool_ids"]
    kinds = {r["kind"] for r in plan["rows"]}
    assert kinds == {"assistant", "tool_result"}  # inputs and results cleared
    code, out, _ = run(session_file, "--strategy", "clear_tool_uses", "--trigger", "10000000", "--json")
    assert "below the trigger" in json.loads(out)["note"]


def test_clear_inputs_of_named_tools_only(run, session_file):
    code, out, _ = run(session_file, "--strategy", "clear_tool_uses", "--trigger", "0", "--keep", "0",
                       "--clear-inputs-of", "Bash", "--json")
    session = load(session_file)
    changed_calls = [r["old"] for r in json.loads(out)["rows"] if r["kind"] == "assistant"]
    assert code == 0 and changed_calls
    assert all("Bash" in session.messages[i].tool_names for i in changed_calls)
