"""Thinking signatures survive every round trip: the stream, the agent's session file, a resume, the loaders, exports.

With extended thinking on, the API takes earlier thinking blocks back only verbatim with their signature, and the
assistant message before tool results must start with one. The local Messages-API server (tests/mock_api) checks
both as the API does, against the signatures it issued, so a block that lost its signature fails the request.
"""

import json
import threading
from pathlib import Path

import anthropic
import pytest

from inspector.core.agent import AgentConfig, run
from inspector.core.agent.events import Error, TextDelta, TurnDone
from inspector.core.agent.provider import AnthropicProvider, api_messages
from inspector.core.agent.writer import SessionWriter, open_session
from inspector.core.export import export_session
from inspector.core.formats import load
from inspector.core.formats.blocks import block_from_dict
from inspector.core.formats.neutral import message_to_dict
from inspector.core.model import Block, Message
from mock_api import MOCK_KEY, responses as r

SYSTEM = "You are a test agent."
CORPUS = Path(__file__).parent / "corpus"
SIGNATURE = "EuYBCkQYAiJA" + "x" * 300  # the API's signatures are long base64 strings
REDACTED = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"


def thinking_turn(redacted: bool = True) -> r.Reply:
    blocks = [r.thinking_block("Look at the files first.", SIGNATURE)]
    blocks += [{"type": "redacted_thinking", "data": REDACTED}] if redacted else []
    return r.Reply(blocks + [r.tool_use_block("glob", {"pattern": "*.txt"}, id="toolu_glob")], stop_reason="tool_use")


def config_for(server, cwd, **kw) -> AgentConfig:
    return AgentConfig(AnthropicProvider(MOCK_KEY, server.url, max_retries=0), cwd, thinking_budget=2048, **kw)


def run_saved(server, path: Path, prompt: str) -> list:
    """One turn as `context-inspector run --session path` does it: open (or resume) the file, write as it goes."""
    config = config_for(server, path.parent)
    state, previous = open_session(path, config.new_session(SYSTEM, str(path)))
    with SessionWriter(path, state, previous) as writer:
        return list(writer.tee(run(prompt, state, config, SYSTEM)))


def test_a_resumed_tool_loop_sends_the_thinking_back_signed(mock_api, tmp_path):
    """The turn stops after the tool results were saved (the next call fails); a new process resumes from the file.
    The API reads the results and the new prompt as one user turn answering the tool call, so the assistant
    message before it must start with its thinking block, signature and all: dropped, the request is refused."""
    (tmp_path / "notes.txt").write_text("alpha\n")
    path = tmp_path / "session.jsonl"
    mock_api.add(thinking_turn(), r.invalid_request("scripted failure after the tool ran"))
    first = run_saved(mock_api, path, "what is here?")
    assert [e.error_type for e in first if isinstance(e, Error)] == ["invalid_request_error"]

    saved = [json.loads(line) for line in path.read_text().splitlines()]
    assistant = next(x for x in saved if x.get("role") == "assistant")
    assert assistant["content"][:2] == [
        {"type": "thinking", "thinking": "Look at the files first.", "signature": SIGNATURE},
        {"type": "redacted_thinking", "data": REDACTED}]

    mock_api.add(r.text("One text file."))
    second = run_saved(mock_api, path, "go on")  # a fresh config and provider: only the file carries the state
    assert not [e for e in second if isinstance(e, Error)], [e for e in second if isinstance(e, Error)]
    assert isinstance(second[-1], TurnDone) and second[-1].stop_reason == "end_turn"
    resumed = mock_api.message_requests[-1]
    assert resumed.body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert [m["role"] for m in resumed.messages] == ["user", "assistant", "user", "user"]
    assert resumed.messages[1]["content"] == assistant["content"]  # verbatim: thinking, redacted, tool call
    reloaded = load(path)
    assert not reloaded.warnings
    assert reloaded.messages[1].blocks[0].signature == SIGNATURE


def test_without_the_signature_the_server_refuses_the_resumed_request(mock_api, tmp_path):
    """The check the test above passes is real: the same history with the thinking block unsigned (as files
    written before signatures were kept hold it) is refused as the API refuses it, with no retry."""
    (tmp_path / "notes.txt").write_text("alpha\n")
    path = tmp_path / "session.jsonl"
    mock_api.add(thinking_turn(redacted=False), r.invalid_request("scripted failure"))
    run_saved(mock_api, path, "what is here?")
    text = path.read_text().replace(SIGNATURE, "")
    path.write_text(text)
    mock_api.add(r.text("never sent"))
    events = run_saved(mock_api, path, "go on")
    errors = [e for e in events if isinstance(e, Error)]
    assert len(errors) == 1 and errors[0].status == 400
    assert "must start with a thinking block" in errors[0].message
    assert mock_api.pending == 1  # refused before an answer was taken


def test_mock_server_checks_signatures_against_what_it_issued(mock_api):
    client = mock_api.client(max_retries=0)
    mock_api.add(r.Reply([r.thinking_block("hmm", "sig-1"), r.text_block("hello")]))
    answer = client.messages.create(model="m", max_tokens=10, messages=[{"role": "user", "content": "hi"}],
                                    thinking={"type": "enabled", "budget_tokens": 1024})
    assert answer.content[0].signature == "sig-1"

    def ask(thinking_block: dict) -> None:
        mock_api.add(r.text("ok"))
        client.messages.create(model="m", max_tokens=10, thinking={"type": "enabled", "budget_tokens": 1024},
                               messages=[{"role": "user", "content": "hi"},
                                         {"role": "assistant", "content": [thinking_block,
                                                                           {"type": "text", "text": "hello"}]},
                                         {"role": "user", "content": "again"}])

    ask({"type": "thinking", "thinking": "hmm", "signature": "sig-1"})  # as issued: accepted
    with pytest.raises(anthropic.BadRequestError, match="Invalid `signature`"):
        ask({"type": "thinking", "thinking": "hmm, edited", "signature": "sig-1"})
    with pytest.raises(anthropic.BadRequestError, match="Invalid `data`"):
        ask({"type": "redacted_thinking", "data": "never sent"})


