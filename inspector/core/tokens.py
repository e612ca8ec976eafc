"""Token accounting: measured usage, its attribution to messages, and the figure compaction decisions use.

The API's usage is exact but per request, not per message. Accounting turns it into per-message figures that add up
exactly to what the API reported, and labels everything else as estimated:

- a request's measured context is input + cache creation + cache read (`Request.measured_context`);
- the unrecorded prefix (system prompt, tools, memory: not in a Claude Code transcript) is the first request's
  measured context minus the estimate of the messages it saw;
- the growth between consecutive requests of one window is spread over the messages added between them in
  proportion to their estimates, so prefix + per-message figures sum exactly to every request's measured context;
  growth the transcript cannot explain (a model switch changes the prefix, text injected after a compaction,
  content cleared outside the transcript) goes to its own `unrecorded` figure instead of being smeared over messages;
- `current_context` = the last measured context + the estimate of everything appended since: what compaction
  decisions use. For every request after the first, `predicted` is what this figure said before the request was
  sent (using only earlier usage), and `estimated` is the pure estimate (prefix + every message it saw).

With the `calibrated` estimator (the default when usage exists) ratios are fitted on the session's own growths
(calibration.py); predictions and estimates for request k use the fit from requests before k only.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, field
from operator import add, sub
from typing import Sequence

from inspector.core import categories as cat
from inspector.core.calibration import Calibrator
from inspector.core.estimators import (
    N_FEATURES, Calibrated, Estimator, Exact, FeatureEstimator, Script, block_features, dot, get_estimator)
from inspector.core.limits import current_model
from inspector.core.model import Message, Request, Session

# Growth this far beyond the estimate of the messages added (x the estimate, plus tokens) is not theirs: the harness
# injected something the transcript does not record.
UNEXPLAINED_FACTOR = 2.0
UNEXPLAINED_SLACK = 1500


@dataclass(slots=True)
class RequestFigures:
    """One request's figures. `predicted` is None for the session's first request (nothing earlier to use)."""

    request: Request
    window: int
    measured: int
    predicted: int | None
    estimated: int
    unrecorded: int = 0
    cause: str | None = None

    @property
    def prediction_error_pct(self) -> float | None:
        return None if self.predicted is None else _pct(self.predicted, self.measured)

    @property
    def estimation_error_pct(self) -> float:
        return _pct(self.estimated, self.measured)


@dataclass(slots=True)
class Accuracy:
    """Absolute percentage errors against measured contexts (p90: nearest rank)."""

    count: int
    median_abs_error_pct: float | None
    p90_abs_error_pct: float | None
    max_abs_error_pct: float | None

    @classmethod
    def of(cls, errors: Sequence[float]) -> Accuracy:
        if not errors:
            return cls(0, None, None, None)
        a = sorted(abs(e) for e in errors)
        p90 = a[max(0, -(-len(a) * 9 // 10) - 1)]
        return cls(len(a), round(statistics.median(a), 4), round(p90, 4), round(a[-1], 4))

    def to_dict(self) -> dict:
        return {"count": self.count, "median_abs_error_pct": self.median_abs_error_pct,
                "p90_abs_error_pct": self.p90_abs_error_pct, "max_abs_error_pct": self.max_abs_error_pct}


@dataclass
class Accounting:
    """Token figures of a session. Per message: `estimated[i]`, `measured[i]` (None where no usage covers it),
    `category[i]`. `prefix` is the unrecorded prefix of the current window's model; `unrecorded` the growth of the
    current window no message explains; `current_context` the figure compaction decisions use."""

    session: Session
    estimator: str
    estimated: list[int]
    measured: list[int | None]
    category: list[str]
    prefix: int
    prefix_measured: bool
    unrecorded: int
    requests: list[RequestFigures]
    current_context: int
    current_measured: int | None
    by_category: dict[str, int]
    prediction: Accuracy
    estimation: Accuracy
    ratios: dict[str, tuple[float, ...]] = field(default_factory=dict)

    @property
    def estimated_total(self) -> int:
        """The estimate of the current context without the last usage: prefix, the window's unrecorded growth and
        the estimates of every message in it."""
        return self.prefix + self.unrecorded + sum(self.estimated[self.session.context_start:])

    def figure(self, i: int) -> tuple[int, str]:
        """Message i's figure and its label for display: ("measured" share of usage, else "estimated")."""
        m = self.measured[i]
        return (m, "measured") if m is not None else (self.estimated[i], "estimated")

    def worst_predictions(self, n: int = 5) -> list[RequestFigures]:
        scored = [r for r in self.requests if r.predicted is not None]
        return sorted(scored, key=lambda r: -abs(r.prediction_error_pct or 0))[:n]


