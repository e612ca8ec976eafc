"""The lab's common harness: what every scenario that drives a real agent needs, whatever the agent.

A scenario runs the real program (installed by `install.py`) against a local scripted model server, in a scratch
directory of its own, and keeps what the agent wrote (its transcripts) and what the server saw (every request as
received, every response and usage figure it returned) as a fixture that the normal test run reads without npm:

    scratch = Scratch.fresh("claude-code", "read-file")     # /tmp/context-inspector-lab/claude-code/read-file/
    env = agent_env(scratch, {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": FAKE_KEY})
    capture = Capture(scratch)
    capture.run([binary, "-p", "hi"], env, timeout=120)
    capture.keep(*scratch.home.glob(".claude/projects/*/*.jsonl"))
    capture.server_log = server.log
    write_fixture("claude-code", "2.1.332", "read-file", capture)  # refuses when a secret shows up in it

Paths are fixed (not random temporary directories), so an agent that names files after its working directory
(Claude Code's project directories) writes the same names on every regeneration, and a fixture regenerated
without a change in the agent differs only in what the agent itself makes random (ids, timestamps).

The agent's environment holds nothing of ours: PATH, HOME and the XDG directories (all inside the scratch
directory), a fixed locale and time zone, and what the scenario adds (the fake key and the server's address).
An agent module (`claude_code.py`, `codex.py`, ...) lists its scenarios in `SCENARIOS`; `regenerate.py` runs them.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from inspector.core.secrets import KEY_PATTERNS

AGENTS_DIR = Path(__file__).resolve().parent
REPO = AGENTS_DIR.parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "agents"

# Every scratch directory lives below this fixed root ($CONTEXT_INSPECTOR_LAB_ROOT moves it, e.g. for a second
# checkout regenerating at the same time; fixtures then name other paths).
LAB_ROOT = Path(os.environ.get("CONTEXT_INSPECTOR_LAB_ROOT") or "/tmp/context-inspector-lab")

# The only credential an agent ever gets. It is not a key of any service; it must never appear in a fixture
# either (the servers leave authentication headers out of their logs), which `find_secrets` checks.
FAKE_KEY = "lab-fake-key-0000"

SERVER_LOG = "server.jsonl"  # in a fixture: one line per exchange the server had
META = "scenario.json"  # in a fixture: the scenario, the agent's version, each run's command line and exit status

# Environment variables of the process running the lab whose values must never reach what the lab writes.
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE", re.I)


class LabError(Exception):
    """A scenario that could not run as scripted (timeout, the agent failing, a secret in its output)."""


class Unrunnable(LabError):
    """A scenario this machine cannot run (it needs root, say): a live test skips it."""


class Server(Protocol):
    """What the lab needs of a scripted model server (tests/mock_api for Anthropic; others for other APIs)."""

    @property
    def url(self) -> str: ...

    @property
    def log(self) -> list[dict]: ...  # one JSON-ready dict per exchange, request as received + response sent


@dataclass(frozen=True)
class Scratch:
    """One scenario's directories: `home` (HOME, and the XDG directories inside it at their default places),
    `work` (the agent's working directory) and `tmp` (TMPDIR), all under `root`."""

    root: Path

    @classmethod
    def fresh(cls, agent: str, scenario: str, base: Path | None = None) -> Scratch:
        """The scenario's directories at their fixed place, emptied and created anew."""
        scratch = cls((base or LAB_ROOT) / agent / scenario)
        if scratch.root.exists():
            shutil.rmtree(scratch.root)
        for d in (scratch.home, scratch.work, scratch.tmp, scratch.config, scratch.data, scratch.cache,
                  scratch.state):
            d.mkdir(parents=True)
        return scratch

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def work(self) -> Path:
        return self.root / "work"

    @property
    def tmp(self) -> Path:
        return self.root / "tmp"

    @property
    def config(self) -> Path:
        return self.home / ".config"

    @property
    def data(self) -> Path:
        return self.home / ".local" / "share"

    @property
    def cache(self) -> Path:
        return self.home / ".cache"

    @property
    def state(self) -> Path:
        return self.home / ".local" / "state"

    def write(self, relative: str, text: str) -> Path:
        """A file of the working directory (the material a scenario's prompt works on)."""
        path = self.work / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path


def system_folder(scratch: Scratch) -> Path:
    """Where a scenario's system settings go, not the machine's /etc: the scratch directory's `etc`, or, for a
    scenario that needs them root's alone (Gemini CLI reads them only so), a folder of the lab's cache, which a
    scratch under /tmp (writable by all) cannot be; `secure_system_folder` makes that one."""
    secure = _secure_folder(scratch)
    return secure if secure.is_dir() else scratch.root / "etc"


def _secure_folder(scratch: Scratch) -> Path:
    import install  # (tests/agents/install.py: the lab's cache)

    return install.cache_dir() / "secure" / f"{scratch.root.parent.name}-{scratch.root.name}"


def secure_system_folder(scratch: Scratch) -> Path:
    if os.geteuid() != 0:
        raise Unrunnable("the scenario's system settings must be root's alone: run it as root")
    folder = _secure_folder(scratch)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True, mode=0o755)
    for p in (folder, *folder.parents):
        if p.stat().st_uid != 0 or p.stat().st_mode & 0o022:
            raise Unrunnable(f"{p} is not root's alone: the scenario's system settings cannot be secure there")
    return folder


