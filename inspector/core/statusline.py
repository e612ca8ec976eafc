"""The figures of a status line, kept quick for a command an agent runs after every turn.

`status(path, ...)` gives what `report` states of a session (the same core calls: `tokens.account` /
`account_appended`, `limits.window_info`, `window.window_figures`, `cost.session_cost`), with a small cache under
the user's cache directory (`$XDG_CACHE_HOME/context-inspector/statusline/`, one entry per session path, the
eight most recently used kept):

- `<key>.json`: the figures of the file as it last was, keyed by its path, size, modification time and inode, the
  settings and this module's version: when all match, they are printed with no session read at all;
- `<key>.state`: where the last call stopped (the follower that read the file up to its end, and its accounting
  with the state `account_appended` resumes from). When the file only grew, the next call reads only the bytes
  appended and accounts only what they added: the same figures a fresh accounting gives (tests/test_statusline.py
  checks it line by line on real transcripts). A file that shrank, was replaced or rewritten is read afresh.

A Claude Code session's state is a *checkpoint* at its last compaction boundary, so it is the size of the current
window's part of the file, not of the file (a 100 MB session's whole state took ~340 ms to unpickle): the follower
and accounting of the session read from the boundary's line on (the accounting's calibrated fit continuing the one
of what came before), and `Before`, the sums of what came before. A compaction that arrives moves the checkpoint to
it. A checkpoint is only kept when its figures equal the whole session's as they were just computed, and a read
from it is trusted only while the boundary is still where its branch begins: anything else (a rewind to before it,
a file rewritten) is read afresh. Other formats (Codex rollouts...) keep the whole state.

A cache entry that is corrupt, from another version of this module, not owned by the user or writable by others is
ignored (and replaced). The state is a pickle: it is only ever read from a directory of the user's own, created
0700, files 0600.
"""

from __future__ import annotations

import json
import os
import sys
import zlib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from inspector.core.accounting import Accounting
    from inspector.core.calibration import Calibrator
    from inspector.core.cost import PriceTable
    from inspector.core.follower import Change, Follower
    from inspector.core.model import AgentCost, Compaction, Session

VERSION = 5  # of the cache's format and of what it holds (5: the loader notes its graphs' jumps); else ignored
KEEP = 8  # cache entries (sessions) kept; the least recently used go first
CACHE_ENV = "CONTEXT_INSPECTOR_CACHE"


@dataclass(slots=True)
class StatusFigures:
    """What a status line shows. `used` is the current context (measured at the last request + estimated since
    when `measured`), `to_autocompact` the room before the policy's auto-compact threshold (0 once past it),
    `cost_usd` our figure (None: no priced request), `agent_cost_usd` the agent's own where it records one."""

    path: str
    format: str
    model: str | None
    policy: str
    window: int
    used: int
    percent: float
    autocompact: int
    warning: int
    to_autocompact: int
    measured: bool
    compactions: int
    microcompactions: int
    requests: int
    messages: int
    cost_usd: float | None
    agent_cost_usd: float | None
    hit_ratio: float | None
    state: str  # "ok", "warning" (past the warning threshold), "compact" (past auto-compact)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Settings:
    """What the figures depend on besides the file: the policy, the window, the estimator and the price file."""

    policy: str | None = None
    window: int | None = None
    estimator: str | None = None
    prices: str | None = None
    autocompact_override: str | None = None  # CLAUDE_AUTOCOMPACT_PCT_OVERRIDE as the policy reads it

    def key(self) -> str:
        return json.dumps([self.policy, self.window, self.estimator, self.prices, self.autocompact_override])


@dataclass(slots=True)
class Before:
    """What a session held before the boundary its checkpoint reads from (`offset`: that line's byte offset), as
    the figures need it: counts, each request's cost (summed with the window's in order: the same float a whole
    read's sum gives), the cache's read and prompt tokens, whether a request measured more than a 200k window, the
    last request's model, the agent's last own cost figure, and the calibrated fit the window's accounting
    continues."""

    offset: int = 0
    messages: int = 0
    requests: int = 0
    compactions: int = 0
    microcompactions: int = 0
    costs: list[float | None] = field(default_factory=list)
    cache_read: int = 0
    prompt: int = 0
    past_window: bool = False
    model: str | None = None
    agent_cost: AgentCost | None = None
    fit: Calibrator | None = None
    entries: int = 0  # entries of the window's read whose parents were found in it (`_linked`)


State = tuple["Before | None", "Follower", "Accounting"]  # None: the whole session's follower and accounting


