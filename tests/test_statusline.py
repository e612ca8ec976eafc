"""`context-inspector statusline`: Claude Code's real status-line input, the line, the cache of where the last call
stopped (a resumed accounting gives exactly a fresh one's figures, line by line on real transcripts; a compacted
Claude Code session's checkpoint at its last boundary, moved by a compaction that arrives, dropped by a rewind to
before it), a cache that is corrupt, foreign or of another version ignored, `--install`, `--session` for Codex."""

from __future__ import annotations

import json
import os
import pickle
import shutil
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.commands.statusline import DEFAULT_FORMAT, render
from inspector.core import statusline as sl
from inspector.core.cost import session_cost
from inspector.core.formats import load
from inspector.core.statusline import Cache, Settings, status

HERE = Path(__file__).parent
FIXTURE = HERE / "fixtures" / "statusline" / "claude-code-2.1.332"
AGENTS = HERE / "fixtures" / "agents"
GROWN = [  # real transcripts: compactions (auto, manual, micro), a model switch, a resume, parallel tools, Codex
    FIXTURE / "session.jsonl",
    HERE / "corpus" / "claude-code-short.jsonl",
    *sorted((AGENTS / "claude-code-2.1.332").glob("*/home/.claude/projects/*/*.jsonl")),
    *sorted((AGENTS / "codex-0.171.0").glob("*/home/.codex/sessions/*/*/*/*.jsonl"))[:3],
]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    directory = tmp_path / "cache"
    monkeypatch.setenv("CONTEXT_INSPECTOR_CACHE", str(directory))
    return directory


def _input(n: int, transcript: Path) -> str:
    given = json.loads((FIXTURE / f"input-{n}.json").read_text())
    given["transcript_path"] = str(transcript)
    return json.dumps(given)


