"""The Claude Code loader's two ways into a line read it alike: the typed fast path (`claude_code_lines.decode`,
msgspec) and the generic one (orjson, then the standard library, as dicts). Whatever the line holds (a field of
another type, an integer past 64 bits, invalid UTF-8 in a value the types skip, a lone surrogate, a duplicate key,
deep nesting, an unknown block, a cut line), the session built with the fast path equals the one built without.
And a branch that is one chain of entries, taken whole without a walk (`claude_code._chain`), is what the walk finds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from inspector.core.formats.blocks import MAX_NESTING
from inspector.core.formats import claude_code
from inspector.core.formats.claude_code import ClaudeCodeLoader
from inspector.core.formats.claude_code_lines import VALUE_DEPTH, _decode, _input_text, decode, decoder
from inspector.core.formats.jsonl import read_jsonl
from inspector.core.model import Session, input_json

text = st.text(max_size=6)
big = st.integers(min_value=-(2**70), max_value=2**70)
scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 300), big, st.floats(allow_nan=False), text)
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(text, inner, max_size=3)), max_leaves=6)


def shapes(odd: bool) -> st.SearchStrategy:
    """Lines shaped like Claude Code's: each field now and then of any type (`odd`), or always of the right one."""

    def maybe(good: st.SearchStrategy) -> st.SearchStrategy:
        return st.one_of(*[good] * 12, values) if odd else good

    def block(inner: st.SearchStrategy) -> st.SearchStrategy:
        source = st.fixed_dictionaries({}, optional={"type": maybe(st.sampled_from(["base64", "text"])),
                                                     "media_type": maybe(text), "data": maybe(text)})
        return st.one_of(
            st.fixed_dictionaries({"type": st.just("text")}, optional={"text": maybe(text), "citations": values}),
            st.fixed_dictionaries({"type": st.just("tool_use")}, optional={
                "id": maybe(st.sampled_from(["t1", "t2"])), "name": maybe(st.sampled_from(["Bash", "Task"])),
                "input": maybe(st.dictionaries(text, values, max_size=3))}),
            st.fixed_dictionaries({"type": st.just("tool_result")}, optional={
                "tool_use_id": maybe(st.sampled_from(["t1", "t2"])), "is_error": maybe(st.booleans()),
                "content": maybe(st.one_of(text, st.lists(inner, max_size=2)))}),
            st.fixed_dictionaries({"type": st.just("thinking")}, optional={"thinking": maybe(text),
                                                                            "signature": maybe(text)}),
            st.fixed_dictionaries({"type": st.just("redacted_thinking")}, optional={"data": maybe(text)}),
            st.fixed_dictionaries({"type": st.sampled_from(["image", "document"])}, optional={"source": maybe(source)}),
        ) | st.fixed_dictionaries({"type": maybe(st.just("server_tool_use"))}, optional={"id": text})

    blocks = st.recursive(st.fixed_dictionaries({"type": st.just("text"), "text": text}), block, max_leaves=4)
    usage = st.fixed_dictionaries({}, optional={
        "input_tokens": maybe(st.integers(0, 10**6)), "cache_creation_input_tokens": maybe(st.integers(0, 10**6)),
        "cache_read_input_tokens": maybe(st.integers(0, 10**6)), "output_tokens": maybe(st.integers(0, 10**6)),
        "cache_creation": maybe(st.fixed_dictionaries({}, optional={
            "ephemeral_1h_input_tokens": maybe(st.integers(0, 10**6))})),
        "service_tier": text})
    message = st.fixed_dictionaries({}, optional={
        "role": maybe(st.sampled_from(["user", "assistant"])), "content": maybe(st.one_of(text, st.lists(blocks, max_size=3))),
        "id": maybe(st.sampled_from(["m1", "m2", ""])), "model": maybe(st.sampled_from(["claude-x", "<synthetic>"])),
        "usage": maybe(usage), "context_management": maybe(st.none()), "stop_reason": values})
    uuids = st.sampled_from(["u1", "u2", "u3", "u4", "u5"])
    entry = st.fixed_dictionaries(
        {"type": maybe(st.sampled_from(["user", "assistant"]) | st.sampled_from([
            "progress", "system", "attachment", "file-history-snapshot", "summary", "hologram", "cost-state", "mode"]))},
        optional={
            "uuid": maybe(uuids), "parentUuid": maybe(st.one_of(st.none(), uuids)), "isSidechain": maybe(st.booleans()),
            "timestamp": maybe(st.just("2026-01-01T00:00:00Z")), "cwd": maybe(st.just("/w")),
            "sessionId": maybe(st.just("s1")), "version": maybe(st.sampled_from(["2.1.1", "2.1.2"])),
            "message": maybe(message), "requestRef": maybe(st.just("r1")), "isMeta": maybe(st.booleans()),
            "isCompactSummary": maybe(st.booleans()), "isVisibleInTranscriptOnly": maybe(st.booleans()),
            "toolUseResult": maybe(st.one_of(text, st.fixed_dictionaries({}, optional={"agentId": maybe(text),
                                                                                       "stdout": text}))),
            "contextInspector": maybe(st.none()), "subtype": st.sampled_from(["compact_boundary", "x"]),
            "logicalParentUuid": maybe(uuids), "data": values})
    return entry


