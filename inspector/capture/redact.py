"""What of an exchange's headers and URLs may be written to a capture file: only what is named here.

Headers are kept by an allow-list, never by a deny-list, so `authorization`, `x-api-key`, `cookie`, `set-cookie`,
`proxy-authorization` and any header a vendor invents tomorrow (`x-goog-api-key`, a gateway's token) never reach the
file. URLs lose their user-info (`https://user:secret@host`), and of a query only the parameters named in
`QUERY_KEYS` keep their value (Gemini sends its key as `?key=`): others are written as "[redacted]".
"""

from __future__ import annotations

from typing import Iterable
from urllib.parse import parse_qsl, urlsplit, urlunsplit

REDACTED = "[redacted]"

# What the SDKs and agents send that tells how a request was made: the API version and betas, the client and its
# runtime, the encodings; nothing that identifies an account.
REQUEST_HEADERS = frozenset({
    "accept", "accept-encoding", "anthropic-beta", "anthropic-version", "content-encoding", "content-length",
    "content-type", "openai-beta", "user-agent", "x-app", "x-stainless-arch", "x-stainless-async",
    "x-stainless-helper-method", "x-stainless-lang", "x-stainless-os", "x-stainless-package-version",
    "x-stainless-retry-count", "x-stainless-runtime", "x-stainless-runtime-version", "x-stainless-timeout",
})

# What the API answers about the exchange: its request id (to quote to the vendor), encodings, rate limits and
# retry advice.
RESPONSE_HEADERS = frozenset({
    "content-encoding", "content-length", "content-type", "request-id", "x-request-id", "retry-after",
    "retry-after-ms", "x-should-retry", "openai-processing-ms", "openai-version",
    "anthropic-ratelimit-requests-limit", "anthropic-ratelimit-requests-remaining",
    "anthropic-ratelimit-requests-reset", "anthropic-ratelimit-tokens-limit", "anthropic-ratelimit-tokens-remaining",
    "anthropic-ratelimit-tokens-reset", "anthropic-ratelimit-input-tokens-limit",
    "anthropic-ratelimit-input-tokens-remaining", "anthropic-ratelimit-input-tokens-reset",
    "anthropic-ratelimit-output-tokens-limit", "anthropic-ratelimit-output-tokens-remaining",
    "anthropic-ratelimit-output-tokens-reset", "x-ratelimit-limit-requests", "x-ratelimit-limit-tokens",
    "x-ratelimit-remaining-requests", "x-ratelimit-remaining-tokens", "x-ratelimit-reset-requests",
    "x-ratelimit-reset-tokens",
})

QUERY_KEYS = frozenset({"beta", "alt", "api-version", "stream"})


def kept_headers(headers: Iterable[tuple[str, str]], allowed: frozenset[str]) -> dict[str, str]:
    """The allowed headers, names in lower case, repeated ones joined with ", "."""
    kept: dict[str, str] = {}
    for name, value in headers:
        name = name.lower()
        if name in allowed:
            kept[name] = f"{kept[name]}, {value}" if name in kept else value
    return kept


def kept_query(query: str) -> dict[str, str]:
    """A query string's parameters, the values of those not in QUERY_KEYS replaced by "[redacted]"."""
    kept: dict[str, str] = {}
    for name, value in parse_qsl(query, keep_blank_values=True):
        kept[name] = value if name.lower() in QUERY_KEYS else REDACTED
    return kept


def public_url(url: str) -> str:
    """`url` without user-info, and with the values of its query parameters outside QUERY_KEYS redacted."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"  # an IPv6 literal
    netloc = f"{host}:{parts.port}" if parts.port else host
    query = "&".join(f"{k}={v}" for k, v in kept_query(parts.query).items())
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))

# Request headers that carry a credential: their values are also struck from the record's bodies, in case an agent
# echoes its own key (a tool printed `env`) into the conversation.
CREDENTIAL_HEADERS = frozenset({"authorization", "proxy-authorization", "x-api-key", "api-key", "x-goog-api-key",
                                "cookie"})


def credentials(headers: Iterable[tuple[str, str]]) -> list[str]:
    """The secret values of a request's credential headers (a bearer token without its scheme, each cookie's
    value), longest first, those of 8 characters or more (shorter ones would strike ordinary words)."""
    found: set[str] = set()
    for name, value in headers:
        name = name.lower()
        if name not in CREDENTIAL_HEADERS:
            continue
        if name == "cookie":
            parts = [c.partition("=")[2].strip() for c in value.split(";")]
        elif name.endswith("authorization"):
            parts = [value.strip(), value.partition(" ")[2].strip()]
        else:
            parts = [value.strip()]
        found.update(p for p in parts if len(p) >= 8)
    return sorted(found, key=len, reverse=True)


def strike(text: str, secrets: Iterable[str]) -> str:
    """`text` with each of `secrets` replaced by "[redacted]"."""
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text
