"""The line index: chunked reads, incremental reads from where it stopped, an unfinished last line held back."""

import pytest

from inspector.core.index import FileShrunk, LineIndex, read_line


def lines_of(index):
    return [(n, off, raw) for n, off, raw in index.read_new()]


@pytest.mark.parametrize("chunk", [1, 3, 7, 64, 1 << 20])
def test_offsets_and_lines_match_the_file_whatever_the_chunk_size(tmp_path, chunk):
    data = b'{"a":1}\n\n{"b":"' + b"x" * 50 + b'"}\r\n{"c":3}\n'
    path = tmp_path / "s.jsonl"
    path.write_bytes(data)
    got = lines_of(LineIndex(path, chunk_size=chunk))
    expected, pos = [], 0
    for n, raw in enumerate(data.split(b"\n")[:-1], 1):
        expected.append((n, pos, raw))
        pos += len(raw) + 1
    assert got == expected


def test_unterminated_last_line_is_held_back_until_its_newline_arrives(tmp_path):
    path = tmp_path / "live.jsonl"
    path.write_bytes(b'{"n":1}\n{"n":2')
    index = LineIndex(path, chunk_size=4)
    assert [raw for _, _, raw in index.read_new()] == [b'{"n":1}']
    assert index.tail() == b'{"n":2' and index.pending() == 6
    with open(path, "ab") as f:
        f.write(b'2}\n{"n":3}\n')
    assert lines_of(index) == [(2, 8, b'{"n":22}'), (3, 17, b'{"n":3}')]
    assert lines_of(index) == []
    assert index.pending() == 0 and len(index) == 3
    assert index.read_line(2) == b'{"n":22}'


def test_read_line_rereads_one_raw_line_by_offset_including_long_ones(tmp_path):
    long = b'{"big":"' + b"y" * 300_000 + b'"}'
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"a":1}\n' + long + b'\n{"z":0}\n')
    index = LineIndex(path, chunk_size=1000)
    got = lines_of(index)
    assert got[1][2] == long
    assert read_line(path, got[1][1]) == long
    assert read_line(path, got[2][1]) == b'{"z":0}'
    with pytest.raises(IndexError):
        index.read_line(4)


def test_a_file_that_shrinks_is_reported(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"a":1}\n{"b":2}\n')
    index = LineIndex(path)
    lines_of(index)
    path.write_bytes(b'{"a":1}\n')
    with pytest.raises(FileShrunk):
        lines_of(index)


def test_stopping_early_leaves_the_index_at_the_last_line_yielded(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(b'{"n":%d}\n' % i for i in range(10)))
    index = LineIndex(path, chunk_size=16)
    for n, _, _ in index.read_new():
        if n == 4:
            break
    assert len(index) == 4
    assert [n for n, _, _ in index.read_new()] == list(range(5, 11))
