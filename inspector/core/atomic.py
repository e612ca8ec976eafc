"""Writing files so that a failure or a crash never leaves half of one, and saying in one line why a write failed.

`write_atomic(target, lines)` writes to a temporary file in the target's directory, fsyncs it and renames it over
the target (os.replace, atomic on POSIX), then fsyncs the directory: a reader, a full disk or a SIGKILL leaves the
old file or the whole new one, never a mixture. A failed write removes its temporary file and leaves the target as
it was.

Only a SIGKILL (or a power cut) can leave a temporary file behind, so temporary names say who wrote them:
`.NAME.<host>-<pid>-<random>.tmp`. Every write to NAME first removes the ones whose process is gone (same host, pid
no longer running): a crashed export leaves at most one stray file, and only until the next write to that name. A
pid that is alive, even reused by another program, keeps its file: a stale leftover may be kept, a write in
progress is never removed. The host tag keeps one machine from removing another's write in progress in a shared
(NFS) directory.

Why not Linux's O_TMPFILE (an unnamed file, linked in once complete)? Its link step goes through /proc/self/fd,
which fails (EXDEV) in some containers and sandboxes and needs /proc at all, and linkat cannot replace an existing
target, so a named step and the cleanup above would be needed anyway: one mechanism that works everywhere is
simpler to trust than two.
"""

from __future__ import annotations

import errno
import os
import re
import socket
import sys
import uuid
import zlib
from collections.abc import Iterable
from pathlib import Path

from inspector.core.model import LoadError

CHUNK = 1 << 20  # bytes gathered before each os.write
NAME_KEPT = 200  # bytes of the target's name in a temporary name: with the rest, within NAME_MAX (255 bytes)


class WriteFailed(LoadError):
    """A file could not be written: "cannot write PATH: REASON", one line (exit status 2 in the CLI)."""

    def __init__(self, path: str | os.PathLike[str], exc: OSError) -> None:
        super().__init__(f"cannot write {os.fspath(path)}: {reason(exc)}")
        self.path = os.fspath(path)
        self.errno = exc.errno


def reason(exc: OSError) -> str:
    """The OS's words for an error, lower-case as in a sentence: "no space left on device"."""
    text = exc.strerror or (os.strerror(exc.errno) if exc.errno else "") or str(exc) or type(exc).__name__
    return text[:1].lower() + text[1:]


def write_atomic(target: Path, lines: Iterable[str], encoding_errors: str = "strict", *,
                 editor_mode: bool = False) -> None:
    """Write `lines` (each with its own line end) to `target` as one atomic replacement; WriteFailed on an OS error.

    The new file is private (0600: exports hold file contents) unless `editor_mode`, used for the user's own files
    (the agent's write and edit tools): then a replaced file keeps its permission bits and a new one gets the
    umask's, as an editor would. Anything else raised while producing the lines (a bug, Ctrl-C) also removes the
    temporary file, then goes on."""
    directory = target.parent
    remove_stale_temps(target)
    try:
        fd, tmp = _create_temp(directory, target.name, 0o666 if editor_mode else 0o600)
    except OSError as exc:
        raise WriteFailed(target, exc) from None
    try:
        try:
            if editor_mode:
                _keep_mode(fd, target)
            buffer = bytearray()
            for line in lines:
                buffer += line.encode("utf-8", encoding_errors)
                if len(buffer) >= CHUNK:
                    write_all(fd, buffer)
                    buffer.clear()
            write_all(fd, buffer)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except BaseException as exc:
        remove_quietly(tmp)
        if isinstance(exc, OSError):
            raise WriteFailed(target, exc) from None
        raise
    _sync_directory(directory)


def write_all(fd: int, data: bytes | bytearray) -> None:
    """os.write until all of `data` is written (a write may take only part); OSError as os.write raises it."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _host_tag() -> str:
    return f"{zlib.crc32(socket.gethostname().encode('utf-8', 'replace')):08x}"


def _kept(name: str) -> str:
    """The start of `name` that a temporary name holds: at most NAME_KEPT bytes, the same bytes as the name's."""
    return os.fsencode(name)[:NAME_KEPT].decode(sys.getfilesystemencoding(), "surrogateescape")


def _keep_mode(fd: int, target: Path) -> None:
    """Give the temporary file the permission bits of the file it replaces, if there is one."""
    try:
        mode = os.stat(target).st_mode & 0o7777
    except FileNotFoundError:
        return
    os.fchmod(fd, mode)


def _create_temp(directory: Path, name: str, mode: int) -> tuple[int, Path]:
    """A new file `.NAME.<host>-<pid>-<random>.tmp` in `directory`, created with `mode` (less the umask)."""
    prefix = f".{_kept(name)}.{_host_tag()}-{os.getpid()}-"
    for _ in range(100):
        path = directory / f"{prefix}{uuid.uuid4().hex[:8]}.tmp"
        try:
            return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode), path
        except FileExistsError:
            continue
    raise OSError(errno.EEXIST, "no unused temporary file name", str(directory))


def remove_stale_temps(target: Path) -> list[Path]:
    """Remove the temporary files of earlier writes to `target` whose writer (on this host) no longer runs, and
    return them. Best effort: a directory that cannot be listed, or a file that cannot be removed, is left."""
    if os.name != "posix":  # os.kill(pid, 0) is the liveness test; elsewhere it would send a signal
        return []
    directory = target.parent
    pattern = re.compile(rf"\.{re.escape(_kept(target.name))}\.{_host_tag()}-(\d+)-[0-9a-f]+\.tmp")
    removed = []
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    for name in names:
        match = pattern.fullmatch(name)
        if match and not _alive(int(match.group(1))):
            path = directory / name
            if remove_quietly(path):
                removed.append(path)
    return removed


def _alive(pid: int) -> bool:
    """Whether `pid` may still be writing: only a pid known to be gone counts as dead."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):  # another user's process; a number too big to ask about
        pass
    return True


def remove_quietly(path: Path) -> bool:
    """Remove `path` if possible; whether it was."""
    try:
        os.unlink(path)
    except OSError:
        return False
    return True


def _sync_directory(directory: Path) -> None:
    """Make the rename itself durable; file systems that cannot fsync a directory are let be."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