# bytes a JSON encoder never writes, spliced into a line: into a value the types skip, or one they read
SPLICES = [b'"junk": "\xff\xfe"', b'"junk": "\\ud800"', b'"junk": NaN', b'"junk": 1e400', b'"junk": 18446744073709551616',
       b'"uuid": 5', b'"uuid": "u9"', b'"type": "user"', b'"type": "progress"', b'"junk": "\xed\xa0\x80"',
       b'"message": {"content": "\xff"}', b'"message": {"content": [{"type": "tool_use", "input": {"n": 1e999}}]}',
       b'"message": {"content": [{"type": "tool_use", "input": {"n": 123456789012345678901234}}]}',
       b'"message": {"content": [{"type": "tool_use", "input": {"n": 9223372036854775808}}]}',
       b'"message": {"usage": {"input_tokens": 9223372036854775808}}', b'"isSidechain": 1', b'\t"junk": 0',
       b'"cwd": 5', b'"cw\\u0064": "/e"', b'"version": ["2"]', b'"sessionId": 18446744073709551616']


@st.composite
def raw_line(draw, entries: st.SearchStrategy) -> bytes:
    raw = json.dumps(draw(entries), ensure_ascii=draw(st.booleans())).encode()
    how = draw(st.integers(0, 7))
    if how == 1:  # a key spliced in front (a duplicate, where the line has one of its own)
        raw = b"{" + draw(st.sampled_from(SPLICES)) + (b", " if len(raw) > 2 else b"") + raw[1:]
    elif how == 2:  # ... or at the end
        raw = raw[:-1] + (b", " if len(raw) > 2 else b"") + draw(st.sampled_from(SPLICES)) + b"}"
    elif how == 3:  # cut short
        raw = raw[:draw(st.integers(0, len(raw)))]
    return raw


def deeply_nested(uuid: str, depth: int) -> bytes:
    content: object = "bottom"
    for _ in range(depth):
        content = [{"type": "tool_result", "tool_use_id": "t1", "content": content}]
    return json.dumps({"type": "user", "uuid": uuid, "message": {"role": "user", "content": content}}).encode()


def both(path: Path) -> tuple[Session, Session, int]:
    """The session loaded with the fast path and without it, and how many lines the fast path took."""
    taken = 0

    def counted(raw: bytes):
        nonlocal taken
        obj = decode(raw)
        taken += 1
        return obj

    fast, generic = ClaudeCodeLoader(str(path)), ClaudeCodeLoader(str(path))
    read_jsonl(path, fast.feed, fast.warn, decoder=lambda raws: counted, feed_run=fast.feed_run)
    read_jsonl(path, generic.feed, generic.warn)
    return fast.build(), generic.build(), taken


def same(a: Session, b: Session) -> None:
    for name in ("messages", "requests", "compactions", "warnings", "spawns", "models", "cwd", "session_id",
                 "version", "agent_cost"):
        assert repr(getattr(a, name)) == repr(getattr(b, name)), name
    assert (a.sent is None) == (b.sent is None)
    if a.sent is not None:
        assert a.sent.responses == b.sent.responses


