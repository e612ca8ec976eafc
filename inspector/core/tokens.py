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

A long session has 100,000 messages and 50,000 requests, so the passes work on columns: every message's features
kind by kind (feature_columns.py), and the requests of one window and model between two re-solves of the fit
(whose ratios stay the same) together (`_Run._chunk`, request_runs.py), with the very same float operations in the
same order as one message or request at a time: the figures do not move by a bit.

A live session grows by appends: `account_appended` resumes the previous accounting from just before its last
request (the last open interval), so an append costs the messages and requests after that point, not the session.
When an append re-solves the settled fit of a young model (calibration.py: each of a model's first 32
observations; then only at +25%), its messages' estimates move: it resumes from before the first request of the
oldest young model (else the newest model) instead. Anything else (a rebuild, an earlier message changed, another
estimator, an older model's fit re-solved: a few times in a session's life) is accounted from scratch. The result always equals a fresh `account` exactly.
"""

from __future__ import annotations

import bisect
import collections
import json
import weakref
from math import isfinite
from array import array
from dataclasses import dataclass
from itertools import compress, islice, repeat
from operator import add, and_, attrgetter, eq, itemgetter, le, ne, not_, or_, sub
from typing import TYPE_CHECKING, Sequence

from inspector.core import categories as cat
from inspector.core.calibration import YOUNG, Calibrator, group_columns
from inspector.core.estimators import (
    MESSAGE, N_FEATURES, O200K, STATED, Calibrated, Estimator, Exact, FeatureEstimator, Tokenizer, batched, dot,
    get_estimator, sum_in_order, tokenizer_for)
from inspector.core.limits import current_model
from inspector.core.model import Compaction, CompactionsByIndex, Message, Request, Session
from inspector.core.accounting import Accounting, Accuracy, RequestColumns
from inspector.core.feature_columns import Columns, FeatureColumns, add_sums, dots as dot_columns, zeros
from inspector.core.pricing import Pricing, parts, scaled, total, vector
from inspector.core.request_runs import (
    UNEXPLAINED_FACTOR, UNEXPLAINED_SLACK, add_errors, picker, runs_of, same, spread, spread_growths, turns)

if TYPE_CHECKING:
    from inspector.core.follower import Change
    from inspector.core.versions import Edit

# A compaction's own request is sent another way (Codex: without the tools, with a summary prompt the rollout does
# not record): its figure is measured, but no prediction of the agent's context, nor a calibration observation.
COMPACTION_REQUEST = "compaction request: sent without the tools, with a summary prompt the transcript does not record"



# Per-message features are made as columns (`feature_columns.Columns`: None where every message has 0.0; features
# are never -0.0, and adding 0.0 or finite x 0.0 leaves any such sum as it is) where a pass needs them, and their
# running sums kept (arrays; row i: the sum of messages[:i]; MESSAGE's is range(n + 1): ints, which give the same
# floats).


def _sum_range(cumulative: Columns, lo: int, hi: int) -> list[float]:
    """The features of messages[lo:hi] from the running sums."""
    return [0.0 if c is None else c[hi] - c[lo] for c in cumulative]


def account(session: Session, estimator: str | Estimator | None = None, prior: Calibrator | None = None,
            fit_before: int | None = None, resumable: bool = True) -> Accounting:
    """Account for every token of `session`. `estimator` is a name or an Estimator; None: `calibrated` when the
    session has usage, else `script`. `prior`: the calibrated fit of what came before `session` (a session read
    from a compaction boundary on, statusline.py: its observations continue that fit); `fit_before`: the request
    before which the fit is kept as the accounting's `fit` (what a read from that request's window on continues).
    `resumable=False`: for a caller that never follows the session (`report`, `stats`): the same figures, without
    the state `account_appended` resumes from (its snapshots on the way, and the per-message columns it holds)."""
    est = _estimator(session, estimator)
    if isinstance(est, Exact):  # one API call for the current state; messages share it by the fitted estimate
        est.fallback = estimator_for(session)
        est.state(session.context, session.system, session.tools, current_model(session))
    run = _Run(session, est, None, prior, fit_before, resumable)
    acc = run.accounting()
    acc.fit = run.fit
    return acc


def account_appended(previous: Accounting, session: Session, change: Change | None,
                     estimator: str | Estimator | None = None, prior: Calibrator | None = None) -> Accounting:
    """`account(session, estimator)`, reusing `previous` (the accounting of the state `change` started from) when
    `change` only appended messages and requests, or grew the last messages: the work is then that of the messages
    from the last request `previous` saw on, not of the session. Anything else (a rebuild, a rewind, an earlier
    message changed, another estimator, a context start moved back, the settled calibrated fit of a model moved)
    is accounted from scratch. Either way the result equals a fresh `account` (with the same `prior`) exactly."""
    state = previous.resume
    est = _estimator(session, estimator)
    if not (state is None or change is None or change.rebuilt or change.session is not session
            or est.name != previous.estimator or (isinstance(estimator, Estimator) and estimator is not state.est)):
        changed = min([change.first_new, *change.updated])
        previous.resume = None  # taken over: its lists are cut back and grown in place
        for point in (state, state.earlier):  # what a failed try changes lies after the earlier point's mark
            if point is not None:
                try:
                    return _Run(session, point.est, (point, previous, changed)).accounting()
                except _Stale:
                    pass
    return account(session, est, prior)


def _estimator(session: Session, estimator: str | Estimator | None) -> Estimator:
    if estimator is None:
        estimator = "calibrated" if session.requests else session_default(session)
    if estimator == "calibrated":  # fitted from the tokenizer of the session's models where we ship it
        return Calibrated(counter=session_tokenizer(session))
    return get_estimator(estimator) if isinstance(estimator, str) else estimator


def session_tokenizer(session: Session) -> Tokenizer | None:
    """The tokenizer of the session's models when we ship it (OpenAI's o200k models: Codex), else None."""
    for model in session.models:
        found = tokenizer_for(model)
        if found is not None:
            return found
    return O200K if session.format == "codex" and not session.models else None


def session_default(session: Session) -> str:
    """The estimator for a session without usage: `o200k` for OpenAI models, else `script`."""
    return "o200k" if session_tokenizer(session) is not None else "script"


class _Stale(Exception):
    """Resuming cannot give a fresh accounting's figures (something before the resume point changed)."""


