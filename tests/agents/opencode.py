"""opencode scenarios for the lab: the real `opencode` (pinned in install.py) headless against tests/mock_api.

FORMATS.md section 8: `opencode.json` in the working directory points the anthropic provider at the local server
with the fake key and picks anthropic/claude-sonnet-4-5; `OPENCODE_DISABLE_MODELS_FETCH=1` keeps opencode from
fetching models.dev, `PWD` names the working directory (opencode reads the project from it), and `opencode run
PROMPT` runs one prompt (`--continue` continues the last session). opencode also asks claude-haiku-4-5 for a title
(a standing answer here) and stores everything in `$XDG_DATA_HOME/opencode/opencode.db`. At every start opencode
runs npm to install @opencode-ai/plugin into its config directory; the npm settings here keep that offline (it
fails, opencode logs "background dependency install failed" and goes on). Its bundled models.dev snapshot gives
claude-sonnet-4-5 a 1,000,000-token context (data/opencode-models.json).

What a fixture keeps of the database: opencode exits with most of its writes still in the write-ahead log, so the
scenario copies the database with SQLite's backup API (read-only on the source, the WAL included) into one
self-contained file at the same place, `home/.local/share/opencode/opencode.db`. The read-file scenario keeps the
three files as opencode left them too (`as-left/`), for the tests that read a database through its WAL.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the mock_api package

import install  # noqa: E402
from lab import FAKE_KEY, Capture, LabError, Scenario, Scratch, agent_env, keep_log, registry  # noqa: E402
from mock_api import MockAnthropicServer, RecordedRequest, responses as r  # noqa: E402

AGENT = "opencode"
VERSION = install.PINS[AGENT].version
MODEL = "claude-sonnet-4-5"
SCENARIOS: dict[str, Scenario] = {}
TIMEOUT = 180
DATABASE = ".local/share/opencode/opencode.db"  # under HOME (XDG_DATA_HOME is HOME/.local/share)
TITLES = 8  # title answers queued: more than any scenario asks for (one per run at most)


scenario = registry(SCENARIOS)


def configure(scratch: Scratch, server: MockAnthropicServer, **extra: object) -> None:
    config = {"$schema": "https://opencode.ai/config.json", "model": f"anthropic/{MODEL}",
              "provider": {"anthropic": {"options": {"baseURL": server.url + "/v1", "apiKey": FAKE_KEY}}}, **extra}
    (scratch.work / "opencode.json").write_text(json.dumps(config, indent=1) + "\n")


def env(scratch: Scratch) -> dict[str, str]:
    return agent_env(scratch, {"OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_AUTOUPDATE": "1",
                               "OPENCODE_DISABLE_SHARE": "1", "npm_config_registry": "http://127.0.0.1:9/",
                               "npm_config_fetch_retries": "0", "npm_config_offline": "true"})


def opencode(binary: Path, prompt: str, *flags: str) -> list[str]:
    return [str(binary), "run", *flags, prompt]


def is_title(request: RecordedRequest) -> bool:
    """opencode's title request: the title agent's system prompt, no tools."""
    return not request.body.get("tools") and "title" in json.dumps(request.body.get("system", ""))[:4000].lower()


def is_summary(request: RecordedRequest) -> bool:
    """opencode's compaction request: the compaction agent, no tools and no title prompt."""
    return not request.body.get("tools") and not is_title(request)


@contextmanager
def model(scratch: Scratch) -> Iterator[MockAnthropicServer]:
    with MockAnthropicServer(prompt_cache=True) as server:
        server.add_for(is_title, *[r.text("Lab session") for _ in range(TITLES)])
        try:
            yield server
        finally:
            keep_log(scratch, server.log)


