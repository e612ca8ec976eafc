"""The two APIs the proxy stands in front of, and which of their requests it records.

The proxy serves each API under its own prefix: a client whose base URL is `http://127.0.0.1:PORT/anthropic` has
`/anthropic/v1/messages` forwarded to `<anthropic upstream>/v1/messages`, one whose base URL is
`http://127.0.0.1:PORT/openai` has `/openai/responses` forwarded to `<openai upstream>/responses` (the OpenAI
upstream's base URL carries its `/v1`, as OPENAI_BASE_URL does). So either API can sit anywhere (a gateway with a
path prefix, a local server) and a client sees exactly what it would see talking to the upstream directly.

Recorded: POSTs whose path (after the upstream's own) ends as one of `PROTOCOLS` says; every other request is
forwarded untouched and not recorded.
"""

from __future__ import annotations

from dataclasses import dataclass

from inspector.capture.chat_stream import ChatStream
from inspector.capture.messages_stream import MessagesStream
from inspector.capture.responses_stream import ResponsesStream


@dataclass(frozen=True, slots=True)
class Api:
    name: str  # also the URL prefix the proxy serves it under
    label: str
    env: tuple[str, ...]  # the variables that point a client at it: the first is the one most clients read
    default: str  # the real API's base URL


ANTHROPIC = Api("anthropic", "Anthropic", ("ANTHROPIC_BASE_URL",), "https://api.anthropic.com")
OPENAI = Api("openai", "OpenAI", ("OPENAI_BASE_URL", "OPENAI_API_BASE"), "https://api.openai.com/v1")
APIS = {a.name: a for a in (ANTHROPIC, OPENAI)}


@dataclass(frozen=True, slots=True)
class Protocol:
    name: str  # as written in a record's "protocol"
    api: str
    suffix: str  # the end of the path that names it
    stream: type | None  # what rebuilds its streamed answer


# Longest suffix first: `/messages/count_tokens` before `/messages`.
PROTOCOLS = (
    Protocol("anthropic-count-tokens", "anthropic", "/messages/count_tokens", None),
    Protocol("anthropic-messages", "anthropic", "/messages", MessagesStream),
    Protocol("openai-responses", "openai", "/responses", ResponsesStream),
    Protocol("openai-chat", "openai", "/chat/completions", ChatStream),
)


def protocol_for(api: str, method: str, path: str) -> Protocol | None:
    """The protocol of a request to `api` (path without the query), or None when it is not one to record."""
    if method != "POST":
        return None
    trimmed = path.rstrip("/")
    return next((p for p in PROTOCOLS if p.api == api and trimmed.endswith(p.suffix)), None)
