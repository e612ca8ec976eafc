"""The preview of a long session's end (`core.formats.tail`): its messages are the full load's last messages, cut
anywhere in the file; formats it cannot be right for, and bad input, give no preview (the app waits for the full
load)."""

from __future__ import annotations

from pathlib import Path

import pytest
from msgspec import structs

from inspector.core import categories as cat
from inspector.core.figures import Settings, compute
from inspector.core.figures.last_response import last_response_window, preview_figures
from inspector.core.formats import load
from inspector.core.formats.tail import tail
from inspector.core.model import Message

TESTS = Path(__file__).parent
CORPUS = TESTS / "corpus"
SESSIONS = TESTS.parent / "inspector" / "sessions"
CLAUDE_CODE = sorted(CORPUS.glob("claude-code-*.jsonl")) + sorted(SESSIONS.glob("claude-code-*.jsonl"))
CUTS = 40  # tails of 1/40, 2/40, ... of the file


def unnumbered(messages: list[Message]) -> list[Message]:
    """The messages as a preview holds them: without their line numbers."""
    copies = [structs.replace(m) for m in messages]
    for m in copies:
        m.lines = ()
    return copies


@pytest.mark.parametrize("path", CLAUDE_CODE, ids=lambda p: p.name)
def test_preview_is_the_end_of_the_full_load(path: Path) -> None:
    full = load(path)
    size = path.stat().st_size
    previews = 0
    for k in range(1, CUTS):
        preview = tail(path, tail_bytes=size * k // CUTS, worth=0)
        if preview is None:  # a tail with fewer than two responses
            continue
        previews += 1
        got = preview.session.messages
        assert got, k
        assert got == unnumbered(full.messages[-len(got):]), k  # blocks, kinds, uuids and byte offsets alike
        assert preview.session.warnings == []  # and no line numbers: the file's are the full load's to give
        assert {r.line for r in preview.session.requests} | {c.line for c in preview.session.compactions} <= {None}
        assert got[0].offset >= preview.offset > 0
        usage = [(r.id, r.input_tokens, r.cache_creation, r.cache_read, r.output_tokens) for r in (
            preview.session.requests[-1], full.requests[-1])]
        assert usage[0] == usage[1]
    if len(full.requests) > 4:  # the short ones have too few responses to cut between
        assert previews >= CUTS // 2, previews


def test_the_last_response_measures_the_window() -> None:
    path = CORPUS / "claude-code-manual-compact.jsonl"
    preview = tail(path, tail_bytes=100_000, worth=0)
    assert preview is not None
    w = last_response_window(preview.session, Settings())
    assert w is not None and w.used_measured
    assert w.used == load(path).requests[-1].measured_context
    assert w == last_response_window(load(path), Settings())


@pytest.mark.parametrize("path", CLAUDE_CODE, ids=lambda p: p.name)
def test_the_previews_figures_are_the_full_loads_where_usage_measures_them(path: Path) -> None:
    """Between two requests of one window the preview's messages hold what the full load's hold, and the context
    through each request's last message is the full load's; the categories add up to the window."""
    full = load(path)
    whole = compute(full, Settings())
    size, intervals = path.stat().st_size, 0
    for k in range(1, CUTS, 3):
        preview = tail(path, tail_bytes=size * k // CUTS, worth=0)
        if preview is None:
            continue
        s = preview.session
        f = preview_figures(s, Settings())
        off = len(full.messages) - len(s.messages)
        assert f.preview and f.micro_saving is None and f.accounting is None
        assert sum(v for _, v in f.categories) == f.window.used
        assert f.categories[0][0] == cat.NOT_READ and cat.SYSTEM_TOOLS not in dict(f.categories)
        prev = None
        for r in s.requests:
            if r.message_index < 0:
                continue
            if prev is not None and prev.seen_start == r.seen_start:
                intervals += 1
                span = range(prev.seen_end, r.seen_end)
                assert sum(map(f.size, span)) == sum(whole.size(off + i) for i in span), (k, r.id)
                assert f.cumulative[r.seen_end - 1] == whole.cumulative[off + r.seen_end - 1], (k, r.id)
            else:  # measured against what came before the preview: estimated
                assert all(f.basis(i) != "measured" for i in range(r.seen_start, r.seen_end))
            prev = r
    if len(full.requests) > 4:
        assert intervals > 0


@pytest.mark.parametrize("name", ["codex-rollout.jsonl", "neutral.jsonl", "anthropic-requests.jsonl"])
def test_other_formats_get_no_preview(name: str) -> None:
    path = TESTS / "fixtures" / "formats" / name
    assert tail(path, tail_bytes=max(1, path.stat().st_size // 3), worth=0) is None


def test_a_short_file_is_read_whole() -> None:
    path = CORPUS / "claude-code-manual-compact.jsonl"
    assert tail(path, tail_bytes=100_000) is None  # 2.7 MB: the full load is about as quick
    assert tail(path, tail_bytes=path.stat().st_size, worth=0) is None  # the tail would be the whole file


def test_bad_lines_in_the_tail(tmp_path: Path) -> None:
    """A corrupt line and an unfinished last write: the preview skips them as the full load does (which warns)."""
    lines = (CORPUS / "claude-code-manual-compact.jsonl").read_bytes().splitlines(keepends=True)
    lines[-40] = b'{"type": "user", "uuid": \n'
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(lines) + b'{"type": "assistant", "mess')
    full = load(path)
    assert any(w.line == len(lines) - 39 for w in full.warnings)
    preview = tail(path, tail_bytes=300_000, worth=0)
    assert preview is not None
    got = preview.session.messages
    assert got == unnumbered(full.messages[-len(got):])


def test_no_session_at_all(tmp_path: Path) -> None:
    garbage = tmp_path / "g.jsonl"
    garbage.write_bytes(bytes(range(1, 256)) * 400)
    assert tail(garbage, tail_bytes=1000, worth=0) is None
    assert tail(tmp_path / "missing.jsonl", worth=0) is None


def test_a_tail_of_another_window_is_no_preview(tmp_path: Path) -> None:
    """A main window whose file ends in a subagent's sidechain entries (the older layout): the full load shows the
    main window, which the tail does not hold."""
    path = tmp_path / "s.jsonl"
    path.write_bytes((CORPUS / "claude-code-short.jsonl").read_bytes()
                     + (CORPUS / "claude-code-subagent-explore.jsonl").read_bytes())
    assert load(path).messages[-1].uuid in {m.uuid for m in load(CORPUS / "claude-code-short.jsonl").messages}
    assert tail(path, tail_bytes=100_000, worth=0) is None
