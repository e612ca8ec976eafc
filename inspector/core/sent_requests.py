"""Requests as the agent sent them, rebuilt from what its transcript records (Claude Code 2.1.332 and later).

Claude Code writes, beside the conversation, enough to replay every main-thread and subagent request exactly:

- `api-request-shape{shapeHash, shape{system[], tools[]}}`: the system blocks and tool schemas, without their
  `cache_control` and without the billing-header block it sends first (`x-anthropic-billing-header: ...`);
- `api-request-blob{hash, message}`: a message sent that no user/assistant line holds (reminders, system-role
  messages), content-addressed;
- `api-request{id, shapeHash, params, base, keep, tail, cacheControl, requestDigest, ...}`: one request. Its
  messages are the first `keep` messages of request `base` (the previous request of the same thread), then the
  messages whose hashes `tail` lists; `cacheControl[{path, value}]` puts each `cache_control` back where it was
  sent (`["system", i]`, `["tools", i]`, `["messages", i, "content", j]`); `params` holds every other body field
  but `metadata` and `stream` (and `betas`, sent as the `anthropic-beta` header).

A message's hash is SHA-256 of its JSON with sorted keys and no spaces, `cache_control` left out and a string
content read as one text block (a message may hold more than `role` and `content`: `output_config` carries a
per-turn effort); the messages of consecutive user lines (and of the lines of one assistant response) form one
message `{content, role}`, hashed at every line. So a hash names the content, not whether it went out as a string
or as a single text block: rebuilt messages always use blocks (`normalized` gives a sent body the same form).

`SentLog` holds one session's records. Shapes and blobs are parsed once and shared by every request that uses
them; a request keeps only its hashes, and the messages that live in the transcript are re-read from the file on
demand (their line offsets are all that is kept), so a long session costs little until a request is rebuilt.
"""

from __future__ import annotations

import copy
import json
from array import array
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import orjson


BILLING_HEADER = "x-anthropic-billing-header:"  # the first system block Claude Code sends; never recorded
UNRECORDED_KEYS = ("metadata", "stream")  # body fields an api-request never records


@dataclass(slots=True)
class Shape:
    """The system blocks and tool schemas of requests, as sent, without `cache_control`."""

    hash: str
    system: list[dict]
    tools: list[dict]
    line: int | None = None


@dataclass(slots=True)
class SentRequest:
    """One `api-request` record (`SentLog.response_id` says which response it produced)."""

    id: str
    shape: str
    params: dict
    base: str | None
    keep: int
    tail: tuple[str, ...]
    cache_control: tuple[tuple[tuple[Any, ...], Any], ...] = ()
    digest: str | None = None
    query_source: str | None = None
    agent_id: str | None = None
    line: int | None = None
    timestamp: str | None = None

    @property
    def model(self) -> str | None:
        model = self.params.get("model")
        return model if isinstance(model, str) else None


@dataclass(slots=True)
class Rebuilt:
    """A request rebuilt: the body as sent (less `metadata`, `stream` and the billing-header block), the beta
    header it went with, and the hashes whose message the file does not hold (then `body` lacks them)."""

    request: SentRequest
    body: dict
    betas: list[str]
    missing: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return not self.missing


def message_hash(message: dict) -> str:
    """Claude Code's hash of a message: the message as sorted, spaceless JSON without `cache_control`, a string
    content being one text block."""
    return _digest({**message, "content": _blocks(message.get("content"))})


def _digest(obj: Any) -> str:
    import hashlib  # here: a session without sent requests never hashes, and its import costs a status line ~5 ms

    return hashlib.sha256(_canonical(obj)).hexdigest()


