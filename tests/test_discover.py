"""The picker's session discovery: every agent's store is one registry entry; a missing or unreadable store is
skipped silently; sessions of all stores come newest first, each named by its agent."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from inspector.core import discover as d
from inspector.core.formats import load

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
    _only(monkeypatch, d.Store("one", lambda: [tmp_path / "a"], d.glob_files("*/*.jsonl")),
          d.Store("two", lambda: [tmp_path / "b"], d.glob_files("*/*.jsonl")))
    found = [e for e in d.discover() if e.source != "sample"]
    assert [(e.source, e.path.name) for e in found] == [("one", "new.jsonl"), ("two", "mid.jsonl"),
                                                        ("one", "old.jsonl")]
    assert found[0].estimate() == d.count_messages(found[0].path) > 0
    assert found[0].count(time.monotonic() + 60) == (len(load(found[0].path).messages), True)


def _broken(root: Path, agent: str):
    raise PermissionError(13, "Permission denied")
    yield  # a generator, as a store's listing is


@pytest.mark.parametrize("store", [
    d.Store("missing", lambda: [Path("/nonexistent/store")], d.glob_files("*.jsonl")),
    d.Store("unset", lambda: [], d.glob_files("*.jsonl")),
    d.Store("unreadable", lambda: [Path("/")], _broken),
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


# -- the agents' stores, from the lab's real files --------------------------------------------------------------

AGENTS = Path(__file__).parent / "fixtures" / "agents"


def _home_of(agent_version: str, scenario: str, tmp_path: Path, name: str) -> Path:
    """A copy of a lab fixture's HOME (the agent's store as the agent wrote it)."""
    target = tmp_path / name
    shutil.copytree(AGENTS / agent_version / scenario / "home", target)
    return target


def _no_store(monkeypatch, tmp_path: Path) -> None:
    for var in ("CLAUDE_CONFIG_DIR", "GEMINI_CLI_HOME", "QWEN_HOME", "QWEN_RUNTIME_DIR", "XDG_DATA_HOME",
                "OPENCODE_DB"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "nobody"))


def test_every_agents_store_is_listed_newest_first_with_the_agent_named(tmp_path, monkeypatch):
    _no_store(monkeypatch, tmp_path)
    gemini = _home_of("gemini-0.61.0", "read-file", tmp_path, "g")
    qwen = _home_of("qwen-0.24.4", "read-file", tmp_path, "q")
    opencode = _home_of("opencode-1.18.33", "compaction", tmp_path, "o")
    monkeypatch.setenv("GEMINI_CLI_HOME", str(gemini))
    monkeypatch.setenv("QWEN_HOME", str(qwen / ".qwen"))
    monkeypatch.setenv("XDG_DATA_HOME", str(opencode / ".local" / "share"))
    [g] = gemini.glob(".gemini/tmp/*/chats/*.jsonl")
    [q] = qwen.glob(".qwen/projects/*/chats/*.jsonl")
    os.utime(g, (3_000_000_000, 3_000_000_000))
    os.utime(q, (1_000_000_000, 1_000_000_000))
    found = [e for e in d.discover() if e.source != "sample"]
    assert [e.source for e in found] == ["gemini-cli", "opencode", "qwen-code"]  # opencode: its session's time
    by = {e.source: e for e in found}
    assert by["gemini-cli"].project == "/tmp/context-inspector-lab/gemini/read-file/work"  # .project_root
    assert by["qwen-code"].project == "/tmp/context-inspector-lab/qwen/read-file/work"
    oc = by["opencode"]
    assert oc.path.name.startswith("opencode.db#ses_") and oc.project.endswith("/opencode/compaction/work")
    assert oc.estimate() == oc.messages > 0 and oc.size > 0  # the database's rows, before it is loaded
    assert by["gemini-cli"].estimate() == 4  # prompt, two model turns, the tool response (not $set copies)
    assert load(oc.path).format == "opencode" and load(by["gemini-cli"].path).format == "gemini-cli"
    for e in found:  # counted, the number the app will show
        assert e.count(time.monotonic() + 60) == (len(load(e.path).messages), True)


def test_the_env_overrides_each_agent_honours(tmp_path, monkeypatch):
    _no_store(monkeypatch, tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert d.gemini_projects() == tmp_path / ".gemini" / "tmp"
    assert d.qwen_projects() == tmp_path / ".qwen" / "projects"
    assert d.opencode_data() == tmp_path / ".local" / "share" / "opencode"
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "g"))
    monkeypatch.setenv("QWEN_HOME", str(tmp_path / "qh"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "x"))
    assert d.gemini_projects() == tmp_path / "g" / ".gemini" / "tmp"
    assert d.qwen_projects() == tmp_path / "qh" / "projects"
    monkeypatch.setenv("QWEN_RUNTIME_DIR", str(tmp_path / "qr"))  # Qwen Code's runtime directory wins over QWEN_HOME
    assert d.qwen_projects() == tmp_path / "qr" / "projects"
    assert d.opencode_data() == tmp_path / "x" / "opencode"


def test_opencode_db_names_the_database_and_a_broken_one_is_skipped(tmp_path, monkeypatch):
    _no_store(monkeypatch, tmp_path)
    home = _home_of("opencode-1.18.33", "shell", tmp_path, "o")
    data = home / ".local" / "share" / "opencode"
    (data / "opencode.db").rename(data / "elsewhere.db")
    (data / "opencode-beta.db").write_bytes(b"SQLite format 3\x00" + b"\x00" * 200)  # a channel database, broken
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    assert [e for e in d.discover() if e.source == "opencode"] == []  # the broken one skipped, silently
    monkeypatch.setenv("OPENCODE_DB", "elsewhere.db")  # relative: in the data directory, as opencode takes it
    [e] = [e for e in d.discover() if e.source == "opencode"]
    assert e.path.name.startswith("elsewhere.db#ses_")
    monkeypatch.setenv("OPENCODE_DB", str(data / "elsewhere.db"))
    assert [x.path for x in d.discover() if x.source == "opencode"] == [e.path]


async def test_the_picker_opens_an_opencode_session(tmp_path, monkeypatch):
    from app_helpers import ready
    from inspector.app import make_app

    _no_store(monkeypatch, tmp_path)
    home = _home_of("opencode-1.18.33", "read-file", tmp_path, "o")
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    app = make_app(None)
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        assert app.screen.entries[0].source == "opencode"
        await pilot.press("enter")
        screen = await ready(app, pilot)
        assert screen.session.format == "opencode" and len(screen.session.messages) == 4
        assert screen.figures.window.policy == "opencode"


def test_the_picker_lists_every_agent_store_copilot_cline_roo_and_kimi_included(tmp_path, monkeypatch):
    """The agents kept in `core.formats.agent_stores` (several roots each, per editor) are stores of the picker's
    registry too: their sessions are listed with the agent named and counted by a load."""
    from conftest import FIXTURES

    agents = {s.agent for s in d.STORES}
    assert {"claude-code", "codex", "gemini-cli", "qwen-code", "opencode", "copilot", "cline", "roo-code",
            "cline-sdk", "kimi"} <= agents
    source = next((FIXTURES / "agents").glob("copilot-*/basic/**/events.jsonl"))
    home = tmp_path / "copilot"
    (home / "session-state" / "abc").mkdir(parents=True)
    shutil.copy(source, home / "session-state" / "abc" / "events.jsonl")
    monkeypatch.setenv("COPILOT_HOME", str(home))
    copilot = next(s for s in d.STORES if s.agent == "copilot")
    (entry,) = d.store_entries(copilot)
    assert entry.source == "copilot" and entry.count(time.monotonic() + 60) == (len(load(entry.path).messages), True)


def test_counts_are_what_the_app_shows_for_every_lab_fixture_and_estimates_only_past_the_budget():
    """The picker's count of a session is its loader's, the number the session screen's title then states, for
    every agent's real files (the quick scans were off: a Codex rollout's 6 for 22, a Claude Code session's 481
    for 466); past the time budget, or for a file too large to load for a count, an estimate, marked as such."""
    from conftest import FIXTURES

    homes = sorted((FIXTURES / "agents").glob("*/*/home")) + sorted((FIXTURES / "agents").glob("*/*/store"))
    paths = [p for h in homes for p in h.rglob("*") if p.is_file() and (p.suffix in (".jsonl", ".json", ".db"))
             and "agent-" not in p.name and "config" not in p.name and "settings" not in p.name]
    entries = [e for p in paths if (e := d.file_entry(p, "lab")) is not None]
    entries += [d.file_entry(CORPUS / "claude-code-manual-compact.jsonl", "corpus")]
    counted: dict[Path, tuple[int, bool]] = {}
    for row, n, exact in d.count_all(entries, budget=600):
        e = entries[row]
        try:
            shown = len(load(e.path).messages)
        except Exception:
            continue  # not a session on its own (a Kimi wire log): the app says why when it is opened
        counted[e.path] = (n, exact)
        assert exact and n == shown, e.path
    assert len(counted) > 40
    assert counted[CORPUS / "claude-code-manual-compact.jsonl"] == (466, True)
    late = list(d.count_all(entries[:3], budget=0))  # the budget spent: estimates, said to be
    assert late and all(not exact for _, _, exact in late)


async def test_the_picker_shows_a_count_as_it_is_and_an_estimate_with_a_tilde(tmp_path, monkeypatch):
    from textual.widgets import DataTable

    from inspector.app import make_app

    _no_store(monkeypatch, tmp_path)
    monkeypatch.setattr(d, "EXACT_BYTES", 500_000)  # the 672 KB sample is too large to load for a count
    app = make_app(None)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        await app.screen.workers.wait_for_complete()
        await pilot.pause()
        table = app.screen.query_one(DataTable)
        cells = {e.path.name: str(table.get_cell(str(n), "messages")) for n, e in enumerate(app.screen.entries)}
        assert cells["claude-code-tool-heavy.jsonl"] == "36" and cells["agent-short.jsonl"] == "10"
        assert cells["claude-code-autocompact.jsonl"] == "~235"
