"""Hardening II, the inputs' side (issue 15, items 8 and 10-15): hostile values and shapes in session files, and
what the CLI reads and writes besides them.
"""

from __future__ import annotations

import json
import os
import stat
import sys
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


# --- item 10: one response with 400,000 parallel tool calls is checked in linear time --------------------------

def test_pairing_400k_parallel_calls_is_linear():
    """A hang guard, not a timing: the quadratic check took 51 s here; linear, it takes a second or two."""
    code = ("from inspector.core.model import Block, Message, Session\n"
            "from inspector.core.pairing import pairing_warnings, PairingCheck\n"
            "n = 400_000\n"
            "calls = Message('assistant', 'assistant', [Block('tool_use', tool_id=f't{i}', tool_name='Bash') "
            "for i in range(n)])\n"
            "results = Message('user', 'tool_result', [Block('tool_result', tool_id=f't{i}') for i in range(n)])\n"
            "s = Session(source='x', format='neutral', messages=[calls, results])\n"
            "assert pairing_warnings(s) == []\n"
            "check = PairingCheck(undo=2)\n"
            "check.check(s.messages)\n"
            "assert check.rollback(1) and len(check.open) == n and check.orphans()[0].tool_id == 't0'\n")
    _finishes(code, 25, "the pairing check")


def _finishes(code: str, seconds: float, what: str) -> None:
    """`code` runs to its end (its asserts hold) in a subprocess within `seconds`."""
    result = run([sys.executable, "-c", code + "print('ok')\n"], timeout=seconds)
    assert not result.timed_out, f"{what} ran past {seconds} s"
    assert result.stdout.strip() == "ok", result.stderr


def test_one_response_over_100k_lines_is_assembled_in_linear_time():
    """A hang guard, not a timing: joining each later line of a response to its message's lines a tuple at a time
    took 70 s for 100,000 lines; linear, the loader takes a few seconds. Fed as parsed lines (no JSON to read)."""
    code = ("from inspector.core.formats.claude_code import ClaudeCodeLoader\n"
            "n = 100_000\n"
            "loader = ClaudeCodeLoader('x.jsonl')\n"
            "loader.feed(1, 0, {'type': 'user', 'uuid': 'u0', 'parentUuid': None, 'message': {'role': 'user', "
            "'content': 'go'}})\n"
            "for i in range(n):\n"
            "    loader.feed(i + 2, i + 1, {'type': 'assistant', 'uuid': f'a{i}', 'parentUuid': f'a{i - 1}' if i "
            "else 'u0', 'message': {'role': 'assistant', 'id': 'msg_1', 'model': 'claude-sonnet-4-5', 'content': "
            "[{'type': 'tool_use', 'id': f't{i}', 'name': 'Bash', 'input': {}}], 'usage': {'input_tokens': 100, "
            "'output_tokens': 10}}})\n"
            "s = loader.build()\n"
            "assert len(s.messages) == 2 and s.messages[1].lines == tuple(range(2, n + 2)), s.messages[1].lines[:5]\n"
            "assert len(s.messages[1].blocks) == n and len(s.requests) == 1\n")
    _finishes(code, 40, "assembling one response's 100,000 lines")


# --- item 9: figures out of range, from a file and from what a live file appends ---------------------------------

def test_an_appended_figure_out_of_range_is_zeroed_and_warned_once(tmp_path):
    from inspector.core.follower import Follower

    path = _session(tmp_path)
    follower = Follower(path)
    assert follower.open().warnings == []
    bad = entry("assistant", "a2", "u2", [{"type": "text", "text": "ok"}], id="msg_2", model="claude-sonnet-4-5",
                usage={"input_tokens": -5, "output_tokens": 10**400})
    with open(path, "a") as f:
        f.write(json.dumps(bad) + "\n")
    session = follower.update().session
    said = [w for w in session.warnings if "out of range" in w.message]
    assert [(w.line, w.message.split(" is ")[0]) for w in said] == [(4, "usage input tokens"),
                                                                     (4, "usage output tokens")], said
    assert session.requests[-1].measured_context == 0 and session.requests[-1].output_tokens == 0
    with open(path, "a") as f:
        f.write(json.dumps(entry("user", "u3", "a2", "more")) + "\n")
    session = follower.update().session
    assert len(session.messages) == 5 and [w for w in session.warnings if "out of range" in w.message] == said


# --- item 11: what one line may take ---------------------------------------------------------------------------

