"""Claude Code loader against the real corpus (facts from tests/corpus/SOURCES.md) and hand-made edge cases."""

import json

import pytest

from inspector.core.formats import detect, load
from inspector.core.formats.claude_code import CLEARED, ClaudeCodeLoader
from inspector.core.model import LoadError

from conftest import CORPUS

MANUAL = CORPUS / "claude-code-manual-compact.jsonl"
SHORT = CORPUS / "claude-code-short.jsonl"
SUBAGENT = CORPUS / "claude-code-subagent-explore.jsonl"


@pytest.fixture(scope="module")
def manual():
    return load(MANUAL)


def test_manual_compact_session_facts(manual):
    assert manual.format == "claude-code" and detect(MANUAL) == "claude-code"
    assert len(manual.requests) == 217
    assert len({r.id for r in manual.requests}) == 217
    assert manual.requests[0].measured_context == 26_010
    assert manual.requests[-1].measured_context == 102_168
    assert manual.models == ["claude-opus-4-6", "claude-haiku-4-5-20251001"]
    assert manual.warnings == []
    [c] = manual.compactions
    assert (c.kind, c.trigger, c.pre_tokens, c.line) == ("compact", "manual", 142_431, 1481)
    summary = manual.messages[c.index]
    assert summary.kind == "compact_summary" and summary.lines == (1482,)
    assert summary.text().startswith("This session is being continued from a previous conversation")
    assert manual.context_start == c.index and manual.context[0] is summary


def test_requests_point_at_their_message_and_the_range_they_saw(manual):
    start = manual.context_start
    for r in manual.requests:
        m = manual.messages[r.message_index]
        assert m.role == "assistant" and m.response_id == r.id and r.seen_end == r.message_index
        assert r.seen_start == (start if r.message_index > start else 0)
        assert manual.request_for(m) is r


def test_model_switch_is_read_per_request(manual):
    models = [r.model for r in manual.requests]
    switch = models.index("claude-haiku-4-5-20251001")
    assert set(models[:switch]) == {"claude-opus-4-6"}


def test_every_tool_use_on_the_active_branch_has_its_result(manual):
    uses = [b.tool_id for m in manual.messages for b in m.tool_uses()]
    results = [b.tool_id for m in manual.messages for b in m.tool_results()]
    assert len(uses) == len(set(uses)) == 242
    assert sorted(uses) == sorted(results)
    seen = set()
    for m in manual.messages:  # results come after their use
        seen.update(b.tool_id for b in m.tool_uses())
        assert all(b.tool_id in seen for b in m.tool_results())


def test_split_response_lines_merge_into_one_message(manual):
    first = manual.messages[manual.requests[0].message_index]
    assert len(first.lines) > 1 and first.offset is not None
    raw = json.loads(_raw_line(MANUAL, first.offset))
    assert raw["message"]["id"] == first.response_id


def _raw_line(path, offset):
    from inspector.core.index import read_line
    return read_line(path, offset)


def test_short_session():
    s = load(SHORT)
    assert len(s.requests) == 1 and s.requests[0].measured_context == 25_353
    [a] = [m for m in s.messages if m.role == "assistant"]
    assert [b.type for b in a.blocks] == ["text", "thinking", "text", "tool_use", "tool_use"]
    assert a.lines == (5, 6, 7, 8, 10)
    assert [m.kind for m in s.messages] == ["prompt", "assistant", "tool_result", "tool_result", "meta"]
    assert s.messages[0].text() == "mix phx.server doesnt seem to start"
    assert s.session_id == "55604662-cf2a-4331-851a-ec234028f8ca" and s.cwd == "/home/marco/projects/spotter"


def test_subagent_file_loads_as_its_own_window():
    s = load(SUBAGENT)
    assert len(s.requests) == 12
    assert s.models == ["claude-sonnet-4-5-20250929"]
    assert s.requests[-1].measured_context == 71_257


# ---- hand-made entries -------------------------------------------------------------------------------------------

