"""Export: atomic, never over the input, neutral or Claude Code format, and it loads back to the same context."""

import json
import os
import shutil

import pytest
from compaction_sessions import tool_session

from inspector.core.compaction import apply, plan_clear, plan_snip, plan_summary
from inspector.core.export import export_session
from inspector.core.formats import load
from inspector.core.formats.claude_code import CLEARED
from inspector.core.model import LoadError

SESSION_ID = "3f2504e0-4f89-11d3-9a0c-0305e82c3301"


def same_context(a, b):
    assert [m.to_api() for m in a.context] == [m.to_api() for m in b.context]
    assert [m.kind for m in a.context] == [m.kind for m in b.context]  # an acknowledgement too: the boundary says


def test_claude_code_export_of_a_summary_resumes_from_the_summary(corpus, tmp_path):
    s = load(corpus / "claude-code-manual-compact.jsonl")
    new = apply(plan_summary(s), summary="what happened")
    out = export_session(new, tmp_path / f"{SESSION_ID}.jsonl")
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert {x["sessionId"] for x in lines} == {SESSION_ID}
    uuids = [x["uuid"] for x in lines]
    assert len(uuids) == len(set(uuids))
    for prev, line in zip(lines, lines[1:]):  # one chain, broken only at compact boundaries
        if line.get("subtype") == "compact_boundary":
            assert line["parentUuid"] is None and line["logicalParentUuid"] == prev["uuid"]
        else:
            assert line["parentUuid"] == prev["uuid"]
    boundaries = [k for k, x in enumerate(lines) if x.get("subtype") == "compact_boundary"]
    assert len(boundaries) == 2
    summary = lines[boundaries[-1] + 1]
    assert summary["isCompactSummary"] is True and summary["type"] == "user"
    assert summary["message"]["content"].endswith("what happened")
    back = load(out)
    assert back.format == "claude-code" and not back.warnings
    same_context(new, back)
    assert len(back.requests) == len(s.requests)
    assert back.compactions[-1].kind == "compact" and back.compactions[-1].pre_tokens == new.compactions[-1].pre_tokens


def test_claude_code_export_of_a_clear_records_a_microcompact_boundary(corpus, tmp_path):
    s = load(corpus / "claude-code-manual-compact.jsonl")
    new = apply(plan_clear(s))
    out = export_session(new, tmp_path / "cleared.jsonl")
    boundary = [json.loads(x) for x in out.read_text().splitlines() if "microcompact_boundary" in x]
    assert boundary and boundary[0]["microcompactMetadata"]["compactedToolIds"] == list(new.compactions[-1]
                                                                                        .cleared_tool_ids)
    back = load(out)
    same_context(new, back)
    assert any(b.text == CLEARED for m in back.context for b in m.blocks)


def test_neutral_export_round_trips_a_snip(tmp_path):
    s = tool_session(10)
    new = apply(plan_snip(s))
    out = export_session(new, tmp_path / "snipped.jsonl")
    back = load(out)
    assert back.format == "neutral"
    same_context(new, back)
    assert back.compactions[-1].kind == "microcompact"
    assert set(back.compactions[-1].cleared_tool_ids) == set(new.compactions[-1].cleared_tool_ids)


def test_refuses_to_overwrite_the_input_and_writes_atomically(corpus, tmp_path):
    src = tmp_path / "in.jsonl"
    shutil.copy(corpus / "claude-code-short.jsonl", src)
    s = load(src)
    before = src.read_bytes()
    with pytest.raises(LoadError, match="refusing to overwrite"):
        export_session(s, src)
    with pytest.raises(LoadError, match="refusing to overwrite"):
        export_session(s, tmp_path / "." / "in.jsonl")
    assert src.read_bytes() == before
    with pytest.raises(LoadError, match="is a directory"):
        export_session(s, tmp_path)
    target = tmp_path / "out.jsonl"
    target.write_text("old\n")
    export_session(s, target)
    assert target.read_text() != "old\n"
    assert sorted(os.listdir(tmp_path)) == ["in.jsonl", "out.jsonl"]  # no temporary file left behind


def test_unwritable_directory_is_one_line_error(tmp_path):
    with pytest.raises(LoadError, match="cannot write"):
        export_session(tool_session(2), tmp_path / "missing" / "out.jsonl")
