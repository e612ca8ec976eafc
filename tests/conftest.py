"""Shared test fixtures: paths to the real Claude Code corpus (copied from ../shared/corpus, see corpus/SOURCES.md)."""

import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).parent
CORPUS = TESTS / "corpus"
FIXTURES = TESTS / "fixtures"
ROOT = TESTS.parent
sys.path.insert(0, str(TESTS / "agents"))  # the lab's harness (lab, install, the agents' scenario modules)


@pytest.fixture
def corpus() -> Path:
    return CORPUS


from mock_api import mock_api  # noqa: E402,F401  (the reusable Messages-API server fixture, tests/mock_api/)
