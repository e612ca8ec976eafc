"""What changed from one recorded request to the next of the same thread: messages added or dropped, tool results
cleared, system-reminders injected, tools added or removed, the system prompt or the parameters changed.

Works on a session's `sent` log (Claude Code 2.1.332+). A request usually extends the one before it (its `base`),
so the difference is its `tail` against the previous request's messages past `keep`: no full message list is
built, and only the messages that changed are read. A request that starts a chain afresh (after a compaction, in a
resumed process) is compared message by message with the previous one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from inspector.core.sent_requests import SentLog, SentRequest

CLEARED_MARKERS = ("[Old tool result content cleared]",)  # what Claude Code puts in place of a cleared result
REMINDER_OPEN = "<system-reminder>"


@dataclass(slots=True)
class Added:
    """A message the request sent that the previous one did not: its index, role and what it holds."""

    index: int
    role: str
    kind: str  # "prompt", "assistant", "tool_result", "reminder", "system", "compact_summary", "unknown"
    summary: str


@dataclass(slots=True)
class RequestChange:
    request: SentRequest
    previous: SentRequest | None
    messages: int  # how many the request sent
    added: list[Added] = field(default_factory=list)
    dropped: int = 0  # messages of the previous request no longer sent (a compaction, a rewind)
    replaced: list[int] = field(default_factory=list)  # indices holding another version of the same message
    cleared: list[str] = field(default_factory=list)  # tool_use ids whose results are now cleared
    reminders: list[str] = field(default_factory=list)  # the first line of each system-reminder injected
    tools_added: list[str] = field(default_factory=list)
    tools_removed: list[str] = field(default_factory=list)
    tools_changed: list[str] = field(default_factory=list)
    system_changed: list[int] = field(default_factory=list)  # system blocks that differ (index in this request)
    params_changed: list[str] = field(default_factory=list)
    api_clearing: str = ""  # what the request asks the API to clear (a context edit the previous one did not ask)
    unreadable: int = 0  # changed messages the file does not hold
    broken: bool = False  # its messages cannot be worked out: a base missing from the file, or a cycle of bases

    @property
    def first(self) -> bool:
        return self.previous is None

    def lines(self) -> list[str]:
        """The change in words, one fact a line (for the CLI and the app's detail pane)."""
        if self.first:
            out = [f"first request of its thread: {self.messages} message(s)"]
        else:
            out = []
            if self.dropped:
                out.append(f"{self.dropped} message(s) of the previous request no longer sent")
            if self.replaced:
                out.append(f"{len(self.replaced)} message(s) changed in place: "
                           + ", ".join(f"#{i + 1}" for i in self.replaced))
            if self.added:
                out.append(f"{len(self.added)} message(s) added")
        out += [f"  + #{a.index + 1} {a.role} {a.kind}: {a.summary}" for a in self.added]
        if self.cleared:
            out.append(f"tool results cleared: {', '.join(self.cleared)}")
        if self.reminders:
            out.append(f"{len(self.reminders)} system-reminder(s) injected")
            out += [f"  ! {r}" for r in self.reminders]
        for label, names in (("tools added", self.tools_added), ("tools removed", self.tools_removed),
                             ("tool schemas changed", self.tools_changed)):
            if names:
                out.append(f"{label}: {', '.join(names)}")
        if self.system_changed:
            out.append("system prompt changed: block(s) " + ", ".join(str(i + 1) for i in self.system_changed))
        if self.api_clearing:
            out.append(f"asks the API to clear old tool results: {self.api_clearing}")
        if self.params_changed:
            out.append(f"parameters changed: {', '.join(self.params_changed)}")
        if self.unreadable:
            out.append(f"{self.unreadable} changed message(s) not in the file")
        if self.broken:
            out = [f"its messages cannot be worked out: its base {self.request.base} is not in the file, or the "
                   "bases form a cycle"] + [line for line in out if "no longer sent" not in line]
        if not self.first and len(out) == 0:
            out.append("nothing changed (a retry of the same request)")
        return out

    def short(self) -> str:
        """One line for a list of requests."""
        if self.broken:
            return "messages unknown (broken chain)"
        if self.first:
            return f"first: {self.messages} msgs"
        parts = [f"+{len(self.added)}"] if self.added else []
        if self.dropped:
            parts.append(f"-{self.dropped}")
        if self.cleared:
            parts.append(f"{len(self.cleared)} cleared")
        if self.reminders:
            parts.append(f"{len(self.reminders)} reminder{'s' if len(self.reminders) > 1 else ''}")
        if self.tools_added or self.tools_removed or self.tools_changed:
            parts.append(f"tools +{len(self.tools_added)}/-{len(self.tools_removed)}"
                         + (f"/~{len(self.tools_changed)}" if self.tools_changed else ""))
        if self.system_changed:
            parts.append("system changed")
        if self.api_clearing:
            parts.append("API clearing asked")
        elif self.params_changed:
            parts.append("params changed")
        return " ".join(parts) or "same (retry)"


def request_changes(log: SentLog, request: SentRequest) -> RequestChange:
    previous = log.previous(request)
    change = RequestChange(request, previous, log.length(request))
    difference = _difference(log, previous, request) if previous is not None else None
    if previous is None:
        hashes = log.hashes(request)
        change.broken = hashes is None
        _describe_added(log, change, list(enumerate(hashes or [])))
        return change
    if difference is None:
        change.broken = True
        _compare_shapes(log, previous, request, change)
        return change
    old, new = difference
    start = log.length(request) - len(new)
    pairs = min(len(old), len(new))
    change.dropped = len(old) - pairs
    for n in range(pairs):
        before, after = log.message(old[n]), log.message(new[n])
        if before is None or after is None:
            change.unreadable += 1
            change.added.append(Added(start + n, "?", "unknown", "(not in the file)"))
            continue
        if before.get("role") == after.get("role") and _same_turn(before, after):
            change.replaced.append(start + n)
            change.cleared += _cleared(before, after)
            change.reminders += _reminders(after, skip=_reminders(before))
        else:
            change.dropped += 1
            _describe_added(log, change, [(start + n, new[n])])
    _describe_added(log, change, [(start + n, h) for n, h in enumerate(new) if n >= pairs])
    _compare_shapes(log, previous, request, change)
    change.params_changed = sorted(k for k in set(previous.params) | set(request.params)
                                   if previous.params.get(k) != request.params.get(k))
    if "context_management" in change.params_changed:
        change.api_clearing = _clearing(request.params)
    return change


def _clearing(params: dict) -> str:
    """The request's `clear_tool_uses` context edit in words ("" when it asks none)."""
    managed = params.get("context_management")
    for edit in managed.get("edits") or () if isinstance(managed, dict) else ():
        if isinstance(edit, dict) and edit.get("type") == "clear_tool_uses_20250919":
            def value(key: str) -> str:
                part = edit.get(key)
                return f"{part.get('value'):,} {str(part.get('type', '')).replace('_', ' ')}" \
                    if isinstance(part, dict) and isinstance(part.get("value"), int) else "?"
            return (f"once {value('trigger')}, all but the last {value('keep')}, at least {value('clear_at_least')}"
                    + (f", never {', '.join(map(str, edit['exclude_tools']))}" if edit.get("exclude_tools") else ""))
    return ""


def all_changes(log: SentLog) -> list[RequestChange]:
    """The change of every recorded request, in file order."""
    return [request_changes(log, r) for r in log.requests]


def _difference(log: SentLog, previous: SentRequest, request: SentRequest) -> tuple[list[str], list[str]] | None:
    """(hashes only the previous request sent, hashes only this one sent) past their common prefix; None when this
    request's messages cannot be worked out (a broken chain of bases)."""
    if request.base == previous.id:
        old = log.suffix(previous, request.keep)
        return (old, list(request.tail)) if old is not None else None
    old, new = log.hashes(previous) or [], log.hashes(request)
    if new is None:
        return None
    common = 0
    while common < min(len(old), len(new)) and old[common] == new[common]:
        common += 1
    return old[common:], new[common:]


def _same_turn(before: dict, after: dict) -> bool:
    """Whether two messages are versions of one turn: the same tool calls answered, or the same first text."""
    ids = [_result_ids(before), _result_ids(after)]
    if ids[0] or ids[1]:
        return ids[0] == ids[1]
    uses = [[b.get("id") for b in _content(m) if b.get("type") == "tool_use"] for m in (before, after)]
    if uses[0] or uses[1]:
        return uses[0] == uses[1]
    return _first_text(before)[:200] == _first_text(after)[:200]


def _describe_added(log: SentLog, change: RequestChange, added: list[tuple[int, str]]) -> None:
    for index, digest in added:
        message = log.message(digest)
        if message is None:
            change.unreadable += 1
            change.added.append(Added(index, "?", "unknown", "(not in the file)"))
            continue
        role = str(message.get("role"))
        kind, summary = _kind(message)
        change.added.append(Added(index, role, kind, summary))
        change.reminders += _reminders(message)


def _kind(message: dict) -> tuple[str, str]:
    role, blocks = message.get("role"), _content(message)
    if role == "assistant":
        names = [str(b.get("name")) for b in blocks if b.get("type") == "tool_use"]
        if names:
            counted = {n: names.count(n) for n in names}
            return "assistant", "calls " + ", ".join(n if k == 1 else f"{n} ×{k}" for n, k in counted.items())
        return "assistant", _first_line(_first_text(message))
    if role == "system":
        return "system", _first_line(_first_text(message))
    results = [b for b in blocks if b.get("type") == "tool_result"]
    if results:
        ids = [str(b.get("tool_use_id")) for b in results]
        return "tool_result", f"{len(results)} result(s) for " + ", ".join(ids[:3]) + (", …" if len(ids) > 3 else "")
    texts = [b.get("text", "") for b in blocks if b.get("type") == "text"]
    if texts and all(str(t).lstrip().startswith(REMINDER_OPEN) for t in texts):
        return "reminder", _first_line(_unwrapped(texts[0]))
    if any(str(t).startswith("This session is being continued from a previous conversation") for t in texts):
        return "compact_summary", "the compaction summary"
    typed = [t for t in texts if not str(t).lstrip().startswith(REMINDER_OPEN)]
    return "prompt", _first_line(typed[0] if typed else "")


def _reminders(message: dict, skip: list[str] | None = None) -> list[str]:
    """The first line of every system-reminder in a message (a system-role message counts whole)."""
    skip = skip or []
    if message.get("role") == "system":
        found = [_first_line(_first_text(message))]
    else:
        found = [_first_line(_unwrapped(b.get("text", ""))) for b in _content(message)
                 if b.get("type") == "text" and str(b.get("text", "")).lstrip().startswith(REMINDER_OPEN)]
    return [r for r in found if r and r not in skip]


def _cleared(before: dict, after: dict) -> list[str]:
    was = {b.get("tool_use_id"): b.get("content") for b in _content(before) if b.get("type") == "tool_result"}
    out = []
    for b in _content(after):
        if b.get("type") != "tool_result":
            continue
        text = b.get("content") if isinstance(b.get("content"), str) else " ".join(
            str(x.get("text", "")) for x in b.get("content") or [] if isinstance(x, dict))
        if any(m in text for m in CLEARED_MARKERS) and was.get(b.get("tool_use_id")) != b.get("content"):
            out.append(str(b.get("tool_use_id")))
    return out


def _compare_shapes(log: SentLog, previous: SentRequest, request: SentRequest, change: RequestChange) -> None:
    if previous.shape == request.shape:
        return
    old, new = log.shape(previous), log.shape(request)
    if old is None or new is None:
        return
    before = {t.get("name"): t for t in old.tools if isinstance(t, dict)}
    after = {t.get("name"): t for t in new.tools if isinstance(t, dict)}
    change.tools_added = [str(n) for n in after if n not in before]
    change.tools_removed = [str(n) for n in before if n not in after]
    change.tools_changed = [str(n) for n in after if n in before and before[n] != after[n]]
    change.system_changed = [i for i, block in enumerate(new.system)
                             if i >= len(old.system) or old.system[i] != block]
    if len(old.system) > len(new.system):
        change.system_changed.append(len(new.system))


def _content(message: dict) -> list[dict]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)] if isinstance(content, list) else []


def _result_ids(message: dict) -> list:
    return [b.get("tool_use_id") for b in _content(message) if b.get("type") == "tool_result"]


def _first_text(message: dict) -> str:
    return next((str(b.get("text", "")) for b in _content(message) if b.get("type") == "text"), "")


def _unwrapped(text: str) -> str:
    text = str(text).strip()
    return text[len(REMINDER_OPEN):].strip() if text.startswith(REMINDER_OPEN) else text


def _first_line(text: str, limit: int = 100) -> str:
    line = next((ln.strip() for ln in str(text).splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[:limit - 1] + "…"
