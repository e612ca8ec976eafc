"""Credentials that must never be written out: the patterns of well-known API keys and the environment variables
that hold ours.

Sessions record whatever a tool printed (`env`, `cat .env`), so a key can sit in any message. Files the inspector
writes (exports, the agent's session file) pass every line through `redact`; the agent's shell runs without the
variables in SECRET_ENV, so a command cannot print the key it runs under.

Not inheriting the key is not enough: a command can read `/proc/$PPID/environ`, the environment this process was
started with, which os.environ changes never reach. `seal()` (called before any child process starts) takes the
credentials out of the C environment children inherit, overwrites them in that start-up block, and on Linux marks
the process non-dumpable, so that other processes of the same user (a shell command the agent runs) cannot read
its memory or environment through /proc. The key then lives in this process alone: in os.environ's copy and the
API client. Root, or anyone with CAP_SYS_PTRACE, can still read any process's memory; nothing in-process stops that.
"""

from __future__ import annotations

import os
import re
import sys
from urllib.parse import parse_qsl, urlsplit

SECRET_ENV = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
URL_ENV = "ANTHROPIC_BASE_URL"  # an endpoint may carry a password or a token in its URL

# Each pattern matches only characters that JSON never escapes, so it can run on serialized JSON lines as well as on
# plain text (a private key's line breaks appear as the two characters `\n` there).
KEY_PATTERNS: dict[str, re.Pattern[str]] = {
    "anthropic": re.compile(r"(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{8,}"),
    # a digit somewhere, so kebab-case words ending in "sk" ("disk-usage-monitoring-page") are left alone
    "openai": re.compile(r"(?<![A-Za-z0-9_-])sk-(?:proj-|svcacct-|admin-)?(?=[A-Za-z_-]*[0-9])[A-Za-z0-9_-]{20,}"),
    "aws": re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    "github": re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})"),
    "slack": re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    "google": re.compile(r"\bAIza[0-9A-Za-z_-]{35}"),
    "private-key": re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.S),
}
# A literal every pattern's match contains: most text holds none, and `in` is far cheaper than the regex.
_MARKERS = ("sk-", "AKIA", "ASIA", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "xox", "AIza", "PRIVATE KEY")
_ANY_KEY = re.compile("|".join(f"(?P<{name.replace('-', '_')}>{p.pattern})" for name, p in KEY_PATTERNS.items()),
                      re.S)
MIN_SECRET = 6  # shorter values (a user name, "1") would redact ordinary words


def redact(text: str) -> str:
    """`text` with every string that looks like a known kind of key replaced by `[REDACTED <kind> key]`, the
    values of SECRET_ENV set in this process replaced whatever they look like, and so the password and query
    values of the endpoint URL."""
    if not text:
        return text
    if any(marker in text for marker in _MARKERS):
        text = _ANY_KEY.sub(lambda m: f"[REDACTED {(m.lastgroup or 'secret').replace('_', '-')} key]", text)
    for name in SECRET_ENV:
        value = os.environ.get(name, "").strip()
        if len(value) >= 8 and value in text:
            text = text.replace(value, f"[REDACTED {name}]")
    for value in url_secrets(os.environ.get(URL_ENV, "")):
        if value in text:
            text = text.replace(value, "[REDACTED]")
    return text


def url_secrets(url: str) -> list[str]:
    """The credential parts of `url`: its password (or a lone user part, often a token) and its query values."""
    if "@" not in url and "?" not in url:
        return []
    try:
        parts = urlsplit(url)
        found = [(parts.password if parts.password is not None else parts.username) or ""]
        found += [value for _, value in parse_qsl(parts.query, keep_blank_values=True)]
    except ValueError:  # not a URL at all: nothing known to hide
        return []
    return sorted({v for v in found if len(v) >= MIN_SECRET}, key=len, reverse=True)


def safe_url(url: str) -> str:
    """`url` as an error line may show it: the password (or token user part) and the query values replaced."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "[an endpoint URL that does not parse]"
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, host = netloc.rpartition("@")
        user, colon, _ = userinfo.partition(":")
        netloc = f"{user}:[REDACTED]@{host}" if colon else f"[REDACTED]@{host}"
    query = "&".join(f"{k}=[REDACTED]" for k, _ in parse_qsl(parts.query, keep_blank_values=True))
    return parts._replace(netloc=netloc, query=query).geturl()


def _child_secrets() -> list[str]:
    """The variable names a child process must not get: our credentials, and the endpoint when it carries any."""
    names = list(SECRET_ENV)
    if url_secrets(os.environ.get(URL_ENV, "")):
        names.append(URL_ENV)
    return names


def scrubbed_env() -> dict[str, str]:
    """This process's environment without the variables that hold our credentials (for every child process),
    sealed first (see `seal`)."""
    seal()
    hidden = _child_secrets()
    return {k: v for k, v in os.environ.items() if k not in hidden}


def seal() -> None:
    """Keep the credentials to this process (see the module docstring). Idempotent and cheap: call it before
    starting any child. os.environ keeps its copy, so this process still finds the key."""
    names = [n for n in _child_secrets() if n in os.environ]
    if not names:
        return
    for name in names:
        os.unsetenv(name)  # what children inherit by default; os.environ itself is left alone
    if sys.platform.startswith("linux"):
        _wipe_startup_environment(names)
        _non_dumpable()


def _wipe_startup_environment(names: list[str]) -> None:
    """Overwrite the values of `names` in the environment block the kernel shows as /proc/PID/environ (the one
    this process was started with). Best effort: without /proc, nothing to do."""
    try:
        with open("/proc/self/stat", "rb") as f:
            stat = f.read()
        fields = stat[stat.rindex(b")") + 2:].split()
        start, end = int(fields[47]), int(fields[48])  # env_start, env_end (proc(5), fields 50 and 51)
        with open("/proc/self/mem", "r+b", buffering=0) as mem:
            mem.seek(start)
            block = mem.read(end - start)
            for name in names:
                prefix = name.encode() + b"="
                at = 0 if block.startswith(prefix) else block.find(b"\0" + prefix) + 1
                if at == 0 and not block.startswith(prefix):
                    continue  # not in the start-up block: set later, so only in this process's memory
                value_start = at + len(prefix)
                value_end = block.find(b"\0", value_start)
                value_end = len(block) if value_end < 0 else value_end
                mem.seek(start + value_start)
                mem.write(b"*" * (value_end - value_start))
    except (OSError, ValueError, IndexError):
        pass


def _non_dumpable() -> None:
    """prctl(PR_SET_DUMPABLE, 0): /proc/PID/mem and environ of this process become unreadable to other processes
    of the same user (no core dumps either). Children are dumpable again once they exec."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 4
    except (OSError, AttributeError):
        pass