def run_prompts(scratch: Scratch, binary: Path, server: MockAnthropicServer, *runs: list[str],
                keep_as_left: bool = False, capture: Capture | None = None) -> Capture:
    """Run the prompts (or take a capture whose runs are done), check every scripted answer was used, keep the
    database."""
    capture = capture or Capture(scratch)
    for argv in runs:
        capture.run(argv, env(scratch), TIMEOUT)
    pending = server.pending - (TITLES - sum(1 for q in server.message_requests if is_title(q)))
    if pending:
        raise LabError(f"{pending} scripted answer(s) never asked for; the server saw "
                       f"{len(server.message_requests)} message request(s)")
    database = scratch.home / DATABASE
    if keep_as_left:
        kept = scratch.root / "as-left"
        kept.mkdir()
        for suffix in ("", "-wal", "-shm"):
            if Path(f"{database}{suffix}").exists():
                shutil.copy(f"{database}{suffix}", kept / f"opencode.db{suffix}")
                capture.keep(kept / f"opencode.db{suffix}")
    backup(database)
    capture.keep(database)
    capture.server_log = server.log
    capture.notes["database"] = "copied with SQLite's backup API from what opencode left (its WAL included)"
    return capture


def backup(database: Path) -> None:
    """Replace the database opencode left (a file and its write-ahead log) by one self-contained copy, made with
    SQLite's backup API from a read-only connection."""
    copy = database.with_name("backup.db")
    source = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    target = sqlite3.connect(copy)
    try:
        source.backup(target)
    finally:
        source.close()
        target.close()
    for suffix in ("-wal", "-shm"):
        Path(f"{database}{suffix}").unlink(missing_ok=True)
    copy.replace(database)


def use(name: str, input: dict, id: str) -> dict:
    return r.tool_use_block(name, input, id=id)


def calls(*blocks: dict, text: str | None = None, **kw) -> r.Reply:
    return r.Reply(([r.text_block(text)] if text else []) + list(blocks), stop_reason="tool_use", **kw)


@scenario("read-file", "Read a file with read and answer from it")
def read_file(scratch: Scratch, binary: Path) -> Capture:
    notes = scratch.write("notes.txt", "The meeting moved to Thursday at 10:00.\nBring the budget sheet.\n")
    with model(scratch) as server:
        configure(scratch, server)
        server.add(calls(use("read", {"filePath": str(notes)}, "toolu_lab_read_1"), text="I'll read it."),
                   r.text("notes.txt says the meeting moved to Thursday at 10:00 and to bring the budget sheet."))
        return run_prompts(scratch, binary, server, opencode(binary, "What does notes.txt say?"), keep_as_left=True)


@scenario("edit-file", "Think, read a file, then change it with edit")
def edit_file(scratch: Scratch, binary: Path) -> Capture:
    config = scratch.write("config.ini", "[server]\nport = 8080\nhost = localhost\n")
    with model(scratch) as server:
        configure(scratch, server)
        server.add(r.Reply([r.thinking_block("The port is in config.ini; read it first.", "sig-lab-1"),
                            use("read", {"filePath": str(config)}, "toolu_lab_read_1")], stop_reason="tool_use"),
                   calls(use("edit", {"filePath": str(config), "oldString": "port = 8080",
                                      "newString": "port = 9090"}, "toolu_lab_edit_1")),
                   r.text("The port is now 9090."))
        capture = run_prompts(scratch, binary, server, opencode(binary, "Change the port in config.ini to 9090."))
    if "port = 9090" not in config.read_text():
        raise LabError("edit did not change config.ini")
    return capture


@scenario("shell", "Run a shell command with bash")
def shell(scratch: Scratch, binary: Path) -> Capture:
    scratch.write("data/a.txt", "one\n")
    scratch.write("data/b.txt", "two\nthree\n")
    with model(scratch) as server:
        configure(scratch, server)
        server.add(calls(use("bash", {"command": "wc -l data/a.txt data/b.txt", "description": "Count lines"},
                             "toolu_lab_bash_1")),
                   r.text("a.txt has 1 line and b.txt has 2: 3 in all."))
        return run_prompts(scratch, binary, server, opencode(binary, "How many lines are in the files under data/?"))


