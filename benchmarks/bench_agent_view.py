"""Agent view benchmark: what a user feels while the agent runs in the app, on a new and on a 10k-message session.

    /work/venv/bin/python benchmarks/bench_agent_view.py [--repeat 7] [--deltas 2000] [--paced 400] [--pace 0.005]
                                                         [--messages 10000] [--size 120x40]

The real app runs headless in this process (Textual's `run_test`) with the Agent view open, its agent talking
through the real `anthropic` SDK to the Messages-API test server (tests/mock_api), run in a child process as a real
API is remote, answering at once: the app's own cost, with the model's time taken out. Frames are counted where
Textual hands a compositor update to the display (headless: not written to a terminal), and each condition below is
checked at every frame, so a time is "until the frame that shows it". Per repeat, one after another (each turn
starts when the views show exact figures for the last one, as for a user who reads the answer first):

- first text: from posting Enter on a prompt to the frame showing the first streamed text of the answer (which
  streams on for 0.2 s more);
- tool call: a turn calling read_file: from the loop handing the app the call to the frame showing its result row
  (`✓`) in the agent's log, and to the Messages view's list holding the result's row (that tab is hidden while the
  Agent view is up, so that one is "list updated", not painted);
- an answer of N text deltas (16 characters each, the server's chunking) streamed as fast as the socket takes it,
  then one of M deltas with a pause between events (a fast model's pace): from Enter, and from the loop handing the
  app the last delta, to the frame showing the answer's last characters; meanwhile a key is typed into the prompt box every 25 ms and timed to the frame showing it, and the
  longest gap between frames and the event loop's longest stall (a 2 ms ticker's worst lateness) are taken;
- exact figures: from the loop handing the app the end of the long answer's turn to the views holding exact
  figures (computed off the UI thread).

Everything is measured on a new agent session and on a large neutral session generated here (N messages: rounds of
prompt, text + tool call, result, with usage on every response, compacted every 600 messages, so the model sees
only the last part as in a real long session), opened in the app and continued in place by the agent. Medians and
p95 over the repeats (key latencies: over every key typed); a warm-up turn (the SDK client, the session file) comes
first and is not counted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from mock_api import MOCK_KEY, responses as r  # noqa: E402

from inspector.core.model import Block, Compaction, Message, Request, Session  # noqa: E402

KEY_EVERY = 0.025  # seconds between keys typed into the prompt box while an answer streams
TICK = 0.002  # the event-loop ticker's sleep
SEGMENT = 600  # messages between two compactions in the generated session
TIMEOUT = 60.0  # seconds any one wait may take before the run stops with what it waited for


def generate(path: Path, n: int) -> Session:
    """A neutral agent session of `n` messages written to `path` (see the module docstring)."""
    from inspector.core.formats.neutral import session_lines

    rng = random.Random(9)
    words = "context window tokens compaction agent session request tool result summary file line".split()
    messages: list[Message] = []
    requests: list[Request] = []
    compactions: list[Compaction] = []
    context, since, k = 2_000, 0, 0

    def say(count: int) -> str:
        return " ".join(rng.choice(words) for _ in range(count))

    def answer(blocks: list[Block]) -> None:
        nonlocal context
        out = sum(len(b.text) + len(json.dumps(b.input or "")) for b in blocks) // 4 + 1
        requests.append(Request(f"msg_gen_{len(requests)}", "claude-sonnet-4-6", 3, 0, context, out,
                                len(messages), seen_end=len(messages)))
        messages.append(Message("assistant", "assistant", blocks, uuid=f"a{len(messages)}",
                                model="claude-sonnet-4-6", response_id=f"msg_gen_{len(requests) - 1}"))
        context += out

    while len(messages) < n - 1:
        if since >= SEGMENT:
            compactions.append(Compaction("compact", len(messages), trigger="auto", pre_tokens=context))
            messages.append(Message("user", "compact_summary", [Block("text", "Summary of the work so far: "
                                                                      + say(200))], uuid=f"s{len(messages)}"))
            context, since = 3_000, 1
        messages.append(Message("user", "prompt", [Block("text", f"Task {k}: " + say(30))], uuid=f"u{len(messages)}"))
        since += 1
        for _ in range(rng.randint(2, 6)):
            tid = f"toolu_gen_{k}_{len(messages)}"
            answer([Block("text", say(rng.randint(5, 40))),
                    Block("tool_use", tool_id=tid, tool_name="read_file", input={"path": f"src/{rng.choice(words)}.py"})])
            result = "\n".join(say(12) for _ in range(rng.choice([2, 8, 30])))
            messages.append(Message("user", "tool_result", [Block("tool_result", result, tool_id=tid)],
                                    uuid=f"r{len(messages)}"))
            context += len(result) // 4
            since += 2
        answer([Block("text", "Done: " + say(60))])
        since += 1
        k += 1
    session = Session(source=str(path), format="neutral", messages=messages, requests=requests,
                      compactions=compactions, models=["claude-sonnet-4-6"], system="You are a coding agent.")
    with path.open("w", encoding="utf-8") as f:
        for line in session_lines(session):
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
    return session


class Server:
    """The test server (tests/mock_api) in a child process: a real API is remote, so its work (parsing requests,
    counting tokens, writing the stream) must not compete with the app for this process's GIL. `add` queues
    answers as `MockAnthropicServer.add` does."""

    def __init__(self) -> None:
        context = multiprocessing.get_context("spawn")
        self._conn, child = context.Pipe()
        self._process = context.Process(target=_serve, args=(child,), daemon=True)
        self._process.start()
        self.url: str = self._conn.recv()

    def add(self, *responses: Any) -> None:
        self._conn.send(responses)
        self._conn.recv()

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self._conn.send(None)
        self._process.join(5)


def _serve(conn: Any) -> None:
    from mock_api import MockAnthropicServer

    with MockAnthropicServer() as server:
        conn.send(server.url)
        while (responses := conn.recv()) is not None:
            server.add(*responses)
            conn.send(True)


class Frames:
    """Timestamps of every frame, and conditions checked at each one (`watch`): the time of the first frame at
    which a condition holds is the time it reached the screen."""

    def __init__(self, app: Any) -> None:
        self.times: list[float] = []
        self._watches: list[tuple[Callable[[], bool], asyncio.Future[float]]] = []
        display = app._display

        def timed_display(screen: Any, renderable: Any) -> None:
            display(screen, renderable)
            if renderable is None:
                return
            now = time.perf_counter()
            self.times.append(now)
            for item in list(self._watches):
                condition, future = item
                if condition():
                    self._watches.remove(item)
                    if not future.done():
                        future.set_result(now)

        app._display = timed_display

    def watch(self, condition: Callable[[], bool]) -> asyncio.Future[float]:
        future: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self._watches.append((condition, future))
        return future


async def wait_for(condition: Callable[[], bool], what: str, timeout: float = TIMEOUT) -> float:
    end = time.perf_counter() + timeout
    while not condition():
        if time.perf_counter() > end:
            raise TimeoutError(f"timed out waiting for {what}")
        await asyncio.sleep(0.002)
    return time.perf_counter()


async def within(future: asyncio.Future[float], what: str) -> float:
    try:
        return await asyncio.wait_for(future, TIMEOUT)
    except TimeoutError:
        raise TimeoutError(f"timed out waiting for {what}") from None


class Ticker:
    """The event loop's lateness: a task sleeping TICK seconds in a loop records how late each wake-up is."""

    def __init__(self) -> None:
        self.worst = 0.0
        self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        while True:
            t = time.perf_counter()
            await asyncio.sleep(TICK)
            self.worst = max(self.worst, time.perf_counter() - t - TICK)

    def stop(self) -> float:
        self._task.cancel()
        return self.worst


