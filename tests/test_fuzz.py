"""Fuzzing: every loader, and every compaction plan on what the loaders make of hostile files.

Inputs are shaped like each format (right keys, values of the right type or of any other JSON type) so the fuzzer
gets past format detection into the loaders' corners, plus byte-level damage to real transcripts. Whatever comes
in, `load` returns a Session or raises the one-line LoadError; the report, the token accounting, every strategy's
plan, its rendering, applying it and exporting the result then work on that Session without an exception, and a
plan never breaks the tool_use/tool_result pairing the API demands.

The CI budget is small (INSPECTOR_FUZZ_EXAMPLES, default 40 per test); docs/fuzzing.md gives the longer run.
"""

from __future__ import annotations

import json
import os
import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import CORPUS
from inspector.core.compaction import apply, find_orphans, plan_strategy, render_plan
from inspector.core.figures import plan_figures
from inspector.core.compaction.pipeline import STRATEGIES
from inspector.core.export import export_session
from inspector.core.formats import load
from inspector.core.limits import window_info
from inspector.core.model import LoadError, Session
from inspector.core.report import report_dict, report_text
from inspector.core.token_report import add_token_keys
from inspector.core.tokens import account

EXAMPLES = int(os.environ.get("INSPECTOR_FUZZ_EXAMPLES", "40"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=EXAMPLES <= 40,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])

# -- values ---------------------------------------------------------------------------------------------------------

TEXT = st.text(alphabet=st.characters(codec="utf-8") | st.sampled_from("\x1b[]{}\"\\\n\t\x00\ud800\u202e\u2066\u200b"),
               max_size=40)
SCALAR = st.none() | st.booleans() | st.integers(-2**63, 2**64) | st.floats(allow_nan=False) | TEXT
ANY = st.recursive(SCALAR, lambda c: st.lists(c, max_size=4) | st.dictionaries(TEXT, c, max_size=4), max_leaves=8)
IDS = st.sampled_from(["u1", "u2", "a1", "a2", "toolu_1", "toolu_2", "c1", "c2", "", "missing"])
COUNT = st.integers(-5, 300_000)


def sometimes(good: st.SearchStrategy) -> st.SearchStrategy:
    """Mostly the well-typed value, sometimes any JSON value at all."""
    return st.one_of(good, good, good, ANY)


def shaped(required: dict, optional: dict | None = None) -> st.SearchStrategy:
    """A dict with the keys a format uses, each value `sometimes` well-typed, optional keys sometimes absent."""
    return st.fixed_dictionaries({k: sometimes(v) for k, v in required.items()},
                                 optional={k: sometimes(v) for k, v in (optional or {}).items()})


# -- Messages-API content (Claude Code, Anthropic requests, neutral) -------------------------------------------------

BLOCK = st.one_of(
    shaped({"type": st.just("text"), "text": TEXT}),
    shaped({"type": st.just("thinking"), "thinking": TEXT}, {"signature": TEXT}),
    shaped({"type": st.just("redacted_thinking"), "data": TEXT}),
    shaped({"type": st.just("tool_use"), "id": IDS, "name": st.sampled_from(["Read", "Bash", "Edit", "x"]),
            "input": ANY}),
    shaped({"type": st.just("tool_result"), "tool_use_id": IDS},
           {"content": TEXT | st.lists(shaped({"type": st.just("text"), "text": TEXT}), max_size=2),
            "is_error": st.booleans()}),
    shaped({"type": st.sampled_from(["image", "document"]),
            "source": shaped({"type": st.sampled_from(["base64", "text", "url"]), "data": TEXT,
                              "media_type": TEXT})}),
    shaped({"type": TEXT}),
)
CONTENT = TEXT | st.lists(BLOCK, max_size=4)
USAGE = shaped({"input_tokens": COUNT, "output_tokens": COUNT},
               {"cache_creation_input_tokens": COUNT, "cache_read_input_tokens": COUNT, "id": IDS})


# -- one line of each format ----------------------------------------------------------------------------------------

CLAUDE_LINE = shaped(
    {"type": st.sampled_from(["user", "assistant", "system", "progress", "summary", "file-history-snapshot",
                              "attachment", "future-type"]),
     "uuid": IDS, "parentUuid": st.none() | IDS},
    {"sessionId": st.just("s1"), "isSidechain": st.booleans(), "cwd": TEXT, "timestamp": TEXT, "version": TEXT,
     "isMeta": st.booleans(), "isCompactSummary": st.booleans(), "logicalParentUuid": IDS,
     "subtype": st.sampled_from(["compact_boundary", "microcompact_boundary", "other"]),
     "compactMetadata": shaped({"trigger": TEXT, "preTokens": COUNT}),
     "microcompactMetadata": shaped({"preTokens": COUNT, "tokensSaved": COUNT,
                                     "compactedToolIds": st.lists(IDS, max_size=3)}),
     "message": shaped({"role": st.sampled_from(["user", "assistant"]), "content": CONTENT},
                       {"id": st.sampled_from(["msg_1", "msg_2", "msg_3"]), "model": TEXT, "usage": USAGE})})

