"""What-if replay: where a compaction policy would have fired in a recorded session, beside what really happened.

The session's measured requests give how the context grew. Replaying them against a threshold: before each request
(where the messages it saw end) the simulated context is compared with the threshold; when it passes, a compaction
fires there and the context drops to the unrecorded prefix + a summary + the kept share of the conversation (the
summary strategy's keep_ratio), then keeps growing by the recorded growths. Manual compactions in the recording are
honoured (the user asked for them); auto compactions are the policy's to decide, so they are replaced by the
simulation's own: the context grows by the estimates of what came after the last request up to the recorded
boundary (the threshold is checked there, where the recording compacted), then of what followed it.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Callable, Sequence

from msgspec import Struct, field

from inspector.core.compaction.estimates import Estimates
from inspector.core.model import Compaction, Request, Session
from inspector.core.inert import safe_line

DEFAULT_SUMMARY_TOKENS = 4_000  # when the session records no summary to measure


class Fire(Struct, frozen=True):
    """The policy would have compacted just before `request` was sent, with the context at `context` tokens
    (`measured` is what the recording shows for that request)."""

    request_index: int
    request_id: str
    message_index: int
    context: int
    measured: int
    after: int
    line: int | None
    timestamp: str | None


class WhatIf(Struct, frozen=True):
    threshold: int
    keep_ratio: float
    summary_tokens: int
    prefix: int
    fires: list[Fire] = field(default_factory=list)
    recorded: list[Compaction] = field(default_factory=list)
    peak: int = 0
    blocking: int | None = None  # the prefix guard's line (Claude Code's), where one applies

    def to_dict(self) -> dict:
        return {
            "threshold": self.threshold, "keep_ratio": self.keep_ratio, "summary_tokens": self.summary_tokens,
            "prefix": self.prefix, "peak": self.peak, "prefix_guard_blocking": self.blocking,
            "would_fire": [{"request": f.request_id, "message_index": f.message_index, "context": f.context,
                            "measured": f.measured, "after": f.after, "line": f.line, "timestamp": f.timestamp}
                           for f in self.fires],
            "recorded": [{"kind": c.kind, "trigger": c.trigger, "pre_tokens": c.pre_tokens, "message_index": c.index,
                          "line": c.line, "timestamp": c.timestamp} for c in self.recorded],
        }


def replay(session: Session, threshold: int, keep_ratio: float = 0.3, summary_tokens: int | None = None,
           estimates: Estimates | Sequence[int] | None = None, blocking: int | None = None) -> WhatIf:
    """Replay `session`'s measured requests against `threshold` (tokens; e.g. a limits policy's autocompact).
    `estimates`: an `Estimates`, or every message's figure by index (the report's accounting: nothing to estimate
    or cache). `blocking`: Claude Code's prefix guard, which holds a compaction while the prefix alone passes the
    threshold ("compaction cannot help") until the context passes this line (2.1.332, lab scenario
    compact-threshold)."""
    messages = session.messages
    if estimates is None or isinstance(estimates, Estimates):
        est = estimates or Estimates()
        figure: Callable[[int], int] = lambda i: est.message(messages[i])  # noqa: E731
    else:
        figure = estimates.__getitem__

    def total(lo: int, hi: int, summaries: bool = True) -> int:
        span = range(len(messages))[lo:hi]  # the indices of messages[lo:hi]
        return sum(map(figure, span if summaries else [i for i in span if messages[i].kind != "compact_summary"]))

    if summary_tokens is None:
        sizes = [figure(i) for i, m in enumerate(messages) if m.kind == "compact_summary"]
        summary = int(sum(sizes) / len(sizes)) if sizes else DEFAULT_SUMMARY_TOKENS
    else:
        summary = summary_tokens
    requests: list[Request] = sorted(session.requests, key=attrgetter("message_index"))
    compacts = sorted((c for c in session.compactions if c.kind == "compact"), key=lambda c: c.index)
    if not requests:
        return WhatIf(threshold, keep_ratio, summary, 0, recorded=compacts, blocking=blocking)
    first = requests[0]
    prefix = max(0, first.measured_context - total(first.seen_start, first.seen_end))
    line = blocking if blocking is not None and prefix > threshold else threshold
    fires: list[Fire] = []
    sim = peak = 0
    prev: Request | None = None
    before = c = 0  # before: prev's measured context

    def check(k: int, r: Request, at: int) -> None:
        """Compact when the simulated context passes the threshold, at message index `at` (before request r)."""
        nonlocal sim, peak
        peak = max(peak, sim)
        if sim > line:
            after = int(prefix + summary + keep_ratio * max(0, sim - prefix))
            message = messages[at] if at < len(messages) else None
            fires.append(Fire(k, r.id, at, sim, r.measured_context, after, r.line,
                              r.timestamp or (message.timestamp if message else None)))
            sim = after

    after_all = requests[-1].message_index + 1  # beyond every request (in message order)
    reached = compacts[0].index if compacts else after_all  # where the next recorded compaction is
    for k, r in enumerate(requests):
        measured = r.input_tokens + r.cache_creation + r.cache_read  # Request.measured_context
        boundary: Compaction | None = None
        if r.message_index >= reached:
            while c < len(compacts) and compacts[c].index <= r.message_index:
                boundary = compacts[c]
                c += 1
            reached = compacts[c].index if c < len(compacts) else after_all
        if prev is None:
            sim = measured
        elif boundary is not None and boundary.index > prev.message_index:
            if boundary.trigger == "manual":
                sim = measured
            else:  # the recording compacted here; the policy decides: what came before the boundary, then after it
                sim += total(prev.message_index, boundary.index)
                check(k, r, boundary.index)
                sim += total(boundary.index, r.seen_end, summaries=False)
        else:
            sim += measured - before
        if sim > peak or sim > line:  # (else `check` would change nothing: most requests)
            check(k, r, r.seen_end)
        prev, before = r, measured
    return WhatIf(threshold, keep_ratio, summary, prefix, fires, compacts, peak, blocking)


def render_what_if(what_if: WhatIf) -> list[str]:
    """Text lines: the policy's firings and the recorded compactions, in message order."""
    lines = [f"what-if: threshold {what_if.threshold:,} tokens, keep ratio {what_if.keep_ratio:g}, summary "
             f"~{what_if.summary_tokens:,} tokens, prefix {what_if.prefix:,}"
             + (f" (over the threshold: held to {what_if.blocking:,})" if what_if.blocking is not None
                and what_if.prefix > what_if.threshold else "") + ": "
             f"{len(what_if.fires)} compaction(s) would fire, {len(what_if.recorded)} recorded"]
    events: list[tuple[int, int, str]] = []
    for f in what_if.fires:
        events.append((f.message_index, 0, f"  would fire  before request {safe_line(f.request_id)} (message "
                       f"{f.message_index}, line {f.line or '?'}): context {f.context:,} -> {f.after:,}"))
    for rc in what_if.recorded:
        pre = f"{rc.pre_tokens:,}" if rc.pre_tokens is not None else "?"
        kind = f"{safe_line(rc.trigger)} compaction" if rc.trigger else "compaction (trigger unknown)"
        events.append((rc.index, 1, f"  recorded    {kind} at message {rc.index} "
                       f"(line {rc.line or '?'}): pre-tokens {pre}"))
    lines += [text for _, _, text in sorted(events)]
    return lines
