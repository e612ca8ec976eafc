"""Codex 0.171 rollouts written by the real codex against the scripted Responses server (tests/agents/codex_lab.py):
every request the loader finds is one the server answered, with exactly the usage it returned; the session holds
what was sent; the figures follow from the usage. The live test reruns a scenario with the installed binary."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from inspector.core.formats import load
from inspector.core.model import Session
from inspector.core.tokens import account

from agent_checks import triggers_as_written
from conftest import ROOT

sys.path.insert(0, str(ROOT / "tests" / "agents"))
import codex  # noqa: E402
import install  # noqa: E402
import lab  # noqa: E402

SCENARIOS = sorted(codex.SCENARIOS)


def _rollout(name: str) -> Path:
    return codex.rollout(lab.load_fixture("codex", codex.VERSION, name))


def _fixture(name: str) -> tuple[Session, list[dict]]:
    return load(_rollout(name)), lab.load_fixture("codex", codex.VERSION, name).server_log


def _responses(exchanges: list[dict]) -> list[dict]:
    return [e for e in exchanges if e["path"].endswith("/responses")]


def test_every_scenario_has_a_fixture():
    assert SCENARIOS == lab.fixtures("codex", codex.VERSION)


def check_against_server(session: Session, exchanges: list[dict]) -> None:
    """The loader's requests are the server's responses, one for one, with the usage it sent."""
    assert session.warnings == [], session.warnings
    answered = _responses(exchanges)
    assert len(session.requests) == len(answered)
    for request, exchange in zip(session.requests, answered):
        response = exchange["response"]["body"]
        usage = response["usage"]
        assert request.id == response["id"]
        assert request.measured_context == usage["input_tokens"]
        assert request.cache_read == usage["input_tokens_details"]["cached_tokens"]
        assert request.output_tokens == usage["output_tokens"]
        kind = json.loads(exchange["body"]["client_metadata"]["x-codex-turn-metadata"])["request_kind"]
        assert request.kind == ("compaction" if kind == "compaction" else "turn")
        message = session.messages[request.message_index]
        assert message.role == "assistant" and message.response_id == request.id
        # what the response produced is the message it is linked to: its text, calls and reasoning
        produced = response["output"]
        calls = [i["call_id"] for i in produced if i["type"] in ("function_call", "custom_tool_call")]
        assert [b.tool_id for b in message.tool_uses()] == calls
        reasoning = [b for b in message.blocks if b.type == "redacted_thinking"]
        assert len(reasoning) == sum(i["type"] == "reasoning" for i in produced)
        assert sum(b.tokens for b in reasoning) == (usage["output_tokens_details"]["reasoning_tokens"]
                                                    if reasoning else 0)


@pytest.mark.parametrize("name", SCENARIOS)
def test_requests_are_the_servers_responses(name):
    check_against_server(*_fixture(name))


def _input_shape(body: dict) -> list[str]:
    """The kinds of the input items of a request, in order, as the loader keeps them."""
    out = []
    for item in body["input"]:
        kind = item.get("type", "message")
        out.append(item["role"] if kind == "message" else kind)
    return out


def _session_shape(session: Session, start: int, upto: int) -> list[str]:
    out = []
    for m in session.messages[start:upto]:
        if m.role == "system":
            out.append("developer")
        elif m.role == "user" and m.kind != "tool_result":
            out.append("user")
        for b in m.blocks:
            if m.role == "assistant":
                if b.type == "redacted_thinking":
                    out.append("reasoning")
                elif b.type == "tool_use":
                    out.append("custom_tool_call" if b.tool_name == "apply_patch" else "function_call")
                elif b.type == "text":
                    out.append("assistant")
            elif b.type == "tool_result":
                out.append("custom_tool_call_output" if out.count("custom_tool_call") > out.count(
                    "custom_tool_call_output") else "function_call_output")
    return out


@pytest.mark.parametrize("name", SCENARIOS)
def test_the_session_holds_what_each_turn_request_sent(name):
    """Each request's input, but the base-instructions developer message (the session's `system`), is the
    session's context as the request saw it; the instructions sent are those the rollout records (Codex drops a
    sentence about a checklist tool it did not offer)."""
    session, exchanges = _fixture(name)
    for request, exchange in zip(session.requests, _responses(exchanges)):
        if request.kind != "turn":
            continue
        body = exchange["body"]
        first = body["input"][0]
        assert first["role"] == "developer"
        sent = first["content"][0]["text"]
        assert session.system.startswith(sent[:2000]) and abs(len(session.system) - len(sent)) < 400
        assert _input_shape(body)[1:] == _session_shape(session, request.seen_start, request.seen_end)
        outputs = [i["output"] for i in body["input"] if i.get("type") == "function_call_output"]
        results = [b.text for m in session.messages[request.seen_start:request.seen_end] for b in m.tool_results()]
        assert results[:len(outputs)] == outputs or set(outputs) <= set(results)


@pytest.mark.parametrize("name", SCENARIOS)
def test_output_tokens_sum_to_the_total_codex_reports(name):
    session, _ = _fixture(name)
    lines = [json.loads(line) for line in _rollout(name).read_text().splitlines()]
    totals = [o["payload"]["info"]["total_token_usage"] for o in lines
              if o["type"] == "event_msg" and o["payload"].get("type") == "token_count" and o["payload"]["info"]]
    records = [o["payload"]["thread_token_usage"] for o in lines if o["type"] == "token_usage_record"]
    assert sum(r.output_tokens for r in session.requests) == totals[-1]["output_tokens"] == records[-1]["output_tokens"]
    assert sum(r.measured_context for r in session.requests) == totals[-1]["input_tokens"]


@pytest.mark.parametrize("name", SCENARIOS)
def test_current_figure_is_the_last_input_plus_its_output(name):
    """Every scenario ends on the model's answer: the context now is the last request's input plus that answer,
    which the o200k estimate gives within the few tokens of framing an answer takes as input."""
    session, _ = _fixture(name)
    acc = account(session)
    last = session.requests[-1]
    assert last.seen_end == len(session.messages) - 1
    assert abs(acc.current_context - (last.measured_context + last.output_tokens)) <= 8


@pytest.mark.parametrize("name", SCENARIOS)
def test_every_turn_request_is_predicted_and_estimated_closely(name):
    """The usage is the o200k size of what was sent (never scripted), so these are honest figures."""
    acc = account(_fixture(name)[0])
    for f in acc.requests:
        if f.predicted is not None and f.request.kind == "turn":
            assert abs(f.prediction_error_pct) < 0.5, (f.request.line, f.predicted, f.measured)
            assert abs(f.estimation_error_pct) < 1.0, (f.request.line, f.estimated, f.measured)


def test_reasoning_carried_into_later_requests_counts_at_its_stated_size():
    session, exchanges = _fixture("reasoning")
    first, second = session.requests[:2]
    stated = sum(b.tokens for b in session.messages[first.message_index].blocks if b.type == "redacted_thinking")
    usage = _responses(exchanges)[0]["response"]["body"]["usage"]
    assert stated == 400 == usage["output_tokens_details"]["reasoning_tokens"]
    summary = next(b for b in session.messages[first.message_index].blocks if b.type == "thinking")
    assert summary.text == "Thinking about factors" and summary.tokens == 0  # shown, not sent back as text
    acc = account(session, "o200k")
    assert acc.estimated[first.message_index] >= 400


def test_compactions_are_boundaries_with_their_summary_request():
    for name, trigger_requests in (("auto-compact", 1), ("manual-compact", 1)):
        session, _ = _fixture(name)
        [c] = session.compactions
        [summary_request] = [r for r in session.requests if r.kind == "compaction"]
        assert summary_request.seen_start == 0 and summary_request.message_index < c.index
        assert session.messages[c.index:][-1].role == "assistant"
        kinds = [m.kind for m in session.context]
        assert "compact_summary" in kinds
        after = [r for r in session.requests if r.seen_start == session.context_start]
        assert after and all(r.kind == "turn" for r in after)
        acc = account(session)
        fig = next(f for f in acc.requests if f.request is summary_request)
        assert fig.cause and fig.cause.startswith("compaction request")
        assert summary_request not in [f.request for f in acc.worst_predictions(10)]
        assert c.pre_tokens == summary_request.measured_context


def test_a_compaction_is_auto_inside_a_turn_and_manual_as_a_task_of_its_own():
    """The rollout does not say which: `/compact` is a task that only compacts (its summary request's answer is
    its one response item), an auto-compaction runs inside the user's turn."""
    for name, trigger in (("auto-compact", "auto"), ("manual-compact", "manual")):
        session, _ = _fixture(name)
        assert [c.trigger for c in session.compactions] == [trigger], name
    # read as it is written: unknown until its task ends, and a session built before keeps what it said
    from inspector.core.formats.codex import CodexLoader

    lines = _rollout("manual-compact").read_text().splitlines()
    compacted = next(i for i, line in enumerate(lines) if json.loads(line)["type"] == "compacted")
    done = next(i for i, line in enumerate(lines) if i > compacted and '"task_complete"' in line)
    assert triggers_as_written(CodexLoader("live"), lines, done) == ([None], ["manual"], [None])