def _pct(value: float, reference: float) -> float:
    return (value - reference) / reference * 100 if reference else 0.0


def _parts(message: Message, names: dict[str, str]) -> dict[str, list[float]]:
    """The message's features per category (a message's own structure, its turn markers, goes with its first part)."""
    parts: dict[str, list[float]] = {}
    for block in message.blocks:
        key = cat.block_category(message, block, names)
        features = parts.get(key)
        if features is None:
            features = parts[key] = [0.0] * N_FEATURES
        block_features(block, features)
    if not parts:
        parts[cat.USER_PROMPTS if message.role == "user" else cat.ASSISTANT_TEXT] = [0.0] * N_FEATURES
    next(iter(parts.values()))[-1] += 1.0  # MESSAGE: the turn's own markers
    return parts


def _sum(vectors) -> list[float]:
    out = [0.0] * N_FEATURES
    for v in vectors:
        out = list(map(add, out, v))
    return out


def _cumulative(feats: list[list[float]]) -> list[list[float]]:
    out = [[0.0] * N_FEATURES]
    last = out[0]
    for f in feats:
        last = list(map(add, last, f))
        out.append(last)
    return out


def _sum_range(cumulative: list[list[float]], lo: int, hi: int) -> list[float]:
    return list(map(sub, cumulative[hi], cumulative[lo]))


def _windows(session: Session) -> list[list[int]]:
    """Indices of session.requests grouped by window (requests sharing a context start), in order."""
    groups: list[list[int]] = []
    start = None
    for i, r in enumerate(session.requests):
        if r.seen_start != start or not groups:
            groups.append([])
            start = r.seen_start
        groups[-1].append(i)
    return groups


