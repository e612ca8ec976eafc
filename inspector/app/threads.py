"""The app's thread workers run on daemon threads, so quitting never waits for a computation under way.

Textual runs `@work(thread=True)` workers (and `asyncio.to_thread`) on the event loop's default executor, a
`ThreadPoolExecutor`: `asyncio.run` joins its threads when the loop closes, and the interpreter joins them again at
exit. Loading and computing the figures of a 100,000-message session takes seconds that no cancellation can cut
short (the work is in core and knows nothing of workers), so `q` then waited for it. `DaemonThreads` runs each call
on a daemon thread of its own and never waits in `shutdown`: the process ends when the app does. What a worker
writes survives that as it survives a crash: every file the app writes is replaced atomically (`core/atomic.py`),
and a session the agent appends to loses at most the line in flight (`core/agent/writer.py`), which its loader and
the next write both handle.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable


class DaemonThreads(ThreadPoolExecutor):
    """An executor whose every call runs on a new daemon thread (a ThreadPoolExecutor only because asyncio takes
    no other kind as a loop's default; none of the pool is used)."""

    def __init__(self) -> None:
        super().__init__(thread_name_prefix="inspector")

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future:
        future: Future = Future()

        def run() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                future.set_result(fn(*args, **kwargs))
            except BaseException as exc:  # handed to whoever awaits the future, as a pool thread would
                future.set_exception(exc)

        threading.Thread(target=run, name=f"{self._thread_name_prefix}-{getattr(fn, '__name__', 'work')}", daemon=True).start()
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Nothing to wait for: the threads are daemons, gone with the process."""


def use_daemon_threads() -> None:
    """Make the running event loop's default executor `DaemonThreads` (call from the app, on its loop)."""
    asyncio.get_running_loop().set_default_executor(DaemonThreads())
