"""Structural diff of two sessions' contexts, and the text rendering the CLI prints for diffs and plans.

Messages are matched by identity (uuid, else their source lines, else their content) with difflib, so a snipped
message shows as changed, a summarized one as removed and the summary as added. Messages with no stable identity
that differ but keep their shape (role, kind, block types and tool ids) at the same place count as changed.
Session text is printed inertly: control characters are neutralised, so a tool result can never move the cursor
or recolour the terminal.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable
from dataclasses import dataclass

from inspector.core.compaction.estimates import Estimates, estimates_for
from inspector.core.compaction.plan import Plan, Row
from inspector.core.estimators import Estimator
from inspector.core.model import Message, Session
from inspector.core.inert import safe


def identity(message: Message) -> object:
    """What makes two messages 'the same message' across sessions, whatever was edited inside it."""
    if message.uuid:
        return ("uuid", message.uuid)
    if message.lines:
        return ("lines", message.lines, message.offset)
    return ("content", message.role, json.dumps(message.to_api(), sort_keys=True, default=str))


def _shape(message: Message) -> tuple:
    return (message.role, message.kind, tuple((b.type, b.tool_id) for b in message.blocks))


@dataclass(frozen=True, slots=True)
class Diff:
    """Rows of a structural diff, in the order of the merged sequences, with token totals."""

    rows: list[Row]

    @property
    def before(self) -> int:
        return sum(r.before for r in self.rows)

    @property
    def after(self) -> int:
        return sum(r.after or 0 for r in self.rows)

    @property
    def saved(self) -> int:
        return self.before - self.after

    @property
    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for row in self.rows:
            out[row.fate] = out.get(row.fate, 0) + 1
        return out


def diff_sessions(a: Session, b: Session, estimates: Estimates | Estimator | str | None = None) -> Diff:
    """Rows kept / changed / removed / added between a's current context and b's, with tokens on each side."""
    est = estimates_for(estimates)
    sa, sb = a.context_start, b.context_start
    ma, mb = a.messages[sa:], b.messages[sb:]
    matcher = difflib.SequenceMatcher(None, [identity(m) for m in ma], [identity(m) for m in mb], autojunk=False)
    rows: list[Row] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        pairs = list(zip(range(i1, i2), range(j1, j2)))
        if op == "replace" and i2 - i1 == j2 - j1 and all(_shape(ma[i]) == _shape(mb[j]) for i, j in pairs):
            op = "equal"  # same shape, edited content: messages without a stable identity, edited in place
        if op == "equal":
            for i, j in pairs:
                x, y = ma[i], mb[j]
                same = x is y or x.to_api() == y.to_api()
                rows.append(Row("kept" if same else "changed", sa + i, sb + j, y.role, y.kind,
                                est.message(x), est.message(y), y))
            continue
        rows.extend(Row("removed", sa + i, None, ma[i].role, ma[i].kind, est.message(ma[i]), 0, ma[i])
                    for i in range(i1, i2))
        rows.extend(Row("added", None, sb + j, mb[j].role, mb[j].kind, 0, est.message(mb[j]), mb[j])
                    for j in range(j1, j2))
    return Diff(rows)


def inert(text: str, limit: int | None = None) -> str:
    """`text` safe to print on a terminal (control characters, escape sequences included, shown as `?`; newlines
    and tabs kept), cut to `limit` characters."""
    if limit is not None and len(text) > limit:
        text = text[:limit] + "…"
    return safe(text)


def _preview(row: Row, width: int) -> str:
    if row.message is None:
        return row.note
    text = inert(" ".join(row.message.text().split()), width)
    return f"{row.note}: {text}" if row.note else text


def render_rows(rows: Iterable[Row], show_kept: bool = False, preview: int = 60) -> list[str]:
    """One text line per row (runs of kept rows collapsed to one line unless `show_kept`)."""
    lines = [f"{'fate':<10} {'old':>7} {'new':>7} {'kind':<16} {'before':>9} {'after':>9} {'delta':>9}  content"]
    run: list[Row] = []

    def flush() -> None:
        if run:
            tokens = sum(r.before for r in run)
            lines.append(f"{'kept':<10} {run[0].old:>7} {'…':>7} {f'{len(run)} messages':<16} {tokens:>9,} "
                         f"{tokens:>9,} {0:>9,}  (unchanged)")
            run.clear()

    for row in rows:
        if row.fate == "kept" and not show_kept:
            run.append(row)
            continue
        flush()
        after = "pending" if row.after is None else f"{row.after:,}"
        delta = "" if row.after is None else f"{row.delta:+,}"
        old = "" if row.old is None else row.old
        new = "" if row.new is None else row.new
        lines.append(f"{row.fate:<10} {old:>7} {new:>7} {row.kind:<16} {row.before:>9,} {after:>9} {delta:>9}  "
                     f"{_preview(row, preview)}")
    flush()
    return lines


def freed(saved: int, before: int = 0, word: str = "freed") -> str:
    """What a compaction did to the context, in words: "freed 6,904 (23.3%)", and "grew by 28 (+0.1%)" when it
    added tokens (a summary longer than the messages it folded), never "freed -28"."""
    pct = f" ({abs(saved) / before:.1%})" if before else ""
    if saved >= 0:
        return f"{word} {saved:,}{pct}"
    return f"grew by {-saved:,}" + (f" (+{pct[2:]}" if pct else "")


def render_totals(before: int, after: int, counts: dict[str, int], pending: bool = False) -> str:
    parts = ", ".join(f"{n:,} {fate}" for fate, n in sorted(counts.items()))
    if pending:
        return f"tokens: {before:,} before; after: summary pending ({after:,} without it); messages: {parts}"
    return f"tokens: {before:,} -> {after:,}, {freed(before - after, before, 'saved')}; messages: {parts}"


def render_plan(plan: Plan, rows: Iterable[Row], totals: str, show_kept: bool = False) -> list[str]:
    """The plan's lines: strategy, note, its rows (in the figures the caller gives them), the totals line."""
    lines = [f"strategy: {plan.strategy}  estimator: {plan.estimator}"]
    if plan.note:
        lines.append(f"note: {inert(plan.note)}")
    lines += render_rows(rows, show_kept)
    lines.append(totals)
    return lines


def render_diff(diff: Diff, show_kept: bool = False) -> list[str]:
    return [*render_rows(diff.rows, show_kept), render_totals(diff.before, diff.after, diff.counts)]
