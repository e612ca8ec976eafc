"""The agent loop: one user turn as a generator of typed events.

    append the user message
    loop:  maybe compact  ->  stream the model  ->  run its tool calls  ->  append the results
    until the model stops calling tools (or the turn is cancelled, fails, or hits max_iterations)

`state` (an inspector.core.model.Session) is updated in place as the turn goes, so a view holding it sees the
context grow; every change is also announced by a MessageAdded event, which is what the session writer records.
Whatever happens, the history stays valid for the API: every tool_use gets its tool_result (an error result for a
call that was denied, interrupted or never started), and a turn never ends on a dangling call. A run that starts
on a history left broken (a crash, a closed generator) repairs it first.

Cancel with `config.cancel.cancel()` from any thread: the open stream closes, a running command is killed, and the
generator finishes with TurnDone("cancelled"). The token is reset when the next `run` starts, so the session goes on.

Whatever enters the history is made encodable first: a lone surrogate (a file name that is no UTF-8, a streamed
"\\ud83d" half of an emoji) becomes U+FFFD, since one would make every later request (and the session file) fail to
encode. A tool id the response gives twice, or that an earlier call already had, runs once: the repeat gets an id
of its own and an error result saying why, so the history stays one answer per call.
"""

from __future__ import annotations

import queue
import re
import threading
import uuid
from collections.abc import Callable, Generator, Iterator
from datetime import datetime, timezone
from typing import TypeVar

from inspector.core.agent.config import AgentConfig
from inspector.core.agent.events import (
    CompactionFailed, CompactionFinished, CompactionStarted, CompactionText, Decision, Error, Event, MessageAdded,
    ToolCall, ToolResult, TurnDone, Usage,
)
from inspector.core.agent.permissions import denial_text
from inspector.core.agent.provider import Cancelled, ModelRequest, ProviderError, Response
from inspector.core.agent.tools import ToolContext, run_tool
from inspector.core.compaction.pipeline import CompactionOutcome
from inspector.core.model import Block, Message, Request, Session
from inspector.core.versions import Edit

T = TypeVar("T")

INTERRUPTED = "Interrupted by the user before this call finished."
NOT_RUN = "Not run: the user cancelled the turn."
_SURROGATE = re.compile("[\ud800-\udfff]")


def run(user_message: str, state: Session, config: AgentConfig, system_prompt: str) -> Iterator[Event]:
    """Run one user turn on `state`; see the module docstring. The last event is always TurnDone."""
    config.cancel.reset()
    ctx = ToolContext(config.cwd, config.cancel, config.output_cap, config.bash_timeout)
    yield from _repair(state)
    yield _append(state, Message("user", "prompt", [Block("text", clean(user_message))]))
    iterations = 0
    stop = "end_turn"
    breaker_reported: list[bool] = []  # an open breaker is reported once per turn, not at every iteration
    while True:
        if config.cancel.cancelled:
            stop = "cancelled"
            break
        if iterations >= config.max_iterations:
            yield Error(f"stopped after {iterations} model calls in one turn (max_iterations)", "max_iterations")
            stop = "max_iterations"
            break
        iterations += 1
        yield from _compact(state, config, breaker_reported)
        if config.cancel.cancelled:
            stop = "cancelled"
            break
        try:
            response = yield from config.provider.stream(_request(state, config, system_prompt), config.cancel)
        except Cancelled as cancelled:
            if cancelled.partial:
                yield _append(state, Message("assistant", "assistant", [_clean_block(b) for b in cancelled.partial],
                                             model=config.model))
            stop = "cancelled"
            break
        except ProviderError as exc:
            yield Error(str(exc), exc.error_type, exc.status)
            stop = "error"
            break
        response.blocks = [_clean_block(b) for b in response.blocks]
        repeats = _unique_ids(response.blocks, state)
        request = _record(state, response)
        yield Usage(response.id, response.model, response.input_tokens, response.cache_creation,
                    response.cache_read, response.output_tokens, response.stop_reason)
        yield MessageAdded(state.messages[-1], request)
        calls = [b for b in response.blocks if b.type == "tool_use"]
        if not calls:
            stop = response.stop_reason or "end_turn"
            break
        yield from _run_calls(calls, state, config, ctx, repeats)
        if config.cancel.cancelled:
            stop = "cancelled"
            break
    yield TurnDone(stop, iterations)


