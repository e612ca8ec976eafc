"""Claude Code scenarios for the lab: the real `claude` (pinned in install.py) headless against tests/mock_api.

Each scenario scripts the model's turns on a MockAnthropicServer (with its prompt cache, so the usage carries
cache creation and read figures as the API's would), runs `claude -p` in a fresh scratch directory with only the
fake key and the server's address, and keeps the session files Claude Code wrote under
`$HOME/.claude/projects/` (subagent files included) with the server's log.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Iterator

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the mock_api package

import install  # noqa: E402
from lab import FAKE_KEY, Capture, LabError, Scenario, Scratch, agent_env, keep_log  # noqa: E402
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
def model(scratch: Scratch) -> Iterator[MockAnthropicServer]:
    """The scripted model for one scenario; its log is also left in the scratch directory (lab.keep_log)."""
    with MockAnthropicServer(prompt_cache=True) as server:
        try:
            yield server
        finally:
            keep_log(scratch, server.log)


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


def one_run(scratch: Scratch, binary: Path, server: MockAnthropicServer, prompt: str, *flags: str) -> Capture:
    """A scenario of one run of claude against the scripted server, finished (see `finish`)."""
    capture = Capture(scratch)
    capture.run(claude(binary, prompt, *flags), env(scratch, server), TIMEOUT)
    return finish(capture, server)


def read_and_answer(capture: Capture, server: MockAnthropicServer, binary: Path, path: Path, prompt: str,
                    answer: str) -> None:
    """One run of claude: the model reads `path` with Read, then answers."""
    server.add(calls(use("Read", {"file_path": str(path)}, "toolu_lab_read_1")), r.text(answer))
    capture.run(claude(binary, prompt, "--allowedTools", "Read"), env(capture.scratch, server), TIMEOUT)


def texts(message: dict) -> list[str]:
    """The text of a message as sent: its string content, or its text blocks."""
    content = message.get("content")
    return [content] if isinstance(content, str) else [b.get("text", "") for b in content or [] if isinstance(b, dict)]


@scenario("read-file", "Read a file with the Read tool and answer from it")
def read_file(scratch: Scratch, binary: Path) -> Capture:
    notes = scratch.write("notes.txt", "The meeting moved to Thursday at 10:00.\nBring the budget sheet.\n")
    with model(scratch) as server:
        capture = Capture(scratch)
        read_and_answer(capture, server, binary, notes, "What does notes.txt say?",
                        "notes.txt says the meeting moved to Thursday at 10:00 and to bring the budget sheet.")
        return finish(capture, server)


@scenario("edit-file", "Read a file, think, then change it with Edit")
def edit_file(scratch: Scratch, binary: Path) -> Capture:
    config = scratch.write("config.ini", "[server]\nport = 8080\nhost = localhost\n")
    with model(scratch) as server:
        server.add(calls(use("Read", {"file_path": str(config)}, "toolu_lab_read_1"), text="Let me look at it."),
                   r.Reply([r.thinking_block("The port line is `port = 8080`; Edit replaces it exactly.", "sig-lab-1"),
                            use("Edit", {"file_path": str(config), "old_string": "port = 8080",
                                         "new_string": "port = 9090"}, "toolu_lab_edit_1")],
                           stop_reason="tool_use"),
                   r.text("The port is now 9090."))
        capture = one_run(scratch, binary, server, "Change the port in config.ini to 9090.", "--allowedTools",
                          "Read,Edit")
    if "port = 9090" not in config.read_text():
        raise LabError("Edit did not change config.ini")
    return capture


@scenario("shell", "Run a shell command with Bash")
def shell(scratch: Scratch, binary: Path) -> Capture:
    scratch.write("data/a.txt", "one\n")
    scratch.write("data/b.txt", "two\nthree\n")
    with model(scratch) as server:
        count = {"command": "wc -l data/*.txt", "description": "Count lines"}
        server.add(calls(use("Bash", count, "toolu_lab_bash_1")),
                   r.text("a.txt has 1 line and b.txt has 2: 3 in all."))
        return one_run(scratch, binary, server, "How many lines are in the files under data/?", "--allowedTools",
                       "Bash")


@scenario("parallel-tools", "Three tool calls in one response (two Reads and a Bash), answered together")
def parallel_tools(scratch: Scratch, binary: Path) -> Capture:
    first = scratch.write("first.md", "# First\nalpha\n")
    second = scratch.write("second.md", "# Second\nbeta\n")
    with model(scratch) as server:
        server.add(calls(use("Read", {"file_path": str(first)}, "toolu_lab_read_1"),
                         use("Read", {"file_path": str(second)}, "toolu_lab_read_2"),
                         use("Bash", {"command": "ls", "description": "List files"}, "toolu_lab_bash_1"),
                         text="I'll read both files and list the directory at once."),
                   r.text("first.md says alpha, second.md says beta; the directory holds both."))
        return one_run(scratch, binary, server, "Compare first.md and second.md and list the directory.",
                       "--allowedTools", "Read,Bash")


SUBAGENT_TASK = "Count the lines of notes.txt and report the number."


def subagent_request(request) -> bool:
    """A request of the subagent: its conversation starts with the task the main agent gave it."""
    return any(SUBAGENT_TASK in t for t in texts(request.messages[0] if request.messages else {}))


@scenario("subagent", "The Agent tool starts a subagent that reads a file; its window is a file of its own")
def subagent(scratch: Scratch, binary: Path) -> Capture:
    notes = scratch.write("notes.txt", "first line\nsecond line\n")
    with model(scratch) as server:
        server.add(calls(use("Agent", {"description": "Count lines", "prompt": SUBAGENT_TASK,
                                       "subagent_type": "Explore", "run_in_background": False},
                             "toolu_lab_agent_1")),
                   r.text("The subagent counted 2 lines in notes.txt."))
        server.add_for(subagent_request,
                       calls(use("Read", {"file_path": str(notes)}, "toolu_lab_sub_read_1")),
                       r.text("notes.txt has 2 lines."))
        return one_run(scratch, binary, server, "Use a subagent to count the lines of notes.txt.", "--allowedTools",
                       "Agent,Read")


def session_id(scratch: Scratch) -> str:
    """The id of the (one) main session Claude Code wrote in the scenario's project directory."""
    found = [p.stem for p in scratch.home.glob(".claude/projects/*/*.jsonl")]
    if len(found) != 1:
        raise LabError(f"expected one session file, found {len(found)}")
    return found[0]


