"""Write failures: a full disk, a file-size quota, a read-only or missing directory, a closed stdout.

Every file the CLI or the app writes (an export, the agent's session file) fails in one line, "cannot write PATH:
REASON", exit status 2, the old file untouched and no temporary file left; the agent's turn stops with an error
event and the session file catches up once writing works again. Real failures where the system gives them without
root: /dev/full (every write: ENOSPC), RLIMIT_FSIZE in a subprocess (writes past the limit: EFBIG, like a quota), a
path through a regular file (ENOTDIR); a full disk in the middle of a file by patching os.write / os.fsync, the
system calls our own code makes.
"""

from __future__ import annotations

import errno
import json
import os
import resource
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.core import atomic
from inspector.core.agent import AgentConfig, run
from inspector.core.agent.events import Error, MessageAdded, TurnDone
from inspector.core.agent.provider import AnthropicProvider
from inspector.core.agent.writer import SessionWriter, open_session
from inspector.core.atomic import WriteFailed, remove_stale_temps
from inspector.core.export import export_session
from inspector.core.formats import load
from inspector.core.model import LoadError
from mock_api import MOCK_KEY, responses as r

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "corpus"
BIG = CORPUS / "claude-code-manual-compact.jsonl"  # 2.7 MB: its export is well over the size limits used below
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def _names(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


class DiskFull:
    """os.write / os.fsync stand-ins: writes to `path` (or to any file in it, for a directory) store half of what
    they are given, then fail with ENOSPC (a disk filling up mid-line); every other descriptor is left alone."""

    def __init__(self, path: Path, error: int = errno.ENOSPC) -> None:
        self.path, self.error, self.armed = path, error, True
        self.real_write, self.real_fsync = os.write, os.fsync

    def _ours(self, fd: int) -> bool:
        if not self.armed:
            return False
        try:
            st = os.fstat(fd)
            files = list(self.path.iterdir()) if self.path.is_dir() else [self.path]
            return any(os.path.samestat(st, os.stat(f)) for f in files)
        except OSError:
            return False

    def write(self, fd: int, data) -> int:
        if not self._ours(fd):
            return self.real_write(fd, data)
        half = len(data) // 2
        if half:
            return self.real_write(fd, memoryview(data)[:half])
        raise OSError(self.error, os.strerror(self.error))

    def fsync(self, fd: int) -> None:
        if self._ours(fd):
            raise OSError(self.error, os.strerror(self.error))
        self.real_fsync(fd)


# --- exports -----------------------------------------------------------------------------------------------------


@pytest.fixture
def session():
    return load(CORPUS / "claude-code-short.jsonl")


@pytest.mark.parametrize("call", ["open", "write", "fsync", "replace"])
@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EDQUOT, errno.EROFS])
def test_a_failed_export_names_the_file_and_leaves_the_old_one(session, tmp_path, monkeypatch, call, code):
    out = tmp_path / "out.jsonl"
    out.write_text("the old export\n")

    def fail(*args):
        raise OSError(code, os.strerror(code))

    def fail_second_write(fd, data):  # the first chunk goes in, the second finds the disk full
        writes.append(fd)
        return os.pwrite(fd, data, 0) if len(writes) == 1 else fail()

    writes: list[int] = []
    if call == "write":
        monkeypatch.setattr(atomic, "CHUNK", 100)
    monkeypatch.setattr(atomic.os, call, fail_second_write if call == "write" else fail)
    with pytest.raises(WriteFailed) as caught:
        export_session(session, out)
    monkeypatch.undo()
    words = os.strerror(code)
    assert str(caught.value) == f"cannot write {out}: {words[0].lower()}{words[1:]}"
    assert isinstance(caught.value, LoadError) and caught.value.errno == code
    assert out.read_text() == "the old export\n"
    assert _names(tmp_path) == ["out.jsonl"]  # no temporary file