def entry(uuid, parent, kind="user", content="hi", **extra):
    obj = {"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": "s1", "timestamp": f"t-{uuid}"}
    if kind in ("user", "assistant"):
        obj["message"] = {"role": kind, "content": content}
    obj.update(extra)
    return obj


def reply(uuid, parent, mid, blocks, out=5, model="claude-x", **extra):
    return entry(uuid, parent, "assistant", blocks, message={
        "id": mid, "model": model, "role": "assistant", "content": blocks,
        "usage": {"input_tokens": 10, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 1000,
                  "output_tokens": out}}, **extra)


def build(entries):
    loader = ClaudeCodeLoader("mem")
    for n, e in enumerate(entries, 1):
        loader.feed(n, n * 100, e)
    return loader.build()


def test_rewind_keeps_the_newest_branch_and_bookkeeping_links_the_chain():
    s = build([
        entry("u1", None, content="first"),
        reply("a1", "u1", "m1", [{"type": "text", "text": "one"}]),
        entry("u2", "a1", content="abandoned"),
        entry("p1", "a1", "progress", data={"big": "x" * 100}),
        entry("u3", "p1", content="rewritten"),
        reply("a3", "u3", "m3", [{"type": "text", "text": "three"}]),
        entry("u1", None, content="first"),  # a resume repeats it as it was: silent
        {"type": "file-history-snapshot", "messageId": "x", "snapshot": {}},
    ])
    assert [m.text() for m in s.messages] == ["first", "one", "rewritten", "three"]
    assert [r.id for r in s.requests] == ["m1", "m3"]
    assert s.warnings == []


def test_microcompact_clears_listed_results_and_unknown_types_warn_once():
    s = build([
        entry("u1", None, content="go"),
        reply("a1", "u1", "m1", [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}},
                                 {"type": "tool_use", "id": "t2", "name": "Bash", "input": {}}]),
        entry("r1", "a1", content=[{"type": "tool_result", "tool_use_id": "t1", "content": "file body"},
                                   {"type": "tool_result", "tool_use_id": "t2", "content": "kept"}]),
        entry("mc", "r1", "system", subtype="microcompact_boundary",
              microcompactMetadata={"trigger": "auto", "preTokens": 900, "tokensSaved": 400,
                                    "compactedToolIds": ["t1"]}),
        entry("w1", "mc", "weird-new-type"),
        entry("w2", "w1", "weird-new-type"),
        entry("u2", "w2", content="next"),
    ])
    [mc] = s.compactions
    assert (mc.kind, mc.cleared_tool_ids, mc.tokens_saved, mc.index) == ("microcompact", ("t1",), 400, 3)
    assert s.context_start == 0
    results = {b.tool_id: b.text for b in s.messages[2].blocks}
    assert results == {"t1": CLEARED, "t2": "kept"}
    assert [m.text() for m in s.messages][-1] == "next"
    [w] = s.warnings
    assert w.line == 5 and "2 entries" in w.message and "weird-new-type" in w.message


def test_sidechain_entries_stay_out_of_the_main_window():
    s = build([
        entry("u1", None, content="main"),
        entry("s1", None, content="side prompt", isSidechain=True),
        reply("s2", "s1", "ms", [{"type": "text", "text": "side"}], isSidechain=True),
        reply("a1", "u1", "m1", [{"type": "text", "text": "main reply"}]),
    ])
    assert [m.text() for m in s.messages] == ["main", "main reply"]
    assert [r.id for r in s.requests] == ["m1"]


def test_synthetic_error_messages_have_no_request():
    s = build([entry("u1", None), reply("a1", "u1", "m1", [{"type": "text", "text": "API Error"}],
                                        model="<synthetic>")])
    assert s.requests == [] and s.models == [] and len(s.messages) == 2


def test_corrupt_line_warns_with_its_number_and_the_rest_loads(tmp_path):
    lines = SHORT.read_bytes().split(b"\n")
    lines[8] = lines[8][:40]  # line 9: a progress entry cut short
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join(lines))
    s = load(path)
    assert [w.line for w in s.warnings] == [9, 10]
    assert s.warnings[0].message.startswith("corrupt line skipped")
    assert "parent not in this file" in s.warnings[1].message  # line 10 hung off the lost progress entry
    assert len(s.requests) == 1 and len(s.messages) == 5