@scenario("resume", "A session resumed with --resume <id>: a second run appends to the same file")
def resume(scratch: Scratch, binary: Path) -> Capture:
    notes = scratch.write("notes.txt", "Lunch is at noon.\nThe office closes at six.\n")
    with model(scratch) as server:
        capture = Capture(scratch)
        read_and_answer(capture, server, binary, notes, "When is lunch, according to notes.txt?", "Lunch is at noon.")
        server.add(r.text("The office closes at six, as the second line of notes.txt says."))
        capture.run(claude(binary, "And when does the office close?", "--resume", session_id(scratch)),
                    env(scratch, server), TIMEOUT)
        return finish(capture, server)


SUMMARY = ("<analysis>The user asked what notes.txt says; I read it.</analysis>\n<summary>\n"
           "1. Primary Request and Intent: the user wants to know what notes.txt says.\n"
           "2. Key Technical Concepts: none.\n3. Files and Code Sections: notes.txt (read in full).\n"
           "4. Errors and fixes: none.\n5. Problem Solving: none.\n6. All user messages: \"What does notes.txt say?\"\n"
           "7. Pending Tasks: none.\n8. Current Work: answered the question.\n9. Optional Next Step: none.\n</summary>")


def summary_request(request) -> bool:
    """Claude Code's compaction request: the summary instructions end its last user message."""
    return any("<summary>" in t and "Do NOT call any tools" in t
               for t in texts(request.messages[-1] if request.messages else {}))


@scenario("manual-compact", "/compact with instructions in a continued session, then one more turn")
def manual_compact(scratch: Scratch, binary: Path) -> Capture:
    notes = scratch.write("notes.txt", "The release is on Friday.\nQA signs off on Thursday.\n")
    with model(scratch) as server:
        capture = Capture(scratch)
        read_and_answer(capture, server, binary, notes, "What does notes.txt say?",
                        "The release is on Friday; QA signs off on Thursday.")
        server.add_for(summary_request, r.text(SUMMARY))
        capture.run(claude(binary, "/compact keep the dates", "--continue"), env(scratch, server), TIMEOUT)
        server.add(r.text("The release is on Friday."))
        capture.run(claude(binary, "When is the release?", "--continue"), env(scratch, server), TIMEOUT)
        return finish(capture, server)


