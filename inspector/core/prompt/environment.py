"""Runtime facts for the prompt's environment section: OS, shell, working directory, date, git state.

Gathered fresh for every prompt and never cached, because the agent loop rebuilds the prompt per session and the
working tree changes under it. Git is asked with optional locks off (`GIT_OPTIONAL_LOCKS=0`), so building a prompt
never writes to the repository, and every git call has a timeout: a missing git, a directory outside any repository
or a hung filesystem gives a one-line explanation in the prompt instead of an error.

A repository's own config can make `git status` and `git log` run programs (core.fsmonitor, a clean filter on a
racily clean file, gpg for log.showSignature, hooks), and a cloned repository is not the user's to trust. Every
call overrides those settings on the command line (which beats every config file) and runs without our credentials
in its environment.
"""

from __future__ import annotations

import os
import platform
import signal
import subprocess
import sys
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from inspector.core.secrets import scrubbed_env

GIT_TIMEOUT = 2.0  # seconds per git call
STATUS_LINES = 30  # changed paths shown before "... and N more"
RECENT_COMMITS = 5


@dataclass(slots=True)
class GitInfo:
    """Git state of a directory. `error` explains why the rest is missing (not a repository, no git, timeout)."""

    root: Path | None = None
    branch: str = ""
    status: list[str] | None = None
    status_more: int = 0
    commits: list[str] | None = None
    error: str = ""

    def render(self) -> str:
        """The git block of the prompt, as list items that continue the environment's list; never empty."""
        if self.error:
            return f"- Git: {self.error}"
        lines = [f"- Git repository: {self.root}", f"- Git branch: {self.branch}"]
        if self.status:
            lines.append("- Git status (uncommitted changes):")
            lines += [f"    {s}" for s in self.status]
            if self.status_more:
                lines.append(f"    ... and {self.status_more} more")
        else:
            lines.append("- Git status: clean")
        if self.commits:
            lines.append("- Recent commits:")
            lines += [f"    {c}" for c in self.commits]
        else:
            lines.append("- Recent commits: none yet")
        return "\n".join(lines)


@dataclass(slots=True)
class Environment:
    cwd: Path
    os: str
    shell: str
    platform: str
    date: str

    def values(self) -> dict[str, str]:
        """The template's inline placeholders and their values."""
        return {"cwd": str(self.cwd), "os": self.os, "shell": self.shell, "platform": self.platform,
                "date": self.date}


def describe_os() -> str:
    system = platform.system() or sys.platform
    if system == "Darwin":
        return f"macOS {platform.mac_ver()[0] or platform.release()}".strip()
    if system == "Linux":
        try:
            name = platform.freedesktop_os_release().get("PRETTY_NAME", "")
        except OSError:
            name = ""
        return f"Linux {platform.release()}" + (f" ({name})" if name else "")
    return f"{system} {platform.release()}".strip()


def describe_shell() -> str:
    shell = os.environ.get("SHELL") or (os.environ.get("COMSPEC") if os.name == "nt" else "")
    return shell or "unknown (SHELL is not set)"


def format_date(now: datetime) -> str:
    """`2026-11-29 (Sunday)`: the weekday spelled out, since models get it wrong from a bare date."""
    return f"{now:%Y-%m-%d} ({now:%A})"


def environment(cwd: Path, now: datetime | None = None) -> Environment:
    now = now or datetime.now().astimezone()
    return Environment(cwd=cwd, os=describe_os(), shell=describe_shell(),
                       platform=f"{sys.platform} ({platform.machine() or 'unknown machine'})",
                       date=format_date(now))


# Settings under which status and log run no program: no fsmonitor, no hooks, no signature check, no pager.
SAFE_CONFIG = ("core.fsmonitor=false", "core.hooksPath=/dev/null", "log.showSignature=false", "core.pager=cat",
               "status.submoduleSummary=false", "diff.external=")
FILTER_KEYS = ("clean", "smudge", "process")


