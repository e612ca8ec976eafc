"""Qwen Code scenarios for the lab: the real `qwen` (pinned in install.py) headless against openai_chat_server.py.

`$HOME/.qwen/settings.json` selects OpenAI-compatible auth (`security.auth.selectedType: "openai"`) and turns
folder trust off; `OPENAI_BASE_URL` points at the local server, `OPENAI_API_KEY` is the fake key and `OPENAI_MODEL`
names the model (qwen3-coder-plus: Qwen Code gives it a 1,000,000-token window and records that as
`contextWindowSize`); `qwen -p PROMPT --yolo` runs one prompt. Each scenario keeps the session files under
`$HOME/.qwen/projects/<cwd>/chats/`.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import install
from lab import (FAKE_KEY, Capture, LabError, Scenario, Scratch, agent_env, keep_log, registry, system_paths,
                 system_settings)
from openai_chat_server import OpenAIChatServer
from scripted import SHELL_PROMPT, Call, Turn, shell_turns

AGENT = "qwen"
VERSION = install.PINS[AGENT].version
MODEL = "qwen3-coder-plus"
SCENARIOS: dict[str, Scenario] = {}
TIMEOUT = 180
KEPT = (".qwen/projects/*/chats/*.jsonl", ".qwen/settings.json")


scenario = registry(SCENARIOS)


def settings(scratch: Scratch, **extra: dict) -> None:
    path = scratch.home / ".qwen" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"security": {"auth": {"selectedType": "openai"}, "folderTrust": {"enabled": False}},
                                **extra}, indent=1) + "\n")


def env(scratch: Scratch, server: OpenAIChatServer) -> dict[str, str]:
    return agent_env(scratch, {"OPENAI_API_KEY": FAKE_KEY, "OPENAI_BASE_URL": server.url + "/v1",
                               "OPENAI_MODEL": MODEL, "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1",
                               **system_paths(scratch, "QWEN_CODE")})


def qwen(binary: Path, prompt: str, *flags: str) -> list[str]:
    return [str(binary), "-p", prompt, "--yolo", *flags]


def is_compression(body: dict) -> bool:
    """Qwen Code's compaction side query: its last user turn asks for the <state_snapshot>."""
    return "state_snapshot" in json.dumps(body.get("messages", [])[-1:])


@contextmanager
def model(scratch: Scratch) -> Iterator[OpenAIChatServer]:
    with OpenAIChatServer() as server:
        try:
            yield server
        finally:
            keep_log(scratch, server.log)


def run_prompts(scratch: Scratch, binary: Path, server: OpenAIChatServer, *runs: list[str],
                **extra_settings: dict) -> Capture:
    settings(scratch, **extra_settings)
    capture = Capture(scratch)
    for argv in runs:
        capture.run(argv, env(scratch, server), TIMEOUT)
    if server.pending:
        raise LabError(f"{server.pending} scripted answer(s) never asked for; the server saw "
                       f"{len(server.exchanges('chat/completions'))} request(s)")
    capture.keep(*sorted(p for pattern in KEPT for p in scratch.home.glob(pattern)))
    capture.server_log = server.log
    return capture


@scenario("read-file", "Read a file with read_file and answer from it (part of the prompt reported cached)")
def read_file(scratch: Scratch, binary: Path) -> Capture:
    notes = scratch.write("notes.txt", "The meeting moved to Thursday at 10:00.\nBring the budget sheet.\n")
    with model(scratch) as server:
        server.add(Turn("I'll read it.", [Call("read_file", {"file_path": str(notes)})]),
                   Turn("notes.txt says the meeting moved to Thursday at 10:00 and to bring the budget sheet.",
                        cached_tokens=16384))
        return run_prompts(scratch, binary, server, qwen(binary, "What does notes.txt say?"))


@scenario("edit-file", "Think, read a file, then change it with edit")
def edit_file(scratch: Scratch, binary: Path) -> Capture:
    config = scratch.write("config.ini", "[server]\nport = 8080\nhost = localhost\n")
    with model(scratch) as server:
        server.add(Turn("Let me look at it.", [Call("read_file", {"file_path": str(config)})],
                        thinking="The port is set in config.ini; read it first."),
                   Turn("", [Call("edit", {"file_path": str(config), "old_string": "port = 8080",
                                           "new_string": "port = 9090"})],
                        thinking="Replace the port line exactly."),
                   Turn("The port is now 9090."))
        capture = run_prompts(scratch, binary, server, qwen(binary, "Change the port in config.ini to 9090."))
    if "port = 9090" not in config.read_text():
        raise LabError("edit did not change config.ini")
    return capture


@scenario("shell", "Run a shell command with run_shell_command")
def shell(scratch: Scratch, binary: Path) -> Capture:
    with model(scratch) as server:
        server.add(*shell_turns(scratch))
        return run_prompts(scratch, binary, server, qwen(binary, SHELL_PROMPT))


@scenario("parallel-tools", "Three tool calls in one response (two read_file and a run_shell_command)")
def parallel_tools(scratch: Scratch, binary: Path) -> Capture:
    a, b = scratch.write("a.txt", "alpha\n"), scratch.write("b.txt", "beta\n")
    with model(scratch) as server:
        server.add(Turn("Reading both and listing the directory.",
                        [Call("read_file", {"file_path": str(a)}), Call("read_file", {"file_path": str(b)}),
                         Call("run_shell_command", {"command": "ls", "description": "List files"})]),
                   Turn("a.txt holds alpha, b.txt beta; the directory has both."))
        return run_prompts(scratch, binary, server, qwen(binary, "What do a.txt and b.txt hold?"))


@scenario("compression", "Usage past 85% of the 1M window: Qwen Code compacts to a <state_snapshot>")
def compression(scratch: Scratch, binary: Path) -> Capture:
    return _compact(scratch, binary, 900_000)


@scenario("system-threshold", "context.autoCompactThreshold 0.5 in the system settings over 0.9 in the user's: usage "
                              "at 60% of the window compacts (the system settings win)")
def system_threshold(scratch: Scratch, binary: Path) -> Capture:
    system = system_settings(scratch, context={"autoCompactThreshold": 0.5})
    capture = _compact(scratch, binary, 600_000, context={"autoCompactThreshold": 0.9})
    capture.keep(system)
    return capture


@scenario("compression-threshold", "context.autoCompactThreshold 0.5 in the user's settings: usage at 60% of the "
                                   "window, below the default 85%, compacts")
def compression_threshold(scratch: Scratch, binary: Path) -> Capture:
    return _compact(scratch, binary, 600_000, context={"autoCompactThreshold": 0.5})


def _compact(scratch: Scratch, binary: Path, input_tokens: int, **extra_settings: dict) -> Capture:
    """A read whose response reports `input_tokens`, then the answer: Qwen Code compacts before the request after
    it when that usage is past its threshold."""
    notes = scratch.write("notes.txt", "".join(f"line {i}: notes about the release plan\n" for i in range(120)))
    with model(scratch) as server:
        server.add(Turn("Reading the notes.", [Call("read_file", {"file_path": str(notes)})],
                        input_tokens=input_tokens, output_tokens=30),
                   Turn("The notes list 120 lines about the release plan, in three phases."))
        server.add_for(is_compression,
                       Turn("<analysis>The user asked for the notes; they were read.</analysis>\n<state_snapshot>\n"
                            "<overall_goal>Summarise notes.txt</overall_goal>\n"
                            "<key_knowledge>120 lines on the release plan</key_knowledge>\n</state_snapshot>"))
        return run_prompts(scratch, binary, server, qwen(binary, "Read notes.txt and summarise the plan."),
                           **extra_settings)
