"""`context-inspector prompt`: the agent's system prompt, section by section, with sources, tokens and lint.

With `--session PATH` it shows a loaded session's prompt instead: recorded, measured or reconstructed.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from inspector.cli import UsageError
from inspector.core.estimators import ESTIMATORS, EstimatorUnavailable
from inspector.core.tokens import account
from inspector.core.formats import load
from inspector.core.prompt.builder import Section, assemble
from inspector.core.prompt.claude_md import short_path
from inspector.core.prompt.environment import find_repo_root
from inspector.core.prompt.lint import Finding, lint
from inspector.core.prompt.memory import default_memory_path
from inspector.core.prompt.session_view import group_title, latest, session_prompt
from inspector.core.prompt.template import TemplateError
from inspector.core.inert import safe, safe_line
from inspector.core.tokens import session_default


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cwd", metavar="DIR", help="working directory to build the prompt for (default: here)")
    parser.add_argument("--prompt-template", metavar="FILE",
                        help="template file to build from (default: the built-in one; copy it from the path "
                             "this command prints)")
    memory = parser.add_mutually_exclusive_group()
    default = str(default_memory_path()).replace("%", "%%")
    memory.add_argument("--memory", metavar="FILE",
                        help=f"memory file (default: {default}; set CONTEXT_INSPECTOR_MEMORY to move it)")
    memory.add_argument("--no-memory", action="store_true", help="leave persistent memory out")
    parser.add_argument("--allow-outside-imports", action="store_true",
                        help="read the project's CLAUDE.md imports of files outside it (as `run` would with it)")
    parser.add_argument("--session", metavar="PATH",
                        help="show the prompt of a session file instead: recorded, measured or reconstructed")
    parser.add_argument("--request", metavar="N", type=int,
                        help="with --session, for a session that records its requests (Claude Code 2.1.332+): the "
                             "prompt of its Nth recorded request (default: the last of the main thread)")
    parser.add_argument("--changes", action="store_true",
                        help="with --session: what changed from each recorded request to the next (messages added, "
                             "results cleared, reminders injected, tools added or removed, system prompt changed)")
    parser.add_argument("--estimator", choices=sorted(ESTIMATORS), default=None,
                        help="token estimator (default: as report: calibrated on a session's usage, else script; o200k for "
                             "a session of OpenAI models; exact asks "
                             "the API, with ANTHROPIC_API_KEY)")
    parser.add_argument("--lint", action="store_true",
                        help="check the prompt; exit status 1 when there are findings")
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true",
                        help="print one JSON object with `sections` (title, source, tokens, text) and `findings`")
    output.add_argument("--text", action="store_true", help="print the assembled prompt itself, nothing else")


def run(args: argparse.Namespace) -> int:
    if args.session:
        if args.prompt_template or args.cwd or args.memory or args.no_memory or args.allow_outside_imports:
            raise UsageError("--session shows a recorded session's prompt: it takes no --cwd, --prompt-template "
                             "or memory option")
        return _run_session(args)
    if args.request is not None or args.changes:
        raise UsageError("--request and --changes are for a recorded session: give --session PATH")
    if args.cwd and not Path(args.cwd).expanduser().is_dir():
        raise UsageError(f"{args.cwd}: --cwd is not a directory")
    try:
        prompt = assemble(args.cwd, args.prompt_template, False if args.no_memory else args.memory,
                          estimator=args.estimator or "script", allow_outside=args.allow_outside_imports)
    except (TemplateError, EstimatorUnavailable) as exc:
        raise UsageError(str(exc)) from None
    findings = lint(prompt.sections)
    if args.text:
        sys.stdout.write(safe(prompt.text) + "\n")
        return 0
    if args.json:
        data = {"template": str(prompt.template), "default_template": prompt.default_template,
                "cwd": str(prompt.cwd), "memory": str(prompt.memory) if prompt.memory else None,
                "estimator": prompt.estimator, "tokens": sum(s.tokens for s in prompt.sections),
                "sections": [s.to_json() for s in prompt.sections], "findings": [f.to_json() for f in findings],
                "notes": prompt.notes}
        _json(data)
    else:
        template = f"{prompt.template}" + (" (built-in; copy it to edit)" if prompt.default_template else "")
        memory = str(prompt.memory) if prompt.memory else "off"
        head = [("Template", template), ("Working directory", str(prompt.cwd)), ("Memory", memory),
                ("Tokens", "counted by the API" if prompt.estimator == "exact"
                 else f"estimated with {prompt.estimator}")]
        _print(head, prompt.sections, prompt.notes, findings if args.lint else None,
               find_repo_root(prompt.cwd) or prompt.cwd)
    return 1 if args.lint and findings else 0


def _run_session(args: argparse.Namespace) -> int:
    session = load(args.session)
    # report's default: fitted on the session's usage when it has some, so the prefix is the one report states
    args.estimator = args.estimator or ("calibrated" if session.requests else session_default(session))
    sent = session.sent.requests if session.sent is not None else []
    if (args.request is not None or args.changes) and not sent:
        raise UsageError(f"{session.source}: this {session.format} session records no requests (Claude Code "
                         "2.1.332 and later do)")
    if args.changes:
        return _print_changes(session, args.json)
    request = None
    if args.request is not None:
        if not 1 <= args.request <= len(sent):
            raise UsageError(f"--request {args.request}: the session records requests 1 to {len(sent)}")
        request = sent[args.request - 1]
    try:
        accounting = account(session, args.estimator, resumable=False)
        view = session_prompt(session, args.estimator, accounting, request=request)
    except EstimatorUnavailable as exc:
        raise UsageError(str(exc)) from None
    from_messages = sum(s.tokens for s in view.sections if s.lines and s.kind == "recorded")
    if from_messages and accounting.prefix_measured and request is None:
        view.notes.append(f"report states the prefix as {accounting.prefix:,}: the sections here less the "
                          f"{from_messages:,} of messages the harness sent before the conversation, which report "
                          "counts as messages")
    findings = lint(view.sections, recommended=False)
    if args.text:
        sys.stdout.write(safe("\n\n".join(s.text for s in view.sections if s.kind == "recorded")) + "\n")
        return 0
    if args.json:
        _json({"session": session.source, "format": session.format, "estimator": args.estimator,
               "tokens": view.tokens, "sections": [s.to_json() for s in view.sections],
               "findings": [f.to_json() for f in findings], "notes": view.notes})
    else:
        head = [("Session", session.source), ("Format", session.format),
                ("Tokens", f"estimated with {args.estimator} unless measured")]
        if sent:
            shown = request or latest(session)
            head.insert(2, ("Request", f"{session.sent.index(shown) + 1} of {len(sent)} recorded (--request N for "
                                       "another, --changes for what changed)"))
        where = Path(session.cwd) if session.cwd and Path(session.cwd).is_dir() else Path.cwd()
        _print(head, view.sections, view.notes, findings if args.lint else None, find_repo_root(where) or where)
    return 1 if args.lint and findings else 0


def _print_changes(session, as_json: bool) -> int:
    from inspector.core.request_changes import all_changes

    log = session.sent
    changes = all_changes(log)
    if as_json:
        _json({"session": session.source, "requests": [
            {"index": n, "id": c.request.id, "line": c.request.line, "thread": c.request.agent_id,
             "previous": c.previous.id if c.previous else None, "messages": c.messages,
             "response": log.response_id(c.request), "added": [{"index": a.index, "role": a.role, "kind": a.kind,
                                                                 "summary": a.summary} for a in c.added],
             "dropped": c.dropped, "replaced": c.replaced, "cleared": c.cleared, "reminders": c.reminders,
             "tools_added": c.tools_added, "tools_removed": c.tools_removed, "tools_changed": c.tools_changed,
             "system_changed": c.system_changed, "params_changed": c.params_changed}
            for n, c in enumerate(changes, 1)]})
        return 0
    out = [f"{'Session:':<19}{safe_line(session.source)}", f"{'Requests:':<19}{len(changes)} recorded", ""]
    for n, change in enumerate(changes, 1):
        r = change.request
        thread = f" · subagent {safe_line(r.agent_id)}" if r.agent_id else ""
        answered = "" if log.response_id(r) else " · no response (failed, retried)"
        out.append(f"#{n} line {r.line}{thread}{answered}: {safe_line(change.short())}")
        out += [f"    {safe_line(line)}" for line in change.lines()]
    sys.stdout.write("\n".join(out) + "\n")
    return 0


def _json(data: dict) -> None:
    json.dump(data, sys.stdout, ensure_ascii=True, indent=1)
    sys.stdout.write("\n")


def _source(section: Section, base: Path) -> str:
    shown = short_path(Path(section.source), base) if section.source == section.path else section.source
    return shown + (f" ({section.kind})" if section.kind not in ("built", section.source) else "")


def _print(head: list[tuple[str, str]], sections: list[Section], notes: list[str], findings: list[Finding] | None,
           base: Path) -> None:
    """The table, under a heading per group with the group's tokens when the sections are grouped (a recorded
    Claude Code request); file sources are shown relative to `base` (the repository root or working directory)."""
    out = [f"{label + ':':<19}{safe_line(value)}" for label, value in head]
    rows: list[tuple[str, str, str, str]] = []
    for i, s in enumerate(sections, 1):
        if s.group and (i == 1 or sections[i - 2].group != s.group):
            tokens = sum(t.tokens for t in sections if t.group == s.group)
            rows.append(("", group_title(s.group, sections), "", f"{tokens:,}"))
        rows.append((str(i), ("  " if s.group else "") + safe_line(s.title), safe_line(_source(s, base)),
                     f"{s.tokens:,}"))
    total = sum(s.tokens for s in sections if s.kind != "reconstructed")
    widths = [max([len(h)] + [len(r[c]) for r in rows]) for c, h in enumerate(("#", "Section", "Source", "Tokens"))]
    widths[3] = max(widths[3], len(f"{total:,}"))
    out.append("")
    out.append(f"{'#':>{widths[0]}}  {'Section':<{widths[1]}}  {'Source':<{widths[2]}}  {'Tokens':>{widths[3]}}")
    out += [f"{a:>{widths[0]}}  {b:<{widths[1]}}  {c:<{widths[2]}}  {d:>{widths[3]}}" for a, b, c, d in rows]
    label = "Total" + (" (reconstructed files not included)" if any(s.kind == "reconstructed" for s in sections)
                       else "")
    out.append(f"{'':>{widths[0]}}  {label:<{widths[1] + widths[2] + 2}}  {total:>{widths[3]},}")
    explained: dict[str, list[str]] = {}
    for s in sections:
        if s.note:
            explained.setdefault(s.note, []).append("Reconstructed files" if s.kind == "reconstructed" else s.title)
    if explained:
        out.append("")
        out += [f"{safe_line(titles[0])}{f' (and {len(set(titles)) - 1} more)' if len(set(titles)) > 1 else ''}: "
                f"{safe_line(note)}" for note, titles in explained.items()]
    if notes:
        out.append("")
        out += ["Notes:"] + [f"  {safe_line(n)}" for n in notes]
    if findings is not None:
        out.append("")
        out.append(f"Lint: {len(findings)} finding{'s' if len(findings) != 1 else ''}" if findings else "Lint: clean")
        for f in findings:
            out.append(f"  {safe_line(f.location())}: {f.rule}: {safe_line(f.message)}")
            if f.excerpt:
                out.append(f"      > {safe_line(f.excerpt)}")
    sys.stdout.write("\n".join(out) + "\n")
