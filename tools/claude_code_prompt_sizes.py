"""Make inspector/core/data/claude_code_prompts.json from Piebald-AI/claude-code-system-prompts' README (MIT): the
published token count of each built-in tool's description (its fragments summed: `Tool Description: NAME` and
`NAME (...)`, leaving out the sandbox-only ones) and of the skill tool's.

    python tools/claude_code_prompt_sizes.py README.md COMMIT > inspector/core/data/claude_code_prompts.json
"""

from __future__ import annotations

import json
import re
import sys

ENTRY = re.compile(r"^- \[Tool Description: ([A-Za-z]+)(?: \(([^)]*)\))?\]\([^)]*\) \(\*\*(\d+)\*\* tks\)", re.M)
VERSION = re.compile(r"as of \*\*\[Claude Code v([\d.]+)\]\([^)]*\) \(([^)]*)\)")
# What transcripts call the tools Piebald names otherwise (the subagent tool was Task before it became Agent)
NAMES = {"ReadFile": ("Read",), "Agent": ("Agent", "Task")}


def main() -> None:
    text = open(sys.argv[1], encoding="utf-8").read()
    version, date = VERSION.search(text).groups()
    tools: dict[str, int] = {}
    for name, part, tokens in ENTRY.findall(text):
        if part and ("sandbox" in part or "compact" in part):
            continue
        for key in NAMES.get(name, (name,)):
            tools[key] = tools.get(key, 0) + int(tokens)
    skill = int(re.search(r"\[Tool Description: Invoke skill\]\([^)]*\) \(\*\*(\d+)\*\*", text).group(1))
    tools["Skill"] = skill
    json.dump({
        "about": "Published token counts (count_tokens API) of the descriptions of Claude Code's built-in tools, by "
                 "tool name as transcripts write them; each tool's fragments summed (sandbox-only ones left out).",
        "source": f"Piebald-AI/claude-code-system-prompts, README at commit {sys.argv[2]}: Claude Code v{version} "
                  f"({date})",
        "licence": "MIT, Copyright (c) 2025 Piebald LLC (the counts are taken from its README)",
        "claude_code_version": version,
        "tools": dict(sorted(tools.items())),
    }, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
