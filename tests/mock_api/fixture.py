"""The `mock_api` pytest fixture: a started MockAnthropicServer, stopped after the test.

ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY point at it for the test's duration, so code that reads the environment
(the agent provider, the CLI) reaches the server without further setup.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .server import MOCK_KEY, MockAnthropicServer


@pytest.fixture
def mock_api(monkeypatch: pytest.MonkeyPatch) -> Iterator[MockAnthropicServer]:
    with MockAnthropicServer() as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", MOCK_KEY)
        yield server
