"""Accuracy of token accounting against the API's own figures in real transcripts.

For every corpus file: prediction (last measured context + estimate of what came since, using only earlier usage)
and estimation alone (unrecorded prefix + estimates of every message a request saw), as median / p90 / max absolute
percentage error, for each estimator; then the five worst predicted requests with their cause.

    /work/venv/bin/python benchmarks/accuracy.py [FILES...] [--estimator NAME ...]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from inspector.core.formats import load
from inspector.core.tokens import account

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"
TARGETS = {"prediction": (0.3, 1.0), "estimation": (3.0, None)}


def _fmt(v: float | None) -> str:
    return "    -" if v is None else f"{v:5.2f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--estimator", action="append", dest="estimators")
    args = parser.parse_args(argv)
    files = args.files or sorted(CORPUS.glob("*.jsonl"))
    estimators = args.estimators or ["calibrated", "script", "blocks", "chars35"]
    print(f"{'file':40s} {'estimator':11s} {'n':>4s}  prediction med/p90/max %   estimation med/p90/max %")
    worst = []
    for path in files:
        session = load(str(path))
        for name in estimators:
            acc = account(session, name)
            p, e = acc.prediction, acc.estimation
            print(f"{path.name[:40]:40s} {name:11s} {len(session.requests):4d}  "
                  f"{_fmt(p.median_abs_error_pct)} {_fmt(p.p90_abs_error_pct)} {_fmt(p.max_abs_error_pct)}"
                  f"          {_fmt(e.median_abs_error_pct)} {_fmt(e.p90_abs_error_pct)} {_fmt(e.max_abs_error_pct)}")
            if name == estimators[0]:
                worst += [(path.name, f) for f in acc.worst_predictions(5)]
    print(f"\nfive worst predictions ({estimators[0]}):")
    worst.sort(key=lambda x: -abs(x[1].prediction_error_pct or 0))
    for name, f in worst[:5]:
        print(f"  {name} line {f.request.line}: predicted {f.predicted:,} measured {f.measured:,} "
              f"({f.prediction_error_pct:+.2f}%) {f.cause or 'no recorded cause'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