@dataclass(slots=True, repr=False, eq=False)  # (the methods a dataclass generates are compiled at start-up)
class _Resume:
    """An accounting's state just before its session's last request, the point `account_appended` resumes from.
    Messages before `mark` keep their figures as long as no message before `seen` changes, the estimator gives
    their models the same ratios, and the context does not start anew before `mark`."""

    est: Estimator
    k: int  # the request redone when resuming: the last one (0 without requests)
    mark: int  # messages before it keep their figures; the redo starts there
    seen: int  # max seen_end of the requests before k: they saw messages[:seen]
    n_messages: int
    names: dict[str, str]  # tool names of the session's every message
    names_mark: dict[str, str]  # ... of messages[:mark]
    # tool_result ids of messages[:mark], made when a resume first needs them (None until then; shared, grows: a
    # superset only makes resuming rarer)
    result_ids: set[str] | None
    keys: list[str | None]
    multi: dict[int, dict[str, list[float]]]
    rows: array  # for an estimator without features: each message's features, N_FEATURES a message (flat)
    cumulative: Columns
    per_message: list[float]
    running: list[float]
    calibrator: Calibrator  # pass 1 before request k
    session_anchor: dict[str, Request]
    window_anchor: dict[str, Request]
    prefix_of: dict[str, int]  # pass 2 before request k
    prefix: int
    first_model: list[str | None]
    final: Estimator  # what made the per-message estimates
    models: set[str | None]  # the models of messages[:mark]
    estimated_f: array
    start: int  # the context start of the three figures below, which cover messages[start:mark]
    by_category: dict[str, int]
    measured_sum: int
    estimated_sum: int
    prediction_errors: list[float]  # sorted absolute errors of the requests before k
    estimation_errors: list[float]
    # Before the first request of the session's youngest models (`_Run._earlier_point`), when that is not the last:
    # each of a model's first observations re-solves its settled fit (calibration.py), which moves its messages'
    # figures, so the last point cannot be resumed; this one can, at the cost of the messages since that model came.
    earlier: _Resume | None = None


