"""`context-inspector report PATH [--json]`: what a session's context holds, headless."""

from __future__ import annotations

import argparse
import json
import sys

from inspector.core.formats import load
from inspector.core.report import report_dict, report_text

PROGRESS_MIN_BYTES = 20 * 1024 * 1024


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", metavar="PATH",
                        help="a session file (any supported format) or a Claude Code project directory "
                             "(its newest session is read)")
    parser.add_argument("--json", action="store_true",
                        help="print one JSON object (schema: docs/report-json.md) instead of the table")


def run(args: argparse.Namespace) -> int:
    session = load(args.path, progress=_progress if sys.stderr.isatty() else None)
    if sys.stderr.isatty():
        sys.stderr.write("\r\x1b[K")
    if args.json:
        json.dump(report_dict(session), sys.stdout, ensure_ascii=True, separators=(",", ":"))
        sys.stdout.write("\n")
    else:
        sys.stdout.write(report_text(session))
    sys.stdout.flush()
    return 0


def _progress(done: int, total: int) -> None:
    if total >= PROGRESS_MIN_BYTES and done < total:
        sys.stderr.write(f"\rreading {done / total:4.0%} of {total / 1e6:,.0f} MB")
        sys.stderr.flush()
