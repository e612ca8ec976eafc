"""`context-inspector report PATH [--json]`: what a session's context holds, headless."""

from __future__ import annotations

import argparse
import io
import sys

from inspector.cli import UsageError, add_custom_pct, leave_for_exit, policy_options
from inspector.core.cost import CostRow, PriceError, SessionCost, prices
from inspector.core.cost_report import add_cost_keys, cost_text, share_columns
from inspector.core.compaction.replay import render_what_if, replay
from inspector.core.estimators import ESTIMATORS
from inspector.core.formats import PATH_HELP, load
from inspector.core.gc_pause import gc_paused
from inspector.core.limits import POLICIES, window_info
from inspector.core.model import Session
from inspector.core.prompt_cache import CacheReport
from inspector.core.inert import safe_line
from inspector.core.report import (MessageRow, RequestRow, Streamed, message_columns, report_dict, report_text,
                                   request_columns, write_json)
from inspector.core.rows import rows_of
from inspector.core.token_report import add_token_keys, token_text
from inspector.core.token_report import message_columns as token_message_columns
from inspector.core.token_report import request_columns as token_request_columns
from inspector.core.tokens import Accounting, account

PROGRESS_MIN_BYTES = 20 * 1024 * 1024


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", metavar="PATH", help=PATH_HELP)
    parser.add_argument("--json", action="store_true",
                        help="print one JSON object (schema: docs/report-json.md) instead of the table")
    parser.add_argument("--estimator", choices=sorted(ESTIMATORS), default=None,
                        help="how to estimate tokens without usage (default: calibrated when the session has usage, "
                             "else script; exact needs ANTHROPIC_API_KEY)")
    parser.add_argument("--policy", choices=POLICIES, default=None,
                        help="compaction thresholds to measure against (default: the session's own: codex for "
                             "Codex rollouts, claude-code for Claude Code's sessions and requests, gemini-cli, "
                             "qwen-code and opencode for theirs, reference for the others, our agent's included)")
    parser.add_argument("--window", type=int, default=None, metavar="N",
                        help="context window in tokens (default: the model's, or the one the session states)")
    add_custom_pct(parser)
    add_prices(parser)
    parser.add_argument("--messages", action="store_true", help="table form: list every message's tokens too")


def add_prices(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--prices", metavar="FILE", default=None,
                        help="a JSON price file (the shape of inspector/core/data/prices.json) whose models replace "
                             "or add to the shipped prices (default: $CONTEXT_INSPECTOR_PRICES)")


def price_table(args: argparse.Namespace):
    """The price table the arguments ask for; UsageError for a file that cannot be used."""
    try:
        return prices(getattr(args, "prices", None))
    except PriceError as exc:
        raise UsageError(str(exc)) from None


def run(args: argparse.Namespace) -> int:
    with gc_paused():  # one big graph built once (session, accounting, report): collections would free nothing
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    options = policy_options(args)
    table = price_table(args)
    session = load(args.path, progress=_progress if sys.stderr.isatty() else None)
    if sys.stderr.isatty():
        sys.stderr.write("\r\x1b[K")
    try:
        accounting = account(session, getattr(args, "estimator", None), resumable=False)
        info = window_info(session, getattr(args, "policy", None), getattr(args, "window", None), **options)
    except ValueError as exc:  # an unknown policy, a bad window, `exact` without a key
        raise UsageError(str(exc)) from None
    # where the policy would have compacted, from the report's own estimates (its prefix and summary sizes)
    guard = info.thresholds.blocking if info.policy == "claude-code" else None  # its prefix guard
    what_if = replay(session, info.thresholds.autocompact, estimates=accounting.estimated, blocking=guard)
    if args.json:
        report = add_token_keys(report_dict(session, rows=False), accounting, info)
        report["what_if"] = what_if.to_dict()
        cost, cache = add_cost_keys(report, session, accounting, table, rows=False)
        sys.stdout.flush()
        binary = getattr(sys.stdout, "buffer", None)  # absent when output is captured into a string
        out = binary if binary is not None else io.BytesIO()
        write_json(out, report, streamed_rows(session, accounting, cost, cache), [REQUEST_LISTS])
        if binary is None:
            sys.stdout.write(out.getvalue().decode())  # type: ignore[union-attr]
        leave_for_exit(cost, cache)
    else:
        sys.stdout.write(report_text(session))
        sys.stdout.write(token_text(accounting, info, safe_line, getattr(args, "messages", False)))
        if session.requests:
            sys.stdout.write("\n" + "\n".join(render_what_if(what_if)) + "\n")
            sys.stdout.write(cost_text(session, *add_cost_keys({}, session, accounting, table), safe_line))
    sys.stdout.flush()
    leave_for_exit(session, accounting)
    return 0


REQUEST_LISTS = (("requests",), ("cost", "by_request"), ("cache", "by_request"))  # a row per request each


def streamed_rows(session: Session, accounting: Accounting, cost: SessionCost, cache: CacheReport) -> Streamed:
    """The per-message and per-request rows of report --json, for `write_json` to make a chunk at a time."""
    n, measured = len(session.requests), accounting.requests.measured
    return {
        ("messages",): (len(session.messages), lambda lo, hi: rows_of(MessageRow, {
            **message_columns(session, lo, hi), **token_message_columns(accounting, lo, hi),
            **share_columns(cost, lo, hi)})),
        ("requests",): (n, lambda lo, hi: rows_of(RequestRow, {
            **request_columns(session, lo, hi, measured), **token_request_columns(accounting, lo, hi)})),
        ("cost", "by_request"): (n, lambda lo, hi: rows_of(CostRow, cost.request_columns(session, lo, hi))),
        ("cache", "by_request"): (n, lambda lo, hi: cache.request_rows(lo, hi))}


def _progress(done: int, total: int) -> None:
    if total >= PROGRESS_MIN_BYTES and done < total:
        sys.stderr.write(f"\rreading {done / total:4.0%} of {total / 1e6:,.0f} MB")
        sys.stderr.flush()
