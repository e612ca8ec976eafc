"""The model behind the loop: the Messages API through the official `anthropic` SDK, streaming.

Any Messages-compatible endpoint works (ANTHROPIC_BASE_URL). Retries of 429, 529, 5xx and dropped connections
are ours, not the SDK's (whose sleep obeys any Retry-After, days included, and cannot be interrupted): each wait is
announced as a Retrying event, lasts at most MAX_RETRY_WAIT whatever the server asks, and ends at once on cancel.
What is still failing after `max_retries` becomes a ProviderError with one readable line, from which the API key
and the endpoint's credentials are scrubbed. Cancelling closes the open stream from the cancelling thread, so the
loop stops at once with what had arrived (`Cancelled.partial`).
"""

from __future__ import annotations

import copy
import email.utils
import os
import random
import socket
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any

import anthropic
import httpx2

from inspector.core.agent.cancel import Cancel
from inspector.core.agent.events import Event, Retrying, TextDelta, ThinkingDelta
from inspector.core.compaction.provider import SummaryError
from inspector.core.model import Block, Message
from inspector.core.secrets import safe_url, seal

DEFAULT_MODEL = "claude-sonnet-4-6"
SUMMARY_MAX_TOKENS = 20_000
MAX_RETRY_WAIT = 60.0  # seconds: the longest wait before a retry, whatever Retry-After asks
BACKOFF_START, BACKOFF_MAX = 0.5, 8.0  # without Retry-After: 0.5 s, 1 s, 2 s ... at most 8 s, less up to 25%

KEY_HELP = ("no API key: set ANTHROPIC_API_KEY (export ANTHROPIC_API_KEY=sk-ant-...); for another "
            "Messages-compatible endpoint also set ANTHROPIC_BASE_URL (export ANTHROPIC_BASE_URL=https://...)")


class MissingApiKey(Exception):
    def __init__(self) -> None:
        super().__init__(KEY_HELP)


class ProviderError(Exception):
    """The request failed for good. `error_type` is the API's (overloaded_error...) or ours (connection_error,
    stream_error); `status` the HTTP status when there was one."""

    def __init__(self, message: str, error_type: str, status: int | None = None) -> None:
        super().__init__(message)
        self.error_type = error_type
        self.status = status


class Cancelled(Exception):
    """The stream was cancelled; `partial` holds the blocks that had arrived whole enough to keep."""

    def __init__(self, partial: list[Block]) -> None:
        super().__init__("cancelled")
        self.partial = partial


@dataclass(slots=True)
class ModelRequest:
    model: str
    system: str
    messages: list[Message]
    tools: list[dict]
    max_tokens: int
    thinking_budget: int | None = None
    cache: bool = True


@dataclass(slots=True)
class Response:
    id: str
    model: str
    blocks: list[Block]
    stop_reason: str | None
    input_tokens: int
    cache_creation: int
    cache_read: int
    output_tokens: int