def cache_dir(environ: dict[str, str] | None = None) -> Path:
    """Where the cache lives: $CONTEXT_INSPECTOR_CACHE, else the user's cache directory's context-inspector/."""
    env = os.environ if environ is None else environ
    if env.get(CACHE_ENV):
        return Path(env[CACHE_ENV]).expanduser()
    if sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    elif os.name == "nt":
        base = Path(env.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    else:
        base = Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "context-inspector" / "statusline"


class Cache:
    """One session path's cache entry (see the module docstring)."""

    def __init__(self, directory: Path, path: Path, settings: Settings) -> None:
        self.directory, self.path, self.settings = directory, path, settings
        # a name from two 32-bit checksums (hashlib's import alone costs ~6 ms a call); two sessions of one name
        # only take each other's place: an entry states its path (its figures their settings too) and is used only
        # when they match
        key = f"{path}\0{settings.key()}".encode("utf-8", "surrogatepass")
        name = f"{zlib.crc32(key):08x}{zlib.adler32(key):08x}"
        self.figures_file = directory / f"{name}.json"
        self.state_file = directory / f"{name}.state"

    def stamp(self) -> list[Any] | None:
        """What tells the file changed: size, modification time, inode and device (None: it cannot be read)."""
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return [st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev]

    def figures(self, stamp: list[Any]) -> StatusFigures | None:
        """The figures saved for the file as it is now, or None."""
        data = self._read(self.figures_file)
        if data is None:
            return None
        try:
            entry = json.loads(data)
            if entry.get("version") != VERSION or entry.get("path") != str(self.path) or entry.get("stamp") != stamp \
                    or entry.get("settings") != self.settings.key():
                return None
            return StatusFigures(**entry["figures"])
        except (ValueError, TypeError, KeyError, AttributeError):
            return None  # corrupt, or figures of another shape: computed again

    def state(self) -> State | None:
        """Where the last call stopped, or None (no entry, another version, corrupt, not ours)."""
        data = self._read(self.state_file)
        if data is None:
            return None
        import pickle  # here: the cached figures need neither pickle nor tempfile

        try:
            version, path, before, follower, accounting = pickle.loads(data)
        except Exception:  # a truncated or foreign pickle can raise anything: it is only a cache
            return None
        if version != VERSION or path != str(self.path):
            return None
        return before, follower, accounting

    def save(self, stamp: list[Any] | None, figures: StatusFigures, state: State | None) -> None:
        """Write the entry (each file replaced atomically; a failure leaves the cache as it was: it is a cache)."""
        import pickle

        try:
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            if stamp is not None:
                self._write(self.figures_file, json.dumps({
                    "version": VERSION, "path": str(self.path), "stamp": stamp, "settings": self.settings.key(),
                    "figures": figures.to_dict()}).encode())
            if state is not None:
                self._write(self.state_file, pickle.dumps((VERSION, str(self.path), *state),
                                                          protocol=pickle.HIGHEST_PROTOCOL))
            self._prune()
        except (OSError, pickle.PicklingError, RecursionError, TypeError, AttributeError):
            pass

    def _read(self, file: Path) -> bytes | None:
        """The file's bytes when the directory and the file are the user's own and nobody else can write them."""
        try:
            fd = os.open(file, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            return None
        try:
            st = os.fstat(fd)
            if hasattr(os, "getuid") and (st.st_uid != os.getuid() or st.st_mode & 0o022 or not _own(file.parent)):
                return None
            with os.fdopen(fd, "rb", closefd=False) as f:
                return f.read()
        except OSError:
            return None
        finally:
            os.close(fd)

    def _write(self, file: Path, data: bytes) -> None:
        import tempfile

        fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=f".{file.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, file)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise

    def _prune(self) -> None:
        """Keep the KEEP most recently written entries."""
        entries = sorted(self.directory.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in entries[KEEP:]:
            for file in (old, old.with_suffix(".state")):
                try:
                    file.unlink()
                except OSError:
                    pass


def _own(directory: Path) -> bool:
    try:
        st = os.stat(directory)
    except OSError:
        return False
    return st.st_uid == os.getuid() and not st.st_mode & 0o022


@dataclass(slots=True)
class Outcome:
    """`status`'s answer: the figures, and how they were made ("cached": the file had not changed; "resumed": only
    what was appended since the last call was read; "fresh": read whole), for tests and the benchmark."""

    figures: StatusFigures
    how: str
    finish: Any = None  # call it to save the cache (after the line is printed: the agent need not wait for it)


def status(path: str | os.PathLike[str], settings: Settings = Settings(), directory: Path | None = None,
           use_cache: bool = True) -> Outcome:
    """The status-line figures of the session at `path` (LoadError when it cannot be read). Call the outcome's
    `finish` afterwards to save the cache."""
    # a path is resolved for the key (the same file however it is named); `DATABASE#ID` names one session of a
    # database and is kept as it is (importing the formats to split it would slow the cached answer down)
    key = Path(path) if "#" in str(path) else Path(path).resolve()
    cache = Cache(directory or cache_dir(), key, settings) if use_cache else None
    before = cache.stamp() if cache is not None else None
    if cache is not None and before is not None:
        found = cache.figures(before)
        if found is not None:
            return Outcome(found, "cached")
    state = cache.state() if cache is not None else None
    resumed = _resumed(state, settings) if state is not None else None
    if resumed is None:
        prior, follower, accounting = None, *_read(path, settings)
        how, compacted = "fresh", True
    else:
        prior, follower, accounting, how, compacted = resumed
    assert follower.session is not None
    figures = figures_of(follower.session, accounting, settings, before=prior)
    if cache is None:
        return Outcome(figures, how)
    after = cache.stamp()

    def finish() -> None:  # the figures are keyed to the file only when it did not change while it was read
        kept = (_checkpoint(follower, accounting, prior, settings, figures) if compacted else None) \
            or (prior, follower, accounting)
        cache.save(before if after == before else None, figures, kept)

    return Outcome(figures, how, finish)


def _read(path: str | os.PathLike[str], settings: Settings) -> tuple[Follower, Accounting]:
    """The session read whole and accounted, with the calibrated fit before its current window kept (what a
    checkpoint there continues)."""
    from inspector.core.follower import Follower, NotYet
    from inspector.core.tokens import account

    follower = Follower(path)
    try:
        follower.open()
    except NotYet:  # nothing is waited for here: the loader says what is wrong with the file as it is
        from inspector.core.formats import load

        load(path)
        raise
    session = follower.session
    assert session is not None
    last = _last_boundary(session)
    return follower, account(session, settings.estimator,
                             fit_before=_requests_before(session, last.index) if last is not None else None)


def _resumed(state: State, settings: Settings) -> tuple[Any, Any, Any, str, bool] | None:
    """The state of the last call brought up to the file as it is now (the accounting resumed from where it
    stopped: `account_appended` gives a fresh accounting's figures) and whether a checkpoint is `_due`; None when
    the follower cannot go on, or a checkpoint's read can no longer be trusted."""
    from inspector.core.tokens import account_appended

    prior, follower, previous = state
    try:
        change = follower.update()
    except Exception:  # a follower that cannot go on (the file vanished, an unreadable state): start again
        return None
    session = follower.session
    if follower.error is not None or session is None:
        return None
    if prior is not None and (change.reloaded or not _from_boundary(session) or not _linked(follower, prior)):
        return None  # a rewind to before the boundary, a file rewritten: only a whole read is right
    compacted = _due(session, change, prior)
    if change.session is previous.session:
        return prior, follower, previous, "resumed", compacted
    # (`account_appended` itself accounts afresh when resuming cannot give the same figures: a young model's fit
    # that moved, a rewind; the figures are a fresh accounting's either way)
    accounting = account_appended(previous, session, change, settings.estimator,
                                  prior.fit if prior is not None else None)
    return prior, follower, accounting, "fresh" if change.reloaded else "resumed", compacted


def _due(session: Session, change: Change, prior: Before | None) -> bool:
    """A (new) checkpoint is worth trying: a compaction arrived, or the first requests after the last boundary did
    (a checkpoint's figures equal the whole read's only once its window has usage)."""
    last = _last_boundary(session)
    if last is None or (prior is not None and last.index == 0):
        return False  # none, or the one the checkpoint reads from
    if any(c.kind == "compact" for c in change.compactions):
        return True
    return 0 < len(session.requests) - _requests_before(session, last.index) <= change.new_requests


def _last_boundary(session: Session) -> Compaction | None:
    return next((c for c in reversed(session.compactions) if c.kind == "compact"), None)


def _requests_before(session: Session, index: int) -> int:
    """How many requests came before message `index` (they are in message order)."""
    return sum(r.message_index < index for r in session.requests)


def _from_boundary(session: Session) -> bool:
    """A session read from a compaction boundary still begins with it: its branch runs back to the boundary."""
    first = session.compactions[0] if session.compactions else None
    return first is not None and first.kind == "compact" and first.index == 0 and first.line == 1


def _linked(follower: Follower, before: Before) -> bool:
    """Every entry the window's read took since the last look names a parent it holds (noted in `before`): one that
    does not reaches back before the boundary (a rewind there), which only a whole read follows."""
    loader = follower.loader
    unlinked = getattr(loader, "unlinked", None)
    if unlinked is None or unlinked(before.entries):
        return False
    before.entries = loader.entries()  # type: ignore[union-attr]
    return True


def _checkpoint(follower: Follower, accounting: Accounting, prior: Before | None, settings: Settings,
                expected: StatusFigures) -> State | None:
    """A checkpoint at the session's last compaction boundary (one beyond where `prior`'s read starts), or None
    when there is none to make, the format has none, or its figures would not be `expected` (the whole
    session's, just computed)."""
    from inspector.core.cost import prices, session_cost
    from inspector.core.follower import Follower
    from inspector.core.limits import CLAUDE_WINDOW
    from inspector.core.tokens import account

    session = follower.session
    last = _last_boundary(session) if session is not None and session.format == "claude-code" else None
    offset = follower.line_offset(last.line) if last is not None and last.line is not None else None
    if session is None or last is None or offset is None or (prior is not None and last.index == 0):
        return None
    k = _requests_before(session, last.index)
    if any(r.message_index < last.index for r in session.requests[k:]):
        return None
    fit = accounting.fit if prior is None and accounting.fit is not None else account(  # (`_read` kept it)
        session, settings.estimator, prior.fit if prior is not None else None, k, resumable=False).fit
    table = prices(settings.prices)
    was = prior or Before()
    reqs, gone = session.requests[:k], session.compactions[:session.compactions.index(last)]
    model = next((r.model for r in reversed(reqs) if r.model), was.model)
    now = Before(
        offset=offset, messages=was.messages + last.index, requests=was.requests + k,
        compactions=was.compactions + sum(c.kind == "compact" for c in gone),
        microcompactions=was.microcompactions + sum(c.kind == "microcompact" for c in gone),
        costs=was.costs + session_cost(session, table).by_request[:k],
        cache_read=was.cache_read + sum(r.cache_read for r in reqs),
        prompt=was.prompt + sum(r.measured_context for r in reqs),
        past_window=was.past_window or any(r.measured_context > CLAUDE_WINDOW for r in reqs),
        model=model, agent_cost=session.agent_cost or was.agent_cost, fit=fit)
    window = Follower(follower.path)
    try:
        window.open(start=offset)
    except Exception:  # it is only a cache: the state stays what it was
        return None
    if window.session is None or not _from_boundary(window.session) or not _linked(window, now):
        return None
    acc = account(window.session, settings.estimator, fit)
    if figures_of(window.session, acc, settings, table, now) != expected:
        return None
    return now, window, acc


def figures_of(session: Session, acc: Accounting, settings: Settings, table: PriceTable | None = None,
               before: Before | None = None) -> StatusFigures:
    """The status line's figures from the core's: the window as `report` states it, the cost, the cache ratio; of
    a session read from a checkpoint's boundary on, with what came `before` it added."""
    from inspector.core.cost import prices, session_cost
    from inspector.core.window import window_figures
    from inspector.core.limits import LONG_WINDOW, window_info

    b = before or Before()
    window, model = settings.window, None
    if before is not None:  # what a whole read would see of the session's model and window
        if window is None and b.past_window and not session.window:
            window = LONG_WINDOW
        if not any(r.model for r in session.requests):
            model = b.model
    info = window_info(session, settings.policy, window, model)
    figures = window_figures(info, acc.current_context, acc.current_measured is not None)
    table = table or prices(settings.prices)
    priced = [c for c in b.costs + session_cost(session, table).by_request if c is not None]
    prompt = b.prompt + sum(r.measured_context for r in session.requests)
    agent = session.agent_cost or b.agent_cost
    t = info.thresholds
    used = figures.used
    state = "compact" if used >= t.autocompact else "warning" if used >= t.warning else "ok"
    return StatusFigures(
        path=session.source, format=session.format, model=figures.model, policy=figures.policy,
        window=figures.window, used=used, percent=figures.percent, autocompact=t.autocompact, warning=t.warning,
        to_autocompact=figures.free, measured=figures.used_measured,
        compactions=b.compactions + sum(c.kind == "compact" for c in session.compactions),
        microcompactions=b.microcompactions + sum(c.kind == "microcompact" for c in session.compactions),
        requests=b.requests + len(session.requests), messages=b.messages + len(session.messages),
        cost_usd=sum(priced) if priced else None, agent_cost_usd=agent.total_usd if agent else None,
        hit_ratio=(b.cache_read + sum(r.cache_read for r in session.requests)) / prompt if prompt else None,
        state=state)