@scenario("parallel-tools", "Three tool calls in one response (two reads and a bash), answered together")
def parallel_tools(scratch: Scratch, binary: Path) -> Capture:
    a, b = scratch.write("a.txt", "alpha\n"), scratch.write("b.txt", "beta\n")
    with model(scratch) as server:
        configure(scratch, server)
        server.add(calls(use("read", {"filePath": str(a)}, "toolu_lab_read_a"),
                         use("read", {"filePath": str(b)}, "toolu_lab_read_b"),
                         use("bash", {"command": "ls", "description": "List files"}, "toolu_lab_bash_1"),
                         text="Reading both and listing the directory."),
                   r.text("a.txt holds alpha, b.txt beta; the directory has both."))
        return run_prompts(scratch, binary, server, opencode(binary, "What do a.txt and b.txt hold?"))


@scenario("compaction", "A response past the usable window (1M less 32k): opencode compacts, keeping the last turn")
def compaction(scratch: Scratch, binary: Path) -> Capture:
    with model(scratch) as server:
        past_the_window(scratch, server)
        server.add_for(is_summary, r.text("## Goal\nRead the logs and the notes.\n\n## Done\nRead log0.txt and "
                                          "log1.txt (480 lines each).\n\n## Next\nAnswer about notes.txt."))
        return run_prompts(scratch, binary, server, *past_the_window_prompts(binary))


def past_the_window(scratch: Scratch, server: MockAnthropicServer) -> None:
    """Two logs read, then a response of 970,000 tokens (past the 968,000 usable) and the answer after it."""
    big = [big_file(scratch, f"log{k}.txt", 480) for k in range(2)]
    notes = scratch.write("notes.txt", "".join(f"line {i}: notes about the release plan\n" for i in range(60)))
    configure(scratch, server)
    server.add(calls(*[use("read", {"filePath": str(f)}, f"toolu_lab_read_log{k}") for k, f in enumerate(big)]),
               r.text("Both logs hold 480 numbered lines."),
               calls(use("read", {"filePath": str(notes)}, "toolu_lab_read_notes"), text="Reading the notes.",
                     input_tokens=970_000),
               r.text("The notes describe the release plan in 60 lines."))


def past_the_window_prompts(binary: Path) -> list[list[str]]:
    return [opencode(binary, "Read log0.txt and log1.txt."),
            opencode(binary, "Read notes.txt and tell me what it describes.", "--continue")]


def user_config(scratch: Scratch, text: str) -> Path:
    """The user's own opencode.json (`$XDG_CONFIG_HOME/opencode`), which the fixture keeps."""
    path = scratch.config / "opencode" / "opencode.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@scenario("compact-disabled", "compaction.auto false in the user's opencode.json: a response past the usable window "
                              "and opencode goes on without compacting")
def compact_disabled(scratch: Scratch, binary: Path) -> Capture:
    global_config = user_config(scratch, '{\n  "$schema": "https://opencode.ai/config.json",\n  // no switch in '
                                         'the TUI\n  "compaction": {"auto": false},\n}\n')  # JSONC, as users write it
    with model(scratch) as server:
        past_the_window(scratch, server)
        capture = run_prompts(scratch, binary, server, *past_the_window_prompts(binary))
    if any(is_summary(q) for q in server.message_requests):
        raise LabError("opencode asked for a summary with compaction.auto false")
    capture.keep(global_config)
    return capture


INPUT_LIMIT, RESERVED = 120_000, 10_000  # input-limit: usable 110,000


@scenario("input-limit", "A config limit with an input limit (120k) and compaction.reserved (10k): a response at "
                         "109.5k goes on, one at 110.5k compacts")
