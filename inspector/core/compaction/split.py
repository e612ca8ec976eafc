"""Where to cut the context for a summary: old part summarized, recent part kept verbatim.

The reference design walks back from the end until the recent part holds `keep_ratio` of the tokens. A cut there
may fall between a tool_use and its tool_result, or inside one API response written as several messages; the API
rejects the first and the second splits one model turn. So the cut moves to the nearest safe point.
"""

from __future__ import annotations

from collections.abc import Sequence

from inspector.core.compaction.cuts import cut_point, unsafe_cuts
from inspector.core.compaction.estimates import Estimates
from inspector.core.model import Message


def find_split_point(messages: Sequence[Message], keep_ratio: float = 0.3,
                     estimates: Estimates | None = None) -> int:
    """Index of the first kept message: messages[:i] are summarized, messages[i:] kept.

    Starts from the reference design's point (the recent part reaches keep_ratio of the estimated tokens), then
    takes the nearest safe cut at or before it (keeping a little more), else the nearest one after it. The recent
    part may then start with an assistant message; the API joins it with the acknowledgement into one turn.
    keep_ratio 0 summarizes everything; 0 is returned when nothing would be summarized.
    """
    est = estimates or Estimates()
    return cut_point([est.message(m) for m in messages] if keep_ratio > 0 else [0] * len(messages), keep_ratio,
                     lambda: unsafe_cuts(messages))
