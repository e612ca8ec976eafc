"""The records Claude Code 2.1.332 writes beside the conversation, read for `ClaudeCodeLoader`.

`RequestRecorder` takes the request records (`api-request-shape`, `api-request-blob`, `api-request`) into a
`SentLog` (inspector/core/sent_requests.py) and notes where every user/assistant line starts, so the messages the
transcript itself holds can be found again by hash. `reminder` turns an `attachment` entry into what the model was
sent for it (its `rendered` text, in the role it went as). Everything else new is named in IGNORED with why.
"""

from __future__ import annotations

import sys
from typing import Any

import orjson

from inspector.core.formats.blocks import as_list
from inspector.core.model import AgentCost, Block
from inspector.core.sent_requests import SentLog, SentRequest, Shape, TranscriptMessages

REQUEST_RECORDS = frozenset({"api-request-shape", "api-request-blob", "api-request"})

# Entries of 2.1.332 that carry nothing the model saw (or nothing the usage does not already say), skipped without a
# warning: `atis-latch` (an internal latch), `tools-used` (names of the tools called so far), `mode` (the
# permission mode), `api-request-resumed` (a paused request picked up again: its response is an ordinary assistant
# line), `fork-context-ref` (a forked session's pointer to its parent), `deferred_tools_record` rides on an
# attachment (below).
IGNORED = frozenset({"atis-latch", "tools-used", "mode", "api-request-resumed", "fork-context-ref"})
# The session's cost and per-model usage totals as Claude Code counts them (`totalCostUSD`, `modelUsage{model:
# {costUSD, ...}}`), rewritten as the session goes: the last one is its own figure of the cost (`agent_cost`).
COST_STATE = "cost-state"

WRAP_OPEN, WRAP_CLOSE = "<system-reminder>\n", "\n</system-reminder>"


class RequestRecorder:
    """The request records of one file, as they are read; `log()` is the SentLog as of now."""

    def __init__(self, source: str) -> None:
        self.shapes: dict[str, Shape] = {}
        self.blobs: dict[str, dict] = {}
        self.requests: list[SentRequest] = []
        self.responses: dict[str, str] = {}
        self.by_id: dict[str, int] = {}  # shared by every log built: only ever added to
        self.transcript = TranscriptMessages(source)
        self._params: dict[bytes, dict] = {}  # params shared by every request that sent the same
        self._marks: dict[tuple, tuple] = {}  # likewise each cache breakpoint (path, value)

    def feed(self, kind: str, line_no: int, obj: dict) -> str | None:
        """Take one request record; a warning's text when it is malformed (then it is skipped)."""
        if kind == "api-request-shape":
            shape, digest = obj.get("shape"), obj.get("shapeHash")
            if not isinstance(digest, str) or not isinstance(shape, dict):
                return "api-request-shape without shapeHash or shape, skipped"
            system, tools = shape.get("system"), shape.get("tools")
            self.shapes.setdefault(digest, Shape(digest, system if isinstance(system, list) else [],
                                                 tools if isinstance(tools, list) else [], line_no))
            return None
        if kind == "api-request-blob":
            digest, message = obj.get("hash"), obj.get("message")
            if not isinstance(digest, str) or not isinstance(message, dict):
                return "api-request-blob without hash or message, skipped"
            self.blobs.setdefault(digest, message)
            return None
        request = self._request(obj, line_no)
        if request is None:
            return "api-request without id, shapeHash or tail, skipped"
        self.by_id.setdefault(request.id, len(self.requests))
        self.requests.append(request)
        return None

    def _request(self, obj: dict, line_no: int) -> SentRequest | None:
        rid, shape, tail = obj.get("id"), obj.get("shapeHash"), obj.get("tail")
        if not isinstance(rid, str) or not isinstance(shape, str) or not isinstance(tail, list):
            return None
        params = obj.get("params") if isinstance(obj.get("params"), dict) else {}
        key = orjson.dumps(params, option=orjson.OPT_SORT_KEYS)
        params = self._params.setdefault(key, params)
        keep = obj.get("keep")
        marks = []
        for mark in as_list(obj.get("cacheControl")):
            if isinstance(mark, dict) and isinstance(mark.get("path"), list):
                path, value = tuple(mark["path"]), mark.get("value")
                try:  # a breakpoint's value is a small flat dict ({"type": "ephemeral"}): the same ones shared
                    key = (path, tuple(sorted(value.items())) if isinstance(value, dict) else value)
                    marks.append(self._marks.setdefault(key, (path, value)))
                except TypeError:  # something unhashable in it: kept as it is
                    marks.append((path, value))
        base = obj.get("base")
        digest = obj.get("requestDigest", obj.get("cutRequestDigest"))
        return SentRequest(rid, sys.intern(shape), params, base if isinstance(base, str) else None,
                           keep if isinstance(keep, int) and keep >= 0 else 0,
                           tuple(h for h in tail if isinstance(h, str)), tuple(marks),
                           digest if isinstance(digest, str) else None, _opt(obj.get("querySource")),
                           _opt(obj.get("agentId")), line_no, _opt(obj.get("timestamp")))

    def respond(self, request_id: str, response_id: str) -> None:
        """An assistant line answered request `request_id` (its `requestRef`) with response `response_id`."""
        self.responses.setdefault(request_id, response_id)

    def log(self) -> SentLog | None:
        """The SentLog as of the lines read so far (None when the file records no request)."""
        if not self.requests and not self.shapes:
            return None
        return SentLog(list(self.requests), self.shapes, self.blobs, self.transcript, self.responses, self.by_id)


def reminder(obj: dict) -> tuple[str, list[Block]] | None:
    """(role, blocks) an attachment entry was sent as: its `rendered` texts in `renderedRole` (a system-role
    message goes without the <system-reminder> wrapper, as it is sent); None when it renders to nothing."""
    rendered = obj.get("rendered")
    if not isinstance(rendered, list):
        return None
    texts = [r.get("content") for r in rendered if isinstance(r, dict) and isinstance(r.get("content"), str)]
    texts = [t for t in texts if t]
    if not texts:
        return None
    role = "system" if obj.get("renderedRole") == "system" else "user"
    if role == "system":
        texts = [t[len(WRAP_OPEN):-len(WRAP_CLOSE)] if t.startswith(WRAP_OPEN) and t.endswith(WRAP_CLOSE) else t
                 for t in texts]
    return role, [Block("text", t) for t in texts]


def agent_cost(obj: dict) -> AgentCost | None:
    """Claude Code's own cost figure from a `cost-state` entry (None when it holds no total)."""
    total = obj.get("totalCostUSD")
    if not isinstance(total, (int, float)) or isinstance(total, bool):
        return None
    usage = obj.get("modelUsage")
    by_model = {m: float(u["costUSD"]) for m, u in usage.items()
                if isinstance(u, dict) and isinstance(u.get("costUSD"), (int, float))} if isinstance(usage, dict) else {}
    return AgentCost(float(total), "cost-state", by_model)


def attachment_type(obj: dict) -> str:
    attachment = obj.get("attachment")
    kind = attachment.get("type") if isinstance(attachment, dict) else None
    return kind if isinstance(kind, str) else "attachment"


def _opt(value: Any) -> str | None:
    """A string field, short ones (query sources, agent ids) interned: every request repeats them."""
    if not isinstance(value, str):
        return None
    return sys.intern(value) if len(value) < 64 else value
