"""Any JSON line at all, fed to any loader, becomes a warning or a skip, never an exception: files are written by
other programs (and other versions of them), so every field may hold any JSON type."""

import json

from hypothesis import given, settings, strategies as st

from inspector.core.formats.claude_code import ClaudeCodeLoader
from inspector.core.formats.codex import CodexLoader
from inspector.core.formats.conversations import ConversationLoader
from inspector.core.formats.detect import classify_document, classify_line
from inspector.core.formats.neutral import NeutralLoader

scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 10**6), st.text(max_size=8))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(st.text(max_size=6), inner, max_size=3)),
                      max_leaves=8)
KEYS = ["type", "uuid", "parentUuid", "logicalParentUuid", "isSidechain", "message", "content", "role", "id",
        "model", "usage", "subtype", "compactMetadata", "microcompactMetadata", "payload", "event", "kind",
        "tool_calls", "tool_call_id", "messages", "request", "response", "system", "tools", "info", "summary",
        "replacement_history", "arguments", "output", "input", "name", "call_id", "text", "isCompactSummary"]
TYPES = ["user", "assistant", "system", "progress", "compact_boundary", "microcompact_boundary", "response_item",
         "event_msg", "session_meta", "turn_context", "compacted", "token_count", "message", "reasoning",
         "function_call", "function_call_output", "tool_use", "tool_result", "text", "image", "session",
         "compaction"]
keyed = st.dictionaries(st.sampled_from(KEYS), st.one_of(values, st.sampled_from(TYPES)), max_size=8)
# objects shaped like real lines, with any value where a field should be
lines = st.one_of(values, keyed, st.builds(lambda top, inner: {**top, "message": inner, "payload": inner}, keyed,
                                           keyed))


def loaders():
    return [ClaudeCodeLoader("fuzz"), CodexLoader("fuzz"), NeutralLoader("fuzz"),
            ConversationLoader("fuzz", "anthropic-request"), ConversationLoader("fuzz", "openai-chat")]


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