def _with_tail(tmp_path: Path, tail_bytes: int, nul: bool) -> Path:
    """Four good lines (the first one long, so the tail is past the binary probe), then the tail."""
    path = tmp_path / "s.jsonl"
    filler = json.dumps(entry("user", "u0", None, "x" * 9000)).encode()
    path.write_bytes(b"\n".join([filler, *good_lines()]) + b"\n")
    with open(path, "ab") as f:
        if nul:
            f.truncate(path.stat().st_size + tail_bytes)  # what `truncate -s 2G` leaves: NUL bytes, no newline
        else:
            f.write(b'{"type": "user", "x": "' + b"y" * tail_bytes + b'"}')
    return path


@pytest.mark.parametrize("nul", [True, False], ids=["nul-tail", "huge-unterminated-line"])
def test_a_huge_tail_is_skipped_named_and_bounded(tmp_path, nul):
    path = _with_tail(tmp_path, 1_500_000_000 if nul else 150_000_000, nul)
    result = cli("report", str(path), "--json", timeout=120, measure=True)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert len(report["messages"]) == 3  # the filler is a branch of its own: the conversation is the good lines
    warning = next(w for w in report["warnings"] if w["line"] == 5)
    assert ("NUL bytes" if nul else "longer than") in warning["message"] and "byte" in warning["message"]
    assert result.peak_mb < 500, f"peaked at {result.peak_mb:.0f} MB"


def test_a_line_over_the_limit_mid_file_is_skipped_and_the_rest_read(tmp_path):
    from inspector.core.index import LineIndex

    path = tmp_path / "s.jsonl"
    lines = good_lines()
    path.write_bytes(lines[0] + b"\n" + b"z" * 5000 + b"\n" + b"\n".join(lines[1:]) + b"\n")
    index = LineIndex(path, chunk_size=1024, max_line=4096)
    seen = [(n, raw[:20]) for n, _, raw in index.read_new()]
    assert [n for n, _ in seen] == [1, 2, 3, 4] and seen[1][1] == b""
    assert index.skipped[0][:2] == (2, len(lines[0]) + 1) and len(index) == 4


# --- item 12: encodings, document shapes, huge labels, bidi controls, a file growing as it is read -------------

def test_a_file_growing_faster_than_it_reads_is_read_to_its_size_at_the_start(tmp_path):
    from inspector.core.index import LineIndex

    path = _session(tmp_path)
    index = LineIndex(path, chunk_size=64)
    read = 0
    with open(path, "ab") as grow:
        for _ in index.read_new():
            read += 1
            grow.write(b"\n".join(good_lines()) + b"\n")  # three lines appended per line read
            grow.flush()
            assert read < 100, "the read never ended"
    assert read == 3
    assert len(list(index.read_new())) > 0  # the next read goes on from there


def test_a_utf16_session_is_named_as_such(tmp_path):
    path = tmp_path / "utf16.jsonl"
    path.write_bytes(("\n".join(x.decode() for x in good_lines()) + "\n").encode("utf-16"))
    result = cli("report", str(path))
    assert result.returncode == 2 and "UTF-16" in result.stderr and "binary" not in result.stderr, result.stderr


def test_a_json_array_of_claude_code_lines_loads(tmp_path):
    path = tmp_path / "array.json"
    path.write_text(json.dumps([json.loads(x) for x in good_lines()], indent=2))
    result = cli("report", str(path), "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["format"] == "claude-code" and len(report["messages"]) == 3


def test_a_huge_label_is_capped_in_the_report(tmp_path):
    lines = [json.loads(x) for x in good_lines()]
    lines[1]["message"]["model"] = "m" * 10_000_000
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    result = cli("report", str(path), timeout=60)
    assert result.returncode == 0 and len(result.stdout) < 100_000, len(result.stdout)
    assert "more characters" in result.stdout


def test_bidi_controls_are_shown_not_obeyed(tmp_path):
    from inspector.app.text import visible
    from inspector.core.inert import safe, safe_line

    text = "file\u202etxt.exe \u2066x\u2069"
    for shown in (safe(text), safe_line(text), visible(text)):
        assert "\u202e" not in shown and "\u2066" not in shown and "<U+202E>" in shown
    lines = [json.loads(x) for x in good_lines()]
    lines[1]["message"]["model"] = "claude\u202e-evil"
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    result = cli("report", str(path))
    assert "\u202e" not in result.stdout and "claude<U+202E>-evil" in result.stdout


# --- item 8: a numeric timestamp -------------------------------------------------------------------------------

async def test_a_numeric_timestamp_is_drawn_without_a_crash(tmp_path):
    from bad_inputs.open_app import outcome

    lines = [json.loads(x) for x in good_lines()]
    lines[0]["timestamp"] = 1767225600
    lines[1]["timestamp"] = 1767225600123.5
    lines[2]["timestamp"] = {"not": "a time"}
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    seen = await outcome(path, keys=("G", "3", "1", "W", "enter"))
    assert seen["state"] == "loaded" and seen["running"] and seen["messages"] == 3, seen
