"""What a session's end measures on its own: the window at its last response, and its messages' figures.

A preview of a long session's end (`formats.tail`) has its last responses but not the messages before them. The
context its last request sent is in that request's usage, as the full load's figures count it. The growth from one
request to the next is measured too, so every message the preview's later requests see gets its measured share,
and the context through it is anchored to measured usage. What the preview cannot tell apart is its first
measured context: the prefix and every message before the preview, one sum (`categories.NOT_READ`). So the
figures of a window restarted by a compaction inside the preview, up to its first request, are estimates, and the
microcompaction preview, the prompt view and the prefix by name wait for the whole session.
"""

from __future__ import annotations

from dataclasses import replace

from inspector.core import categories as cat
from inspector.core.figures.compute import compute, ordered, settings_window, window_figures
from inspector.core.figures.model import Figures, Settings, Window
from inspector.core.model import Session

# What the preview's accounting files under the prefix: measured against a first request that also held the
# messages before the preview, so only their sum means anything.
_FOLDED = (cat.SYSTEM_TOOLS, cat.SUMMARIZED, cat.UNRECORDED)


def last_response_window(session: Session, settings: Settings) -> Window | None:
    """The window at the last request's measured context (input + cache creation + cache read); None without
    requests."""
    if not session.requests:
        return None
    return window_figures(settings_window(session, settings), session.requests[-1].measured_context, True)


def preview_figures(session: Session, settings: Settings) -> Figures:
    """The figures of a preview of a session's end (`formats.tail`), marked `preview`: its own accounting, with
    the messages first seen by the first request of a window (the preview's first, or one a compaction in it
    restarts) counted at their estimates, the context through each message anchored to the measured usage after
    it, and the prefix and history before the preview as one category."""
    f = compute(session, settings)
    measured, cumulative = list(f.measured), list(f.cumulative)
    by_category = dict(f.accounting.by_category) if f.accounting is not None else {}
    start = session.context_start
    prev = None
    for r in session.requests:
        if r.message_index < 0:
            continue
        if prev is None or r.seen_start != prev.seen_start:  # its usage measured a prefix the preview cannot know
            for i in range(r.seen_start, min(r.seen_end, len(measured))):
                if measured[i] is not None:
                    if i >= start:
                        by_category[f.category[i]] = by_category.get(f.category[i], 0) + f.estimated[i] - measured[i]
                    measured[i] = None
            # the context through the messages before its response: back from the figure there (measured)
            run = cumulative[r.message_index]
            for i in range(r.message_index, r.seen_start, -1):
                run -= f.derived.get(i, f.estimated[i]) if measured[i] is None else measured[i]
                cumulative[i - 1] = run
        prev = r
    for k in _FOLDED:
        by_category.pop(k, None)
    messages = sum(v for k, v in by_category.items() if k not in (cat.FREE, cat.RESERVED))
    by_category[cat.NOT_READ] = f.window.used - messages  # the folded ones, and what the messages' estimates moved
    return replace(f, measured=measured, cumulative=cumulative, categories=ordered(by_category), preview=True,
                   accounting=None, resume=None, micro_saving=None, micro_note="", prompt=None, prefix_sections=[],
                   cache_breaks=[])