def _compact(state: Session, config: AgentConfig, breaker_reported: list[bool]) -> Iterator[Event]:
    """maybe_compact, announced: CompactionStarted when the figure is over the threshold and a summary may be
    attempted, the summary's text as it streams, one CompactionFinished per step applied, CompactionFailed on
    failure. `state` takes the compacted session's messages and compaction records in place. A bug in the engine
    is reported as a failed compaction and the turn goes on uncompacted rather than being lost."""
    compactor = config.compactor
    if compactor is None or compactor.measure is None:
        return
    try:
        figure = compactor.measure(state)
        if figure <= compactor.policy.threshold:
            return
        quiet = compactor.breaker.open  # only microcompaction can still run: nothing to wait for
        if not quiet:
            yield CompactionStarted(figure, compactor.policy.threshold)
        outcome = yield from _pump(lambda on_text: compactor(state, on_text=on_text))
    except Exception as exc:
        yield CompactionFailed(f"internal error: {type(exc).__name__}: {exc}", compactor.breaker.failures,
                               compactor.breaker.open)
        return
    if outcome.error is not None and config.cancel.cancelled and not quiet:
        compactor.breaker.failures -= 1  # a summary the user cancelled did not fail: it must not trip the breaker
    yield from _apply_outcome(state, outcome)
    if outcome.error is not None and not config.cancel.cancelled and not (quiet and breaker_reported):
        breaker_reported.append(quiet)
        yield CompactionFailed(outcome.error, compactor.breaker.failures, compactor.breaker.open)


def _apply_outcome(state: Session, outcome: CompactionOutcome) -> Iterator[Event]:
    first_new = len(state.compactions)
    new = outcome.session
    if not outcome.plans:
        return
    for message in new.messages[len(state.messages):]:
        message.uuid = message.uuid or uuid.uuid4().hex
        message.timestamp = message.timestamp or _now()
    state.messages = list(new.messages)
    state.compactions = list(new.compactions)
    for plan, compaction in zip(outcome.plans, new.compactions[first_new:]):
        compaction.timestamp = compaction.timestamp or _now()
        if compaction.kind == "compact":
            yield CompactionFinished(plan.strategy, plan.before, plan.after, compaction, plan,
                                     messages=state.messages[compaction.index:])
        else:
            changes = [Edit(i, before, state.messages[i]) for i, before in sorted(compaction.replaced.items())]
            yield CompactionFinished(plan.strategy, plan.before, plan.after, compaction, plan, edits=changes)


def _pump(work: Callable[[Callable[[str], None]], T]) -> Generator[Event, None, T]:
    """Run `work(on_text)` in a thread and yield what it passes to `on_text` as CompactionText while it runs, so a
    summary streams through the loop's own event stream."""
    pieces: queue.Queue[CompactionText | None] = queue.Queue()
    result: dict[str, object] = {}

    def target() -> None:
        try:
            result["value"] = work(lambda text: pieces.put(CompactionText(text)))
        except BaseException as exc:  # re-raised in the loop's thread
            result["error"] = exc
        finally:
            pieces.put(None)

    threading.Thread(target=target, name="compaction", daemon=True).start()
    while (piece := pieces.get()) is not None:
        yield piece
    if "error" in result:
        raise result["error"]  # type: ignore[misc]
    return result["value"]  # type: ignore[return-value]


def _request(state: Session, config: AgentConfig, system_prompt: str) -> ModelRequest:
    return ModelRequest(config.model, system_prompt, state.context, [t.schema() for t in config.tools],
                        config.max_tokens or 0, config.thinking_budget, config.prompt_cache)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _append(state: Session, message: Message) -> MessageAdded:
    message.uuid = message.uuid or uuid.uuid4().hex
    message.parent_uuid = state.messages[-1].uuid if state.messages else None
    message.timestamp = message.timestamp or _now()
    state.messages.append(message)
    return MessageAdded(message)


def _record(state: Session, response: Response) -> Request:
    """Append the response as an assistant message and its usage as a Request."""
    seen_end = len(state.messages)
    message = Message("assistant", "assistant", response.blocks, model=response.model, response_id=response.id)
    _append(state, message)
    request = Request(response.id, response.model, response.input_tokens, response.cache_creation,
                      response.cache_read, response.output_tokens, message_index=seen_end,
                      seen_start=state.context_start, seen_end=seen_end, timestamp=message.timestamp)
    state.requests.append(request)
    if response.model and response.model not in state.models:
        state.models.append(response.model)
    return request


