"""Generate the bundled sample sessions in inspector/sessions/ deterministically (fixed seeds, fixed clock).

    python tools/make_samples.py            # rewrite the samples
    python tools/make_samples.py --check    # exit 1 if the committed samples differ from what this script makes

Three samples that show the tool off, all synthetic (nothing is copied from the corpus):
- agent-short.jsonl: a short session of our own agent in the neutral format (system prompt and tools recorded).
- claude-code-autocompact.jsonl: a Claude Code-format session that grows past the 167k auto-compact threshold and
  compacts, usage on every response so the figures are measured.
- claude-code-tool-heavy.jsonl: a Claude Code-format session dominated by large Read/Bash/Grep results, the kind
  microcompaction clears.

Usage figures are derived from the content (about 3 characters a token plus an unrecorded prefix, as real sessions
show), so measured and estimated figures disagree the way they do in real transcripts.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "inspector" / "sessions"
START = datetime(2026, 3, 14, 9, 30, tzinfo=timezone.utc)

WORDS = ("config reader writer cache index batch record parse token window limit buffer stream event handler "
         "session client server request response retry backoff queue worker schedule report metric sample "
         "station forecast reading sensor ledger account entry balance journal posting period").split()
MODULES = ("config", "storage", "ingest", "api", "models", "scheduler", "metrics", "cli", "utils", "forecast")


def _name(rng: random.Random, n: int = 2) -> str:
    return "_".join(rng.choice(WORDS) for _ in range(n))


def python_file(rng: random.Random, lines: int) -> str:
    """Plausible Python source with line numbers, as Claude Code's Read tool returns it."""
    out: list[str] = ['"""' + f"{_name(rng, 3).replace('_', ' ').capitalize()}." + '"""', "",
                      "from __future__ import annotations", "", "import json", "import logging",
                      f"from .{rng.choice(MODULES)} import {_name(rng).title().replace('_', '')}", "",
                      "log = logging.getLogger(__name__)", ""]
    while len(out) < lines:
        fn = _name(rng)
        args = ", ".join(_name(rng, 1) for _ in range(rng.randint(1, 3)))
        out += ["", f"def {fn}({args}) -> dict:", f'    """Return the {_name(rng, 2).replace("_", " ")} for {args}."""']
        for _ in range(rng.randint(3, 9)):
            v = _name(rng, 1)
            out.append(rng.choice([
                f"    {v} = {_name(rng)}({rng.choice(args.split(', '))})",
                f"    if {v} is None:\n        raise ValueError(\"missing {v}\")",
                f"    log.debug(\"{fn}: %s\", {v})",
                f"    for item in {v}.items():\n        {_name(rng, 1)}[item[0]] = item[1]",
                f"    {v} = json.loads({v}) if isinstance({v}, str) else {v}",
            ]))
        out.append(f"    return {{\"{_name(rng, 1)}\": {_name(rng, 1)}}}")
    return "\n".join(f"{i + 1:>6}\u2192{line}" for i, line in enumerate("\n".join(out).split("\n")[:lines]))


def pytest_output(rng: random.Random, tests: int, failures: int) -> str:
    out = ["============================= test session starts ==============================",
           "platform linux -- Python 3.12.3, pytest-8.3.4, pluggy-1.5.0", f"collected {tests} items", ""]
    for m in rng.sample(MODULES, 6):
        dots = "".join(rng.choice("....F") if failures else "." for _ in range(rng.randint(8, 30)))
        out.append(f"tests/test_{m}.py {dots}")
    for i in range(failures):
        fn = _name(rng)
        out += ["", f"___________________________ test_{fn} ___________________________", "",
                f"    def test_{fn}():", f">       assert {fn}(sample) == expected",
                f"E       AssertionError: assert {{'{_name(rng, 1)}': {rng.randint(1, 99)}}} == "
                f"{{'{_name(rng, 1)}': 0}}",
                "", f"tests/test_{rng.choice(MODULES)}.py:{rng.randint(10, 300)}: AssertionError"]
    out.append(f"==== {failures} failed, {tests - failures} passed in {rng.uniform(0.5, 9):.2f}s ====")
    return "\n".join(out)


def grep_output(rng: random.Random, hits: int) -> str:
    return "\n".join(f"src/{rng.choice(MODULES)}/{_name(rng, 1)}.py:{rng.randint(1, 400)}:    "
                     f"{_name(rng, 1)} = {_name(rng)}({_name(rng, 1)})" for _ in range(hits))


def git_log(rng: random.Random, n: int) -> str:
    return "\n".join(f"{rng.getrandbits(28):07x} {_name(rng, 3).replace('_', ' ').capitalize()}" for _ in range(n))


