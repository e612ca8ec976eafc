"""Accuracy of token accounting against the API's own figures, in real transcripts and the lab's rollouts.

For every file: prediction (last measured context + estimate of what came since, using only earlier usage) and
estimation alone (unrecorded prefix + estimates of every message a request saw), as median / p90 / max absolute
percentage error, for each estimator; then the same pooled over every request of each format (a compaction's own
request is not scored: accounting says why), with the targets for Codex; then the five worst predicted requests.

    python benchmarks/accuracy.py [FILES or DIRECTORIES ...] [--estimator NAME ...]

With no paths: the Claude Code corpus (tests/corpus) and the Codex lab's rollouts (tests/fixtures/agents/codex-*).
A directory stands for every Codex rollout and Claude Code session file below it. Exit status 1 when a Codex
target is missed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from inspector.core.formats import load
from inspector.core.tokens import Accuracy, account

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"
LAB = ROOT / "tests" / "fixtures" / "agents"
# Issue 14: (median, p90) absolute error %, pooled over the Codex requests.
CODEX_TARGETS = {"prediction": (0.5, 2.0), "estimation": (5.0, 10.0)}


def _fmt(v: float | None) -> str:
    return "    -" if v is None else f"{v:5.2f}"


def _files(paths: list[Path]) -> list[Path]:
    if not paths:
        return sorted(CORPUS.glob("*.jsonl")) + sorted(LAB.glob("codex-*/*/home/.codex/sessions/*/*/*/rollout-*.jsonl"))
    out: list[Path] = []
    for p in paths:
        if p.is_dir():
            out += sorted(p.rglob("rollout-*.jsonl")) + sorted(p.glob("*.jsonl"))
        else:
            out.append(p)
    return out


def _name(path: Path) -> str:
    """A short name: the lab's `<agent-version>/<scenario>`, else the file name."""
    parts = path.parts
    if "agents" in parts and "fixtures" in parts:
        i = parts.index("agents")
        return f"{parts[i + 1]}/{parts[i + 2]}"
    return path.name


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--estimator", action="append", dest="estimators")
    args = parser.parse_args(argv)
    files = _files(args.files)
    estimators = args.estimators or ["calibrated", "o200k", "script", "blocks", "chars35"]
    print(f"{'file':36s} {'estimator':11s} {'n':>4s}  prediction med/p90/max %   estimation med/p90/max %")
    worst = []
    pooled: dict[tuple[str, str], tuple[list[float], list[float]]] = {}
    for path in files:
        session = load(str(path))
        for name in estimators:
            acc = account(session, name)
            p, e = acc.prediction, acc.estimation
            print(f"{_name(path)[:36]:36s} {name:11s} {len(session.requests):4d}  "
                  f"{_fmt(p.median_abs_error_pct)} {_fmt(p.p90_abs_error_pct)} {_fmt(p.max_abs_error_pct)}"
                  f"          {_fmt(e.median_abs_error_pct)} {_fmt(e.p90_abs_error_pct)} {_fmt(e.max_abs_error_pct)}")
            pred, est = pooled.setdefault((session.format, name), ([], []))
            scored = [f for f in acc.requests[1:] if f.request.kind == "turn"]
            pred += [f.prediction_error_pct for f in scored if f.predicted is not None]
            est += [f.estimation_error_pct for f in scored]
            if name == estimators[0]:
                worst += [(_name(path), f) for f in acc.worst_predictions(5)]
    print("\npooled over every scored request of a format:")
    missed = False
    for (fmt, name), (pred, est) in pooled.items():
        p, e = Accuracy.of(pred), Accuracy.of(est)
        verdict = ""
        if fmt == "codex" and name == estimators[0]:
            ok = all(a.median_abs_error_pct is not None and a.median_abs_error_pct <= lo and a.p90_abs_error_pct <= hi
                     for a, (lo, hi) in ((p, CODEX_TARGETS["prediction"]), (e, CODEX_TARGETS["estimation"])))
            verdict = "  targets met" if ok else "  TARGETS MISSED"
            missed |= not ok
        print(f"  {fmt:12s} {name:11s} {p.count:4d}  "
              f"{_fmt(p.median_abs_error_pct)} {_fmt(p.p90_abs_error_pct)} {_fmt(p.max_abs_error_pct)}"
              f"          {_fmt(e.median_abs_error_pct)} {_fmt(e.p90_abs_error_pct)} {_fmt(e.max_abs_error_pct)}"
              f"{verdict}")
    print(f"  (Codex targets: prediction median <= {CODEX_TARGETS['prediction'][0]}%, p90 <= "
          f"{CODEX_TARGETS['prediction'][1]}%; estimation median <= {CODEX_TARGETS['estimation'][0]}%, p90 <= "
          f"{CODEX_TARGETS['estimation'][1]}%)")
    print(f"\nfive worst predictions ({estimators[0]}):")
    worst.sort(key=lambda x: -abs(x[1].prediction_error_pct or 0))
    for name, f in worst[:5]:
        print(f"  {name} line {f.request.line}: predicted {f.predicted:,} measured {f.measured:,} "
              f"({f.prediction_error_pct:+.2f}%) {f.cause or 'no recorded cause'}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