def account(session: Session, estimator: str | Estimator | None = None) -> Accounting:
    """Account for every token of `session`. `estimator` is a name or an Estimator; None: `calibrated` when the
    session has usage, else `script`."""
    if estimator is None:
        estimator = "calibrated" if session.requests else "script"
    est = get_estimator(estimator) if isinstance(estimator, str) else estimator
    if isinstance(est, Exact):  # one API call for the current state; messages share it by the fitted estimate
        est.fallback = estimator_for(session)
        est.state(session.context, session.system, session.tools, current_model(session))
    names = cat.tool_names(session.messages)
    parts = [_parts(m, names) for m in session.messages]
    feats = [_sum(p.values()) if len(p) > 1 else next(iter(p.values())) for p in parts]
    fitted = est.name == "calibrated"
    by_features = fitted or isinstance(est, FeatureEstimator)
    if by_features:
        cumulative = _cumulative(feats)
        base_ratios = None if fitted else est.ratios  # type: ignore[attr-defined]
    else:
        per_message = [float(est.message(m)) for m in session.messages]
        running = [0.0]
        for x in per_message:
            running.append(running[-1] + x)

    def estimate(lo: int, hi: int, ratios: Sequence[float] | None) -> float:
        if not by_features:
            return running[hi] - running[lo]
        return dot(ratios or base_ratios, _sum_range(cumulative, lo, hi))  # type: ignore[arg-type]

    # Pass 1, in request order: predictions and estimates with only earlier usage; feeds the calibration.
    # A prefix (system prompt, tools and, after a compaction, what the harness injected) is kept as its anchor, the
    # first request of a model in a window, and re-derived with the current ratios so all figures stay consistent.
    calibrator = Calibrator()
    session_anchor: dict[str, Request] = {}
    figures: list[RequestFigures] = []
    windows = _windows(session)
    reqs = session.requests
    prev: Request | None = None
    for w, group in enumerate(windows):
        window_anchor: dict[str, Request] = {}
        for pos, ri in enumerate(group):
            r = reqs[ri]
            model = r.model or ""
            ratios = calibrator.ratios(model) if fitted else None

            def prefix(anchor: Request) -> float:
                return anchor.measured_context - estimate(anchor.seen_start, anchor.seen_end, ratios)

            seen = estimate(r.seen_start, r.seen_end, ratios)
            if prev is None:
                predicted, estimated = None, r.measured_context
            elif pos == 0:  # the first request after a compaction: a new sum from the prefix
                anchor = session_anchor.get(model) or session_anchor[prev.model or ""]
                predicted = estimated = int(prefix(anchor) + seen)
            else:
                before = prefix(window_anchor[prev.model or ""])
                anchor = window_anchor.get(model) or session_anchor.get(model)
                known = before if anchor is None else prefix(anchor)
                estimated = int(known + seen)
                added = estimate(prev.seen_end, r.seen_end, ratios)
                predicted = int(prev.measured_context + known - before + added)
                growth = r.measured_context - prev.measured_context
                if model == (prev.model or "") and 0 <= growth <= UNEXPLAINED_FACTOR * added + UNEXPLAINED_SLACK:
                    calibrator.observe(model, _sum_range(cumulative, prev.seen_end, r.seen_end)
                                       if by_features else _sum(feats[prev.seen_end:r.seen_end]), growth)
            window_anchor.setdefault(model, r)
            session_anchor.setdefault(model, r)
            figures.append(RequestFigures(r, w, r.measured_context, predicted, estimated))
            prev = r

    # Pass 2: the final estimates (every observation used) and the attribution of measured figures to messages.
    final = calibrator.estimator(reqs[-1].model if reqs else None) if fitted else est
    first_model = _first_model_per_message(session)
    estimated_f: list[float] = []
    for i, f in enumerate(feats):
        if by_features:
            ratios = final.for_model(first_model[i]) if fitted else final.ratios  # type: ignore[attr-defined]
            estimated_f.append(max(0.0, dot(ratios, f)))
        else:
            estimated_f.append(per_message[i])
    estimated = [int(round(x)) for x in estimated_f]
    measured: list[int | None] = [None] * len(session.messages)
    prefix_of: dict[str, int] = {}
    prefix = 0
    unrecorded_w = 0
    prefix_measured = bool(reqs)
    for w, group in enumerate(windows):
        unrecorded_w = 0
        for pos, ri in enumerate(group):
            r = reqs[ri]
            fig = figures[ri]
            model = r.model or ""
            if pos == 0:
                lo, hi = r.seen_start, r.seen_end
                guess = sum(estimated_f[lo:hi])
                if w == 0:
                    prefix = max(0, r.measured_context - int(round(guess)))
                    prefix_of[model] = prefix
                    _spread(measured, estimated_f, lo, hi, r.measured_context - prefix)
                else:
                    prefix = prefix_of.get(model, prefix)
                    room = r.measured_context - prefix
                    given = _spread(measured, estimated_f, lo, hi, max(0, min(room, int(round(guess)))))
                    fig.unrecorded = room - given
                    fig.cause = ("after compaction: re-injected content the transcript does not record"
                                 if fig.unrecorded >= 0 else
                                 "after compaction: less than the prefix + estimates (the estimate runs high)")
                    unrecorded_w += fig.unrecorded
                continue
            p = reqs[group[pos - 1]]
            lo, hi = p.seen_end, r.seen_end
            growth = r.measured_context - p.measured_context
            guess = sum(estimated_f[lo:hi])
            cause = None
            if model != (p.model or ""):
                cause = f"model switch {p.model} -> {r.model}: another system prompt and tokenizer"
            elif growth < 0:
                cause = "context shrank: content cleared outside the transcript"
            elif guess <= 0 and growth > 0:
                cause = "growth with no recorded message"
            elif growth > UNEXPLAINED_FACTOR * guess + UNEXPLAINED_SLACK:
                cause = "growth far beyond the recorded messages: injected by the harness"
            if cause is None:
                _spread(measured, estimated_f, lo, hi, growth)
            else:
                given = _spread(measured, estimated_f, lo, hi, max(0, min(growth, int(round(guess)))))
                fig.unrecorded = growth - given
                fig.cause = cause
                unrecorded_w += fig.unrecorded
                if cause.startswith("model switch") and model not in prefix_of:
                    prefix_of[model] = prefix + fig.unrecorded
            prefix_of.setdefault(model, prefix)
    # After the last request: the current window's model's prefix, and the growth no message explains.
    last = reqs[-1] if reqs else None
    start = session.context_start
    if last is not None and last.seen_start == start:
        current_measured = last.measured_context
        tail = sum(estimated[last.seen_end:])
        current = current_measured + tail
        # A microcompaction after the last request (e.g. applied in a preview) is unseen by its usage: subtract it.
        current -= sum(c.tokens_saved or 0 for c in session.compactions
                       if c.kind == "microcompact" and c.index >= last.seen_end)
        prefix = prefix_of.get(last.model or "", prefix)
        unrecorded = current_measured - prefix - sum(m or 0 for m in measured[start:last.seen_end])
    else:  # no usage in the current window (a compaction after the last request, or none at all)
        current_measured = None
        unrecorded = 0
        prefix = prefix_of.get(last.model or "", prefix) if last else _recorded_prefix(session, final)
        prefix_measured = last is not None
        current = prefix + sum(estimated[start:])

    by_category, category = _categorise(session, parts, estimated, measured, final, first_model, fitted)
    by_category[cat.SYSTEM_TOOLS] = prefix
    if unrecorded:
        by_category[cat.UNRECORDED] = unrecorded
    ratios_out = dict(final.per_model) if fitted else {}  # type: ignore[attr-defined]
    if fitted:
        _last_fit[:] = [(session, dict(ratios_out))]
    return Accounting(
        session=session, estimator=est.name, estimated=estimated, measured=measured, category=category,
        prefix=prefix, prefix_measured=prefix_measured, unrecorded=unrecorded, requests=figures,
        current_context=int(current), current_measured=current_measured, by_category=by_category,
        prediction=Accuracy.of([f.prediction_error_pct for f in figures if f.predicted is not None]),
        estimation=Accuracy.of([f.estimation_error_pct for f in figures[1:]]),
        ratios=ratios_out)