class AnthropicProvider:
    """Streams one model response per call (`stream`). It is also the compaction engine's SummaryProvider
    (`summarize`), writing summaries with `model` and stopping when `cancel` is set; `bound` gives a copy sharing
    the HTTP client with another model and cancel token.

    A thinking block's signature arrives as one `signature_delta`, its last delta; the SDK's MessageStream folds it
    into the block, so the Response's thinking blocks (and a cancelled stream's snapshot) carry it."""

    def __init__(self, api_key: str, base_url: str | None = None, *, model: str = DEFAULT_MODEL,
                 max_retries: int = 2, timeout: float = 600.0) -> None:
        seal()  # before the client holds the key: no process the tools start can read it from us
        self._key = api_key
        self.base_url = base_url
        self.model = model
        self.max_retries = max_retries
        self.cancel = Cancel()
        self._client = anthropic.Anthropic(api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout)

    @classmethod
    def from_env(cls, model: str = DEFAULT_MODEL, max_retries: int = 2) -> AnthropicProvider:
        """Key and endpoint from ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL; MissingApiKey (with how to set one)
        when there is no key."""
        key = os.environ.get("ANTHROPIC_API_KEY", "").strip()
        if not key:
            raise MissingApiKey()
        return cls(key, os.environ.get("ANTHROPIC_BASE_URL") or None, model=model, max_retries=max_retries)

    def __repr__(self) -> str:  # never the key, nor the endpoint's credentials
        shown = safe_url(self.base_url) if self.base_url else None
        return f"AnthropicProvider(base_url={shown!r}, model={self.model!r})"

    def bound(self, model: str, cancel: Cancel) -> AnthropicProvider:
        other = copy.copy(self)
        other.model, other.cancel = model, cancel
        return other

    def summarize(self, system: str, messages: list[dict], on_text: Callable[[str], None] | None = None) -> str:
        """SummaryProvider: stream a summary of `messages` (already Messages-API dicts), passing each piece of
        text to `on_text`; SummaryError on failure or cancel."""
        params: dict[str, Any] = {"model": self.model, "max_tokens": SUMMARY_MAX_TOKENS, "messages": messages}
        if system:
            params["system"] = system
        try:
            response = drain(self._events(params, self.cancel), on_text)
        except Cancelled:
            raise SummaryError("cancelled by the user") from None
        except ProviderError as exc:
            raise SummaryError(str(exc)) from None
        text = "".join(b.text for b in response.blocks if b.type == "text").strip()
        if not text:
            raise SummaryError(f"the model returned no summary text (stop reason {response.stop_reason})")
        return text

    def stream(self, request: ModelRequest, cancel: Cancel) -> Generator[Event, None, Response]:
        """Yield text and thinking deltas as they arrive; return the whole Response. Raises ProviderError or
        Cancelled."""
        return self._events(_params(request), cancel)

    def _events(self, params: dict[str, Any], cancel: Cancel) -> Generator[Event, None, Response]:
        """The response, retrying a request refused or dropped before its stream began (never one that had begun:
        what it streamed was shown already)."""
        for attempt in range(1, self.max_retries + 2):
            try:
                return (yield from self._attempt(params, cancel))
            except _Retryable as failed:
                if attempt > self.max_retries:
                    raise failed.error from None
                wait, asked = _retry_wait(failed.headers, attempt)
                yield Retrying(failed.error.error_type, failed.error.status, wait, asked, attempt, self.max_retries)
                if cancel.wait(wait):
                    raise Cancelled([]) from None
        raise AssertionError("unreachable")

    def _attempt(self, params: dict[str, Any], cancel: Cancel) -> Generator[Event, None, Response]:
        started = False
        try:
            with self._client.messages.stream(**params) as stream:
                unregister = cancel.on_cancel(lambda: _abort(stream))
                try:
                    for event in stream:
                        started = True
                        if cancel.cancelled:
                            break
                        if event.type == "text":
                            yield TextDelta(event.text)
                        elif event.type == "thinking":
                            yield ThinkingDelta(event.thinking)
                except Exception:
                    if not cancel.cancelled:
                        raise
                finally:
                    unregister()
                if cancel.cancelled:
                    raise Cancelled(_partial(stream))
                message = stream.get_final_message()
        except Cancelled:
            raise
        except Exception as exc:
            if cancel.cancelled:
                raise Cancelled([]) from None
            error = self._error(exc, started)
            if not started and _should_retry(exc):
                response = getattr(exc, "response", None)
                raise _Retryable(error, response.headers if response is not None else None) from None
            raise error from None
        if message.stop_reason is None:
            raise ProviderError("the response stream ended before the message was complete", "stream_error")
        return _response(message)

    def _error(self, exc: Exception, started: bool = False) -> ProviderError:
        """What `exc` means to the user. `started`: events had arrived, so a lost connection broke the stream off
        (anthropic 2.17 and later raise that as APIConnectionError, earlier versions as the transport's error)."""
        if isinstance(exc, anthropic.APIStatusError):
            body = exc.body if isinstance(exc.body, dict) else {}
            error = body.get("error") if isinstance(body.get("error"), dict) else {}
            kind = error.get("type") or type(exc).__name__
            detail = error.get("message") or str(exc)
            if exc.status_code == 200:  # an `error` event inside a stream that had started fine
                return ProviderError(self._scrub(f"API error mid-stream {kind}: {detail}"), kind)
            text = f"API error {exc.status_code} {kind}: {detail}"
            return ProviderError(self._scrub(text), kind, exc.status_code)
        if isinstance(exc, anthropic.APITimeoutError):
            return ProviderError("the API did not answer in time (after the SDK's retries)", "timeout")
        if isinstance(exc, anthropic.APIConnectionError) and started:
            return ProviderError(self._scrub(f"the response stream broke off: {exc.__cause__ or exc}"), "stream_error")
        if isinstance(exc, anthropic.APIConnectionError):
            cause = exc.__cause__ or exc
            return ProviderError(self._scrub(f"could not reach {self._endpoint()}: {cause}"), "connection_error")
        if isinstance(exc, httpx2.HTTPError):
            return ProviderError(self._scrub(f"the response stream broke off: {exc}"), "stream_error")
        return ProviderError(self._scrub(f"{type(exc).__name__}: {exc}"), "error")

    def _endpoint(self) -> str:
        return safe_url(str(self._client.base_url))

    def _scrub(self, text: str) -> str:
        return text.replace(self._key, "[API key]") if self._key else text


class _Retryable(Exception):
    """A failure worth another try: the ProviderError it would be, and the response's headers (Retry-After)."""

    def __init__(self, error: ProviderError, headers: Any) -> None:
        super().__init__(str(error))
        self.error, self.headers = error, headers


def _should_retry(exc: Exception) -> bool:
    """What the SDK would retry: a connection that failed or timed out, or a status the API means as "later"."""
    if isinstance(exc, (anthropic.APIConnectionError, anthropic.APITimeoutError)):
        return True
    if not isinstance(exc, anthropic.APIStatusError) or exc.status_code == 200:  # 200: an error event mid-stream
        return False
    should = exc.response.headers.get("x-should-retry")
    if should in ("true", "false"):
        return should == "true"
    return exc.status_code in (408, 409, 429) or exc.status_code >= 500


