"""`context-inspector compact PATH --strategy snip|clear|clear_tool_uses|summary [--dry-run] [--out FILE]`.

Plans the strategy on the session's current context and prints what it would do, message by message, in the
figures `report` states (measured where usage covers it): each row's figure before and after, and the context
before and after the plan, which is what `report` of the written file says. With --out the result is written to a
new file (never the input), in Claude Code's format when the input was Claude Code's so `claude --resume` can
continue it, else in the neutral format. A summary is written by the model when ANTHROPIC_API_KEY is set, or taken
from --summary-file; otherwise the exact prompt is shown. A line at the top places the context before and after
the plan against the policy's auto-compact threshold (--policy; default: the session's own, as in `report`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from inspector.cli import UsageError, add_custom_pct, number, policy_options
from inspector.core.compaction import (ClearSettings, ContextEditSettings, Plan, SnipSettings, SummaryError,
                                       SummarySettings, complete_summary, inert, plan_strategy, render_plan,
                                       run_summary)
from inspector.core.compaction.micro import CLEARABLE_TOOLS
from inspector.core.compaction.pipeline import STRATEGIES
from inspector.core.compaction.summary import PROMPT_STYLES, request_messages
from inspector.core.estimators import ESTIMATORS
from inspector.core.export import check_target, claude_code_session_id, default_format, export_session
from inspector.core.figures import PlanFigures, plan_estimates, plan_figures, window_figures
from inspector.core.files import read_limited
from inspector.core.formats import PATH_HELP, load
from inspector.core.limits import POLICIES, WindowInfo, window_info
from inspector.core.model import LoadError, Session
from inspector.core.tokens import account

SUMMARY_LIMIT = 1_000_000  # bytes of a --summary-file: a summary is a few thousand tokens
KEY_HINT = ("set ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for another endpoint, ANTHROPIC_MODEL for another "
            "model) to have the model write the summary, or pass --summary-file FILE with a summary you wrote")


def _names(text: str) -> tuple[str, ...]:
    return tuple(n.strip() for n in text.split(",") if n.strip())


def _count(text: str) -> int:
    value = number(int, text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def _ratio(text: str) -> float:
    value = number(float, text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, got {value}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", metavar="PATH", help=PATH_HELP)
    parser.add_argument("--strategy", choices=STRATEGIES, default="snip", help="what to do (default: snip)")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the plan and totals only: write nothing and call no model")
    parser.add_argument("--out", metavar="FILE", help="write the compacted session to FILE (replaced if it exists; never the input)")
    parser.add_argument("--format", choices=("neutral", "claude-code"), default=None,
                        help="format of --out (default: claude-code for Claude Code input, else neutral)")
    parser.add_argument("--all", action="store_true", help="list unchanged messages too")
    parser.add_argument("--json", action="store_true",
                        help="print the plan as one JSON object (totals, changed rows, the summary request)")
    parser.add_argument("--estimator", choices=sorted(ESTIMATORS), default=None,
                        help="token estimator (default: calibrated on the session's usage when it has some, "
                             "else script)")
    parser.add_argument("--policy", choices=POLICIES, default=None,
                        help="thresholds to place the context against (default: the session's own, as in report)")
    parser.add_argument("--window", type=int, default=None, metavar="N",
                        help="context window in tokens (default: the model's, or the one the session states)")
    add_custom_pct(parser)
    snip = parser.add_argument_group("snip (the reference design)")
    snip.add_argument("--preserve-last-n", type=_count, default=6, metavar="N",
                      help="leave the last N messages alone (default 6)")
    snip.add_argument("--max-chars", type=_count, default=2000, metavar="N",
                      help="snip results longer than N characters to N/2 + N/4 (default 2000)")
    clear = parser.add_argument_group("clear (Claude Code's microcompact)")
    clear.add_argument("--tools", type=_names, default=CLEARABLE_TOOLS, metavar="A,B",
                       help=f"tools whose results are cleared (default {','.join(CLEARABLE_TOOLS)})")
    clear.add_argument("--keep-recent", type=_count, default=5, metavar="N",
                       help="keep the N newest of those results (default 5)")
    edit = parser.add_argument_group("clear_tool_uses (the API's context editing)")
    edit.add_argument("--trigger", type=_count, default=100_000, metavar="TOKENS",
                      help="act only above this context size (default 100000)")
    edit.add_argument("--keep", type=_count, default=3, metavar="N", help="keep the N newest tool uses (default 3)")
    edit.add_argument("--clear-at-least", type=_count, default=0, metavar="TOKENS",
                      help="do nothing unless this many tokens are freed (default 0)")
    edit.add_argument("--exclude-tools", type=_names, default=(), metavar="A,B", help="never clear these tools")
    inputs = edit.add_mutually_exclusive_group()
    inputs.add_argument("--clear-tool-inputs", action="store_true", help="clear the cleared uses' inputs too")
    inputs.add_argument("--clear-inputs-of", type=_names, default=(), metavar="A,B",
                        help="clear the inputs of these tools' cleared uses only")
    summ = parser.add_argument_group("summary")
    summ.add_argument("--keep-ratio", type=_ratio, default=0.3, metavar="R",
                      help="share of the tokens kept verbatim at the end (default 0.3; 0 summarizes everything)")
    summ.add_argument("--prompt", choices=PROMPT_STYLES, default=None,
                      help="summary prompt (default: two-phase for Claude Code input, else reference)")
    summ.add_argument("--instructions", default=None, help="extra instructions for the summary")
    summ.add_argument("--summary-file", metavar="FILE", default=None,
                      help="use the summary in FILE ('-' for stdin) instead of asking a model")
    summ.add_argument("--show-prompt", action="store_true", help="print the exact summary prompt")


SETTINGS = {"snip": ("preserve_last_n", "max_chars"), "clear": ("tools", "keep_recent"),
            "clear_tool_uses": ("trigger", "keep", "clear_at_least", "exclude_tools", "clear_tool_inputs",
                                "clear_inputs_of"),
            "summary": ("keep_ratio", "prompt", "instructions", "summary_file", "show_prompt")}


def _check_settings(args: argparse.Namespace) -> None:
    """UsageError for a setting of another strategy than the chosen one: it would be ignored without a word."""
    defaults = argparse.ArgumentParser()
    add_arguments(defaults)
    for strategy, dests in SETTINGS.items():
        for dest in dests:
            if strategy != args.strategy and getattr(args, dest) != defaults.get_default(dest):
                flag = "--" + dest.replace("_", "-")
                raise UsageError(f"{flag} is a setting of --strategy {strategy}, not {args.strategy}")


def settings_from(args: argparse.Namespace, session: Session) -> object:
    if args.strategy == "snip":
        return SnipSettings(args.preserve_last_n, args.max_chars)
    if args.strategy == "clear":
        return ClearSettings(args.tools, args.keep_recent)
    if args.strategy == "clear_tool_uses":
        return ContextEditSettings(args.trigger, args.keep, args.clear_at_least, args.exclude_tools,
                                   args.clear_inputs_of or args.clear_tool_inputs)
    style = args.prompt or ("two-phase" if session.format == "claude-code" else "reference")
    return SummarySettings(args.keep_ratio, style, args.instructions)  # type: ignore[arg-type]


def run(args: argparse.Namespace) -> int:
    _check_settings(args)
    options = policy_options(args)
    session = load(args.path)
    if args.out and not args.dry_run:
        target = check_target(session, args.out)  # before any work (or a paid summary) is done
        if not target.parent.is_dir():
            raise LoadError(f"{target}: cannot write there: no such directory {target.parent}")
    try:
        accounting = account(session, args.estimator, resumable=False)  # the figures `report` states
        info = window_info(session, args.policy, args.window, **options)
    except ValueError as exc:  # a bad window, `exact` without a key
        raise UsageError(str(exc)) from None
    estimates = plan_estimates(session, accounting.estimator, accounting.estimated)
    # the context figure is the whole request's (prefix included): what the API's clear_tool_uses trigger reads
    plan = plan_strategy(args.strategy, session, settings_from(args, session), estimates,
                         context_tokens=accounting.current_context)
    out = sys.stdout
    if plan.summary is not None:
        plan = _summarize(plan, args)
    figures = plan_figures(accounting, plan)
    if args.json:
        d = plan_dict(figures, args.all)
        d["window"] = info.to_dict()
        d["context"] = {"before": info.state(figures.before.current_context).to_dict(),
                        "after": info.state(figures.after.current_context).to_dict()}
        json.dump(d, out, ensure_ascii=True, separators=(",", ":"))
        out.write("\n")
    else:
        lines = render_plan(plan, figures.rows, figures.totals(), args.all)
        lines.insert(1, threshold_line(info, figures))  # under the strategy line
        for line in lines:
            out.write(line + "\n")
        if plan.summary is not None and plan.summary.text is not None:
            out.write("\nsummary:\n" + inert(plan.summary.text) + "\n")
        if plan.pending:
            _explain_pending(plan, args)
    if args.dry_run or not args.out:
        if not args.dry_run and not args.json:
            out.write("nothing written: give --out FILE to write the result\n")
        return 0
    if plan.pending:
        raise UsageError("the summary is pending, nothing written: " + KEY_HINT)
    if not plan.changed:
        if not args.json:
            out.write("nothing to change: nothing written\n")
        return 0
    fmt = args.format or default_format(session)
    path = export_session(figures.after.session, args.out, fmt)
    if args.json:
        return 0
    out.write(f"wrote {inert(str(path))} ({fmt})\n")
    if fmt == "claude-code":
        sid = claude_code_session_id(path)
        where = "its project directory" + ("" if path.name == f"{sid}.jsonl" else f" as {sid}.jsonl")
        out.write(f"to resume it with Claude Code: put it in {where} and run `claude --resume {sid}`\n")
    return 0


def threshold_line(info: WindowInfo, figures: PlanFigures) -> str:
    """Where the context stands against the policy's auto-compact threshold before and after the plan, in the
    figures `report` states (before: the last measured context + estimates since; after: followed from them).
    While a summary is pending its size is unknown: the figure after is stated without it, and says so."""
    limit = info.thresholds.autocompact
    source = "the session's default" if info.policy_source == "default" else "chosen"

    def where(used: int, measured: bool) -> str:
        w = window_figures(info, used, measured)
        gap = limit - used
        return (f"{used:,} ({used / info.context_window:.1%}, {abs(gap):,} {'below' if gap > 0 else 'over'}"
                + (f"; {w.warnings[-1]}" if len(w.warnings) > len(info.warnings) else "") + ")")

    before, after = figures.before, figures.after
    now = where(before.current_context, before.current_measured is not None)
    later = f"{after.current_context:,} + the summary (pending)" if figures.plan.pending else \
        where(after.current_context, False)
    return (f"{info.policy} policy ({source}): auto-compact at {limit:,} of {info.context_window:,}; "
            f"context now {now}, after this plan {later}")


def plan_dict(figures: PlanFigures, all_rows: bool = False) -> dict:
    """The plan as JSON: the context before and after it (prefix included, as `report` states it), counts, its rows
    (changed ones only unless `all_rows`) in those figures, and the summary request."""
    plan = figures.plan
    rows = [r for r in figures.rows if all_rows or r.fate != "kept"]
    d: dict = {"strategy": plan.strategy, "estimator": plan.estimator, "before": figures.before.current_context,
               "after": figures.after.current_context, "saved": figures.saved, "counts": plan.counts,
               "pending": plan.pending, "note": plan.note,
               "protected_from": plan.protected_from, "cleared_tool_ids": list(plan.cleared_tool_ids),
               "rows": [{"fate": r.fate, "old": r.old, "new": r.new, "role": r.role, "kind": r.kind,
                         "before": r.before, "after": r.after, "note": r.note} for r in rows]}
    if plan.summary is not None:
        s = plan.summary
        d["summary"] = {"split": s.split, "style": s.style, "request_tokens": s.request_tokens, "system": s.system,
                        "prompt": s.prompt, "text": s.text}
    return d


def _summarize(plan: Plan, args: argparse.Namespace) -> Plan:
    """The summary from --summary-file, else from the model when a key is set (not in a dry run), else pending."""
    if args.summary_file:
        try:
            data = sys.stdin.buffer.read(SUMMARY_LIMIT + 1) if args.summary_file == "-" else \
                read_limited(args.summary_file, SUMMARY_LIMIT + 1)
            if len(data) > SUMMARY_LIMIT:
                raise UsageError(f"{args.summary_file}: the summary is larger than {SUMMARY_LIMIT:,} bytes")
            text = data.decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise LoadError(f"{args.summary_file}: cannot read the summary ({exc})") from None
        try:
            return complete_summary(plan, text)
        except SummaryError as exc:
            raise UsageError(f"{args.summary_file}: {exc}") from None
    if args.dry_run or not os.environ.get("ANTHROPIC_API_KEY", "").strip():
        return plan
    from inspector.core.agent.provider import DEFAULT_MODEL, AnthropicProvider

    provider = AnthropicProvider.from_env(os.environ.get("ANTHROPIC_MODEL") or DEFAULT_MODEL)
    sys.stderr.write(f"writing the summary with {provider.model} ...\n")
    stream = sys.stderr.isatty() and not args.json
    try:
        plan = run_summary(plan, provider, (lambda text: sys.stderr.write(inert(text))) if stream else None)
    except SummaryError as exc:
        raise UsageError(f"summary failed: {exc}") from None
    if stream:
        sys.stderr.write("\n")
    return plan


def _explain_pending(plan: Plan, args: argparse.Namespace) -> None:
    state = plan.summary
    assert state is not None
    out = sys.stdout
    n = len(request_messages(state.old, state.prompt))
    out.write(f"\nsummary pending: the request is {state.request_tokens:,} tokens (system prompt, {n} message(s) "
              f"of conversation ending with the prompt below)\n")
    no_key = not os.environ.get("ANTHROPIC_API_KEY", "").strip()
    if args.show_prompt or no_key:
        out.write(f"--- system ---\n{inert(state.system)}\n--- prompt ---\n{inert(state.prompt)}\n--- end ---\n")
    if no_key:
        out.write(KEY_HINT + "\n")
