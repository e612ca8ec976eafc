"""The session-aware default policy: each session is measured against its own harness's rule unless one is chosen,
in the core, `report`, `compact` and the app."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from app_helpers import ready, until

from inspector.app import make_app
from inspector.app.agent_bridge import AgentOptions
from inspector.app.palette import InspectorCommands
from inspector.app.widgets.agent_panel import AgentPanel
from inspector.app.widgets.context_bar import ContextBar
from inspector.app.widgets.settings import SettingsPanel
from inspector.cli import main
from inspector.core.formats import load
from inspector.core.limits import AGENT_POLICY, default_policy, window_info
from inspector.core.model import Session
from textual.widgets import Select, Static

from conftest import CORPUS, FIXTURES

FORMATS = FIXTURES / "formats"
CODEX = FORMATS / "codex-rollout.jsonl"  # states model_context_window 272,000
CLAUDE = CORPUS / "claude-code-manual-compact.jsonl"


@pytest.mark.parametrize(("name", "expected"), [
    ("codex-rollout.jsonl", "codex"),
    ("codex-rollout-legacy.jsonl", "codex"),
    ("neutral.jsonl", AGENT_POLICY),
    ("anthropic-requests.jsonl", "claude-code"),  # captured from Claude Code: its system prompt says so
    ("anthropic-request.json", "claude-code"),
    ("openai-chat.json", "reference"),
])
def test_each_format_gets_its_harness_rule(name, expected):
    assert default_policy(load(FORMATS / name)) == expected


def test_claude_code_and_others():
    assert default_policy(load(CLAUDE)) == "claude-code"
    plain = Session(source="x", format="anthropic-request", system="You are a helpful assistant.")
    assert default_policy(plain) == "reference"  # some other program's request: no harness rule recorded
    assert default_policy(None) == AGENT_POLICY == "reference"


def test_window_info_without_a_policy_uses_the_session_own():
    codex = load(CODEX)
    info = window_info(codex, environ={})
    assert (info.policy, info.policy_source, info.default_policy) == ("codex", "default", "codex")
    assert info.thresholds.autocompact == 244_800  # 90% of the stated 272,000
    assert "the session's default" in info.notes[0]
    chosen = window_info(codex, "claude-code", environ={})
    assert (chosen.policy, chosen.policy_source, chosen.default_policy) == ("claude-code", "chosen", "codex")
    assert chosen.thresholds.autocompact == 272_000 - 20_000 - 13_000
    assert "chosen" in chosen.notes[0] and "codex" in chosen.notes[0]
    same = window_info(codex, "codex", environ={})
    assert same.policy_source == "chosen" and not any("policy" in n for n in same.notes)


def _report(capsys, *args: str) -> dict:
    assert main(["report", *map(str, args), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_report_json_applies_the_session_policy_and_says_so(capsys, monkeypatch):
    monkeypatch.delenv("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE", raising=False)
    w = _report(capsys, CODEX)["window"]
    assert (w["policy"], w["policy_source"], w["default_policy"]) == ("codex", "default", "codex")
    assert w["thresholds"] == {"warning": 217_600, "autocompact": 244_800, "blocking": 272_000}
    r = _report(capsys, CLAUDE)
    assert (r["window"]["policy"], r["window"]["policy_source"]) == ("claude-code", "default")
    assert r["window"]["thresholds"]["autocompact"] == 167_000
    assert r["what_if"]["threshold"] == 167_000


def test_report_policy_option_still_overrides(capsys, monkeypatch):
    monkeypatch.delenv("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE", raising=False)
    r = _report(capsys, CODEX, "--policy", "claude-code")
    w = r["window"]
    assert (w["policy"], w["policy_source"], w["default_policy"]) == ("claude-code", "chosen", "codex")
    assert w["thresholds"]["autocompact"] == 239_000 == r["what_if"]["threshold"]
    w = _report(capsys, CLAUDE, "--policy", "codex")["window"]
    assert (w["policy"], w["policy_source"], w["thresholds"]["autocompact"]) == ("codex", "chosen", 180_000)


def test_report_text_names_the_policy_in_force(capsys):
    assert main(["report", str(CODEX)]) == 0
    out = capsys.readouterr().out
    assert "Context window (codex policy" in out and "policy codex: the session's default" in out
    assert main(["report", str(CODEX), "--policy", "reference"]) == 0
    out = capsys.readouterr().out
    assert "Context window (reference policy" in out and "the session's default is codex" in out


def test_report_help_says_the_default_is_the_session_own(capsys):
    with pytest.raises(SystemExit):
        main(["report", "--help"])
    assert "(default: the session's own: codex for Codex rollouts" in " ".join(capsys.readouterr().out.split())


def test_compact_places_the_plan_against_the_session_policy(capsys):
    assert main(["compact", str(CODEX), "--strategy", "snip", "--dry-run"]) == 0
    line = capsys.readouterr().out.splitlines()[1]
    assert line.startswith("codex policy (the session's default): auto-compact at 244,800 of 272,000")
    assert main(["compact", str(CLAUDE), "--strategy", "clear", "--dry-run", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert (d["window"]["policy"], d["window"]["policy_source"]) == ("claude-code", "default")
    before, after = d["context"]["before"], d["context"]["after"]
    assert d["saved"] > 0 and before["used"] - after["used"] == d["saved"]
    assert after["distance"]["autocompact"] == 167_000 - after["used"]
    assert main(["compact", str(CLAUDE), "--strategy", "clear", "--dry-run", "--json", "--policy", "reference",
                 "--window", "100000"]) == 0
    w = json.loads(capsys.readouterr().out)["window"]
    assert (w["policy"], w["policy_source"], w["context_window"]) == ("reference", "chosen", 100_000)


def test_compact_bad_window_is_one_line(capsys):
    assert main(["compact", str(CODEX), "--dry-run", "--window", "0"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "window" in err


# -- the app ---------------------------------------------------------------------------------------------------------

async def _settle(screen, pilot) -> None:
    await pilot.pause()
    await screen.workers.wait_for_complete()
    await pilot.pause()


async def test_app_on_a_codex_session_shows_the_codex_policy():
    app = make_app(CODEX, home=False)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(app, pilot)
        w = screen.figures.window
        assert app.settings.policy is None  # nothing chosen: the session's own
        assert w.policy == "codex" and w.thresholds["autocompact"] == 244_800
        assert "policy codex" in screen.query_one(ContextBar).render().plain
        await pilot.press("s")
        panel = screen.query_one(SettingsPanel)
        assert panel.query_one("#set-policy", Select).value is None
        own = str(panel.query_one("#set-policy-own", Static).render())
        assert "this session's own: codex" in own and "policy codex: the session's default" in own  # and its notes
        assert "policy codex: the session's default" in str(screen.query_one(ContextBar).tooltip)  # on hover

        panel.query_one("#set-policy", Select).value = "claude-code"  # a choice overrides it
        await _settle(screen, pilot)
        assert app.settings.policy == "claude-code" and screen.figures.window.policy == "claude-code"
        assert screen.figures.window.thresholds["autocompact"] == 239_000
        panel.query_one("#set-policy", Select).value = None  # and back to the session's own
        await _settle(screen, pilot)
        assert app.settings.policy is None and screen.figures.window.policy == "codex"

        await pilot.press("escape", "p")  # the key cycles on from the policy in force
        await _settle(screen, pilot)
        assert app.settings.policy == "custom" and screen.figures.window.policy == "custom"
        assert panel.query_one("#set-policy", Select).value == "custom"


async def test_app_session_own_policy_follows_each_session_opened():
    app = make_app(CLAUDE, home=False)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(app, pilot)
        assert screen.figures.window.policy == "claude-code"
        assert screen.figures.window.thresholds["autocompact"] == 167_000
        app.open_session(CODEX)  # the same app settings, another session
        await until(pilot, lambda: app.screen is not screen)
        codex = await ready(app, pilot)
        assert codex.figures.window.policy == "codex"
        commands = {name: cb for name, cb, _ in InspectorCommands(codex)._commands()}
        commands["Policy: reference"]()
        await _settle(codex, pilot)
        assert codex.figures.window.policy == "reference"
        commands["Policy: the session's own"]()
        await _settle(codex, pilot)
        assert app.settings.policy is None and codex.figures.window.policy == "codex"


async def test_agent_view_compacts_by_our_agent_policy_unless_one_is_chosen(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("ANTHROPIC_MODEL", raising=False)
    app = make_app(CODEX, home=False, agent=AgentOptions(cwd=tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(app, pilot)
        await pilot.press("4")
        panel = screen.query_one(AgentPanel)
        await until(pilot, lambda: panel.cancel is not None)
        # the shown session is Codex's, but the agent that would continue it is ours: 70% of 200k less 20k
        assert panel.policy_note.startswith("compacts at 126,000 tokens (reference)")
        screen.set_settings(replace(app.settings, policy="codex"))
        panel._policy()
        assert panel.policy_note.startswith("compacts at 180,000 tokens (codex)")