def test_an_export_into_a_path_through_a_file_is_one_line(session, tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(WriteFailed, match=r"^cannot write .*/file/out\.jsonl: not a directory$"):
        export_session(session, tmp_path / "file" / "out.jsonl")
    with pytest.raises(WriteFailed, match="no such file or directory"):
        export_session(session, tmp_path / "missing" / "out.jsonl")


@pytest.mark.skipif(IS_ROOT, reason="root writes into a read-only directory all the same")
def test_an_export_into_a_read_only_directory_is_one_line(session, tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "out.jsonl").write_text("old\n")
    locked.chmod(0o500)
    try:
        with pytest.raises(WriteFailed, match=r"^cannot write .*/locked/out\.jsonl: permission denied$"):
            export_session(session, locked / "out.jsonl")
        assert _names(locked) == ["out.jsonl"] and (locked / "out.jsonl").read_text() == "old\n"
    finally:
        locked.chmod(0o700)


def _limited(limit: int):
    """For a subprocess: files may not grow past `limit` bytes, and crossing it is an error (EFBIG), not SIGXFSZ."""
    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


def _cli(*args: str, limit: int | None = None, env: dict | None = None, stdout=subprocess.PIPE,
         timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "inspector", *args], stdout=stdout, stderr=subprocess.PIPE,
                          text=True, cwd=ROOT, env=env, timeout=timeout,
                          preexec_fn=_limited(limit) if limit is not None else None)


def test_compact_out_past_a_file_size_limit_is_one_line_and_exit_2(tmp_path):
    """A real failure mid-file, no patching: RLIMIT_FSIZE stops the export at 64 KB, as a quota would."""
    out = tmp_path / "out.jsonl"
    out.write_text("the old export\n")
    result = _cli("compact", str(BIG), "--strategy", "snip", "--out", str(out), limit=64 * 1024)
    assert result.returncode == 2, result.stderr
    assert result.stderr == f"context-inspector: cannot write {out}: file too large\n"
    assert out.read_text() == "the old export\n" and _names(tmp_path) == ["out.jsonl"]


def test_stale_temporary_files_of_dead_writers_are_removed(session, tmp_path):
    out = tmp_path / "out.jsonl"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(dead.stdout)  # exited and reaped: no process has this pid now (reuse within the test is
    host = atomic._host_tag()      # possible but only keeps the file, which the assertion would show)
    stale = tmp_path / f".out.jsonl.{host}-{dead_pid}-0123abcd.tmp"
    alive = tmp_path / f".out.jsonl.{host}-{os.getppid()}-0123abcd.tmp"  # a running process: its write goes on
    other_host = tmp_path / f".out.jsonl.{'0' * 8 if host != '0' * 8 else '1' * 8}-{dead_pid}-0123abcd.tmp"
    other_target = tmp_path / f".other.jsonl.{host}-{dead_pid}-0123abcd.tmp"
    foreign = tmp_path / ".out.jsonl.someone-elses.tmp"
    for p in (stale, alive, other_host, other_target, foreign):
        p.write_text("partial")
    export_session(session, out)
    assert not stale.exists()
    assert all(p.exists() for p in (alive, other_host, other_target, foreign))
    assert remove_stale_temps(out) == []


def test_a_name_at_the_length_limit_exports_and_its_stale_temps_go(session, tmp_path):
    out = tmp_path / ("é" * 120 + ".jsonl")  # 246 bytes: with a pid and a random part, too long for one name
    stale = tmp_path / f".{atomic._kept(out.name)}.{atomic._host_tag()}-{2 ** 22 + 1}-0123abcd.tmp"
    stale.write_text("partial")  # pid above Linux's pid_max (2**22): no process has it
    export_session(session, out)
    assert _names(tmp_path) == [out.name] and load(out).messages


def test_the_temporary_file_says_who_writes_it(session, tmp_path, monkeypatch):
    seen = []
    real = atomic.os.replace

    def replace(src, dst):
        seen.append(Path(src).name)
        assert stat.S_IMODE(os.stat(src).st_mode) == 0o600
        return real(src, dst)

    monkeypatch.setattr(atomic.os, "replace", replace)
    export_session(session, tmp_path / "out.jsonl")
    assert len(seen) == 1
    assert seen[0].startswith(f".out.jsonl.{atomic._host_tag()}-{os.getpid()}-") and seen[0].endswith(".tmp")


# --- the app's export --------------------------------------------------------------------------------------------


