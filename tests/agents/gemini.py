"""Gemini CLI scenarios for the lab: the real `gemini` (pinned in install.py) headless against gemini_server.py.

FORMATS.md section 8: `$HOME/.gemini/settings.json` selects API-key auth and turns folder trust off,
`GOOGLE_GEMINI_BASE_URL` points the Gemini API at the local server, `GEMINI_API_KEY` is the fake key, and
`gemini -p PROMPT -m gemini-2.5-pro --yolo` runs one prompt (`--resume latest` continues the last session). Each
scenario keeps the session files under `$HOME/.gemini/tmp/<project>/chats/` and the project's `.project_root`.

Compression needs a second prompt to find a split point (Gemini CLI splits the history only before a prompt the
user typed, and never compresses from inside a tool loop), and the CLI only compresses before sending a turn: so the
compression scenario resumes the session and enables the next-speaker check (`model.skipNextSpeakerCheck: false`,
off by default), whose "Please continue." turn is the one sent after the usage crossed 50% of the window.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import install
from gemini_server import GeminiServer, is_compression
from lab import (FAKE_KEY, Capture, LabError, Scenario, Scratch, agent_env, keep_log, registry, system_paths,
                 system_settings)
from scripted import SHELL_PROMPT, Call, Turn, shell_turns

AGENT = "gemini"
VERSION = install.PINS[AGENT].version
MODEL = "gemini-2.5-pro"
WINDOW = 1_048_576  # tokenLimit(gemini-2.5-pro)
SCENARIOS: dict[str, Scenario] = {}
TIMEOUT = 180
KEPT = (".gemini/tmp/*/chats/**/*.jsonl", ".gemini/tmp/*/chats/**/*.json", ".gemini/tmp/*/.project_root",
        ".gemini/settings.json")


scenario = registry(SCENARIOS)


def settings(scratch: Scratch, **extra: dict) -> None:
    config = {"security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}}, **extra}
    path = scratch.home / ".gemini" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(config, indent=1) + "\n")


def env(scratch: Scratch, server: GeminiServer) -> dict[str, str]:
    return agent_env(scratch, {"GEMINI_API_KEY": FAKE_KEY, "GOOGLE_GEMINI_BASE_URL": server.url,
                               **system_paths(scratch, "GEMINI_CLI")})


def gemini(binary: Path, prompt: str, *flags: str) -> list[str]:
    return [str(binary), "-p", prompt, "-m", MODEL, "--yolo", *flags]


@contextmanager
def model(scratch: Scratch) -> Iterator[GeminiServer]:
    with GeminiServer() as server:
        try:
            yield server
        finally:
            keep_log(scratch, server.log)


def finish(capture: Capture, server: GeminiServer) -> Capture:
    if server.pending:
        raise LabError(f"{server.pending} scripted answer(s) never asked for; the server saw "
                       f"{len(server.exchanges('Content'))} model request(s)")
    capture.keep(*sorted(p for pattern in KEPT for p in capture.scratch.home.glob(pattern)))
    capture.server_log = server.log
    return capture


def run_prompts(scratch: Scratch, binary: Path, server: GeminiServer, *runs: list[str]) -> Capture:
    capture = Capture(scratch)
    for argv in runs:
        capture.run(argv, env(scratch, server), TIMEOUT)
    return finish(capture, server)


@scenario("read-file", "Read a file with read_file and answer from it")
def read_file(scratch: Scratch, binary: Path) -> Capture:
    settings(scratch)
    scratch.write("notes.txt", "The meeting moved to Thursday at 10:00.\nBring the budget sheet.\n")
    with model(scratch) as server:
        server.add(Turn("I'll read it.", [Call("read_file", {"file_path": "notes.txt"})]),
                   Turn("notes.txt says the meeting moved to Thursday at 10:00 and to bring the budget sheet."))
        return run_prompts(scratch, binary, server, gemini(binary, "What does notes.txt say?"))


@scenario("edit-file", "Think, read a file, then change it with replace")
def edit_file(scratch: Scratch, binary: Path) -> Capture:
    settings(scratch)
    config = scratch.write("config.ini", "[server]\nport = 8080\nhost = localhost\n")
    with model(scratch) as server:
        server.add(Turn("Let me look at it.", [Call("read_file", {"file_path": "config.ini"})],
                        thinking="**Finding the port** The port is set in config.ini; read it first."),
                   Turn("", [Call("replace", {"file_path": str(config), "instruction": "Set the port to 9090.",
                                              "old_string": "port = 8080", "new_string": "port = 9090"})],
                        thinking="**Editing** Replace the port line exactly."),
                   Turn("The port is now 9090."))
        capture = run_prompts(scratch, binary, server, gemini(binary, "Change the port in config.ini to 9090."))
    if "port = 9090" not in config.read_text():
        raise LabError("replace did not change config.ini")
    return capture


@scenario("shell", "Run a shell command with run_shell_command")
def shell(scratch: Scratch, binary: Path) -> Capture:
    settings(scratch)
    with model(scratch) as server:
        server.add(*shell_turns(scratch))
        return run_prompts(scratch, binary, server, gemini(binary, SHELL_PROMPT))


@scenario("parallel-tools", "Three tool calls in one response (two read_file and a run_shell_command)")
def parallel_tools(scratch: Scratch, binary: Path) -> Capture:
    settings(scratch)
    scratch.write("a.txt", "alpha\n")
    scratch.write("b.txt", "beta\n")
    with model(scratch) as server:
        server.add(Turn("Reading both and listing the directory.",
                        [Call("read_file", {"file_path": "a.txt"}), Call("read_file", {"file_path": "b.txt"}),
                         Call("run_shell_command", {"command": "ls", "description": "List files"})],
                        cached_tokens=4096),
                   Turn("a.txt holds alpha, b.txt beta; the directory has both.", cached_tokens=8192))
        return run_prompts(scratch, binary, server, gemini(binary, "What do a.txt and b.txt hold?"))


def next_speaker(body: dict) -> Turn:
    """The next-speaker check's answer: the model speaks again only after a turn that says it will go on."""
    model_turns = [c for c in body.get("contents", []) if c.get("role") == "model"]
    last = " ".join(p.get("text", "") for p in model_turns[-1].get("parts", [])) if model_turns else ""
    who = "model" if last.rstrip().endswith("(continuing)") else "user"
    return Turn(json.dumps({"reasoning": "scripted by the lab", "next_speaker": who}))