ODD, PLAIN = shapes(odd=True), shapes(odd=False)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(raw_line(ODD) | raw_line(PLAIN), min_size=1, max_size=8))
def test_any_lines_read_alike_through_either_path(tmp_path_factory, lines):
    path = tmp_path_factory.mktemp("typed") / "s.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    fast, generic, _ = both(path)
    same(fast, generic)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(claude_code, "_chain", lambda graph: None)
        walked = ClaudeCodeLoader(str(path))
        read_jsonl(path, walked.feed, walked.warn)
        same(walked.build(), generic)


def test_the_common_lines_take_the_fast_path_and_the_odd_ones_do_not(tmp_path):
    common = [
        {"type": "user", "uuid": "u1", "parentUuid": None, "cwd": "/w", "sessionId": "s", "version": "2.1.1",
         "timestamp": "t", "message": {"role": "user", "content": "hello \u00e9"}},
        {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "requestId": "q", "message": {
            "id": "m1", "model": "claude-x", "role": "assistant", "stop_reason": None,
            "content": [{"type": "thinking", "thinking": "hm", "signature": "sig"},
                        {"type": "tool_use", "id": "t1", "name": "Task", "input": {"n": [1, True, {"k": None}]}}],
            "usage": {"input_tokens": 3, "cache_creation_input_tokens": 5, "cache_read_input_tokens": 7,
                      "output_tokens": 9, "cache_creation": {"ephemeral_1h_input_tokens": 4}}}},
        {"type": "progress", "uuid": "p1", "parentUuid": "a1", "data": {"huge": "x" * 1000}},
        {"type": "user", "uuid": "u2", "parentUuid": "p1", "toolUseResult": {"agentId": "ag1", "file": {"c": "x"}},
         "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [
             {"type": "text", "text": "done"}, {"type": "image", "source": {"media_type": "image/png",
                                                                           "data": "QUJD"}}]}]}},
        {"type": "file-history-snapshot", "messageId": "x", "snapshot": {}},
    ]
    odd = [b'{"type": "user", "uuid": "u3", "parentUuid": "u2", "message": {"content": "bad \xff byte"}}',
           b'{"type": "user", "uuid": "u4", "parentUuid": "u3", "junk": "\xff", "message": {"content": "ok"}}',
           b'{"type": "user", "uuid": "u5", "parentUuid": "u4", "message": {"content": "lone \\udc00"}}',
           b'{"type": "assistant", "uuid": "u6", "parentUuid": "u5", "message": {"id": "m2", "content": [], '
           b'"usage": {"input_tokens": 18446744073709551615}}}',
           b'{"type": "assistant", "uuid": "u7", "parentUuid": "u6", "message": {"id": "m3", "content": [], '
           b'"usage": {"input_tokens": 123456789012345678901234567890}}}',
           b'{"type": "user", "uuid": "u8", "uuid": "u9", "parentUuid": "u7", "message": {"content": "dup"}}',
           b'{"type": "user", "uuid": "u10", "parentUuid": "u9", "message": {"content": [{"type": "mystery"}]}}',
           b'{"type": "assistant", "uuid": "u11", "parentUuid": "u10", "message": {"id": "m4", "content": [{"type": '
           b'"tool_use", "id": "t2", "name": "Bash", "input": {"timeout": 1e16}}]}}',
           deeply_nested("d1", MAX_NESTING + 2), deeply_nested("d2", MAX_NESTING + 1)]
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join([json.dumps(e).encode() for e in common] + odd) + b"\n")
    fast, generic, taken = both(path)
    same(fast, generic)
    assert taken == len(common) + 3  # of the odd ones: the duplicate key (the last wins, as in a dict) and the
    # nested results (read, and found too deep, by the loader); the rest take the generic path (a tool input's float
    # too: msgspec would write 1e16 where the standard library writes 1e+16)
    assert fast.spawns == {"t1": "ag1"} and any("invalid UTF-8" in w.message for w in fast.warnings)
    assert any("content not read" in w.message for w in fast.warnings)


def test_a_typed_input_is_written_as_the_generic_path_writes_it():
    texts = ["".join(map(chr, range(0, 0x800))), "\u2028\u2029\ufeff\x7f\uffff", "\U0001f600 a\"b\\c/d", ""]
    for value in [{"k": text, text: [text]} for text in texts] + [
            {}, [], {"a": {}, "b": [], "c": [[], {}, [None]]}, [True, False, None, 0, -(2**63), 2**63 - 1]]:
        assert _input_text(value) == input_json(value)