def test_the_codex_policy_compacts_where_codex_did():
    """With no limit configured, a context that would grow to just below the line went on uncompacted and one just
    past it compacted (the step after the big output adds the same in both runs); with the lab's limit of 12,000
    in the Codex home's config.toml, the line is that limit, and the what-if replay fires where Codex did."""
    from inspector.core.compaction.replay import replay
    from inspector.core.limits import window_info

    below, _ = _fixture("default-limit-below")
    above, _ = _fixture("default-limit-above")
    assert below.compactions == [] and [c.trigger for c in above.compactions] == ["auto"]
    step = below.requests[2].measured_context - below.requests[1].measured_context
    line = window_info(below).thresholds.autocompact
    assert window_info(above).thresholds.autocompact == line
    assert below.requests[1].measured_context + step < line <= above.requests[1].measured_context + step
    limited, _ = _fixture("auto-compact")
    assert limited.compaction_settings == {"auto_compact_limit": 12_000}
    info = window_info(limited)
    assert info.thresholds.autocompact == 12_000 and "auto_compact_limit 12000" in " ".join(info.notes)
    what_if = replay(limited, info.thresholds.autocompact, estimates=account(limited).estimated)
    assert len(what_if.fires) == len(limited.compactions) == 1


def test_resumed_session_is_one_rollout_with_three_turns():
    session, _ = _fixture("resume")
    assert [m.kind for m in session.messages].count("prompt") == 3
    assert len(session.requests) == 5 and session.compactions == []


