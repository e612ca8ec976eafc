"""A session cut at any byte (a live write, a crash) loads without an exception, and every complete line's content
comes through intact: the cut file loads exactly like the file holding only its complete lines (a last line that
lacks only its newline counts as complete), plus one warning naming the unfinished line it did not read."""

from hypothesis import given, settings, strategies as st

from inspector.core.formats import load
from inspector.core.formats.jsonl import unfinished

from conftest import CORPUS

SHORT = (CORPUS / "claude-code-short.jsonl").read_bytes()
# The first 300 lines of the long session: split responses, parallel tool calls, progress chains, snapshots.
LONG = b"".join((CORPUS / "claude-code-manual-compact.jsonl").read_bytes().splitlines(keepends=True)[:300])


def snapshot(session):
    return ([(m.role, m.kind, m.lines, [b.to_api() for b in m.blocks]) for m in session.messages],
            [(r.id, r.measured_context, r.output_tokens, r.message_index) for r in session.requests],
            [(w.line, w.message) for w in session.warnings])


def check_cut(tmp_path, data, cut):
    cut_file, whole_lines = tmp_path / "cut.jsonl", tmp_path / "whole.jsonl"
    cut_file.write_bytes(data[:cut])
    end = cut + 1 if data[cut:cut + 1] == b"\n" else data.rfind(b"\n", 0, cut) + 1  # a line missing only its
    whole_lines.write_bytes(data[:end])  # newline is complete, and loads
    try:
        got = load(cut_file)
    except Exception as exc:  # only an empty file may refuse to load, with the one-line LoadError
        assert type(exc).__name__ == "LoadError" and data[:cut].count(b"\n") == 0, exc
        return
    assert all("corrupt" not in w.message for w in got.warnings)
    want = snapshot(load(whole_lines))
    if data[end:cut].strip():  # a piece of a line: said, with its line number and size
        want[2].append((data[:cut].count(b"\n") + 1, unfinished(cut - end)))
    got_snapshot = snapshot(got)
    got_snapshot[2].sort()
    want[2].sort()  # (the loader's warnings come before load's own checks)
    assert got_snapshot == want


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_short_session_cut_anywhere(tmp_path_factory, data):
    cut = data.draw(st.integers(0, len(SHORT)))
    check_cut(tmp_path_factory.mktemp("cut"), SHORT, cut)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_long_session_cut_anywhere(tmp_path_factory, data):
    cut = data.draw(st.integers(len(LONG) // 2, len(LONG)))
    check_cut(tmp_path_factory.mktemp("cut"), LONG, cut)


def test_complete_messages_keep_the_content_of_the_full_file(tmp_path):
    """Single-line messages loaded from a cut file equal the same messages from the whole file."""
    full = {m.lines: [b.to_api() for b in m.blocks] for m in load(CORPUS / "claude-code-short.jsonl").messages}
    path = tmp_path / "cut.jsonl"
    path.write_bytes(SHORT[:len(SHORT) * 3 // 4])
    for m in load(path).messages:
        if len(m.lines) == 1:
            assert [b.to_api() for b in m.blocks] == full[m.lines]


def test_cuts_at_every_line_boundary(tmp_path):
    """The edges hypothesis rarely draws: just before, at and after every newline."""
    ends = [i for i, byte in enumerate(SHORT) if byte == ord("\n")]
    for n, p in enumerate(ends):
        for cut in (p - 1, p, p + 1):
            folder = tmp_path / f"{n}-{cut}"
            folder.mkdir()
            check_cut(folder, SHORT, cut)