@pytest.mark.parametrize("content, message", [
    (None, "no such file"),
    (b"", "empty file"),
    (b"\x00\x01binary\x00", "binary file"),
    (b"hello world\nnot json\n", "not a recognised session format"),
    (b'{"foo": 1}\n{"bar": 2}\n', "not a recognised session format"),
])
def test_unloadable_paths_raise_one_line_errors_naming_the_path(tmp_path, content, message):
    path = tmp_path / "x.jsonl"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(LoadError) as err:
        load(path)
    text = str(err.value)
    assert str(path) in text and message in text and "\n" not in text


def test_directory_opens_its_newest_session_and_lists_subagents(tmp_path):
    import os
    old, new = tmp_path / "old.jsonl", tmp_path / "new.jsonl"
    old.write_bytes(SHORT.read_bytes())
    new.write_bytes(SHORT.read_bytes())
    os.utime(old, (1, 1))
    (tmp_path / "new" / "subagents").mkdir(parents=True)
    (tmp_path / "new" / "subagents" / "agent-a1.jsonl").write_bytes(SUBAGENT.read_bytes())
    s = load(tmp_path)
    assert s.source == str(new)
    assert s.subagents == [str(tmp_path / "new" / "subagents" / "agent-a1.jsonl")]
    with pytest.raises(LoadError, match="holds no session"):
        load(tmp_path / "new")


def test_older_layout_sibling_agent_files_that_name_the_session(tmp_path):
    sid = "55604662-cf2a-4331-851a-ec234028f8ca"
    (tmp_path / f"{sid}.jsonl").write_bytes(SHORT.read_bytes())
    mine = entry("x1", None, content="explore", isSidechain=True, sessionId=sid)
    other = entry("y1", None, content="explore", isSidechain=True, sessionId="another-session")
    (tmp_path / "agent-a1.jsonl").write_text(json.dumps(mine) + "\n")
    (tmp_path / "agent-b2.jsonl").write_text(json.dumps(other) + "\n")
    s = load(tmp_path / f"{sid}.jsonl")
    assert s.subagents == [str(tmp_path / "agent-a1.jsonl")]
    assert load(tmp_path).source == str(tmp_path / f"{sid}.jsonl")  # agent files are never the "newest session"


def test_a_progress_line_glued_to_the_next_write_is_one_corrupt_line(tmp_path):
    lines = SHORT.read_bytes().split(b"\n")
    progress, user = lines[2], lines[3]  # line 3 is progress, line 4 the prompt
    glued = progress[:len(progress) // 2] + user  # a crashed write, then the next entry on the same line
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join(lines[:2] + [glued] + lines[4:]))
    s = load(path)
    assert s.warnings[0].line == 3 and s.warnings[0].message.startswith("corrupt line skipped")


def test_projects_root_opens_the_newest_session_of_any_project(tmp_path):
    import os
    a, b = tmp_path / "-home-a-app", tmp_path / "-home-b-lib"
    a.mkdir()
    b.mkdir()
    (a / "s1.jsonl").write_bytes(SHORT.read_bytes())
    (b / "s2.jsonl").write_bytes(SHORT.read_bytes())
    os.utime(a / "s1.jsonl", (1, 1))
    assert load(tmp_path).source == str(b / "s2.jsonl")
    assert load(a).source == str(a / "s1.jsonl")


def test_progress_reports_bytes_and_ends_at_the_total(monkeypatch):
    import inspector.core.formats.jsonl as jsonl

    monkeypatch.setattr(jsonl, "PROGRESS_EVERY", 0.0)  # report at every run of lines, to see the batches
    calls = []
    load(MANUAL, progress=lambda done, total: calls.append((done, total)))
    size = MANUAL.stat().st_size
    assert len(calls) > MANUAL.read_bytes().count(b"\n") // jsonl.RUN and calls[-1] == (size, size)
    assert all(t == size for _, t in calls)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)


