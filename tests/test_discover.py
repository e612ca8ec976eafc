"""The picker's session discovery: every agent's store is one registry entry; a missing or unreadable store is
skipped silently; sessions of all stores come newest first, each named by its agent."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from inspector.app import discover as d

CORPUS = Path(__file__).parent / "corpus"


def _only(monkeypatch, *stores: d.Store) -> None:
    monkeypatch.setattr(d, "STORES", list(stores))


def test_stores_merge_newest_first_with_the_agent_named(tmp_path, monkeypatch):
    a, b = tmp_path / "a" / "p", tmp_path / "b" / "p"
    a.mkdir(parents=True)
    b.mkdir(parents=True)
    for folder, name, when in ((a, "old.jsonl", 1_000), (b, "mid.jsonl", 2_000), (a, "new.jsonl", 3_000)):
        shutil.copy(CORPUS / "claude-code-short.jsonl", folder / name)
        os.utime(folder / name, (when, when))
    _only(monkeypatch, d.Store("one", lambda: tmp_path / "a", d.glob_files("*/*.jsonl")),
          d.Store("two", lambda: tmp_path / "b", d.glob_files("*/*.jsonl")))
    found = [e for e in d.discover() if e.source != "sample"]
    assert [(e.source, e.path.name) for e in found] == [("one", "new.jsonl"), ("two", "mid.jsonl"),
                                                        ("one", "old.jsonl")]
    assert found[0].count_messages() == d.count_messages(found[0].path) > 0


def _broken(root: Path, agent: str):
    raise PermissionError(13, "Permission denied")
    yield  # a generator, as a store's listing is


@pytest.mark.parametrize("store", [
    d.Store("missing", lambda: Path("/nonexistent/store"), d.glob_files("*.jsonl")),
    d.Store("unset", lambda: None, d.glob_files("*.jsonl")),
    d.Store("unreadable", lambda: Path("/"), _broken),
])
def test_a_missing_or_unreadable_store_is_skipped(store, monkeypatch):
    _only(monkeypatch, store)
    assert all(e.source == "sample" for e in d.discover())


def test_claude_code_store_honours_its_config_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    assert d.claude_projects() == tmp_path / "cfg" / "projects"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", "")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert d.claude_projects() == tmp_path / ".claude" / "projects"