def system_paths(scratch: Scratch, prefix: str) -> dict[str, str]:
    """The CLI's system settings and system defaults (`system_folder`), which Gemini CLI and Qwen Code read from
    these variables: a scenario may write them, and the fixture keeps them."""
    folder = system_folder(scratch)
    return {f"{prefix}_SYSTEM_SETTINGS_PATH": str(folder / "settings.json"),
            f"{prefix}_SYSTEM_DEFAULTS_PATH": str(folder / "system-defaults.json")}


def system_settings(scratch: Scratch, secure: bool = False, **settings: dict) -> Path:
    """Write the system settings `system_paths` names (in the secure folder if `secure`), and a copy in the scratch
    directory's `etc` that the fixture keeps (the path returned)."""
    text = json.dumps(settings, indent=1) + "\n"
    if secure:
        (secure_system_folder(scratch) / "settings.json").write_text(text)
    path = scratch.root / "etc" / "settings.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    return path


def agent_env(scratch: Scratch, extra: dict[str, str]) -> dict[str, str]:
    """A clean environment for an agent process: nothing inherited but a PATH that finds node and the shell
    tools, then `extra` (the scenario's fake key, server address and agent switches)."""
    node = shutil.which("node")
    path = [str(Path(node).parent)] if node else []
    path += [p for p in ("/usr/local/bin", "/usr/bin", "/bin") if p not in path]
    env = {
        "PATH": os.pathsep.join(path),
        "HOME": str(scratch.home),
        "XDG_CONFIG_HOME": str(scratch.config),
        "XDG_DATA_HOME": str(scratch.data),
        "XDG_CACHE_HOME": str(scratch.cache),
        "XDG_STATE_HOME": str(scratch.state),
        "TMPDIR": str(scratch.tmp),
        "PWD": str(scratch.work),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TZ": "UTC",
        "TERM": "dumb",
        "NO_COLOR": "1",
        "CI": "1",
    }
    env.update(extra)
    return env


@dataclass
class Run:
    """One invocation of the agent: its command line, how it ended and what it printed (tails kept short)."""

    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    def to_json(self, scratch: Scratch) -> dict:
        """The run as a fixture records it: the binary by name only (its cache path differs per machine), no
        time taken (it differs per run)."""
        argv = [Path(self.argv[0]).name, *self.argv[1:]]
        return {"argv": argv, "cwd": str(scratch.work), "returncode": self.returncode,
                "stdout": _tail(self.stdout), "stderr": _tail(self.stderr)}


@dataclass
class Capture:
    """What a scenario produced: the agent's runs, the files it wrote that the fixture keeps (absolute paths under
    the scratch root) and the server's log."""

    scratch: Scratch
    runs: list[Run] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    server_log: list[dict] = field(default_factory=list)
    notes: dict[str, Any] = field(default_factory=dict)  # anything the scenario wants recorded in scenario.json

    def run(self, argv: list[str], env: dict[str, str], timeout: float = 120, stdin: str | None = None,
            check: bool = True) -> Run:
        """Run the agent in the working directory, in its own process group (killed whole on timeout)."""
        started = time.monotonic()
        proc = subprocess.Popen([str(a) for a in argv], cwd=self.scratch.work, env=env, text=True,
                                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        try:
            out, err = proc.communicate(stdin, timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            raise LabError(f"{Path(str(argv[0])).name} took more than {timeout:.0f} s; stderr: {_tail(err, 400)}")
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
        done = Run([str(a) for a in argv], proc.returncode, out, err, time.monotonic() - started)
        self.runs.append(done)
        if check and done.returncode != 0:
            raise LabError(f"{Path(str(argv[0])).name} exited {done.returncode}; stderr: {_tail(err, 400)}; "
                           f"stdout: {_tail(out, 400)}")
        return done

    def keep(self, *paths: Path) -> None:
        """Files of the scratch directory the fixture keeps (each once, in the order given)."""
        for p in paths:
            p = Path(p)
            if not p.is_relative_to(self.scratch.root):
                raise LabError(f"{p} is outside the scenario's directory {self.scratch.root}")
            if p not in self.files:
                self.files.append(p)


@dataclass(frozen=True)
class Scenario:
    """A named run of an agent: `run(scratch, binary)` drives it and returns the Capture."""

    name: str
    about: str
    run: Callable[[Scratch, Path], Capture]


def registry(scenarios: dict[str, Scenario]) -> Callable[[str, str], Callable]:
    """The decorator an agent module registers its scenarios with: `@scenario(name, about)` over a
    `run(scratch, binary)` puts it in `scenarios`."""
    def scenario(name: str, about: str) -> Callable[[Callable[[Scratch, Path], Capture]], Callable]:
        def register(run: Callable[[Scratch, Path], Capture]) -> Callable:
            scenarios[name] = Scenario(name, about, run)
            return run
        return register
    return scenario


def keep_log(scratch: Scratch, log: list[dict]) -> Path:
    """The server's log beside the scratch directories (`<root>/server.jsonl`), to look at when a scenario failed
    (a failed scenario writes no fixture)."""
    path = scratch.root / SERVER_LOG
    path.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in log))
    return path


