"""The agent's tools and permissions, without a model: each tool's results and errors, bash limits, confinement."""

import threading
import time
from pathlib import Path

import pytest

from inspector.core.agent.cancel import Cancel
from inspector.core.agent.events import Decision
from inspector.core.agent.permissions import Permissions, denial_text, headless
from inspector.core.agent.tools import TOOLS, TOOLS_BY_NAME, ToolContext, cap, run_tool


@pytest.fixture
def ctx(tmp_path) -> ToolContext:
    return ToolContext(tmp_path.resolve(), output_cap=2000)


def call(ctx, name, **args):
    return run_tool(TOOLS_BY_NAME[name], args, ctx)


def test_schemas_are_valid_messages_api_tools():
    for tool in TOOLS:
        schema = tool.schema()
        assert set(schema) == {"name", "description", "input_schema"}
        assert schema["input_schema"]["type"] == "object"
        assert set(schema["input_schema"]["required"]) <= set(schema["input_schema"]["properties"])
    assert {t.name for t in TOOLS if t.read_only} == {"read_file", "grep", "glob"}


def test_read_file_pages_with_line_numbers(ctx):
    (ctx.cwd / "f.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    text, err = call(ctx, "read_file", path="f.txt", offset=3, limit=2)
    assert not err and text.splitlines() == ["3\tline 3", "4\tline 4", "[6 more lines: read on with offset=5]"]
    assert call(ctx, "read_file", path="f.txt", offset=20) == (
        "f.txt has only 10 lines; offset 20 is past the end", True)
    assert call(ctx, "read_file", path="f.txt", offset=0)[1]


@pytest.mark.parametrize("setup,expected", [
    (lambda d: None, "no such file"),
    (lambda d: (d / "x").mkdir(), "is a directory"),
    (lambda d: (d / "x").write_bytes(b"\x00\x01binary"), "binary file"),
])
def test_read_file_errors(ctx, setup, expected):
    setup(ctx.cwd)
    text, err = call(ctx, "read_file", path="x")
    assert err and expected in text


def test_read_file_caps_long_lines_and_output(ctx):
    (ctx.cwd / "wide.txt").write_text("y" * 5000 + "\n" + "z\n" * 3000)
    text, err = call(ctx, "read_file", path="wide.txt")
    assert not err and len(text) <= 2000 + 100 and "characters truncated" in text
    wide = ToolContext(ctx.cwd, output_cap=100_000)
    assert "[... 3000 more characters]" in call(wide, "read_file", path="wide.txt")[0].splitlines()[0]


def test_write_file_creates_and_overwrites(ctx):
    assert call(ctx, "write_file", path="a/b/c.txt", content="one\ntwo") == (
        "Created a/b/c.txt (7 bytes, 2 lines)", False)
    assert call(ctx, "write_file", path="a/b/c.txt", content="x")[0].startswith("Overwrote")
    assert (ctx.cwd / "a/b/c.txt").read_text() == "x"
    assert call(ctx, "write_file", path="a", content="x") == ("a: is a directory", True)
    assert call(ctx, "write_file", path="z")[1]  # content missing


def test_write_and_edit_replace_atomically_keeping_mode_and_links(ctx, monkeypatch):
    import errno
    import os
    import stat

    from inspector.core import atomic

    real = ctx.cwd / "real.sh"
    real.write_text("echo one\n")
    real.chmod(0o751)
    (ctx.cwd / "link.sh").symlink_to("real.sh")
    assert call(ctx, "edit_file", path="link.sh", old_string="one", new_string="two")[1] is False
    assert (ctx.cwd / "link.sh").is_symlink() and real.read_text() == "echo two\n"
    assert stat.S_IMODE(real.stat().st_mode) == 0o751
    assert call(ctx, "write_file", path="new.txt", content="n")[1] is False
    umask = os.umask(0o022)
    os.umask(umask)
    assert stat.S_IMODE((ctx.cwd / "new.txt").stat().st_mode) == 0o666 & ~umask

    def full(fd, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(atomic.os, "write", full)
    for name, args in (("write_file", {"content": "gone"}), ("edit_file", {"old_string": "two", "new_string": "x"})):
        text, err = call(ctx, name, path="real.sh", **args)
        assert err and text == f"cannot write {real}: no space left on device"
    assert real.read_text() == "echo two\n"  # in place, the old content would be gone
    assert sorted(p.name for p in ctx.cwd.iterdir()) == ["link.sh", "new.txt", "real.sh"]  # no temporary file left


def test_edit_file_exact_replacement(ctx):
    f = ctx.cwd / "e.py"
    f.write_text("a = 1\nb = 1\nc = 2\n")
    assert call(ctx, "edit_file", path="e.py", old_string="c = 2", new_string="c = 3") == (
        "Replaced 1 occurrence in e.py", False)
    text, err = call(ctx, "edit_file", path="e.py", old_string=" = 1", new_string=" = 0")
    assert err and "occurs 2 times" in text and f.read_text() == "a = 1\nb = 1\nc = 3\n"
    assert call(ctx, "edit_file", path="e.py", old_string=" = 1", new_string=" = 0", replace_all=True)[0] == (
        "Replaced 2 occurrences in e.py")
    assert f.read_text() == "a = 0\nb = 0\nc = 3\n"
    for old, new, msg in (("nope", "x", "not found"), ("a", "a", "the same"), ("", "x", "empty")):
        text, err = call(ctx, "edit_file", path="e.py", old_string=old, new_string=new)
        assert err and msg in text


def test_bash_output_and_exit_status(ctx):
    assert call(ctx, "bash", command="echo hi; echo err >&2") == ("hi\nerr\n", False)
    assert call(ctx, "bash", command="pwd")[0].strip() == str(ctx.cwd)
    assert call(ctx, "bash", command="cat")[0] == "(no output)"  # stdin is empty, not the terminal
    assert call(ctx, "bash", command="echo bad; exit 3") == ("bad\n\n[exit status 3]", True)


def test_bash_timeout_kills_the_whole_process_group(ctx):
    marker = ctx.cwd / "survived"
    started = time.monotonic()
    text, err = call(ctx, "bash", command=f"(sleep 1; touch {marker}) & sleep 30", timeout=0.3)
    assert time.monotonic() - started < 5
    assert err and "timed out after 0.3 s" in text
    time.sleep(1.3)
    assert not marker.exists()  # the background child died with the command


def test_bash_output_cap_keeps_head_and_tail(ctx):
    text, err = call(ctx, "bash", command="seq 1 200000")
    assert not err and len(text) <= 2000 + 100
    assert text.startswith("1\n2\n3\n") and text.rstrip().endswith("200000")
    assert "truncated" in text


def test_bash_rejects_bad_timeouts(ctx):
    for bad in (0, -1, "10", True):
        assert call(ctx, "bash", command="true", timeout=bad)[1]


def test_bash_cancel_interrupts(tmp_path):
    cancel = Cancel()
    ctx = ToolContext(tmp_path, cancel)
    threading.Timer(0.3, cancel.cancel).start()
    started = time.monotonic()
    text, err = call(ctx, "bash", command="sleep 30")
    assert err and text.startswith("Interrupted") and time.monotonic() - started < 5


def test_grep(ctx):
    (ctx.cwd / "src").mkdir()
    (ctx.cwd / "src" / "a.py").write_text("def foo():\n    return FOO\n")
    (ctx.cwd / "notes.md").write_text("foo in prose\n")
    (ctx.cwd / ".git").mkdir()
    (ctx.cwd / ".git" / "x").write_text("foo\n")
    (ctx.cwd / "blob.bin").write_bytes(b"foo\x00")
    assert call(ctx, "grep", pattern="foo") == ("notes.md:1:foo in prose\nsrc/a.py:1:def foo():", False)
    assert call(ctx, "grep", pattern="foo", glob="*.py", ignore_case=True)[0].splitlines() == [
        "src/a.py:1:def foo():", "src/a.py:2:    return FOO"]
    assert call(ctx, "grep", pattern="foo", path="src", max_results=1, ignore_case=True)[0].endswith("[1 more matches not shown: "
                                                                                "narrow the pattern or the path]")
    assert call(ctx, "grep", pattern="absent") == ("No matches.", False)
    text, err = call(ctx, "grep", pattern="(")
    assert err and "bad regular expression" in text


def test_glob(ctx):
    for p in ("a.py", "pkg/b.py", "pkg/c.txt", "node_modules/d.py"):
        (ctx.cwd / p).parent.mkdir(parents=True, exist_ok=True)
        (ctx.cwd / p).write_text("")
    assert call(ctx, "glob", pattern="**/*.py") == ("a.py\npkg/b.py", False)
    assert call(ctx, "glob", pattern="*.txt", path="pkg") == ("pkg/c.txt", False)
    assert call(ctx, "glob", pattern="*.rs") == ("No files found.", False)
    assert call(ctx, "glob", pattern="../*")[1] and call(ctx, "glob", pattern="/etc/*")[1]


def test_run_tool_wants_an_object():
    assert run_tool(TOOLS_BY_NAME["glob"], "not a dict", ToolContext(Path.cwd())) == (
        "tool input must be a JSON object", True)


def test_cap():
    assert cap("short", 10) == "short"
    capped = cap("a" * 50 + "b" * 50, 30)
    assert capped.startswith("a" * 20) and capped.endswith("b" * 10) and "70 characters truncated" in capped


# --- permissions and confinement ------------------------------------------------------------------------------

def ask(perms, ctx, name, **args):
    return perms.check(TOOLS_BY_NAME[name], args, ctx, "t1")


def test_read_only_tools_run_freely_inside(ctx):
    perms = Permissions([ctx.cwd])
    assert ask(perms, ctx, "read_file", path="x") is None
    assert ask(perms, ctx, "grep", pattern="x") is None
    assert ask(perms, ctx, "glob", pattern="*", path="sub/dir") is None


def test_writes_and_shell_ask_and_allow_session_sticks(ctx):
    perms = Permissions([ctx.cwd])
    asked = ask(perms, ctx, "write_file", path="a", content="")
    assert asked.reason == "write_file changes files" and asked.directory is None
    assert ask(perms, ctx, "bash", command="ls").reason == "bash runs a shell command"
    asked.reply(Decision.ALLOW_ONCE)
    assert perms.decide(asked) is Decision.ALLOW_ONCE
    again = ask(perms, ctx, "write_file", path="b", content="")
    assert again is not None
    again.reply(Decision.ALLOW_SESSION)
    perms.decide(again)
    assert ask(perms, ctx, "write_file", path="c", content="") is None
    assert ask(perms, ctx, "edit_file", path="c", old_string="a", new_string="b") is not None  # per tool


def test_paths_outside_the_working_directory_need_permission(ctx, tmp_path_factory):
    outside = tmp_path_factory.mktemp("elsewhere")
    (outside / "deep").mkdir()
    perms = Permissions([ctx.cwd])
    for path in (str(outside / "f"), "../" + outside.name + "/f", "~/x", "/etc/passwd"):
        asked = ask(perms, ctx, "read_file", path=path)
        assert asked is not None and "outside the working directory" in asked.reason, path
    link = ctx.cwd / "link"
    link.symlink_to(outside)
    asked = ask(perms, ctx, "read_file", path="link/f")  # a symlink does not smuggle a path inside
    assert asked is not None and asked.directory == str(outside)
    asked.reply(Decision.ALLOW_SESSION)
    perms.decide(asked)
    assert ask(perms, ctx, "read_file", path=str(outside / "deep" / "g")) is None
    assert ask(perms, ctx, "grep", pattern="x", path=str(outside)) is not None  # the grant is per tool
    assert ask(perms, ctx, "read_file", path="/etc/passwd") is not None


def test_extra_roots_and_unanswered_denies(ctx, tmp_path_factory):
    extra = tmp_path_factory.mktemp("extra")
    perms = Permissions([ctx.cwd, extra])
    assert ask(perms, ctx, "read_file", path=str(extra / "f")) is None
    asked = ask(perms, ctx, "read_file", path="/etc/hosts")
    assert perms.decide(asked) is Decision.DENY
    assert denial_text(asked).startswith("Permission denied: /etc/hosts is outside the working directory")


def test_headless_policy(ctx):
    allow = Permissions([ctx.cwd], auto=headless(True))
    deny = Permissions([ctx.cwd], auto=headless(False))
    write = dict(path="a", content="")
    assert allow.decide(ask(allow, ctx, "write_file", **write)) is Decision.ALLOW_ONCE
    assert deny.decide(ask(deny, ctx, "write_file", **write)) is Decision.DENY
    assert allow.decide(ask(allow, ctx, "read_file", path="/etc/hosts")) is Decision.DENY


def test_unusable_input_is_an_error_result_not_a_crash(ctx):
    perms = Permissions([ctx.cwd])
    assert ask(perms, ctx, "read_file", path="a\0b") is None  # nothing to confine: the tool reports it
    assert call(ctx, "read_file", path="a\0b") == ("a path cannot contain a NUL character", True)
    assert call(ctx, "read_file", path=7) == ("'path' must be a string", True)
    assert call(ctx, "read_file", path="x", limit="ten") == ("'limit' must be an integer >= 1", True)


def test_read_file_streams_lines(ctx):
    (ctx.cwd / "crlf.txt").write_bytes(b"one\r\ntwo\r\n\r\nfour")
    assert call(ctx, "read_file", path="crlf.txt") == ("1\tone\n2\ttwo\n3\t\n4\tfour", False)
    (ctx.cwd / "empty.txt").write_text("")
    assert call(ctx, "read_file", path="empty.txt") == ("(empty.txt is empty)", False)


def test_edit_file_keeps_crlf_and_refuses_non_utf8(ctx):
    crlf = ctx.cwd / "win.txt"
    crlf.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    assert call(ctx, "edit_file", path="win.txt", old_string="one\ntwo", new_string="1\n2") == (
        "Replaced 1 occurrence in win.txt", False)
    assert crlf.read_bytes() == b"1\r\n2\r\nthree\r\n"
    latin = ctx.cwd / "latin.txt"
    latin.write_bytes(b"caf\xe9 au lait\n")
    text, err = call(ctx, "edit_file", path="latin.txt", old_string="lait", new_string="milk")
    assert err and "not valid UTF-8" in text and latin.read_bytes() == b"caf\xe9 au lait\n"