def test_a_run_decodes_in_c_unless_a_line_is_invalid_utf8(tmp_path):
    """The loader's decoder checks the UTF-8 of a run's lines that are not ASCII once (msgspec skips what it does not
    read unchecked); a run holding invalid bytes has each line checked as it decodes, and that line takes the
    generic path, which warns of it."""
    ok = json.dumps({"type": "user", "uuid": "u1", "message": {"content": "caf\u00e9"}}, ensure_ascii=False).encode()
    bad = b'{"type": "user", "uuid": "u2", "parentUuid": "u1", "junk": "\xff", "message": {"content": "x"}}'
    assert decoder([b"{}", ok]) is _decode and decoder([ok, bad]) is decode
    path = tmp_path / "s.jsonl"
    path.write_bytes(ok + b"\n" + bad + b"\n")
    loader = ClaudeCodeLoader(str(path))
    read_jsonl(path, loader.feed, loader.warn, decoder=loader.decoder, feed_run=loader.feed_run)
    session = loader.build()
    assert [m.uuid for m in session.messages] == ["u1", "u2"]
    assert [w.line for w in session.warnings if "invalid UTF-8" in w.message] == [2]



def test_where_a_session_ran_comes_from_the_raw_lines_as_the_generic_path_reads_it(tmp_path):
    """Typed entries skip cwd and sessionId (`claude_code_lines.Envelope`): the loader reads them from the raw line
    of the first entry held that names a cwd. A key spelled with escapes counts, a cwd of another type does not (the
    generic path's reading: a sessionId of any type is kept). The version is the last entry's held that names one
    (not a progress line's)."""
    lines = [b'{"type": "user", "uuid": "u1", "parentUuid": null, "cwd": 5, "sessionId": "s1", "version": "1", '
             b'"message": {"content": "a"}}',
             b'{"type": "user", "uuid": "u2", "parentUuid": "u1", "cw\\u0064": "/w", "sessionId": 7, '
             b'"message": {"content": "b"}}',
             b'{"type": "user", "uuid": "u3", "parentUuid": "u2", "cwd": "/x", "sessionId": "s3", "version": "2", '
             b'"message": {"content": "c"}}',
             b'{"type": "user", "uuid": "u4", "parentUuid": "u3", "version": null, "message": {"content": "d"}}',
             b'{"type": "progress", "uuid": "p1", "parentUuid": "u4", "version": "9"}']
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    fast, generic, taken = both(path)
    same(fast, generic)
    assert taken == len(lines)
    assert (fast.cwd, fast.session_id, fast.version) == ("/w", 7, "2")


def test_a_tool_input_nested_past_the_typed_depth_takes_the_generic_path_and_reads_alike(tmp_path):
    def nested(depth: int) -> object:
        value: object = 1
        for level in range(depth):
            value = [value] if level % 2 else {"k": value}
        return value

    lines = [{"type": "assistant", "uuid": f"a{depth}", "parentUuid": f"a{depth - 1}" if depth else None,
              "message": {"id": f"m{depth}", "content": [{"type": "tool_use", "id": f"t{depth}", "name": "Bash",
                                                          "input": nested(depth)}]}}
             for depth in (0, VALUE_DEPTH - 1, VALUE_DEPTH, VALUE_DEPTH + 1)]
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join(json.dumps(line).encode() for line in lines) + b"\n")
    fast, generic, taken = both(path)
    same(fast, generic)
    assert taken == 3


