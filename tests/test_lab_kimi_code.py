"""Kimi Code run live, offline, when the lab installed it (`tests/agents/install.py kimi-code`, as CI does): each
scenario recorded afresh by the real program and read with the checks the fixtures pass (test_formats_agents.py),
so a change in what the pinned version writes shows here, not only in files recorded once."""

from __future__ import annotations

from pathlib import Path

import pytest

import install
import record
from test_formats_agents import (check_kimi_code_basic, check_kimi_code_compaction, check_kimi_code_subagent,
                                 check_kimi_code_thinking)

pytestmark = pytest.mark.skipif(install.binary("kimi-code") is None or install.binary("node22") is None,
                                reason="Kimi Code is not installed (python tests/agents/install.py kimi-code)")


def recorded(scenario: str, tmp_path: Path) -> Path:
    out = tmp_path / scenario
    assert record.record("kimi-code", scenario, out) == 0, (out / "run.json").read_text()
    return out


def test_basic_live(tmp_path):
    check_kimi_code_basic(recorded("basic", tmp_path))


def test_compaction_live(tmp_path):
    check_kimi_code_compaction(recorded("compaction", tmp_path), "auto")


def test_subagent_live(tmp_path):
    check_kimi_code_subagent(recorded("subagent", tmp_path))


def test_thinking_live(tmp_path):
    check_kimi_code_thinking(recorded("thinking", tmp_path))