# claude-opus-5-5, Claude Code's default model, has a 1,000,000-token window; 2.1.332 compacts on its own once the
# context reaches 977,000 (window - 20,000 output reserve - 3,000), measured: a last usage of 976,850 tokens plus
# the read file does not trigger it, 976,950 does.
NEAR_WINDOW = 979_000


@scenario("auto-compact", "The usage reported near the 1M window makes Claude Code compact before its next request")
def auto_compact(scratch: Scratch, binary: Path) -> Capture:
    notes = scratch.write("notes.txt", "Deploys happen on Tuesdays.\nRollbacks need two approvals.\n")
    with model(scratch) as server:
        server.add(r.Reply([use("Read", {"file_path": str(notes)}, "toolu_lab_read_1")], stop_reason="tool_use",
                           input_tokens=3, cache_creation_input_tokens=2_000, cache_read_input_tokens=NEAR_WINDOW),
                   r.text("Deploys happen on Tuesdays and rollbacks need two approvals."))
        server.add_for(summary_request, r.text(SUMMARY.replace("What does notes.txt say?", "What are the rules?")))
        return one_run(scratch, binary, server, "What are the deploy rules in notes.txt?", "--allowedTools", "Read")


# Where 2.1.332 compacts on its own, one run each side of each line, each a session of its own (its --debug log
# says "autocompact: ... level=warn|compact|blocked effectiveWindow=180000"). Grown by messages (seven parallel
# Reads, the usage counted from the request by the server), the context compacts past the auto-compact line, the
# effective window less 13,000 (167,000 of claude-opus-4-6's 200,000): 166,600 did not, 170,800 did. All of it in
# the first request's prefix (the usage reported as cache reads), it compacts only at the blocking line, 3,000 below
# the effective window ("fixed prefix ~N > threshold 167000 - compaction cannot help"): 176,000 did not, 178,000 did.
THRESHOLD_RUNS = (  # (model, how the context is made, its size: file characters a Read or the first usage)
    ("claude-opus-4-6", "messages", 73_000), ("claude-opus-4-6", "messages", 75_000),
    ("claude-opus-4-6", "prefix", 176_000), ("claude-opus-4-6", "prefix", 178_000),
)
THRESHOLD_READS = 7


@scenario("compact-threshold", "Where Claude Code compacts on its own: a context grown by messages just below and "
                               "above the auto-compact line, and one held in the prefix either side of the blocking "
                               "line")
def compact_threshold(scratch: Scratch, binary: Path) -> Capture:
    return _threshold_runs(scratch, binary, THRESHOLD_RUNS)


def _threshold_runs(scratch: Scratch, binary: Path, runs: tuple[tuple[str, str, int], ...]) -> Capture:
    """Each run a session of its own, its context made as told (`THRESHOLD_RUNS`); the notes say which compacted."""
    with model(scratch) as server:
        capture = Capture(scratch)
        outcomes = []
        for n, (name, made, size) in enumerate(runs):
            if made == "messages":
                parts = [scratch.write(f"run{n}/part{i}.txt", "".join(
                    f"line {k} of part {i}: the quick brown fox jumps over the lazy dog\n" for k in range(size // 60)))
                    for i in range(THRESHOLD_READS)]
                server.add(calls(*[use("Read", {"file_path": str(p)}, f"toolu_lab_read_{n}_{i}")
                                   for i, p in enumerate(parts)]),
                           calls(use("Bash", {"command": "echo ok", "description": "Say ok"}, f"toolu_lab_bash_{n}")),
                           r.text("Read them all."))
            else:
                notes = scratch.write(f"run{n}/notes.txt", "Deploys happen on Tuesdays.\n")
                server.add(r.Reply([r.thinking_block("Read it.", f"sig-lab-{n}"),
                                    use("Read", {"file_path": str(notes)}, f"toolu_lab_read_{n}")],
                                   stop_reason="tool_use", input_tokens=3, cache_creation_input_tokens=2_000,
                                   cache_read_input_tokens=size - 2_003),
                           r.text("Deploys happen on Tuesdays."))
            before = len(server.message_requests)
            server.add_for(summary_request, r.text(SUMMARY))
            capture.run(claude(binary, "Read the files.", "--model", name, "--allowedTools", "Read,Bash"),
                        env(scratch, server), TIMEOUT)
            compacted = any(summary_request(q) for q in server.message_requests[before:])
            server.drop_for(summary_request)
            outcomes.append({"model": name, "made": made, "size": size, "compacted": compacted})
        capture.notes["outcomes"] = outcomes
        return finish(capture, server)


# CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=50 set in the user's settings.json `env` (where users put it, not the shell): the
# auto-compact line drops to 50% of the effective window (90,000 of claude-opus-4-6's 180,000); a context grown by
# messages just below it goes on, one just above it compacts.
OVERRIDE_RUNS = (34_600, 38_400)  # file characters a Read: about 86,000 and 94,000 tokens of context


@scenario("compact-override", "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=50 in settings.json's env: a context grown by "
                              "messages just below and above half the effective window")
def compact_override(scratch: Scratch, binary: Path) -> Capture:
    settings = scratch.home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"env": {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "50"}}, indent=1) + "\n")
    capture = _threshold_runs(scratch, binary, tuple(("claude-opus-4-6", "messages", size) for size in OVERRIDE_RUNS))
    capture.keep(settings)
    return capture


