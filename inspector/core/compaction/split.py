"""Where to cut the context for a summary: old part summarized, recent part kept verbatim.

The reference design walks back from the end until the recent part holds `keep_ratio` of the tokens. A cut there
may fall between a tool_use and its tool_result, or inside one API response written as several messages; the API
rejects the first and the second splits one model turn. So the cut moves to the nearest safe point.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from inspector.core.compaction.plan import Estimates
from inspector.core.model import Message


def unsafe_cuts(messages: Sequence[Message]) -> list[bool]:
    """unsafe[i] is True when cutting before messages[i] would separate a tool_use from its result or split a
    response. Computed in one pass with a difference array: a pair at (u, r) forbids every cut in (u, r]."""
    n = len(messages)
    diff = [0] * (n + 2)
    use_at: dict[str, int] = {}
    first_of_response: dict[str, int] = {}
    for i, m in enumerate(messages):
        if m.response_id is not None:
            first = first_of_response.setdefault(m.response_id, i)
            if first < i:
                diff[first + 1] += 1
                diff[i + 1] -= 1
        for b in m.blocks:
            if b.type == "tool_use" and b.tool_id:
                use_at.setdefault(b.tool_id, i)
            elif b.type == "tool_result" and b.tool_id in use_at:
                u = use_at[b.tool_id]
                if u < i:
                    diff[u + 1] += 1
                    diff[i + 1] -= 1
    unsafe, running = [], 0
    for i in range(n + 1):
        running += diff[i]
        unsafe.append(running > 0)
    return unsafe


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


def cut_point(tokens: Sequence[int], keep_ratio: float, unsafe_of: Callable[[], Sequence[bool]]) -> int:
    """`find_split_point` from the messages' estimates and their unsafe cuts (asked for only when needed): plans
    pass the ones their `Context` keeps."""
    n = len(tokens)
    if n == 0:
        return 0
    if keep_ratio <= 0:
        target = n
    else:
        goal = int(sum(tokens) * keep_ratio)
        running, target = 0, 0
        for i in range(n - 1, -1, -1):
            running += tokens[i]
            if running >= goal:
                target = i
                break
    if target == 0:  # the recent part would hold everything
        return 0
    unsafe = unsafe_of()
    for i in range(target, 0, -1):
        if not unsafe[i]:
            return i
    for i in range(max(target, 1), n + 1):
        if not unsafe[i]:
            return i
    return 0
