"""Switching views, the prompt view and timeline on real sessions, settings that re-compute at once, the palette,
F1 help and the picker."""

from __future__ import annotations

import re
import shutil

from app_helpers import CORPUS, ready, until

from inspector.app import make_app
from inspector.app.palette import InspectorCommands
from inspector.app.screens.help import HelpScreen
from inspector.app.screens.main import MainScreen
from inspector.app.screens.picker import PickerScreen
from inspector.app.widgets.context_bar import ContextBar
from inspector.app.widgets.message_list import MessageList
from inspector.app.widgets.prompt_view import PromptView
from inspector.app.widgets.settings import SettingsPanel
from inspector.app.widgets.timeline import Timeline
from inspector.samples import sample_paths
from textual.widgets import DataTable, Input, Select, TabbedContent

SESSION = CORPUS / "claude-code-manual-compact.jsonl"


def _bar(screen) -> str:
    return screen.query_one(ContextBar).render().plain


async def test_switch_views_prompt_and_timeline():
    app = make_app(SESSION, home=False)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(app, pilot)
        tabs = screen.query_one(TabbedContent)
        await pilot.press("2")
        assert tabs.active == "prompt"
        prompt = screen.query_one(PromptView)
        sections = prompt.query_one("#prompt-sections", DataTable)
        assert sections.row_count == len(screen.figures.prompt.sections) >= 1
        assert "Unrecorded prefix" in str(sections.get_row_at(0)[0])
        await pilot.press("b")  # our agent's prompt for the session's directory (absent here: the current one)
        await until(pilot, lambda: prompt.prompt is not None)
        assert prompt.agent and sections.row_count == len(prompt.prompt.sections) > 3
        assert "agent prompt" in str(prompt.query_one("#prompt-summary").render())
        await pilot.press("b")
        assert sections.row_count == len(screen.figures.prompt.sections)
        await pilot.press("3")
        assert tabs.active == "timeline"
        text = screen.query_one(Timeline).render().plain
        assert "█ measured" in text and "compaction (1)" in text
        assert "forecast:" in text and "auto-compact in about" in text
        full = text
        await pilot.press("z")  # zoom to the session's own range: the same data, a taller chart
        zoomed = screen.query_one(Timeline).render().plain
        assert zoomed != full and "z: window" in zoomed
        await pilot.press("1")
        assert tabs.active == "messages" and screen.focused is screen.query_one(MessageList)


async def test_policy_and_window_move_the_bar():
    app = make_app(SESSION, home=False)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(app, pilot)
        before = screen.figures.window
        assert before.policy == "claude-code" and before.thresholds["autocompact"] == 167_000
        assert "measured" in _bar(screen)
        bar_before = _bar(screen)

        await pilot.press("s")
        panel = screen.query_one(SettingsPanel)
        assert panel.display
        panel.query_one("#set-policy", Select).value = "reference"
        await pilot.pause()
        await ready(app, pilot)
        await screen.workers.wait_for_complete()
        await pilot.pause()
        after = screen.figures.window
        assert after.policy == "reference" and after.thresholds["autocompact"] < before.thresholds["autocompact"]
        assert _bar(screen) != bar_before and "policy reference" in _bar(screen)

        window = panel.query_one("#set-window", Input)
        window.value = "1000000"
        await pilot.pause()
        await screen.workers.wait_for_complete()
        await pilot.pause()
        assert screen.figures.window.window == 1_000_000
        assert screen.figures.window.percent < after.percent

        await pilot.press("escape")
        assert not panel.display
        await pilot.press("p")  # cycle the policy with a key
        await screen.workers.wait_for_complete()
        await pilot.pause()
        assert screen.figures.window.policy == "claude-code"  # the one after reference
        assert panel.query_one("#set-policy", Select).value == "claude-code"


