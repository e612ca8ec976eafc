"""The prefix by name (recorded parts, or published sizes scaled to the measured prefix) and `stats` across
sessions (per project and per day, parallel, unreadable sessions named)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.core.formats import load
from inspector.core.prefix import prefix_sections, published_sizes
from inspector.core.stats import aggregate, session_paths, summaries
from inspector.core.tokens import account

HERE = Path(__file__).parent
CORPUS = HERE / "corpus"
AGENTS = HERE / "fixtures" / "agents"
RECORDED = next((AGENTS / "claude-code-2.1.332").glob("mcp-tools/home/.claude/projects/*/*.jsonl"))


@pytest.mark.parametrize("path", [CORPUS / "claude-code-manual-compact.jsonl", CORPUS / "claude-code-short.jsonl",
                                  CORPUS / "claude-code-compaction-request.jsonl", RECORDED,
                                  *sorted(AGENTS.glob("kimi-*/**/context.jsonl"))[:1],
                                  *sorted(AGENTS.glob("codex-*/*/home/.codex/sessions/*/*/*/*.jsonl"))[:1]])
def test_sections_sum_to_the_reports_prefix(path, capsys):
    assert main(["report", str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    sections = report["prefix"]["sections"]
    assert sum(s["tokens"] for s in sections) == report["totals"]["prefix"]
    assert all(s["source"] in ("measured", "estimated") for s in sections)


def test_an_unrecorded_claude_code_prefix_is_split_by_published_sizes():
    session = load(CORPUS / "claude-code-manual-compact.jsonl")
    acc = account(session)
    parts = {s.name: s for s in prefix_sections(session, acc)}
    used = {b.tool_name for m in session.messages for b in m.blocks if b.type == "tool_use"}
    assert {f"tool: {t}" for t in used if t != "Skill"} <= set(parts)
    assert all(not s.recorded and s.source == "estimated" for s in parts.values())
    sizes = published_sizes()
    assert "Claude Code v2.1.240" in sizes["source"] and "MIT" in sizes["licence"]
    # the published sizes fit inside the measured prefix: the tools keep them, the system prompt is the rest
    assert parts["tool: Read"].tokens == pytest.approx(sizes["tools"]["Read"], abs=2)
    assert parts["system prompt"].tokens > 10_000


def test_a_recorded_prefix_names_what_was_sent():
    session = load(RECORDED)
    parts = {s.name: s for s in prefix_sections(session, account(session))}
    assert all(s.recorded for s in parts.values())
    assert "system prompt" in parts and any(n.startswith("MCP server ") for n in parts)
    assert any(n.startswith("tool: ") for n in parts)


def test_a_compaction_requests_prefix_is_the_summarized_conversation():
    session = load(CORPUS / "claude-code-compaction-request.jsonl")
    (part,) = prefix_sections(session, account(session))
    assert part.name.startswith("summarized conversation") and part.source == "measured"


def test_stats_per_project_and_day(tmp_path, capsys):
    for k, source in enumerate([CORPUS / "claude-code-manual-compact.jsonl", CORPUS / "claude-code-short.jsonl"]):
        project = tmp_path / f"p{k}"
        project.mkdir()
        shutil.copy(source, project / "s.jsonl")
        (project / "agent-side.jsonl").write_text("{}\n")  # a subagent file: not a session of its own
    (tmp_path / "p0" / "broken.jsonl").write_bytes(b"\x00\x01\x02 not json\n")
    assert main(["stats", str(tmp_path), "--json", "--jobs", "2"]) == 0
    result = json.loads(capsys.readouterr().out)
    total = result["total"]
    assert total["sessions"] == 2 and total["compactions"] == 1
    assert total["median_tokens_at_compaction"] == 142_431  # the manual compaction's preTokens
    assert 0 < total["cache_hit_ratio"] < 1 and total["cost_usd"] > 0
    assert len(result["by_project"]) == 2 and result["by_day"]
    assert [u["path"] for u in result["unreadable"]] == [str(tmp_path / "p0" / "broken.jsonl")]
    assert total["top_categories"][0]["tokens"] >= total["top_categories"][-1]["tokens"]
    assert main(["stats", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "Per project" in out and "Unreadable (1)" in out


def test_stats_figures_are_the_reports(capsys):
    path = CORPUS / "claude-code-manual-compact.jsonl"
    (row,) = summaries([(path, "file")], workers=1)
    assert main(["report", str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert row.cost_usd == pytest.approx(report["cost"]["total_usd"], abs=1e-5)
    assert row.cache_read / row.prompt == pytest.approx(report["cache"]["hit_ratio"], abs=1e-6)
    assert aggregate([row])["total"]["sessions"] == 1


def test_stats_finds_every_agents_files():
    found = session_paths([AGENTS])
    kinds = {p.name for p, _ in found}
    assert any(n.endswith(".messages.json") for n in kinds)  # the Cline SDK
    assert any(kind == "task" for _, kind in found)  # a Cline / Roo Code task folder
    assert not any(n.startswith("agent-") for n in kinds)


def test_stats_refuses_a_missing_directory(tmp_path, capsys):
    assert main(["stats", str(tmp_path / "nope")]) == 2
    assert "no such file" in capsys.readouterr().err
