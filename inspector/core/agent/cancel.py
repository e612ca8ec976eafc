"""A cancel token shared by the UI thread (which cancels) and the loop's thread (which stops).

Setting the flag alone would leave the loop blocked in a network read or a running command until either ends on
its own, so whatever blocks registers a closer (`on_cancel`) that cancelling calls at once from the cancelling
thread: the open API stream is closed, the running process group is killed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class Cancel:
    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._closers: list[Callable[[], object]] = []

    def cancel(self) -> None:
        with self._lock:
            self._event.set()
            closers, self._closers = self._closers, []
        for close in closers:
            try:
                close()
            except Exception:  # a closer racing with normal completion may find its resource already gone
                pass

    def reset(self) -> None:
        """Ready for the next turn: each `run` starts by resetting, so a cancel ends only the turn it hit."""
        with self._lock:
            self._event.clear()
            self._closers.clear()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def wait(self, timeout: float) -> bool:
        return self._event.wait(timeout)

    def on_cancel(self, close: Callable[[], object]) -> Callable[[], None]:
        """Register `close` to run on cancel (at once if already cancelled); returns a function unregistering it."""
        with self._lock:
            if not self._event.is_set():
                self._closers.append(close)
                return lambda: self._remove(close)
        close()
        return lambda: None

    def _remove(self, close: Callable[[], object]) -> None:
        with self._lock:
            if close in self._closers:
                self._closers.remove(close)
