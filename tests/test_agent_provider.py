"""The Anthropic provider on its own: request building, errors, key hygiene, summaries (SummaryProvider)."""

import socket

import pytest

from inspector.core.agent.cancel import Cancel
from inspector.core.agent.provider import (
    KEY_HELP, AnthropicProvider, MissingApiKey, ModelRequest, ProviderError, api_messages, drain,
)
from inspector.core.compaction.provider import SummaryError, SummaryProvider
from inspector.core.model import Block, Message
from mock_api import MOCK_KEY, responses as r


def test_api_messages_send_only_what_the_api_accepts():
    messages = [
        Message("user", "prompt", [Block("text", "hi"), Block.of("image", media="image/png", size=10)]),
        Message("assistant", "assistant", [Block("thinking", "unsigned, from a file"), Block("text", "ok")]),
        Message("assistant", "assistant", [Block.of("thinking", "signed", signature="s1")]),
        Message("assistant", "assistant", [Block("thinking", "only unsigned thinking")]),
        Message("user", "meta", [Block.of("unknown", raw={"type": "server_tool_use"})]),
    ]
    assert api_messages(messages) == [
        {"role": "user", "content": [{"type": "text", "text": "hi"},
                                     {"type": "text", "text": "[image (image/png) not kept in this session]"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "signed", "signature": "s1"}]},
    ]


def test_from_env(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(MissingApiKey, match="export ANTHROPIC_API_KEY="):
        AnthropicProvider.from_env()
    assert "ANTHROPIC_BASE_URL" in KEY_HELP
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret-123")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    provider = AnthropicProvider.from_env(model="claude-haiku-4-5")
    assert provider.base_url == "http://127.0.0.1:9" and provider.model == "claude-haiku-4-5"
    assert "sk-ant-secret" not in repr(provider)


def stream_once(provider, text="hi"):
    request = ModelRequest("claude-sonnet-4-6", "sys", [Message("user", "prompt", [Block("text", text)])], [], 100)
    return drain(provider.stream(request, Cancel()), None)


def test_an_error_echoing_the_key_is_scrubbed(mock_api):
    mock_api.add(r.invalid_request(f"bad key {MOCK_KEY} given"))
    with pytest.raises(ProviderError) as info:
        stream_once(AnthropicProvider(MOCK_KEY, mock_api.url))
    assert MOCK_KEY not in str(info.value) and "[API key]" in str(info.value)
    assert info.value.status == 400


def test_unreachable_endpoint_is_a_connection_error():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once the block ends: nothing listens there
    provider = AnthropicProvider("k", f"http://127.0.0.1:{port}", max_retries=0)
    with pytest.raises(ProviderError) as info:
        stream_once(provider)
    assert info.value.error_type == "connection_error" and "could not reach http://127.0.0.1" in str(info.value)


def test_cache_control_and_system_are_sent(mock_api):
    mock_api.add(r.text("ok"))
    response = stream_once(AnthropicProvider(MOCK_KEY, mock_api.url))
    body = mock_api.message_requests[0].body
    assert body["cache_control"] == {"type": "ephemeral"} and body["system"] == "sys" and "tools" not in body
    assert response.stop_reason == "end_turn" and response.blocks[0].text == "ok"


def test_the_provider_is_a_summary_provider(mock_api):
    provider = AnthropicProvider(MOCK_KEY, mock_api.url, model="claude-haiku-4-5")
    assert isinstance(provider, SummaryProvider)
    mock_api.add(r.text("  <summary>All of it.</summary>  "))
    pieces = []
    text = provider.summarize("summarize", [{"role": "user", "content": "long talk"}], pieces.append)
    assert text == "<summary>All of it.</summary>" and "".join(pieces).strip() == text
    req = mock_api.message_requests[0]
    assert req.body["model"] == "claude-haiku-4-5" and req.streamed and req.body["system"] == "summarize"

    mock_api.add(r.Reply([], stop_reason="end_turn"), r.invalid_request("too long"))
    with pytest.raises(SummaryError, match="no summary text"):
        provider.summarize("s", [{"role": "user", "content": "x"}])
    with pytest.raises(SummaryError, match="too long"):
        provider.summarize("s", [{"role": "user", "content": "x"}])


def test_bound_shares_the_client_with_another_model_and_cancel(mock_api):
    provider = AnthropicProvider(MOCK_KEY, mock_api.url)
    cancel = Cancel()
    bound = provider.bound("claude-opus-4-6", cancel)
    assert (bound.model, bound.cancel) == ("claude-opus-4-6", cancel)
    assert provider.model != "claude-opus-4-6" and provider.cancel is not cancel
    cancel.cancel()
    mock_api.add(r.text("never read"))
    with pytest.raises(SummaryError, match="cancelled"):
        bound.summarize("s", [{"role": "user", "content": "x"}])


def test_agent_config_from_env(monkeypatch, tmp_path):
    from inspector.core.agent import AgentConfig
    from inspector.core.agent.config import compaction_policy

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-x")
    monkeypatch.setenv("ANTHROPIC_MODEL", "claude-haiku-4-5")
    config = AgentConfig.from_env(tmp_path, compaction=compaction_policy("claude-haiku-4-5"))
    assert config.model == config.provider.model == "claude-haiku-4-5"
    assert config.cwd == tmp_path.resolve() and config.permissions.roots == [tmp_path.resolve()]
    assert config.max_tokens == 32_000
    assert config.compactor.policy.threshold == 126_000  # reference: 70% of (200k - 20k output reserve)
    assert config.compactor.provider.cancel is config.cancel
    assert AgentConfig.from_env(tmp_path, model="claude-3-5-haiku").max_tokens == 8_192
    with pytest.raises(ValueError):
        compaction_policy("claude-haiku-4-5", threshold=0)