MANAGED = Path("/etc/claude-code")  # where 2.1.332 reads managed settings on Linux (no override)


@scenario("managed-override", "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=50 in /etc/claude-code/managed-settings.json over 70 in "
                              "the user's settings.json: the managed one wins (writes /etc: root, regenerate.py only)")
def managed_override(scratch: Scratch, binary: Path) -> Capture:
    managed = MANAGED / "managed-settings.json"
    if managed.exists() or not os.access(MANAGED if MANAGED.exists() else MANAGED.parent, os.W_OK):
        raise LabError(f"{managed} exists already or cannot be written: the scenario needs it to itself")
    settings = scratch.home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"env": {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "70"}}, indent=1) + "\n")
    made = not MANAGED.exists()
    MANAGED.mkdir(exist_ok=True)
    try:
        managed.write_text(json.dumps({"env": {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "50"}}, indent=1) + "\n")
        capture = _threshold_runs(scratch, binary, tuple(("claude-opus-4-6", "messages", size)
                                                         for size in OVERRIDE_RUNS))
    finally:
        managed.unlink(missing_ok=True)
        if made:
            MANAGED.rmdir()
    kept = scratch.root / "etc-claude-code" / "managed-settings.json"  # the fixture's copy of what was in /etc
    kept.parent.mkdir()
    kept.write_text(json.dumps({"env": {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "50"}}, indent=1) + "\n")
    capture.keep(settings, kept)
    return capture


@scenario("compact-disabled", "autoCompactEnabled false in ~/.claude.json (/config's Auto-compact off): a context "
                              "grown past the auto-compact line goes on uncompacted")
def compact_disabled(scratch: Scratch, binary: Path) -> Capture:
    config = scratch.home / ".claude.json"
    config.write_text(json.dumps({"autoCompactEnabled": False}, indent=1) + "\n")
    capture = _threshold_runs(scratch, binary, (("claude-opus-4-6", "messages", THRESHOLD_RUNS[1][2]),))
    capture.keep(config)
    return capture


@scenario("api-error-retry", "The API answers 529 overloaded once; Claude Code records the failed attempt and retries")
def api_error_retry(scratch: Scratch, binary: Path) -> Capture:
    with model(scratch) as server:
        server.add(r.ApiError(529, "overloaded_error", "Overloaded", retry_after_ms=10),
                   r.text("Hello! How can I help?"))
        return one_run(scratch, binary, server, "Say hello.")


@scenario("tool-search", "ToolSearch loads a deferred tool (WebFetch): the next request carries one more schema")
def tool_search(scratch: Scratch, binary: Path) -> Capture:
    with model(scratch) as server:
        server.add(calls(use("ToolSearch", {"query": "select:WebFetch"}, "toolu_lab_search_1")),
                   r.text("WebFetch is loaded now; I can fetch pages when you need it."))
        return one_run(scratch, binary, server, "Load the WebFetch tool.", "--allowedTools", "ToolSearch")


@scenario("mcp-tools", "An MCP server on stdio (tests/agents/mcp_server.py): its deferred mcp__lab__* tools are "
                       "loaded with ToolSearch, then one is called")
