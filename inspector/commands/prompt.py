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
from inspector.core.formats import load
from inspector.core.prompt.builder import Section, assemble
from inspector.core.prompt.claude_md import short_path
from inspector.core.prompt.environment import find_repo_root
from inspector.core.prompt.lint import Finding, lint
from inspector.core.prompt.memory import default_memory_path
from inspector.core.prompt.session_view import session_prompt
from inspector.core.prompt.template import TemplateError
from inspector.core.report import safe, safe_line


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
    parser.add_argument("--estimator", choices=sorted(ESTIMATORS), default="script",
                        help="token estimator (default: script; exact asks the API, with ANTHROPIC_API_KEY)")
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
    if args.cwd and not Path(args.cwd).expanduser().is_dir():
        raise UsageError(f"{args.cwd}: --cwd is not a directory")
    try:
        prompt = assemble(args.cwd, args.prompt_template, False if args.no_memory else args.memory,
                          estimator=args.estimator, allow_outside=args.allow_outside_imports)
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
    try:
        view = session_prompt(session, args.estimator)
    except EstimatorUnavailable as exc:
        raise UsageError(str(exc)) from None
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
        where = Path(session.cwd) if session.cwd and Path(session.cwd).is_dir() else Path.cwd()
        _print(head, view.sections, view.notes, findings if args.lint else None, find_repo_root(where) or where)
    return 1 if args.lint and findings else 0


def _json(data: dict) -> None:
    json.dump(data, sys.stdout, ensure_ascii=True, indent=1)
    sys.stdout.write("\n")


def _source(section: Section, base: Path) -> str:
    shown = short_path(Path(section.source), base) if section.source == section.path else section.source
    return shown + (f" ({section.kind})" if section.kind not in ("built", section.source) else "")


def _print(head: list[tuple[str, str]], sections: list[Section], notes: list[str], findings: list[Finding] | None,
           base: Path) -> None:
    """The table; file sources are shown relative to `base` (the repository root or working directory)."""
    out = [f"{label + ':':<19}{safe_line(value)}" for label, value in head]
    rows = [(str(i), safe_line(s.title), safe_line(_source(s, base)), f"{s.tokens:,}")
            for i, s in enumerate(sections, 1)]
    total = sum(s.tokens for s in sections if s.kind != "reconstructed")
    widths = [max([len(h)] + [len(r[c]) for r in rows]) for c, h in enumerate(("#", "Section", "Source", "Tokens"))]
    widths[3] = max(widths[3], len(f"{total:,}"))
    out.append("")
    out.append(f"{'#':>{widths[0]}}  {'Section':<{widths[1]}}  {'Source':<{widths[2]}}  {'Tokens':>{widths[3]}}")
    out += [f"{a:>{widths[0]}}  {b:<{widths[1]}}  {c:<{widths[2]}}  {d:>{widths[3]}}" for a, b, c, d in rows]
    label = "Total" + (" (reconstructed files not included)" if any(s.kind == "reconstructed" for s in sections)
                       else "")
    out.append(f"{'':>{widths[0]}}  {label:<{widths[1] + widths[2] + 2}}  {total:>{widths[3]},}")
    explained = {s.note: "Reconstructed files" if s.kind == "reconstructed" else s.title for s in sections if s.note}
    if explained:
        out.append("")
        out += [f"{safe_line(title)}: {safe_line(note)}" for note, title in explained.items()]
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
