"""The message list on a real Claude Code session: rows, separators, movement, sort, filter, largest."""

from __future__ import annotations

from app_helpers import CORPUS, ready, row_text, until, write_jsonl

from inspector.app import make_app
from inspector.app.messages import Loaded, LoadProgress
from inspector.app.widgets.detail import DetailView
from inspector.app.widgets.message_list import Filter, MessageList

SESSION = CORPUS / "claude-code-manual-compact.jsonl"


async def test_rows_separator_and_movement():
    posted = []
    app = make_app(SESSION, home=False)
    async with app.run_test(size=(120, 40), message_hook=posted.append) as pilot:
        screen = await ready(app, pilot)
        s = screen.session
        lst = screen.query_one(MessageList)
        assert len(lst.rows) == len(s.messages) + len(s.compactions)
        boundary = s.compactions[0].index
        sep_row = lst.rows.index(-1)
        assert lst.rows[sep_row + 1] == boundary
        assert "compact (manual)" in row_text(lst, sep_row) and "142,431" in row_text(lst, sep_row)
        # opens on the newest message
        assert lst.current_index == len(s.messages) - 1
        await pilot.press("g")
        assert lst.cursor == 0 and lst.current_index == 0
        await pilot.press("j", "j", "down")
        assert lst.cursor == 3
        await pilot.press("k")
        assert lst.cursor == 2
        await pilot.press("pagedown")
        page = lst.cursor
        assert page > 10
        assert lst.scroll_offset.y <= page < lst.scroll_offset.y + lst.size.height
        await pilot.press("G")
        assert lst.current_index == len(s.messages) - 1
        assert lst.scroll_offset.y > 0
        # the detail pane follows the cursor
        await pilot.press("home")
        await pilot.pause()
        await until(pilot, lambda: screen.query_one(DetailView).plain.startswith("#0  user"))
    assert any(isinstance(m, LoadProgress) and m.done == m.total > 0 for m in posted)


async def test_sort_largest_and_filter():
    app = make_app(SESSION, home=False)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(app, pilot)
        f = screen.figures
        lst = screen.query_one(MessageList)
        largest = max(range(len(f.estimated)), key=f.size)
        await pilot.press("g", "L")
        assert lst.current_index == largest
        await pilot.press("o")
        assert lst.by_size and lst.rows[0] == largest
        sizes = [f.size(r) for r in lst.rows]
        assert sizes == sorted(sizes, reverse=True)
        await pilot.press("o")
        assert lst.rows[:3] == [0, 1, 2]

        await pilot.press("slash")
        await pilot.press(*"tool:Bash", "enter")
        await pilot.pause()
        names = f.tool_names
        shown = [r for r in lst.rows if r >= 0]
        assert 0 < len(shown) < len(f.estimated)
        assert -1 in lst.rows  # the compaction boundary stays as a landmark among filtered rows
        for r in shown:
            m = f.session.messages[r]
            used = [b.tool_name if b.type == "tool_use" else names.get(b.tool_id) for b in m.blocks]
            assert "Bash" in used
        assert "tool:Bash" in str(screen.query_one("#status").render())
        await pilot.press("escape")
        assert not lst.filter.active and len(lst.rows) == len(f.estimated) + 1

        screen.apply_filter(Filter.parse("kind:user"))
        await pilot.pause()
        assert lst.rows and all(f.session.messages[r].kind == "prompt" for r in lst.rows if r >= 0)
        screen.apply_filter(Filter.parse("OpenTelemetry"))
        await pilot.pause()
        assert all("opentelemetry" in f.session.messages[r].text().lower() for r in lst.rows if r >= 0)
        screen.apply_filter(Filter.parse("no such words anywhere xyzzy"))
        await pilot.pause()
        assert lst.rows == [-1]
        await pilot.press("j", "k")
        assert lst.current_index is None


async def test_click_selects_a_row():
    app = make_app(SESSION, home=False)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(app, pilot)
        lst = screen.query_one(MessageList)
        await pilot.press("g")
        await pilot.click(MessageList, offset=(5, 4))
        assert lst.cursor == 4


async def test_messages_appended_adds_only_new_rows():
    from inspector.core.figures import compute

    app = make_app(CORPUS / "claude-code-short.jsonl", home=False)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(app, pilot)
        lst = screen.query_one(MessageList)
        full = screen.session
        n = len(full.messages)
        cut = full.copy_with(messages=full.messages[: n - 2], requests=[])
        lst.show(compute(cut, screen.settings))
        assert len(lst.rows) == n - 2
        lst.messages_appended(n - 2, compute(full, screen.settings))
        assert lst.rows[-2:] == [n - 2, n - 1] and len(lst.rows) == n


async def test_orphan_tool_calls_are_flagged(tmp_path):
    lines = [{"role": "user", "content": "go"},
             {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "run", "input": {}}]},
             {"role": "tool", "tool_call_id": "a", "content": "ok"},
             {"role": "assistant", "content": [{"type": "tool_use", "id": "b", "name": "run", "input": {}}]},
             {"role": "user", "content": "never mind"}]
    path = tmp_path / "orphan.jsonl"
    write_jsonl(path, lines)
    app = make_app(path, home=False)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(app, pilot)
        lst = screen.query_one(MessageList)
        assert screen.figures.orphans == {3}
        assert "orphan" in row_text(lst, 3) and "orphan" not in row_text(lst, 1)
        lst.select_message(3)
        await pilot.pause()
        await until(pilot, lambda: "orphan: a tool call without its result" in screen.query_one(DetailView).plain)


async def test_first_frame_comes_before_the_file_is_read():
    order: list[str] = []
    app = make_app(SESSION, home=False)
    display = app._display

    def noting(screen, renderable):
        display(screen, renderable)
        if renderable is not None and not order:
            order.append("frame")

    app._display = noting
    async with app.run_test(size=(120, 40), message_hook=lambda m: isinstance(m, LoadProgress | Loaded)
                            and order.append(type(m).__name__)) as pilot:
        await ready(app, pilot)
    assert order[0] == "frame" and "Loaded" in order


async def test_filter_runs_in_a_worker_on_big_sessions(monkeypatch):
    from inspector.app.widgets import message_list

    monkeypatch.setattr(message_list, "THREADED_FILTER", 10)  # the corpus session counts as big
    app = make_app(SESSION, home=False)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(app, pilot)
        lst = screen.query_one(MessageList)
        screen.apply_filter(Filter.parse("tool:Bash"))
        await lst.workers.wait_for_complete()
        await pilot.pause()
        names = screen.figures.tool_names
        shown = [r for r in lst.rows if r >= 0]
        assert shown and all(any(b.tool_name == "Bash" or names.get(b.tool_id) == "Bash"
                                 for b in screen.session.messages[r].blocks) for r in shown)
        screen.apply_filter(Filter.parse("OpenTelemetry"))
        screen.apply_filter(Filter.parse("xyzzy nothing"))  # the newer filter wins over the one still running
        for _ in range(200):
            await pilot.pause(0.01)
            if not [r for r in lst.rows if r >= 0]:
                break
        await pilot.pause(0.2)  # the first worker's late answer, if any, must not bring its rows back
        assert [r for r in lst.rows if r >= 0] == [] and lst.filter.text == "xyzzy nothing"