async def test_the_workbench_notifies_a_failed_export_and_keeps_running(tmp_path):
    from textual.widgets import Input

    from app_helpers import ready
    from inspector.app import make_app
    from inspector.core.figures import Settings
    from inspector.app.screens.workbench import WorkbenchScreen
    from inspector.samples import SAMPLE_DIR

    (tmp_path / "file").write_text("x")
    out = tmp_path / "file" / "out.jsonl"
    app = make_app(SAMPLE_DIR / "claude-code-autocompact.jsonl", home=False, settings=Settings(estimator="chars35"))
    async with app.run_test(size=(160, 48)) as pilot:
        await ready(app, pilot)
        await pilot.press("c")
        wb = app.screen
        assert isinstance(wb, WorkbenchScreen)
        await wb.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("x")
        wb.query_one("#wb-ask-input", Input).value = str(out)
        await pilot.press("enter")
        for _ in range(3):
            await wb.workers.wait_for_complete()
            await pilot.pause()
        assert wb.last_export is None and app.screen is wb and app.is_running
        notes = [str(n.message) for n in app._notifications]
        assert f"cannot write {out}: not a directory" in notes
    assert _names(tmp_path) == ["file"]


# --- the agent's session file ------------------------------------------------------------------------------------


def _agent(mock_api, tmp_path: Path) -> tuple[AgentConfig, Path]:
    return AgentConfig(AnthropicProvider(MOCK_KEY, mock_api.url), tmp_path), tmp_path / "s.jsonl"


def test_a_full_disk_stops_the_turn_and_the_file_catches_up_later(mock_api, tmp_path, monkeypatch):
    (tmp_path / "a.txt").write_text("hello\n")
    mock_api.add(r.tool_calls(("read_file", {"path": "a.txt"})))
    config, path = _agent(mock_api, tmp_path)
    state, previous = open_session(path, config.new_session("SYS", str(path)))
    disk = DiskFull(path)
    with SessionWriter(path, state, previous) as writer:
        before = path.read_bytes()
        disk.armed = False
        monkeypatch.setattr(os, "write", disk.write)
        monkeypatch.setattr(os, "fsync", disk.fsync)
        events = []
        for event in writer.tee(run("read a.txt", state, config, "SYS")):
            events.append(event)
            if isinstance(event, MessageAdded) and event.message.kind == "prompt":
                disk.armed = True  # the prompt is in the file; the model's answer finds the disk full
        assert isinstance(events[-2], Error) and isinstance(events[-1], TurnDone)
        assert events[-2].message == f"cannot write {path}: no space left on device; the turn was stopped"
        assert events[-2].error_type == "write_error" and events[-1].stop_reason == "error"
        assert events[-1].iterations == 1 and len(mock_api.message_requests) == 1  # no tool ran, no second call
        assert isinstance(events[-3], MessageAdded) and events[-3].message.tool_uses()  # shown: memory holds it
        assert [m.kind for m in state.messages] == ["prompt", "assistant"]  # the history in memory is whole
        on_disk = load(path)
        assert not on_disk.warnings and [m.kind for m in on_disk.messages] == ["prompt"]  # half a line cut off
        assert path.read_bytes().endswith(b"\n") and len(path.read_bytes()) > len(before)

        disk.armed = False  # room again: the next turn writes the held-back answer first
        mock_api.add(r.text("done now"))
        events = list(writer.tee(run("go on", state, config, "SYS")))
        assert events[-1].stop_reason == "end_turn" and writer.failed is None
    monkeypatch.undo()
    loaded = load(path)
    assert not loaded.warnings
    assert [(m.role, m.kind, m.text()) for m in loaded.messages] == [(m.role, m.kind, m.text())
                                                                     for m in state.messages]
    assert [m.kind for m in loaded.messages] == ["prompt", "assistant", "tool_result", "prompt", "assistant"]
    assert len(loaded.requests) == 2