@pytest.mark.live
@pytest.mark.skipif(install.binary("codex") is None,
                    reason=f"codex {codex.VERSION} is not installed (python tests/agents/install.py codex installs it "
                           "from npm)")
def test_live_codex_writes_what_the_server_received(tmp_path):
    """The real binary, now: a scenario rerun gives a rollout the loader reads exactly against the server's log."""
    scratch = lab.Scratch.fresh("codex", "parallel-tools", base=tmp_path)
    capture = codex.SCENARIOS["parallel-tools"].run(scratch, install.binary("codex"))
    [rollout] = codex.rollouts(scratch.home)
    check_against_server(load(rollout), capture.server_log)
    written = rollout.read_text() + json.dumps(capture.server_log)
    assert lab.find_secrets([("capture", written)]) == []  # the fake key reaches neither the rollout nor the log


@pytest.mark.parametrize("trust", ["trusted", "untrusted"])
def test_a_trusted_projects_own_config_sets_the_limit(tmp_path, trust):
    """project-limit-*: the project's .codex/config.toml sets 12,000 and the home's config.toml none. Codex took it
    where the home's config trusts the project (and compacted), and ignored it where not (and went on): the policy
    reads it the same way. The fixture is copied to where its project can be found (the rollout's cwd is the lab's)."""
    from dataclasses import replace

    from inspector.core.compaction.replay import replay
    from inspector.core.formats.codex import codex_settings
    from inspector.core.limits import window_info

    name = f"project-limit-{trust}"
    fixture = lab.load_fixture("codex", codex.VERSION, name)
    session = load(_rollout(name))
    for part in ("home", "work"):
        shutil.copytree(fixture.root / part, tmp_path / part)
    home_config = tmp_path / "home" / ".codex" / "config.toml"
    home_config.write_text(home_config.read_text().replace(session.cwd, str(tmp_path / "work")))
    settings = codex_settings(tmp_path / _rollout(name).relative_to(fixture.root), str(tmp_path / "work"))
    assert settings == ({"auto_compact_limit": 12_000} if trust == "trusted" else {})
    assert [c.trigger for c in session.compactions] == (["auto"] if trust == "trusted" else [])
    info = window_info(replace(session, compaction_settings=settings))
    fires = replay(session, info.thresholds.autocompact, estimates=account(session).estimated).fires
    assert len(fires) == len(session.compactions)


def test_codex_config_layers_stack_as_codex_stacks_them(tmp_path, monkeypatch):
    """/etc/codex, then the home's, then a trusted project's from its git root down to the directory: the last
    that sets the limit wins; an untrusted project's are not read."""
    from inspector.core.formats import codex as codex_format

    system = tmp_path / "etc" / "config.toml"
    monkeypatch.setattr(codex_format, "SYSTEM_CONFIG", system)
    home = tmp_path / "home" / ".codex"
    rollout = home / "sessions" / "2026" / "12" / "03" / "rollout.jsonl"
    repo = tmp_path / "repo"
    cwd = repo / "pkg"
    (repo / ".git").mkdir(parents=True)
    (cwd / ".codex").mkdir(parents=True)
    (repo / ".codex").mkdir()
    home.mkdir(parents=True)

    def limit() -> int | None:
        return codex_format.codex_settings(rollout, str(cwd)).get("auto_compact_limit")

    system.parent.mkdir()
    system.write_text("model_auto_compact_token_limit = 50000\n")
    assert limit() == 50_000
    (home / "config.toml").write_text("model_auto_compact_token_limit = 40000\n")
    assert limit() == 40_000
    (repo / ".codex" / "config.toml").write_text("model_auto_compact_token_limit = 30000\n")
    (cwd / ".codex" / "config.toml").write_text("model_auto_compact_token_limit = 20000\n")
    assert limit() == 40_000  # not trusted
    (home / "config.toml").write_text(f'model_auto_compact_token_limit = 40000\n[projects."{repo}"]\n'
                                      'trust_level = "trusted"\n')
    assert limit() == 20_000
    (cwd / ".codex" / "config.toml").write_text("model_auto_compact_token_limit = 0\n")  # no limit: not taken
    assert limit() == 30_000
