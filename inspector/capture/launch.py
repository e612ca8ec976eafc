"""How a command is pointed at the proxy: the base-URL variables, and the flags of agents that do not read them.

Every agent built on the Anthropic or OpenAI SDKs reads ANTHROPIC_BASE_URL / OPENAI_BASE_URL (Claude Code, opencode,
Aider through OPENAI_API_BASE, our own agent). NO_PROXY gains the loopback address, so an agent that sends its
traffic through HTTP(S)_PROXY still reaches the proxy directly. Codex reads its provider from `config.toml`, not the
environment: a `-c` flag points the provider it will use at the proxy, and that provider's own base URL becomes the
OpenAI upstream (so a local provider stays the upstream, and the real API stays the default).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from inspector.capture.protocols import APIS


def child_environment(environ: dict[str, str], base_urls: dict[str, str]) -> dict[str, str]:
    """`environ` with each API's variables pointing at the proxy's `base_urls` (by API name)."""
    env = dict(environ)
    for name, url in base_urls.items():
        for variable in APIS[name].env:
            env[variable] = url
    for variable in ("NO_PROXY", "no_proxy"):
        hosts = [h for h in env.get(variable, "").split(",") if h.strip()]
        env[variable] = ",".join(hosts + [h for h in ("127.0.0.1", "localhost") if h not in hosts])
    return env


def is_codex(argv: list[str]) -> bool:
    return bool(argv) and Path(argv[0]).name in ("codex", "codex.js")


def codex_provider(environ: dict[str, str]) -> tuple[str | None, str | None]:
    """(provider id, its base URL) from Codex's config.toml when it names a provider of its own, else (None, None):
    the built-in OpenAI provider."""
    home = Path(environ.get("CODEX_HOME") or Path(environ.get("HOME", "~")) / ".codex").expanduser()
    try:
        config = tomllib.loads((home / "config.toml").read_text())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None, None
    provider = config.get("model_provider")
    providers = config.get("model_providers")
    if not isinstance(provider, str) or provider == "openai" or not isinstance(providers, dict):
        return None, None
    entry = providers.get(provider)
    base = entry.get("base_url") if isinstance(entry, dict) else None
    return (provider, base) if isinstance(base, str) and base.strip() else (None, None)


def codex_arguments(argv: list[str], provider: str | None, proxy_url: str) -> list[str]:
    """Codex's command line with the flag that sends its requests to `proxy_url` (`-c` is a root option, so it
    goes right after the program)."""
    key = f"model_providers.{provider}.base_url" if provider else "openai_base_url"
    return [argv[0], "-c", f'{key}="{proxy_url}"', *argv[1:]]


def exit_status(returncode: int) -> int:
    """A child's return code as a shell reports it (killed by signal N: 128 + N)."""
    return 128 - returncode if returncode < 0 else returncode


def shell_exports(base_urls: dict[str, str]) -> list[str]:
    """The `export` lines a user runs by hand to point a shell's agents at the proxy."""
    return [f"export {variable}={url}" for name, url in base_urls.items() for variable in APIS[name].env]


def codex_flag_hint(proxy_url: str) -> str:
    return f'codex -c openai_base_url="{proxy_url}" ...   (Codex reads no variable; a provider of your own: ' \
           f'-c model_providers.NAME.base_url="{proxy_url}")'