def _git(cwd: Path, *args: str, config: tuple[str, ...] = ()) -> str:
    """One git call's output. On timeout the whole process group is killed: a hook or helper git started must not
    keep the pipes (and so this call) open past the timeout."""
    env = {**scrubbed_env(), "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "GIT_PAGER": "cat"}
    group = os.name == "posix"
    overrides = [part for setting in (*SAFE_CONFIG, *config) for part in ("-c", setting)]
    with subprocess.Popen(["git", "-C", str(cwd), *overrides, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          stdin=subprocess.DEVNULL, env=env, start_new_session=group) as process:
        try:
            out, err = process.communicate(timeout=GIT_TIMEOUT)
        except subprocess.TimeoutExpired:
            if group:
                os.killpg(process.pid, signal.SIGKILL)
            else:
                process.kill()
            process.communicate()
            raise
    if process.returncode != 0:
        message = err.decode("utf-8", "replace").strip().splitlines()
        raise subprocess.CalledProcessError(process.returncode, args, stderr=message[0] if message else "")
    return out.decode("utf-8", "replace")


def _no_filters(cwd: Path) -> tuple[str, ...]:
    """Overrides emptying every filter driver the config defines (`git config` itself runs nothing): an empty
    command is no filter, so status compares the file's bytes as they are."""
    try:
        names = _git(cwd, "config", "--name-only", "--get-regexp", r"^filter\.").splitlines()
    except subprocess.CalledProcessError:  # none defined (exit status 1), or not a repository: status will say
        return ()
    drivers = {name.rpartition(".")[0] for name in names if name.count(".") >= 2}
    return tuple(f"{driver}.{key}=" for driver in sorted(drivers) for key in FILTER_KEYS)


def git_info(cwd: Path) -> GitInfo:
    """Branch, status and recent commits of the repository holding `cwd`, in three git calls (the first lists the
    filter drivers to switch off)."""
    try:
        filters = _no_filters(cwd)
        status = _git(cwd, "status", "--porcelain=v1", "--branch", "--untracked-files=normal",
                      "--ignore-submodules=all", config=filters).splitlines()
    except FileNotFoundError:
        return GitInfo(error="not available (git is not installed)")
    except subprocess.TimeoutExpired:
        return GitInfo(error=f"no answer from git within {GIT_TIMEOUT:g} s")
    except subprocess.CalledProcessError as exc:
        if "not a git repository" in str(exc.stderr):
            return GitInfo(error="not a git repository")
        return GitInfo(error=f"git status failed: {exc.stderr or 'exit status ' + str(exc.returncode)}")
    except OSError as exc:
        return GitInfo(error=f"git could not run: {exc.strerror or exc}")
    info = GitInfo(root=find_repo_root(cwd) or cwd)
    head, changes = (status[0], status[1:]) if status and status[0].startswith("## ") else ("", status)
    info.branch = _branch(head[3:])
    info.status, info.status_more = changes[:STATUS_LINES], max(0, len(changes) - STATUS_LINES)
    try:
        info.commits = _git(cwd, "log", f"-n{RECENT_COMMITS}", "--format=%h %s", config=filters).splitlines()
    except (subprocess.SubprocessError, OSError):
        info.commits = []  # a repository with no commits yet
    return info


def _branch(head: str) -> str:
    """Branch from `git status --branch`'s header: `main...origin/main [ahead 1]`, `No commits yet on main`,
    `HEAD (no branch)`."""
    if head.startswith("No commits yet on "):
        return head.removeprefix("No commits yet on ") + " (no commits yet)"
    if head.startswith("HEAD (no branch)"):
        return "detached HEAD"
    branch, _, rest = head.partition("...")
    tracking = rest.partition(" ")[2]
    return branch + (f" {tracking}" if tracking else "") if branch else "unknown"


def find_repo_root(start: Path) -> Path | None:
    """The nearest directory at or above `start` holding `.git` (a directory, or a file for worktrees)."""
    for directory in (start, *start.parents):
        if (directory / ".git").exists():
            return directory
    return None
