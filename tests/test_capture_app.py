"""The app's "Capture" command: a proxy started from the palette, its file followed while an SDK client talks
through it; and `--follow` of a capture file written by another process."""

from __future__ import annotations

import asyncio
import os
import stat

import anthropic

from inspector.app import make_app
from inspector.app.screens.main import MainScreen
from mock_api import MOCK_KEY, responses as r
from test_live_app import until

TOOLS = [{"name": "read", "input_schema": {"type": "object"}}]


async def test_the_capture_command_follows_what_the_proxy_records(tmp_path, monkeypatch, mock_api):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))  # mock_api set ANTHROPIC_BASE_URL: the upstream
    mock_api.add(r.text("Captured and followed."))
    app = make_app(home=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        app.action_capture()
        await until(pilot, lambda: isinstance(app.screen, MainScreen) and app.screen.session is not None,
                    "the capture's screen")
        path = app.capture.path
        assert path.parent == tmp_path / "data" / "context-inspector" / "captures"
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600 and app.screen.follow.following
        sdk = anthropic.Anthropic(base_url=app.capture.base_url("anthropic"), api_key=MOCK_KEY)

        def ask() -> str:
            with sdk.messages.stream(model="m", max_tokens=9, messages=[{"role": "user", "content": "hi"}],
                                     tools=TOOLS) as stream:
                return stream.get_final_text()

        assert await asyncio.to_thread(ask) == "Captured and followed."
        await until(pilot, lambda: len(app.screen.session.messages) == 2, "the exchange on screen")
        assert app.screen.session.messages[-1].text() == "Captured and followed."
        first, screen = app.capture, app.screen
        app.action_capture()  # again: the same capture (its file on a new screen), not a second proxy
        await until(pilot, lambda: app.screen is not screen and app.screen.session is not None, "the second screen")
        assert app.capture is first and len(app.screen.session.messages) == 2
    assert first._loop is None  # quitting the app stopped the proxy and closed the file
    assert MOCK_KEY not in path.read_text()
