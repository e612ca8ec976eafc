"""Defects found by using the headless CLI as a demanding user would: one test each, on real inputs."""

import json

import pytest

from inspector import cli


@pytest.fixture
def report(monkeypatch, capsys):
    monkeypatch.setattr(cli, "SUBCOMMANDS", {"report": cli.SUBCOMMANDS["report"]})

    def call(*argv):
        code = cli.main(["report", *map(str, argv)])
        out, err = capsys.readouterr()
        return code, out, err

    return call


@pytest.mark.parametrize("estimator", ["calibrated", "script", "blocks"])
def test_what_if_uses_the_reports_own_estimates(report, corpus, estimator):
    """The what-if replay's prefix and summary size are the report's figures, by the estimator chosen, not a
    chars35 estimate of their own (it said prefix 25,967 beside a system prompt of 25,962)."""
    code, out, _ = report(corpus / "claude-code-manual-compact.jsonl", "--json", "--estimator", estimator)
    d = json.loads(out)
    assert code == 0
    assert d["what_if"]["prefix"] == d["totals"]["prefix"]
    summary = [m["estimated_tokens"] for m in d["messages"] if m["kind"] == "compact_summary"]
    assert d["what_if"]["summary_tokens"] == sum(summary) // len(summary)


@pytest.mark.parametrize("command", ["report", "compact"])
def test_a_dash_path_says_standard_input_is_not_read(monkeypatch, capsys, tmp_path, command):
    """`report -` said "-: no such file or directory", as if a file named '-' were missing."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cli, "SUBCOMMANDS", {command: cli.SUBCOMMANDS[command]})
    assert cli.main([command, "-"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "standard input" in err and "no such file" not in err


def test_a_binary_memory_or_claude_md_is_skipped_with_a_note(monkeypatch, capsys, tmp_path):
    """A binary file given as memory (or found as CLAUDE.md) went into the prompt as U+FFFD soup; a binary template
    is refused, so these are skipped with a note saying why."""
    monkeypatch.setattr(cli, "SUBCOMMANDS", {"prompt": cli.SUBCOMMANDS["prompt"]})
    memory = tmp_path / "memory.md"
    memory.write_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00" + bytes(range(256)) * 4)
    (tmp_path / "CLAUDE.md").write_bytes(b"\x00\x01\x02binary\xff\xfe")
    assert cli.main(["prompt", "--cwd", str(tmp_path), "--memory", str(memory), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert not [s for s in data["sections"] if s["source"] in ("memory", str(tmp_path / "CLAUDE.md"))]
    assert all("\ufffd" not in s["text"] for s in data["sections"])
    notes = " ".join(data["notes"])
    assert f"{memory}: memory skipped" in notes and "binary" in notes
    assert f"{tmp_path / 'CLAUDE.md'}: skipped" in notes


def test_compact_out_into_a_missing_directory_fails_before_any_work(monkeypatch, capsys, corpus, tmp_path):
    """--out in a folder that does not exist failed only at the write, after the plan was printed (and, for a summary,
    after the model was paid to write it)."""
    monkeypatch.setattr(cli, "SUBCOMMANDS", {"compact": cli.SUBCOMMANDS["compact"]})
    target = tmp_path / "missing" / "out.jsonl"
    assert cli.main(["compact", str(corpus / "claude-code-short.jsonl"), "--out", str(target)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and str(target.parent) in err and "no such directory" in err


@pytest.mark.parametrize("strategy,fmt", [("snip", "neutral"), ("clear", "claude-code"), ("summary", "claude-code")])
def test_compact_out_records_the_context_before_as_claude_code_does(monkeypatch, capsys, corpus, tmp_path, strategy,
                                                                    fmt):
    """preTokens of a written boundary is the whole context then (Claude Code's 142,431 beside a last measured
    141,787), not the plan's estimate of the messages alone (it wrote 64,121 while the context stood at 102,484)."""
    from inspector.core.formats import load

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setattr(cli, "SUBCOMMANDS", {"report": cli.SUBCOMMANDS["report"],
                                             "compact": cli.SUBCOMMANDS["compact"]})
    source = corpus / "claude-code-manual-compact.jsonl"
    assert cli.main(["report", str(source), "--json"]) == 0
    context = json.loads(capsys.readouterr().out)["totals"]["current"]
    summary = tmp_path / "summary.md"
    summary.write_text("The user asked for X; Y is done.\n")
    out = tmp_path / "out.jsonl"
    given = ["--summary-file", str(summary)] if strategy == "summary" else []
    assert cli.main(["compact", str(source), "--strategy", strategy, *given, "--out", str(out), "--format", fmt]) == 0
    written = load(out).compactions[-1]
    assert written.index == 466 and written.pre_tokens == context == 102_484