@st.composite
def linked(draw) -> list[dict]:
    """Entries with unique uuids, each mostly the child of the one before: chains, with now and then a boundary
    (linked through its logical parent), a new root, a link past the entry before (a tool's result past the progress
    lines of its call), to an older entry or to one never written."""
    out: list[dict] = []
    for n in range(draw(st.integers(1, 12))):
        prev = out[-1]["uuid"] if out else None
        how = draw(st.sampled_from(["next"] * 6 + ["boundary", "root", "older", "missing", "progress", "side"] +
                                   ["skip"] * 3))
        parent = {"root": None, "boundary": None, "missing": "nowhere",
                  "older": out[draw(st.integers(0, len(out) - 1))]["uuid"] if out else None,
                  "skip": out[-2]["uuid"] if len(out) > 1 else prev}.get(how, prev)  # past a progress line, say
        e = {"type": "assistant" if n % 2 else "user", "uuid": f"e{n}", "parentUuid": parent,
             "message": {"id": f"m{n}", "content": [{"type": "text", "text": str(n)}],
                         "usage": {"input_tokens": n}} if n % 2 else {"content": str(n)}}
        if how == "boundary":
            e = {"type": "system", "subtype": draw(st.sampled_from(["compact_boundary", "microcompact_boundary"])),
                 "uuid": f"e{n}", "parentUuid": None,
                 "logicalParentUuid": draw(st.sampled_from([prev, out[0]["uuid"] if out else None, "nowhere", None]))}
        elif how == "progress":
            e = {"type": "progress", "uuid": f"e{n}", "parentUuid": parent}
        elif how == "side":
            e["isSidechain"] = True
        out.append(e)
    return out


@settings(max_examples=500, deadline=None)
@given(linked())
def test_a_chain_taken_whole_is_what_the_walk_finds(entries):
    loaders = ClaudeCodeLoader("chain"), ClaudeCodeLoader("walk")
    for loader in loaders:
        for n, e in enumerate(entries, 1):
            loader.feed(n, n * 100, json.loads(json.dumps(e)))
    chained = loaders[0].build()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(claude_code, "_chain", lambda graph: None)
        same(chained, loaders[1].build())


@settings(max_examples=300, deadline=None)
@given(linked(), st.integers(1, 12))
def test_the_jumps_a_graph_notes_are_its_links_past_the_entry_before(entries, size):
    """`_chain` looks only at the seqs the linking noted (`_Graph.jumps`): every seq whose parent is not the entry
    just before it, whether the lines come in typed runs of `size` or one at a time."""
    raws = [json.dumps(e).encode() for e in entries]
    runs, lines = ClaudeCodeLoader("runs"), ClaudeCodeLoader("lines")
    for lo in range(0, len(raws), size):
        part = raws[lo:lo + size]
        runs.feed_run(lo + 1, range(lo, lo + len(part)), list(map(_typed_or_dict, part)), part)
    for n, raw in enumerate(raws, 1):
        lines.feed(n, n, json.loads(raw))
    for graph in (runs.main, runs.side, lines.main, lines.side):
        order, parents = graph.order, graph.parents
        assert list(graph.jumps) == [seq for seq in range(len(order))
                                     if parents[seq] is not (order[seq - 1] if seq else None)]


def _typed_or_dict(raw: bytes):
    try:
        return decode(raw)
    except ValueError:  # a kind the types do not hold (a boundary): the generic path's dict
        return json.loads(raw)


@pytest.mark.parametrize("record_at", [None, 2, 3])
def test_a_chain_whose_steps_back_pass_more_entries_than_it_holds_is_what_the_walk_finds(record_at):
    """`_chain` looks at the entries a step back passes one by one until the steps have passed as many entries as
    the graph holds (here from the fourth entry on), then counts the records once: either way a record passed over
    (the second entry, or the third) leaves the branch to the walk, and what it takes whole is what the walk finds."""
    entries = [{"type": "user", "uuid": "e0", "parentUuid": None, "message": {"content": "go"}}]
    for n in range(1, 7):  # progress lines of one call, each linked to the prompt
        entries.append({"type": "progress", "uuid": f"e{n}", "parentUuid": "e0"} if n != record_at else
                       {"type": "user", "uuid": f"e{n}", "parentUuid": "e0", "message": {"content": str(n)}})
    entries.append({"type": "assistant", "uuid": "e7", "parentUuid": "e6", "message": {
        "id": "m7", "content": [{"type": "text", "text": "done"}], "usage": {"input_tokens": 7}}})
    loaders = ClaudeCodeLoader("chain"), ClaudeCodeLoader("walk")
    for loader in loaders:
        for n, e in enumerate(entries, 1):
            loader.feed(n, n * 100, json.loads(json.dumps(e)))
    assert (claude_code._chain(loaders[0].main) is None) == (record_at is not None)
    chained = loaders[0].build()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(claude_code, "_chain", lambda graph: None)
        same(chained, loaders[1].build())
