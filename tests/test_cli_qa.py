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
