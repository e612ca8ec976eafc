"""Run a real agent offline against the scripted chat server and keep what it wrote as a fixture.

    python tests/agents/record.py kimi basic tests/fixtures/agents/kimi-1.49.0/basic

Each agent runs with a scratch HOME (and its own store variables pointed inside it), a fake key and the local
server's address only; nothing reaches the network. Afterwards the session files the agent wrote are copied to the
output folder (under the names the agent gave them, its store's layout kept below `store/`), with the server's log
(`server.jsonl`: every request as received and the reply sent) and `run.json` (the command, the agent's version,
its exit status). Scratch paths inside the copies are left as written: they are the agent's own record.

Agents (each installed outside the repository; the first argument of each `AGENTS` entry says how):
    kimi-code  Kimi Code, Kimi CLI's successor (`install.py kimi-code`: npm, with the Node.js 22 it needs;
               `KIMI_CODE_BIN` names another `kimi`), its model given by environment (provider type `kimi`) at the
               local server (in `-p`, `/compact` is sent to the model: its fixture was recorded in the app).
    kimi     Kimi CLI, a Python package: `pip install kimi-cli` into a venv on Python >= 3.12 (`KIMI_BIN` names its
             `kimi` binary), provider type `kimi` (OpenAI-compatible chat) at the local server.
    copilot  GitHub Copilot CLI (`npm install @github/copilot`; `COPILOT_BIN` names its `copilot` binary) in its
             offline bring-your-own-key mode: `COPILOT_OFFLINE=true`, `COPILOT_PROVIDER_BASE_URL` at the local server
             (type openai, chat completions), so no GitHub sign-in is needed.
    cline    Cline CLI (`npm install cline`; `CLINE_BIN` names its `cline` binary), which writes the Cline SDK's
             `<id>.messages.json`: `cline auth -p openai-compatible -b URL` then `cline --json PROMPT`. It starts a
             background hub daemon; the daemon of this run (found by the scratch directory in its command line) is
             ended by its pid afterwards.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import install  # noqa: E402
from chat_server import serve  # noqa: E402

FAKE_KEY = "sk-fake-offline-0000"
# Not copied from a store: configuration (it names the local server), logs, locks, telemetry queues, device ids.
KEEP_OUT = shutil.ignore_patterns("config.toml", "*.log", "logs", "bin", "*.lock", "telemetry", "device_id", "*.db",
                                  "*.db-*", "providers.json", "cache", ".index-dirty", ".index-cache", "user-history",
                                  "workspace-trust", "tui.toml")
README = "# demo\n\nA tiny project used to record agent sessions offline.\n"

# Scenarios: the prompt and the server's script of turns, per agent (tool names are the agent's own).
def _basic(read: str) -> dict:
    return {"prompt": "Read README.md and tell me what the project is.",
            "script": [{"tool": read, "arguments": {"path": "README.md"}},
                       {"text": "It is a tiny demo project used to record agent sessions."}]}


def _compaction(read: str, look: dict, summary: dict) -> dict:
    """The third reply reports 230,000 prompt tokens of a 262,144 window: past Kimi's 85% trigger, so the next step
    compacts first (a request whose prompt asks for a summary, answered by `summary`), then answers. `look`: the
    second call, which finds no LICENSE."""
    return {"prompt": "Read README.md and LICENSE, then summarise them.",
            "script": [{"tool": read, "arguments": {"path": "README.md"}}, look,
                       {"tool": read, "arguments": {"path": "README.md", "line_offset": 2},
                        "usage": {"prompt_tokens": 230000, "cached_tokens": 0, "completion_tokens": 40}},
                       summary | {"text": "The user asked for README.md and LICENSE to be read and summarised; "
                                          "README.md was read (a tiny demo project); there is no LICENSE."},
                       {"text": "Summary: a tiny demo project used to record sessions; no LICENSE."}]}


SCENARIOS: dict[str, dict[str, dict]] = {
    "kimi": {
        "basic": _basic("ReadFile"),
        # Kimi CLI sends the compaction with a system prompt of its own: matched, out of order.
        "compaction": _compaction("ReadFile", {"tool": "Glob", "arguments": {"pattern": "*"}},
                                  {"match": "compacts conversation context"}),
    },
    "kimi-code": {
        "basic": _basic("Read"),
        # Kimi Code's compaction request comes next: answered in order (its prompt asks for a "handoff summary").
        # No Glob or Grep: without rg on PATH, Kimi Code downloads ripgrep for them.
        "compaction": _compaction("Read", {"tool": "Read", "arguments": {"path": "LICENSE"}}, {}),
        # The model thinks before it calls a tool and before it answers (`reasoning_content`): `think` parts.
        "thinking": {"prompt": "Read README.md and tell me what the project is.",
                     "script": [{"tool": "Read", "arguments": {"path": "README.md"}, "reasoning": "The user wants "
                                 "to know what the project is; README.md should say. I will read it."},
                                {"text": "It is a tiny demo project used to record agent sessions.",
                                 "reasoning": "README.md says it is a tiny project used to record agent sessions."}]},
        # A subagent (the Agent tool, run in the foreground): its own loop, its own wire file beside the main one.
        "subagent": {"prompt": "Ask a subagent what README.md says.",
                     "script": [{"tool": "Agent", "arguments": {"prompt": "Read README.md and say what it is.",
                                                                "description": "read the readme",
                                                                "run_in_background": False}},
                                {"tool": "Read", "arguments": {"path": "README.md"}},
                                {"text": "README.md describes a tiny demo project."},
                                {"text": "The subagent says README.md describes a tiny demo project."}]},
    },
    "copilot": {
        "basic": {"prompt": "Read README.md and tell me what the project is.",
                  "script": [{"tool": "view", "arguments": {"path": "{work}/README.md"}},
                             {"text": "It is a tiny demo project used to record agent sessions."}]},
        # A 15,000-token prompt limit (COPILOT_PROVIDER_MAX_PROMPT_TOKENS) of which the system prompt and tools
        # take ~12k: three tool outputs of ~600 tokens pass 80% of it, where Copilot compacts in the background.
        "compaction": {"prompt": "Count to 300 three times with seq, then tell me the last number.",
                       "env": {"COPILOT_PROVIDER_MAX_PROMPT_TOKENS": "15000"},
                       "script": [{"match": "The history is being compacted",
                                   "text": "<overview>The user asked to count to 300 three times with seq; the "
                                           "first counts ran (1-300, 301-600).</overview>"}]
                                 + [{"tool": "bash", "arguments": {"command": f"seq {a} {a + 299}",
                                                                   "description": "count"}}
                                    for a in (1, 301, 601, 901, 1201)]
                                 + [{"text": "The last number was 1500."}] * 4},
    },
    "cline": {
        "basic": {"prompt": "Read README.md and tell me what the project is.",
                  "script": [{"tool": "read_files", "arguments": {"files": [{"path": "{work}/README.md"}]}},
                             {"text": "It is a tiny demo project used to record agent sessions."}]},
    },
}


def run_cline(scenario: dict, url: str, home: Path, work: Path) -> tuple[list[str], dict[str, str], Path]:
    binary = os.environ.get("CLINE_BIN") or shutil.which("cline") or "cline"
    subprocess.run([binary, "auth", "-p", "openai-compatible", "-k", FAKE_KEY, "-m", "gpt-4.1", "-b", f"{url}/v1"],
                   env={"HOME": str(home), "PATH": os.environ.get("PATH", "")}, cwd=work, capture_output=True,
                   timeout=120, check=True)
    return [binary, "--json", scenario["prompt"]], {}, home / ".cline" / "data" / "sessions"


def end_leftovers(scratch: str) -> None:
    """End the processes this run left behind (a daemon naming the scratch directory), each by its pid."""
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmdline = (proc / "cmdline").read_bytes()
            except OSError:
                continue
            if scratch.encode() in cmdline:
                try:
                    os.kill(int(proc.name), 15)
                except OSError:
                    pass


def run_copilot(scenario: dict, url: str, home: Path, work: Path) -> tuple[list[str], dict[str, str], Path]:
    binary = os.environ.get("COPILOT_BIN") or shutil.which("copilot") or "copilot"
    env = {"COPILOT_OFFLINE": "true", "COPILOT_PROVIDER_BASE_URL": f"{url}/v1", "COPILOT_PROVIDER_API_KEY": FAKE_KEY,
           "COPILOT_MODEL": "gpt-4.1", "COPILOT_HOME": str(home / ".copilot")} | scenario.get("env", {})
    return [binary, "-p", scenario["prompt"], "--allow-all-tools"], env, home / ".copilot" / "session-state"


def run_kimi(scenario: dict, url: str, home: Path, work: Path) -> tuple[list[str], dict[str, str], Path]:
    binary = os.environ.get("KIMI_BIN") or shutil.which("kimi") or "kimi"
    share = home / ".kimi"
    share.mkdir(parents=True, exist_ok=True)
    (share / "config.toml").write_text(
        'default_model = "scripted"\n\n'
        '[providers.local]\ntype = "kimi"\n'
        f'base_url = "{url}/v1"\napi_key = "{FAKE_KEY}"\n\n'
        '[models.scripted]\nprovider = "local"\nmodel = "kimi-k2-scripted"\nmax_context_size = 262144\n')
    env = {"KIMI_SHARE_DIR": str(share)}
    return [binary, "--print", "--yolo", "-w", str(work), "-p", scenario["prompt"]], env, share


def run_kimi_code(scenario: dict, url: str, home: Path, work: Path) -> tuple[list[str], dict[str, str], Path]:
    binary = os.environ.get("KIMI_CODE_BIN") or str(install.binary("kimi-code") or shutil.which("kimi") or "kimi")
    store = home / ".kimi-code"
    env = {"PATH": install.path_for("kimi-code"), "KIMI_CODE_HOME": str(store), "KIMI_MODEL_NAME": "kimi-k2-scripted",
           "KIMI_MODEL_API_KEY": FAKE_KEY, "KIMI_MODEL_PROVIDER_TYPE": "kimi", "KIMI_MODEL_BASE_URL": f"{url}/v1",
           "KIMI_MODEL_MAX_CONTEXT_SIZE": "262144", "KIMI_CODE_NO_AUTO_UPDATE": "1", "KIMI_DISABLE_TELEMETRY": "1"}
    return [binary, "-p", scenario["prompt"]], env, store


RUNNERS = {"kimi": run_kimi, "kimi-code": run_kimi_code, "copilot": run_copilot, "cline": run_cline}


def version(agent: str, cmd: list[str]) -> str:
    out = subprocess.run([cmd[0], "--version"], capture_output=True, text=True, timeout=120)
    lines = (out.stdout or out.stderr).strip().splitlines()
    return next((line for line in lines if any(c.isdigit() for c in line)), "?")


def record(agent: str, name: str, out: Path) -> int:
    scenario = SCENARIOS[agent][name]
    out.mkdir(parents=True, exist_ok=True)
    log = out / "server.jsonl"
    log.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix=f"lab-{agent}-") as scratch:
        home, work = Path(scratch) / "home", Path(scratch) / "work"
        script = json.loads(json.dumps(scenario["script"]).replace("{work}", str(work)))
        server = serve(script, log)
        url = f"http://127.0.0.1:{server.server_address[1]}"
        home.mkdir()
        work.mkdir()
        (work / "README.md").write_text(README)
        cmd, extra, store = RUNNERS[agent](scenario, url, home, work)
        env = {"HOME": str(home), "PATH": os.environ.get("PATH", ""), "LANG": "C.UTF-8", "TERM": "dumb",
               "NO_COLOR": "1"} | extra
        done = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=600)
        end_leftovers(scratch)
        target = out / "store"
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(store, target, ignore=KEEP_OUT)
        (out / "run.json").write_text(json.dumps({
            "agent": agent, "scenario": name, "version": version(agent, cmd), "command": cmd[1:],
            "returncode": done.returncode, "stdout": done.stdout[-4000:], "stderr": done.stderr[-4000:]},
            indent=1) + "\n")
    server.shutdown()
    return done.returncode


if __name__ == "__main__":
    sys.exit(record(sys.argv[1], sys.argv[2], Path(sys.argv[3])))
