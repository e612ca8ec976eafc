"""`context-inspector prompt`: table, --json, --lint, --text, --session, and one-line errors."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from inspector.cli import UsageError
from inspector.commands import prompt as command
from inspector.core.prompt import DEFAULT_TEMPLATE


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("CLAUDE_CONFIG_DIR", "CONTEXT_INSPECTOR_MEMORY", "XDG_DATA_HOME"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "home").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    work = tmp_path / "work"
    work.mkdir()
    (work / "CLAUDE.md").write_text("Use tabs. \x1b[31mred\x1b[0m\n")
    return work


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    parser = argparse.ArgumentParser()
    command.add_arguments(parser)
    status = command.run(parser.parse_args(argv))
    return status, capsys.readouterr().out


def test_table_names_template_sources_and_tokens(isolated: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out = run(["--cwd", str(isolated), "--no-memory"], capsys)
    assert status == 0
    assert f"Template:          {DEFAULT_TEMPLATE} (built-in; copy it to edit)" in out
    assert "Memory:            off" in out
    assert "Identity and capabilities" in out and "Session state and memory" in out
    lines = out.splitlines()
    claude = next(line for line in lines if "Project instructions" in line)
    assert claude.split()[3] == "CLAUDE.md"  # its source: the file, shown relative to the working directory
    git = next(line for line in lines if " Git " in line)
    assert git.split()[2] == "git"
    assert "no CLAUDE.md" not in out and "Lint" not in out
    total = next(line for line in lines if line.strip().startswith("Total"))
    assert int(total.split()[-1].replace(",", "")) > 1000


def test_json_has_sections_and_findings(isolated: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out = run(["--cwd", str(isolated), "--no-memory", "--json"], capsys)
    data = json.loads(out)
    assert status == 0
    assert data["template"] == str(DEFAULT_TEMPLATE) and data["default_template"] is True
    assert data["findings"] == []
    for section in data["sections"]:
        assert {"title", "source", "tokens", "text"} <= section.keys()
    assert data["tokens"] == sum(s["tokens"] for s in data["sections"])
    claude = next(s for s in data["sections"] if s["source"] == str(isolated.resolve() / "CLAUDE.md"))
    assert "\x1b[31m" in claude["text"]  # JSON keeps the data; only the terminal output makes it inert
    assert "\x1b" not in out


def test_lint_with_a_custom_template(isolated: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    template = tmp_path / "mine.md"
    template.write_text("# Identity\n\nYou write code.\n\n# Tools\n\nRetry failed commands up to 3 times.\n")
    status, out = run(["--cwd", str(isolated), "--prompt-template", str(template), "--no-memory", "--lint"], capsys)
    assert status == 1
    assert f"Template:          {template}\n" in out
    assert f"{template}:7 (Tools, line 3): deterministic: sets a retry limit" in out
    assert "      > Retry failed commands up to 3 times." in out
    assert "no section covers 'Decisions under uncertainty'" in out
    status, out = run(["--cwd", str(isolated), "--no-memory", "--lint"], capsys)
    assert status == 0 and "Lint: clean" in out


def test_text_prints_the_prompt_inert(isolated: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out = run(["--cwd", str(isolated), "--no-memory", "--text"], capsys)
    assert status == 0
    assert out.startswith("# Identity and capabilities\n")
    assert "Use tabs. ?[31mred?[0m" in out


def test_memory_option(isolated: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    memory = tmp_path / "m.md"
    memory.write_text("- remember this\n")
    status, out = run(["--cwd", str(isolated), "--memory", str(memory), "--json"], capsys)
    data = json.loads(out)
    assert data["memory"] == str(memory)
    assert data["sections"][-1]["source"] == "memory" and "remember this" in data["sections"][-1]["text"]


@pytest.mark.parametrize("argv, message", [
    (["--prompt-template", "{tmp}/missing.md"], "{tmp}/missing.md: prompt template not found"),
    (["--cwd", "{tmp}/nope"], "{tmp}/nope: --cwd is not a directory"),
    (["--session", "{tmp}/x.jsonl", "--cwd", "{tmp}"], "--session shows a recorded session's prompt"),
])
def test_errors_are_one_line(tmp_path: Path, argv: list[str], message: str,
                             capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(UsageError) as info:
        run([a.format(tmp=tmp_path) for a in argv], capsys)
    assert str(info.value).startswith(message.format(tmp=tmp_path))
    assert "\n" not in str(info.value)


def test_session_option(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out = run(["--session", str(corpus / "claude-code-short.jsonl")], capsys)
    assert status == 0
    assert "Format:            claude-code" in out
    row = next(line for line in out.splitlines() if "Unrecorded prefix" in line)
    assert row.split()[-2] == "measured" and int(row.split()[-1].replace(",", "")) > 20_000
    assert "does not exist on this machine" in out
    status, out = run(["--session", str(corpus / "claude-code-short.jsonl"), "--json"], capsys)
    data = json.loads(out)
    assert data["format"] == "claude-code" and data["sections"][0]["kind"] == "measured"
    assert data["findings"] == []


def test_through_the_cli(isolated: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from inspector.cli import main

    template = tmp_path / "broken.md"
    template.write_text("# A\n\n{{nope}}\n")
    assert main(["prompt", "--cwd", str(isolated), "--prompt-template", str(template)]) == 2
    err = capsys.readouterr().err
    assert err == f"context-inspector: {template}:3: unknown placeholder {{{{nope}}}} (known: {{{{cwd}}}}, " \
                  "{{os}}, {{shell}}, {{platform}}, {{date}}, {{git}}, {{claude_md}}, {{memory}})\n"
    assert main(["prompt", "--cwd", str(isolated), "--no-memory", "--lint"]) == 0
    assert "Lint: clean" in capsys.readouterr().out
