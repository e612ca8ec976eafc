"""Hostile and broken inputs (tests/bad_inputs/): `report` and the app load what they can with warnings, or stop with
one line naming the file and exit status 2. Never a traceback, never a hang, memory bounded.

CLI cases run as subprocesses with a timeout (a hang fails the test instead of stalling the suite); the app runs
in-process for small inputs and as a subprocess, memory measured, for the 50 MB line and the deep nesting.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from bad_inputs.build import CASES, Case, good_lines
from bad_inputs.open_app import outcome
from bad_inputs.proc import cli, run

BIG = sorted(name for name, case in CASES.items() if case.big)
SMALL = sorted(name for name, case in CASES.items() if not case.big and name != "unreadable")
PEAK_MB = 300  # a 50 MB line costs ~215 MB (benchmarks/hostile_inputs.py): raw bytes, str, parsed copy
ROOT_USER = os.geteuid() == 0


@pytest.fixture(scope="session")
def big_inputs(tmp_path_factory) -> dict[str, Path]:
    """The 50 MB and deeply nested files, built once for every test that needs them."""
    base = tmp_path_factory.mktemp("big")
    paths = {}
    for name in BIG:
        (base / name).mkdir()
        paths[name] = CASES[name].build(base / name)
    return paths


def _path(name: str, tmp_path: Path, big_inputs: dict[str, Path] | None = None) -> Path:
    if CASES[name].big:
        assert big_inputs is not None
        return big_inputs[name]
    return CASES[name].build(tmp_path)


def check_cli(name: str, path: Path) -> None:
    case: Case = CASES[name]
    table = cli("report", str(path))
    assert not table.timed_out, f"{name}: report hung"
    assert "Traceback" not in table.stderr + table.stdout
    if case.expect == "error":
        assert table.returncode == 2, table.stderr
        assert table.stdout == ""
        assert table.stderr.count("\n") == 1 and table.stderr.startswith("context-inspector: "), table.stderr
        assert str(path) in table.stderr and case.says in table.stderr
        return
    assert table.returncode == 0, table.stderr
    assert table.stderr == ""
    assert "\x1b" not in table.stdout
    warnings = table.stdout.partition("\nWarnings (")[2].partition("\n\n")[0]  # "  line N: message" rows
    assert case.says in warnings and (bool(warnings) == bool(case.says)), table.stdout


@pytest.mark.parametrize("name", SMALL)
def test_report_small(name, tmp_path):
    check_cli(name, _path(name, tmp_path))


@pytest.mark.parametrize("name", BIG)
def test_report_big_in_bounded_memory(name, big_inputs):
    check_cli(name, big_inputs[name])
    result = cli("report", str(big_inputs[name]), "--json", measure=True)
    assert result.peak_mb < PEAK_MB, f"{name}: report peaked at {result.peak_mb:.0f} MB"


NOT_YET = {"empty": "is empty: nothing is written yet", "missing": "does not exist yet"}  # the app's words for them


@pytest.mark.parametrize("name", SMALL)
async def test_app_small(name, tmp_path):
    case = CASES[name]
    seen = await outcome(_path(name, tmp_path))
    assert seen["running"], seen
    if case.expect == "load":
        assert seen["state"] == "loaded", seen
        if name == "orphan-tool-result":  # the list marks them (the live loader does not add the warnings)
            assert seen["orphans"] == 2, seen
        elif name == "truncated-last-line":  # not a warning: the status line says it, and that it may yet come
            assert seen["warnings"] == 0 and "line 4 unfinished" in seen["status"], seen
        else:
            assert (seen["warnings"] > 0) == bool(case.says), seen
    elif name.startswith("directory"):
        assert seen["state"] == "picker", seen  # the app lists a directory's sessions (here: none)
    elif name in NOT_YET:  # what follow mode would wait for: said so, and f follows it
        assert seen["state"] == "failed" and NOT_YET[name] in seen["error"] and "f follows it" in seen["error"], seen
    else:
        assert seen["state"] == "failed" and case.says in seen["error"], seen


@pytest.mark.parametrize("name", [name for name in BIG if CASES[name].app])
def test_app_big_in_bounded_memory(name, big_inputs):
    result = run([sys.executable, "tests/bad_inputs/open_app.py", str(big_inputs[name])], timeout=120, measure=True)
    assert not result.timed_out, f"{name}: the app hung"
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    seen = json.loads(result.stdout)
    assert seen["running"], seen
    if CASES[name].expect == "load":
        assert seen["state"] == "loaded", seen
    else:
        assert seen["state"] == "failed" and CASES[name].says in seen["error"], seen
    assert result.peak_mb < PEAK_MB + 50, f"{name}: the app peaked at {result.peak_mb:.0f} MB"


@pytest.fixture
def unreadable(tmp_path) -> list[str]:
    """A session file its reader may not read; returns the command prefix for that reader. Root reads anything,
    so as root the reader is root without the capabilities that override file permissions."""
    if ROOT_USER:
        if shutil.which("setpriv") is None:
            pytest.skip("running as root without setpriv: cannot make a file unreadable")
        return ["setpriv", "--bounding-set=-dac_override,-dac_read_search"]
    return []


def test_report_unreadable(unreadable, tmp_path):
    path = CASES["unreadable"].build(tmp_path)
    result = run([*unreadable, sys.executable, "-m", "inspector", "report", str(path)])
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert str(path) in result.stderr and "ermission denied" in result.stderr


def test_app_unreadable(unreadable, tmp_path):
    path = CASES["unreadable"].build(tmp_path)
    result = run([*unreadable, sys.executable, "tests/bad_inputs/open_app.py", str(path)], timeout=120)
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout)
    assert seen["state"] == "failed" and "ermission denied" in seen["error"] and seen["running"], seen


def test_a_fifo_never_blocks_the_reader(tmp_path):
    """Nothing writes to the FIFO: opening it for reading would block forever."""
    path = CASES["fifo"].build(tmp_path)
    result = cli("report", str(path), timeout=30)
    assert not result.timed_out and result.returncode == 2


def test_a_directory_of_bad_sessions_reports_the_newest(tmp_path):
    """A project directory whose newest session is broken: the error names that file, not the directory."""
    (tmp_path / "old.jsonl").write_bytes(b"\n".join(good_lines()) + b"\n")
    newest = tmp_path / "new.jsonl"
    newest.write_bytes(b"\x00" * 100)
    os.utime(tmp_path / "old.jsonl", (1, 1))
    result = cli("report", str(tmp_path))
    assert result.returncode == 2 and str(newest) in result.stderr and result.stderr.count("\n") == 1


def test_the_picker_lists_a_directory_of_bad_sessions(tmp_path):
    """The picker reads every file's head and counts its messages: none of the bad files may hang it (a FIFO did)
    or take it down (a first line nested too deeply did). A subprocess, so a hang fails instead of stalling."""
    from bad_inputs.build import DEEP

    for name in SMALL:
        if name not in ("missing", "directory"):
            (tmp_path / name).mkdir()
            built = CASES[name].build(tmp_path / name)
            if built.exists() or built.is_symlink():
                built.rename(tmp_path / f"{name}.jsonl")
    (tmp_path / "deep-first-line.jsonl").write_bytes(b"[" * DEEP + b"]" * DEEP + b"\n")
    result = run([sys.executable, "tests/bad_inputs/open_app.py", str(tmp_path)], timeout=60)
    assert not result.timed_out, "the picker hung"
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout)
    assert seen["state"] == "picker" and seen["running"], seen
    regular = [p for p in tmp_path.glob("*.jsonl") if p.is_file()]
    assert seen["entries"] == len(regular), seen  # every readable regular file listed, nothing else


def test_duplicate_uuids_keep_the_first_copy():
    """A resumed session repeats earlier entries: the first copy of each stands, a later rewrite does not. The
    identical repeat (u1) is silent; the rewrite (a1, other content) is warned, once, naming both lines."""
    from bad_inputs.build import HERE

    from inspector.core.formats import load

    session = load(HERE / "duplicate-uuids.jsonl")
    texts = [m.text() for m in session.messages]
    assert len(texts) == 6 and not any("a rewrite with the same uuid" in t for t in texts)
    assert texts[-2:] == ["thanks", "welcome"]
    assert [(w.line, w.message) for w in session.warnings] == [
        (6, "uuid 'a1' repeated at line 6 with different content than line 2; the first is kept")]
    resumed = load(HERE / "duplicate-uuids-resumed.jsonl")  # every entry repeated, other sessionId and timestamps
    assert not resumed.warnings
    assert [m.text() for m in resumed.messages][-3:] == ["Two files.", "thanks", "welcome"]
