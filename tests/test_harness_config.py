"""The agents' settings files, read defensively: comments where the agent allows them, nothing lost from strings."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.core.formats.harness_config import read_json, settings_share, without_comments, without_trailing_commas

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet=st.sampled_from('ab/*"\\\n é,}]')),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(alphabet="ab/*", max_size=4), inner,
                                                                 max_size=4),
    max_leaves=12)


@settings(max_examples=200, deadline=None)
@given(JSON_VALUES)
def test_json_without_comments_is_left_as_it_is(value):
    """Slashes and stars inside strings are no comments, nor `,}` a trailing comma: a plain JSON document comes back
    byte for byte."""
    text = json.dumps(value, ensure_ascii=False)
    assert without_comments(text) == text and without_trailing_commas(text) == text


def test_trailing_commas_go_where_opencode_allows_them(tmp_path):
    path = tmp_path / "opencode.jsonc"
    path.write_text('{"a": [1, 2, ], "b": {"c": ",}",\n},  // so\n}')
    assert read_json(path, comments=True) == {}
    assert read_json(path, comments=True, trailing_commas=True) == {"a": [1, 2], "b": {"c": ",}"}}


def test_comments_go_and_the_settings_are_read_where_the_agent_allows_them(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text('{\n  // Gemini CLI reads this file with strip-json-comments\n  "url": "http://example.test//x",\n'
                    '  /* a block\n  comment */ "model": {"compressionThreshold": 0.25} // after\n}')
    assert read_json(path) == {}  # strict where the agent is (Claude Code's files)
    assert read_json(path, comments=True) == {"url": "http://example.test//x", "model": {"compressionThreshold": 0.25}}
    assert settings_share([path], "model", "compressionThreshold") == {"compact_pct": 25}
    path.write_text('{"model": {"compressionThreshold": 0.25}} /* never closed')
    assert read_json(path, comments=True) == {"model": {"compressionThreshold": 0.25}}
    path.write_bytes(b"\xff\xfe{ not json")
    assert read_json(path, comments=True) == {} and read_json(tmp_path / "missing.json") == {}


def test_a_note_names_the_file_that_set_each_option(tmp_path, monkeypatch):
    """The policy's note says where the harness was set, a file under the home as ~/..."""
    from inspector.core.formats.harness_config import Stated
    from inspector.core.limits import window_info
    from inspector.core.model import Session

    monkeypatch.setenv("HOME", str(tmp_path))
    stated = Stated()
    stated.set("compact_pct", 40, tmp_path / ".gemini" / "settings.json")
    stated.set("compact_pct", 30, "/etc/gemini-cli/settings.json")  # a later file wins, and is the one named
    assert stated == {"compact_pct": 30} and stated.copy().files == {"compact_pct": "/etc/gemini-cli/settings.json"}
    stated.set("compact_pct", 40, tmp_path / ".gemini" / "settings.json")
    info = window_info(Session("s.jsonl", "gemini-cli", compaction_settings=stated))
    assert "as its harness is set: compact_pct 40 (~/.gemini/settings.json)" in info.notes
    stated.drop("compact_pct")
    assert stated == {} and stated.files == {}