class _Run:
    """One accounting of a session: from the start, or resumed from a `_Resume` (then only messages from its mark
    and requests from its last one are visited). The same code either way, so both give the same figures."""

    def __init__(self, session: Session, est: Estimator, resume: tuple[_Resume, Accounting, int] | None,
                 prior: Calibrator | None = None, fit_before: int | None = None, resumable: bool = True) -> None:
        self.session, self.est = session, est
        self.prior, self.fit_before, self.fit = prior, fit_before, None  # see `account`
        self.fitted = est.name == "calibrated"
        self.by_features = self.fitted or isinstance(est, FeatureEstimator)
        self.base_ratios = est.ratios if self.by_features and not self.fitted else None  # type: ignore[attr-defined]
        self.counter: Tokenizer | None = getattr(est, "counter", None)  # what counts the text of the features
        self.R = len(session.requests)
        self.resumed = resume is not None
        self.inherited: _Resume | None = None  # an earlier point of the previous accounting, still good
        self.taken = self.missed = 0  # requests `_chunk` took, and those of them that were no observation
        self._versions()
        if resume is None:
            self.k = self.lo = self.seen = 0
            self._fresh()
        else:
            self._resume(*resume)
        self._requests()
        # Where the next resumes start (request index, max seen_end before it, mark): before the last request, and
        # before the first request of the newest model (`_Resume.earlier`) when it is one this run goes through.
        # None for a run that is not `resumable`.
        self.next_k = max(0, self.R - 1)
        earlier = self._earlier_point() if resumable else None
        self.points: list[tuple[int, int, int]] = []
        for j in ([earlier] if earlier is not None and self.k <= earlier < self.next_k and earlier else []) + \
                 [self.next_k] * resumable:
            seen, mark = self._seen_mark(j)
            if mark >= self.lo and (not self.points or mark >= self.points[-1][2]):
                self.points.append((j, seen, mark))
            elif j == self.next_k:
                self.points.append((j, seen, mark))  # no state will be kept (`_state`)
        self.snaps: dict[int, dict] = {j: {} for j, _, _ in self.points}  # state taken on the way at each point

    def _versions(self) -> None:
        """What the session's microcompactions changed, split at the last request: the edits some request has
        seen (`seen_edits`, by compaction index: the usage after them measured their result) and the compactions
        no request has (`trailing`: `compacted.py` follows them from the figures at the last request). Requests
        are priced on each message as it first was, plus what the seen edits changed; the figures at the last
        request on each message as it was then (`at_last`)."""
        session, reqs = self.session, self.session.requests
        self.base_start = reqs[-1].seen_start if reqs else 0  # the window of the last request
        last_se = reqs[-1].seen_end if reqs else -1
        self.seen_edits: list[tuple[int, Edit]] = []
        self.trailing: list[tuple[Compaction, list[Edit]]] = []
        self.first_version: dict[int, Message] = {}
        self.at_last: dict[int, Message] = {}
        if not session.compactions:
            return
        # imported here: a session without compactions never needs them (nor `report` their import at start-up)
        from inspector.core.versions import edits as session_edits, originals
        changes = session_edits(session) if any(c.replaced for c in session.compactions) else \
            [[] for _ in session.compactions]
        for c, ch in zip(session.compactions, changes):
            if c.index > last_se:
                self.trailing.append((c, ch))
                for e in ch:
                    self.at_last.setdefault(e.index, e.before)
            else:
                self.seen_edits.extend((c.index, e) for e in ch)
        self.seen_edits.sort(key=lambda x: x[0])
        self.first_version = originals(session)

    def _earlier_point(self) -> int | None:
        """The request before which the earlier resume point goes: the first request of the oldest model whose
        settled fit still moves with every observation (a young model: all its later ones came after it), else of
        the newest model. None: no request; below `k`: the previous accounting's point, kept."""
        reqs = self.session.requests
        models = [m or "" for m in self.q_model[self.k - self.q0:]]
        count = collections.Counter(models)
        first = {model: i for model, i in dict(zip(reversed(models), reversed(range(self.k, self.R)))).items()
                 if model not in self.session_anchor}
        inherited = self.inherited
        if inherited is not None and self.calibrator.observations(reqs[inherited.k].model) < YOUNG:
            return inherited.k
        young = [i for model, i in first.items() if i and self.calibrator.observations(model) + count[model] < YOUNG]
        if young:
            return min(young)
        if first:
            return max(first.values())
        return inherited.k if inherited is not None else None

    def _seen_mark(self, j: int) -> tuple[int, int]:
        """Before request j: the max seen_end of the requests before it, and the messages its redo cannot touch."""
        reqs, n = self.session.requests, len(self.session.messages)
        seen = max(self.seen, *self.q_end[self.k - self.q0:j - self.q0]) if j > self.k else self.seen
        if not self.R:
            return seen, max(0, n - 1)  # the last message may still grow
        mark = min(seen, n, reqs[j - 1].seen_end if j else 0)
        if j == 0 or reqs[j - 1].seen_start != reqs[j].seen_start:
            mark = min(mark, reqs[j].seen_start)
        return seen, mark

    def _fresh(self) -> None:
        self.names: dict[str, str] = {}
        self.names_mark: dict[str, str] = {}
        self.result_ids: set[str] | None = None
        # Per message: its category when all its blocks have one (`keys`), else None and its features per
        # category in `multi`; the running sums of the features from the first message on (`cumulative`; the
        # features of messages[lo:]: `found`, then `_columns`); without a feature estimator, every message's
        # features (`rows`).
        self.keys: list[str | None] = []
        self.multi: dict[int, dict[str, list[float]]] = {}
        self.cumulative: Columns = [None] * N_FEATURES
        self.rows = array("d")
        self.per_message: list[float] = []
        self.running: list[float] = [0.0]
        self.calibrator = self.prior.copy() if self.prior is not None else Calibrator(self.counter)
        self.session_anchor: dict[str, Request] = {}
        self.window_anchor: dict[str, Request] = {}
        self.figures = RequestColumns()
        self.prefix_of: dict[str, int] = {}
        self.prefix = 0
        self.first_model: list[str | None] = []
        self.models: set[str | None] = set()
        self.estimated_f = array("d")  # each message's estimate (float), 8 bytes each
        self.estimated: list[int] = []
        self.old_final: Estimator | None = None
        self.measured: list[int | None] = []
        self.cat_start = self.base_start
        self.by_category: dict[str, int] = {}
        self.category: list[str] = []
        self.measured_sum = self.estimated_sum = 0
        self.prediction_errors: list[float] = []
        self.estimation_errors: list[float] = []

    def _resume(self, state: _Resume, previous: Accounting, changed: int) -> None:
        """Take `state` over for `self.session`, which `previous.session` grew into from message `changed` on."""
        session, old = self.session, previous.session
        msgs, reqs = session.messages, session.requests
        k, mark = state.k, state.mark
        start = self.base_start
        if any(c.replaced and c.index > state.seen for c in session.compactions):
            raise _Stale("a microcompaction after the resume point: what it freed moves figures before the mark")
        if (changed < state.seen or changed < mark or len(msgs) < state.n_messages or state.seen > state.n_messages
                or len(reqs) < k or (k and reqs[k - 1] != old.requests[k - 1])
                or not (start == state.start or start >= mark)):
            raise _Stale("a message or request before the last request changed, or the context starts before the mark")
        # Tool names: results before the mark must resolve as they did. The state's lists and dicts are taken over
        # and cut back to the mark in place (`account_appended` consumed the state): no copy of the history.
        tail_old, tail_new = cat.tool_names(old.messages[mark:]), cat.tool_names(msgs[mark:])
        below = state.names_mark
        moved = {x for x in (tail_old.keys() | tail_new.keys())
                 if tail_old.get(x, below.get(x)) != tail_new.get(x, below.get(x))}
        if moved and state.result_ids is None:
            state.result_ids = cat.result_ids(msgs[:mark])
        if moved and moved & state.result_ids:  # type: ignore[operator]
            raise _Stale("a tool result before the mark resolves to another tool")
        names = state.names
        for x in tail_old.keys() - tail_new.keys():
            if x in below:
                names[x] = below[x]
            else:
                del names[x]
        names.update(tail_new)
        self.k, self.lo, self.seen = k, mark, state.seen
        self.inherited = state.earlier
        self.names, self.names_mark, self.result_ids = names, below, state.result_ids
        for kept, upto in ((state.keys, mark), (state.per_message, mark), (state.running, mark + 1),
                           (state.estimated_f, mark), (state.first_model, min(state.seen, len(msgs))),
                           (state.rows, mark * N_FEATURES),
                           *((c, mark + 1) for c in state.cumulative if isinstance(c, array))):
            del kept[upto:]
        for i in [i for i in state.multi if i >= mark]:
            del state.multi[i]
        self.keys, self.multi, self.rows, self.cumulative = state.keys, state.multi, state.rows, state.cumulative
        self.per_message, self.running, self.estimated_f = state.per_message, state.running, state.estimated_f
        self.first_model = state.first_model
        self.calibrator = state.calibrator
        self.session_anchor, self.window_anchor = state.session_anchor, state.window_anchor
        self.prefix_of, self.prefix = state.prefix_of, state.prefix
        self.models = state.models
        self.old_final = state.final
        # What the caller holds (the previous figures may be on screen): copied.
        self.figures = previous.requests.head(k)
        self.estimated = previous.estimated[:mark]
        self.measured = previous.measured[:mark]
        self.category = previous.category[:mark]
        self.cat_start = start
        same = start == state.start
        self.by_category = state.by_category if same else {}
        self.measured_sum = state.measured_sum if same else 0
        self.estimated_sum = state.estimated_sum if same else 0
        self.prediction_errors, self.estimation_errors = state.prediction_errors, state.estimation_errors

    # -- the stages -------------------------------------------------------------------------------------------------

    def accounting(self) -> Accounting:
        self._messages()
        self._pass1()
        if self.fit_before == self.R:  # no request from there on yet: the fit of them all
            self.fit = self.calibrator.copy()
        if not self.points:  # no state kept to resume from (`resumable=False`): the running sums are done with
            self.cumulative = []
        final = self._pass2()
        if not self.points:  # ... and so are the per-message estimates (floats), before `_finish` adds its own
            self.estimated_f = array("d")
        return self._finish(final)

    def _requests(self) -> None:
        """The requests from the one before `k` on, as columns (request ri at ri - q0), which every pass reads."""
        self.q0 = q0 = max(0, self.k - 1)
        reqs = self.session.requests[q0:]
        # (a comprehension reads a field faster than attrgetter)
        self.q_start, self.q_end = [r.seen_start for r in reqs], [r.seen_end for r in reqs]
        self.q_model, self.q_kind = [r.model for r in reqs], [r.kind for r in reqs]
        self.q_measured = list(map(attrgetter("measured_context"), reqs))
        # From request max(1, k) on: those that start a window or switch models (the request passes take them alone)
        q, starts, models = max(1, self.k) - q0, self.q_start, self.q_model
        self.q_new = set(compress(range(q + q0, self.R), map(or_, map(ne, starts[q:], starts[q - 1:]),
                                                               map(ne, models[q:], models[q - 1:]))))

    def _messages(self) -> None:
        """Tool names, each message's features per category, and their running sums, from message `lo` on."""
        msgs, pos, lo, n = self.session.messages, self.lo, self.lo, len(self.session.messages)
        counter, firsts, at_last = self.counter, self.first_version, self.at_last
        # Categories from each message as the last request saw it; its price as it first was.
        shown = [at_last.get(i, msgs[i]) for i in range(lo, n)] if firsts else msgs[lo:] if lo else msgs
        cumulative = self.cumulative
        with batched(islice(msgs, lo, None), counter):  # the o200k counts of every new text, in one batch
            self.found = found = FeatureColumns(shown, counter)
            # The tool calls of messages[lo:] (those `found` saw, unless edits moved some), by position.
            at, ids, tools = found.uses if not firsts else _uses(msgs, lo)
            for j, _, mark in self.points:
                since, upto = bisect.bisect_left(at, pos - lo), bisect.bisect_left(at, mark - lo)
                self.names_mark.update(zip(ids[since:upto], tools[since:upto]))
                if self.result_ids is not None:
                    self.result_ids.update(cat.result_ids(msgs[pos:mark]))
                pos = max(pos, mark)
                if j != self.next_k:
                    self.snaps[j]["names_mark"] = dict(self.names_mark)
            if not self.resumed:  # resumed: `_resume` made them
                start = bisect.bisect_left(at, pos - lo)
                after = dict(zip(ids[start:], tools[start:]))
                self.names = {**self.names_mark, **after} if self.names_mark else after
            del at, ids, tools
            found.uses = ([], [], [])  # read: `names` holds them
            names = self.names
            keys, multi = found.categorise(names)
            self.keys += keys
            self.multi.update((lo + i, p) for i, p in multi.items())
            # The features of each edited message as it first was (its price), where they differ from its columns'
            self.edited = {i - lo: vector(parts(first, names, counter)) for i, first in firsts.items()
                           if lo <= i < n and first is not at_last.get(i, msgs[i])}
            if not self.by_features:  # the features of each message in a row, as the request pass reads them
                rows = array("d", bytes(8 * N_FEATURES * (n - lo)))
                for j, col in enumerate(self._columns()):
                    if col is not None:
                        rows[j::N_FEATURES] = col
                self.rows += rows
                for i in range(lo, n):
                    x = float(self.est.message(firsts.get(i, shown[i - lo])))
                    self.per_message.append(x)
                    self.running.append(self.running[-1] + x)
        if self.by_features:  # each feature's running sum: the same additions, in the same order, in C loops
            for j in range(N_FEATURES):  # a column at a time: made, summed and freed before the next is made
                if j == MESSAGE:  # 1.0 in every message (`pricing.parts`): its sums count the messages exactly
                    cumulative[j] = range(n + 1)
                    continue
                column = zeros(lo + 1) if cumulative[j] is None else cumulative[j]
                if not self.edited and self.found.add_running(j, column):  # from the messages that have it
                    cumulative[j] = column
                    continue
                col = self._column(j)
                if col is not None:
                    add_sums(column, col)  # from the running sum at `lo` on
                    cumulative[j] = column
                elif cumulative[j] is not None:  # adding 0.0 leaves the sum as it is
                    cumulative[j].extend(repeat(cumulative[j][lo], n - lo))
        # What each seen microcompaction changed in what the next request saw: its edits' features (and, for an
        # estimator without features, its estimate) after minus before, by compaction index.
        deltas: dict[int, tuple[list[float], float]] = {}
        for index, e in self.seen_edits:
            d, x = deltas.get(index, ([0.0] * N_FEATURES, 0.0))
            d = list(map(sub, list(map(add, d, vector(parts(e.after, names, self.counter)))),
                         vector(parts(e.before, names, self.counter))))
            if not self.by_features:
                x += float(self.est.message(e.after)) - float(self.est.message(e.before))
            deltas[index] = (d, x)
        self.deltas = sorted(deltas.items())

    def _columns(self) -> Columns:
        """The features of messages[lo:] as columns (`_column`)."""
        return list(map(self._column, range(N_FEATURES)))

    def _column(self, j: int) -> array | None:
        """Feature j of messages[lo:] (`found`'s), each edited message's as it first was: made again where a pass
        needs it, not kept (100,000 messages: 0.8 MB a feature)."""
        col = self.found.column(j)
        for i, features in self.edited.items():
            if features[j] or col is not None:
                if col is None:
                    col = zeros(len(self.session.messages) - self.lo)
                col[i] = features[j]
        return col

    def _estimate(self, lo: int, hi: int, ratios: Sequence[float] | None) -> float:
        """The estimate of what a request saw of messages[lo:hi] (or what it saw more than the one before)."""
        if not self.by_features:
            return self.running[hi] - self.running[lo] + sum(x for i, (_, x) in self.deltas if lo < i <= hi)
        return dot(ratios or self.base_ratios, self._features(lo, hi))  # type: ignore[arg-type]

    def _features(self, lo: int, hi: int) -> list[float]:
        """The features of messages[lo:hi] as a request with seen_end `hi` saw them (seen edits in (lo, hi]
        included)."""
        f = _sum_range(self.cumulative, lo, hi) if self.by_features else total(
            self.rows[i * N_FEATURES:(i + 1) * N_FEATURES] for i in range(lo, hi))
        for i, (d, _) in self.deltas:
            if lo < i <= hi:
                f = list(map(add, f, d))
        return f

    def _pass1(self) -> None:
        """In request order: predictions and estimates with only earlier usage; feeds the calibration.
        A prefix (system prompt, tools and, after a compaction, what the harness injected) is kept as its anchor,
        the first request of a model in a window, and re-derived with the current ratios so all figures stay
        consistent (once per anchor and ratios: the ratios change at each re-solve of the fit, not per request)."""
        reqs, calibrator, fitted = self.session.requests, self.calibrator, self.fitted
        session_anchor, estimate, features = self.session_anchor, self._estimate, self._features
        window_anchor, figures, snaps = self.window_anchor, self.figures, self.snaps
        cleared = [(c.index, c.tokens_saved or 0) for c in self.session.compactions
                   if c.kind == "microcompact" and c.trigger == "api"]
        prefixes: dict[int, tuple[Sequence[float] | None, float]] = {}  # id(anchor) -> (ratios, its prefix)

        def prefix(anchor: Request, ratios: Sequence[float] | None) -> float:
            known = prefixes.get(id(anchor))
            if known is None or known[0] is not ratios:
                known = prefixes[id(anchor)] = (ratios, anchor.measured_context
                                                - estimate(anchor.seen_start, anchor.seen_end, ratios))
            return known[1]

        w = figures.window[-1] if figures else 0
        prev = reqs[self.k - 1] if self.k else None
        prev_measured = prev.measured_context if prev is not None else 0
        base = self.base_ratios
        ratio_of: dict[str, Sequence[float]] = {}  # a model's ratios until its next observation (the fit moves then)
        ri, runs, end = self.k, self._runs(cleared), 0
        while ri < self.R:
            if ri == self.fit_before:
                self.fit = calibrator.copy()
            if ri in snaps:
                snaps[ri]["calibrator"] = calibrator.copy()
                snaps[ri]["anchors"] = dict(session_anchor), dict(window_anchor)
            r = reqs[ri]
            model = r.model or ""
            ratios: Sequence[float] | None = None
            if fitted:
                ratios = ratio_of.get(model)
                if ratios is None:
                    ratios = ratio_of[model] = calibrator.ratios(model)
            if ri >= end:
                end = runs.get(ri, 0)
            if ri < end:  # the next requests of this window and model, while the ratios stay
                ri, due = self._chunk(ri, end, ratios, prefix(window_anchor[model], ratios), w)
                if due:
                    ratio_of.pop(model, None)
                prev = reqs[ri - 1]
                prev_measured = prev.measured_context
                continue
            measured = r.input_tokens + r.cache_creation + r.cache_read
            first = prev is None or prev.seen_start != r.seen_start
            if first:
                window_anchor = self.window_anchor = {}
            if figures:
                w += first
            hi = r.seen_end
            seen = estimate(r.seen_start, hi, ratios)
            if prev is None:
                predicted, estimated = None, measured
            elif first:  # the first request after a compaction: a new sum from the prefix
                anchor = session_anchor.get(model) or session_anchor[prev.model or ""]
                predicted = estimated = int(prefix(anchor, ratios) + seen)
            else:
                was = window_anchor[prev.model or ""]
                before = prefix(was, ratios)
                anchor = window_anchor.get(model) or session_anchor.get(model)
                known = before if anchor is None or anchor is was else prefix(anchor, ratios)
                estimated = int(known + seen)
                lo = prev.seen_end
                f = features(lo, hi)
                added = dot(ratios or base, f) if self.by_features else estimate(lo, hi, ratios)  # type: ignore
                predicted = prev_measured + known - before + added
                if cleared:
                    predicted -= sum(tokens for index, tokens in cleared if lo < index <= hi)
                predicted = int(predicted)
                growth = measured - prev_measured
                if r.kind == "turn" and model == (prev.model or "") and (
                        0 <= growth <= UNEXPLAINED_FACTOR * added + UNEXPLAINED_SLACK):
                    if calibrator.observe(model, f, growth):
                        ratio_of.pop(model, None)
            if model not in window_anchor:
                window_anchor[model] = r
            if model not in session_anchor:
                session_anchor[model] = r
            for column, value in ((figures.request, r), (figures.window, w), (figures.measured, measured),
                                  (figures.predicted, predicted), (figures.estimated, estimated)):
                column.append(value)
            prev, prev_measured = r, measured
            ri += 1

    def _runs(self, cleared: list[tuple[int, int]]) -> dict[int, int]:
        """The runs of requests `_chunk` can take: from a request of the window and model of the one before it to
        the next that is not, or where a state is kept (`snaps`, `fit_before`); by the request each starts at. None
        with seen microcompactions, or without features: those take every request alone."""
        if not self.by_features or self.deltas:
            return {}
        k, q, ends = max(1, self.k), max(1, self.k) - self.q0, self.q_end  # request k is at q
        alone = set(self.q_new)
        if cleared:  # a request whose growth a cleared microcompaction took part of
            alone.update(k + i for i, (lo, hi) in enumerate(zip(ends[q - 1:], ends[q:]))
                         if any(lo < index <= hi for index, _ in cleared))
        return runs_of(alone, {*self.snaps, self.fit_before or 0}, k, self.R)

    def _chunk(self, a: int, end: int, ratios: Sequence[float] | None, before: float, w: int) -> tuple[int, bool]:
        """Requests a, a+1... before `end` (each of the window and model of the one before it), up to the
        observation that makes the fit due (`ratios` move then): their figures as the request pass makes them, and
        their observations. The very same floats, a feature at a time over all of them (as `feature_columns.dots`):
        `dot` of a difference of running sums and `group_tokens` of it for each request. Returns where it
        stopped and whether the fit is due."""
        calibrator, cum, q0 = self.calibrator, self.cumulative, self.q0
        model = self.q_model[a - q0] or ""
        need = calibrator.until_due(model) if self.fitted else None
        # Taken past the due point, a request's work is done again by the next chunk: as many as the observations
        # missed so far in this run suggest will fail (few: most requests are observations), one at least.
        c = end if need is None else min(end, a + need + need * self.missed // max(self.taken, 1) + 1)
        m = c - a
        his = self.q_end[a - 1 - q0:c - q0]
        s0 = self.q_start[a - q0]
        measured = self.q_measured[a - 1 - q0:c - q0]
        growth = list(map(sub, measured[1:], measured))
        take = itemgetter(*his)
        low, high = min(his), max(his)
        # Each request's estimate of its window so far (`seen`) and of what it added, summed a feature at a time (a
        # comprehension fuses a feature's operations: fewer steps than a chain of maps, the same floats).
        seen: list[float] | None = None
        added: list[float] | None = None
        # Each feature of what each request added: a list, a float where every request added the same (a count,
        # often: one product for all), None where none added any.
        f: list[list[float] | float | None] = [None] * N_FEATURES
        for j, r in enumerate(ratios or self.base_ratios):  # type: ignore[arg-type]
            column = cum[j]
            if column is None and isfinite(r):  # r x 0.0 adds nothing
                continue
            start = 0.0 if column is None else column[s0]
            # x - 0.0 is x (never -0.0 here); a sum from 0.0 starts at its first term unless that is -0.0 (r > 0: it
            # is not)
            first = seen is None and r > 0
            if column is not None and column[low] == column[high]:
                # No request added any (the running sums of features, never negative, do not decrease between): the
                # same terms for each, made once
                value = column[low]
                term = r * (value if start == 0.0 else value - start)
                seen = [term] * m if first else list(map(add, seen or repeat(0.0, m), repeat(term)))
                fj = f[j] = float(value - value)
            else:  # (MESSAGE's running sums are range(n + 1): at each end, the end itself)
                at = (0.0,) * (m + 1) if column is None else his if isinstance(column, range) else take(column)
                at_hi = at[1:]
                if first:
                    seen = [r * x for x in at_hi] if start == 0.0 else [r * (x - start) for x in at_hi]
                else:
                    seen = [s + r * (x - start) for s, x in zip(seen or repeat(0.0), at_hi)]
                fj = list(map(sub, at_hi, at))
                if (m == 1 or fj[1] == fj[0]) and fj.count(fj[0]) == m:
                    fj = float(fj[0])
                f[j] = fj
            if isinstance(fj, list):
                added = [r * x for x in fj] if added is None and r > 0 else \
                    [t + r * x for t, x in zip(added or repeat(0.0), fj)]
            else:
                term = r * fj
                added = [term] * m if added is None and r > 0 else list(map(add, added or repeat(0.0, m), repeat(term)))
        if seen is None or added is None:
            seen, added = [0.0] * m, [0.0] * m
        # Observations: a turn whose growth the messages explain (as `_pass1`), of group tokens summing above 0
        # (each condition checked one request at a time only where some request fails it).
        x, total = group_columns(f, calibrator.base)
        if isinstance(total, float):
            total = [total] * m
        ok = [g <= UNEXPLAINED_FACTOR * t + UNEXPLAINED_SLACK for g, t in zip(growth, added)]
        kinds = self.q_kind[a - q0:c - q0]
        for fails, flags in ((min(growth) < 0, map(le, repeat(0), growth)),
                             (kinds.count("turn") < m, map(eq, kinds, repeat("turn"))),
                             (total is None or not min(total) > 0, map(not_, map(le, total or repeat(0.0), repeat(0))))):
            if fails:
                ok = list(map(and_, ok, flags))
        seen_obs = range(m) if all(ok) else list(compress(range(m), ok))
        due = need is not None and len(seen_obs) >= need
        if due:
            seen_obs = seen_obs[:need]
            m = seen_obs[-1] + 1
            c = a + m
        self.taken += m
        self.missed += m - len(seen_obs)
        if seen_obs:
            pick = (lambda v: v[:m]) if len(seen_obs) == m else picker(seen_obs)
            stated = f[STATED]
            ys = list(map(sub, pick(growth), pick(stated) if isinstance(stated, list) else repeat(stated or 0.0)))
            calibrator.observe_many(model, [pick(g) if isinstance(g, list) else [g or 0.0] * len(seen_obs) for g in x],
                                    pick(total), ys)
        figures = self.figures
        figures.request += self.session.requests[a:c]
        figures.window += repeat(w, m)
        figures.measured.extend(measured[1:m + 1])
        # int of each: with `before` a float, so is each sum (float.__trunc__: int's own conversion of a float)
        before = float(before)
        figures.predicted += map(float.__trunc__, [y + before - before + t for y, t in zip(measured, added[:m])])
        figures.estimated.extend(map(float.__trunc__, map(add, repeat(before), seen[:m])))
        return c, due

    def _pass2(self) -> Estimator:
        """The final estimates (every observation used) and the attribution of measured figures to messages."""
        session, reqs, lo = self.session, self.session.requests, self.lo
        msgs = session.messages
        final = self.calibrator.estimator(reqs[-1].model if reqs else None) if self.fitted else self.est
        # The model of the first request that saw each message (the last request's for messages after it): its
        # tokenizer is the one that counted the message.
        first_model, n, q = self.first_model, len(msgs), self.k - self.q0
        models, ends = (self.q_model[q:], self.q_end[q:]) if q else (self.q_model, self.q_end)
        runs = [(first_model[lo + a], lo + a, lo + b) for a, b in same(first_model[lo:])]  # runs from lo on
        for a, b in same(models):
            upto = min(max(ends[a:b]), n)
            if upto > len(first_model):
                runs.append((models[a], len(first_model), upto))
                first_model += repeat(models[a], upto - len(first_model))
        if n > len(first_model):
            runs.append((reqs[-1].model if reqs else None, len(first_model), n))
            first_model.extend([reqs[-1].model if reqs else None] * (n - len(first_model)))
        self.model_runs = runs
        if self.fitted and self.old_final is not None:  # resumed: earlier messages' ratios must be the same
            old = self.old_final
            if any(old.for_model(m) != final.for_model(m) for m in self.models):  # type: ignore[attr-defined]
                raise _Stale("the settled fit of an earlier message's model moved")
        estimated_f = self.estimated_f
        if self.by_features:  # per run of messages one model counted: ratios . features, a feature at a time
            whole = len({model for model, _, _ in runs}) == 1 and not self.first_version
            feats = [] if whole else self._columns()
            for model, a, b in runs[:1] if whole else runs:
                ratios = final.for_model(model) if self.fitted else final.ratios  # type: ignore[attr-defined]
                if whole:  # all of them, kind by kind
                    dots = self.found.dots(ratios)
                else:
                    dots = dot_columns(ratios, [None if c is None else c[a - lo:b - lo] for c in feats], b - a)
                # a sum of products of features (never negative) and ratios that are not is not negative either
                estimated_f.extend(dots if all(map(le, repeat(0.0), ratios)) else map(max, repeat(0.0), dots))
        else:
            estimated_f.extend(self.per_message[lo:n])
        self.found = None  # this run's features, no longer needed: freed before the attribution
        self.estimated.extend(map(float.__round__, estimated_f[lo:]))  # round() of each (floats, all of them)
        pos = lo
        for j, _, mark in self.points:
            self.models.update(first_model[pos:max(pos, mark)])
            pos = max(pos, mark)
            if j != self.next_k:
                self.snaps[j]["models"] = set(self.models)
        measured = self.measured
        measured.extend([None] * (n - len(measured)))
        self.pricing = pricing = Pricing(final, first_model, reqs[-1].model if reqs else None, self.names,
                                         self.fitted, self.by_features, self.counter, msgs)
        # Seen microcompactions, applied before the first request that saw them (a resumed run has none left:
        # `_resume` refuses one after its point): each edited message keeps its figure in the ratio of its
        # estimates after and before, and what that frees is part of the growth the request measured.
        edits, at = self.seen_edits, len(self.seen_edits) if self.resumed else 0
        edited: set[int] = set()
        prefix_of, prefix = self.prefix_of, self.prefix
        self.micro = CompactionsByIndex(session.compactions, "microcompact")
        ri, runs, end = self.k, self._spread_runs(at), 0
        while ri < self.R:
            if ri in self.snaps:
                self.snaps[ri]["prefix"] = dict(prefix_of), prefix
            if ri >= end:
                end = runs.get(ri, 0)
            if ri < end:  # the growths of the next requests of this window and model, spread together
                for j in self._spread_growths(ri, end):
                    self._attribute(j, 0, prefix)
                prefix_of.setdefault(reqs[ri].model or "", prefix)
                ri = end
                continue
            r = reqs[ri]
            freed = 0
            while at < len(edits) and edits[at][0] <= r.seen_end:
                e = edits[at][1]
                at += 1
                i = e.index
                after = pricing.estimate(i, e.after)
                was = measured[i]
                if was is not None:
                    measured[i] = scaled(was, estimated_f[i], after)
                    if i >= r.seen_start:
                        freed += was - measured[i]
                estimated_f[i] = after
                edited.add(i)
            prefix = self._attribute(ri, freed, prefix)
            ri += 1
        for i in edited:
            self.estimated[i] = int(round(estimated_f[i]))
        self.prefix = prefix
        return final

    def _attribute(self, ri: int, freed: int, prefix: int) -> int:
        """Request ri's measured figure given to the messages it saw first (its growth, or a window's first
        context less the prefix); what they do not explain to the request's own `unrecorded`. Returns the prefix."""
        reqs, measured, estimated_f, prefix_of = self.session.requests, self.measured, self.estimated_f, self.prefix_of
        r = reqs[ri]
        figures = self.figures
        model = r.model or ""
        p = reqs[ri - 1] if ri else None
        if p is None or p.seen_start != r.seen_start:
            lo_r, hi = r.seen_start, r.seen_end
            if lo_r < self.lo:
                raise _Stale("a window's first request saw messages before the mark")
            guess = sum_in_order(estimated_f[lo_r:hi])
            if figures.window[ri] == 0:
                prefix = max(0, r.measured_context - int(round(guess)))
                prefix_of[model] = prefix
                spread(measured, estimated_f, lo_r, hi, r.measured_context - prefix)
            else:
                prefix = prefix_of.get(model, prefix)
                room = r.measured_context - prefix
                given = spread(measured, estimated_f, lo_r, hi, max(0, min(room, int(round(guess)))))
                unrecorded = room - given
                _unrecorded(figures, ri, unrecorded, "after compaction: re-injected content the transcript does not record"
                            if unrecorded >= 0 else
                            "after compaction: less than the prefix + estimates (the estimate runs high)")
            return prefix
        lo_r, hi = p.seen_end, r.seen_end
        if lo_r < self.lo:
            raise _Stale("a request's growth spans messages before the mark")
        growth = r.measured_context - p.measured_context + freed  # what the messages added, the edits' back
        guess = sum_in_order(estimated_f[lo_r:hi])
        cause = None
        if r.kind == "compaction":
            cause = COMPACTION_REQUEST
        elif model != (p.model or ""):
            cause = f"model switch {p.model} -> {r.model}: another system prompt and tokenizer"
        elif growth < 0 and self.micro.between(lo_r, hi):
            cause = "context shrank: tool results cleared (a microcompaction)"
        elif growth < 0:
            cause = "context shrank: content cleared outside the transcript"
        elif guess <= 0 and growth > 0:
            cause = "growth with no recorded message"
        elif growth > UNEXPLAINED_FACTOR * guess + UNEXPLAINED_SLACK:
            cause = "growth far beyond the recorded messages: injected by the harness"
        if cause is None:
            spread(measured, estimated_f, lo_r, hi, growth)
        else:
            given = spread(measured, estimated_f, lo_r, hi, max(0, min(growth, int(round(guess)))))
            _unrecorded(figures, ri, growth - given, cause)
            if cause.startswith("model switch") and model not in prefix_of:
                prefix_of[model] = prefix + growth - given
        prefix_of.setdefault(model, prefix)
        return prefix

    def _spread_runs(self, at: int) -> dict[int, int]:
        """The runs of requests `_spread_growths` can take: each of the window and model of the one before it, seeing
        more messages, not a compaction's request, without an edit applied before it (from `at`); by the request
        each starts at, to the next that is not (or where a state is kept: `snaps`)."""
        edits, k, q = self.seen_edits, max(1, self.k), max(1, self.k) - self.q0  # request k is at q
        ends, kinds = self.q_end, self.q_kind[q:]
        alone = self.q_new | set(compress(range(k, self.R), map(le, ends[q:], ends[q - 1:])))
        if kinds.count("turn") < len(kinds):
            alone.update(compress(range(k, self.R), map(eq, kinds, repeat("compaction"))))
        for ri in range(k, self.R) if at < len(edits) else ():  # the requests edits are applied before
            if at < len(edits) and edits[at][0] <= ends[ri - self.q0]:
                alone.add(ri)
                while at < len(edits) and edits[at][0] <= ends[ri - self.q0]:
                    at += 1
        return runs_of(alone, set(self.snaps), k, self.R)

    def _spread_growths(self, a: int, end: int) -> list[int]:
        """`_attribute` of requests a..end-1 (as `_spread_runs` finds them) by `spread_growths`. Returns the
        requests left to `_attribute` (a growth its messages do not explain, or with nothing to weigh it by)."""
        q0 = self.q0
        los, totals = self.q_end[a - 1 - q0:end - 1 - q0], self.q_measured[a - 1 - q0:end - q0]
        if los[0] < self.lo:
            raise _Stale("a request's growth spans messages before the mark")
        return [a + i for i in spread_growths(self.measured, self.estimated_f, los, self.q_end[a - q0:end - q0],
                                              list(map(sub, totals[1:], totals)))]
    def _sum_from(self, values: list, start: int, hi: int, cached: int) -> int:
        """sum(values[start:hi]) (None as 0), the part below the resume mark taken from `cached`."""
        if start < self.lo:
            if hi < self.lo:
                raise _Stale("the context sum spans the mark")
            return cached + sum(v or 0 for v in values[self.lo:hi])
        return sum(v or 0 for v in values[start:hi])

    def _finish(self, final: Estimator) -> Accounting:
        """After the last request: the window's prefix and the growth no message explains, as of the last request
        (its window: a compaction after it is followed from these figures by `compacted.py`); the categories; the
        accuracy; and the state the next append resumes from."""
        session, reqs = self.session, self.session.requests
        estimated, measured, prefix_of, prefix = self.estimated, self.measured, self.prefix_of, self.prefix
        last = reqs[-1] if reqs else None
        start = self.cat_start
        if last is not None:
            current_measured = last.measured_context
            current = current_measured + sum(estimated[last.seen_end:])
            prefix = prefix_of.get(last.model or "", prefix)
            unrecorded = current_measured - prefix - self._sum_from(measured, start, last.seen_end,
                                                                    self.measured_sum)
        else:  # no usage at all: the recorded prefix (if any) and the estimates
            current_measured = None
            unrecorded = 0
            prefix = _recorded_prefix(session, final)
            current = prefix + self._sum_from(estimated, start, len(estimated), self.estimated_sum)
        by_category = self._categorise(final)
        by_category[cat.prefix_key(session)] = prefix
        if unrecorded:
            by_category[cat.UNRECORDED] = unrecorded
        ratios_out = dict(final.per_model) if self.fitted else {}  # type: ignore[attr-defined]
        if self.fitted:
            _last_fit[:] = [(weakref.ref(session), dict(ratios_out))]
        figures = self.figures
        pred, est = self.prediction_errors, self.estimation_errors
        both = ((pred, figures.predicted), (est, figures.estimated))
        pos = self.k
        for j, _, _ in self.points:  # each point's errors: those before its request
            turn = turns(self.q_kind[pos - self.q0:max(pos, j) - self.q0], pos)
            for errors, values in both:
                add_errors(errors, values, figures.measured, turn, pos, max(pos, j), self.resumed)
            pos = max(pos, j)
            if j != self.next_k:
                self.snaps[j]["errors"] = pred[:], est[:]
        last = self.next_k if self.points else pos
        turn, accuracy = turns(self.q_kind[last - self.q0:], last), []
        for errors, values in both:
            added = add_errors(errors, values, figures.measured, turn, last, len(figures), bool(self.points))
            accuracy.append(Accuracy.of_sorted(errors))
            for x in added if self.points else ():  # taken back out: the state resumed from lies before it
                del errors[bisect.bisect_left(errors, x)]
            if not self.points:  # no state keeps them: let go before the next list's are made (50,000 floats)
                errors.clear()
            del added
        prediction, estimation = accuracy
        acc = Accounting(
            session=session, estimator=self.est.name, estimated=estimated, measured=measured,
            category=self.category, prefix=prefix, prefix_measured=bool(reqs), unrecorded=unrecorded,
            requests=figures, current_context=int(current), current_measured=current_measured,
            by_category=by_category, prediction=prediction, estimation=estimation, ratios=ratios_out)
        acc.work = len(self.keys) - self.lo + self.R - self.k
        acc.resumed_at = self.k if self.resumed else None
        acc.kept = self.lo
        acc.start, acc.pricing = start, self.pricing
        acc.resume = self._state(final, pred, est)
        if self.trailing:
            from inspector.core.compacted import after_all  # here: only compactions no request has seen need it
            acc = after_all(acc, self.trailing)
        if not self.points:  # nor the state to resume from their names and first models
            self.pricing.lighten(self.model_runs)
        return acc

    def _categorise(self, final: Estimator) -> dict[str, int]:
        """Each message's category, and the current context's tokens per category (measured where known)."""
        estimated, measured, pricing = self.estimated, self.measured, self.pricing
        by_category, category, msgs = self.by_category, self.category, self.session.messages
        keys, multi, lo, n = self.keys, self.multi, self.lo, len(self.keys)
        start = max(self.cat_start, lo)
        category.extend(keys[lo:n])
        shared: dict[int, dict[str, int]] = {}
        for i, p in multi.items():  # a message of several categories: the one holding most of its figure
            if i >= lo:
                figure = measured[i] if measured[i] is not None else estimated[i]
                category[i], shared[i] = pricing.split(i, self.at_last.get(i, msgs[i]), figure, p)
        at: dict[int, list[int]] = {}
        for j, _, mark in self.points:
            at.setdefault(max(mark, start), []).append(j)
        for i in range(start, n):
            for j in at.get(i, ()):
                self.snaps[j]["categories"] = dict(by_category)
            figure = measured[i]
            if figure is None:
                figure = estimated[i]
            key = keys[i]
            if key is not None:
                by_category[key] = by_category.get(key, 0) + figure
                continue
            for k, share in shared[i].items():
                by_category[k] = by_category.get(k, 0) + share
        for snap in self.snaps.values():
            snap.setdefault("categories", dict(by_category))
        return dict(by_category)

    def _state(self, final: Estimator, pred: list[float], est: list[float]) -> _Resume | None:
        """What the next `account_appended` resumes from (None when this run's mark fell behind where it began)."""
        if not self.points or self.points[-1][2] < self.lo or isinstance(self.est, Exact):
            return None
        last = self._point(self.points[-1], final, pred, est)
        if len(self.points) > 1:
            last.earlier = self._point(self.points[0], final, pred, est)
        elif self.inherited is not None and self.inherited.k < self.next_k:
            # Still good: resuming from the last point found the ratios of every model before it unchanged.
            self.inherited.final = final
            last.earlier = self.inherited
        return last

    def _point(self, point: tuple[int, int, int], final: Estimator, pred: list[float], est: list[float]) -> _Resume:
        j, seen, mark = point
        snap, start = self.snaps[j], self.cat_start
        calibrator = snap.get("calibrator") or self.calibrator.copy()
        anchors = snap.get("anchors", (self.session_anchor, self.window_anchor))
        prefix_of, prefix = snap.get("prefix", (self.prefix_of, self.prefix))
        pred, est = snap.get("errors", (pred, est))
        return _Resume(
            est=self.est, k=j, mark=mark, seen=seen, n_messages=len(self.session.messages), names=self.names,
            names_mark=snap.get("names_mark", self.names_mark), result_ids=self.result_ids, keys=self.keys,
            multi=self.multi, rows=self.rows, cumulative=self.cumulative, per_message=self.per_message,
            running=self.running,
            calibrator=calibrator, session_anchor=dict(anchors[0]), window_anchor=dict(anchors[1]),
            prefix_of=dict(prefix_of), prefix=prefix, first_model=self.first_model, final=final,
            models=snap.get("models", self.models), estimated_f=self.estimated_f, start=start,
            by_category=snap["categories"],
            measured_sum=self._sum_from(self.measured, start, max(start, mark), self.measured_sum),
            estimated_sum=self._sum_from(self.estimated, start, max(start, mark), self.estimated_sum),
            prediction_errors=pred, estimation_errors=est)


def _recorded_prefix(session: Session, est: Estimator) -> int:
    """The estimate of a recorded system prompt and tool schemas (Anthropic requests, our own sessions, Codex
    instructions): the prefix when no usage measures it."""
    parts = [session.system or ""] + [t.name + t.description + json.dumps(t.input_schema, default=str)
                                      for t in session.tools]
    return sum(est.text(p) for p in parts if p)


# The last calibrated fit, (session, ratios per model): `estimator_for` on the session just accounted (the app's
# workbench, right after the figures it shows) reuses it instead of accounting 100,000 messages again. The session
# is held weakly: a strong reference would keep the last session of every command alive to the interpreter's exit,
# whose final collection then walks it all (0.4 s after `report` on 100,000 messages).
_last_fit: list[tuple[weakref.ref[Session], dict[str, tuple[float, ...]]]] = []


def estimator_for(session: Session, name: str | None = None) -> Estimator:
    """An estimator for hypothetical states of `session` (compaction previews): `calibrated` (the default when the
    session has usage) comes fitted on all its requests, answering for its current model."""
    name = name or ("calibrated" if session.requests else session_default(session))
    if name != "calibrated":
        return get_estimator(name)
    if not session.requests:
        return get_estimator(session_default(session))
    last = _last_fit[:1]
    ratios = last[0][1] if last and last[0][0]() is session else account(session, "calibrated", resumable=False).ratios
    return Calibrated(ratios, current_model(session), session_tokenizer(session))




def _uses(messages: list[Message], lo: int) -> tuple[list[int], list[str], list[str]]:
    """The tool calls of messages[lo:] (position from lo, id, name), as `categories.tool_names` reads them."""
    found = [(i - lo, b.tool_id, b.tool_name or "?") for i in range(lo, len(messages)) for b in messages[i].blocks
             if b.type == "tool_use" and b.tool_id]
    return [i for i, _, _ in found], [t for _, t, _ in found], [name for _, _, name in found]


def _unrecorded(figures: RequestColumns, i: int, unrecorded: int, cause: str) -> None:
    """Request i's growth no message explains, and why."""
    figures.cause[i] = cause
    if unrecorded:
        figures.unrecorded[i] = unrecorded
    else:
        figures.unrecorded.pop(i, None)
