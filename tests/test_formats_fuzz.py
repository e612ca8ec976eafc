"""Any JSON line at all, fed to any loader, becomes a warning or a skip, never an exception: files are written by
other programs (and other versions of them), so every field may hold any JSON type."""

import json

from hypothesis import example, given, settings, strategies as st

from inspector.core.formats.claude_code import ClaudeCodeLoader
from inspector.core.formats.codex import CodexLoader
from inspector.core.formats.conversations import ConversationLoader
from inspector.core.formats.detect import classify_document, classify_line
from inspector.core.formats.gemini import GeminiLoader
from inspector.core.formats.neutral import NeutralLoader
from inspector.core.formats.copilot import CopilotLoader
from inspector.core.formats.kimi import KimiLoader
from inspector.core.formats.kimi_code import KimiCodeLoader
from inspector.core.formats import load
from inspector.core.model import LoadError
from inspector.core.formats.opencode import Row, Rows, load_rows
from inspector.core.formats.qwen import QwenLoader

scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 10**6), st.text(max_size=8))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(st.text(max_size=6), inner, max_size=3)),
                      max_leaves=8)
KEYS = ["type", "uuid", "parentUuid", "logicalParentUuid", "isSidechain", "message", "content", "role", "id",
        "model", "usage", "subtype", "compactMetadata", "microcompactMetadata", "payload", "event", "kind",
        "tool_calls", "tool_call_id", "messages", "request", "response", "system", "tools", "info", "summary",
        "replacement_history", "arguments", "output", "input", "name", "call_id", "text", "isCompactSummary",
        "data", "parentId", "token_count", "toolRequests", "apiCallId", "transformedContent", "success",
        "summaryContent", "metrics", "metadata", "isSummary", "condenseId", "truncationParent", "say", "ts",
        "conversationHistoryIndex", "conversationHistoryDeletedRange", "sessionId", "version", "agent",
        "$set", "$rewindTo", "projectHash", "toolCalls", "thoughts", "tokens", "parts", "functionCall",
        "functionResponse", "usageMetadata", "systemPayload", "compressedHistory", "provenance",
        "contextWindowSize", "result", "args", "thought", "agentId", "part", "toolCallId", "systemPrompt",
        "compactedCount", "keptUserMessageCount", "contextSummary", "count", "origin", "usageScope", "source",
        "subagentId", "parentToolCallId", "messageId", "protocol_version", "created_at", "note", "isError",
        "ownerPromptId"]
TYPES = ["user", "assistant", "system", "progress", "compact_boundary", "microcompact_boundary", "response_item",
         "event_msg", "session_meta", "turn_context", "compacted", "token_count", "message", "reasoning",
         "function_call", "function_call_output", "tool_use", "tool_result", "text", "image", "session",
         "compaction", "session.start", "user.message", "assistant.message", "tool.execution_complete",
         "session.usage_record", "session.compaction_start", "session.compaction_complete", "session.truncation",
         "system.message", "_usage", "_system_prompt", "_checkpoint", "tool", "say", "api_req_started",
         "gemini", "info", "chat_compression", "slash_command", "mid_turn_user_message", "realtime_message",
         "step-start", "step-finish", "file", "context.append_message", "context.append_loop_event",
         "context.apply_compaction", "context.clear", "context.undo", "step.begin", "step.end", "content.part",
         "tool.call", "tool.result", "llm.request", "usage.record", "full_compaction.begin", "profile.bind",
         "llm.tools_snapshot", "subagent.spawned", "think", "injection"]
keyed = st.dictionaries(st.sampled_from(KEYS), st.one_of(values, st.sampled_from(TYPES)), max_size=8)
# objects shaped like real lines, with any value where a field should be
lines = st.one_of(values, keyed, st.builds(lambda top, inner: {**top, "message": inner, "payload": inner,
                                                               "event": inner}, keyed, keyed))