def _recorded_prefix(session: Session, est: Estimator) -> int:
    """The estimate of a recorded system prompt and tool schemas (Anthropic requests, our own sessions, Codex
    instructions): the prefix when no usage measures it."""
    parts = [session.system or ""] + [t.name + t.description + json.dumps(t.input_schema, default=str)
                                      for t in session.tools]
    return sum(est.text(p) for p in parts if p)


# The last calibrated fit, (session, ratios per model): `estimator_for` on the session just accounted (the app's
# workbench, right after the figures it shows) reuses it instead of accounting 100,000 messages again.
_last_fit: list[tuple[Session, dict[str, tuple[float, ...]]]] = []


def estimator_for(session: Session, name: str | None = None) -> Estimator:
    """An estimator for hypothetical states of `session` (compaction previews): `calibrated` (the default when the
    session has usage) comes fitted on all its requests, answering for its current model."""
    name = name or ("calibrated" if session.requests else "script")
    if name != "calibrated":
        return get_estimator(name)
    if not session.requests:
        return Script()
    last = _last_fit[:1]
    ratios = last[0][1] if last and last[0][0] is session else account(session, "calibrated").ratios
    return Calibrated(ratios, current_model(session))


def _spread(measured: list[int | None], weights: list[float], lo: int, hi: int, total: int) -> int:
    """Give messages[lo:hi] integer shares of `total` in proportion to `weights` (equal shares where all weigh
    nothing); the shares sum to `total` exactly. Returns `total` (0 when there is no message to give it to)."""
    if hi <= lo:
        return 0
    w = weights[lo:hi]
    s = sum(w)
    if s <= 0:
        w = [1.0] * (hi - lo)
        s = float(hi - lo)
    given = 0
    acc = 0.0
    for k, x in enumerate(w):
        acc += x
        upto = int(round(total * acc / s))
        measured[lo + k] = upto - given
        given = upto
    return total


def _first_model_per_message(session: Session) -> list[str | None]:
    """The model of the first request that saw each message (the last request's for messages after it): its
    tokenizer is the one that counted the message."""
    out: list[str | None] = [None] * len(session.messages)
    pos = 0
    for r in session.requests:
        while pos < min(r.seen_end, len(out)):
            out[pos] = r.model
            pos += 1
    last = session.requests[-1].model if session.requests else None
    for i in range(pos, len(out)):
        out[i] = last
    return out


def _categorise(session: Session, parts: list[dict[str, list[float]]], estimated: list[int],
                measured: list[int | None], final: Estimator, first_model: list[str | None],
                fitted: bool) -> tuple[dict[str, int], list[str]]:
    """Each message's category, and the current context's tokens per category (measured where known)."""
    by_category: dict[str, int] = {}
    category: list[str] = []
    start = session.context_start
    for i, p in enumerate(parts):
        figure = measured[i] if measured[i] is not None else estimated[i]
        if len(p) == 1:
            key = next(iter(p))
            category.append(key)
            if i >= start:
                by_category[key] = by_category.get(key, 0) + figure
            continue
        if isinstance(final, FeatureEstimator):
            ratios = final.for_model(first_model[i]) if fitted else final.ratios  # type: ignore[attr-defined]
            weights = {k: dot(ratios, f) + 1e-9 for k, f in p.items()}
        else:
            weights = {k: 1.0 for k in p}
        top = max(weights, key=weights.__getitem__)
        category.append(top)
        if i < start:
            continue
        total = sum(weights.values())
        given = 0
        for k, wt in weights.items():
            share = int(figure * wt / total)
            by_category[k] = by_category.get(k, 0) + share
            given += share
        by_category[top] += figure - given
    return by_category, category
