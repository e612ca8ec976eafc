"""Codex scenarios for the lab: the real `codex` (pinned in install.py) headless against the scripted Responses
server (tests/mock_api/openai_responses.py).

    python tests/agents/regenerate.py codex [SCENARIO ...]

Each scenario gets `$HOME/.codex/config.toml` naming the local server as its only provider (`model_provider =
"mock"`, `wire_api = "responses"`, `env_key = "MOCK_API_KEY"`, the fake key in that variable) and keeps the
rollout Codex wrote (`home/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`) with the server's log. Headless means
`codex exec --skip-git-repo-check -s danger-full-access PROMPT` (later steps `... resume --last PROMPT`); a manual
compaction goes through `codex app-server` (JSON-RPC over stdio: initialize, thread/resume, thread/compact/start),
since `exec` sends `/compact` to the model as text.

Usage is the real o200k_base size of each request as sent (the server's `render_request`), never scripted, so the
fixtures measure estimation honestly; the automatic compaction comes from a small `model_context_window` in the
config, not from inflated figures.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests/: the mock_api package

import install  # noqa: E402
import lab  # noqa: E402
from lab import FAKE_KEY, Capture, LabError, Scratch, agent_env  # noqa: E402
from mock_api.openai_responses import (  # noqa: E402
    MODEL, ResponsesServer, Turn, custom_call, exec_command, reasoning, text)

AGENT = "codex"
VERSION = install.PINS[AGENT].version
TIMEOUT = 180  # seconds per run of codex; each takes about a second here


@dataclass
class Exec:
    """One `codex exec` run (`resume`: continue the newest session) and the turns the server answers it with."""

    prompt: str
    turns: list[Turn]
    resume: bool = False
    compactions: list[Turn] = field(default_factory=list)


@dataclass
class Compact:
    """A manual compaction of the newest session through the app server, answered by `summary`."""

    summary: Turn


@dataclass
class Plan:
    """A scenario's script: the files of its working directory, its steps, more config.toml lines."""

    name: str
    about: str
    steps: list[Exec | Compact]
    files: dict[str, str] = field(default_factory=dict)
    config: str = ""


def _big(lines: int) -> str:
    return "".join(f"{i:04d}  the quick brown fox jumps over the lazy dog; pack my box with five dozen jugs\n"
                   for i in range(lines))


NOTES = "The release moved to Thursday.\nBring the signed contracts.\n"
ROOT = lab.REPO


def _mixed_files() -> dict[str, str]:
    """Real text of several kinds for the long session: this project's own code, docs and JSON, plus
    multilingual prose and a log, so that what the session adds outweighs Codex's ~7k-token prefix."""
    files = {name: (ROOT / path).read_text() for name, path in [
        ("limits.py", "inspector/core/limits.py"), ("report.py", "inspector/core/report.py"),
        ("README.md", "README.md"), ("request.json", "tests/fixtures/formats/anthropic-request.json"),
        ("report-json.md", "docs/report-json.md")]}
    files["notes-multilingual.txt"] = "".join(
        f"{i}. 会議は木曜日に移動しました。請簽署合約。회의가 목요일로 옮겨졌습니다. Встреча перенесена на четверг. "
        f"Η συνάντηση μετακινήθηκε. الاجتماع نُقل إلى يوم الخميس → ✓\n" for i in range(60))
    files["build.log"] = "".join(
        f"2026-12-01T10:{i // 60:02d}:{i % 60:02d}Z INFO worker[{i % 7}] compiled module_{i}.o in {i * 13 % 997} ms "
        f"(cache {'hit' if i % 3 else 'miss'}, {i * 37 % 4096} KiB)\n" for i in range(180))
    return files
PATCH = ("*** Begin Patch\n*** Update File: notes.txt\n@@\n-The release moved to Thursday.\n"
         "+The release moved to Friday.\n*** End Patch\n")

