"""What the lab's fixtures are checked against: a request as the server received it and the messages a loader says
that request saw, both reduced to one comparable form; and a scenario run live.

`canonical(...)` turns a conversation into a list of turns `(role, items)`, consecutive turns of one role joined
(every API joins them; Gemini CLI and opencode send them joined), each item `("text", text)`, `("call", name,
args)` or `("result", text)`. The system prompt and tool schemas are not compared: none of these agents records
them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Iterable

import pytest

import lab
from inspector.core.formats.parts import response_text
from inspector.core.model import Message

Item = tuple
Turn = tuple[str, list[Item]]


def _join(turns: Iterable[tuple[str, list[Item]]]) -> list[Turn]:
    out: list[Turn] = []
    for role, items in turns:
        if not items:
            continue
        if out and out[-1][0] == role:
            out[-1][1].extend(items)
        else:
            out.append((role, list(items)))
    return out


def _args(value: Any) -> str:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value
    return json.dumps(value, sort_keys=True)


def of_messages(messages: Iterable[Message], thinking: bool = False) -> list[Turn]:
    """A loader's messages, as the model was sent them (thinking blocks only when the agent sends them back)."""
    def items(m: Message) -> list[Item]:
        out: list[Item] = []
        for b in m.blocks:
            if b.type == "text" and b.text:
                out.append(("text", b.text))
            elif b.type == "thinking" and thinking:
                out.append(("thinking", b.text))
            elif b.type == "tool_use":
                out.append(("call", b.tool_name, _args(b.input)))
            elif b.type == "tool_result":
                out.append(("result", b.text if b.content is None else "".join(x.text for x in b.content)))
        return out
    return _join((m.role, items(m)) for m in messages)


def of_gemini(contents: list[dict]) -> list[Turn]:
    """A Gemini API request's `contents`."""
    def items(parts: list) -> list[Item]:
        out: list[Item] = []
        for p in parts:
            if isinstance(p.get("text"), str) and not p.get("thought"):
                out.append(("text", p["text"]))
            elif isinstance(p.get("functionCall"), dict):
                out.append(("call", p["functionCall"].get("name"), _args(p["functionCall"].get("args", {}))))
            elif isinstance(p.get("functionResponse"), dict):
                out.append(("result", response_text(p["functionResponse"].get("response"))[0]))
        return out
    return _join(("assistant" if c.get("role") == "model" else "user", items(c.get("parts", []))) for c in contents)


def of_openai(messages: list[dict], unrecorded: tuple[str, ...] = ()) -> list[Turn]:
    """An OpenAI chat request's messages after the system ones; text parts starting with `unrecorded` prefixes
    (what the agent adds to a request without writing it down) are left out."""
    def texts(content: Any) -> list[Item]:
        if isinstance(content, str):
            pieces = [content]
        else:
            pieces = [p.get("text", "") for p in content or [] if isinstance(p, dict) and p.get("type") == "text"]
        return [("text", t) for t in pieces if t and not t.lstrip().startswith(unrecorded)]

    def items(m: dict) -> tuple[str, list[Item]]:
        if m.get("role") == "tool":
            return "user", [("result", "".join(t for _, t in texts(m.get("content"))))]
        out = texts(m.get("content"))
        out += [("call", c["function"]["name"], _args(c["function"].get("arguments") or "{}"))
                for c in m.get("tool_calls") or []]
        return m.get("role", "user"), out
    return _join(items(m) for m in messages if m.get("role") != "system")


def of_anthropic(messages: list[dict], thinking: bool = True) -> list[Turn]:
    """An Anthropic Messages request's messages."""
    def items(content: Any) -> list[Item]:
        if isinstance(content, str):
            return [("text", content)] if content else []
        out: list[Item] = []
        for b in content or []:
            kind = b.get("type")
            if kind == "text" and b.get("text"):
                out.append(("text", b["text"]))
            elif kind == "thinking" and thinking:
                out.append(("thinking", b.get("thinking", "")))
            elif kind == "tool_use":
                out.append(("call", b.get("name"), _args(b.get("input", {}))))
            elif kind == "tool_result":
                inner = b.get("content")
                text = inner if isinstance(inner, str) else "".join(
                    x.get("text", "") for x in inner or [] if isinstance(x, dict))
                out.append(("result", text))
        return out
    return _join((m.get("role"), items(m.get("content"))) for m in messages)


def live_capture(agent: str, version: str, scenario: str, scenarios: dict[str, lab.Scenario],
                 tmp_path: Path, botched: Callable[[lab.Capture], bool] | None = None) -> lab.Capture:
    """A lab scenario run with the real agent now, in the test's own scratch directory (skipped, saying how to
    install it, when the agent is not installed); nothing it wrote and nothing the server logged holds a secret.
    `botched`: how the real agent's own run can go wrong on a loaded machine (each caller says what it has seen):
    such a run is made once more, in a fresh scratch directory."""
    import install

    binary = install.binary(agent)
    if binary is None:
        pytest.skip(f"{agent} {version} is not installed: python3 tests/agents/install.py {agent}")
    try:
        capture = scenarios[scenario].run(lab.Scratch.fresh(agent, scenario, base=tmp_path), binary)
    except lab.Unrunnable as exc:
        pytest.skip(f"{agent} {scenario}: {exc}")
    if botched is not None and botched(capture):
        capture = scenarios[scenario].run(lab.Scratch.fresh(agent, scenario, base=tmp_path), binary)
    texts = [(str(p), p.read_bytes().decode("utf-8", "replace")) for p in capture.files]
    assert lab.find_secrets(texts + [("server log", json.dumps(capture.server_log))]) == []
    return capture


def triggers_as_written(loader, lines: list[str], cut: int) -> tuple[list, list, list]:
    """The compactions' triggers of a file fed to `loader` a line at a time: as built after `lines[:cut]`, after all
    of them, and the first build's again at the end (a session built before must keep what it said)."""
    for n, line in enumerate(lines[:cut], 1):
        loader.feed(n, 0, json.loads(line))
    before = loader.build()
    first = [c.trigger for c in before.compactions]
    for n, line in enumerate(lines[cut:], cut + 1):
        loader.feed(n, 0, json.loads(line))
    return first, [c.trigger for c in loader.build().compactions], [c.trigger for c in before.compactions]
