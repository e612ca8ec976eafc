"""Workbench benchmark: the diff view and the whole workbench on a 100,000-message session.

    python benchmarks/bench_workbench.py [--messages 100000] [--size 160x48]

Builds the session in memory (a prompt, then rounds of assistant text + tool call and a tool result of 60 to 8,000
characters, like a long agent session; no file, so no load time is counted) and prints:
- plan: `plan_snip` and building its rows (core, what every preview pays);
- diff view show: `DiffView.show(rows)` (folding kept runs into the display list) plus painting the first screen;
- 20 page-downs in the diff view, repainted, and how many lines were rendered for them (Line API: visible only),
  beside the cost of rendering one line and of 20 key presses bound to nothing (Pilot's own share);
- workbench on screen: from posting the `c` key on the session screen to the first frame of the workbench (its
  widgets composed and drawn; the plan is still being made in a worker, keys are handled);
- preview on screen: to the frame showing the snip preview (plan, rows, the figures after accounted from the ones
  before); then, reopened, a key pressed while the plan is being made: from posting `]` (next strategy) once the
  screen is mounted until its handler has run;
- workbench ready: until every worker is done and the app is idle (Pilot), as before;
- apply + undo: applying the snip step until the session screen and the preview have caught up, then undoing it;
- summary: from choosing the summary strategy to the frame showing its preview (the exact request, the figures
  after accounted from the ones before); a summary written in the editor counted in the after bar (the handler's
  cost); approving it until the session screen and the next preview show the step;
- with `--file` (by default bench_app.py's app-100k.jsonl, when it exists: 100,000 messages with usage, so the
  default calibrated estimator): the same first frame, preview and idle times with the app's default settings, and
  the summary strategy's preview.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APP_DATA = ROOT / "benchmarks" / "data" / "app-100k.jsonl"  # written by bench_app.py
sys.path.insert(0, str(ROOT))

from inspector.core.model import Block, Message, Session  # noqa: E402


def session(n: int) -> Session:
    rng = random.Random(7)
    messages = [Message("user", "prompt", [Block("text", "Work through the backlog.")], uuid="u0")]
    k = 0
    while len(messages) < n:
        k += 1
        tool = rng.choice(["Read", "Bash", "Grep"])
        messages.append(Message("assistant", "assistant", [
            Block("text", f"Next: step {k}."),
            Block("tool_use", tool_id=f"t{k}", tool_name=tool, input={"command": f"run {k}"})], uuid=f"a{k}"))
        size = rng.choice([60, 200, 800, 3000, 8000])
        messages.append(Message("user", "tool_result", [Block("tool_result", ("result line %d\n" % k) * (size // 15),
                                                              tool_id=f"t{k}")], uuid=f"r{k}"))
    return Session("bench-100k.jsonl", "claude-code", messages, cwd="/home/user/projects/big")


async def settle(screen, pilot) -> None:
    from textual.worker import WorkerCancelled

    for _ in range(3):
        try:
            await screen.workers.wait_for_complete()
        except WorkerCancelled:  # a plan made obsolete by a key: the next one is waited for
            pass
        await pilot.pause()


def timed(app) -> list[float]:
    """The times of every frame the compositor produces (headless: not written anywhere)."""
    frames: list[float] = []
    display = app._display

    def timed_display(screen, renderable) -> None:
        frames.append(time.perf_counter())
        display(screen, renderable)

    app._display = timed_display  # type: ignore[method-assign]
    return frames


async def next_frame(frames: list[float], after: int) -> float:
    while len(frames) <= after:
        await asyncio.sleep(0.001)
    return frames[after]


async def open_workbench(app, pilot, frames: list[float], out: dict[str, float], label: str):
    """Press `c` on the session screen; record the workbench's first frame and its preview's."""
    from textual import events

    from inspector.app.screens.workbench import WorkbenchScreen

    await pilot.pause()
    t = time.perf_counter()
    app.post_message(events.Key("c", "c"))
    while not isinstance(app.screen, WorkbenchScreen):
        await asyncio.sleep(0.001)
    wb = app.screen
    n = len(frames)
    out[f"{label}workbench on screen (s)"] = await next_frame(frames, n) - t
    while wb.preview is None:
        await asyncio.sleep(0.001)
    out[f"{label}preview on screen (s)"] = await next_frame(frames, len(frames)) - t
    return wb


async def measure_file(path: Path, size: tuple[int, int]) -> dict[str, float]:
    """A real file with the default settings (calibrated estimates, the clear strategy): load, then open."""
    from app_helpers import ready

    from inspector.app import make_app

    out: dict[str, float] = {}
    app = make_app(path, home=False)
    frames = timed(app)
    async with app.run_test(size=size) as pilot:
        main = await ready(app, pilot)
        out[f"{path.name}: messages"] = len(main.session.messages)
        t = time.perf_counter()
        wb = await open_workbench(app, pilot, frames, out, f"{path.name}: ")
        await settle(wb, pilot)
        out[f"{path.name}: workbench ready, idle (s)"] = time.perf_counter() - t
        t = time.perf_counter()
        wb.set_strategy("summary")
        while wb.preview is None or wb.preview.plan.strategy != "summary":
            await asyncio.sleep(0.001)
        out[f"{path.name}: summary preview on screen (s)"] = await next_frame(frames, len(frames)) - t
        await settle(wb, pilot)
    return out


async def measure(n: int, size: tuple[int, int]) -> dict[str, float]:
    from textual.app import App

    from inspector.app import make_app
    from inspector.core.figures import Settings
    from inspector.app.widgets.diff_view import DiffView
    from inspector.core.compaction import Estimates, plan_snip

    s = session(n)
    out: dict[str, float] = {}
    t = time.perf_counter()
    plan = plan_snip(s, estimates=Estimates("chars35"))
    rows = plan.rows
    out["plan snip + rows (s)"] = time.perf_counter() - t
    out["rows"] = len(rows)

    class Bench(App[None]):
        def compose(self):
            yield DiffView(id="d")

    app = Bench()
    async with app.run_test(size=size) as pilot:
        view = app.query_one(DiffView)
        rendered = 0
        original = view.render_row

        def counting(*args):
            nonlocal rendered
            rendered += 1
            return original(*args)

        view.render_row = counting  # type: ignore[method-assign]
        view.show_kept = True
        t = time.perf_counter()
        view.show(rows)
        await pilot.pause()
        out["diff view show + paint (s)"] = time.perf_counter() - t
        view.focus()
        rendered = 0
        t = time.perf_counter()
        for _ in range(20):
            await pilot.press("pagedown")
        await pilot.pause()
        out["20 page-downs (s)"] = time.perf_counter() - t
        out["lines rendered for them"] = rendered
        t = time.perf_counter()
        for line in range(1000):
            original(line, size[0], False)
        out["render one line (ms, mean of 1000)"] = time.perf_counter() - t  # seconds for 1000 = ms for one
        t = time.perf_counter()
        for _ in range(20):
            await pilot.press("x")  # bound to nothing here: Pilot's own cost per key
        out["20 unbound key presses (s)"] = time.perf_counter() - t

    app = make_app(session=s, settings=Settings(estimator="chars35", micro_strategy="snip"))
    frames = timed(app)
    async with app.run_test(size=size) as pilot:
        from app_helpers import ready
        from textual import events

        from inspector.app.screens.workbench import WorkbenchScreen

        main = await ready(app, pilot)
        t = time.perf_counter()
        wb = await open_workbench(app, pilot, frames, out, "")
        await settle(wb, pilot)
        out["workbench ready, idle (s)"] = time.perf_counter() - t
        await pilot.press("escape")
        await settle(main, pilot)
        app.post_message(events.Key("c", "c"))  # again, with a key while the preview is being made
        while not isinstance(app.screen, WorkbenchScreen) or not app.screen.is_mounted:
            await asyncio.sleep(0.001)
        wb = app.screen
        strategy = wb.strategy
        k = time.perf_counter()
        app.post_message(events.Key("right_square_bracket", "]"))
        while wb.strategy == strategy:
            await asyncio.sleep(0.001)
        out["reopened: `]` while planning, key to handled (s)"] = time.perf_counter() - k
        await settle(wb, pilot)
        await pilot.press("left_square_bracket")
        await settle(wb, pilot)
        t = time.perf_counter()
        await pilot.press("a")
        await settle(wb, pilot)
        await settle(main, pilot)
        out["apply snip, all views updated (s)"] = time.perf_counter() - t
        assert wb.stack.position == 1 and main.figures.session is wb.stack.current.session
        t = time.perf_counter()
        await pilot.press("u")
        await settle(wb, pilot)
        await settle(main, pilot)
        out["undo, all views updated (s)"] = time.perf_counter() - t
        assert main.figures.session is s
        await measure_summary(app, pilot, frames, wb, main, out)
    return out


async def measure_summary(app, pilot, frames: list[float], wb, main, out: dict[str, float]) -> None:
    """The summary strategy on the original: its preview on screen (the plan, the exact request, the figures after),
    a summary typed in the editor counted in the after bar, then approved until every view shows the step."""
    from textual.widgets import TextArea

    t = time.perf_counter()
    wb.set_strategy("summary")
    while wb.preview is None or wb.preview.plan.strategy != "summary":
        await asyncio.sleep(0.001)
    out["summary preview on screen (s)"] = await next_frame(frames, len(frames)) - t
    await settle(wb, pilot)
    area = wb.query_one("#wb-summary-text", TextArea)
    text = "The backlog is worked through up to the last step; nothing is pending. " * 20
    if hasattr(wb, "_refigure"):  # the after bar follows the text being written
        area.load_text(text)
        t = time.perf_counter()
        wb._refigure()
        out["summary written: after bar re-counted (s)"] = time.perf_counter() - t
        assert not wb.preview.plan.pending
    else:
        area.load_text(text)
    await pilot.pause()
    t = time.perf_counter()
    await pilot.press("ctrl+s")
    await settle(wb, pilot)
    await settle(main, pilot)
    out["approve summary, all views updated (s)"] = time.perf_counter() - t
    assert wb.stack.current.strategy == "summary" and main.figures.session is wb.stack.current.session


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--size", default="160x48")
    parser.add_argument("--file", type=Path, default=APP_DATA,
                        help="also open this session file with the default settings (default: bench_app.py's "
                             "app-100k.jsonl when it exists; 'none' skips it)")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "tests"))
    width, height = (int(x) for x in args.size.split("x"))
    figures = asyncio.run(measure(args.messages, (width, height)))
    if args.file.name != "none" and args.file.exists():
        figures.update(asyncio.run(measure_file(args.file, (width, height))))
    for name, value in figures.items():
        print(f"{name:<48} {value:,.3f}" if isinstance(value, float) else f"{name:<48} {value:,}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
