"""Where a context may be cut: never between a tool_use and its tool_result, nor inside one API response.

The API rejects the first, and the second splits one model turn. `cut_point` moves the reference design's cut (the
recent part holds `keep_ratio` of the tokens) to the nearest safe point.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

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
