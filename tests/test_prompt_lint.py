"""Lint on crafted prompts: deterministic rules, missing sections, repeats; every finding with section and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.core.prompt import Section, assemble, lint
from inspector.core.prompt.lint import RECOMMENDED, split_sentences


def section(title: str, text: str, source: str = "template", path: str = "t.md", first_line: int = 10) -> Section:
    lines = tuple(range(first_line, first_line + text.count("\n") + 1))
    return Section(title, text, source, path=path, lines=lines)


@pytest.mark.parametrize("sentence, category", [
    ("Retry failed commands up to 3 times.", "retry limit"),
    ("Give up after three failures.", "retry limit"),
    ("If a command fails twice, retry it once with verbose output.", "retry limit"),
    ("Use a timeout of 30 seconds for shell commands.", "timeout"),
    ("Wait 2 minutes for the build to finish.", "timeout"),
    ("Never read files larger than 2 MB.", "size limit"),
    ("Summaries must stay under 500 tokens.", "size limit"),
    ("Show the first 200 lines of a log.", "size limit"),
    ("Keep the 5 most recent tool results.", "count"),
    ("Ask at most two questions per turn.", "count"),
    ("Edit no more than 10 files in a change.", "count"),
    ("Always run the tests before committing.", "strict ordering"),
    ("First read the file, then edit it.", "strict ordering"),
    ("Do this in the following order: read, plan, act.", "strict ordering"),
    ("Never edit a file until you have read it.", "strict ordering"),
])
def test_deterministic_sentences_are_flagged(sentence: str, category: str) -> None:
    text = f"# Rules\n\nBe helpful and kind to the user.\n{sentence}\n"
    findings = [f for f in lint([section("Rules", text)], recommended=False) if f.rule == "deterministic"]
    assert len(findings) == 1, findings
    finding = findings[0]
    assert f"sets a {category}" in finding.message
    assert (finding.section, finding.line, finding.path, finding.file_line) == ("Rules", 4, "t.md", 13)
    assert finding.excerpt == sentence
    assert finding.location() == "t.md:13 (Rules, line 4)"


@pytest.mark.parametrize("sentence", [
    "Use judgment when choosing between two approaches.",
    "Prefer small, verifiable steps.",
    "When a tool reports an error, read the message and fix the cause.",
    "The project has 12 modules and a README.",
    "Ask a short question when the request is ambiguous.",
    "Explain what changed and why.",
])
def test_judgment_sentences_are_not_flagged(sentence: str) -> None:
    assert lint([section("Rules", f"# Rules\n\n{sentence}\n")], recommended=False) == []


def test_default_template_passes_its_own_lint(tmp_path: Path) -> None:
    assert lint(assemble(tmp_path, memory=False).sections) == []


def test_runtime_values_and_git_are_not_instructions(tmp_path: Path) -> None:
    (tmp_path / "retry 3 times").mkdir()
    template = tmp_path / "t.md"
    template.write_text("# Environment\n\n- Directory: {{cwd}}\n\nNever wait longer than 30 seconds.\n\n{{git}}\n")
    sections = assemble(tmp_path / "retry 3 times", template, memory=False).sections
    git = section("Git", "- abc123 Retry 3 times on failure", "git")
    findings = lint(sections + [git], recommended=False)
    assert [(f.section, f.line, f.file_line) for f in findings] == [("Environment", 5, 5)]


def test_missing_recommended_sections() -> None:
    sections = [section("Identity", "# Identity\n\nYou help with code."),
                section("Tool use", "# Tool use\n\nSearch before guessing."),
                section("Memory", "# Memory\n\n- likes tea", "memory")]
    missing = [f.message for f in lint(sections) if f.rule == "missing-section"]
    assert len(missing) == len(RECOMMENDED) - 2  # identity and tool use covered; the memory *file* is no section
    assert any("'Session state and memory'" in m for m in missing)
    assert all(f.path == "t.md" for f in lint(sections) if f.rule == "missing-section")


def test_repeats_across_sections_and_claude_md() -> None:
    sections = [
        section("Tool use", "# Tool use\n\nPrefer the edit tool for small changes to existing files.\n"
                            "Read tool results carefully."),
        section("Style", "# Style\n\nBe concise.\nBe concise."),
        section("CLAUDE.md", "# Instructions from /r/CLAUDE.md\n\nPrefer the edit tool for small changes to "
                             "the existing files!", "/r/CLAUDE.md", "/r/CLAUDE.md", first_line=-1),
    ]
    repeats = [f for f in lint(sections, recommended=False) if f.rule == "repeated"]
    assert len(repeats) == 1  # "Be concise." is too short to count as a copied instruction
    repeat = repeats[0]
    assert (repeat.section, repeat.line, repeat.path, repeat.file_line) == ("CLAUDE.md", 3, "/r/CLAUDE.md", 1)
    assert repeat.message.startswith("repeats 'Tool use', line 3 (t.md:12): 'Prefer the edit tool")


def test_sentences_split_on_lists_headings_and_fences() -> None:
    text = ("# Title\n\nOne sentence here. Another one\ncontinues here.\n- item one\n- item two.\n"
            "```\nRetry 3 times.\n```\nLast.")
    found = [(s.line, s.text) for s in split_sentences(section("T", text))]
    assert found == [(3, "One sentence here."), (3, "Another one continues here."), (5, "item one"),
                     (6, "item two."), (10, "Last.")]
    assert lint([section("T", text)], recommended=False) == []  # code in fences is an example, not a rule


def test_finding_json_has_section_and_line() -> None:
    finding = lint([section("Rules", "Retry 3 times.")], recommended=False)[0]
    assert finding.to_json() == {"rule": "deterministic", "message": finding.message, "section": "Rules",
                                 "line": 1, "path": "t.md", "file_line": 10, "excerpt": "Retry 3 times."}


def test_every_copy_found_among_many_sentences() -> None:
    import random

    rng = random.Random(1)
    vocabulary = [f"w{i}" for i in range(400)]
    lines = [" ".join(rng.choice(vocabulary) for _ in range(rng.randint(6, 12))) + "." for _ in range(300)]
    copies = {50: 3, 120: 77, 299: 200}
    for at, original in copies.items():
        lines[at] = lines[original].replace(".", "!")
    findings = [f for f in lint([section("Big", "\n".join(lines))], recommended=False) if f.rule == "repeated"]
    assert sorted((f.line, f.message.split(" of this section")[0]) for f in findings) == sorted(
        (max(a, o) + 1, f"repeats line {min(a, o) + 1}") for a, o in copies.items())


@pytest.mark.parametrize("sentence, category", [
    ("The whole test suite must stay under 10 minutes on 2 cores.", "timeout"),
    ("Keep answers to 300 words max.", "size limit"),
    ("Truncate tool output to 2,000 characters.", "size limit"),
])
def test_limits_in_other_words(sentence: str, category: str) -> None:
    (finding,) = lint([section("Rules", sentence)], recommended=False)
    assert f"sets a {category}" in finding.message


@pytest.mark.parametrize("sentence", [
    "DataTable takes 7-9 s to mount 100,000 rows.",
    "In the corpus the first request holds 26,010 tokens.",
    "The loader reads 5 MB files in 0.2 s on a 2-core machine.",
])
def test_facts_with_numbers_are_not_rules(sentence: str) -> None:
    assert lint([section("Notes", sentence)], recommended=False) == []