def clean(value: T) -> T:
    """`value` (text, or a tool input's JSON) with every lone surrogate replaced by U+FFFD."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value  # type: ignore[return-value]
        except UnicodeEncodeError:
            return _SURROGATE.sub("\ufffd", value)  # type: ignore[return-value]
    if isinstance(value, dict):
        return {clean(k): clean(v) for k, v in value.items()}  # type: ignore[return-value]
    if isinstance(value, list):
        return [clean(v) for v in value]  # type: ignore[return-value]
    return value


def _clean_block(b: Block) -> Block:
    b.text, b.input, b.tool_id, b.tool_name = clean(b.text), clean(b.input), clean(b.tool_id), clean(b.tool_name)
    return b


def _unique_ids(blocks: list[Block], state: Session) -> dict[str, str]:
    """Give each tool_use of a response whose id is missing, repeated, or already used in the context an id of
    its own; returns {new id: the id it repeated}."""
    used = {b.tool_id for m in state.context for b in m.blocks if b.type == "tool_use"}
    repeats: dict[str, str] = {}
    for b in blocks:
        if b.type != "tool_use":
            continue
        if b.tool_id is None or b.tool_id in used:
            original, n = b.tool_id or "toolu_none", 2
            while f"{original}_repeat{n}" in used:
                n += 1
            b.tool_id = f"{original}_repeat{n}"
            repeats[b.tool_id] = original
        used.add(b.tool_id)
    return repeats


def _run_calls(calls: list[Block], state: Session, config: AgentConfig, ctx: ToolContext,
               repeats: dict[str, str] | None = None) -> Generator[Event, None, None]:
    """Run the calls in order and append one user message with all their results (a repeated id: not run). If
    the generator is closed part-way, the calls not answered yet get error results all the same (appended
    without an event)."""
    results: list[Block] = []
    try:
        for call in calls:
            if repeats and call.tool_id in repeats:
                text, is_error = (f"Not run: this call repeats the id {repeats[call.tool_id]} of another call; "
                                  "each call needs an id of its own."), True
                yield ToolCall(call.tool_id or "", call.tool_name or "", call.input)
            else:
                text, is_error = yield from _run_call(call, config, ctx)
                text = clean(text)
            results.append(Block("tool_result", text, tool_id=call.tool_id, is_error=is_error))
            yield ToolResult(call.tool_id or "", call.tool_name or "", text, is_error)
    finally:
        done = {b.tool_id for b in results}
        results += [Block("tool_result", NOT_RUN, tool_id=c.tool_id, is_error=True)
                    for c in calls if c.tool_id not in done]
        added = _append(state, Message("user", "tool_result", results))
    yield added


def _run_call(call: Block, config: AgentConfig, ctx: ToolContext) -> Generator[Event, None, tuple[str, bool]]:
    yield ToolCall(call.tool_id or "", call.tool_name or "", call.input)
    tool = next((t for t in config.tools if t.name == call.tool_name), None)
    if tool is None:
        return f"Unknown tool {call.tool_name!r}; the tools are: {', '.join(t.name for t in config.tools)}", True
    if config.cancel.cancelled:
        return NOT_RUN, True
    permissions = config.permissions
    assert permissions is not None  # set by AgentConfig.__post_init__
    asked = permissions.check(tool, call.input, ctx, call.tool_id or "")
    if asked is not None:
        if permissions.auto is None:
            yield asked  # the consumer replies before resuming us
            if config.cancel.cancelled:
                return NOT_RUN, True
        decision = permissions.decide(asked)
        if permissions.auto is not None:
            yield asked  # answered by policy: still shown, so the user sees what was decided on their behalf
        if decision is Decision.DENY:
            return denial_text(asked), True
    text, is_error = run_tool(tool, call.input, ctx)
    if config.cancel.cancelled and is_error:
        return INTERRUPTED + ("\n" + text if text else ""), True
    return text, is_error


def _repair(state: Session) -> Iterator[Event]:
    """Answer tool calls of the last response that a previous run left without results (a crash, a closed
    generator), so the history is valid before the next user message joins it. The API reads consecutive user
    messages as one turn, so the answers may follow a partial result message."""
    context = state.context
    last = next((i for i in range(len(context) - 1, -1, -1) if context[i].role == "assistant"), None)
    if last is None:
        return
    answered = {b.tool_id for m in context[last + 1:] for b in m.tool_results()}
    missing = [b for b in context[last].tool_uses() if b.tool_id not in answered]
    if missing:
        yield _append(state, Message("user", "tool_result", [
            Block("tool_result", INTERRUPTED, tool_id=b.tool_id, is_error=True) for b in missing]))

