"""Session text is data: markup, click actions and terminal escapes show literally and do nothing."""

from __future__ import annotations


from app_helpers import ready, row_text, until, write_jsonl

from inspector.app import make_app
from inspector.app.text import visible
from inspector.app.widgets.detail import DetailView
from inspector.app.widgets.message_list import MessageList

HOSTILE = "[bold red]x[/] [@click=app.quit]y[/] \x1b[31mred\x1b[0m \x1b]0;pwned\x07 \x9b2J end"


def _write(tmp_path):
    lines = [
        {"role": "user", "content": HOSTILE},
        {"role": "assistant", "content": [
            {"type": "text", "text": "running [link=file:///etc/passwd]it[/link]"},
            {"type": "tool_use", "id": "call_1", "name": "run", "input": {"command": HOSTILE}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": HOSTILE * 3},
    ]
    path = tmp_path / "hostile.jsonl"
    write_jsonl(path, lines)
    return path


async def test_markup_and_escapes_show_literally(tmp_path):
    app = make_app(_write(tmp_path), home=False)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(app, pilot)
        lst = screen.query_one(MessageList)
        detail = screen.query_one(DetailView)
        await pilot.press("g")
        await pilot.pause()
        first = row_text(lst, 0)
        assert "[bold red]x[/] [@click=app.quit]y[/]" in first
        assert "\x1b" not in first and "␛[31mred" in first
        await until(pilot, lambda: detail.plain.startswith("#0"))  # the detail pane follows the cursor
        assert "[bold red]x[/] [@click=app.quit]y[/] ␛[31mred␛[0m ␛]0;pwned␇ \\x9b2J end" in detail.plain
        rendered = "".join(seg.text for y in range(detail.size.height) for seg in detail.render_line(y))
        assert "[@click=app.quit]y[/]" in rendered and "\x1b" not in rendered and "\x07" not in rendered
        for key in ("j", "j", "enter", "tab", "j", "g", "2", "3", "1"):
            await pilot.press(key)
        await pilot.pause()
        assert "[link=file:///etc/passwd]it[/link]" in "\n".join(row_text(lst, r) for r in range(len(lst.rows)))
        # clicking where the fake [@click] text is drawn must not quit
        await pilot.press("g")
        await pilot.click(MessageList, offset=(60, 0))
        await pilot.pause()
        assert app.is_running and app.return_code is None


def test_visible_keeps_newlines_and_tabs():
    assert visible("a\tb\nc\x1b[0m\x7f\x85") == "a\tb\nc␛[0m␡\\x85"


async def test_huge_content_is_capped_and_expands_on_demand(tmp_path):
    from inspector.app.widgets.detail import CAP

    huge = "0123456789abcdef" * 400_000  # one 6.4 MB line, no newline in it
    lines = [{"role": "user", "content": "read it"},
             {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "run", "input": {}}]},
             {"role": "tool", "tool_call_id": "c1", "content": huge}]
    path = tmp_path / "huge.jsonl"
    write_jsonl(path, lines)
    app = make_app(path, home=False)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(app, pilot)
        detail = screen.query_one(DetailView)
        await pilot.press("G")
        await until(pilot, lambda: detail.plain.startswith("#2"))
        shown = sum(len(text) for text, _ in detail.lines)
        assert CAP <= shown < CAP + 2_000
        assert f"{len(huge) - CAP:,} more characters (press m to show more)" in detail.plain
        await pilot.press("tab", "m")  # the detail pane has focus: show five times more
        await pilot.pause()
        assert sum(len(text) for text, _ in detail.lines) > 4 * CAP
        await pilot.press("end")
        assert app.is_running
