"""Secrets: the API key never reaches a session file, a log, a report or the screen; exports and everything printed
redact known key patterns; the agent's shell does not even have the key.

The agent runs as the real CLI (a subprocess) against the local Messages-API server, with a key that looks real,
and a model that tries every way to make it show: `env`, `echo $ANTHROPIC_API_KEY`, reading a .env file.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from bad_inputs.build import SESSION
from bad_inputs.proc import cli, run
from inspector.core.formats import load
from inspector.core.secrets import KEY_PATTERNS, redact
from mock_api import responses as r

OUR_KEY = "sk-ant-api03-" + "Zq9" * 30 + "-AAAA"  # looks like a real Anthropic key
OTHERS = {
    "openai": "sk-proj-" + "a1B2c3" * 8,
    "aws": "AKIAIOSFODNN7EXAMPLE",
    "github": "ghp_" + "x1y2" * 9,
    "slack": "xoxb-1234567890-abcdefghij",
    "google": "AIza" + "S" * 35,
    "private-key": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
}
LEAKY = f"ANTHROPIC_API_KEY={OUR_KEY}\n" + "\n".join(f"{k}={v}" for k, v in OTHERS.items()) + "\n"
ALL_SECRETS = [OUR_KEY, *OTHERS.values(), "b3BlbnNzaC1rZXktdjEAAAAA"]


def assert_no_secret(text: str, where: str) -> None:
    for secret in ALL_SECRETS:
        assert secret not in text, f"{where} holds a secret: {secret[:12]}…"


def test_every_pattern_is_redacted_and_plain_text_is_not():
    assert set(OTHERS) | {"anthropic"} == set(KEY_PATTERNS)
    out = redact(LEAKY)
    assert_no_secret(out, "redact()")
    for kind in KEY_PATTERNS:
        assert f"[REDACTED {kind} key]" in out
    in_json = redact(json.dumps({"content": LEAKY}))  # works on serialized lines too (how files are written)
    assert_no_secret(json.loads(in_json)["content"], "a JSON line")
    for text in ("disk-usage-monitoring-dashboard-page", "task-ant-colony", "risk-free", "AKIA", "sk-ant-",
                 "the key is in ~/.config", "ghp_short"):
        assert redact(text) == text


def test_the_environment_key_is_redacted_whatever_it_looks_like(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "internal-proxy-token-42")
    assert redact("token internal-proxy-token-42 used") == "token [REDACTED ANTHROPIC_API_KEY] used"


def _leaky_session(directory: Path) -> Path:
    """A Claude Code session whose tool printed keys (someone ran `cat .env`)."""
    def entry(kind, uuid, parent, content, **message):
        return {"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": SESSION, "cwd": "/w",
                "message": {"role": kind, "content": content, **message}}

    usage = {"input_tokens": 100, "output_tokens": 5}
    lines = [entry("user", "u1", None, "show me the config"),
             entry("assistant", "a1", "u1", [{"type": "tool_use", "id": "t1", "name": "Bash",
                                              "input": {"command": "cat .env"}}], id="m1", model="m", usage=usage)]
    parent = "a1"
    for n in range(2, 6):  # enough old results that snip and clear touch them, the leaky one first
        lines.append(entry("user", f"u{n}", parent, [{"type": "tool_result", "tool_use_id": f"t{n - 1}",
                                                      "content": LEAKY + "x" * 3000}]))
        lines.append(entry("assistant", f"a{n}", f"u{n}", [{"type": "tool_use", "id": f"t{n}", "name": "Bash",
                                                           "input": {"command": f"echo {OUR_KEY}"}}],
                           id=f"m{n}", model="m", usage=usage))
        parent = f"a{n}"
    lines.append(entry("user", "u9", parent, [{"type": "tool_result", "tool_use_id": "t5", "content": OUR_KEY}]))
    path = directory / "leaky.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


@pytest.mark.parametrize("fmt", ["claude-code", "neutral"])
def test_exports_redact_keys(tmp_path, fmt):
    session = _leaky_session(tmp_path)
    out = tmp_path / f"out-{fmt}.jsonl"
    result = cli("compact", str(session), "--strategy", "snip", "--preserve-last-n", "1", "--max-chars", "3000",
                 "--out", str(out), "--format", fmt, "--all")
    assert result.returncode == 0, result.stderr
    written = out.read_text()
    assert_no_secret(written, f"the {fmt} export")
    assert "[REDACTED anthropic key]" in written and "[REDACTED aws key]" in written
    assert_no_secret(result.stdout + result.stderr, "compact's output")
    assert len(load(out).messages) == len(load(session).messages)  # redacted, still whole


def test_report_and_prompt_never_print_a_key(tmp_path):
    session = _leaky_session(tmp_path)
    for args in (("report", str(session)), ("report", str(session), "--messages"),
                 ("report", str(session), "--json"), ("prompt", "--session", str(session), "--text"),
                 ("compact", str(session), "--dry-run", "--all", "--strategy", "clear", "--keep-recent", "0")):
        result = cli(*args)
        assert result.returncode == 0, result.stderr
        assert_no_secret(result.stdout + result.stderr, " ".join(args[:1] + args[2:]))


@pytest.mark.parametrize("json_events", [False, True])
def test_the_agent_never_writes_or_shows_its_key(mock_api, tmp_path, json_events):
    (tmp_path / ".env").write_text(LEAKY)
    data = tmp_path / "data"
    mock_api.add(
        r.tool_calls(("bash", {"command": "env; echo key=$ANTHROPIC_API_KEY token=$ANTHROPIC_AUTH_TOKEN"}),
                     ("read_file", {"path": ".env"}), ("bash", {"command": "cat .env"})),
        r.text(f"I found {OUR_KEY} and {OTHERS['aws']}."))  # a model repeating a key it saw
    env = {**os.environ, "ANTHROPIC_API_KEY": OUR_KEY, "ANTHROPIC_AUTH_TOKEN": OUR_KEY, "HOME": str(tmp_path),
           "XDG_DATA_HOME": str(data), "CONTEXT_INSPECTOR_MEMORY": str(tmp_path / "none.md")}
    session = tmp_path / "s.jsonl"
    result = run([sys.executable, "-m", "inspector", "run", "--prompt", "look around", "--session", str(session),
                  "--cwd", str(tmp_path), "--allow-writes", *(["--json"] if json_events else [])], env=env)
    assert result.returncode == 0, result.stderr
    assert_no_secret(result.stdout + result.stderr, "run's output")
    assert_no_secret(session.read_text(), "the session file")
    for f in tmp_path.rglob("*"):  # logs, caches, anything else the run left behind
        if f.is_file() and f.name != ".env":
            assert_no_secret(f.read_text(errors="replace"), str(f))
    sent = mock_api.message_requests[1].text()
    assert "key= " in sent or "key=\n" in sent  # the shell had no key to print
    assert "ANTHROPIC_API_KEY" not in sent.split("key=")[0]  # nor in `env`
    headers = mock_api.message_requests[0].headers
    assert OUR_KEY in headers.get("x-api-key", "") + headers.get("authorization", "")  # it did reach the API


def test_provider_errors_and_reprs_hide_the_key(mock_api, tmp_path):
    from inspector.core.agent import AgentConfig
    from inspector.core.agent.provider import AnthropicProvider
    from inspector.core.compaction.provider import SummaryError

    provider = AnthropicProvider(OUR_KEY, mock_api.url, max_retries=0)
    config = AgentConfig(provider, tmp_path)
    assert OUR_KEY not in repr(provider) and OUR_KEY not in repr(config)
    mock_api.add(r.invalid_request(f"invalid x-api-key: {OUR_KEY}"))  # a server echoing the key back
    with pytest.raises(SummaryError) as caught:
        provider.summarize("system", [{"role": "user", "content": "hi"}])
    assert OUR_KEY not in str(caught.value) and "invalid x-api-key" in str(caught.value)