def _retry_wait(headers: Any, attempt: int) -> tuple[float, float | None]:
    """(seconds to wait, seconds the server asked for): Retry-After (`retry-after-ms`, seconds or an HTTP date)
    capped at MAX_RETRY_WAIT, else exponential backoff with jitter."""
    asked = _retry_after(headers)
    if asked is not None and asked > 0:
        return min(asked, MAX_RETRY_WAIT), asked
    backoff = min(BACKOFF_START * 2 ** (attempt - 1), BACKOFF_MAX)
    return backoff * (1 - 0.25 * random.random()), None


def _retry_after(headers: Any) -> float | None:
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        try:
            value = float(headers.get(name))
        except (TypeError, ValueError):
            continue
        return value / scale if value == value else None  # NaN: no answer
    date = email.utils.parsedate_tz(headers.get("retry-after") or "")
    return float(email.utils.mktime_tz(date) - time.time()) if date else None


def drain(events: Generator[Event, None, Response], on_text: Callable[[str], None] | None) -> Response:
    """Drain a response stream outside the loop, handing text to `on_text`; return the Response."""
    while True:
        try:
            event = next(events)
        except StopIteration as stop:
            return stop.value
        if on_text is not None and isinstance(event, TextDelta):
            on_text(event.text)


def _params(request: ModelRequest) -> dict[str, Any]:
    params: dict[str, Any] = {
        "model": request.model,
        "max_tokens": request.max_tokens,
        "messages": api_messages(request.messages),
    }
    if request.system:
        params["system"] = request.system
    if request.tools:
        params["tools"] = request.tools
    if request.thinking_budget:
        params["thinking"] = {"type": "enabled", "budget_tokens": request.thinking_budget}
    if request.cache:
        params["cache_control"] = {"type": "ephemeral"}
    return params


def api_messages(messages: list[Message]) -> list[dict]:
    """Messages-API params for the context. Thinking blocks go back verbatim with their signature, which the API
    requires in the turn before tool results when thinking is on; unsigned ones (a file that recorded no signature)
    are left out, as the API refuses them. Image/document data is not kept, so a note stands in for it."""
    out = []
    for m in messages:
        content = [b for b in (_block_param(b) for b in m.blocks) if b is not None]
        if content:
            out.append({"role": "assistant" if m.role == "assistant" else "user", "content": content})
    return out


def _block_param(b: Block) -> dict | None:
    if b.type == "thinking":
        return b.to_api() if b.signature else None
    if b.type in ("image", "document"):
        return {"type": "text", "text": f"[{b.type} ({b.media or 'unknown type'}) not kept in this session]"}
    if b.type == "unknown":
        return None
    return b.to_api()


def _block(content: Any) -> Block:
    kind = content.type
    if kind == "text":
        return Block("text", content.text)
    if kind == "thinking":
        return Block.of("thinking", content.thinking, signature=content.signature or None)
    if kind == "redacted_thinking":
        return Block("redacted_thinking", content.data)
    if kind == "tool_use":
        return Block.of("tool_use", tool_id=content.id, tool_name=content.name, input=content.input)
    return Block.of("unknown", raw=content.model_dump(mode="json"))


def _response(message: Any) -> Response:
    usage = message.usage
    return Response(
        id=message.id, model=message.model, blocks=[_block(c) for c in message.content],
        stop_reason=message.stop_reason, input_tokens=usage.input_tokens or 0,
        cache_creation=usage.cache_creation_input_tokens or 0, cache_read=usage.cache_read_input_tokens or 0,
        output_tokens=usage.output_tokens or 0)


def _abort(stream: Any) -> None:
    """Close `stream` from the cancelling thread. Closing alone leaves a read blocked on a silent socket (waiting for
    the first token, a stalled server) until bytes arrive; shutting the socket down wakes it at once, and the
    reader's error becomes Cancelled because the token is set."""
    network = stream.response.extensions.get("network_stream")
    sock = network.get_extra_info("socket") if network is not None else None
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:  # already closed: the stream ended as we cancelled
            pass
    stream.close()


def _partial(stream: Any) -> list[Block]:
    """What a cancelled stream had produced that can stand in history: its text, with the thinking before it that
    had arrived whole (signed: the signature is a thinking block's last delta). Thinking cut short is dropped (the
    API refuses it unsigned), and so are tool calls: their input may be cut short and they never ran. Without text
    there is nothing to keep."""
    try:
        snapshot = stream.current_message_snapshot
    except AssertionError:  # cancelled before message_start arrived
        return []
    kept = [c for c in snapshot.content if (c.type == "text" and c.text) or (c.type == "thinking" and c.signature)
            or c.type == "redacted_thinking"]
    return [_block(c) for c in kept] if any(c.type == "text" for c in kept) else []