def loaders():
    return [ClaudeCodeLoader("fuzz"), CodexLoader("fuzz"), NeutralLoader("fuzz"),
            ConversationLoader("fuzz", "anthropic-request"), ConversationLoader("fuzz", "openai-chat"),
            CopilotLoader("fuzz"), KimiLoader("fuzz"), KimiCodeLoader("fuzz"),
            GeminiLoader("fuzz"), QwenLoader("fuzz")]


@settings(max_examples=150, deadline=None)
@given(st.lists(lines, min_size=1, max_size=6))
def test_any_json_lines_load_without_an_exception(objs):
    for obj in objs:
        obj = json.loads(json.dumps(obj))  # only what a JSON file can hold
        classify_line(obj)
        classify_document(obj)
    for loader in loaders():
        for n, obj in enumerate(objs, 1):
            loader.feed(n, n * 10, json.loads(json.dumps(obj)))
        session = loader.build()
        for m in session.messages:
            m.text()
            m.to_api()


@settings(max_examples=60, deadline=None)
@given(st.lists(lines, max_size=6), st.lists(lines, max_size=6), lines)
def test_any_json_as_a_task_folder_or_sdk_file_loads_or_says_why(tmp_path_factory, history, ui, extra):
    """The one-document formats (Cline / Roo task folders, the Cline SDK file): any JSON in any of their files is
    loaded with warnings or refused with a LoadError, never an exception."""
    folder = tmp_path_factory.mktemp("task")
    (folder / "api_conversation_history.json").write_text(json.dumps(history))
    (folder / "ui_messages.json").write_text(json.dumps(ui))
    (folder / "context_history.json").write_text(json.dumps(extra))
    sdk = folder / "x.messages.json"
    sdk.write_text(json.dumps({"version": 1, "sessionId": "x", "agent": "lead", "messages": history,
                               "system_prompt": extra}))
    for path in (folder, sdk):
        try:
            session = load(path)
        except LoadError:
            continue
        for m in session.messages:
            m.text()
            m.to_api()


def test_gemini_and_qwen_see_their_own_shapes_with_any_values():
    """The shapes those loaders branch on, each field any JSON value (a `$set` of messages, records with ids,
    uuid chains with compression records)."""
    @settings(max_examples=150, deadline=None)
    @given(st.lists(st.one_of(
        st.builds(lambda v: {"$set": {"messages": v}}, st.lists(keyed, max_size=3)),
        st.builds(lambda v, i: {**v, "id": i}, keyed, st.sampled_from(["a", "b", "c"])),
        st.builds(lambda v, u, p: {**v, "uuid": u, "parentUuid": p}, keyed, st.sampled_from(["a", "b", "c"]),
                  st.sampled_from([None, "a", "b", "c", "z"])),
        st.builds(lambda v: {"$rewindTo": v}, st.sampled_from(["a", "b", "zz"]))), min_size=1, max_size=8))
    def run(objs):
        for loader in (GeminiLoader("fuzz"), QwenLoader("fuzz")):
            for n, obj in enumerate(objs, 1):
                loader.feed(n, n * 10, json.loads(json.dumps(obj)))
            for m in loader.build().messages:
                m.text()
                m.to_api()
    run()


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(keyed, st.lists(keyed, max_size=4)), min_size=1, max_size=5), keyed)
def test_opencode_rows_of_any_shape_load(messages, session):
    """opencode's message and part rows hold any JSON in `data` (another version wrote them)."""
    rows = [Row(f"msg_{n}", json.loads(json.dumps(m)), f"message row msg_{n}", n) for n, (m, _) in enumerate(messages)]
    parts = {f"msg_{n}": [Row(f"prt_{n}_{k}", json.loads(json.dumps(p)), f"part row prt_{n}_{k}")
                          for k, p in enumerate(ps)] for n, (_, ps) in enumerate(messages)}
    loaded = load_rows(Rows("fuzz", json.loads(json.dumps(session)), rows, parts))
    for m in loaded.messages:
        m.text()
        m.to_api()


