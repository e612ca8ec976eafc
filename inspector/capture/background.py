"""A capture that runs beside other work: the proxy on an event loop of its own, in a daemon thread.

The app starts one from its "Capture" command (so a Textual screen that follows the file never shares a loop with
the traffic it shows), the tests start one beside the synchronous SDK clients they drive. `start` returns once
the proxy listens; `stop` ends it as the command does (in-flight exchanges get the grace period, then are written
as partial records) and closes the file.
"""

from __future__ import annotations

import asyncio
import os
import threading
from datetime import datetime, timezone
from pathlib import Path

from inspector.capture.launch import shell_exports
from inspector.capture.proxy import CaptureProxy
from inspector.capture.recorder import CaptureFile
from inspector.core.prompt.memory import user_data_dir


def new_capture_path(now: datetime | None = None) -> Path:
    """A new file under the per-user data directory: captures/capture-<UTC time>.jsonl."""
    stamp = (now or datetime.now(timezone.utc)).strftime("%Y%m%d-%H%M%S")
    return user_data_dir() / "captures" / f"capture-{stamp}-{os.getpid()}.jsonl"


class BackgroundCapture:
    def __init__(self, path: str | os.PathLike[str], upstreams: dict[str, str], port: int = 0) -> None:
        self.path = Path(path)
        self.capture = CaptureFile(self.path)
        self.proxy = CaptureProxy(self.capture, upstreams, port)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    def start(self, timeout: float = 10) -> BackgroundCapture:
        loop = asyncio.new_event_loop()
        self._loop = loop
        self._thread = threading.Thread(target=loop.run_forever, daemon=True, name="capture-proxy")
        self._thread.start()
        try:
            asyncio.run_coroutine_threadsafe(self.proxy.start(), loop).result(timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def base_url(self, api: str) -> str:
        return self.proxy.base_url(api)

    def exports(self) -> list[str]:
        return shell_exports({name: self.proxy.base_url(name) for name in self.proxy.upstreams})

    def stop(self, timeout: float = 30) -> None:
        loop, self._loop = self._loop, None
        if loop is None:
            return
        try:
            asyncio.run_coroutine_threadsafe(self.proxy.stop(), loop).result(timeout)
        finally:
            self.capture.close()
            loop.call_soon_threadsafe(loop.stop)
            if self._thread is not None:
                self._thread.join(timeout)
            loop.close()

    def __enter__(self) -> BackgroundCapture:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