def test_loading_leaves_the_garbage_collector_as_it_was():
    import gc

    assert gc.isenabled()
    load(SHORT)
    assert gc.isenabled()
    gc.disable()
    try:
        load(SHORT)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_later_line_of_a_response_built_before_joins_it_from_off_the_path():
    """A first build whose records all lie on the path leaves what only an extension reads for the next build to
    lay: that build still knows the response it holds, and pulls its later line in from off the path."""
    first = [entry("u1", None, content="go"), reply("a1", "u1", "m1", [{"type": "text", "text": "one"}], out=1)]
    more = [reply("a1b", "a1", "m1", [{"type": "text", "text": "two"}], out=9), entry("u2", "a1", content="next")]
    loader = ClaudeCodeLoader("mem")
    for n, e in enumerate(first, 1):
        loader.feed(n, n * 100, e)
    loader.build()
    for n, e in enumerate(more, len(first) + 1):
        loader.feed(n, n * 100, e)
    grown, fresh = loader.build(), build(first + more)
    assert loader.last_build[0] == "extended"
    assert [m.text() for m in grown.messages] == ["go", "one\n\ntwo", "next"]
    assert grown.messages == fresh.messages and grown.requests == fresh.requests
    assert [r.output_tokens for r in grown.requests] == [9]


@pytest.mark.parametrize("built_at", [None, 2, 3])
def test_a_response_whose_usage_comes_on_a_later_line_gets_its_request_there(built_at):
    """A response's first line may have no usage (a line without it, a later one with it): the later line makes its
    Request, for the message the first line started; a line without usage after it leaves that Request as it was.
    Built at once, or first after line `built_at` and then extended, it is the same session."""
    first = reply("a1", "u1", "m1", [{"type": "text", "text": "one"}])
    del first["message"]["usage"]
    later = reply("a1c", "a1b", "m1", [{"type": "text", "text": "three"}])
    del later["message"]["usage"]
    entries = [entry("u1", None, content="go"), first,
               reply("a1b", "a1", "m1", [{"type": "text", "text": "two"}], out=7), later,
               entry("u2", "a1c", content="next"), reply("a2", "u2", "m2", [{"type": "text", "text": "ok"}])]
    loader = ClaudeCodeLoader("mem")
    for n, e in enumerate(entries, 1):
        loader.feed(n, n * 100, e)
        if n == built_at:
            loader.build()
    s = loader.build()
    assert [m.text() for m in s.messages] == ["go", "one\n\ntwo\n\nthree", "next", "ok"]
    assert s.messages[1].lines == (2, 3, 4)
    assert [(r.id, r.message_index, r.output_tokens, r.line) for r in s.requests] == [("m1", 1, 7, 3), ("m2", 3, 5, 6)]
    assert s.messages == build(entries).messages and s.requests == build(entries).requests


def test_a_result_holds_its_calls_id_string():
    """A tool result's id is its call's own string (tool ids are interned: not an equal copy, 80 bytes a result at
    100,000 messages); a result that answers no call fed keeps an id of its own."""
    call_id, result_id, stray_id = "".join(["toolu_", "1"]), "".join(["toolu_", "1"]), "".join(["toolu_", "9"])
    s = build([
        entry("u1", None, content="go"),
        reply("a1", "u1", "m1", [{"type": "tool_use", "id": call_id, "name": "Bash", "input": {}}]),
        entry("r1", "a1", content=[{"type": "tool_result", "tool_use_id": result_id, "content": "ok"},
                                   {"type": "tool_result", "tool_use_id": stray_id, "content": "??"}]),
    ])
    call, result, stray = s.messages[1].blocks[0], *s.messages[2].blocks
    assert result.tool_id == call.tool_id and result.tool_id is call.tool_id and result_id is not call_id
    assert stray.tool_id == stray_id and stray.tool_id is not call.tool_id
