"""What each format calls the usage a request's measured context is made of.

Every loader splits a response's usage into `Request.input_tokens` (the uncached input), `cache_creation` and
`cache_read`, whatever the API reported; the APIs name and nest those figures differently (OpenAI's and Gemini's
input already includes the cached tokens; Anthropic's does not). Views and reports label a request's figures with
these terms, so a Codex request reads in Codex's own words and not in the Messages API's.
"""

from __future__ import annotations

from dataclasses import dataclass

from inspector.core.model import Request


@dataclass(frozen=True, slots=True)
class UsageTerms:
    """Labels for a request's `input_tokens`, `cache_creation` (None: the format records no cache writes) and
    `cache_read` (None: no cache reads), its output (None: not recorded), and how the measured context is made from the fields the
    format records."""

    uncached: str
    cache_write: str | None
    cache_read: str | None
    output: str | None
    context: str


MESSAGES_API = UsageTerms("input", "cache creation", "cache read", "output", "input + cache creation + cache read")
RESPONSES_API = UsageTerms("uncached input", None, "cached input", "output",
                           "input_tokens, cached_input_tokens included")
TERMS: dict[str, UsageTerms] = {
    "codex": RESPONSES_API,
    "openai-responses": RESPONSES_API,
    "openai-chat": UsageTerms("uncached prompt", None, "cached prompt", "completion",
                              "prompt_tokens, cached_tokens included"),
    "gemini-cli": UsageTerms("uncached input + tool", None, "cached", "output", "input + tool, cached included"),
    "qwen-code": UsageTerms("uncached prompt", None, "cached", "candidates",
                            "promptTokenCount, cachedContentTokenCount included"),
    "copilot": UsageTerms("uncached input", "cache write", "cache read", "output",
                          "inputTokens, cacheReadTokens and cacheWriteTokens included"),
    "cline-sdk": UsageTerms("uncached input", "cache write", "cache read", "output",
                            "inputTokens, cacheReadTokens and cacheWriteTokens included"),
    "cline": UsageTerms("tokensIn", "cacheWrites", "cacheReads", "tokensOut", "tokensIn + cacheWrites + cacheReads"),
    "roo-code": UsageTerms("tokensIn", "cacheWrites", "cacheReads", "tokensOut",
                           "tokensIn + cacheWrites + cacheReads"),
    "opencode": UsageTerms("input", "cache write", "cache read", "output", "input + cache.write + cache.read"),
    "kimi-code": UsageTerms("inputOther", "inputCacheCreation", "inputCacheRead", "output",
                            "inputOther + inputCacheCreation + inputCacheRead"),
    "kimi": UsageTerms("token_count", None, None, None, "token_count, the whole context as Kimi counts it"),
}


def usage_terms(fmt: str) -> UsageTerms:
    """The terms of format `fmt` (the Messages API's for Claude Code, Anthropic requests, our own sessions)."""
    return TERMS.get(fmt, MESSAGES_API)


def usage_parts(request: Request, fmt: str) -> list[tuple[str, int]]:
    """A request's usage as (label, tokens) in the format's terms: the parts of its context, then its output and
    the context they make. A field the format has shows even at 0; one it has not (a cache write in a Codex
    rollout, which some providers report) only when a request states it."""
    terms = usage_terms(fmt)
    parts = [(terms.uncached, request.input_tokens)]
    if terms.cache_write is not None or request.cache_creation:
        parts.append((terms.cache_write or "cache write", request.cache_creation))
    if terms.cache_read is not None or request.cache_read:
        parts.append((terms.cache_read or "cache read", request.cache_read))
    if terms.output is not None:
        parts.append((terms.output, request.output_tokens))
    return parts + [("context", request.measured_context)]