@pytest.mark.parametrize("budget,says", [("-5", "1024"), ("0", "1024"), ("1023", "1024"), ("32000", "32,000")])
def test_run_refuses_a_thinking_budget_the_api_rejects(monkeypatch, capsys, tmp_path, budget, says):
    """--thinking -5 was sent as budget_tokens -5 (and 0 silently turned thinking off): the turn started, a session
    file was written, and the API answered 400. The Messages API takes 1,024 or more, below max_tokens (32,000)."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")  # never reached
    monkeypatch.setattr(cli, "SUBCOMMANDS", {"run": cli.SUBCOMMANDS["run"]})
    session = tmp_path / "s.jsonl"
    try:
        code = cli.main(["run", "--prompt", "hi", "--session", str(session), "--cwd", str(tmp_path),
                         "--model", "claude-sonnet-4-6", "--thinking", budget])
    except SystemExit as exc:  # argparse's own refusal
        code = exc.code
    assert code == 2 and says in capsys.readouterr().err and not session.exists()


@pytest.mark.parametrize("command,flag", [("run", "--thinking"), ("compact", "--max-chars"),
                                          ("compact", "--keep-ratio")])
def test_a_non_number_names_the_flag_not_a_python_function(monkeypatch, capsys, corpus, command, flag):
    """argparse named the converter: "argument --max-chars: invalid _count value: 'abc'"."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setattr(cli, "SUBCOMMANDS", {command: cli.SUBCOMMANDS[command]})
    argv = ["--prompt", "hi"] if command == "run" else [str(corpus / "claude-code-short.jsonl")]
    with pytest.raises(SystemExit) as exc:
        cli.main([command, *argv, flag, "abc"])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert exc.value.code == 2 and flag in err and "'abc'" in err and "_" not in err.split(flag)[1]


