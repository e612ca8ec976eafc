"""App benchmark: time to first paint and to 20 page-downs on a 100,000-message session (targets 1 s and 0.5 s).

    python benchmarks/bench_app.py [--messages 100000] [--size 160x48]

Generates benchmarks/data/app-100k.jsonl (a Claude Code-format session with usage on every response and a
compaction whenever the context passes 160k; git-ignored) on first use, then runs the real app headless in this
process, driving it with Textual's Pilot, and prints:
- first paint: from building the app (modules already imported) to the first frame the compositor produces (title,
  progress bar); the file is still being read in a worker at that moment;
- keys while reading: presses of `d` (the detail pane hides, shows) until the whole file is read, each from posting
  the key to the first frame after the pane changed (issue 19: keys stay responsive while loading);
- first rows on screen: until the first frame with rows in the list: the session's end (`core.formats.tail`) while
  the rest is read, or the whole session when the file gets no preview;
- first figures on screen: until the first frame with token figures in the list: the preview's own
  (`figures.last_response.preview_figures`: measured at each of its requests as the full load's are) while the rest
  is read, or the whole session's;
- rows on screen: until the frame showing every message in the list (token columns pending);
- figures on screen: until the token figures are drawn (accounting, bar, timeline, prompt view);
- 20 page-downs: the sum, over twenty PageDown keys sent one after another, of the time from posting the key to the
  frame showing the list moved; five rounds, each continuing down the list (median, best, worst); also twenty
  through Pilot.press, which adds its own wait-for-idle per key;
  the process CPU time of each round (every frame, the detail pane's too) is printed beside the wall time;
- rows drawn: how many list rows were rendered for those page-downs (the Line API draws only visible rows).

Frames are counted where Textual hands a compositor update to the display (headless, so not written to a terminal).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ROUNDS = 5
KEY_PAUSE = 0.5  # seconds between keys while the file is read: a user browsing (a held key repeats every 0.03)
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
    from textual import events

    from inspector.app import make_app
    from inspector.app.widgets.message_list import MessageList

    frames: list[float] = []
    start = time.perf_counter()
    app = make_app(path, home=False)
    display = app._display

    def timed_display(screen, renderable) -> None:  # every frame the compositor produces (headless: not written)
        display(screen, renderable)
        if renderable is not None:
            frames.append(time.perf_counter())

    app._display = timed_display  # type: ignore[method-assign]
    async with app.run_test(size=size) as pilot:
        screen = app.screen
        lst = screen.query_one(MessageList)
        while not frames:
            await asyncio.sleep(0.001)
        first_paint = frames[0] - start

        async def frame_after(condition) -> float:
            """From the start to the first frame after `condition()` held."""
            while not condition():
                await asyncio.sleep(0.001)
            n = len(frames)
            while len(frames) == n:
                await asyncio.sleep(0.001)
            return frames[n] - start

        first_rows = asyncio.ensure_future(frame_after(lambda: lst.session is not None))
        first_figures = asyncio.ensure_future(frame_after(lambda: lst.figures is not None))
        all_rows = asyncio.ensure_future(frame_after(lambda: screen.session is not None and
                                                     lst.session is screen.session))
        # keys while the file is read: "d" hides the detail pane and "d" shows it again, each timed from posting the
        # key to the first frame after the app handled it
        loading_keys: list[tuple[float, float]] = []
        panel = screen.query_one("#detail")
        while screen.session is None:
            shown, t, n = panel.display, time.perf_counter(), len(frames)
            app.post_message(events.Key("d", "d"))
            while (panel.display == shown or len(frames) == n) and screen.session is None:
                await asyncio.sleep(0.0005)
            if panel.display != shown and len(frames) > n:
                loading_keys.append((frames[-1] - t, t - start))
            await asyncio.sleep(KEY_PAUSE)
        if not panel.display:
            app.post_message(events.Key("d", "d"))
        preview, early, rows = await first_rows, await first_figures, await all_rows
        while screen.figures is None:
            await asyncio.sleep(0.005)
        await pilot.pause()
        ready = time.perf_counter() - start
        lst.focus()
        lst.action_first()
        await pilot.pause(0.2)

        drawn = 0
        original = lst._render_row

        def counting(*args, **kwargs):
            nonlocal drawn
            drawn += 1
            return original(*args, **kwargs)

        lst._render_row = counting  # type: ignore[method-assign]
        # 20 page-downs, one at a time: each key goes in when the previous one has been handled and painted, and
        # its time runs from posting the key to the frame that shows the list moved.
        # Five rounds, each going on down from where the last stopped (rows never drawn before, no cache help).
        rounds, cpu_rounds = [], []
        for _ in range(ROUNDS):
            latency, cpu = 0.0, time.process_time()
            for _ in range(20):
                before, t, n = lst.cursor, time.perf_counter(), len(frames)
                app.post_message(events.Key("pagedown", None))
                while lst.cursor == before or len(frames) == n:  # frame times are exact; polling adds no CPU
                    await asyncio.sleep(0.0005)
                latency += frames[-1] - t
                await pilot.pause()  # let the detail pane's own frame land before the next key
            rounds.append(latency)
            cpu_rounds.append(time.process_time() - cpu)
        cursor = lst.cursor
        # the same 20 through Pilot.press, which also waits for the app to go idle after every key
        lst.action_first()
        await pilot.pause(0.2)
        t = time.perf_counter()
        for _ in range(20):
            await pilot.press("pagedown")
        await pilot.pause()
        piloted = time.perf_counter() - t
    return {"messages": len(screen.session.messages), "first_paint": first_paint, "preview": preview, "early": early, "rows": rows,
            "ready": ready,
            "loading_keys": sorted(loading_keys),  # (key to frame, when the key was sent)
            "rounds": sorted(rounds), "cpu": sorted(cpu_rounds), "piloted": piloted, "rows_drawn": drawn, "cursor_after": cursor}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--size", default="160x48", help="terminal size, COLSxROWS")
    parser.add_argument("--path", type=Path, default=None,
                        help="open this session instead (e.g. bench_messages.py's benchmarks/data/messages-100k.jsonl)")
    args = parser.parse_args(argv)
    path = args.path or DATA / f"app-{args.messages // 1000}k.jsonl"
    if not path.exists():
        t = time.perf_counter()
        generate(path, args.messages)
        print(f"generated {path} ({path.stat().st_size / 1e6:.1f} MB) in {time.perf_counter() - t:.1f} s")
    cols, rows = (int(x) for x in args.size.split("x"))
    r = asyncio.run(measure(path, (cols, rows)))
    print(f"session: {r['messages']:,} messages, {path.stat().st_size / 1e6:.1f} MB, terminal {cols}x{rows}")
    print(f"first paint:       {r['first_paint']:.3f} s  (target 1 s; the file is still being read)")
    print(f"first rows:        {r['preview']:.3f} s  (target 1 s; the session's end while the rest is read)")
    print(f"first figures:     {r['early']:.3f} s  (target 2 s; the end's own figures, measured at its requests, "
          f"while the rest is read)")
    print(f"rows on screen:    {r['rows']:.3f} s  (file read, every message listed, token figures pending)")
    print(f"figures on screen: {r['ready']:.3f} s  (the whole session's: token accounting, bar, timeline, prompt view)")
    keys = r["loading_keys"]
    if keys:
        print(f"keys while reading: {len(keys)} (detail pane hidden / shown), key to frame median "
              f"{statistics.median(k for k, _ in keys) * 1000:.0f} ms, worst {keys[-1][0] * 1000:.0f} ms "
              f"(sent at {keys[-1][1]:.2f} s)")
    else:
        print("keys while reading: none answered before the rows were on screen")
    rounds = r["rounds"]
    print(f"20 page-downs:     {statistics.median(rounds):.3f} s median of {len(rounds)} rounds, best "
          f"{rounds[0]:.3f}, worst {rounds[-1]:.3f}  (target 0.5 s; key to painted frame, summed); "
          f"{r['rows_drawn']:,} list rows drawn, cursor at row {r['cursor_after']:,}")
    print(f"  CPU time:        {statistics.median(r['cpu']):.3f} s median, best {r['cpu'][0]:.3f}  (all the app's "
          f"work for those 20 keys, the detail pane's updates included; what other work on the machine cannot inflate)")
    print(f"  through Pilot:   {r['piloted']:.3f} s  (Pilot.press also waits for the app to idle after each key)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
