"""The token-accounting part of `report`: keys added to the JSON report, and the text section that shows the same.

Added keys (docs/report-json.md lists them): per message `estimated_tokens`, `measured_tokens` (null without usage),
`category`; per request `predicted_context`, `estimated_context` (beside `measured_context`); top level `window`,
`totals`, `accuracy`, `estimator`, `current`.
"""

from __future__ import annotations

from itertools import repeat
from typing import Any

from inspector.core import categories as cat
from inspector.core.limits import WindowInfo
from inspector.core.accounting import Accounting
from inspector.core.rows import Columns, with_columns


def add_token_keys(report: dict[str, Any], acc: Accounting, info: WindowInfo) -> dict[str, Any]:
    """Add the accounting keys to a report dict (the issue-2 keys are left as they are)."""
    messages = report.get("messages", [])
    with_columns(messages, message_columns(acc, 0, len(messages)))
    _request_keys(report.get("requests", []), acc)
    report["estimator"] = acc.estimator
    report["window"] = info.to_dict()
    report["totals"] = {
        "estimated": acc.estimated_total,
        "measured": acc.current_measured,
        "current": acc.current_context,
        "prefix": acc.prefix,
        "unrecorded": acc.unrecorded,
        "by_category": by_category(acc, info),
    }
    report["current"] = info.state(acc.current_context).to_dict()
    report["accuracy"] = {"prediction": acc.prediction.to_dict(), "estimation": acc.estimation.to_dict()}
    return report


def message_columns(acc: Accounting, lo: int, hi: int) -> Columns:
    """The accounting keys of the report's `messages[lo:hi]`, as columns."""
    return {"estimated_tokens": acc.estimated[lo:hi], "measured_tokens": acc.measured[lo:hi],
            "category": acc.category[lo:hi]}


def _request_keys(rows: list[dict[str, Any]], acc: Accounting) -> None:
    """The accounting keys added to the rows of the report's `requests` (`unrecorded_cause` where a request has
    one)."""
    columns = request_columns(acc, 0, len(rows))
    causes = columns.pop("unrecorded_cause")
    for entry, cause in zip(with_columns(rows, columns), causes):
        if cause is not None:
            entry["unrecorded_cause"] = cause


def request_columns(acc: Accounting, lo: int, hi: int) -> Columns:
    """The accounting keys of the report's `requests[lo:hi]`, as columns (`unrecorded_cause` None where a request
    has none)."""
    figures, at = acc.requests, range(lo, hi)
    return {"predicted_context": figures.predicted[lo:hi], "estimated_context": figures.estimated[lo:hi],
            "unrecorded": list(map(figures.unrecorded.get, at, repeat(0))),
            "unrecorded_cause": list(map(figures.cause.get, at))}


def by_category(acc: Accounting, info: WindowInfo) -> dict[str, int]:
    """The current context per category, plus `free` (room before auto-compaction) and `reserved` (the window above
    auto-compaction the context has not taken: a context past the threshold eats into it, so the parts sum to the
    window)."""
    out = dict(sorted(acc.by_category.items(), key=lambda kv: -kv[1]))
    out[cat.FREE] = max(0, info.thresholds.autocompact - acc.current_context)
    out[cat.RESERVED] = max(0, min(info.reserved, info.context_window - acc.current_context))
    return out


def token_text(acc: Accounting, info: WindowInfo, safe, messages: bool = False) -> str:
    """The text section: window and thresholds, the breakdown, accuracy, the per-request figures and, with
    `messages`, every message's figures."""
    state = info.state(acc.current_context)
    t = info.thresholds
    out = ["", f"Context window ({info.policy} policy, {acc.estimator} estimator)",
           f"  window {info.context_window:,}, output reserve {info.output_reserve:,}, effective {info.effective:,}",
           *[f"    {safe(note)}" for note in info.notes],  # each on its own line: a settings file's path can be long
           f"  thresholds: warning {t.warning:,}, auto-compact {t.autocompact:,}, blocking {t.blocking:,}",
           f"  now {state.used:,} tokens ({state.percent:.1f}% of the window; "
           + ("measured " + f"{acc.current_measured:,} + estimated since" if acc.current_measured is not None
              else "estimated") + ")",
           "  distance: " + ", ".join(f"{k} {v:+,}" for k, v in state.distance.items()),
           "", "What fills it (current context; measured where usage covers it, else estimated)"]
    total = sum(v for k, v in acc.by_category.items())
    for key, value in by_category(acc, info).items():
        share = f"{value / info.context_window * 100:5.1f}%" if info.context_window else ""
        out.append(f"  {safe(cat.label(key)):<40} {value:>9,} {share}")
    out.append(f"  {'total in context':<40} {total:>9,}")
    p, e = acc.prediction, acc.estimation
    if p.count or e.count:
        out += ["", "Accuracy against measured usage (absolute error %: median / p90 / max)",
                f"  prediction (last usage + estimate since): {_acc(p)}",
                f"  estimation alone (prefix + estimates):    {_acc(e)}"]
    if acc.requests:
        out += ["", "Requests: measured, predicted before sending, estimated without usage",
                f"{'#':>5} {'line':>7}  {'measured':>9} {'predicted':>9} {'err%':>6} {'estimated':>9} {'err%':>6}"
                "  unrecorded"]
        for i, f in enumerate(acc.requests):
            pred = f"{f.predicted:>9,} {f.prediction_error_pct:>+6.2f}" if f.predicted is not None else f"{'-':>9} {'':>6}"
            extra = f"  {f.unrecorded:+,} {safe(f.cause)}" if f.cause else ""
            out.append(f"{i + 1:>5} {f.request.line or '-':>7}  {f.measured:>9,} {pred} {f.estimated:>9,} "
                       f"{f.estimation_error_pct:>+6.2f}{extra}")
    if messages:
        out += ["", "Messages: estimated tokens, measured (attributed from usage; - where none covers it), category",
                f"{'#':>6} {'line':>7}  {'estimated':>9} {'measured':>9}  category"]
        for i, m in enumerate(acc.session.messages):
            measured = f"{acc.measured[i]:>9,}" if acc.measured[i] is not None else f"{'-':>9}"
            out.append(f"{i:>6} {m.lines[0] if m.lines else '-':>7}  {acc.estimated[i]:>9,} {measured}  "
                       f"{safe(cat.label(acc.category[i]))}")
    return "\n".join(out) + "\n"


def _acc(a) -> str:
    if not a.count:
        return "-"
    return f"{a.median_abs_error_pct:.2f} / {a.p90_abs_error_pct:.2f} / {a.max_abs_error_pct:.2f}  ({a.count} requests)"
