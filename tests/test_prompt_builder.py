"""build_system_prompt in a real temporary git repository with nested CLAUDE.md files and a memory file."""

from __future__ import annotations

import os
import subprocess
from datetime import datetime
from pathlib import Path

import pytest

from inspector.core.estimators import get_estimator
from inspector.core.prompt import (
    DEFAULT_TEMPLATE, TemplateError, assemble, build_system_prompt, default_memory_path, prompt_text, remember,
)

NINE = ["Identity and capabilities", "Environment", "Tool use", "Decisions under uncertainty",
        "Task decomposition and planning", "Error handling and recovery", "Communication and output format",
        "Behaviour constraints and safety invariants", "Session state and memory"]
NOW = datetime(2026, 11, 29, 23, 30)
GIT_ENV = {"GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "T",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV}).stdout


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """repo/ (git, two commits, an untracked file) with CLAUDE.md at the root, in a/, and CLAUDE.local.md in a/b/;
    home/.claude/CLAUDE.md; a memory file. Returns the parent of home/ and repo/."""
    base = tmp_path_factory.mktemp("prompt")
    home, repo = base / "home", base / "repo"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "CLAUDE.md").write_text("Prefer British spelling in prose.\n")
    (repo / "a" / "b").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / "CLAUDE.md").write_text("\n\n# Root rules\n\nRun the linter on changed files.\n")
    git(repo, "add", "CLAUDE.md")
    git(repo, "commit", "-q", "-m", "Add root instructions")
    (repo / "a" / "CLAUDE.md").write_text("Module a uses dataclasses for records.\n")
    git(repo, "add", "a/CLAUDE.md")
    git(repo, "commit", "-q", "-m", "Describe module a")
    (repo / "a" / "b" / "CLAUDE.local.md").write_text("My local sandbox lives in /tmp/sandbox.\n")
    (repo / "untracked.txt").write_text("x")
    (base / "memory.md").write_text("- The user likes short answers.\n")
    return base


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets an empty HOME and no config overrides, so the machine's own files never leak in."""
    for name in ("CLAUDE_CONFIG_DIR", "CONTEXT_INSPECTOR_MEMORY", "XDG_DATA_HOME"):
        monkeypatch.delenv(name, raising=False)
    home = tmp_path / "empty-home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    return home


def build(project: Path, monkeypatch: pytest.MonkeyPatch, cwd: Path | None = None, **kwargs):
    monkeypatch.setenv("HOME", str(project / "home"))
    kwargs.setdefault("memory", project / "memory.md")
    return assemble(cwd or project / "repo" / "a" / "b", now=NOW, **kwargs)


