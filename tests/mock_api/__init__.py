"""A reusable local Messages-API server for tests: `mock_api` fixture, `MockAnthropicServer`, response builders.

    def test_x(mock_api):
        mock_api.add(responses.text("hi"))
        client = mock_api.client()          # or anthropic.Anthropic(base_url=mock_api.url, api_key="x")
        ...
        assert mock_api.message_requests[0].messages[-1]["content"] == ...
"""

import anthropic
import httpx2

from . import responses
from .fixture import mock_api
from .server import MOCK_KEY, MockAnthropicServer, RecordedRequest, count_tokens

# What the SDK raises when a response's body breaks off mid-stream: the transport's own error before anthropic 2.17,
# APIConnectionError (the transport's error as its cause) from 2.17 on.
BROKEN_STREAM = (httpx2.HTTPError, anthropic.APIConnectionError)

__all__ = ["BROKEN_STREAM", "MOCK_KEY", "MockAnthropicServer", "RecordedRequest", "count_tokens", "mock_api", "responses"]
