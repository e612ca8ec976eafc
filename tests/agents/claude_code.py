"""Claude Code scenarios for the lab: the real `claude` (pinned in install.py) headless against tests/mock_api.

Each scenario scripts the model's turns on a MockAnthropicServer (with its prompt cache, so the usage carries
cache creation and read figures as the API's would), runs `claude -p` in a fresh scratch directory with only the
fake key and the server's address, and keeps the session files Claude Code wrote under
`$HOME/.claude/projects/` (subagent files included) with the server's log.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the mock_api package

import install  # noqa: E402
from lab import FAKE_KEY, Capture, LabError, Scenario, Scratch, agent_env  # noqa: E402
from mock_api import MockAnthropicServer, responses as r  # noqa: E402

AGENT = "claude-code"
VERSION = install.PINS[AGENT].version
SCENARIOS: dict[str, Scenario] = {}
TIMEOUT = 120  # seconds per run of claude; a scenario's runs take 2-10 s each here


def scenario(name: str, about: str) -> Callable[[Callable[[Scratch, Path], Capture]], Callable]:
    def register(run: Callable[[Scratch, Path], Capture]) -> Callable:
        SCENARIOS[name] = Scenario(name, about, run)
        return run
    return register


def env(scratch: Scratch, server: MockAnthropicServer, **extra: str) -> dict[str, str]:
    """FORMATS.md section 8: the server's address, the fake key, no nonessential traffic (no probes elsewhere)."""
    return agent_env(scratch, {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": FAKE_KEY,
                               "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", **extra})


def claude(binary: Path, prompt: str, *flags: str) -> list[str]:
    return [str(binary), "-p", prompt, *flags]


@contextmanager
def model() -> Iterator[MockAnthropicServer]:
    with MockAnthropicServer(prompt_cache=True) as server:
        yield server


def finish(capture: Capture, server: MockAnthropicServer) -> Capture:
    """Keep every session file Claude Code wrote and the server's log; a scripted turn left unused is a failure
    (the agent did not do what the scenario expects)."""
    if server.pending:
        raise LabError(f"{server.pending} scripted answer(s) never asked for; the server saw "
                       f"{len(server.message_requests)} message request(s)")
    capture.keep(*sorted(capture.scratch.home.glob(".claude/projects/**/*.jsonl")))
    capture.server_log = server.log
    return capture


def use(name: str, input: dict, id: str) -> dict:
    return r.tool_use_block(name, input, id=id)


def calls(*blocks: dict, text: str | None = None) -> r.Reply:
    """A model turn calling tools (several blocks: parallel calls), optionally after some text."""
    return r.Reply(([r.text_block(text)] if text else []) + list(blocks), stop_reason="tool_use")


@scenario("read-file", "Read a file with the Read tool and answer from it")
def read_file(scratch: Scratch, binary: Path) -> Capture:
    notes = scratch.write("notes.txt", "The meeting moved to Thursday at 10:00.\nBring the budget sheet.\n")
    with model() as server:
        server.add(calls(use("Read", {"file_path": str(notes)}, "toolu_lab_read_1")),
                   r.text("notes.txt says the meeting moved to Thursday at 10:00 and to bring the budget sheet."))
        capture = Capture(scratch)
        capture.run(claude(binary, "What does notes.txt say?", "--allowedTools", "Read"), env(scratch, server),
                    TIMEOUT)
        return finish(capture, server)