def test_every_section_with_its_source_and_content(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    prompt = build(project, monkeypatch)
    repo = project / "repo"
    titles = [s.title for s in prompt.sections]
    template_titles = [s.title for s in prompt.sections if s.path == str(DEFAULT_TEMPLATE)]
    assert template_titles == NINE
    by_title = {s.title: s for s in prompt.sections}
    assert all(by_title[t].source == "template" for t in NINE if t != "Environment")
    env = by_title["Environment"]
    assert env.source == "runtime"
    assert f"Working directory: {repo / 'a' / 'b'}" in env.text
    assert "2026-11-29 (Sunday)" in env.text
    assert "{{" not in prompt.text
    git_section = by_title["Git"]
    assert git_section.source == "git"
    assert titles.index("Git") == titles.index("Environment") + 1
    assert "Git branch: main" in git_section.text
    assert "Describe module a" in git_section.text and "Add root instructions" in git_section.text
    assert "?? a/b/" in git_section.text and "?? untracked.txt" in git_section.text
    files = [s for s in prompt.sections if s.source.endswith(".md") and s.source != str(DEFAULT_TEMPLATE)
             and s.source != "memory"]
    assert [Path(s.source) for s in files] == [
        project / "home" / ".claude" / "CLAUDE.md", repo / "CLAUDE.md", repo / "a" / "CLAUDE.md",
        repo / "a" / "b" / "CLAUDE.local.md"]
    assert "Prefer British spelling" in files[0].text and "user instructions" in files[0].text
    assert "Run the linter on changed files." in files[1].text
    assert "dataclasses" in files[2].text
    assert "/tmp/sandbox" in files[3].text and "not checked in" in files[3].text
    memory = prompt.sections[-1]
    assert (memory.title, memory.source, memory.path) == ("Memory", "memory", str(project / "memory.md"))
    assert memory.text.startswith("# Memory\n\n- The user likes short answers.")
    assert prompt.notes == []


def test_prompt_is_the_join_and_no_section_is_empty(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sections = build(project, monkeypatch).sections
    estimator = get_estimator("script")
    assert prompt_text(sections) == "\n\n".join(s.text for s in sections)
    for section in sections:
        body = section.text.split("\n", 1)[1] if section.text.startswith("# ") else section.text
        assert body.strip(), section.title
        assert section.tokens == estimator.text(section.text) > 0


def test_lines_map_back_to_files(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    prompt = build(project, monkeypatch)
    root = next(s for s in prompt.sections if s.source == str(project / "repo" / "CLAUDE.md"))
    line = root.text.split("\n").index("Run the linter on changed files.") + 1
    assert root.file_line(line) == 5  # two blank lines, a heading and a blank precede it in the file
    assert root.file_line(1) is None  # the generated "Instructions from" heading
    tool_use = next(s for s in prompt.sections if s.title == "Tool use")
    template_lines = DEFAULT_TEMPLATE.read_text().split("\n")
    assert template_lines[tool_use.file_line(1) - 1] == "# Tool use"


def test_build_system_prompt_returns_the_sections(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(project / "home"))
    sections = build_system_prompt(cwd=project / "repo", memory=False, now=NOW, estimator="blocks")
    assert [s.title for s in sections if s.source in ("template", "runtime")] == NINE
    assert not any(s.source == "memory" for s in sections)
    assert sections[0].tokens == get_estimator("blocks").text(sections[0].text)


def test_building_writes_nothing_to_the_repository(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = project / "repo"
    (repo / "a" / "CLAUDE.md").touch()  # stat info changes: a locking `git status` would rewrite the index
    index = repo / ".git" / "index"
    before = (index.stat().st_mtime_ns, sorted(p.name for p in (repo / ".git").iterdir()))
    build(project, monkeypatch)
    assert (index.stat().st_mtime_ns, sorted(p.name for p in (repo / ".git").iterdir())) == before


def test_outside_a_repository(tmp_path: Path) -> None:
    work = tmp_path / "plain" / "dir"
    work.mkdir(parents=True)
    (tmp_path / "plain" / "CLAUDE.md").write_text("parent file: not loaded outside a repository\n")
    (work / "CLAUDE.md").write_text("Here.\n")
    prompt = assemble(work, memory=False, now=NOW)
    git_section = next(s for s in prompt.sections if s.source == "git")
    assert git_section.text == "- Git: not a git repository"
    assert [s.source for s in prompt.sections if s.source.endswith("CLAUDE.md")] == [str(work / "CLAUDE.md")]


def test_git_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    prompt = assemble(tmp_path, memory=False, now=NOW)
    assert next(s for s in prompt.sections if s.source == "git").text == "- Git: not available (git is not installed)"


def test_repository_without_commits_and_detached_head(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "trunk")
    text = next(s for s in assemble(tmp_path, memory=False).sections if s.source == "git").text
    assert "Git branch: trunk (no commits yet)" in text and "Recent commits: none yet" in text
    assert "Git status: clean" in text
    (tmp_path / "f").write_text("1")
    git(tmp_path, "add", "f")
    git(tmp_path, "commit", "-q", "-m", "one")
    git(tmp_path, "checkout", "-q", "--detach")
    text = next(s for s in assemble(tmp_path, memory=False).sections if s.source == "git").text
    assert "Git branch: detached HEAD" in text and "one" in text


def test_claude_config_dir_and_dot_claude_and_empty_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "config"
    config.mkdir()
    (config / "CLAUDE.md").write_text("from the config dir\n")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "CLAUDE.md").write_text("from .claude\n")
    (tmp_path / "CLAUDE.md").write_text("   \n")
    prompt = assemble(tmp_path, memory=False)
    assert [s.source for s in prompt.sections if "CLAUDE" in s.source] == [
        str(config / "CLAUDE.md"), str(tmp_path / ".claude" / "CLAUDE.md")]
    assert any("the file is empty" in n for n in prompt.notes)


def test_memory_default_location_and_remember(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              isolated_home: Path) -> None:
    assert default_memory_path() == isolated_home / ".local" / "share" / "context-inspector" / "memory.md"
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert default_memory_path() == tmp_path / "data" / "context-inspector" / "memory.md"
    prompt = assemble(tmp_path)
    assert prompt.memory == default_memory_path()
    assert not any(s.source == "memory" for s in prompt.sections)
    assert any("no memory yet" in n for n in prompt.notes)
    remember("  The tests   run with pytest.  ")
    memory = assemble(tmp_path).sections[-1]
    assert memory.text == "# Memory\n\n- The tests run with pytest."
    monkeypatch.setenv("CONTEXT_INSPECTOR_MEMORY", str(tmp_path / "elsewhere.md"))
    assert default_memory_path() == tmp_path / "elsewhere.md"
    with pytest.raises(ValueError):
        remember("   ")


def test_custom_template_places_blocks_and_keeps_fences(tmp_path: Path) -> None:
    (tmp_path / "CLAUDE.md").write_text("Project note.\n")
    (tmp_path / "mem.md").write_text("remembered\n")
    template = tmp_path / "t.md"
    template.write_text("You are terse.\n\n<!-- a comment\n{{unknown}} in a comment is fine -->\n"
                        "# Context\n\nIn {{cwd}} on {{date}}.\n\n{{claude_md}}\n\nAfter the files.\n\n"
                        "# Code\n\n```\n# not a heading\n```\n\n{{memory}}\n")
    prompt = assemble(tmp_path, template, memory=tmp_path / "mem.md", now=NOW)
    assert [(s.title, s.source) for s in prompt.sections] == [
        ("Preamble", "template"), ("Context", "runtime"), ("Project instructions", str(tmp_path / "CLAUDE.md")),
        ("Context (continued)", "template"), ("Code", "template"), ("Memory", "memory")]
    assert prompt.sections[1].text == f"# Context\n\nIn {tmp_path.resolve()} on 2026-11-29 (Sunday)."
    assert "# not a heading" in prompt.sections[4].text
    assert "comment" not in prompt.text
    assert prompt.template == template and not prompt.default_template
    assert prompt.sections[3].file_line(1) == 11


def test_heading_alone_before_an_empty_block_is_dropped(tmp_path: Path) -> None:
    template = tmp_path / "t.md"
    template.write_text("# Rules\n\nBe kind.\n\n# Project instructions\n\n{{claude_md}}\n")
    prompt = assemble(tmp_path, template, memory=False)
    assert [s.title for s in prompt.sections] == ["Rules"]
    (tmp_path / "CLAUDE.md").write_text("x\n")
    prompt = assemble(tmp_path, template, memory=False)
    assert [s.title for s in prompt.sections] == ["Rules", "Project instructions", "Project instructions"]


@pytest.mark.parametrize("content, message", [
    ("# A\n\ntext {{cwdd}}\n", "t.md:3: unknown placeholder {{cwdd}}"),
    ("<!-- only a comment -->\n\n", "t.md: prompt template has no sections"),
    ("", "t.md: prompt template has no sections"),
    ("# A\n\ntext\n\n# B\n\n# C\n\nmore\n", "t.md:5: section 'B' is empty"),
    ("# A\n\nsee {{git}} here\n", "t.md:3: {{git}} must stand alone on its line"),
    ("# A\n\n{{memory}}\n\n{{memory}}\n", "t.md:5: {{memory}} is already used on line 3"),
    ("# A\n\ntext\n<!--\nnever closed\n", "t.md:4: comment opened with <!-- is never closed with -->"),
])
def test_broken_templates(tmp_path: Path, content: str, message: str) -> None:
    template = tmp_path / "t.md"
    template.write_text(content)
    with pytest.raises(TemplateError) as info:
        assemble(tmp_path, template, memory=False)
    assert str(info.value).startswith(str(tmp_path / message.split(":", 1)[0]) + ":" + message.split(":", 1)[1])
    assert "\n" not in str(info.value)


def test_unreadable_templates(tmp_path: Path) -> None:
    with pytest.raises(TemplateError, match="prompt template not found"):
        assemble(tmp_path, tmp_path / "missing.md")
    with pytest.raises(TemplateError, match="is a directory"):
        assemble(tmp_path, tmp_path)
    (tmp_path / "bin.md").write_bytes(b"# A\n\nok\n\xff\xfe\n")
    with pytest.raises(TemplateError, match=r"bin.md:4: prompt template is not UTF-8"):
        assemble(tmp_path, tmp_path / "bin.md")


def test_cwd_must_be_a_directory(tmp_path: Path) -> None:
    with pytest.raises(NotADirectoryError):
        assemble(tmp_path / "nope")


def test_claude_md_imports(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "CLAUDE.md").write_text("See @docs/style.md and @missing.md, ask @alice.\n"
                                        "Not code: `@docs/ignored.md`\n```\n@docs/fenced.md\n```\n")
    (tmp_path / "docs" / "style.md").write_text("Style rules. Also @../CLAUDE.md and @deep1.md\n")
    (tmp_path / "docs" / "ignored.md").write_text("never loaded\n")
    (tmp_path / "docs" / "fenced.md").write_text("never loaded\n")
    for i in range(1, 7):
        (tmp_path / "docs" / f"deep{i}.md").write_text(f"depth {i} @deep{i + 1}.md\n")
    prompt = assemble(tmp_path, memory=False)
    files = [s for s in prompt.sections if s.path and s.path.endswith(".md") and s.source != "template"
             and s.path != str(DEFAULT_TEMPLATE)]
    assert [(s.title, s.source) for s in files] == [("Project instructions", str(tmp_path / "CLAUDE.md"))] + [
        ("Imported instructions", str(tmp_path / "docs" / name)) for name in
        ["style.md", "deep1.md", "deep2.md", "deep3.md", "deep4.md"]]
    assert "imported by CLAUDE.md" in files[1].text
    assert f"{tmp_path}/CLAUDE.md: imported file {tmp_path}/missing.md does not exist" in prompt.notes
    assert any("deep5.md not followed (more than 5 hops)" in n for n in prompt.notes)
    assert "never loaded" not in prompt.text


def fake_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, script: str) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git").write_text(f"#!/bin/sh\n{script}\n")
    (bin_dir / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")


def test_git_that_hangs_or_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from inspector.core.prompt import environment

    fake_git(tmp_path, monkeypatch, "sleep 5 & wait")  # a child that holds the pipes open
    monkeypatch.setattr(environment, "GIT_TIMEOUT", 0.2)
    assert environment.git_info(tmp_path).render() == "- Git: no answer from git within 0.2 s"
    (tmp_path / "bin" / "git").write_text("#!/bin/sh\necho 'fatal: detected dubious ownership' >&2\nexit 128\n")
    assert environment.git_info(tmp_path).render() == "- Git: git status failed: fatal: detected dubious ownership"


def test_template_with_byte_order_mark_and_crlf(tmp_path: Path) -> None:
    template = tmp_path / "t.md"
    template.write_bytes("\ufeff# Rules\r\n\r\nBe kind in {{cwd}}.\r\n".encode())
    (section,) = [s for s in assemble(tmp_path, template, memory=False).sections if s.source == "runtime"]
    assert section.title == "Rules" and section.text == f"# Rules\n\nBe kind in {tmp_path.resolve()}."


def test_exact_estimator_counts_the_whole_prompt_in_two_calls(tmp_path: Path, mock_api) -> None:
    import math

    from inspector.core.estimators import _COUNT_CACHE

    _COUNT_CACHE.clear()
    prompt = assemble(tmp_path, memory=False, estimator="exact")
    counts = [r for r in mock_api.requests if r.path == "/v1/messages/count_tokens"]
    assert len(counts) == 2
    assert counts[0].body["system"] == prompt.text
    assert sum(s.tokens for s in prompt.sections) == math.ceil(len(prompt.text) / 4)  # the server's own count
    assert all(s.tokens > 0 for s in prompt.sections)


def test_every_template_line_maps_back_to_its_place(tmp_path: Path) -> None:
    """For any template of headings, text, blank lines, comments and fences: no crash, no lost or invented line,
    and every line of every section maps back to the template line it came from."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    line = st.one_of(
        st.sampled_from(["", "# Heading", "## Sub", "```", "<!-- note -->", "- item", "In {{cwd}} now."]),
        st.text(st.characters(codec="utf-8", exclude_characters="\r\n{}<"),
                max_size=20))
    template = tmp_path / "t.md"

    @settings(max_examples=100, deadline=None)
    @given(st.lists(line, min_size=1, max_size=25))
    def check(lines: list[str]) -> None:
        template.write_text("\n".join(lines))
        try:
            sections = assemble(tmp_path, template, memory=False, now=NOW).sections
        except TemplateError:
            return
        mapped: list[int] = []
        for section in sections:
            if section.path != str(template):
                continue
            for i, text in enumerate(section.text.split("\n"), start=1):
                n = section.file_line(i)
                assert n is not None
                expected = lines[n - 1].rstrip().replace("{{cwd}}", str(tmp_path.resolve()))
                assert text == expected
                mapped.append(n)
        assert mapped == sorted(set(mapped))  # in order, each template line at most once
        kept = {n for n, text in enumerate(lines, start=1) if text.strip() and text != "<!-- note -->"}
        assert kept <= set(mapped)

    check()
