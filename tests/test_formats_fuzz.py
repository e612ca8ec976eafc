"""Any JSON line at all, fed to any loader, becomes a warning or a skip, never an exception: files are written by
other programs (and other versions of them), so every field may hold any JSON type."""

import json

from hypothesis import given, settings, strategies as st

from inspector.core.formats.claude_code import ClaudeCodeLoader
from inspector.core.formats.codex import CodexLoader
from inspector.core.formats.conversations import ConversationLoader
from inspector.core.formats.detect import classify_document, classify_line
from inspector.core.formats.gemini import GeminiLoader
from inspector.core.formats.neutral import NeutralLoader
from inspector.core.formats.copilot import CopilotLoader
from inspector.core.formats.kimi import KimiLoader
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
        "contextWindowSize", "result", "args", "thought"]
TYPES = ["user", "assistant", "system", "progress", "compact_boundary", "microcompact_boundary", "response_item",
         "event_msg", "session_meta", "turn_context", "compacted", "token_count", "message", "reasoning",
         "function_call", "function_call_output", "tool_use", "tool_result", "text", "image", "session",
         "compaction", "session.start", "user.message", "assistant.message", "tool.execution_complete",
         "session.usage_record", "session.compaction_start", "session.compaction_complete", "session.truncation",
         "system.message", "_usage", "_system_prompt", "_checkpoint", "tool", "say", "api_req_started",
         "gemini", "info", "chat_compression", "slash_command", "mid_turn_user_message", "realtime_message",
         "step-start", "step-finish", "file"]
keyed = st.dictionaries(st.sampled_from(KEYS), st.one_of(values, st.sampled_from(TYPES)), max_size=8)
# objects shaped like real lines, with any value where a field should be
lines = st.one_of(values, keyed, st.builds(lambda top, inner: {**top, "message": inner, "payload": inner}, keyed,
                                           keyed))


def loaders():
    return [ClaudeCodeLoader("fuzz"), CodexLoader("fuzz"), NeutralLoader("fuzz"),
            ConversationLoader("fuzz", "anthropic-request"), ConversationLoader("fuzz", "openai-chat"),
            CopilotLoader("fuzz"), KimiLoader("fuzz"),
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
