"""The rough edges a new user hits (issue 20): keys that skip what cannot run, labels that say what is shown,
help that lists each key once, Codex sessions described in Codex's terms."""

from __future__ import annotations

from app_helpers import CORPUS, ready, until

from inspector.app import make_app
from inspector.samples import SAMPLE_DIR

SESSION = CORPUS / "claude-code-manual-compact.jsonl"


async def test_next_estimator_skips_exact_without_a_key_and_says_why_once(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    from inspector.app.widgets.settings import estimator_names

    names = estimator_names()
    app = make_app(SAMPLE_DIR / "agent-short.jsonl", home=False)
    told: list[str] = []
    notify = app.notify

    def noted(message, *args, **kwargs):
        told.append(f"{message}\n{kwargs.get('title') or ''}")
        return notify(message, *args, **kwargs)

    monkeypatch.setattr(app, "notify", noted)
    async with app.run_test(size=(120, 40)) as pilot:  # notifications expire: count them as they are sent
        screen = await ready(app, pilot)
        seen = []
        for _ in range(2 * len(names)):
            await pilot.press("e")
            await screen.workers.wait_for_complete()
            await pilot.pause()
            seen.append(screen.figures.settings.estimator)
        assert "exact" not in seen and set(seen) == set(names) - {"exact"}  # it moves through every other one
        skipped = [m for m in told if m.startswith("skipping exact")]
        assert len(skipped) == 1 and "ANTHROPIC_API_KEY" in skipped[0]
        assert not any("not applied" in m for m in told)


async def test_help_in_the_workbench_lists_each_key_once_with_whole_ids_and_end_scrolls():
    from textual.widgets import DataTable

    from inspector.app.screens.help import HelpScreen
    from inspector.app.screens.workbench import WorkbenchScreen

    app = make_app(SAMPLE_DIR / "claude-code-autocompact.jsonl", home=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        await pilot.press("c")
        assert isinstance(app.screen, WorkbenchScreen)
        await pilot.press("f1")
        help_ = app.screen
        assert isinstance(help_, HelpScreen)
        table = help_.query_one(DataTable)
        rows = [[str(c) for c in table.get_row_at(r)] for r in range(table.row_count)]
        ids = {b.id for cls in (WorkbenchScreen, type(app)) for b in cls.BINDINGS}
        assert {r[3] for r in rows if r[3]} >= {"workbench.apply", "workbench.undo", "app.quit"}
        for keys, action, where, bid in rows:
            shown = keys.split(", ")
            assert len(shown) == len(set(shown)), keys  # never "↑, ↑, ↑"
            assert "help_quit" not in action
            assert not bid or bid in ids or "." in bid and not bid.endswith("…")  # whole
        assert table.columns[list(table.columns)[3]].width >= max(len(r[3]) for r in rows)
        assert table.size.width <= 80
        await pilot.press("end")
        assert table.cursor_row == table.row_count - 1
        await pilot.press("home")
        assert table.cursor_row == 0


async def test_the_session_screen_names_the_workbench_step_it_shows_and_the_export_names_the_session_id(tmp_path):
    import shutil

    from textual.widgets import Input

    from inspector.app.screens.main import MainScreen
    from inspector.app.widgets.title import TitleBar
    from inspector.core.export import claude_code_session_id

    path = shutil.copy(SAMPLE_DIR / "claude-code-autocompact.jsonl", tmp_path / "s.jsonl")
    app = make_app(path, home=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await ready(app, pilot)
        await pilot.press("c")
        wb = app.screen
        await until(pilot, lambda: wb.preview is not None)
        await pilot.press("a")
        await until(pilot, lambda: wb.stack.position == 1 and screen.shown.exact)
        out = tmp_path / "out.jsonl"
        await pilot.press("x")
        wb.query_one("#wb-ask-input", Input).value = str(out)
        await pilot.press("enter")
        await until(pilot, lambda: wb.last_export == out)
        sid = claude_code_session_id(out)
        assert any(f"claude --resume {sid}" in n.message for n in app._notifications)
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)
        title = screen.query_one(TitleBar)
        assert "workbench step 1 of 1: clear" in title.text and "(not saved)" in title.text
        drawn = str(title.render())
        assert "step 1 of 1" in drawn and "(not saved)" in drawn and len(drawn) <= 78  # kept as the title shrinks


def test_a_compaction_that_grows_the_context_reads_as_growth():
    from inspector.core.compaction.diff import freed, render_totals

    assert freed(6904, 29690) == "freed 6,904 (23.3%)"
    assert freed(-28, 1000) == "grew by 28 (+2.8%)" and freed(-28) == "grew by 28"
    assert "--" not in render_totals(100, 128, {"summarized": 3}) and "grew by 28" in render_totals(100, 128, {})


async def test_a_separator_of_a_growing_compaction_says_so():
    from app_helpers import row_text

    from inspector.app.widgets.message_list import MessageList

    app = make_app(SAMPLE_DIR / "claude-code-autocompact.jsonl", home=False)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await ready(app, pilot)
        lst = screen.query_one(MessageList)
        screen.session.compactions[0].tokens_saved = -28
        lst._cache.clear()
        text = row_text(lst, lst.rows.index(-1))
        assert "grew by 28" in text and "-28" not in text


def test_quitting_does_not_wait_for_the_figures_being_computed(monkeypatch):
    """`q` while the load worker computes the figures (seconds on a 100,000-message session: bench_quit.py) ends
    the app before the computation does: the worker runs on a daemon thread (app/threads.py)."""
    import threading

    from inspector.app.shown import Shown

    computing, release, finished = threading.Event(), threading.Event(), threading.Event()

    def slow(self, session, links):
        computing.set()
        release.wait(30)
        finished.set()
        raise RuntimeError("never shown")

    monkeypatch.setattr(Shown, "compute_now", slow)
    app = make_app(SAMPLE_DIR / "agent-short.jsonl", home=False)

    def quit_while_computing() -> None:
        if computing.wait(30):
            app.call_from_thread(app.exit)

    threading.Thread(target=quit_while_computing, daemon=True).start()
    try:
        app.run(headless=True, size=(80, 24))
        assert computing.is_set() and not finished.is_set()  # the app ended first
    finally:
        release.set()


def test_the_pickers_cut_names_stay_told_apart():
    from inspector.app.screens.picker import _clip

    samples = [_clip(p.name, 12) for p in sorted(SAMPLE_DIR.glob("*.jsonl"))]
    assert len(set(samples)) == len(samples) and all(len(s) <= 12 for s in samples)
    assert _clip("0f3a9c1e-5b2d-4c11-9a77-1e2f3a4b5c6d.jsonl", 12) == "0f3a9c…b5c6d"
    assert _clip("short.jsonl", 12) == "short.jsonl"  # whole when it fits
    assert _clip("/home/u/projects/notes", 12, keep="end") == "…jects/notes"