CODEX_PAYLOAD = st.one_of(
    shaped({"type": st.just("message"), "role": st.sampled_from(["user", "assistant", "developer"]),
            "content": st.lists(shaped({"type": st.sampled_from(["input_text", "output_text", "input_image"]),
                                        "text": TEXT}, {"image_url": TEXT}), max_size=3)}),
    shaped({"type": st.just("function_call"), "name": TEXT, "call_id": IDS,
            "arguments": TEXT | ANY.map(json.dumps)}),
    shaped({"type": st.just("function_call_output"), "call_id": IDS, "output": TEXT | ANY}),
    shaped({"type": st.sampled_from(["reasoning", "custom_tool_call", "web_search_call", "ghost_snapshot"])},
           {"summary": ANY, "encrypted_content": TEXT, "input": TEXT, "name": TEXT, "call_id": IDS}),
    shaped({"type": st.just("token_count")},
           {"info": shaped({"last_token_usage": shaped({"input_tokens": COUNT, "cached_input_tokens": COUNT,
                                                          "output_tokens": COUNT, "total_tokens": COUNT}),
                            "total_token_usage": ANY, "model_context_window": COUNT})}),
    shaped({"type": st.sampled_from(["user_message", "agent_message", "context_compacted", "future_event"]),
            "message": TEXT}),
    shaped({"id": TEXT, "cwd": TEXT, "instructions": TEXT, "model": TEXT}),
)
CODEX_LINE = shaped({"type": st.sampled_from(["session_meta", "response_item", "event_msg", "turn_context",
                                              "compacted", "future"]), "payload": CODEX_PAYLOAD},
                    {"timestamp": TEXT})

TOOL_CALL = shaped({"id": IDS, "name": TEXT, "input": ANY}) | shaped(
    {"id": IDS, "type": st.just("function"), "function": shaped({"name": TEXT, "arguments": TEXT | ANY.map(json.dumps)})})
NEUTRAL_MESSAGE = shaped({"role": st.sampled_from(["user", "assistant", "tool", "system"]), "content": CONTENT},
                         {"tool_calls": st.lists(TOOL_CALL, max_size=3), "tool_call_id": IDS, "usage": USAGE,
                          "model": TEXT, "kind": TEXT, "timestamp": TEXT})
NEUTRAL_EVENT = shaped({"event": st.sampled_from(["session", "compaction", "future"])},
                       {"kind": st.sampled_from(["compact", "microcompact", "x"]), "trigger": TEXT,
                        "strategy": TEXT, "pre_tokens": COUNT, "tokens_saved": COUNT,
                        "replacements": st.dictionaries(IDS, TEXT, max_size=3), "cwd": TEXT, "model": TEXT,
                        "system": TEXT, "tools": st.lists(ANY, max_size=2), "version": ANY})

OPENAI_MESSAGE = shaped({"role": st.sampled_from(["system", "user", "assistant", "tool"]), "content": TEXT | ANY},
                        {"tool_calls": st.lists(TOOL_CALL, max_size=2), "tool_call_id": IDS, "name": TEXT})
ANTHROPIC_REQUEST = shaped({"messages": st.lists(shaped({"role": st.sampled_from(["user", "assistant"]),
                                                         "content": CONTENT}), max_size=6)},
                           {"model": TEXT, "system": TEXT | st.lists(shaped({"type": st.just("text"), "text": TEXT}),
                                                                      max_size=2),
                            "tools": st.lists(shaped({"name": TEXT, "input_schema": ANY}, {"description": TEXT}),
                                              max_size=2),
                            "max_tokens": COUNT, "thinking": ANY, "response": shaped({"usage": USAGE}, {"id": IDS})})

# -- files ----------------------------------------------------------------------------------------------------------


def jsonl(lines: list) -> bytes:
    return b"".join(json.dumps(x).encode("utf-8", "surrogatepass") + b"\n" for x in lines)


def check_pipeline(path: Path) -> Session | None:
    """Load `path` and put the result through everything downstream; any exception but LoadError fails."""
    try:
        session = load(path)
    except LoadError as exc:
        assert "\n" not in str(exc) and str(path) in str(exc)
        return None
    acc = account(session)
    info = window_info(session, "claude-code", None)
    json.dumps(add_token_keys(report_dict(session), acc, info), ensure_ascii=True)
    report_text(session).encode("utf-8")
    for strategy in STRATEGIES:
        plan = plan_strategy(strategy, session)
        figures = plan_figures(acc, plan)  # the figures of the state it makes, followed from the accounting
        "\n".join(render_plan(plan, figures.rows, figures.totals(), True)).encode("utf-8")
        new = apply(plan, summary="a summary") if plan.summary is not None else apply(plan)
        if not find_orphans(session.context):  # a plan never breaks pairing that was intact
            assert not find_orphans(new.context), (strategy, find_orphans(new.context))
        export_session(new, path.with_suffix(f".{strategy}.out"))
    return session


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


