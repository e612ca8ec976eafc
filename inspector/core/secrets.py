"""Credentials that must never be written out: the patterns of well-known API keys and the environment variables
that hold ours.

Sessions record whatever a tool printed (`env`, `cat .env`), so a key can sit in any message. Files the inspector
writes (exports, the agent's session file) pass every line through `redact`; the agent's shell runs without the
variables in SECRET_ENV, so a command cannot print the key it runs under.
"""

from __future__ import annotations

import os
import re

SECRET_ENV = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")

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


def redact(text: str) -> str:
    """`text` with every string that looks like a known kind of key replaced by `[REDACTED <kind> key]`, and the
    values of SECRET_ENV set in this process replaced whatever they look like."""
    if not text:
        return text
    if any(marker in text for marker in _MARKERS):
        text = _ANY_KEY.sub(lambda m: f"[REDACTED {(m.lastgroup or 'secret').replace('_', '-')} key]", text)
    for name in SECRET_ENV:
        value = os.environ.get(name, "").strip()
        if len(value) >= 8 and value in text:
            text = text.replace(value, f"[REDACTED {name}]")
    return text


def scrubbed_env() -> dict[str, str]:
    """This process's environment without the variables that hold our credentials (for the agent's shell)."""
    return {k: v for k, v in os.environ.items() if k not in SECRET_ENV}
