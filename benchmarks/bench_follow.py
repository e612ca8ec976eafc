"""Follow-mode benchmark: what one append costs, and how long until it is on screen, with a 100 MB session open.

    python benchmarks/bench_follow.py [--core-appends 600] [--appends 60] [--interval 0.3] [--skip-app]
                                      [--skip-core] [--also PATH] [--app-session PATH] [--as-app]

Works on a copy of benchmarks/data/large-session.jsonl (made by generate_large_session.py on first use; the copy
lives in a temp directory, so the data file is never written to). The appended lines are the next tiles of the
corpus with fresh ids, chained onto the session's last entry, one turn (up to and including the next message line)
per append, so they carry split responses, parallel tool results and progress bursts; the core run's 600 appends
also a compaction (at the 431st).

1. Core, at two session sizes: `Follower.update()` after each append (read the new bytes, parse, feed, build the
   session, re-check the tool pairing from the first changed message), on a one-tile session (~2.7 MB) and on the
   100 MB one. Proportional cost means the two columns match; the messages the pairing check visited are counted.
   Then the token accounting of each update: `account_appended` (resumes from the last request; the app's exact
   figures use it), beside a fresh `account()` of the same state every 50th append, with how many appends were
   accounted from scratch or from a young model's first request (a settled calibrated fit re-solved: see
   calibration.py and tokens.py). Then the app's exact figures of each update with that accounting given:
   `figures.extend` (links, orphans, cumulative context, timeline from the first changed message; the window, the
   bar's categories, the microcompaction note and the prompt view as `compute` makes them), beside a fresh
   `compute()` every 50th append and the microcompaction note alone (a plan over the current context), with how many
   appends were computed afresh (the prefix moved, a repeated tool id taken back). `--also PATH` adds another Claude
   Code session to this run (e.g. bench_app.py's 100,000-message app-100k.jsonl). `--as-app` runs this part as the
   app does (the cyclic GC held off while an append is read, accounted and figured) and times it in the thread's
   CPU time instead of wall time (on a loaded machine other processes inflate that least).
2. App: the real app under Pilot following the 100 MB copy; a writer appends one turn every `--interval` seconds;
   latency is from the write to the first frame painted after the list holds the state the write made (a new row, or
   a grown response's row redrawn: the row is on screen), and to the first frame after the exact figures of that
   state (context bar, thresholds, timeline; measured usage attributed to the new messages) reached the widgets; the
   next append waits for them. Target: p95 of the row latency under 250 ms. `--app-session PATH` follows a copy of
   another session instead (issue 19 item 4: the 100,000-message messages-100k.jsonl, target p95 100 ms).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib.util
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DATA = ROOT / "benchmarks" / "data" / "large-session.jsonl"
CORPUS = ROOT / "tests" / "corpus" / "claude-code-manual-compact.jsonl"
CLOCK = time.perf_counter  # the core run's clock (--as-app: the thread's CPU time, which other work inflates least)
UUID = re.compile(rb'"uuid":"([^"]+)"')
MESSAGE = re.compile(rb'"type":"(user|assistant)"')


def _generator():
    spec = importlib.util.spec_from_file_location("gen", ROOT / "benchmarks" / "generate_large_session.py")
    gen = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(gen)  # type: ignore[union-attr]
    return gen


def last_uuid(path: Path) -> str:
    with open(path, "rb") as f:
        f.seek(max(0, path.stat().st_size - 8 * 1024 * 1024))
        tail = f.read()
    found = [m.group(1) for line in tail.splitlines()[-200:] if (m := UUID.search(line))]
    return found[-1].decode()


def turns(parent: str, first_tile: int, count: int) -> list[bytes]:
    """`count` appends, each the corpus lines up to and including the next user/assistant line, tiles chained."""
    gen = _generator()
    corpus = CORPUS.read_bytes().splitlines()
    out: list[bytes] = []
    pending: list[bytes] = []
    tile = first_tile
    while len(out) < count:
        for raw in corpus:
            line = gen.fresh_ids(raw, tile)
            if b'"parentUuid":null' in line and b"compact_boundary" not in line:
                line = line.replace(b'"parentUuid":null', b'"parentUuid":"%s"' % parent.encode(), 1)
            pending.append(line + b"\n")
            if MESSAGE.search(line[:4096]) and b'"isSidechain":false' in line[:4096]:
                out.append(b"".join(pending))
                pending = []
                if len(out) == count:
                    break
        found = [m.group(1) for x in corpus[-40:] if (m := UUID.search(x))]
        parent = gen.fresh_ids(found[-1], tile).decode()
        tile += 1
    return out


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(p / 100 * len(s) + 0.5) - 1))]


def summary(name: str, values: list[float]) -> str:
    ms = [v * 1000 for v in values]
    return (f"{name:<44} n={len(ms):<4} median {statistics.median(ms):7.2f} ms   p95 {pct(ms, 95):7.2f} ms   "
            f"max {max(ms):7.2f} ms")


def core(path: Path, appends: list[bytes]) -> tuple[list[float], dict[str, int], dict[str, list[float]]]:
    """Update times, and counts: builds by mode, messages added, messages the pairing check visited; the accounting
    and figures times (appended/extended, and fresh every 50th append)."""
    from inspector.core.figures import Settings, compute, extend, micro_saving
    from inspector.core.follower import Follower
    from inspector.core.tokens import account, account_appended

    follower = Follower(path)
    opened = follower.open()
    acc = account(opened)
    settings = Settings()
    figures = compute(opened, settings, accounting=acc)
    before, compactions = len(opened.messages), len(opened.compactions)
    times, counts = [], {"extended": 0, "full": 0, "pairing steps": 0, "accounting from scratch": 0,
                         "from a young model's first request": 0, "figures afresh": 0}
    accounting: dict[str, list[float]] = {"appended": [], "fresh": [], "extended": [], "compute": [], "micro": []}
    for k, data in enumerate(appends):
        with open(path, "ab") as f:
            f.write(data)
        t = CLOCK()
        change = follower.update()
        times.append(CLOCK() - t)
        last = len(acc.session.requests) - 1
        t = CLOCK()
        acc = account_appended(acc, change.session, change)
        accounting["appended"].append(CLOCK() - t)
        counts["accounting from scratch"] += acc.resumed_at is None
        counts["from a young model's first request"] += acc.resumed_at is not None and acc.resumed_at < last
        t = CLOCK()
        figures = extend(figures, change.session, settings, acc, change)
        accounting["extended"].append(CLOCK() - t)
        counts["figures afresh"] += figures.work >= 2 * len(change.session.messages) + len(change.session.requests)
        if k % 50 == 0:
            t = CLOCK()
            account(change.session)
            accounting["fresh"].append(CLOCK() - t)
            t = CLOCK()
            fresh = compute(change.session, settings, accounting=acc)
            accounting["compute"].append(CLOCK() - t)
            t = CLOCK()
            micro_saving(fresh)
            accounting["micro"].append(CLOCK() - t)
        counts[follower._loader.last_build[0]] += 1  # type: ignore[union-attr]  # noqa: SLF001
        counts["pairing steps"] += follower._pairs.steps  # noqa: SLF001
    assert follower.session is not None
    counts["new messages"] = len(follower.session.messages) - before
    counts["compactions"] = len(follower.session.compactions) - compactions
    return times, counts, accounting


async def app_latency(path: Path, appends: list[bytes], interval: float):
    from inspector.app import make_app
    from inspector.app.widgets.message_list import MessageList

    # each frame painted: when, the id of the session the screen held (an id, not the session: the run must not keep
    # every state alive) and whether its figures were exact. A frame is matched to the state it showed, so one
    # painted before the poll below notices the state still counts.
    frames: list[tuple[float, int, bool]] = []
    app = make_app(path, home=False, follow=True)
    display = app._display  # noqa: SLF001

    def timed_display(screen, renderable) -> None:
        display(screen, renderable)
        if renderable is not None:
            main = app.screen
            frames.append((time.perf_counter(), id(getattr(main, "session", None)),
                           bool(getattr(getattr(main, "shown", None), "exact", False))))

    async def frame_showing(since: int, session: object, exact: bool, deadline: float, what: str) -> float:
        """The time of the first frame from `since` on that showed `session` (with exact figures if `exact`)."""
        while True:
            for t, shown, was_exact in frames[since:]:
                if shown == id(session) and (was_exact or not exact):  # (the state is alive: its id is its own)
                    return t
            if time.perf_counter() > deadline:
                raise SystemExit(f"append {len(rows)}: {what} not on screen after 30 s")
            await asyncio.sleep(0.001)

    app._display = timed_display  # type: ignore[method-assign]  # noqa: SLF001
    rows, exact = [], []
    async with app.run_test(size=(160, 48)) as pilot:
        start = time.perf_counter()
        while getattr(app.screen, "figures", None) is None:
            await asyncio.sleep(0.01)
        screen = app.screen
        opened = time.perf_counter() - start
        live, lst = screen.follow, screen.query_one(MessageList)
        while live.follower.covered != path.stat().st_size or not live.watching:
            if time.perf_counter() - start > 120:
                raise SystemExit(f"not watching after 120 s (covered {live.follower.covered}, error "
                                 f"{live.follower.error}, watching {live.watching})")
            await asyncio.sleep(0.01)
        await pilot.pause(0.5)
        applied, invisible = live.updates, 0
        for data in appends:
            painted = len(frames)
            with open(path, "ab") as f:
                f.write(data)
            t0 = time.perf_counter()
            target, deadline = path.stat().st_size, t0 + 30
            # applied: the follower read it all and the screen holds that session (`covered` is set after it)
            while not (live.follower.covered == target and screen.session is live.follower.session
                       and lst.session is screen.session):
                if time.perf_counter() > deadline:
                    raise SystemExit(f"append {len(rows)}: not on screen after 30 s")
                await asyncio.sleep(0.002)
            if live.last_change is None or live.updates == applied:
                invisible += 1  # nothing shown changed (the append only grew bookkeeping): no frame to wait for
            else:
                state = screen.session
                rows.append(await frame_showing(painted, state, False, deadline, "its row") - t0)
                # then the exact figures of this state (bar, thresholds, timeline), the next append waiting for them
                exact.append(await frame_showing(painted, state, True, deadline, "its exact figures") - t0)
            applied = live.updates
            await asyncio.sleep(max(0.0, interval - (time.perf_counter() - t0)))
    return rows, exact, opened, invisible


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--core-appends", type=int, default=600, help="appends timed in the core run")
    parser.add_argument("--appends", type=int, default=60, help="appends timed in the app run")
    parser.add_argument("--interval", type=float, default=0.3, help="seconds between appends in the app run")
    parser.add_argument("--skip-app", action="store_true")
    parser.add_argument("--skip-core", action="store_true")
    parser.add_argument("--also", type=Path, action="append", default=[],
                        help="a further Claude Code session for the core run (e.g. bench_app.py's app-100k.jsonl)")
    parser.add_argument("--app-session", type=Path, default=None,
                        help="the session the app run follows (a copy), instead of the 100 MB one (issue 19: "
                             "benchmarks/data/messages-100k.jsonl, 100,000 messages)")
    parser.add_argument("--as-app", action="store_true",
                        help="the core run with the cyclic GC off, as the app's follow mode and exact figures hold "
                             "it, timed in thread CPU time (a loaded machine inflates it least)")
    args = parser.parse_args()
    if args.as_app:
        global CLOCK
        CLOCK = time.thread_time
        gc.disable()
    if not DATA.exists() and not (args.skip_core and args.app_session):
        gen = _generator()
        gen.generate(DATA, 100, 100_000)
    with tempfile.TemporaryDirectory() as tmp:
        small, large = Path(tmp) / "small.jsonl", Path(tmp) / "large.jsonl"
        gen = _generator()
        with open(small, "wb") as f:
            f.write(b"".join(gen.fresh_ids(x, 0x6fff) + b"\n" for x in CORPUS.read_bytes().splitlines()))
        if not args.skip_core:
            shutil.copyfile(DATA, large)
            print(f"sessions: small {small.stat().st_size / 1e6:.1f} MB, large {large.stat().st_size / 1e6:.1f} MB; "
                  "appends of one turn each")
        others = []
        for k, extra in enumerate(args.also):
            others.append((extra.name, Path(tmp) / f"also{k}.jsonl"))
            shutil.copyfile(extra, others[-1][1])
        for name, path in () if args.skip_core else (("small", small), ("large", large), *others):
            appends = turns(last_uuid(path), 0x7000, args.core_appends)
            size = sum(map(len, appends)) / len(appends)
            times, counts, accounting = core(path, appends)
            print(summary(f"core update, {name} session (avg {size / 1e3:.1f} kB)", times), f"  {counts}", flush=True)
            print(summary(f"  accounting the append, {name} session", accounting["appended"]), flush=True)
            print(summary(f"  fresh account() of that state, {name}", accounting["fresh"]), flush=True)
            print(summary(f"  figures of the append (extend), {name}", accounting["extended"]), flush=True)
            print(summary(f"  fresh compute() of that state, {name}", accounting["compute"]), flush=True)
            print(summary(f"  the microcompaction note alone, {name}", accounting["micro"]), flush=True)
        gc.enable()  # (the app holds it off itself)
        if args.skip_app:
            return
        followed = args.app_session or DATA
        shutil.copyfile(followed, large)
        appends = turns(last_uuid(large), 0x7000, args.appends)
        rows, exact, opened, invisible = asyncio.run(app_latency(large, appends, args.interval))
        from inspector.app.shown import EXACT_DELAY
        print(f"app: {followed.name} ({large.stat().st_size / 1e6:.0f} MB) open with figures in {opened:.1f} s",
              flush=True)
        print(summary("app: append -> row on screen", rows), f"  (target p95 250 ms; {invisible} appends "
              "changed nothing shown)", flush=True)
        print(summary("app: append -> exact figures on screen", exact),
              f"  (provisional figures are on screen with the row; the exact ones follow once the file has been "
              f"quiet {EXACT_DELAY * 1000:.0f} ms)", flush=True)


if __name__ == "__main__":
    main()