@FUZZ
@given(st.lists(CLAUDE_LINE, min_size=1, max_size=12))
def test_claude_code_lines(work, lines):
    path = work / "claude.jsonl"
    path.write_bytes(jsonl([{**x, "sessionId": "s1"} if isinstance(x, dict) else x for x in lines]))
    check_pipeline(path)


@FUZZ
@given(st.lists(CODEX_LINE, min_size=1, max_size=12))
def test_codex_lines(work, lines):
    path = work / "codex.jsonl"
    path.write_bytes(jsonl(lines))
    check_pipeline(path)


@FUZZ
@given(st.lists(NEUTRAL_MESSAGE | NEUTRAL_EVENT, min_size=1, max_size=12), st.booleans())
def test_neutral(work, lines, as_document):
    path = work / "neutral.jsonl"
    path.write_bytes(json.dumps(lines).encode("utf-8", "surrogatepass") if as_document else jsonl(lines))
    check_pipeline(path)


@FUZZ
@given(st.lists(OPENAI_MESSAGE, min_size=1, max_size=8), st.booleans())
def test_openai_chat(work, messages, bare_list):
    path = work / "openai.json"
    path.write_bytes(json.dumps(messages if bare_list else {"messages": messages}).encode("utf-8", "surrogatepass"))
    check_pipeline(path)


@FUZZ
@given(st.lists(ANTHROPIC_REQUEST, min_size=1, max_size=3), st.booleans())
def test_anthropic_requests(work, requests, one_document):
    path = work / "anthropic.json"
    data = json.dumps(requests[0]).encode("utf-8", "surrogatepass") if one_document else jsonl(requests)
    path.write_bytes(data)
    check_pipeline(path)


REAL = [line + b"\n" for line in (CORPUS / "claude-code-short.jsonl").read_bytes().splitlines()]
CODEX = [line + b"\n" for line in (Path(__file__).parent / "fixtures" / "formats" / "codex-rollout.jsonl")
         .read_bytes().splitlines()]
BYTES = st.binary(max_size=12) | st.sampled_from([b"\x00", b"\xff\xfe", b"\\ud800", b"[" * 2000, b"\n", b"\r\n",
                                                  b'"', b"}", b"{", string.printable.encode()])


@FUZZ
@given(st.sampled_from([REAL, CODEX]), st.data())
def test_damaged_real_transcripts(work, source, data):
    """Real lines, some cut, spliced, duplicated, reordered or with bytes dropped in: the damage a crash, a bad
    copy or a concurrent writer does."""
    picked = data.draw(st.lists(st.integers(0, len(source) - 1), min_size=1, max_size=25))
    lines = [source[i] for i in picked]
    for _ in range(data.draw(st.integers(0, 4))):
        k = data.draw(st.integers(0, len(lines) - 1))
        at = data.draw(st.integers(0, len(lines[k])))
        how = data.draw(st.sampled_from(["cut", "insert", "replace"]))
        junk = data.draw(BYTES)
        if how == "cut":
            lines[k] = lines[k][:at]
        elif how == "insert":
            lines[k] = lines[k][:at] + junk + lines[k][at:]
        else:
            lines[k] = lines[k][:at] + junk + lines[k][at + len(junk):]
    path = work / "damaged.jsonl"
    path.write_bytes(b"".join(lines))
    check_pipeline(path)


def test_the_fuzzers_reach_the_loaders(work):
    """The shaped inputs really are read as their formats (not all refused by detection): a guard against a
    fuzzer that silently tests nothing."""
    samples = {
        "claude-code": jsonl([{"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": "s1",
                               "message": {"role": "user", "content": "hi"}}]),
        "codex": jsonl([{"type": "response_item", "payload": {"type": "message", "role": "user",
                                                               "content": [{"type": "input_text", "text": "hi"}]}}]),
        "neutral": jsonl([{"role": "user", "content": "hi"}]),
        "openai-chat": json.dumps({"messages": [{"role": "system", "content": "be brief"}]}).encode(),
        "anthropic-request": json.dumps({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 10}).encode(),
    }
    for fmt, data in samples.items():
        path = work / f"reach-{fmt}.json"
        path.write_bytes(data)
        session = check_pipeline(path)
        assert session is not None and session.format == fmt