async def test_estimator_and_microcompaction_settings():
    app = make_app(SESSION, home=False)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(app, pilot)
        calibrated = list(screen.figures.estimated)
        saving = screen.figures.micro_saving
        assert saving and saving > 0
        await pilot.press("s")
        panel = screen.query_one(SettingsPanel)
        panel.query_one("#set-estimator", Select).value = "chars35"
        await pilot.pause()
        await screen.workers.wait_for_complete()
        await pilot.pause()
        assert screen.figures.settings.estimator == "chars35" and screen.figures.estimated != calibrated
        assert screen.figures.micro_saving != saving  # the note estimates as the figures do
        saving = screen.figures.micro_saving
        panel.query_one("#set-keep", Input).value = "0"
        await pilot.pause()
        await screen.workers.wait_for_complete()
        await pilot.pause()
        assert screen.figures.micro_saving > saving
        assert "keep 0" in _bar(screen)


async def test_palette_commands_and_help():
    app = make_app(SESSION, home=False)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(app, pilot)
        provider = InspectorCommands(screen)
        commands = {name: callback for name, callback, _ in provider._commands()}
        assert "Filter: tool Bash" in commands and "View: timeline" in commands
        commands["Policy: reference"]()
        await screen.workers.wait_for_complete()
        await pilot.pause()
        assert screen.figures.window.policy == "reference"
        commands["Filter: tool Bash"]()
        await pilot.pause()
        assert screen.query_one(MessageList).filter.tool == "Bash"

        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        table = app.screen.query_one(DataTable)
        ids = {str(table.get_row_at(r)[3]) for r in range(table.row_count)}
        assert {"list.largest", "list.search", "view.timeline", "main.settings", "app.help"} <= ids
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)


def test_every_binding_has_an_id():
    from inspector.app.app import InspectorApp
    from inspector.app.widgets.detail import DetailView

    for cls in (InspectorApp, MainScreen, PickerScreen, HelpScreen, MessageList, DetailView, Timeline):
        for binding in cls.BINDINGS:
            assert binding.id, f"{cls.__name__}: {binding.key} has no id"


async def test_picker_lists_samples_and_opens_one():
    app = make_app(None, home=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, PickerScreen)
        table = app.screen.query_one(DataTable)
        assert table.row_count == len(sample_paths()) == 3
        await app.screen.workers.wait_for_complete()
        await pilot.pause()
        assert all(e.messages for e in app.screen.entries)
        await pilot.press("down", "enter")
        screen = await ready(app, pilot)
        assert screen.path == app.screen.path and screen.session.compactions


async def test_picker_lists_claude_code_sessions(tmp_path, monkeypatch):
    """Newest write first, its time shown as "modified" beside the start the session states; a long project keeps
    its end and a long file name its start, so every column fits 140 cells."""
    import os
    from datetime import datetime

    project = tmp_path / "projects" / "-home-a-app"
    project.mkdir(parents=True)
    old, new = project / "abc.jsonl", project / ("a-very-long-session-file-name-" + "x" * 30 + ".jsonl")
    shutil.copy(CORPUS / "claude-code-short.jsonl", old)
    shutil.copy(CORPUS / "claude-code-manual-compact.jsonl", new)
    os.utime(old, (1_700_000_000, 1_700_000_000))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path))  # no Codex sessions
    app = make_app(None)
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        entries = app.screen.entries
        assert [e.path for e in entries[:2]] == [new, old] and entries[1].source == "claude-code"
        assert entries[1].project == "/home/marco/projects/spotter" and entries[1].started == "2026-02-10 21:11"
        assert entries[1].modified == datetime.fromtimestamp(1_700_000_000).strftime("%Y-%m-%d %H:%M")
        assert [e.source for e in entries[2:]] == ["sample"] * 3 and entries[2].modified == "-"
        table = app.screen.query_one(DataTable)
        row = [str(c) for c in table.get_row_at(0)]
        assert row[2] == "…" + entries[0].project[-29:] and len(row[2]) == 30
        stem = new.name.removesuffix(".jsonl")  # a cut file name keeps its start and its end
        assert row[3] == stem[:15] + "…" + stem[-14:]
        assert sum(col.get_render_width(table) for col in table.columns.values()) <= 140