class Clock:
    def __init__(self, rng: random.Random) -> None:
        self.rng, self.t = rng, START

    def tick(self, lo: float = 1, hi: float = 20) -> str:
        self.t += timedelta(seconds=self.rng.uniform(lo, hi))
        return self.t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{self.t.microsecond // 1000:03d}Z"


def _tokens(rng: random.Random, chars: int) -> int:
    """What the API would have counted: about 3 characters a token, with some noise."""
    return int(chars / 3.0 * rng.uniform(0.95, 1.05))


class ClaudeCodeWriter:
    """Writes Claude Code transcript lines: split assistant responses, usage on every line, a parentUuid chain."""

    def __init__(self, seed: int, cwd: str, model: str, prefix_tokens: int) -> None:
        self.rng = random.Random(seed)
        self.clock = Clock(self.rng)
        self.ids = random.Random(seed + 1)
        self.session_id = self._uuid()
        self.cwd, self.model = cwd, model
        self.lines: list[dict] = []
        self.parent: str | None = None
        self.context = prefix_tokens  # measured context of the next request, before the new messages
        self.pending_chars = 0

    def _uuid(self) -> str:
        return str(uuid.UUID(int=self.ids.getrandbits(128), version=4))

    def _id(self, prefix: str) -> str:
        return prefix + "".join(self.ids.choice("ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz123456789")
                                for _ in range(24))

    def _envelope(self, kind: str, **extra: object) -> dict:
        u = self._uuid()
        entry = {"parentUuid": self.parent, "isSidechain": False, "userType": "external", "cwd": self.cwd,
                 "sessionId": self.session_id, "version": "2.1.39", "gitBranch": "main", "type": kind, **extra,
                 "uuid": u, "timestamp": self.clock.tick()}
        self.parent = u
        self.lines.append(entry)
        return entry

    def progress(self, command: str) -> None:
        self.lines.append({"parentUuid": self.parent, "isSidechain": False, "type": "progress",
                           "data": {"type": "hook_progress", "hookEvent": "PostToolUse", "command": command},
                           "sessionId": self.session_id, "timestamp": self.clock.tick(0, 1), "uuid": self._uuid()})

    def user(self, text: str) -> None:
        self.pending_chars += len(text)
        self._envelope("user", message={"role": "user", "content": text})

    def assistant(self, blocks: list[dict]) -> list[str]:
        """One API response written as one line per block; returns the tool_use ids it made."""
        self.context += _tokens(self.rng, self.pending_chars) + self.rng.randint(3, 12)
        self.pending_chars = 0
        msg_id, req_id = self._id("msg_01"), self._id("req_011C")
        out_chars = sum(len(json.dumps(b)) for b in blocks)
        output = max(8, _tokens(self.rng, out_chars))
        creation = min(self.context, self.rng.randint(200, 3000))
        ids = []
        for i, block in enumerate(blocks):
            if block["type"] == "tool_use":
                block = {**block, "id": self._id("toolu_01")}
                ids.append(block["id"])
            last = i == len(blocks) - 1
            usage = {"input_tokens": 3, "cache_creation_input_tokens": creation,
                     "cache_read_input_tokens": self.context - creation - 3,
                     "output_tokens": output if last else self.rng.randint(1, 30), "service_tier": "standard"}
            self._envelope("assistant", message={
                "model": self.model, "id": msg_id, "type": "message", "role": "assistant", "content": [block],
                "stop_reason": ("tool_use" if ids else "end_turn") if last else None, "stop_sequence": None,
                "usage": usage}, requestId=req_id)
        self.context += output
        return ids

    def tool_result(self, tool_id: str, content: str, is_error: bool = False) -> None:
        self.pending_chars += len(content) + 40
        self._envelope("user", message={"role": "user", "content": [
            {"tool_use_id": tool_id, "type": "tool_result", "content": content, "is_error": is_error}]})

    def compact(self, summary: str, trigger: str = "auto") -> None:
        pre = self.context
        boundary = self._envelope("system", subtype="compact_boundary", content="Conversation compacted",
                                  isMeta=False, level="info", compactMetadata={"trigger": trigger, "preTokens": pre})
        boundary["logicalParentUuid"], boundary["parentUuid"] = boundary["parentUuid"], None
        self.context = self.prefix_after_compact
        self.pending_chars = 0
        self._envelope("user", message={"role": "user", "content": summary}, isCompactSummary=True,
                       isVisibleInTranscriptOnly=True)
        self.pending_chars += len(summary)

    prefix_after_compact = 0

    def dump(self) -> str:
        return "".join(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n" for line in self.lines)


def _tool(name: str, **inp: object) -> dict:
    return {"type": "tool_use", "name": name, "input": inp}


def _text(text: str) -> dict:
    return {"type": "text", "text": text}


def work_turn(w: ClaudeCodeWriter, rng: random.Random, big: bool) -> None:
    """One stretch of agent work: read files, grep, run tests, edit, with results of realistic sizes."""
    mod = rng.choice(MODULES)
    path = f"{w.cwd}/src/{mod}/{_name(rng, 1)}.py"
    (tid,) = w.assistant([_text(f"Let me look at `{path}` first."), _tool("Read", file_path=path)])
    w.tool_result(tid, python_file(rng, rng.randint(250, 700) if big else rng.randint(60, 200)))
    w.progress("ruff check --quiet")
    (tid,) = w.assistant([_tool("Grep", pattern=_name(rng), path=f"{w.cwd}/src", output_mode="content")])
    w.tool_result(tid, grep_output(rng, rng.randint(40, 160) if big else rng.randint(5, 30)))
    if rng.random() < 0.7:
        thinking = {"type": "thinking", "thinking": f"The {_name(rng).replace('_', ' ')} path never handles an "
                    f"empty {_name(rng, 1)}; a guard in {mod} is the smallest fix.", "signature": "sig"}
        edit = _tool("Edit", file_path=path, old_string="    return {}",
                     new_string=f"    return {{}} if not {_name(rng, 1)} else {{}}")
        (tid,) = w.assistant([thinking, edit])
        w.tool_result(tid, f"The file {path} has been updated.")
    failures = rng.choice([0, 0, 1, 2])
    (tid,) = w.assistant([_tool("Bash", command="python -m pytest -q", description="Run the test suite")])
    w.tool_result(tid, pytest_output(rng, rng.randint(120, 480), failures) * (3 if big else 1), is_error=failures > 0)


def make_autocompact() -> str:
    rng = random.Random(1401)
    w = ClaudeCodeWriter(1402, "/home/user/projects/weatherd", "claude-sonnet-4-5-20250929", 18_734)
    w.prefix_after_compact = 18_734
    w.user("The ingest worker drops readings when a station reports twice in the same minute. "
           "Find out why and fix it, with a test.")
    turns = 0
    while w.context < 166_000:
        work_turn(w, rng, big=turns % 3 == 0)
        turns += 1
        if turns % 4 == 0:
            w.assistant([_text(f"Progress: the {_name(rng).replace('_', ' ')} step now dedupes by "
                               f"(station, minute). {rng.randint(2, 9)} tests still fail in {rng.choice(MODULES)}.")])
            w.user(rng.choice(["Keep going.", "Good. Also check the scheduler path.",
                               "Don't touch the public API, please.", "Run the full suite before you stop."]))
    summary = ("This session is being continued from a previous conversation that ran out of context. "
               "The conversation is summarized below:\n\nAnalysis:\nThe user asked to fix dropped duplicate-minute "
               "readings in the ingest worker.\n\nSummary:\n1. Primary Request and Intent:\n   Fix the ingest "
               "worker so two readings from one station in the same minute are both kept, with a test.\n"
               "2. Key Technical Concepts:\n   - dedupe key (station, minute) -> (station, timestamp)\n"
               "3. Files and Code Sections:\n" + "".join(f"   - src/{m}/{_name(rng, 1)}.py\n" for m in MODULES) +
               "4. Errors and fixes:\n   - AssertionError in test_ingest: fixed by keying on the full timestamp\n"
               "5. Pending Tasks:\n   - run the whole suite; update the changelog\n"
               "6. Current Work:\n   Verifying the scheduler path.\n")
    w.compact(summary)
    w.assistant([_text("Picking up from the summary: the remaining step is the scheduler path."),
                 _tool("Read", file_path=f"{w.cwd}/src/scheduler/worker.py")])
    w.tool_result(w.lines[-1]["message"]["content"][0]["id"], python_file(rng, 180))
    for _ in range(3):
        work_turn(w, rng, big=False)
    w.assistant([_text("All 412 tests pass. Readings from the same station in the same minute are now kept; the fix "
                       "keys deduplication on the full timestamp and test_ingest covers it.")])
    return w.dump()


def make_tool_heavy() -> str:
    rng = random.Random(2701)
    w = ClaudeCodeWriter(2702, "/home/user/projects/ledger", "claude-opus-4-5-20251101", 21_402)
    w.user("Audit the ledger package: read every module, run the tests, and tell me which parts are untested.")
    for mod in MODULES:
        path = f"{w.cwd}/ledger/{mod}.py"
        (tid,) = w.assistant([_tool("Read", file_path=path)])
        w.tool_result(tid, python_file(rng, rng.randint(500, 900)))
    (tid,) = w.assistant([_tool("Bash", command="git log --oneline -200", description="Recent history")])
    w.tool_result(tid, git_log(rng, 200))
    for _ in range(4):
        (tid,) = w.assistant([_tool("Grep", pattern=_name(rng), path=w.cwd, output_mode="content")])
        w.tool_result(tid, grep_output(rng, rng.randint(150, 300)))
        w.progress("grep hook")
    (tid,) = w.assistant([_tool("Bash", command="python -m pytest --cov=ledger", description="Tests with coverage")])
    w.tool_result(tid, pytest_output(rng, 640, 3) * 4)
    (tid,) = w.assistant([_tool("WebFetch", url="https://docs.python.org/3/library/decimal.html",
                                prompt="rounding modes")])
    w.tool_result(tid, "\n".join(f"decimal.ROUND_{_name(rng, 1).upper()}: {_name(rng, 6).replace('_', ' ')}."
                                 for _ in range(400)))
    w.assistant([_text("Untested: ledger/forecast.py (no tests at all), the error paths of ledger/storage.py and "
                       "ledger/cli.py. Most of this window is old Read and Bash output that microcompaction would "
                       "clear without losing anything the next step needs.")])
    return w.dump()


def make_agent_short() -> str:
    rng = random.Random(3301)
    clock = Clock(rng)
    system = ("You are a coding agent working in /home/user/projects/notes. Use the tools to read and change files; "
              "keep answers short.")
    tools = [{"name": "read_file", "description": "Read a file", "input_schema": {
                 "type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}},
             {"name": "run", "description": "Run a shell command", "input_schema": {
                 "type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}]
    lines: list[dict] = [{"event": "session", "version": 1, "cwd": "/home/user/projects/notes",
                          "model": "claude-sonnet-4-5-20250929", "system": system, "tools": tools,
                          "created": clock.tick()}]
    context = 1_180
    n = 0

    def assistant(content: list[dict], new_chars: int) -> None:
        nonlocal context, n
        n += 1
        context += _tokens(rng, new_chars)
        out = max(10, _tokens(rng, len(json.dumps(content))))
        lines.append({"role": "assistant", "content": content, "model": "claude-sonnet-4-5-20250929",
                      "timestamp": clock.tick(),
                      "usage": {"id": f"msg_agent_{n:03d}", "input_tokens": context,
                                "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
                                "output_tokens": out}})
        context += out

    def tool(call_id: str, text: str) -> int:
        lines.append({"role": "tool", "tool_call_id": call_id, "content": text, "timestamp": clock.tick()})
        return len(text)

    prompt = "Add a --tag filter to `notes list`."
    lines.append({"role": "user", "content": prompt, "timestamp": clock.tick()})
    assistant([_text("I'll read the CLI first."),
               {"type": "tool_use", "id": "call_1", "name": "read_file", "input": {"path": "notes/cli.py"}}],
              len(prompt))
    c = tool("call_1", python_file(rng, 90))
    assistant([{"type": "tool_use", "id": "call_2", "name": "run", "input": {"command": "pytest -q"}}], c)
    c = tool("call_2", pytest_output(rng, 48, 0))
    assistant([_text("Tests pass. Adding the option and a test."),
               {"type": "tool_use", "id": "call_3", "name": "run",
                "input": {"command": "python -m notes list --tag work"}}], c)
    c = tool("call_3", "2026-03-12  standup notes            [work]\n2026-03-13  release checklist        [work]")
    assistant([_text("Done: `notes list --tag work` shows only notes tagged work; tests/test_cli.py covers it.")], c)
    prompt = "Thanks. Does it also work with two tags?"
    lines.append({"role": "user", "content": prompt, "timestamp": clock.tick()})
    assistant([_text("Not yet: --tag takes one value. Repeating it (`--tag a --tag b`) would need action='append'; "
                     "say if you want that.")], len(prompt))
    return "".join(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n" for line in lines)


SAMPLES = {"agent-short.jsonl": make_agent_short, "claude-code-autocompact.jsonl": make_autocompact,
           "claude-code-tool-heavy.jsonl": make_tool_heavy}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed samples, write nothing")
    parser.add_argument("--out", type=Path, default=OUT, help=f"directory to write to (default {OUT})")
    args = parser.parse_args(argv)
    stale = []
    for name, make in SAMPLES.items():
        text, path = make(), args.out / name
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(name)
        else:
            path.write_text(text, encoding="utf-8")
            print(f"{path}: {len(text.encode()):,} bytes, {text.count(chr(10)):,} lines")
    if stale:
        print("stale samples (run tools/make_samples.py): " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