def input_limit(scratch: Scratch, binary: Path) -> Capture:
    global_config = user_config(scratch, json.dumps({
        "$schema": "https://opencode.ai/config.json", "compaction": {"reserved": RESERVED},
        "provider": {"anthropic": {"models": {MODEL: {"limit": {"context": 200_000, "input": INPUT_LIMIT,
                                                                "output": 8_000}}}}}}, indent=1) + "\n")
    notes = scratch.write("notes.txt", "".join(f"line {i}: notes about the release plan\n" for i in range(60)))
    log = big_file(scratch, "log0.txt", 480)
    with model(scratch) as server:
        configure(scratch, server)
        server.add(calls(use("read", {"filePath": str(notes)}, "toolu_lab_read_notes"), text="Reading the notes.",
                         input_tokens=INPUT_LIMIT - RESERVED - 500),
                   r.text("The notes describe the release plan in 60 lines."),
                   calls(use("read", {"filePath": str(log)}, "toolu_lab_read_log0"), text="Reading the log.",
                         input_tokens=INPUT_LIMIT - RESERVED + 500),
                   r.text("The log holds 480 numbered lines."))
        server.add_for(is_summary, r.text("## Goal\nRead the notes and the log.\n\n## Done\nRead notes.txt (60 "
                                          "lines) and log0.txt.\n\n## Next\nAnswer about log0.txt."))
        capture = run_prompts(scratch, binary, server,
                              opencode(binary, "Read notes.txt and tell me what it describes."),
                              opencode(binary, "Now read log0.txt.", "--continue"))
    summaries = [n for n, q in enumerate(server.message_requests) if is_summary(q)]
    if len(summaries) != 1:
        raise LabError(f"opencode asked for {len(summaries)} summaries, not one")
    capture.keep(global_config)
    return capture


def big_file(scratch: Scratch, name: str, n: int) -> Path:
    """A file of about 44 KB (11k of opencode's chars/4 tokens): under read's 50 KB cap."""
    return scratch.write(name, "".join(f"{name} line {i:04d}: " + "x" * 70 + "\n" for i in range(n)))


@contextmanager
def serving(scratch: Scratch, binary: Path) -> Iterator[str]:
    """`opencode serve` in the background for the scenario's runs to attach to (`run --attach URL`): opencode
    prunes in a fiber it forks after a prompt's loop, which a lone `opencode run` exits before; a server lives on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = open(scratch.root / "serve.log", "w")
    proc = subprocess.Popen([str(binary), "serve", "--port", str(port)], cwd=scratch.work, env=env(scratch),
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise LabError(f"opencode serve did not listen on {port} (see {scratch.root / 'serve.log'})")
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        log.close()


def pruned(database: Path) -> int:
    """How many tool parts of the database have a pruned output (`state.time.compacted`)."""
    conn = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT count(*) FROM part WHERE json_extract(data, '$.state.time.compacted') "
                            "IS NOT NULL").fetchone()[0]
    finally:
        conn.close()


@scenario("prune", "Old tool outputs past opencode's 40k-token protection are pruned (compaction.prune: true)")
def prune(scratch: Scratch, binary: Path) -> Capture:
    files = [big_file(scratch, f"part{k}.txt", 480) for k in range(6)]
    with model(scratch) as server:
        configure(scratch, server, compaction={"prune": True})
        server.add(calls(*[use("read", {"filePath": str(f)}, f"toolu_lab_read_{k}") for k, f in enumerate(files)],
                         text="Reading all six parts."),
                   r.text("The six parts hold 480 numbered lines each."),
                   r.text("They are numbered 0000 to 0479."),
                   r.text("You're welcome."),
                   r.text("Yes: part0.txt to part5.txt."))
        with serving(scratch, binary) as url:
            capture = Capture(scratch)
            for n, prompt in enumerate(("Read part0.txt to part5.txt.", "How are the lines numbered?", "Thanks.",
                                        "Did you read them all?")):
                if n == 3:  # the prune after the third prompt's loop (turns older than the last two) has run
                    deadline = time.monotonic() + 30
                    while not pruned(scratch.home / DATABASE) and time.monotonic() < deadline:
                        time.sleep(0.2)
                capture.run(opencode(binary, prompt, "--attach", url, *(["--continue"] if n else [])),
                            env(scratch), TIMEOUT)
        capture.notes["serve"] = ["opencode", "serve", "--port", "PORT"]
        done = run_prompts(scratch, binary, server, capture=capture)
    if not pruned(scratch.home / DATABASE):
        raise LabError("opencode pruned no tool output")
    return done