# Kimi Code's records: its record and loop-event types, with any value in any of their fields
_kimi_any = st.one_of(values, st.sampled_from(["user", "injection", "system_trigger", "assistant", "tool", "think",
                                                "text", "compaction", "session", "subagent"]))
_kimi_part = st.fixed_dictionaries({"type": st.sampled_from(["text", "think", "image_url", "other"])},
                                   optional={"text": _kimi_any, "think": _kimi_any, "encrypted": _kimi_any})
_kimi_usage = st.one_of(_kimi_any, st.fixed_dictionaries({}, optional={
    k: st.one_of(st.integers(-5, 10**6), _kimi_any) for k in ("inputOther", "output", "inputCacheRead")}))
_kimi_message = st.fixed_dictionaries({}, optional={
    "role": st.sampled_from(["user", "assistant", "tool", "system", 5]),
    "content": st.one_of(_kimi_any, st.lists(st.one_of(_kimi_part, _kimi_any), max_size=3)),
    "toolCalls": st.one_of(_kimi_any, st.lists(st.fixed_dictionaries(
        {}, optional={"id": _kimi_any, "name": _kimi_any, "arguments": _kimi_any}), max_size=2)),
    "origin": st.one_of(_kimi_any, st.fixed_dictionaries(
        {}, optional={"kind": _kimi_any, "ownerPromptId": _kimi_any, "name": _kimi_any})), "id": _kimi_any})
_kimi_event = st.one_of(_kimi_any, st.fixed_dictionaries(
    {"type": st.sampled_from(["step.begin", "step.end", "content.part", "tool.call", "tool.result", None])},
    optional={"part": st.one_of(_kimi_part, _kimi_any), "toolCallId": _kimi_any, "name": _kimi_any,
              "args": _kimi_any, "usage": _kimi_usage, "messageId": _kimi_any, "result": st.one_of(
                  _kimi_any, st.fixed_dictionaries({}, optional={"output": _kimi_any, "note": _kimi_any}))}))
kimi_records = st.fixed_dictionaries(
    {"type": st.sampled_from(["context.append_message", "context.append_loop_event", "context.apply_compaction",
                              "context.clear", "context.undo", "llm.request", "usage.record",
                              "full_compaction.begin", "profile.bind", "llm.tools_snapshot", "subagent.spawned"])},
    optional={"message": st.one_of(_kimi_message, _kimi_any), "event": _kimi_event, "usage": _kimi_usage,
              "usageScope": st.sampled_from(["session", "turn", 3]), "kind": st.sampled_from(["compaction", "loop"]),
              "summary": st.one_of(_kimi_any, _kimi_message), "contextSummary": _kimi_any,
              "compactedCount": st.one_of(st.integers(-3, 20), _kimi_any), "count": st.one_of(st.integers(-2, 6),
                                                                                             _kimi_any),
              "keptUserMessageCount": st.one_of(st.integers(-3, 5), _kimi_any), "source": _kimi_any,
              "tools": st.one_of(_kimi_any, st.lists(st.fixed_dictionaries(
                  {}, optional={"name": _kimi_any, "parameters": _kimi_any}), max_size=2)),
              "time": st.one_of(st.integers(-10, 2 * 10**12), _kimi_any)})


@settings(max_examples=200, deadline=None)
@given(st.lists(kimi_records, min_size=1, max_size=14))
@example([{"type": "context.append_message", "message": {"toolCalls": True}}])  # found by a CI run
def test_any_kimi_code_records_load_and_every_request_saw_messages_it_has(objs):
    loader = KimiCodeLoader("fuzz")
    for n, obj in enumerate(objs, 1):
        loader.feed(n, n * 10, json.loads(json.dumps(obj)))
        if n % 4 == 0:
            loader.build()  # a live follower's builds in between
    session = loader.build()
    for m in session.messages:
        m.text()
        m.to_api()
    for r in session.requests:
        assert 0 <= r.seen_start <= r.seen_end <= len(session.messages)