def test_run_on_another_programs_session_reads_as_english(monkeypatch, capsys, tmp_path):
    """It said "a openai-chat session" / "a anthropic-request session"."""
    from pathlib import Path

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")  # never reached
    monkeypatch.setattr(cli, "SUBCOMMANDS", {"run": cli.SUBCOMMANDS["run"]})
    chat = Path(__file__).parent / "fixtures" / "formats" / "openai-chat.json"
    assert cli.main(["run", "--prompt", "hi", "--session", str(chat), "--cwd", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "a session in the openai-chat format, not one the agent wrote" in err and "a openai" not in err


def test_a_microcompaction_before_the_last_request_is_not_taken_off_twice(report):
    """The neutral fixture's microcompact boundary sits before the last response: that request's usage (2,500)
    already reflects the clearing, yet its 10 saved tokens were taken off again: "now 2,512" above a table whose
    categories sum to "total in context 2,522" (free + reserved + used = 200,010 of a 200,000 window)."""
    from pathlib import Path

    code, out, _ = report(Path(__file__).parent / "fixtures" / "formats" / "neutral.jsonl", "--json")
    d = json.loads(out)
    used = sum(v for k, v in d["totals"]["by_category"].items() if k not in ("free", "reserved"))
    assert code == 0 and d["totals"]["current"] == d["current"]["used"] == used
    assert used + d["totals"]["by_category"]["free"] + d["totals"]["by_category"]["reserved"] == 200_000


def test_the_breakdown_of_a_context_past_auto_compact_fills_the_window_exactly(report, corpus):
    """The real compaction request stands at 178,418 of 200,000, past auto-compact (167,000): the breakdown showed
    the whole 33,000 reserved band beside it, 211,418 tokens and 105.8% of a 200,000 window."""
    code, out, _ = report(corpus / "claude-code-compaction-request.jsonl", "--json")
    d = json.loads(out)
    by = d["totals"]["by_category"]
    assert code == 0 and d["current"]["used"] == 178_418 and by["free"] == 0
    assert by["reserved"] == 200_000 - 178_418 and sum(by.values()) == d["window"]["context_window"]
    code, out, _ = report(corpus / "claude-code-compaction-request.jsonl")
    rows = out.split("What fills it")[1].split("total in context")[0].splitlines()[1:]
    assert sum(float(r.split()[-1].rstrip("%")) for r in rows if r.strip()) == pytest.approx(100, abs=0.3)


def test_compact_does_not_state_a_pending_summarys_result_as_a_figure(monkeypatch, capsys, corpus):
    """With the summary still unwritten the threshold line said "after this plan 60,167 (30.1%, 106,833 below)"
    as if known, while the totals line below it said "summary pending (21,804 without it)"."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setattr(cli, "SUBCOMMANDS", {"compact": cli.SUBCOMMANDS["compact"]})
    path = corpus / "claude-code-manual-compact.jsonl"
    assert cli.main(["compact", str(path), "--strategy", "summary", "--dry-run"]) == 0
    line = capsys.readouterr().out.splitlines()[1]
    # prefix 25,962 + the kept messages at their figures + the acknowledgement and the placeholder: the old
    # window's unrecorded growth goes with the folded messages (as the workbench's after bar and the report of the
    # written file say)
    assert "context now 102,484" in line and line.endswith("after this plan 46,623 + the summary (pending)")
    assert cli.main(["compact", str(path), "--strategy", "snip", "--dry-run"]) == 0
    assert capsys.readouterr().out.splitlines()[1].endswith("after this plan 87,976 (44.0%, 79,024 below)")


@pytest.mark.parametrize("argv,says", [
    (["--strategy", "snip", "--keep-recent", "2"], "--keep-recent is a setting of --strategy clear"),
    (["--keep-ratio", "0.5"], "--keep-ratio is a setting of --strategy summary"),
    (["--strategy", "clear", "--max-chars", "100", "--trigger", "5"], "--max-chars is a setting of --strategy snip"),
    (["--strategy", "clear_tool_uses", "--clear-tool-inputs", "--clear-inputs-of", "Read"], "not allowed with"),
])
def test_compact_refuses_settings_of_another_strategy(monkeypatch, capsys, corpus, argv, says):
    """`--strategy snip --keep-recent 2` ran snip and ignored --keep-recent without a word."""
    monkeypatch.setattr(cli, "SUBCOMMANDS", {"compact": cli.SUBCOMMANDS["compact"]})
    try:
        code = cli.main(["compact", str(corpus / "claude-code-short.jsonl"), "--dry-run", *argv])
    except SystemExit as exc:  # argparse's own refusal
        code = exc.code
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and says in err


def test_session_text_cannot_add_lines_to_the_report(report, tmp_path):
    """Control characters were made inert but newlines were not: a cwd, model or tool name holding "\\n" printed
    lines of its own in the table (here a forged "requests" line and a forged category)."""
    forged = "\nrequests  999; context 1 first (measured)\n"
    lines = [
        {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": "s", "cwd": "/tmp" + forged,
         "message": {"role": "user", "content": "hi"}},
        {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "sessionId": "s",
         "message": {"id": "m1", "role": "assistant", "model": "claude" + forged,
                     "content": [{"type": "tool_use", "id": "t1", "name": "Read" + forged, "input": {}}],
                     "usage": {"input_tokens": 100, "output_tokens": 5}}},
        {"type": "user", "uuid": "u2", "parentUuid": "a1", "sessionId": "s",
         "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]}},
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    code, out, _ = report(path, "--messages")
    assert code == 0 and "\x1b" not in out
    assert not [line for line in out.splitlines() if line.startswith("requests  999")]


def test_an_error_naming_a_hostile_file_name_is_one_inert_line(monkeypatch, capsys, tmp_path):
    """The newest file of a project directory is named by the directory, not typed by the user: its name went
    into the error line as it was, escape sequences (a screen clear here) and newlines included."""
    monkeypatch.setattr(cli, "SUBCOMMANDS", {"report": cli.SUBCOMMANDS["report"]})
    (tmp_path / "z\x1b[2J\nforged.jsonl").write_bytes(b"\x00\x01binary")
    assert cli.main(["report", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and err.count("\n") == 1 and "binary file" in err


def test_a_recorded_tool_name_cannot_add_lines_to_the_prompt_table(monkeypatch, capsys, tmp_path):
    """`prompt --session` printed a recorded tool's name as it was: "Tool: Read" then a line of the file's own."""
    monkeypatch.setattr(cli, "SUBCOMMANDS", {"prompt": cli.SUBCOMMANDS["prompt"]})
    forged = "\nForged  line\n"
    request = {"model": "claude-sonnet-4-5", "system": "sys", "max_tokens": 10,
               "tools": [{"name": "Read" + forged, "description": "d" + forged, "input_schema": {"type": "object"}}],
               "messages": [{"role": "user", "content": "hi"}]}
    path = tmp_path / "request.json"
    path.write_text(json.dumps(request))
    assert cli.main(["prompt", "--session", str(path), "--lint"]) in (0, 1)
    out = capsys.readouterr().out
    assert "Tool: Read" in out and not [line for line in out.splitlines() if line.startswith("Forged")]


@pytest.mark.parametrize("command", ["report", "compact"])
def test_the_custom_policy_takes_its_percentages(monkeypatch, capsys, corpus, command):
    """`--policy custom` was offered with no way to give its percentages: it always meant 60/70/95."""
    monkeypatch.setattr(cli, "SUBCOMMANDS", {command: cli.SUBCOMMANDS[command]})
    path = str(corpus / "claude-code-short.jsonl")
    extra = ["--dry-run"] if command == "compact" else []
    assert cli.main([command, path, "--json", *extra, "--policy", "custom", "--custom-pct", "50,80,90"]) == 0
    window = json.loads(capsys.readouterr().out)["window"]
    assert window["thresholds"] == {"warning": 90_000, "autocompact": 144_000, "blocking": 162_000}
    assert cli.main([command, path, *extra, "--custom-pct", "50,80,90"]) == 2
    assert "--custom-pct is for --policy custom" in capsys.readouterr().err
    for bad in ("90,80,95", "80,90,150", "0,50,90"):
        with pytest.raises(SystemExit) as exit_:
            cli.main([command, path, *extra, "--policy", "custom", "--custom-pct", bad])
        assert exit_.value.code == 2
        err = capsys.readouterr().err
        assert "--custom-pct" in err and "in rising order" in err and "_pct" not in err


def test_compact_out_help_says_what_happens_to_an_existing_file(monkeypatch, capsys, corpus, tmp_path):
    """The help said "(a new file)", yet an existing file (another session, say) is replaced without a word."""
    monkeypatch.setattr(cli, "SUBCOMMANDS", {"compact": cli.SUBCOMMANDS["compact"]})
    with pytest.raises(SystemExit):
        cli.main(["compact", "--help"])
    assert "replaced if it exists" in " ".join(capsys.readouterr().out.split())
    out = tmp_path / "other.jsonl"
    out.write_text("another session\n")
    assert cli.main(["compact", str(corpus / "claude-code-manual-compact.jsonl"), "--out", str(out)]) == 0
    assert "another session" not in out.read_text() and "wrote" in capsys.readouterr().out


def test_the_what_if_lines_are_inert(report, tmp_path):
    """A compaction's trigger went into the what-if line raw (a title change and a screen clear reached the
    terminal); an unknown trigger showed as "? compaction", the sign of a replaced control character."""
    hostile = "\x1b]0;pwned\x07\x1b[2J\nforged"
    lines = [
        {"type": "user", "uuid": "u1", "parentUuid": None, "message": {"role": "user", "content": "hi"}},
        {"type": "assistant", "uuid": "a1", "parentUuid": "u1",
         "message": {"id": "m1" + hostile, "role": "assistant", "model": "claude-x",
                     "content": [{"type": "text", "text": "ok"}], "usage": {"input_tokens": 100, "output_tokens": 5}}},
        {"type": "system", "subtype": "compact_boundary", "uuid": "b1", "parentUuid": None,
         "logicalParentUuid": "a1", "compactMetadata": {"trigger": "manual" + hostile, "preTokens": 105}},
        {"type": "system", "subtype": "compact_boundary", "uuid": "b2", "parentUuid": None,
         "logicalParentUuid": "b1", "compactMetadata": {"preTokens": 106}},
        {"type": "user", "uuid": "u2", "parentUuid": "b2", "message": {"role": "user", "content": "again"}},
        {"type": "assistant", "uuid": "a2", "parentUuid": "u2",
         "message": {"id": "m2", "role": "assistant", "model": "claude-x",
                     "content": [{"type": "text", "text": "ok"}], "usage": {"input_tokens": 50, "output_tokens": 5}}},
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    code, out, _ = report(path, "--policy", "custom", "--window", "1000")
    what_if = out.split("what-if:")[1]
    assert code == 0 and "\x1b" not in out and "\x07" not in out and "would fire" in what_if
    assert not [line for line in what_if.splitlines() if line.startswith("forged")]
    assert "compaction (trigger unknown) at message" in what_if and "? compaction" not in what_if

