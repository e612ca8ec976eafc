"""Session builders for the compaction tests: hand-made sessions and a hypothesis strategy for random ones."""

from __future__ import annotations

from hypothesis import strategies as st

from inspector.core.model import Block, Message, Session

TOOLS = ("Read", "Bash", "Grep", "Edit", "Task", "mcp__db__query")


def prompt(text: str, uuid: str | None = None) -> Message:
    return Message("user", "prompt", [Block("text", text=text)], uuid=uuid)


def call(*uses: tuple[str, str], text: str = "", response: str | None = None) -> Message:
    """An assistant message with tool_use blocks (id, tool name)."""
    blocks = [Block("text", text=text)] if text else []
    blocks += [Block.of("tool_use", tool_id=i, tool_name=n, input={"arg": i}) for i, n in uses]
    return Message("assistant", "assistant", blocks, response_id=response)


def results(*res: tuple[str, str], error: bool = False) -> Message:
    """A user message with tool_result blocks (id, text)."""
    return Message("user", "tool_result", [Block("tool_result", tool_id=i, text=t, is_error=error) for i, t in res])


def tool_session(n: int, size: int = 5000, tool: str = "Read") -> Session:
    """prompt, then n rounds of one tool call and its `size`-character result."""
    messages = [prompt("go")]
    for k in range(n):
        messages.append(call((f"t{k}", tool), text=f"step {k}", response=f"r{k}"))
        messages.append(results((f"t{k}", f"{k:04d}" + "x" * (size - 4))))
    return Session("mem", "neutral", messages)


@st.composite
def sessions(draw: st.DrawFn, max_rounds: int = 14) -> Session:
    """Random valid sessions: prompts, text-only replies, parallel tool calls, error results, big and small results,
    responses split over several messages with results interleaved (as Claude Code writes them)."""
    messages: list[Message] = [prompt(draw(st.text(max_size=30)))]
    next_id = 0
    for r in range(draw(st.integers(1, max_rounds))):
        kind = draw(st.sampled_from(["prompt", "reply", "tools", "tools", "split"]))
        if kind == "prompt":
            messages.append(prompt(draw(st.text(max_size=50))))
            continue
        if kind == "reply":
            messages.append(Message("assistant", "assistant", [Block("text", text=draw(st.text(max_size=80)))],
                                    response_id=f"resp{r}"))
            continue
        n_calls = draw(st.integers(1, 3))
        ids = [f"toolu_{next_id + k}" for k in range(n_calls)]
        next_id += n_calls
        names = [draw(st.sampled_from(TOOLS)) for _ in ids]
        sizes = [draw(st.sampled_from([0, 10, 40, 300, 2500, 9000])) for _ in ids]
        errors = [draw(st.booleans()) for _ in ids]
        bodies = [(draw(st.text(min_size=1, max_size=8)) * (s // 8 + 1))[:s] for s in sizes]
        if kind == "split":  # one response over several messages, each result right after its use
            for i, n, body, err in zip(ids, names, bodies, errors):
                messages.append(call((i, n), response=f"resp{r}"))
                messages.append(results((i, body), error=err))
        else:
            messages.append(call(*zip(ids, names), text=draw(st.text(max_size=20)), response=f"resp{r}"))
            for i, body, err in zip(ids, bodies, errors):
                messages.append(results((i, body), error=err))
    return Session("random", "neutral", messages)


class RecordingProvider:
    """An in-process SummaryProvider: streams a fixed answer in pieces and records what it was sent."""

    def __init__(self, answer: str = "<analysis>notes</analysis>\n<summary>1. Primary Request and Intent:\n"
                                      "   build it</summary>", fail: Exception | None = None) -> None:
        self.answer, self.fail, self.calls = answer, fail, []

    def summarize(self, system, messages, on_text=None):
        self.calls.append((system, messages))
        if self.fail:
            raise self.fail
        for k in range(0, len(self.answer), 7):
            if on_text:
                on_text(self.answer[k:k + 7])
        return self.answer