PLANS: dict[str, Plan] = {s.name: s for s in [
    Plan("read-file", "read a file with the shell tool and answer", [
        Exec("What does notes.txt say?", [
            Turn(exec_command("cat notes.txt")),
            Turn(text("It says the release moved to Thursday and to bring the signed contracts."))])],
        files={"notes.txt": NOTES}),
    Plan("edit-file", "edit a file with apply_patch (a freeform custom tool)", [
        Exec("Move the release in notes.txt to Friday.", [
            Turn(reasoning("Editing the date", tokens=90), custom_call("apply_patch", PATCH)),
            Turn(text("Done: notes.txt now says Friday."))])],
        files={"notes.txt": NOTES}),
    Plan("shell", "run shell commands and read their output", [
        Exec("How many lines are in the Python files here?", [
            Turn(exec_command("wc -l *.py")),
            Turn(exec_command("ls -la", workdir=".")),
            Turn(text("There are 7 lines of Python in two files."))])],
        files={"a.py": "import os\nprint(os.getcwd())\n", "b.py": "x = 1\ny = 2\nz = x + y\nprint(z)\n\n"}),
    Plan("parallel-tools", "two tool calls in one response, with reasoning before them", [
        Exec("Compare a.txt and b.txt.", [
            Turn(reasoning("Reading both files", "They are short", tokens=150),
                 exec_command("cat a.txt"), exec_command("cat b.txt")),
            Turn(text("a.txt says alpha, b.txt says beta: they differ."))])],
        files={"a.txt": "alpha\n", "b.txt": "beta\n"}),
    Plan("reasoning", "reasoning items carried through a turn's later requests", [
        Exec("Is 221 prime? Check with the shell.", [
            Turn(reasoning("Thinking about factors", tokens=400), exec_command("factor 221")),
            Turn(reasoning("13 times 17", tokens=250), exec_command("python3 -c 'print(13*17)'")),
            Turn(reasoning("Confirmed", tokens=60), text("No: 221 = 13 x 17."))])]),
    Plan("resume", "a session continued twice with `codex exec resume --last`", [
        Exec("What does notes.txt say?", [Turn(exec_command("cat notes.txt")),
                                          Turn(text("The release moved to Thursday."))]),
        Exec("And what should I bring?", [Turn(reasoning("From the file", tokens=40),
                                               text("The signed contracts."))], resume=True),
        Exec("Thanks. Count its lines.", [Turn(exec_command("wc -l notes.txt")),
                                          Turn(text("It has 2 lines."))], resume=True)],
        files={"notes.txt": NOTES}),
    Plan("manual-compact", "a manual compaction (app server thread/compact/start), then one more turn", [
        Exec("Read notes.txt.", [Turn(exec_command("cat notes.txt")),
                                 Turn(text("It says the release moved to Thursday."))]),
        Compact(Turn(text("The user asked for notes.txt; it says the release moved to Thursday and to bring "
                          "the signed contracts. Nothing is pending."))),
        Exec("What day was it again?", [Turn(text("Thursday."))], resume=True)],
        files={"notes.txt": NOTES}),
    Plan("long-session", "a longer session whose files (code, docs, JSON, CJK and other scripts, a log) "
             "outweigh the prefix, over two turns", [
        Exec("Review the files here one by one and summarise each.", [
            Turn(reasoning("Listing first", tokens=120), exec_command("ls -la")),
            Turn(exec_command("cat limits.py")),
            Turn(reasoning("Thresholds and windows", tokens=300), exec_command("cat report.py")),
            Turn(exec_command("cat README.md")),
            Turn(exec_command("cat request.json"), exec_command("cat report-json.md")),
            Turn(reasoning("Mixed scripts next", tokens=200), exec_command("cat notes-multilingual.txt")),
            Turn(exec_command("cat build.log")),
            Turn(text("limits.py holds the window policies; report.py formats CLI lines; README.md is the user guide; "
                      "request.json is a captured Messages request; report-json.md documents report --json; the "
                      "multilingual notes repeat one meeting notice in nine scripts; build.log is a compile log."))]),
        Exec("Which of them is the longest? Check with wc.", [
            Turn(exec_command("wc -c *")),
            Turn(reasoning("Comparing sizes", tokens=80), text("README.md is the longest file."))], resume=True)],
        files=_mixed_files()),
    Plan("auto-compact", "a tool output past the auto-compact limit: Codex summarises mid-turn and goes on", [
        Exec("Read big.txt and tell me its last line.", [
            Turn(exec_command("cat big.txt")),
            Turn(exec_command("tail -n 1 big.txt")),
            Turn(text("The last line is number 0299."))],
            compactions=[Turn(text("The user wants the last line of big.txt. I printed the whole file (300 "
                                   "numbered lines); the next step is to print its last line."))])],
        files={"big.txt": _big(300)},
        config="model_context_window = 16000\nmodel_auto_compact_token_limit = 12000\n"),
    # The limit in the project's .codex/config.toml, which Codex reads for a project the user's config trusts
    *[Plan(f"project-limit-{trust}", f"the auto-compact limit set in the project's .codex/config.toml, the project "
                                     f"{trust}: Codex {'takes' if trust == 'trusted' else 'ignores'} it", [
        Exec("Read big.txt and tell me its last line.", [
            Turn(exec_command("cat big.txt")),
            Turn(exec_command("tail -n 1 big.txt")),
            Turn(text("The last line is number 0299."))],
            compactions=[Turn(text("The user wants the last line of big.txt. I printed the whole file (300 "
                                   "numbered lines); the next step is to print its last line."))]
            if trust == "trusted" else [])],
        files={"big.txt": _big(300), ".codex/config.toml": "model_auto_compact_token_limit = 12000\n"},
        config="model_context_window = 16000\n" + (
            '\n[projects."{work}"]\ntrust_level = "trusted"\n\n' if trust == "trusted" else ""))
      for trust in ("trusted", "untrusted")],
    # The default auto-compact line, with no limit configured: a tool output leaves the next request just below it
    # (312 lines: no compaction) or just past it (314 lines: compaction), for a raw window of 16,000
    *[Plan(f"default-limit-{side}", f"with no limit configured, a context just {side} Codex's default "
                                    "auto-compact line (90% of the raw window)", [
        Exec("Read big.txt and tell me its last line.", [
            Turn(exec_command("cat big.txt")), Turn(exec_command("tail -n 1 big.txt")),
            Turn(text("The last line is number %04d." % (lines - 1)))],
            compactions=[Turn(text("The user wants the last line of big.txt. I printed the whole file; the next "
                                   "step is to print its last line."))] if side == "above" else [])],
        files={"big.txt": _big(lines)}, config="model_context_window = 16000\n")
      for side, lines in (("below", 312), ("above", 314))],
]}


