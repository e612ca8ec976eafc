"""Shared test fixtures: paths to the real Claude Code corpus (copied from ../shared/corpus, see corpus/SOURCES.md),
and every test kept from the machine's own system-wide agent settings."""

import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).parent
CORPUS = TESTS / "corpus"
FIXTURES = TESTS / "fixtures"
ROOT = TESTS.parent
sys.path.insert(0, str(TESTS / "agents"))  # the lab's harness (lab, install, the agents' scenario modules)


@pytest.fixture(autouse=True)
def no_system_settings(monkeypatch, tmp_path_factory) -> None:
    """The agents' system-wide settings (/etc/claude-code, /etc/codex, /etc/gemini-cli, /etc/qwen-code) of whatever
    machine runs the tests are not read: each is pointed at a folder that does not exist (a test that needs one
    points it at its own)."""
    from inspector.core.formats import claude_code, codex

    none = tmp_path_factory.getbasetemp() / "no-system-settings"
    monkeypatch.setattr(claude_code, "MANAGED_SETTINGS", none)
    monkeypatch.setattr(codex, "SYSTEM_CONFIG", none / "config.toml")
    for prefix in ("GEMINI_CLI", "QWEN_CODE"):
        monkeypatch.setenv(f"{prefix}_SYSTEM_SETTINGS_PATH", str(none / "settings.json"))
        monkeypatch.setenv(f"{prefix}_SYSTEM_DEFAULTS_PATH", str(none / "system-defaults.json"))


@pytest.fixture
def corpus() -> Path:
    return CORPUS


from mock_api import mock_api  # noqa: E402,F401  (the reusable Messages-API server fixture, tests/mock_api/)
