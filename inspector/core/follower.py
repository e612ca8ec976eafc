"""Follow a session file while its agent writes it: read only the appended bytes, feed them to the format's stateful
loader, and say what changed.

A `Follower` owns a `LineIndex` (where the next read starts) and a loader (`feed` + `build`), so an update costs
what was appended, not the size of the session. A last line without its newline is held back until it is complete
(unless it already parses: a file whose writer has not yet written the newline); a file that shrank, was replaced
(another inode: an atomic rename) or whose first line changed is read again from the start and the change says why.
Given a Claude Code project directory, it follows the newest session and moves to a new one when one appears.

The core of the app's follow mode and of `bench_follow.py`; it never imports Textual and never estimates tokens.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from itertools import compress, count
from operator import is_not
from pathlib import Path
from typing import Any, Protocol, Sequence

from inspector.core.pairing import PairingCheck
from inspector.core.formats import detect, resolve, split_address, stamp, subagent_files
from inspector.core.formats.jsonl import Progress, first_object, read_jsonl
from inspector.core.formats.values import check_figures
from inspector.core.index import FileShrunk, LineIndex
from inspector.core.model import Compaction, Format, LoadError, LoadWarning, Message, Session

HEAD = 4096  # bytes of the first line remembered to notice a file rewritten in place
FIRST_LINE = 1 << 20  # a file this short without a newline may be its first line being written
TAIL_CHECK = 256  # how many of the last messages are checked for in-place growth (a response's later lines)


class NotYet(LoadError):
    """Nothing to read yet (the file or directory does not exist yet, holds no session, or its first line is not
    complete): following waits for it; the message says what it waits for."""


def _json_start(head: bytes) -> bool:
    """`head` (a file's whole content, without a newline) is JSON cut short: a line still being written. A file
    that is no JSON (a database, an image, prose) or is JSON that fails for another reason (nested too deeply) is
    not one: it fails at once for what it is. (A multi-byte character may be cut at its end.)"""
    import orjson

    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 3:
            return False
        head = head[:exc.start]
    try:
        orjson.loads(head)
    except orjson.JSONDecodeError as exc:
        return str(exc).startswith("unexpected end of data")
    return False


class Loader(Protocol):
    """A stateful loader; one may also have `decoder(raws)`, which picks its own fast parse of lines, and
    `feed_run(first, offsets, objs, raws)`, which takes a run of lines at once (`read_jsonl`'s)."""

    def feed(self, line_no: int, offset: int, obj: Any) -> None: ...
    def warn(self, line: int | None, message: str) -> None: ...
    def build(self) -> Session: ...


@dataclass(slots=True)
class Change:
    """What one `update` brought. `session` is the new state (a snapshot: later updates never mutate it)."""

    session: Session
    first_new: int = 0  # index of the first new message; every message before it is unchanged
    updated: list[int] = field(default_factory=list)  # earlier messages whose content changed (indices)
    rebuilt: bool = False  # messages from first_new on replace what was there (a re-read, a rewind, cleared results)
    new_requests: int = 0
    new_warnings: int = 0
    compactions: list[Compaction] = field(default_factory=list)  # compactions that appeared in this update
    reloaded: str | None = None  # a notice: why everything was read again (truncated, replaced, a rewind)
    switched: str | None = None  # the newer session file a followed directory moved to
    started: bool = False  # the first session read by a follower that waited for one to be written
    lines: int = 0  # complete lines read by this update
    bytes: int = 0  # bytes of the file consumed by this update

    @property
    def new_messages(self) -> int:
        return len(self.session.messages) - self.first_new

    @property
    def empty(self) -> bool:
        """Nothing to show: no new message, request or compaction, no change to an earlier message, no reload."""
        return not (self.new_messages or self.updated or self.rebuilt or self.new_requests or self.compactions
                    or self.new_warnings)


def merge(older: Change, newer: Change) -> Change:
    """One change covering `older` then `newer` (newer's session is the later state)."""
    first = 0 if newer.rebuilt or older.rebuilt else min(older.first_new, newer.first_new)
    return Change(newer.session, first_new=first, updated=sorted(set(older.updated) | set(newer.updated)),
                  rebuilt=older.rebuilt or newer.rebuilt, new_requests=older.new_requests + newer.new_requests,
                  new_warnings=older.new_warnings + newer.new_warnings,
                  compactions=older.compactions + newer.compactions, reloaded=newer.reloaded or older.reloaded,
                  switched=newer.switched or older.switched, started=older.started or newer.started,
                  lines=older.lines + newer.lines, bytes=older.bytes + newer.bytes)


def diff(old: Session, new: Session) -> Change:
    """What `new` changed in `old`, worked out from the two states alone (the agent's snapshots: they share every
    message object they did not change): appended messages, earlier ones replaced, requests and compactions added;
    a compaction among the old messages rebuilds from its index."""
    n = len(old.messages)
    compactions = new.compactions[len(old.compactions):]
    change = Change(new, first_new=n, new_requests=max(0, len(new.requests) - len(old.requests)),
                    compactions=compactions)
    first_compaction = min((c.index for c in compactions), default=n)
    if len(new.messages) < n or first_compaction < n and any(c.kind == "compact" for c in compactions):
        change.first_new, change.rebuilt = min(first_compaction, len(new.messages), n), True
        return change
    change.updated = [i for i, (a, b) in enumerate(zip(old.messages, new.messages)) if a is not b]
    return change


def make_loader(path: Path, fmt: Format) -> Loader | None:
    """A fresh stateful loader for a JSONL file of format `fmt`, or None when the file is one JSON document (it can
    only be re-read whole)."""
    if fmt == "claude-code":
        from inspector.core.formats import first_byte
        from inspector.core.formats.claude_code import ClaudeCodeLoader

        if first_byte(path) == b"[":  # a JSON array of its lines: one document
            return None
        return ClaudeCodeLoader(str(path), subagent_files(path))
    if fmt == "codex":
        from inspector.core.formats.codex import CodexLoader

        return CodexLoader(str(path))
    if fmt == "qwen-code":
        from inspector.core.formats.qwen import QwenLoader

        return QwenLoader(str(path))
    if fmt == "kimi-code":
        from inspector.core.formats.kimi_code import KimiCodeLoader

        return KimiCodeLoader(str(path))
    if fmt == "opencode":
        return None  # a database (or a storage tree): read whole again when it changes
    first = first_object(path)
    if fmt == "gemini-cli":
        from inspector.core.formats.gemini import GeminiLoader

        return GeminiLoader(str(path)) if first is not None else None  # None: a legacy one-document session
    if fmt == "neutral":
        from inspector.core.formats.neutral import NeutralLoader

        return NeutralLoader(str(path)) if isinstance(first, dict) and "messages" not in first else None
    from inspector.core.formats.conversations import ConversationLoader, is_request_lines

    return ConversationLoader(str(path), fmt) if is_request_lines(first) else None


class Follower:
    """One live session file (or the newest session of a Claude Code project directory).

    `open()` reads what is there; each `update()` reads what was appended since and returns a `Change`. Neither
    raises on a file that vanished or went bad for a moment: the last good session stays, and `error` says why.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.target, self.selector = split_address(path)  # DATABASE#ID: one session of an opencode database
        self.directory = self.target if self.target.is_dir() else None
        self.path: Path = self.target
        self.session: Session | None = None
        self.covered = 0  # bytes of the file `session` reflects (set after it, so a reader in another thread that
        # sees the whole file covered sees the session built from it)
        self.error: str | None = None
        self.format: Format | None = None
        self._loader: Loader | None = None
        self._index: LineIndex | None = None
        self._identity: tuple[int, int] | None = None  # (st_dev, st_ino) of the file being read
        self._head = b""  # the start of its first line, to notice a rewrite that kept inode and size
        self._stamp: tuple = ()  # a document's size and time (and its database's write-ahead log's)
        self._tail_fed: int | None = None  # offset of an unterminated last line already fed (it parsed whole)
        # (line, bytes) of an unfinished last line the last read held back until its newline comes (not a warning:
        # it goes when the line is finished)
        self.unfinished: tuple[int, int] | None = None
        self._known: set[str] = set()  # session files of the directory already seen
        self._tail: list[tuple] = []  # `_key` of the last messages, to see which of them grew
        self.reads = 0  # bytes read by the last update (a work counter for tests and the benchmark)
        self._fed = 0  # lines fed to the loader so far
        self._pairs = PairingCheck(undo=TAIL_CHECK)  # the context's tool pairing, re-checked from what changed
        self._figure_warnings: dict[tuple[int | None, str], LoadWarning] = {}  # `_check_figures`' so far

    @property
    def loader(self) -> Loader | None:
        """The format's stateful loader (None: a document, read whole)."""
        return self._loader

    def line_offset(self, line_no: int) -> int | None:
        """The byte offset where line `line_no` (as this follower numbers them) starts; None: no such line read."""
        try:
            return self._index.offset(line_no) if self._index is not None else None
        except IndexError:
            return None

    def _held(self, line_no: int, size: int) -> None:
        self.unfinished = line_no, size

    def pending(self) -> int:
        """Bytes of an unfinished last line, held back until its newline arrives."""
        return self._index.pending() if self._index is not None else 0

    # -- opening and re-reading -------------------------------------------------------------------------------------

    def open(self, progress: Progress | None = None, start: int = 0) -> Session:
        """Read the session as it is now: NotYet when nothing is written yet (`update` reads it once it is),
        LoadError when it cannot be read. `start`: a JSONL file's byte offset of a line to read from, the lines
        before it left out (the status line reads a session from its last compaction boundary on; its line
        numbers then count from there). A re-read after a rewrite reads the whole file."""
        reason = self._not_yet()
        if reason is not None:
            raise NotYet(reason)
        if self.directory is not None:
            self._known = {str(p) for p in self._candidates()}
        return self._read_all(progress, start)

    def _not_yet(self) -> str | None:
        """What there is to wait for before a session can be read (None: it can be read, or fails for a reason
        waiting will not cure): a file or directory that does not exist yet, a directory with no session yet, an
        empty file, a first line still being written. Sets `path` to the session file it finds."""
        target = self.target
        if not os.path.lexists(target):
            return f"{target} does not exist yet"
        if target.is_dir():
            self.directory = target  # it may have appeared since we started
            if not _holds_session(target):
                return f"{target} holds no session yet"
        self.path = resolve(target)
        try:
            with open(self.path, "rb") as f:
                head = f.read(FIRST_LINE)
        except OSError:
            return None  # said by the read that follows
        if not head:
            return f"{self.path.name} is empty: nothing is written yet"
        if b"\n" not in head and len(head) < FIRST_LINE and _json_start(head):
            try:
                detect(self.path)
            except LoadError:
                return f"the first line of {self.path.name} is still being written"
        return None

    def _read_all(self, progress: Progress | None = None, start: int = 0) -> Session:
        path = self.path
        fmt = detect(path)
        loader = make_loader(path, fmt)
        st = os.stat(path)
        self.format, self._loader, self._tail_fed, self.unfinished = fmt, loader, None, None
        self._identity = (st.st_dev, st.st_ino)
        self._head = self._read_head()
        if loader is None:  # one JSON document (or a database): read whole, every time
            from inspector.core.formats import load

            self._index = None
            self._stamp = stamp(path)
            session = load(f"{path}#{self.selector}" if self.selector else path, progress)
            self.reads = st.st_size
        else:
            self._index = LineIndex(path)
            self._index.end = start
            self._read_lines(self._index, progress)
            session = loader.build()
            self._figure_warnings = {}
            self._check_figures(session, None)
            self._pairs.reset(session.context_start)
            self._add_pairing(session, session.context_start, 0)
            self.reads = self._index.end
        self.session = session
        self.covered = self._index.end if self._index is not None else st.st_size
        self._remember_tail(session)
        return session

    def _check_figures(self, session: Session, old: Session | None) -> None:
        """`values.check_figures` (what `load` does) on the requests and compactions this build made or changed (a
        loader keeps those it made before, or makes them all again: checked again then, warned of once)."""
        start = cstart = 0
        if old is not None:
            start = next(compress(count(), map(is_not, old.requests, session.requests)),
                         min(len(old.requests), len(session.requests)))
            cstart = next(compress(count(), map(is_not, old.compactions, session.compactions)),
                          min(len(old.compactions), len(session.compactions)))
        seen = self._figure_warnings
        check_figures(session, lambda line, message: seen.setdefault((line, message), LoadWarning(line, message)),
                      start, cstart)
        session.warnings.extend(seen.values())

    def _read_head(self) -> bytes:
        with open(self.path, "rb") as f:
            head = f.read(HEAD)
        nl = head.find(b"\n")
        return head[:nl + 1] if nl >= 0 else b""

    def _feed(self, line_no: int, offset: int, obj: Any) -> None:
        """Feed one line to the loader, once: an unterminated last line that parsed was fed already."""
        assert self._loader is not None and self._index is not None
        if offset == self._tail_fed:
            if offset < self._index.end:
                self._tail_fed = None  # its newline arrived: from now on it is an ordinary line
            return
        if offset >= self._index.end:
            self._tail_fed = offset
        self._fed += 1
        self._loader.feed(line_no, offset, obj)

    def _read_lines(self, index: LineIndex, progress: Progress | None = None) -> None:
        """Feed the loader the lines past `index`'s end: a run at a time when it takes runs, with its own parse."""
        loader = self._loader
        assert loader is not None
        read_jsonl(self.path, self._feed, loader.warn, progress, index,
                   self._skip_fed_tail if self._tail_fed is not None else None, self._held,
                   getattr(loader, "decoder", None), self._feed_run if hasattr(loader, "feed_run") else None)

    def _feed_run(self, first: int, offsets: Sequence[int], objs: list, raws: Sequence[bytes]) -> None:
        """Feed a run of complete lines to the loader (`skip` kept out a last line fed before its newline came)."""
        self._fed += len(objs)
        self._loader.feed_run(first, offsets, objs, raws)  # type: ignore[union-attr]

    def _skip_fed_tail(self, line_no: int, offset: int, raw: bytes) -> bool:
        """The last line fed before its newline arrived: now complete, it must not be fed twice."""
        if offset == self._tail_fed:
            self._tail_fed = None
            return True
        return False

    # -- updating ---------------------------------------------------------------------------------------------------

    def settle(self) -> None:
        """Do now, between appends, the work a loader defers from its one-off read to its first extension (a Claude
        Code branch's path bookkeeping); other loaders defer nothing. Call it from the thread that updates."""
        settle = getattr(self._loader, "settle", None)
        if settle is not None:
            settle()

    def update(self) -> Change:
        """Read what was appended since the last call; re-read from the start when the file was replaced. Before
        anything was read: NotYet while there is still nothing to read, else the whole session (a change that
        rebuilds from 0, `started` set)."""
        if self.session is None:
            reason = self._not_yet()
            if reason is not None:
                raise NotYet(reason)
            if self.directory is not None:
                self._known = {str(p) for p in self._candidates()}
            change = self._reopen(None)
            change.started = True
            return change
        if self.directory is not None:
            newer = self._newer_session()
            if newer is not None:
                self.path = newer
                change = self._reopen(None)
                change.switched = str(newer)
                return change
        reason = self._replaced()
        if reason == "":
            return self._grown(self.session)
        if reason is not None:
            return self._reopen(reason)
        old = self.session
        if self._loader is None or self._index is None:
            return Change(old, first_new=len(old.messages))  # a document, unchanged (`_replaced` saw no change)
        index = self._index
        before_end, before_lines, before_fed = index.end, len(index), self._fed
        try:
            self.unfinished = None
            self._read_lines(index)
        except FileShrunk:
            return self._reopen("the file was truncated")
        except OSError as exc:
            self.error = f"{self.path}: cannot read ({exc.strerror or exc})"
            return Change(old, first_new=len(old.messages))
        self.error = None
        self.reads = index.end - before_end + index.pending()
        if self._fed == before_fed and index.end == before_end:
            return Change(old, first_new=len(old.messages))  # a spurious event, or half a line: nothing to build
        session = self._loader.build()
        self._check_figures(session, old)
        change, changed = self._diff(old, session)
        compacts = [c.index for c in change.compactions if c.kind == "compact"]
        start = session.context_start if change.rebuilt else max([self._pairs.start, *compacts])
        self._add_pairing(session, start, changed)
        change.new_warnings = max(0, len(session.warnings) - len(old.warnings))
        change.lines, change.bytes = len(index) - before_lines, index.end - before_end
        if change.empty and (session.window, session.agent_cost) == (old.window, old.agent_cost):
            # lines that change nothing shown (progress, bookkeeping): the session stays the same object (a window
            # a Codex token_count states, or a new figure of the agent's own cost, is taken: the header shows them)
            change.session = session = old
        self.session = session
        self.covered = index.end
        self._remember_tail(session)
        return change

    def _reopen(self, reason: str | None) -> Change:
        try:
            session = self._read_all()
        except (LoadError, OSError) as exc:
            self.error = str(exc) if isinstance(exc, LoadError) else f"{self.path}: {exc.strerror or exc}"
            if self.session is None:
                raise LoadError(self.error) from None
            return Change(self.session, first_new=len(self.session.messages))
        self.error = None
        index = self._index
        return Change(session, first_new=0, rebuilt=True, new_requests=len(session.requests),
                      compactions=list(session.compactions), reloaded=reason,
                      lines=len(index) if index is not None else 0, bytes=self.reads)

    def _grown(self, old: Session) -> Change:
        """A database that changed, read again whole: the messages it shares with the last read stay (same id,
        kind and blocks: its rows carry no line numbers to tell a change by), what follows them is new."""
        change = self._reopen(None)
        new = change.session
        if new is old:
            return change  # it could not be read: the last good session stays
        same = next((i for i, (a, b) in enumerate(zip(old.messages, new.messages))
                     if (a.uuid, a.kind, a.blocks) != (b.uuid, b.kind, b.blocks)), min(len(old.messages),
                                                                                      len(new.messages)))
        change.first_new, change.rebuilt = same, same < len(old.messages)  # a part that grew or was pruned
        change.new_requests = max(0, len(new.requests) - len(old.requests))
        change.compactions = new.compactions[len(old.compactions):]
        return change

    def _replaced(self) -> str | None:
        """Why the file must be read from the start ("" when that needs no notice: a database that changed), or
        None when appending to it is all that happened."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return None  # mid-rename, or deleted: keep what we have until a file is back
        if (st.st_dev, st.st_ino) != self._identity:
            return "the file was replaced"
        if self._index is None:  # a document: any change means reading it again
            if stamp(self.path) == self._stamp:
                return None
            return "" if self.format == "opencode" else "the file was rewritten"  # a database grows in place
        if st.st_size < self._index.end:
            return "the file was truncated"
        if self._head and self._read_head()[:len(self._head)] != self._head:
            return "the file was rewritten"
        return None

    def _diff(self, old: Session, new: Session) -> tuple[Change, int]:
        """What `new` adds to `old`: appended messages, changed earlier ones, new requests and compactions; and the
        first message whose blocks may differ (a microcompact changes only results' text, never which call they
        answer: the tool pairing is re-checked from there, though every row is redrawn)."""
        n_old = len(old.messages)
        change = Change(new, first_new=n_old, new_requests=max(0, len(new.requests) - len(old.requests)),
                        compactions=new.compactions[len(old.compactions):])
        micro = any(c.kind == "microcompact" for c in change.compactions)
        if n_old and (len(new.messages) < n_old or new.messages[0] is not old.messages[0]):
            same = _common_prefix(old.messages, new.messages)  # the loader walked the branch again
            if same < n_old - len(self._tail):
                change.first_new, change.rebuilt = same, True
                last = old.messages[-1].uuid
                if micro:
                    change.first_new = 0
                elif last is not None and all(m.uuid != last for m in new.messages[same:]):
                    change.reloaded = "the active branch changed (a rewind)"
                return change, same
        first_tail = n_old - len(self._tail)
        for k, key in enumerate(self._tail):
            if k + first_tail >= len(new.messages) or _key(new.messages[first_tail + k]) != key:
                change.updated.append(first_tail + k)
        changed = change.updated[0] if change.updated else n_old
        if micro:
            change.first_new, change.rebuilt, change.updated = 0, True, []  # cleared results can be anywhere
        elif change.updated and change.updated[-1] >= len(new.messages):
            change.first_new, change.rebuilt, change.updated = change.updated[0], True, []
        return change, changed

    def _add_pairing(self, session: Session, start: int, changed: int) -> None:
        """Re-check the tool pairing from message `changed` (the context now begins at `start`) and warn about it
        as a fresh `load` does."""
        self._pairs.follow(session.messages, start, changed)
        session.warnings.extend(self._pairs.warnings(session.messages))

    def _remember_tail(self, session: Session) -> None:
        self._tail = [_key(m) for m in session.messages[-TAIL_CHECK:]]

    # -- a followed directory ---------------------------------------------------------------------------------------

    def _candidates(self) -> list[Path]:
        assert self.directory is not None
        from inspector.core.formats.agent_stores import sessions_under

        listed = sessions_under(self.directory)  # an agent store's folder (Kimi Code's): its sessions' files
        if listed is not None:
            return [ref.path for ref in listed]
        try:
            return [p for p in self.directory.iterdir() if p.suffix == ".jsonl" and not p.name.startswith("agent-")
                    and p.is_file()]
        except OSError:
            return []

    def _newer_session(self) -> Path | None:
        """A session file that appeared in the directory since we last looked and has content: the newest one."""
        fresh = []
        for p in self._candidates():
            if str(p) in self._known:
                continue
            try:
                if p.stat().st_size == 0:
                    continue  # created but not written yet: wait for its first line
            except OSError:
                continue
            self._known.add(str(p))
            fresh.append(p)
        if not fresh:
            return None
        return max(fresh, key=lambda p: (p.stat().st_mtime, p.name))

    def watch_dir(self) -> Path:
        """The directory to watch for changes: the followed directory, or the file's own (atomic saves rename);
        while the one waited for does not exist, the nearest that does (where it will appear)."""
        where = self.directory if self.directory is not None else self.path.parent
        while not where.is_dir() and where.parent != where:
            where = where.parent
        return where


def _holds_session(folder: Path) -> bool:
    """A directory with something `resolve` can read (a session file in it or a subdirectory, a task folder, an
    opencode database); unreadable counts as holding one, so the read says why."""
    from inspector.core.formats.agent_stores import session_file, sessions_under  # a followed file never needs them

    try:
        if session_file(folder) is not None or any(folder.glob("opencode*.db")):
            return True
        listed = sessions_under(folder)
        if listed is not None:
            return bool(listed)
        return any(p.stat().st_size > 0 for d in (folder, *(c for c in folder.iterdir() if c.is_dir()))
                   for p in d.glob("*.jsonl") if not p.name.startswith("agent-") and p.is_file())
    except OSError:
        return True


def _key(m: Message) -> tuple:
    """What tells a message changed in a live file: its lines (a response's later lines), kind and block count."""
    return (m.uuid, m.lines, m.kind, len(m.blocks))


def _common_prefix(old: list[Message], new: list[Message]) -> int:
    """How many leading messages two builds share."""
    n = 0
    for a, b in zip(old, new):
        if a is not b and _key(a) != _key(b):
            break
        n += 1
    return n
