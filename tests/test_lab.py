"""The lab's harness (tests/agents/lab.py) without any agent: scratch directories, the clean environment, runs
with a timeout, fixtures written whole or not at all, and the secret check that guards them."""

from __future__ import annotations

import json
import sys

import pytest

import lab


def test_scratch_is_fixed_and_fresh(tmp_path):
    first = lab.Scratch.fresh("agent", "scenario", base=tmp_path)
    (first.work / "left-over").write_text("x")
    again = lab.Scratch.fresh("agent", "scenario", base=tmp_path)
    assert again.root == first.root == tmp_path / "agent" / "scenario"
    assert not (again.work / "left-over").exists()
    assert all(d.is_dir() for d in (again.home, again.work, again.tmp, again.config, again.data, again.cache))
    assert again.config == again.home / ".config" and again.data == again.home / ".local" / "share"


def test_agent_env_holds_nothing_inherited(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-api03-" + "R" * 40)
    monkeypatch.setenv("SOMETHING_ELSE", "inherited")
    scratch = lab.Scratch.fresh("agent", "env", base=tmp_path)
    env = lab.agent_env(scratch, {"ANTHROPIC_API_KEY": lab.FAKE_KEY, "ANTHROPIC_BASE_URL": "http://127.0.0.1:1"})
    assert env["ANTHROPIC_API_KEY"] == lab.FAKE_KEY
    assert "SOMETHING_ELSE" not in env
    assert env["HOME"] == str(scratch.home) and env["PWD"] == str(scratch.work)
    assert env["XDG_DATA_HOME"].startswith(str(scratch.root)) and env["TMPDIR"] == str(scratch.tmp)


def test_run_records_the_command_and_kills_on_timeout(tmp_path):
    scratch = lab.Scratch.fresh("agent", "run", base=tmp_path)
    capture = lab.Capture(scratch)
    env = lab.agent_env(scratch, {})
    done = capture.run([sys.executable, "-c", "import os; print(os.getcwd()); print(os.environ['HOME'])"], env)
    assert done.stdout.split() == [str(scratch.work), str(scratch.home)]
    with pytest.raises(lab.LabError, match="exited 3"):
        capture.run([sys.executable, "-c", "raise SystemExit(3)"], env)
    with pytest.raises(lab.LabError, match="took more than"):
        capture.run([sys.executable, "-c", "import time; time.sleep(30)"], env, timeout=0.5)
    assert capture.runs[0].to_json(scratch)["argv"][0] == capture.runs[0].argv[0].rsplit("/", 1)[-1]


def _capture(tmp_path, text: str) -> lab.Capture:
    scratch = lab.Scratch.fresh("agent", "fixture", base=tmp_path / "lab")
    wrote = scratch.home / ".agent" / "session.jsonl"
    wrote.parent.mkdir(parents=True)
    wrote.write_text(text)
    capture = lab.Capture(scratch)
    capture.keep(wrote)
    capture.server_log = [{"method": "POST", "path": "/v1/x", "body": {"n": 1}, "response": {"status": 200}}]
    return capture


def test_fixture_round_trip(tmp_path):
    root = tmp_path / "fixtures"
    target = lab.write_fixture("agent", "1.0", "fixture", _capture(tmp_path, '{"a": 1}\n'), "about it", root=root)
    fixture = lab.load_fixture("agent", "1.0", "fixture", root=root)
    assert fixture.root == target == root / "agent-1.0" / "fixture"
    assert fixture.server_log[0]["body"] == {"n": 1}
    assert fixture.meta["files"] == ["home/.agent/session.jsonl"] and fixture.meta["about"] == "about it"
    assert [p.read_text() for p in fixture.files("home/.agent/*.jsonl")] == ['{"a": 1}\n']
    assert lab.fixtures("agent", "1.0", root=root) == ["fixture"]
    lab.write_fixture("agent", "1.0", "fixture", _capture(tmp_path, '{"a": 2}\n'), root=root)  # replaced whole
    assert (target / "home/.agent/session.jsonl").read_text() == '{"a": 2}\n'


@pytest.mark.parametrize("leak", ["key={fake}", "sk-ant-api03-" + "Q" * 40, "{env}"])
def test_a_fixture_with_a_secret_is_not_written(tmp_path, monkeypatch, leak):
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-5f0e1d2c3b4a")
    root = tmp_path / "fixtures"
    lab.write_fixture("agent", "1.0", "fixture", _capture(tmp_path, "clean\n"), root=root)
    text = json.dumps({"t": leak.format(fake=lab.FAKE_KEY, env="tok-5f0e1d2c3b4a")})
    with pytest.raises(lab.LabError, match="secrets in it") as error:
        lab.write_fixture("agent", "1.0", "fixture", _capture(tmp_path, text), root=root)
    assert "tok-5f0e1d2c3b4a" not in str(error.value) and lab.FAKE_KEY not in str(error.value)
    assert (root / "agent-1.0" / "fixture" / "home/.agent/session.jsonl").read_text() == "clean\n"  # old one kept


def test_keep_refuses_files_outside_the_scratch_directory(tmp_path):
    capture = lab.Capture(lab.Scratch.fresh("agent", "keep", base=tmp_path))
    with pytest.raises(lab.LabError, match="outside"):
        capture.keep(tmp_path / "elsewhere.jsonl")
