"""Regenerate the lab's fixtures by running the real agent: `python tests/agents/regenerate.py AGENT [SCENARIO ...]`.

AGENT is a name of `install.py` (claude-code, codex, ...); its scenarios are in `tests/agents/<agent>.py` (dashes
as underscores) as `SCENARIOS` (name -> lab.Scenario) and `VERSION`. With no SCENARIO every scenario runs. Each
one runs in its own fixed scratch directory and, when it succeeds, replaces
`tests/fixtures/agents/<agent>-<version>/<scenario>/`; a failure is reported and leaves that fixture as it was.
`--list` prints the scenarios. Exit status 0 when all ran, 1 when one failed, 2 for a usage error.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path
from types import ModuleType

sys.path.insert(0, str(Path(__file__).resolve().parent))

import install  # noqa: E402
import lab  # noqa: E402


def agent_module(agent: str) -> ModuleType:
    """The module holding `agent`'s scenarios."""
    return importlib.import_module(agent.replace("-", "_"))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="regenerate.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("agent", choices=sorted(install.PINS))
    parser.add_argument("scenario", nargs="*", help="scenarios to run (default: all)")
    parser.add_argument("--list", action="store_true", help="list the agent's scenarios and exit")
    args = parser.parse_args(argv)
    try:
        module = agent_module(args.agent)
    except ModuleNotFoundError as exc:
        if exc.name != args.agent.replace("-", "_"):
            raise  # the agent's module is there but imports something that is not
        print(f"{args.agent}: no scenarios yet (tests/agents/{args.agent.replace('-', '_')}.py)", file=sys.stderr)
        return 2
    scenarios: dict[str, lab.Scenario] = module.SCENARIOS
    if args.list:
        for name, scenario in scenarios.items():
            print(f"{name:<20} {scenario.about}")
        return 0
    unknown = [s for s in args.scenario if s not in scenarios]
    if unknown:
        print(f"unknown scenario(s) {', '.join(unknown)}; {args.agent} has: {', '.join(scenarios)}", file=sys.stderr)
        return 2
    binary = install.ensure(args.agent)
    if binary is None:
        print(f"{args.agent}: {install.last_error.get(args.agent)}", file=sys.stderr)
        return 1
    version = install.PINS[args.agent].version
    failed = 0
    for name in args.scenario or list(scenarios):
        scenario = scenarios[name]
        started = time.monotonic()
        try:
            capture = scenario.run(lab.Scratch.fresh(args.agent, name), binary)
            target = lab.write_fixture(args.agent, version, name, capture, scenario.about)
        except lab.LabError as exc:
            failed += 1
            print(f"{name}: FAILED: {exc}", file=sys.stderr)
            continue
        print(f"{name}: {target.relative_to(lab.REPO)} ({len(capture.server_log)} exchanges, "
              f"{len(capture.files)} files, {time.monotonic() - started:.1f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
