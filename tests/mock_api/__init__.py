"""A reusable local Messages-API server for tests: `mock_api` fixture, `MockAnthropicServer`, response builders.

    def test_x(mock_api):
        mock_api.add(responses.text("hi"))
        client = mock_api.client()          # or anthropic.Anthropic(base_url=mock_api.url, api_key="x")
        ...
        assert mock_api.message_requests[0].messages[-1]["content"] == ...
"""

from . import responses
from .fixture import mock_api
from .server import MOCK_KEY, MockAnthropicServer, RecordedRequest, count_tokens

__all__ = ["MOCK_KEY", "MockAnthropicServer", "RecordedRequest", "count_tokens", "mock_api", "responses"]