def fixture_dir(agent: str, version: str, scenario: str, root: Path = FIXTURES) -> Path:
    return root / f"{agent}-{version}" / scenario


def secret_values() -> dict[str, str]:
    """name -> value of every credential-looking variable of this process's environment (8+ characters), plus the
    fake key."""
    found = {k: v for k, v in os.environ.items() if _SECRET_NAME.search(k) and len(v.strip()) >= 8}
    found["FAKE_KEY"] = FAKE_KEY
    return found


def find_secrets(texts: Iterable[tuple[str, str]]) -> list[str]:
    """Where a secret shows in (where, text) pairs: the values of `secret_values`, and anything shaped like a key
    of a known service (inspector.core.secrets.KEY_PATTERNS). One line per finding, naming the place and the kind,
    never the value."""
    values = secret_values()
    found = []
    for where, text in texts:
        found += [f"{where}: the value of {name}" for name, value in values.items() if value in text]
        found += [f"{where}: something shaped like a {kind} key" for kind, p in KEY_PATTERNS.items()
                  if p.search(text)]
    return found


def write_fixture(agent: str, version: str, scenario: str, capture: Capture, about: str = "",
                  root: Path = FIXTURES) -> Path:
    """Write `capture` as the fixture directory of (agent, version, scenario), replacing the previous one whole:
    the kept files at their paths relative to the scratch root, the server log, and scenario.json. Refused,
    with nothing written, when any of it holds a secret."""
    target = fixture_dir(agent, version, scenario, root)
    contents: dict[str, bytes] = {}
    for path in capture.files:
        contents[str(path.relative_to(capture.scratch.root))] = path.read_bytes()
    contents[SERVER_LOG] = b"".join(json.dumps(e, ensure_ascii=False, sort_keys=False).encode() + b"\n"
                                    for e in capture.server_log)
    meta = {"agent": agent, "version": version, "scenario": scenario, "about": about,
            "scratch": str(capture.scratch.root), "files": sorted(k for k in contents if k != SERVER_LOG),
            "runs": [r.to_json(capture.scratch) for r in capture.runs], **capture.notes}
    contents[META] = (json.dumps(meta, indent=1, ensure_ascii=False) + "\n").encode()
    leaks = find_secrets((name, data.decode("utf-8", "replace")) for name, data in contents.items())
    if leaks:
        raise LabError(f"{agent}/{scenario}: not written, secrets in it:\n  " + "\n  ".join(leaks))
    staging = target.with_name(target.name + ".new")
    if staging.exists():
        shutil.rmtree(staging)
    for name, data in contents.items():
        out = staging / name
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)
    if target.exists():
        shutil.rmtree(target)
    staging.rename(target)
    return target


@dataclass
class Fixture:
    """A fixture as the normal tests read it."""

    root: Path
    meta: dict
    server_log: list[dict]

    def files(self, pattern: str) -> list[Path]:
        """The kept files matching a glob relative to the fixture (e.g. `home/.claude/projects/*/*.jsonl`)."""
        return sorted(self.root.glob(pattern))


def load_fixture(agent: str, version: str, scenario: str, root: Path = FIXTURES) -> Fixture:
    where = fixture_dir(agent, version, scenario, root)
    meta = json.loads((where / META).read_text())
    log = [json.loads(line) for line in (where / SERVER_LOG).read_text().splitlines() if line.strip()]
    return Fixture(where, meta, log)


def fixtures(agent: str, version: str, root: Path = FIXTURES) -> list[str]:
    """The scenarios that have a fixture for this agent version."""
    base = root / f"{agent}-{version}"
    return sorted(p.parent.name for p in base.glob(f"*/{META}")) if base.is_dir() else []


def _tail(text: str, limit: int = 2000) -> str:
    text = text or ""
    return text if len(text) <= limit else "…" + text[-limit:]


if __name__ == "__main__":
    sys.exit("lab.py is a module; run regenerate.py AGENT [SCENARIO ...]")