def is_next_speaker(body: dict) -> bool:
    return "next_speaker" in json.dumps(body.get("generationConfig", {})) or \
        "next_speaker" in json.dumps(body.get("contents", [])[-1:])


@scenario("compression", "Usage past 50% of the window: Gemini CLI compresses to a <state_snapshot>, keeping 30%")
def compression(scratch: Scratch, binary: Path) -> Capture:
    return _compress(scratch, binary, 600_000)


@scenario("compression-threshold", "model.compressionThreshold 0.3 in the user's settings: usage at 38% of the "
                                   "window, below the default 50%, compresses")
def compression_threshold(scratch: Scratch, binary: Path) -> Capture:
    return _compress(scratch, binary, 400_000, compressionThreshold=0.3)


@scenario("system-threshold", "model.compressionThreshold 0.3 in the system settings (root's alone, as the CLI "
                              "requires) over 0.6 in the user's: usage at 38% of the window compresses")
def system_threshold(scratch: Scratch, binary: Path) -> Capture:
    system = system_settings(scratch, secure=True, model={"compressionThreshold": 0.3})
    capture = _compress(scratch, binary, 400_000, compressionThreshold=0.6)
    capture.keep(system)
    return capture


def _compress(scratch: Scratch, binary: Path, input_tokens: int, **model_settings: float) -> Capture:
    """A read, then a turn whose usage reaches `input_tokens`, then a resumed prompt: the CLI compresses before it
    sends the next-speaker check's "Please continue." turn when that usage is past its threshold."""
    settings(scratch, model={"skipNextSpeakerCheck": False, **model_settings})
    scratch.write("notes.txt", "".join(f"line {i}: notes about the release plan\n" for i in range(120)))
    with model(scratch) as server:
        server.always_for(is_next_speaker, next_speaker)
        server.add(Turn("Reading the notes.", [Call("read_file", {"file_path": "notes.txt"})]),
                   Turn("The notes list 120 lines about the release plan."),
                   Turn("The plan has three phases; the context is large now. (continuing)",
                        input_tokens=input_tokens, output_tokens=40),
                   Turn("Continuing after the compression: the plan's phases are design, build and ship."))
        server.add_for(is_compression,
                       Turn("<state_snapshot>\n<overall_goal>Summarise notes.txt</overall_goal>\n"
                            "<key_knowledge>120 lines on the release plan</key_knowledge>\n</state_snapshot>"),
                       Turn("<state_snapshot>\n<overall_goal>Summarise notes.txt (the release plan)</overall_goal>\n"
                            "<key_knowledge>120 lines; three phases</key_knowledge>\n</state_snapshot>"))
        return run_prompts(scratch, binary, server, gemini(binary, "Read notes.txt."),
                           gemini(binary, "Now summarise the plan.", "--resume", "latest"))
