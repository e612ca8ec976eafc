"""How long building and linting the system prompt takes: the agent loop builds it for every session.

Builds a temporary git repository (commits, nested CLAUDE.md files, untracked files), then times `assemble()` with
and without git, and `lint()` on a prompt whose CLAUDE.md holds thousands of sentences (the repeat check's worst
case). Median of repeated runs, wall clock.

    /work/venv/bin/python benchmarks/prompt_build.py [--runs N] [--sentences N]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from inspector.core.prompt import assemble, lint
from inspector.core.prompt.environment import git_info

GIT_ENV = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.com", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@example.com", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
WORDS = ("agent file test code module error plan user change tool result branch commit shell search read write "
         "edit format output memory session context window prompt section").split()


def _median_ms(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def _repo(base: Path, depth: int = 5, untracked: int = 200) -> Path:
    repo = base / "repo"
    cwd = repo
    for level in range(depth):
        cwd.mkdir(parents=True, exist_ok=True)
        (cwd / "CLAUDE.md").write_text(f"Level {level} instructions: prefer clear names in this package.\n")
        cwd = cwd / f"d{level}"
    cwd.mkdir()
    run = dict(cwd=repo, check=True, capture_output=True, env={**os.environ, **GIT_ENV})
    subprocess.run(["git", "init", "-q", "-b", "main"], **run)
    subprocess.run(["git", "add", "."], **run)
    for i in range(10):
        subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", f"commit {i}"], **run)
    for i in range(untracked):
        (repo / f"scratch{i}.txt").write_text("x")
    return cwd


def _sentences(n: int) -> str:
    """n sentences of 8-12 words from a 600-word vocabulary, one in twenty a copy of an earlier one."""
    rng = random.Random(0)
    vocabulary = [a + b for a in WORDS for b in WORDS][:600]
    out: list[str] = []
    for i in range(n):
        if i > 20 and i % 20 == 0:
            out.append(out[rng.randrange(i)])
        else:
            out.append(" ".join(rng.choice(vocabulary) for _ in range(rng.randint(8, 12))).capitalize() + ".")
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--sentences", type=int, default=3000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        os.environ["HOME"] = str(base)
        cwd = _repo(base)
        plain = base / "plain"
        plain.mkdir()
        rows = [("assemble() in a repository (5 CLAUDE.md, 200 untracked)", lambda: assemble(cwd)),
                ("  of which git (status + log)", lambda: git_info(cwd)),
                ("assemble() outside any repository", lambda: assemble(plain))]
        for label, fn in rows:
            print(f"{label:<58}{_median_ms(fn, args.runs):7.1f} ms")
        (plain / "CLAUDE.md").write_text(_sentences(args.sentences))
        sections = assemble(plain, memory=False).sections
        runs = max(1, args.runs // 4)
        label = f"lint() with {args.sentences:,} CLAUDE.md sentences"
        print(f"{label:<58}{_median_ms(lambda: lint(sections), runs):7.1f} ms ({len(lint(sections))} findings)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
