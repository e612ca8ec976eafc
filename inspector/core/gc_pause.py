"""Pausing Python's cyclic garbage collector while a large object graph is built in one go."""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic collections inside the block. Loading a session (or accounting for it) allocates objects that all
    live on, so each collection frees nothing yet walks everything built so far again (~5% of a 100 MB load).
    Reference counting frees memory as usual; the collector resumes afterwards if it was on."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()