async def run_scenario(server: Server, work: Path, path: Path | None, repeats: int, deltas: int, paced: int,
                       pace: float, size: tuple[int, int]) -> dict[str, list[float]]:
    from textual import events
    from textual.widgets import Input

    from inspector.app import make_app
    from inspector.app.agent_bridge import AgentOptions
    from inspector.app.screens.main import MainScreen
    from inspector.app.widgets.agent_panel import AgentPanel, _plain
    from inspector.app.widgets.message_list import MessageList

    app = make_app(path, home=False, agent=AgentOptions(cwd=work, session=path, open_view=True))
    frames = Frames(app)
    out: dict[str, list[float]] = {}

    def add(name: str, value: float) -> None:
        out.setdefault(name, []).append(value)

    async with app.run_test(size=size) as pilot:
        await wait_for(lambda: isinstance(app.screen, MainScreen), "the session screen")
        screen: Any = app.screen
        panel = screen.query_one(AgentPanel)
        await wait_for(lambda: panel.cancel is not None and screen.figures is not None, "the agent view")
        await screen.workers.wait_for_complete()
        await pilot.pause()
        box = panel.query_one("#agent-input", Input)
        log = panel.query_one("#agent-log")
        lst = screen.query_one(MessageList)

        def logged(kind: str, needle: str, last: int = 8) -> Callable[[], bool]:
            """The log's `last` entries hold an entry of `kind` containing `needle`."""
            def condition() -> bool:
                for child in list(log.children)[-last:]:
                    if getattr(child, "kind", None) == kind and needle in _plain(child):
                        return True
                return False
            return condition

        def answered(prompt: str) -> Callable[[], bool]:
            """The log shows text of the answer to `prompt` (a text entry after the prompt's own)."""
            def condition() -> bool:
                text = False
                for child in reversed(log.children):
                    kind = getattr(child, "kind", None)
                    if kind == "user":
                        return text and _plain(child) == f"› {prompt}"
                    text = text or (kind == "text" and bool(_plain(child)))
                return False
            return condition

        async def enter(prompt: str) -> float:
            box.focus()
            box.value = prompt
            await wait_for(lambda: screen.focused is box, "the prompt box's focus")
            await pilot.pause()
            t = time.perf_counter()
            app.post_message(events.Key("enter", "\r"))
            return t

        async def settled(prompt: str) -> float:
            """When the views show exact figures after the turn `prompt` started (polled every 2 ms)."""
            await wait_for(logged("user", prompt, 20), "the prompt in the log")
            await wait_for(lambda: not panel.running, "the turn to end")
            await screen.workers.wait_for_complete()
            return await wait_for(lambda: panel.settled, "exact figures")

        async def stream(prompt: str, name: str, count: int, delay: float) -> None:
            """An answer of `count` deltas, `delay` s apart: Enter to all of it on screen; keys typed meanwhile,
            the longest gap between frames and the longest event-loop stall while it streams."""
            tail = f"END-{prompt}"
            body = "".join(f"{i:05d} streamed text " for i in range(count))  # 16 characters a delta
            server.add(r.Reply([r.text_block(body[:-len(tail)] + tail)], delay=delay))
            done = frames.watch(logged("text", tail))
            began = frames.watch(answered(prompt))
            t = await enter(prompt)
            ticker = Ticker()
            started = await within(began, "the stream's start")
            keys: list[float] = []
            while not done.done():
                want = box.value + "x"
                shown = frames.watch(lambda want=want: box.value == want)
                sent = time.perf_counter()
                app.post_message(events.Key("x", "x"))
                keys.append(await within(shown, "a typed key") - sent)
                await asyncio.sleep(KEY_EVERY)
            finished = done.result()
            stall = ticker.stop()
            add(f"{name}_all", finished - t)
            add(f"{name}_lag", finished - handed["TextDelta"])
            gaps = [b - a for a, b in zip(frames.times, frames.times[1:]) if a >= started and b <= finished]
            add(f"{name}_frame_gap", max(gaps, default=0.0))
            add(f"{name}_frames", len(gaps) + 1)
            add(f"{name}_stall", stall)
            out.setdefault(f"{name}_key", []).extend(keys)
            add(f"{name}_exact", await settled(prompt) - handed["TurnDone"])
            box.value = ""

        server.add(r.text("warm-up done"))
        await enter("warm up")
        await settled("warm up")
        # when the loop hands the app each kind of event: the writer saves every event just before it is posted
        handed: dict[str, float] = {}
        writer = panel.agent.writer
        save = writer.handle

        def handle(event: Any) -> None:
            save(event)
            handed[type(event).__name__] = time.perf_counter()

        writer.handle = handle

        for k in range(repeats):
            # (a) Enter to the first streamed text on screen, the answer still streaming (40 deltas, 5 ms apart)
            marker = f"A{k}:"
            server.add(r.Reply([r.text_block(f"{marker} an answer that streams on for a moment " * 16)], delay=0.005))
            first = frames.watch(logged("text", marker))
            t = await enter(f"question {k}")
            add("first_text", await within(first, "the first text") - t)
            await settled(f"question {k}")

            # (c) a tool call: from the loop handing it over to its result row in the log and in the message list
            target = f"notes-{k}.txt"
            (work / target).write_text(f"note {k}\n" * 20)
            server.add(r.tool_calls(("read_file", {"path": target})), r.text(f"T{k}: read it"))
            result = frames.watch(logged("result", f"note {k}"))
            listed: list[float] = []
            original = lst.messages_appended

            def appended(start: int, figures: Any, original=original, listed=listed) -> None:
                original(start, figures)
                msgs = figures.session.messages
                if not listed and msgs and msgs[-1].kind == "tool_result" and lst.rows[-1] == len(msgs) - 1:
                    listed.append(time.perf_counter())

            lst.messages_appended = appended
            handed.pop("ToolCall", None)
            await enter(f"read {target}")
            await wait_for(lambda: "ToolCall" in handed, "the tool call")
            t_call = handed["ToolCall"]
            add("tool_result_row", await within(result, "the tool result's row") - t_call)
            await wait_for(lambda: bool(listed), "the result in the message list")
            add("tool_result_listed", listed[0] - t_call)
            await settled(f"read {target}")
            lst.messages_appended = original

            # (b) a long answer as fast as the socket takes it, then one at a model's pace
            await stream(f"stream {k}", "stream", deltas, 0.0)
            await stream(f"paced {k}", "paced", paced, pace)
        out["messages"] = [len(screen.session.messages)]
    return out


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))]


