"""Duplicate uuids in Claude Code transcripts: a resume's identical repeats are silent, a uuid reused for other
content is warned once (the first copy is kept), and the warnings are capped like the loader's others."""

import json
from pathlib import Path

from inspector.core.formats import load
from inspector.core.formats.claude_code import MAX_CONFLICT_WARNINGS, ClaudeCodeLoader
from inspector.core.formats.claude_code_lines import decode

CORPUS = Path(__file__).parent / "corpus"


def entry(uuid, parent, content="hi", kind="user", **extra):
    return {"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": "s1", "timestamp": "2026-01-01T00:00:00Z",
            "message": {"role": kind, "content": content}, **extra}


def reply(uuid, parent, text, mid="m1", output_tokens=10):
    e = entry(uuid, parent, [{"type": "text", "text": text}], "assistant")
    e["message"].update(id=mid, model="claude-sonnet-4-5", usage={"input_tokens": 100, "output_tokens": output_tokens})
    return e


def build(entries, loader=None):
    loader = loader or ClaudeCodeLoader("mem")
    for n, e in enumerate(entries, 1):
        loader.feed(n, n * 100, e)
    return loader.build()


def messages(warnings):
    return [(w.line, w.message) for w in warnings]


def test_identical_repeat_is_silent_even_with_another_session_id_and_time():
    first = [entry("u1", None, "go"), reply("a1", "u1", "done")]
    again = [dict(e, sessionId="s2", timestamp="2026-02-02T00:00:00Z") for e in first]
    s = build(first + again + [entry("p1", "a1", kind="progress", data={"n": 1}),
                               entry("p1", "a1", kind="progress", data={"n": 2})])  # progress payloads are not kept
    assert s.warnings == [] and [m.text() for m in s.messages] == ["go", "done"]


def test_other_content_is_warned_once_and_the_first_copy_kept():
    s = build([entry("u1", None, "go"), reply("a1", "u1", "done"),
               reply("a1", "u1", "rewritten"), reply("a1", "u1", "rewritten again"), reply("a1", "u1", "done")])
    assert messages(s.warnings) == [
        (3, "uuid 'a1' repeated at line 3 with different content than line 2; the first is kept")]
    assert [m.text() for m in s.messages] == ["go", "done"]


def test_what_counts_as_different():
    base = [entry("u1", None, "go"), reply("a1", "u1", "done"), entry("x", None, kind="queue-operation")]
    cases = {
        "parent": entry("u1", "a1", "go"),  # same content, another place in the chain
        "kind": entry("a1", "u1", "done"),  # the uuid of a response reused by a user entry
        "usage": reply("a1", "u1", "done", output_tokens=99),
        "response": reply("a1", "u1", "done", mid="m2"),
        "meta flag": entry("u1", None, "go", isMeta=True),
    }
    for name, repeat in cases.items():
        s = build(base + [repeat])
        assert len(s.warnings) == 1 and "with different content than line" in s.warnings[0].message, name
    # an entry the loader keeps nothing of but its link: only the parent is compared, and no first line is known
    s = build(base + [entry("x", "u1", kind="queue-operation")])
    assert messages(s.warnings) == [(4, "uuid 'x' repeated at line 4 with different content; the first is kept")]


def test_warnings_are_capped_with_a_count_of_the_rest():
    extra = 7
    n = MAX_CONFLICT_WARNINGS + extra
    firsts = [entry(f"u{i}", f"u{i - 1}" if i else None, f"text {i}") for i in range(n)]
    rewrites = [entry(f"u{i}", f"u{i - 1}" if i else None, f"other {i}") for i in range(n)]
    s = build(firsts + rewrites + rewrites)
    assert len(s.warnings) == MAX_CONFLICT_WARNINGS + 1
    assert s.warnings[-1].line is None
    assert s.warnings[-1].message == f"{extra} more uuids repeated with different content; the first copies are kept"
    assert [m.text() for m in s.messages] == [f"text {i}" for i in range(n)]


def test_a_live_loader_warns_once_however_often_it_builds():
    loader = ClaudeCodeLoader("live")
    lines = [entry("u1", None, "go"), reply("a1", "u1", "done"), reply("a1", "u1", "other"), entry("u2", "a1")]
    for n, e in enumerate(lines, 1):
        loader.feed(n, n * 100, e)
        session = loader.build()
    assert len(session.warnings) == 1 and loader.duplicates == 1


def test_a_real_session_resumed_into_a_copy_of_itself_is_silent(tmp_path):
    """Every line of a real transcript written twice, the second time under another session id (what a resume's
    new file starts with): the same session, no warning."""
    source = CORPUS / "claude-code-manual-compact.jsonl"
    lines = source.read_bytes().splitlines()
    again = []
    for raw in lines:
        obj = json.loads(raw)
        if isinstance(obj, dict) and "sessionId" in obj:
            obj["sessionId"] = "00000000-0000-4000-8000-00000000beef"
        again.append(json.dumps(obj).encode())
    path = tmp_path / "resumed.jsonl"
    path.write_bytes(b"\n".join(lines + again) + b"\n")
    original, resumed = load(source), load(path)
    assert resumed.warnings == original.warnings == []
    assert [m.text() for m in resumed.messages] == [m.text() for m in original.messages]
    assert len(resumed.requests) == len(original.requests) == 217


def test_a_run_holding_a_uuid_twice_links_as_its_lines_one_by_one():
    """`feed_run` sets a run's new uuids in one update and takes it back when a uuid comes twice in the run: the
    graph is then what feeding the lines one at a time makes (the first copy's seq, its record, the rest linked)."""
    lines = [entry("u1", None, "go"), reply("a1", "u1", "done"), entry("u2", "a1", "next"),
             reply("a1", "u1", "rewritten"), entry("u3", "u2", "last")]
    whole, single = ClaudeCodeLoader("mem"), ClaudeCodeLoader("mem")
    raws = [json.dumps(e).encode() for e in lines]
    whole.feed_run(1, range(100, 600, 100), list(map(decode, raws)), raws)  # typed entries: one run
    for n, e in enumerate(lines, 1):
        single.feed(n, n * 100, e)
    for loader in (whole, single):
        assert loader.main.nodes == {"u1": 0, "a1": 1, "u2": 2, "u3": 3} and loader.duplicates == 1
    assert whole.main.parents == single.main.parents == [None, "u1", "a1", "u2"]
    assert messages(whole.build().warnings) == messages(single.build().warnings) == [
        (4, "uuid 'a1' repeated at line 4 with different content than line 2; the first is kept")]