def mcp_tools(scratch: Scratch, binary: Path) -> Capture:
    server_script = Path(__file__).with_name("mcp_server.py")
    config = scratch.write("mcp.json", json.dumps(
        {"mcpServers": {"lab": {"type": "stdio", "command": "python3", "args": [str(server_script)]}}}))
    with model(scratch) as server:
        server.add(calls(use("ToolSearch", {"query": "select:mcp__lab__lookup_ticket,mcp__lab__list_queues"},
                             "toolu_lab_search_1")),
                   calls(use("mcp__lab__lookup_ticket", {"number": 42}, "toolu_lab_mcp_1")),
                   r.text("Ticket 42 is 'Login page times out', open, with the web team."))
        return one_run(scratch, binary, server, "What is ticket 42 about?", "--mcp-config", str(config),
                       "--strict-mcp-config", "--allowedTools", "ToolSearch,mcp__lab__lookup_ticket")


CLEAR_TOOL_USES = "clear_tool_uses_20250919"
# Traffic to anywhere but the scripted server goes to a port nothing listens on (for a scenario that must leave
# Claude Code's nonessential traffic on): it fails at once, offline or not.
NOWHERE_ELSE = {"HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9",
                "NO_PROXY": "127.0.0.1,localhost"}
PAUSE_HOURS = 3  # how far the first run's timestamps are moved back: a pause past Claude Code's 65-minute idle rule
IDLE_FLAG = "tengu_jiggly_blossom"  # the feature flag behind 2.1.332's clearing of old tool results after a pause


def move_back(session: Path, hours: float) -> None:
    """Move every `timestamp` of a session file back by `hours`, standing for a pause since it was written."""
    def earlier(match: re.Match) -> str:
        when = datetime.fromisoformat(match.group(1).replace("Z", "+00:00")) - timedelta(hours=hours)
        return f'"timestamp":"{when.strftime("%Y-%m-%dT%H:%M:%S.")}{when.microsecond // 1000:03d}Z"'
    session.write_text(re.sub(r'"timestamp":"([^"]+)"', earlier, session.read_text()))


@scenario("microcompact", "After a 3-hour pause a resumed session asks the API to clear old tool results "
                          "(clear_tool_uses_20250919); the server clears them and the next request sends them cleared")
def microcompact(scratch: Scratch, binary: Path) -> Capture:
    files = [scratch.write(f"logs/part{i:02d}.txt", f"part {i}: " + "status ok, latency nominal; " * 400 + "\n")
             for i in range(30)]
    extra = scratch.write("logs/summary.txt", "All 30 parts report ok.\n")
    # The flag as a client that has been online holds it in its cache; Claude Code reads it only while its
    # nonessential traffic (telemetry included) is on, so that traffic goes to a proxy that refuses everything.
    flags = {IDLE_FLAG: "on"}
    (scratch.home / ".claude.json").write_text(json.dumps({"cachedFeatureFlags": flags,
                                                           "cachedGrowthBookFeatures": flags}))
    with MockAnthropicServer(prompt_cache=True, context_editing=True) as server:
        try:
            server.add(calls(*[use("Read", {"file_path": str(f)}, f"toolu_lab_read_{i:02d}")
                               for i, f in enumerate(files)]),
                       r.text("All 30 parts read: every one reports ok."))
            capture = Capture(scratch)
            environment = agent_env(scratch, {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": FAKE_KEY,
                                              **NOWHERE_ELSE})
            capture.run(claude(binary, "Read every file under logs/ (part00 to part29).", "--allowedTools", "Read"),
                        environment, TIMEOUT)
            move_back(scratch.home.joinpath(".claude", "projects").glob("*/*.jsonl").__next__(), PAUSE_HOURS)
            server.add(calls(use("Read", {"file_path": str(extra)}, "toolu_lab_read_30")),
                       r.text("The summary agrees: all 30 parts report ok."))
            capture.run(claude(binary, "Check logs/summary.txt too.", "--resume", session_id(scratch),
                               "--allowedTools", "Read"), environment, TIMEOUT)
            capture.notes["pause"] = (f"the first run's timestamps were moved back {PAUSE_HOURS} hours before the "
                                      f"second run; ~/.claude.json held the flag {IDLE_FLAG}=on in its cache")
            asked = [q for q in server.message_requests if CLEAR_TOOL_USES in json.dumps(q.body.get("context_management"))]
            if not asked:
                raise LabError("the resumed session did not ask the API to clear tool results")
            return finish(capture, server)
        finally:
            keep_log(scratch, server.log)