ROWS = [
    ("first_text", "Enter -> first streamed text on screen", "ms"),
    ("tool_result_row", "tool call -> its result row on screen", "ms"),
    ("tool_result_listed", "tool call -> result row in the message list", "ms"),
    ("stream_all", "{deltas} deltas at once: Enter -> all on screen", "s"),
    ("stream_lag", "  last delta received -> on screen", "ms"),
    ("stream_key", "  key typed -> on screen", "ms"),
    ("stream_frame_gap", "  longest gap between frames", "ms"),
    ("stream_stall", "  longest event-loop stall", "ms"),
    ("stream_frames", "  frames drawn", ""),
    ("stream_exact", "  turn done -> exact figures in the views", "ms"),
    ("paced_all", "{paced} deltas {pace_ms} ms apart: Enter -> all", "s"),
    ("paced_lag", "  last delta received -> on screen", "ms"),
    ("paced_key", "  key typed -> on screen", "ms"),
    ("paced_frame_gap", "  longest gap between frames", "ms"),
    ("paced_stall", "  longest event-loop stall", "ms"),
]


def cell(values: list[float] | None, unit: str) -> str:
    if not values:
        return "-"
    scale = 1000 if unit == "ms" else 1
    digits = 2 if unit == "s" else 0
    return f"{statistics.median(values) * scale:.{digits}f} / {pct(values, 0.95) * scale:.{digits}f} {unit}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--deltas", type=int, default=2000, help="text deltas in the answer streamed at once")
    parser.add_argument("--paced", type=int, default=400, help="text deltas in the answer streamed at a pace")
    parser.add_argument("--pace", type=float, default=0.005, help="seconds between the paced answer's events")
    parser.add_argument("--messages", type=int, default=10_000, help="messages in the large session")
    parser.add_argument("--size", default="120x40", help="terminal size, COLSxROWS")
    args = parser.parse_args(argv)
    cols, rows = (int(x) for x in args.size.split("x"))
    with tempfile.TemporaryDirectory() as tmp, Server() as server:
        home = Path(tmp)
        os.environ.update(ANTHROPIC_BASE_URL=server.url, ANTHROPIC_API_KEY=MOCK_KEY,
                          XDG_DATA_HOME=str(home / "data"), CONTEXT_INSPECTOR_MEMORY=str(home / "no-memory.md"))
        os.environ.pop("ANTHROPIC_MODEL", None)
        work = home / "work"
        work.mkdir()
        big = home / "large.jsonl"
        t = time.perf_counter()
        session = generate(big, args.messages)
        print(f"generated {len(session.messages):,} messages, {len(session.compactions)} compactions, "
              f"{big.stat().st_size / 1e6:.1f} MB in {time.perf_counter() - t:.1f} s; terminal {cols}x{rows}, "
              f"{args.repeat} repeats")
        results = {}
        for label, path in (("new session", None), (f"{len(session.messages) // 1000}k session", big)):
            t = time.perf_counter()
            results[label] = asyncio.run(run_scenario(server, work, path, args.repeat, args.deltas, args.paced,
                                                       args.pace, (cols, rows)))
            print(f"{label}: {time.perf_counter() - t:.1f} s, {results[label]['messages'][0]:,} messages at the end")
    labels = list(results)
    print(f"\n{'':50}" + "".join(f"{label + ' median / p95':>28}" for label in labels))
    names = {"deltas": f"{args.deltas:,}", "paced": f"{args.paced:,}", "pace_ms": f"{args.pace * 1000:g}"}
    for key, title, unit in ROWS:
        print(f"{title.format(**names):50}" + "".join(f"{cell(results[label].get(key), unit):>28}"
                                                          for label in labels))
    return 0


if __name__ == "__main__":
    sys.exit(main())
