"""App benchmark: time to first paint and to 20 page-downs on a 100,000-message session (targets 1 s and 0.5 s).

    python benchmarks/bench_app.py [--messages 100000] [--size 160x48]

Generates benchmarks/data/app-100k.jsonl (a Claude Code-format session with usage on every response and a
compaction whenever the context passes 160k; git-ignored) on first use, then runs the real app headless in this
process, driving it with Textual's Pilot, and prints:
- first paint: from starting the app until its first screen (title, bar, progress) has painted; the file is still
  being read in a worker at that moment;
- list ready: until the message list shows every row with its figures (load + token accounting + layout);
- 20 page-downs: twenty PageDown key presses processed and repainted, the cursor moving a page each time;
- rows rendered: how many list rows were drawn for those page-downs (the Line API draws only visible rows).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "benchmarks" / "data"


def _writer_module():
    spec = importlib.util.spec_from_file_location("make_samples", ROOT / "tools" / "make_samples.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def generate(path: Path, messages: int) -> None:
    """A long agent session: prompt, then rounds of (text + tool call, result), compacting past 160k."""
    ms = _writer_module()
    rng = random.Random(7)
    w = ms.ClaudeCodeWriter(8, "/home/user/projects/big", "claude-sonnet-4-5-20250929", 18_000)
    w.prefix_after_compact = 18_000
    count = 0
    w.user("Work through the backlog.")
    count += 1
    while count < messages:
        if w.context > 160_000:
            w.compact("This session is being continued from a previous conversation that ran out of context. "
                      "Summary: backlog items done so far are recorded in NOTES.md.")
            count += 1
        tool = rng.choice(["Read", "Bash", "Grep"])
        (tid,) = w.assistant([ms._text(f"Next: {ms._name(rng, 3).replace('_', ' ')}."),
                              ms._tool(tool, command=ms._name(rng))])
        size = rng.choice([60, 200, 800, 3000])
        w.tool_result(tid, ms.grep_output(rng, max(1, size // 60)))
        count += 2
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(w.dump(), encoding="utf-8")


async def measure(path: Path, size: tuple[int, int]) -> dict[str, float]:
    from inspector.app import make_app
    from inspector.app.screens.main import MainScreen
    from inspector.app.widgets.message_list import MessageList

    start = time.perf_counter()
    app = make_app(path, home=False)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        first_paint = time.perf_counter() - start
        assert isinstance(app.screen, MainScreen)
        screen = app.screen
        while screen.figures is None:
            await asyncio.sleep(0.005)
        await pilot.pause()
        ready = time.perf_counter() - start
        lst = screen.query_one(MessageList)
        lst.focus()
        await pilot.press("home")
        await pilot.pause()
        drawn = 0
        original = lst._render_row

        def counting(*args, **kwargs):
            nonlocal drawn
            drawn += 1
            return original(*args, **kwargs)

        lst._render_row = counting  # type: ignore[method-assign]
        t0 = time.perf_counter()
        for _ in range(20):
            await pilot.press("pagedown")
        await pilot.pause()
        pages = time.perf_counter() - t0
        moved = lst.cursor
    return {"messages": len(screen.session.messages), "first_paint": first_paint, "ready": ready,
            "page_downs": pages, "rows_drawn": drawn, "cursor_after": moved}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--size", default="160x48", help="terminal size, COLSxROWS")
    args = parser.parse_args(argv)
    path = DATA / f"app-{args.messages // 1000}k.jsonl"
    if not path.exists():
        t = time.perf_counter()
        generate(path, args.messages)
        print(f"generated {path} ({path.stat().st_size / 1e6:.1f} MB) in {time.perf_counter() - t:.1f} s")
    cols, rows = (int(x) for x in args.size.split("x"))
    r = asyncio.run(measure(path, (cols, rows)))
    print(f"session: {r['messages']:,} messages, {path.stat().st_size / 1e6:.1f} MB, terminal {cols}x{rows}")
    print(f"first paint:     {r['first_paint']:.3f} s  (target 1 s)")
    print(f"list ready:      {r['ready']:.3f} s  (load + accounting + first list paint)")
    print(f"20 page-downs:   {r['page_downs']:.3f} s  (target 0.5 s); cursor at row {r['cursor_after']:,}, "
          f"{r['rows_drawn']:,} rows drawn")
    return 0


if __name__ == "__main__":
    sys.exit(main())
