"""`context-inspector [PATH]` (the open command): bad arguments and paths end in one line and exit status 2,
before any screen starts."""

from __future__ import annotations

from inspector.cli import main


def test_bad_policy_estimator_and_window(capsys, tmp_path):
    session = tmp_path / "s.jsonl"
    session.write_text('{"role": "user", "content": "hi"}\n', encoding="utf-8")
    assert main([str(session), "--policy", "nope"]) == 2
    assert "unknown policy 'nope'" in capsys.readouterr().err
    assert main([str(session), "--estimator", "nope"]) == 2
    assert "unknown estimator 'nope'" in capsys.readouterr().err
    assert main([str(session), "--window", "5"]) == 2
    assert "too small" in capsys.readouterr().err


def test_missing_path_and_empty_directory(capsys, tmp_path):
    assert main([str(tmp_path / "missing.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("context-inspector: ") and "no such file or directory" in err and err.count("\n") == 1
    assert main([str(tmp_path)]) == 2
    assert "holds no session" in capsys.readouterr().err