def test_cancelled_stream_keeps_the_thinking_that_arrived_signed(mock_api, tmp_path):
    """Cancelled after the thinking block ended (its signature arrived) and some text: both stay in history, and
    the next turn sends the thinking back as it was signed."""
    gate = threading.Event()
    # deltas: one thinking chunk, the signature, then text: pause after the first text chunk
    mock_api.add(r.Reply([r.thinking_block("Short thought.", "sig-cut"), r.text_block("The first part. The rest.")],
                         gate=gate, gate_after=3))
    config = config_for(mock_api, tmp_path)
    state = config.new_session(SYSTEM)
    try:
        for event in run("hi", state, config, SYSTEM):
            if isinstance(event, TextDelta):
                config.cancel.cancel()
    finally:
        gate.set()
    blocks = state.messages[-1].blocks
    assert [(b.type, b.signature) for b in blocks] == [("thinking", "sig-cut"), ("text", None)]
    assert blocks[1].text == "The first part. "
    mock_api.add(r.text("next"))
    assert list(run("again", state, config, SYSTEM))[-1].stop_reason == "end_turn"
    assert mock_api.message_requests[-1].messages[1]["content"][0] == {
        "type": "thinking", "thinking": "Short thought.", "signature": "sig-cut"}


def test_cancelled_before_the_signature_drops_the_thinking(mock_api, tmp_path):
    gate = threading.Event()
    mock_api.add(r.Reply([r.thinking_block("A long thought that is cut short.", "sig-never"),
                          r.text_block("never")], gate=gate))
    config = config_for(mock_api, tmp_path)
    state = config.new_session(SYSTEM)
    try:
        for event in run("hi", state, config, SYSTEM):
            if event.kind == "thinking":
                config.cancel.cancel()
    finally:
        gate.set()
    assert [m.role for m in state.messages] == ["user"]  # nothing whole arrived: no assistant message


# --- loaders and exports --------------------------------------------------------------------------------------

def test_claude_code_transcript_keeps_its_signatures():
    """A real transcript: the thinking block's signature as Claude Code recorded it (440 characters)."""
    session = load(CORPUS / "claude-code-short.jsonl")
    thinking = [b for m in session.messages for b in m.blocks if b.type == "thinking"]
    assert len(thinking) == 1
    assert thinking[0].signature.startswith("EsMCCkYICxgCKkDuNR00D0SPshrOAOM1rE2RNrkH")
    assert len(thinking[0].signature) == 440
    sent = api_messages(session.messages)
    assert any(b.get("signature") == thinking[0].signature for m in sent for b in m["content"])


@pytest.mark.parametrize("fmt", ["neutral", "claude-code"])
def test_exports_carry_signatures(tmp_path, fmt):
    session = load(CORPUS / "claude-code-short.jsonl")
    out = export_session(session, tmp_path / f"out-{fmt}.jsonl", fmt)
    again = load(out)
    assert again.format == fmt

    def signatures(s):
        return [b.signature for m in s.messages for b in m.blocks if b.type == "thinking"]

    assert signatures(again) == signatures(session) and signatures(again)[0]


def test_claude_code_session_continued_in_an_agent_file_keeps_signatures(tmp_path):
    """The app's 'continue this Claude Code session': the agent file starts with the whole session."""
    session = load(CORPUS / "claude-code-short.jsonl")
    path = tmp_path / "continued.jsonl"
    SessionWriter(path, session).close()
    signatures = [b.signature for m in load(path).messages for b in m.blocks if b.type == "thinking"]
    assert signatures == [b.signature for m in session.messages for b in m.blocks if b.type == "thinking"]
    assert signatures[0] and len(signatures[0]) == 440


def test_neutral_lines_round_trip_and_an_empty_signature_is_none():
    message = Message("assistant", "assistant", [Block.of("thinking", "t", signature="s"),
                                                 Block("redacted_thinking", "opaque"), Block("text", "x")])
    line = message_to_dict(message)
    assert line["content"][:2] == [{"type": "thinking", "thinking": "t", "signature": "s"},
                                   {"type": "redacted_thinking", "data": "opaque"}]
    assert [b.signature for b in map(block_from_dict, line["content"])] == ["s", None, None]
    unsigned = block_from_dict({"type": "thinking", "thinking": "t", "signature": ""})
    assert unsigned.signature is None and unsigned.to_api()["signature"] == ""
    assert block_from_dict({"type": "thinking", "thinking": "t", "signature": 7}).signature is None


@pytest.mark.parametrize("name", ["chars35", "blocks"])
def test_a_signature_is_not_counted_as_context(name):
    """The model never reads the signature: keeping it changes no estimate."""
    from inspector.core.estimators import get_estimator

    estimator = get_estimator(name)
    signed = Message("assistant", "assistant", [Block.of("thinking", "some thought", signature=SIGNATURE)])
    unsigned = Message("assistant", "assistant", [Block("thinking", "some thought")])
    assert estimator.message(signed) == estimator.message(unsigned) > 0