async def test_directory_opens_a_picker_of_its_sessions(tmp_path):
    shutil.copy(CORPUS / "claude-code-short.jsonl", tmp_path / "one.jsonl")
    shutil.copy(CORPUS / "claude-code-short.jsonl", tmp_path / "two.jsonl")
    app = make_app(tmp_path, home=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, PickerScreen)
        assert sorted(e.path.name for e in app.screen.entries) == ["one.jsonl", "two.jsonl"]


async def test_unreadable_file_shows_an_error_and_keeps_running(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"\x00\x01binary")
    app = make_app(bad, home=False)
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(50):
            await pilot.pause(0.02)
            if "Cannot open" in str(app.screen.query_one("#loading-label").render()):
                break
        assert "binary file" in str(app.screen.query_one("#loading-label").render())
        assert "could not be opened" in str(app.screen.query_one(ContextBar).render())  # not "computing…"
        await pilot.press("j", "2", "3", "1")
        assert app.is_running


async def test_a_setting_that_cannot_apply_is_undone(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    app = make_app(SESSION, home=False)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(app, pilot)
        await pilot.press("s")
        panel = screen.query_one(SettingsPanel)
        panel.query_one("#set-estimator", Select).value = "exact"  # needs an API key
        await pilot.pause()
        await screen.workers.wait_for_complete()
        await pilot.pause()
        assert app.settings.estimator == screen.figures.settings.estimator == "calibrated"
        assert panel.query_one("#set-estimator", Select).value == "calibrated"
        assert any("ANTHROPIC_API_KEY" in n.message for n in app._notifications)


async def test_bar_adds_up_when_usage_runs_below_the_estimates_and_labels_a_mark_at_the_end():
    """The Codex fixture's window after compaction measured less than the prefix plus the estimates: the legend
    still shows the negative unrecorded figure (so its parts add up to the figure used), and the blocking mark at
    the window's very end is labelled before its ▲, with no room after it."""
    from conftest import FIXTURES

    app = make_app(FIXTURES / "formats" / "codex-rollout.jsonl", home=False)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(app, pilot)
        f = screen.figures
        assert dict(f.categories)["unrecorded"] < 0
        assert sum(t for _, t in f.categories) == f.window.used
        text = _bar(screen)
        assert re.search(r"■ unrecorded( \(not in the transcript\))? -2\.7k ■", text)  # (short when folded)
        marks = next(line for line in text.splitlines() if "▲" in line)
        assert marks.rstrip().endswith(("b▲", "block▲", "blocking▲"))  # before its mark: none would fit after it


async def test_the_bars_microcompaction_note_is_what_the_workbench_plans():
    """The session screen's "microcompact (clear, keep 5) frees ~N" estimates as its figures do (calibrated by
    default), so N is the saving the workbench then shows for the same strategy, not another estimator's."""
    from inspector.app.screens.workbench import WorkbenchScreen
    from inspector.samples import SAMPLE_DIR

    app = make_app(SAMPLE_DIR / "claude-code-tool-heavy.jsonl", home=False)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await ready(app, pilot)
        assert screen.figures.settings.estimator is None or screen.figures.settings.estimator == "calibrated"
        note = screen.figures.micro_saving
        assert note and note > 50_000
        await pilot.press("c")
        wb = app.screen
        assert isinstance(wb, WorkbenchScreen)
        wb.set_strategy("clear")
        await until(pilot, lambda: wb.preview is not None and wb.preview.plan.strategy == "clear")
        assert wb.preview.figures.saved == note  # the bars' figures before minus after: the step's delta
        await pilot.press("a")
        await until(pilot, lambda: wb.stack.position == 1 and screen.shown.exact)
        assert screen.figures.window.used == wb.stack.original.figure - note