def test_a_writer_that_cannot_start_leaves_no_file_and_an_old_one_as_it_was(mock_api, tmp_path, monkeypatch):
    config, path = _agent(mock_api, tmp_path)
    fresh = config.new_session("SYS", str(path))
    for call in ("write", "fsync"):
        monkeypatch.setattr(os, call, getattr(DiskFull(path), call))
        with pytest.raises(WriteFailed, match=r"no space left on device$"):
            SessionWriter(path, fresh, None)
        monkeypatch.undo()
        assert not path.exists()  # it created the file: it removes it

    path.write_text('{"event": "session", "version": 1}\n{"role": "user", "content": "kept"}\n')
    before = path.read_bytes()
    for call in ("write", "fsync"):
        monkeypatch.setattr(os, call, getattr(DiskFull(path), call))
        with pytest.raises(WriteFailed):
            SessionWriter(path, fresh, None)  # a file begun elsewhere: the whole session would follow it
        monkeypatch.undo()
        assert path.read_bytes() == before


async def test_the_agent_view_reports_write_failures_and_goes_on(mock_api, tmp_path, monkeypatch):
    """The app's agent: a session directory that cannot be made, then a full disk mid-turn: each is one line in the
    agent log, the app keeps running, and once writing works the file holds the whole conversation."""
    from inspector.app import make_app
    from inspector.app.agent_bridge import AgentOptions
    from inspector.core.figures import Settings
    from test_app_agent import agent_view, send, settled

    data = tmp_path / "data"
    data.write_text("a file where the data directory should be")
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    monkeypatch.setenv("CONTEXT_INSPECTOR_MEMORY", str(tmp_path / "no-memory.md"))
    monkeypatch.delenv("ANTHROPIC_MODEL", raising=False)
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("hello\n")
    mock_api.add(r.text("first answer"), r.tool_calls(("read_file", {"path": "a.txt"})), r.text("third answer"))
    app = make_app(None, home=False, settings=Settings(estimator="chars35"),
                   agent=AgentOptions(cwd=work, open_view=True))
    async with app.run_test(size=(120, 40)) as pilot:
        screen, panel = await agent_view(app, pilot)
        await send(pilot, panel, "zero")
        await settled(pilot, panel)  # a turn that failed before any snapshot still gets its exact figures
        path = panel.agent.path
        assert f"the turn could not run: cannot write {path}: not a directory" in panel.transcript()
        assert mock_api.message_requests == []  # nothing was asked of the model

        data.unlink()  # the directory can be made now
        await send(pilot, panel, "one")
        await settled(pilot, panel)
        assert "first answer" in panel.transcript()

        disk = DiskFull(path.parent)
        monkeypatch.setattr(os, "fsync", disk.fsync)
        await send(pilot, panel, "two")
        await settled(pilot, panel)
        assert f"error: cannot write {path}: no space left on device; the turn was stopped" in panel.transcript()
        assert app.is_running and not panel.running
        assert screen.session.messages[-1].text() == "two"  # the prompt is shown and kept, though not saved,
        assert len(mock_api.message_requests) == 1          # and the turn stopped before asking the model

        disk.armed = False
        await send(pilot, panel, "three")
        await settled(pilot, panel)
        assert "third answer" in panel.transcript()
        sent = [(m["role"], m["content"][0].get("text")) for m in mock_api.message_requests[1].messages]
        assert sent == [("user", "one"), ("assistant", "first answer"), ("user", "two"), ("user", "three")]
        shown = [(m.role, m.kind, m.text()) for m in screen.session.messages]
    loaded = load(path)
    assert not loaded.warnings and [(m.role, m.kind, m.text()) for m in loaded.messages] == shown
    assert [m.text() for m in loaded.messages if m.kind == "prompt"] == ["one", "two", "three"]


def _run_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    return {**env, "CONTEXT_INSPECTOR_MEMORY": str(tmp_path / "none.md"), "HOME": str(tmp_path)}


def test_run_into_dev_full_is_one_line_and_calls_no_model(mock_api, tmp_path):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    mock_api.add(r.text("never asked for"))
    result = _cli("run", "--prompt", "hi", "--session", "/dev/full", "--cwd", str(tmp_path), env=_run_env(tmp_path))
    assert result.returncode == 2
    first, error = result.stderr.splitlines()  # the start line ("session ... · model ..."), then why it stopped
    assert first.startswith("session /dev/full")
    assert error == "context-inspector: cannot write /dev/full: no space left on device"
    assert mock_api.message_requests == []


