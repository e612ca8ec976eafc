"""Hardening II, the inputs' side (issue 15, items 8 and 10-15): hostile values and shapes in session files, and
what the CLI reads and writes besides them.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import threading
from pathlib import Path

import pytest

from bad_inputs.build import entry, good_lines
from bad_inputs.proc import cli, run

ROOT_USER = os.geteuid() == 0


def _session(tmp_path: Path) -> Path:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join(good_lines()) + b"\n")
    return path


# --- item 13: --out refuses what is not a regular file or a new path -------------------------------------------

def _targets(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "real.jsonl").write_text("keep me\n")
    found = {"fifo": tmp_path / "fifo", "symlink": tmp_path / "link.jsonl", "dash": Path("-")}
    os.mkfifo(found["fifo"])
    found["symlink"].symlink_to(tmp_path / "real.jsonl")
    if ROOT_USER:  # a device node like /dev/null, made where it can do no harm
        found["device"] = tmp_path / "null"
        os.mknod(found["device"], stat.S_IFCHR | 0o666, os.makedev(1, 3))
    return found


@pytest.mark.parametrize("kind", ["fifo", "symlink", "device", "dash"])
def test_out_refuses_anything_but_a_regular_file_or_a_new_path(tmp_path, kind):
    targets = _targets(tmp_path)
    if kind not in targets:
        pytest.skip("making a device node needs root")
    target = targets[kind]
    result = cli("compact", str(_session(tmp_path)), "--strategy", "snip", "--max-chars", "0", "--out",
                 str(target), timeout=30)
    assert not result.timed_out and result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and "--out" in result.stderr, result.stderr
    assert {"fifo": "FIFO", "symlink": "symbolic link", "device": "device", "dash": "standard output"}[kind] \
        in result.stderr
    if kind == "fifo":
        assert stat.S_ISFIFO(os.lstat(target).st_mode)
    elif kind == "symlink":
        assert target.is_symlink() and (tmp_path / "real.jsonl").read_text() == "keep me\n"
    elif kind == "device":
        assert stat.S_ISCHR(os.lstat(target).st_mode)
    else:
        assert not (Path.cwd() / "-").exists()


def test_out_replaces_a_regular_file_and_creates_a_new_one(tmp_path):
    session = _session(tmp_path)
    for out in (tmp_path / "new.jsonl", tmp_path / "new.jsonl"):
        result = cli("compact", str(session), "--strategy", "clear", "--keep-recent", "0", "--out", str(out))
        assert result.returncode == 0, result.stderr


# --- item 14: template and summary files read at most their limit, never hang on a FIFO ----------------------

@pytest.mark.parametrize("flag", ["--prompt-template", "--summary-file"])
@pytest.mark.parametrize("source", ["/dev/zero", "fifo"])
def test_a_template_or_summary_from_a_device_or_fifo_fails_fast(tmp_path, flag, source):
    path = source
    if source == "fifo":
        path = str(tmp_path / "fifo")
        os.mkfifo(path)
    if flag == "--prompt-template":
        args = ("prompt", "--cwd", str(tmp_path), flag, path)
    else:
        args = ("compact", str(_session(tmp_path)), "--strategy", "summary", flag, path)
    result = cli(*args, timeout=30, measure=True)
    assert not result.timed_out, "it hung"
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    said = ("larger than",) if source == "/dev/zero" else ("no sections", "no summary text")  # read as empty
    assert any(s in result.stderr for s in said), result.stderr
    assert result.peak_mb < 150, result.peak_mb


def test_a_summary_from_a_pipe_is_read(tmp_path):
    session = _session(tmp_path)
    result = run(["bash", "-c", f"{sys.executable} -m inspector compact {session} --strategy summary "
                                f"--keep-ratio 0 --summary-file <(echo 'The user said hello.') --dry-run"])
    assert result.returncode == 0 and "The user said hello." in result.stdout, result.stderr