def _canonical(obj: Any) -> bytes:
    text = json.dumps(_without_cache_control(obj), ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    try:
        return text.encode()
    except UnicodeEncodeError:  # a lone surrogate: JavaScript's JSON.stringify writes it escaped
        return json.dumps(_without_cache_control(obj), sort_keys=True, separators=(",", ":")).encode()


def _without_cache_control(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _without_cache_control(v) for k, v in obj.items() if k != "cache_control"}
    if isinstance(obj, list):
        return [_without_cache_control(v) for v in obj]
    return obj


def _blocks(content: Any) -> list:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return content
    return [] if content is None else [content]


def normalized(body: dict) -> dict:
    """A body as a rebuilt one reads: messages with block contents, no billing-header block, no `metadata` or
    `stream` (what the record cannot tell apart or does not keep), for comparing with `Rebuilt.body`."""
    body = {k: v for k, v in body.items() if k not in UNRECORDED_KEYS}
    if isinstance(body.get("system"), list):
        body["system"] = [b for b in body["system"] if not _billing(b)]
    if isinstance(body.get("messages"), list):
        body["messages"] = [{**m, "content": _blocks(m.get("content"))} if isinstance(m, dict) else m
                            for m in body["messages"]]
    return body


def _billing(block: Any) -> bool:
    return isinstance(block, dict) and str(block.get("text", "")).startswith(BILLING_HEADER)


class TranscriptMessages:
    """The messages Claude Code hashes from a transcript's user/assistant lines, found again on demand.

    The loader appends each such line's byte offset to `offsets` as it reads; the first lookup of a hash no blob
    holds re-reads the lines not indexed yet and hashes their runs as Claude Code does (consecutive user lines are
    one message, the lines of one assistant response another), keeping per hash only where its run starts and how
    many lines it covers."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.offsets = array("q")
        self.where: dict[str, tuple[int, int]] = {}  # hash -> (index in offsets of the run's first line, lines)
        self._indexed = 0
        self._run: list | None = None  # [first index, role, message id, running hash, blocks so far]

    def find(self, digest: str) -> dict | None:
        if digest not in self.where and self._indexed < len(self.offsets):
            self._index()
        at = self.where.get(digest)
        if at is None:
            return None
        first, count = at
        role, content = None, []
        try:
            with open(self.path, "rb") as f:
                for n in range(first, first + count):
                    message = self._message(f, n)
                    if message is None:
                        return None  # the file changed under us
                    role = message["role"]
                    content.extend(_blocks(message["content"]))
        except OSError:
            return None
        return {"role": role, "content": content}

    def _message(self, f: BinaryIO, n: int) -> dict | None:
        f.seek(self.offsets[n])
        try:
            obj = orjson.loads(f.readline())
        except ValueError:
            return None
        message = obj.get("message") if isinstance(obj, dict) else None
        if not isinstance(message, dict) or not isinstance(message.get("role"), str) or message.get("content") is None:
            return None
        return message

    def _index(self) -> None:
        try:
            with open(self.path, "rb") as f:
                self._index_from(f)
        except OSError:
            return

    def _index_from(self, f: BinaryIO) -> None:
        import hashlib

        for n in range(self._indexed, len(self.offsets)):
            message = self._message(f, n)
            if message is None:
                self._run = None
                continue
            role = message["role"]
            mid = message.get("id") if isinstance(message.get("id"), str) else None
            run = self._run
            if run is None or run[1] != role or (role != "user" and (mid is None or run[2] != mid)):
                run = self._run = [n, role, mid, hashlib.sha256(b'{"content":['), 0]
            running = run[3]
            for block in _blocks(message["content"]):
                if run[4]:
                    running.update(b",")
                running.update(_canonical(block))
                run[4] += 1
            done = running.copy()
            done.update(b'],"role":' + json.dumps(role, ensure_ascii=False).encode() + b"}")
            self.where.setdefault(done.hexdigest(), (run[0], n - run[0] + 1))
        self._indexed = len(self.offsets)


@dataclass
class SentLog:
    """One session file's recorded requests, shapes and blobs (see the module docstring). `requests` are in file
    order; a Session holds its own copy of the list, the shapes, blobs and transcript index are shared."""

    requests: list[SentRequest]
    shapes: dict[str, Shape]
    blobs: dict[str, dict]
    transcript: TranscriptMessages
    responses: dict[str, str] = field(default_factory=dict)  # request id -> id of the response it produced
    by_id: dict[str, int] | None = None  # request id -> index; may be shared with later, longer logs
    _previous: dict[str, SentRequest] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.by_id is None:
            self.by_id = {r.id: i for i, r in enumerate(self.requests)}

    def __len__(self) -> int:
        return len(self.requests)

    def get(self, request_id: str | None) -> SentRequest | None:
        at = self.by_id.get(request_id or "") if self.by_id is not None else None
        return self.requests[at] if at is not None and at < len(self.requests) else None

    def response_id(self, request: SentRequest) -> str | None:
        """The id of the response `request` produced (a `Request.id`); None when none arrived (a failed attempt,
        retried as another request)."""
        return self.responses.get(request.id)

    def shape(self, request: SentRequest) -> Shape | None:
        return self.shapes.get(request.shape)

    def hashes(self, request: SentRequest) -> list[str] | None:
        """The hashes of the request's messages, in order; None when its chain of bases is broken (a base
        missing from the file, or holding fewer messages than `keep`)."""
        parts: list[tuple[str, ...]] = [request.tail]
        need, cur, seen = request.keep, request, {request.id}
        while need > 0:
            base = self.get(cur.base)
            if base is None or base.id in seen:
                return None
            seen.add(base.id)
            take = max(0, need - base.keep)
            if take > len(base.tail):
                return None
            parts.append(base.tail[:take])
            need -= take
            cur = base
        return [h for part in reversed(parts) for h in part]

    def message(self, digest: str) -> dict | None:
        """The message of a hash: a blob, else the transcript's message of that hash."""
        blob = self.blobs.get(digest)
        return blob if blob is not None else self.transcript.find(digest)

    def rebuild(self, request: SentRequest) -> Rebuilt:
        """The request's body as sent (see `normalized` for what it leaves out), built afresh: blobs and shapes are
        copied before `cache_control` goes back in, so they stay as recorded."""
        body: dict[str, Any] = {k: copy.deepcopy(v) for k, v in request.params.items() if k != "betas"}
        shape = self.shape(request)
        if shape is not None:
            body["system"] = copy.deepcopy(shape.system)
            body["tools"] = copy.deepcopy(shape.tools)
        hashes = self.hashes(request)
        missing: list[str] = [] if hashes is not None else [f"base {request.base}"]
        messages = []
        for digest in hashes or []:
            message = self.message(digest)
            if message is None:
                missing.append(digest)
            else:
                messages.append({**copy.deepcopy(message), "content": copy.deepcopy(_blocks(message.get("content")))})
        body["messages"] = messages
        for path, value in request.cache_control:
            _place(body, path, value)
        betas = request.params.get("betas")
        return Rebuilt(request, body, list(betas) if isinstance(betas, list) else [], missing)

    def length(self, request: SentRequest) -> int:
        """How many messages the request sent (its base's first `keep`, then its tail)."""
        return request.keep + len(request.tail)

    def suffix(self, request: SentRequest, start: int) -> list[str] | None:
        """The hashes of the request's messages from index `start` on, walking back only as far as needed (the
        tail usually covers it); None when the chain is broken."""
        levels: list[SentRequest] = []
        cur: SentRequest | None = request
        while cur is not None and start < cur.keep:
            levels.append(cur)
            cur = self.get(cur.base)
            if cur is not None and any(cur is level for level in levels):  # bases that form a cycle
                return None
        if cur is None:
            return None
        out = list(cur.tail[start - cur.keep:])
        for level in reversed(levels):  # messages(level) = messages(base)[:keep] + tail
            if len(out) < level.keep - start:
                return None
            out = out[:level.keep - start] + list(level.tail)
        return out

    def index(self, request: SentRequest) -> int:
        """The request's position in `requests`."""
        at = self.by_id.get(request.id) if self.by_id is not None else None
        return at if at is not None and at < len(self.requests) and self.requests[at] is request \
            else self.requests.index(request)

    def previous(self, request: SentRequest) -> SentRequest | None:
        """The request of the same thread (the main one, or one subagent's) sent before this one."""
        if self._previous is None:
            last: dict[str | None, SentRequest] = {}
            self._previous = {}
            for r in self.requests:
                if r.agent_id in last:
                    self._previous[r.id] = last[r.agent_id]
                last[r.agent_id] = r
        return self._previous.get(request.id)


def _place(body: dict, path: tuple[Any, ...], value: Any) -> None:
    """Put `cache_control` at `path` (keys and indices from the body down to the object that held it)."""
    node: Any = body
    for step in path:
        try:
            node = node[step]
        except (KeyError, IndexError, TypeError):
            return
    if isinstance(node, dict):
        node["cache_control"] = copy.deepcopy(value)