def _config(url: str, extra: str) -> str:
    return (f'model = "{MODEL}"\nmodel_provider = "mock"\ncheck_for_update_on_startup = false\n{extra}'
            f'[model_providers.mock]\nname = "mock"\nbase_url = "{url}"\nwire_api = "responses"\n'
            f'env_key = "MOCK_API_KEY"\n\n[analytics]\nenabled = false\n')


def _exec(capture: Capture, codex: Path, env: dict[str, str], step: Exec) -> None:
    argv = [str(codex), "exec", "--skip-git-repo-check", "-s", "danger-full-access", "--color", "never"]
    capture.run(argv + (["resume", "--last", step.prompt] if step.resume else [step.prompt]), env, TIMEOUT)


def _compact(codex: Path, scratch: Scratch, env: dict[str, str], thread: str) -> None:
    """`thread/compact/start` over the app server's stdio JSON-RPC, waiting for the compaction turn to end."""
    proc = subprocess.Popen([str(codex), "app-server"], cwd=scratch.work, env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    assert proc.stdin is not None and proc.stdout is not None

    def send(message: dict) -> None:
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]

    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout] + [lines.put("")],  # type: ignore[union-attr]
                     daemon=True).start()

    def wait(until: Callable[[dict], bool]) -> dict:
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            try:
                line = lines.get(timeout=1.0)
            except queue.Empty:
                continue
            if not line:
                break
            message = json.loads(line)
            if "error" in message:
                raise LabError(f"codex app-server: {message['error']}")
            if until(message):
                return message
        raise LabError("codex app-server did not finish the compaction")

    try:
        send({"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "context-inspector-lab",
                                                                       "version": "1"}}})
        wait(lambda m: m.get("id") == 1)
        send({"method": "initialized"})
        send({"id": 2, "method": "thread/resume", "params": {"threadId": thread, "excludeTurns": True}})
        wait(lambda m: m.get("id") == 2)
        send({"id": 3, "method": "thread/compact/start", "params": {"threadId": thread}})
        wait(lambda m: m.get("method") == "turn/completed")
    finally:
        proc.stdin.close()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def rollouts(home: Path) -> list[Path]:
    """The rollouts under a HOME, oldest first."""
    return sorted((home / ".codex" / "sessions").glob("*/*/*/rollout-*.jsonl"))


def play(plan: Plan, scratch: Scratch, codex: Path) -> Capture:
    """Run `plan` in `scratch`; the capture keeps the one rollout Codex wrote, its config and the server's log."""
    capture = Capture(scratch)
    for name, content in plan.files.items():
        scratch.write(name, content)
    config = scratch.home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    with ResponsesServer() as server:
        config.write_text(_config(server.url, plan.config.replace("{work}", str(scratch.work))))
        env = agent_env(scratch, {"MOCK_API_KEY": FAKE_KEY})
        for step in plan.steps:
            if isinstance(step, Exec):
                server.add(*step.turns)
                server.add_compaction(*step.compactions)
                _exec(capture, codex, env, step)
            else:
                found = rollouts(scratch.home)
                if not found:
                    raise LabError("a compaction step needs a session first")
                server.add_compaction(step.summary)
                _compact(codex, scratch, env, json.loads(found[-1].open().readline())["payload"]["id"])
        if server.pending:
            raise LabError(f"{server.pending} scripted turn(s) were never asked for")
        odd = [e for e in server.exchanges if e.status != 200]
        if odd:
            raise LabError(f"unexpected request {odd[0].method} {odd[0].path} (answered {odd[0].status})")
        capture.server_log = server.log
    found = rollouts(scratch.home)
    if len(found) != 1:
        raise LabError(f"expected one rollout, found {len(found)}")
    capture.keep(found[0], config, *[scratch.work / name for name in plan.files if name.startswith(".codex/")])
    return capture


SCENARIOS: dict[str, lab.Scenario] = {
    name: lab.Scenario(name, plan.about, lambda scratch, codex, plan=plan: play(plan, scratch, codex))
    for name, plan in PLANS.items()}


def rollout(fixture: lab.Fixture) -> Path:
    """The rollout a fixture kept."""
    [found] = fixture.files("home/.codex/sessions/*/*/*/rollout-*.jsonl")
    return found