@pytest.mark.parametrize("json_out", [False, True])
def test_run_past_a_file_size_limit_stops_the_turn_with_exit_2(mock_api, tmp_path, json_out):
    """The session file hits RLIMIT_FSIZE mid-turn: a real EFBIG partway through a line, cut back to whole lines."""
    session = tmp_path / "s.jsonl"
    for n in range(8):
        (tmp_path / f"f{n}.txt").write_text(f"file {n}\n" * 3000)
        mock_api.add(r.tool_calls(("read_file", {"path": f"f{n}.txt"})))
    mock_api.add(r.text("the end"))
    args = ["run", "--prompt", "read them", "--session", str(session), "--cwd", str(tmp_path), "--no-compact"]
    result = _cli(*args, *(["--json"] if json_out else []), limit=100_000, env=_run_env(tmp_path))
    assert result.returncode == 2, result.stderr
    message = f"cannot write {session}: file too large; the turn was stopped"
    if json_out:
        events = [json.loads(line) for line in result.stdout.splitlines()]
        assert events[-2] == {"event": "error", "message": message, "error_type": "write_error", "status": None}
        assert events[-1]["event"] == "turn_done" and events[-1]["stop_reason"] == "error"
    else:
        assert f"error: {message}\n" in result.stderr and "saved to" not in result.stderr
        assert "Traceback" not in result.stderr
    assert 1 < len(mock_api.message_requests) < 9  # stopped partway
    data = session.read_bytes()
    assert data.endswith(b"\n") and len(data) <= 100_000
    loaded = load(session)
    assert not loaded.warnings and loaded.messages[0].text() == "read them"


# --- a closed stdout ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("unbuffered", [False, True])
@pytest.mark.parametrize("args", [
    ["report", str(CORPUS / "claude-code-short.jsonl")],
    ["report", "--json", str(BIG)],
    ["compact", str(BIG), "--strategy", "snip"],
    ["prompt"],
    ["--help"],
], ids=["report", "report-json", "compact", "prompt", "help"])
def test_a_closed_stdout_ends_quietly(tmp_path, args, unbuffered):
    """`context-inspector report x | head -1` with head already gone: no traceback, no "Exception ignored"."""
    env = _run_env(tmp_path)
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    read, write = os.pipe()
    os.close(read)  # every write to the pipe now fails with EPIPE
    try:
        result = _cli(*args, env=env, stdout=write)
    finally:
        os.close(write)
    assert (result.returncode, result.stderr) == (0, "")


def test_run_with_a_closed_stdout_ends_quietly_and_keeps_the_session(mock_api, tmp_path):
    mock_api.add(r.text("an answer nobody reads " * 50))
    session = tmp_path / "s.jsonl"
    read, write = os.pipe()
    os.close(read)
    try:
        result = _cli("run", "--prompt", "hi", "--session", str(session), "--cwd", str(tmp_path),
                      env=_run_env(tmp_path), stdout=write)
    finally:
        os.close(write)
    assert result.returncode == 0
    assert result.stderr.startswith("session ") and len(result.stderr.splitlines()) == 1  # the start line only
    loaded = load(session)
    assert not loaded.warnings and loaded.messages[0].text() == "hi"


def test_any_other_os_error_is_one_line_with_exit_2(tmp_path, monkeypatch, capsys):
    """An OSError no command anticipated is the system's refusal, not a bug: one line naming the file."""
    from inspector import cli
    from inspector.commands import report

    def refuse(args):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(tmp_path / "x"))

    monkeypatch.setattr(report, "run", refuse)
    assert cli.main(["report", str(tmp_path / "x")]) == 2
    assert capsys.readouterr().err == f"context-inspector: {tmp_path / 'x'}: permission denied\n"


def test_reason_reads_as_a_sentence():
    assert atomic.reason(OSError(errno.ENOSPC, "No space left on device")) == "no space left on device"
    assert atomic.reason(OSError(errno.EROFS, None)) == "read-only file system"
    assert atomic.reason(OSError("odd")) == "odd"