def _run(capsys, monkeypatch, argv: list[str], stdin: str | None = None) -> tuple[int, str, str]:
    if stdin is not None:
        import io

        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
    monkeypatch.setattr("inspector.commands.statusline._detach_stdout", lambda: None)
    code = main(["statusline", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_claude_codes_input_gives_the_reports_figures(tmp_path, cache, capsys, monkeypatch):
    transcript = tmp_path / "s.jsonl"
    shutil.copy(FIXTURE / "session.jsonl", transcript)
    code, out, _ = _run(capsys, monkeypatch, ["--json"], _input(6, transcript))
    assert code == 0
    figures = json.loads(out)
    assert main(["report", str(transcript), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert figures["used"] == report["current"]["used"] == report["totals"]["current"]
    assert figures["window"] == report["window"]["context_window"] == 1_000_000  # as Claude Code states it
    assert figures["to_autocompact"] == report["current"]["free"]
    assert figures["autocompact"] == report["window"]["thresholds"]["autocompact"]
    assert figures["compactions"] == len(report["compactions"]) == 1
    assert figures["cost_usd"] == pytest.approx(report["cost"]["total_usd"], abs=1e-6)
    assert figures["agent_cost_usd"] == pytest.approx(0.1168387)
    assert figures["measured"] is True and figures["model"] == "claude-sonnet-5-5"
    code, line, _ = _run(capsys, monkeypatch, [], _input(6, transcript))
    assert line.count("\n") == 1 and "1 compaction" in line and "(measured)" in line and "\x1b" not in line


def test_the_line_before_the_first_request(tmp_path, cache, capsys, monkeypatch):
    code, out, _ = _run(capsys, monkeypatch, [], _input(1, tmp_path / "not-written-yet.jsonl"))
    assert (code, out) == (0, "Opus 5.5 · no request yet\n")


@pytest.mark.parametrize("stdin, says", [("", "not JSON"), ("[1]", "not a JSON object"), ("{}", "no transcript_path"),
                                         ('{"transcript_path": 3}', "no transcript_path")])
def test_bad_input_is_said_on_the_line(cache, capsys, monkeypatch, stdin, says):
    code, out, _ = _run(capsys, monkeypatch, [], stdin)
    assert code == 0 and says in out and out.count("\n") == 1


def test_a_session_that_cannot_be_read(tmp_path, cache, capsys, monkeypatch):
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"\x00\x01 not a session\n")
    code, out, _ = _run(capsys, monkeypatch, [], json.dumps({"transcript_path": str(bad)}))
    assert code == 0 and "bad.jsonl" in out and out.count("\n") == 1
    code, out, err = _run(capsys, monkeypatch, ["--session", str(tmp_path / "missing.jsonl")])
    assert code == 2 and "no such file" in err and "Traceback" not in err


def test_format_fields_colours_only_when_asked(tmp_path, cache, capsys, monkeypatch):
    session = str(HERE / "corpus" / "claude-code-manual-compact.jsonl")
    code, out, _ = _run(capsys, monkeypatch, ["--session", session, "--format", "{used_n}|{window_n}|{hit}|{state}"])
    assert out == "102,484|200,000|99%|ok\n"
    code, out, _ = _run(capsys, monkeypatch, ["--session", session, "--format", "{percent}", "--color"])
    assert out == "\x1b[32m51.2%\x1b[0m\n"
    code, out, err = _run(capsys, monkeypatch, ["--session", session, "--format", "{nope}"])
    assert code == 2 and "unknown field {nope}" in err


def test_session_text_in_the_line_is_inert():
    figures = {"used": 1, "window": 2, "percent": 50.0, "to_autocompact": 1, "autocompact": 2, "warning": 1,
               "measured": True, "compactions": 0, "microcompactions": 0, "cost_usd": None, "agent_cost_usd": None,
               "hit_ratio": None, "model": "evil\x1b[2J\nmodel", "policy": "claude-code", "requests": 1,
               "messages": 2, "state": "ok"}
    line = render(figures, DEFAULT_FORMAT)
    assert "\x1b" not in line and "\n" not in line and "evil?[2J?model" in line


def test_install_prints_the_snippet_and_edits_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    code, out, err = _run(capsys, monkeypatch, ["--install", "--color"])
    snippet = json.loads(out)["statusLine"]
    assert snippet["type"] == "command" and snippet["command"].endswith("statusline --color")
    assert "nothing was edited" in err and list(tmp_path.iterdir()) == []


def test_codex_rollouts_with_session(cache, capsys, monkeypatch):
    rollout = next((AGENTS / "codex-0.171.0").glob("auto-compact/home/.codex/sessions/*/*/*/*.jsonl"))
    code, out, _ = _run(capsys, monkeypatch, ["--session", str(rollout), "--json"])
    figures = json.loads(out)
    assert figures["format"] == "codex" and figures["policy"] == "codex" and figures["compactions"] >= 1
    assert figures["cost_usd"] == pytest.approx(session_cost(load(rollout)).total_usd, abs=1e-5)  # gpt-5.5's prices


def _fresh(path: Path) -> sl.StatusFigures:
    return status(path, use_cache=False).figures


@pytest.mark.parametrize("source", GROWN, ids=lambda p: p.parent.name[-24:] + "/" + p.name[:12])
def test_a_resumed_cache_gives_a_fresh_accountings_figures(tmp_path, source):
    """The file grows line by line (a response's lines one at a time, as Claude Code writes them); after every
    line the cached call's figures equal a fresh read's, and from the second call on it resumed."""
    lines = source.read_bytes().splitlines(keepends=True)
    live = tmp_path / source.name
    live.write_bytes(b"")
    directory = tmp_path / "cache"
    hows = []
    step = max(1, len(lines) // 60)  # at most ~60 calls a file
    for end in list(range(1, len(lines), step)) + [len(lines)]:
        live.write_bytes(b"".join(lines[:end]))
        try:
            expected = _fresh(live)
        except Exception as exc:  # too little of the file to be a session yet: the cached call says the same
            with pytest.raises(type(exc)):
                status(live, directory=directory)
            continue
        outcome = status(live, directory=directory)
        assert outcome.figures == expected, (end, outcome.how)
        hows.append(outcome.how)
        outcome.finish()
        again = status(live, directory=directory)
        assert again.how == "cached" and again.figures == expected
    assert hows.count("resumed") >= len(hows) // 2, hows


def _report(path: Path, capsys) -> dict:
    capsys.readouterr()
    assert main(["report", str(path), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("source", [
    HERE / "corpus" / "claude-code-manual-compact.jsonl", GROWN[0],
    *(AGENTS / "codex-0.171.0").glob("auto-compact/home/.codex/sessions/*/*/*/*.jsonl")], ids=lambda p: p.name[:24])
def test_resumed_figures_are_the_reports_after_appends_and_compactions(tmp_path, capsys, source):
    """Turn by turn through the cache (each call resuming the last), the figures the line shows equal what `report
    --json` states of the same file: after each compaction appears and at the end."""
    lines = source.read_bytes().splitlines(keepends=True)
    live = tmp_path / source.name
    directory = tmp_path / "cache"
    cuts = sorted({*range(len(lines) // 3, len(lines), max(1, len(lines) // 12)), len(lines)})
    checked, compactions = 0, -1
    for end in cuts:
        live.write_bytes(b"".join(lines[:end]))
        outcome = status(live, directory=directory)
        outcome.finish()
        f = outcome.figures
        if f.compactions == compactions and end != len(lines):
            continue
        compactions = f.compactions
        if checked:
            assert outcome.how == "resumed", end
        r = _report(live, capsys)
        assert (f.used, f.to_autocompact, f.percent) == (r["current"]["used"], r["current"]["free"],
                                                         r["current"]["percent"])
        assert (f.window, f.policy, f.model) == (r["window"]["context_window"], r["window"]["policy"],
                                                 r["window"]["model"])
        assert (f.autocompact, f.warning) == (r["window"]["thresholds"]["autocompact"],
                                              r["window"]["thresholds"]["warning"])
        assert (f.compactions, f.requests, f.messages) == (len(r["compactions"]), len(r["requests"]),
                                                           len(r["messages"]))
        assert f.cost_usd == pytest.approx(r["cost"]["total_usd"], abs=1e-6)  # None == None where unpriced
        assert f.hit_ratio == pytest.approx(r["cache"]["hit_ratio"], abs=1e-6)
        if f.format == "claude-code" and end == len(lines):  # a checkpoint at the last boundary, once its window
            assert _checkpoint(directory, live) is not None  # has usage (these end with requests after it)
        checked += 1
    assert checked >= 2 and compactions >= 1


def test_a_partial_last_line_then_its_end(tmp_path):
    source = FIXTURE / "session.jsonl"
    data = source.read_bytes()
    cut = data.rfind(b"\n", 0, len(data) // 2) + 40  # in the middle of a line
    live = tmp_path / "s.jsonl"
    live.write_bytes(data[:cut])
    directory = tmp_path / "cache"
    first = status(live, directory=directory)
    first.finish()
    live.write_bytes(data)
    outcome = status(live, directory=directory)
    assert outcome.how == "resumed" and outcome.figures == _fresh(live)


def test_a_rewritten_file_is_read_afresh(tmp_path):
    a, b = FIXTURE / "session.jsonl", HERE / "corpus" / "claude-code-short.jsonl"
    live = tmp_path / "s.jsonl"
    shutil.copy(a, live)
    directory = tmp_path / "cache"
    status(live, directory=directory).finish()
    live.write_bytes(b.read_bytes() * 3)  # another content, larger: an append would not explain it
    outcome = status(live, directory=directory)
    assert outcome.figures == _fresh(live)


@pytest.mark.parametrize("damage", ["garbage", "truncated", "version", "other-path", "world-writable"])
def test_a_bad_cache_is_ignored(tmp_path, damage):
    source = FIXTURE / "session.jsonl"
    data = source.read_bytes()
    live = tmp_path / "s.jsonl"
    live.write_bytes(data[:len(data) // 2].rsplit(b"\n", 1)[0] + b"\n")
    directory = tmp_path / "cache"
    status(live, directory=directory).finish()
    cache = Cache(directory, live.resolve(), Settings())
    state = cache.state_file.read_bytes()
    if damage == "garbage":
        cache.state_file.write_bytes(b"\x80\x05garbage")
        cache.figures_file.write_text("{not json")
    elif damage == "truncated":
        cache.state_file.write_bytes(state[:len(state) // 2])
    elif damage == "version":
        _, path, *kept = pickle.loads(state)
        cache.state_file.write_bytes(pickle.dumps((sl.VERSION + 1, path, *kept)))
    elif damage == "other-path":
        _, _, *kept = pickle.loads(state)
        cache.state_file.write_bytes(pickle.dumps((sl.VERSION, "/elsewhere.jsonl", *kept)))
    else:
        os.chmod(cache.state_file, 0o666)
    assert cache.state() is None
    live.write_bytes(data)
    outcome = status(live, directory=directory)
    assert outcome.how == "fresh" and outcome.figures == _fresh(live)


def test_the_cache_keeps_a_few_sessions(tmp_path):
    directory = tmp_path / "cache"
    for k in range(sl.KEEP + 3):
        live = tmp_path / f"s{k}.jsonl"
        shutil.copy(HERE / "corpus" / "claude-code-short.jsonl", live)
        status(live, directory=directory).finish()
    assert len(list(directory.glob("*.json"))) == sl.KEEP
    assert oct(directory.stat().st_mode & 0o777) == "0o700"
    assert all(oct(p.stat().st_mode & 0o777) == "0o600" for p in directory.iterdir())


COMPACTED = HERE / "corpus" / "claude-code-manual-compact.jsonl"  # a real session with one compaction


def _tiles(n: int) -> list[bytes]:
    """The lines of `n` copies of COMPACTED chained into one session (fresh ids per copy, as
    benchmarks/generate_large_session.py tiles it): a compaction every ~2.7 MB."""
    import importlib.util
    import re

    spec = importlib.util.spec_from_file_location("gen", HERE.parent / "benchmarks" / "generate_large_session.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    corpus, out, last = COMPACTED.read_bytes().splitlines(), [], None
    for tile in range(n):
        for raw in corpus:
            line = gen.fresh_ids(raw, tile)
            if last and b'"parentUuid":null' in line and b"compact_boundary" not in line:
                line = line.replace(b'"parentUuid":null', b'"parentUuid":"%s"' % last, 1)
            out.append(line + b"\n")
        last = [m.group(1) for x in out[-40:] if (m := re.search(rb'"uuid":"([^"]+)"', x))][-1]
    return out


def _checkpoint(directory: Path, live: Path) -> sl.Before | None:
    state = Cache(directory, live.resolve(), Settings()).state()
    assert state is not None
    return state[0]


def _user_line(parent: str, text: str) -> bytes:
    import uuid

    return json.dumps({"parentUuid": parent, "isSidechain": False, "type": "user", "uuid": str(uuid.uuid4()),
                       "sessionId": "s", "timestamp": "2026-12-01T10:00:00Z", "cwd": "/home/USER",
                       "version": "2.1.39", "message": {"role": "user", "content": text}}).encode() + b"\n"


def test_a_checkpoint_keeps_the_state_the_size_of_the_window(tmp_path):
    """A compacted Claude Code session's state is a checkpoint at its last boundary: after five compacted tiles it
    is no larger than after one (plus each earlier request's cost), and a call after a turn resumes from it with
    a fresh read's figures."""
    sizes = {}
    for n in (1, 5):
        live, directory = tmp_path / f"s{n}.jsonl", tmp_path / f"cache{n}"
        live.write_bytes(b"".join(_tiles(n)))
        status(live, directory=directory).finish()
        before = _checkpoint(directory, live)
        assert before is not None and before.offset > 0 and before.compactions == n - 1
        sizes[n] = Cache(directory, live.resolve(), Settings()).state_file.stat().st_size
        with open(live, "ab") as f:
            f.write(_user_line(json.loads(live.read_bytes().splitlines()[-1])["uuid"], "one more thing"))
        outcome = status(live, directory=directory)
        assert outcome.how == "resumed" and outcome.figures == _fresh(live)
        assert outcome.figures.compactions == n
    assert sizes[5] <= sizes[1] + 32_000, sizes  # 4 tiles more would be ~4 x 0.4 MB with the whole state


def test_a_compaction_in_an_append_moves_the_checkpoint(tmp_path, capsys):
    """Two tiles: the first call stops before the second tile's compaction; the next call reads an append that
    holds it, resumes from the first checkpoint, gives the report's figures and moves the checkpoint to it."""
    lines = _tiles(2)
    boundaries = [i for i, line in enumerate(lines) if b"compact_boundary" in line]
    assert len(boundaries) == 2
    live, directory = tmp_path / "s.jsonl", tmp_path / "cache"
    live.write_bytes(b"".join(lines[:boundaries[1] - 3]))
    status(live, directory=directory).finish()
    first = _checkpoint(directory, live)
    assert first is not None and first.offset == sum(map(len, lines[:boundaries[0]]))
    live.write_bytes(b"".join(lines))
    outcome = status(live, directory=directory)
    assert outcome.how == "resumed" and outcome.figures == _fresh(live)
    outcome.finish()
    moved = _checkpoint(directory, live)
    assert moved is not None and moved.offset == sum(map(len, lines[:boundaries[1]]))
    f, r = outcome.figures, _report(live, capsys)
    assert (f.used, f.compactions, f.requests, f.messages) == (r["current"]["used"], len(r["compactions"]),
                                                               len(r["requests"]), len(r["messages"]))
    assert f.cost_usd == pytest.approx(r["cost"]["total_usd"], abs=1e-6)
    assert f.hit_ratio == pytest.approx(r["cache"]["hit_ratio"], abs=1e-6)
    with open(live, "ab") as fh:  # and on from the moved checkpoint
        fh.write(_user_line(json.loads(lines[-1])["uuid"], "and then"))
    again = status(live, directory=directory)
    assert again.how == "resumed" and again.figures == _fresh(live)


def test_a_rewind_to_before_the_boundary_is_read_afresh(tmp_path):
    """An entry whose parent lies before the checkpoint's boundary (a rewind there) cannot be followed from the
    window's part: the call reads the whole file, and gives its figures."""
    lines = COMPACTED.read_bytes().splitlines(keepends=True)
    boundary = next(i for i, line in enumerate(lines) if b"compact_boundary" in line)
    early = next(json.loads(line)["uuid"] for line in lines[boundary // 2:] if b'"type":"user"' in line)
    live, directory = tmp_path / "s.jsonl", tmp_path / "cache"
    live.write_bytes(b"".join(lines))
    status(live, directory=directory).finish()
    assert _checkpoint(directory, live) is not None
    with open(live, "ab") as f:
        f.write(_user_line(early, "go back to before the summary"))
    outcome, fresh = status(live, directory=directory), _fresh(live)
    assert outcome.how == "fresh" and outcome.figures == fresh
    assert fresh.compactions == 0  # the rewound branch runs before the compaction
