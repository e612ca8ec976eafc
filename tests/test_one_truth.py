"""One truth per figure: a compaction step's figures, a fresh accounting of the state it makes and the report of the
file it is exported to state the same numbers, for every strategy and sequences of steps, on the real corpus and on
generated sessions with usage; and wherever figures are stated, their parts add up.

The steps are made as the workbench makes them (`figures.after`: followed from the figures before); the export is
reloaded by the loaders a user's `report` runs."""

from __future__ import annotations

import json

from compaction_sessions import TOOLS
from conftest import CORPUS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector import cli
from inspector.core.compaction import (ClearSettings, ContextEditSettings, SnipSettings, SummarySettings,
                                       plan_strategy)
from inspector.core.export import export_session
from inspector.core.figures import Figures, Settings, after, compute, plan_estimates
from inspector.core.formats import load
from inspector.core.model import Block, Message, Request, Session
from inspector.core.tokens import account
from inspector.samples import SAMPLE_DIR

MANUAL = CORPUS / "claude-code-manual-compact.jsonl"
STEPS = st.sampled_from([
    ("snip", SnipSettings(preserve_last_n=6, max_chars=2000)), ("snip", SnipSettings(preserve_last_n=2, max_chars=300)),
    ("clear", ClearSettings(keep_recent=5)), ("clear", ClearSettings(keep_recent=1)),
    ("clear_tool_uses", ContextEditSettings(trigger=0, keep=2)),
    ("clear_tool_uses", ContextEditSettings(trigger=0, keep=1, clear_tool_inputs=True)),
    ("summary", SummarySettings(keep_ratio=0.3)), ("summary", SummarySettings(keep_ratio=0.6)),
])
BOUNDED = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                          HealthCheck.too_slow])


def assert_adds_up(f: Figures) -> None:
    """The categories sum to the figure; with free and reserved, to the window (at or below auto-compact)."""
    w = f.window
    assert sum(t for _, t in f.categories) == w.used
    if w.used <= w.thresholds["autocompact"]:
        assert w.used + w.free + w.reserved == w.window
    assert f.cumulative[-1] == w.used if f.session.messages else True


def assert_same_figures(a, b) -> None:
    """Two accountings of the same state (one followed, one fresh or reloaded) state the same figures."""
    assert a.current_context == b.current_context, (a.current_context, b.current_context)
    assert a.by_category == b.by_category
    assert [a.size(i) for i in range(len(a.estimated))] == [b.size(i) for i in range(len(b.estimated))]
    assert [a.figure(i)[1] for i in range(len(a.estimated))] == [b.figure(i)[1] for i in range(len(b.estimated))]
    assert a.category == b.category and (a.prefix, a.unrecorded) == (b.prefix, b.unrecorded)


def walk(figures: Figures, steps, tmp_path, formats: tuple[str, ...]) -> Figures:
    """Apply `steps` as the workbench does; after each, check it against a fresh accounting and against the report
    of its export (reloaded, then exported and reloaded again)."""
    settings_ = figures.settings
    for n, (strategy, params) in enumerate(steps):
        session = figures.session
        est = plan_estimates(session, settings_.estimator, figures.estimated)
        plan = plan_strategy(strategy, session, params, est, context_tokens=figures.window.used)
        if not plan.changed:
            continue
        figures = after(figures, plan, "The user asked for the parser; it is fixed." if plan.summary else None)
        assert figures.accounting is not None
        assert_adds_up(figures)
        assert_same_figures(figures.accounting, account(figures.session, settings_.estimator))
        for fmt in formats:
            out = export_session(figures.session, tmp_path / f"step{n}.{fmt}.jsonl", fmt)
            back = load(out)
            assert not [w for w in back.warnings if "microcompaction" in w.message or "keptFrom" in w.message]
            reloaded = account(back, settings_.estimator)
            assert_same_figures(figures.accounting, reloaded)
            again = account(load(export_session(back, tmp_path / f"step{n}.{fmt}.again.jsonl", fmt)),
                            settings_.estimator)
            assert_same_figures(reloaded, again)  # exporting an export changes nothing
    return figures


def with_usage(draw, messages: list[Message]) -> Session:
    """A generated conversation with a measured request for each response: what the window held, grown by a noisy
    multiple of each message's length (the API counts what the estimators only guess)."""
    prefix = draw(st.integers(500, 20_000))
    context, requests, model = prefix, [], "claude-sonnet-4-5"
    for i, m in enumerate(messages):
        if m.role == "assistant":
            m.model = model
            m.response_id = f"msg_{i}"
            requests.append(Request(m.response_id, model, max(1, context), 0, 0, draw(st.integers(1, 300)),
                                    i, 0, i))
        context += int(len(m.text()) / draw(st.sampled_from([2.5, 3.5, 4.5]))) + 4
    return Session("generated.jsonl", "claude-code", messages, requests, models=[model])


@st.composite
def measured_sessions(draw) -> Session:
    """Conversations of prompts, replies and rounds of (parallel) tool calls with results of every size."""
    words = st.text(alphabet="abcdefghij klmnop\n", min_size=1, max_size=40)
    messages = [Message("user", "prompt", [Block("text", draw(words))], uuid="m0")]
    for r in range(draw(st.integers(2, 10))):
        kind = draw(st.sampled_from(["reply", "tools", "tools"]))
        if kind == "reply":
            messages.append(Message("assistant", "assistant", [Block("text", draw(words))]))
            messages.append(Message("user", "prompt", [Block("text", draw(words))]))
            continue
        ids = [f"toolu_{r}_{k}" for k in range(draw(st.integers(1, 3)))]
        uses = [Block.of("tool_use", tool_id=i, tool_name=draw(st.sampled_from(TOOLS)),
                         input={"path": draw(words) * draw(st.integers(1, 60))}) for i in ids]
        messages.append(Message("assistant", "assistant", [Block("text", draw(words)), *uses]))
        messages.append(Message("user", "tool_result", [
            Block("tool_result", draw(words) * draw(st.sampled_from([1, 20, 200, 900])), tool_id=i,
                  is_error=draw(st.booleans())) for i in ids]))
    messages.append(Message("assistant", "assistant", [Block("text", draw(words))]))
    for k, m in enumerate(messages):
        m.uuid = f"m{k}"
    return with_usage(draw, messages)


@BOUNDED
@given(steps=st.lists(STEPS, min_size=1, max_size=3))
def test_steps_on_the_corpus_report_as_the_workbench_states_them(tmp_path_factory, steps):
    base = compute(load(MANUAL), Settings())
    walk(base, steps, tmp_path_factory.mktemp("corpus"), ("claude-code", "neutral"))


@BOUNDED
@given(session=measured_sessions(), steps=st.lists(STEPS, min_size=1, max_size=3),
       estimator=st.sampled_from(["calibrated", "chars35", "script"]))
def test_steps_on_generated_sessions_report_as_the_workbench_states_them(tmp_path_factory, session, steps, estimator):
    base = compute(session, Settings(estimator=estimator))
    assert_adds_up(base)
    walk(base, steps, tmp_path_factory.mktemp("generated"), ("claude-code", "neutral"))


def test_every_bundled_sample_and_corpus_file_adds_up():
    for path in [*SAMPLE_DIR.glob("*.jsonl"), *CORPUS.glob("*.jsonl")]:
        for estimator in ("calibrated", "chars35"):
            assert_adds_up(compute(load(path), Settings(estimator=estimator)))


def _report(capsys, path, *flags) -> dict:
    assert cli.main(["report", str(path), "--json", *flags]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_clear_export_reports_what_the_dry_run_said(capsys, tmp_path):
    """Seen: `compact --strategy clear --out X`, then `report X`: now 74,580 while the categories summed to 102,407
    (the cleared content still counted as measured growth, which moved into "unrecorded")."""
    out = tmp_path / "cleared.jsonl"
    assert cli.main(["compact", str(MANUAL), "--strategy", "clear", "--json", "--dry-run"]) == 0
    planned = json.loads(capsys.readouterr().out)
    assert cli.main(["compact", str(MANUAL), "--strategy", "clear", "--out", str(out)]) == 0
    capsys.readouterr()
    before, report = _report(capsys, MANUAL), _report(capsys, out)
    totals = report["totals"]
    assert totals["current"] == planned["after"] == planned["before"] - planned["saved"]
    by = totals["by_category"]
    assert sum(v for k, v in by.items() if k not in ("free", "reserved")) == totals["current"]
    assert sum(by.values()) == report["window"]["context_window"]
    assert totals["unrecorded"] == before["totals"]["unrecorded"]  # what was cleared is not "unrecorded" growth


def test_a_snip_export_knows_its_results_were_snipped(capsys, tmp_path):
    """Seen: `report` of a snipped export said "now" the old measured figure (102,561) though the plan said 87,649."""
    out = tmp_path / "snipped.jsonl"
    assert cli.main(["compact", str(MANUAL), "--strategy", "snip", "--json", "--out", str(out)]) == 0
    planned = json.loads(capsys.readouterr().out)
    report = _report(capsys, out)
    assert report["totals"]["current"] == planned["after"] < planned["before"]
    assert load(out).compactions[-1].replaced  # the loader applied the snip: it knows what each request saw


def test_the_header_the_dry_run_the_step_and_the_export_state_one_saving(capsys, tmp_path):
    """Seen: one clear's saving stated as 35,198 (header), 35,198 (dry run), 36,322 (the step's delta)."""
    base = compute(load(MANUAL), Settings())
    est = plan_estimates(base.session, "calibrated", base.estimated)
    plan = plan_strategy("clear", base.session, ClearSettings(keep_recent=5), est)
    step = after(base, plan)
    assert base.micro_saving == base.window.used - step.window.used
    assert cli.main(["compact", str(MANUAL), "--strategy", "clear", "--json", "--dry-run"]) == 0
    assert json.loads(capsys.readouterr().out)["saved"] == base.micro_saving
    assert step.session.compactions[-1].tokens_saved == base.micro_saving  # the record says so too


def test_two_exported_steps_have_unique_uuids_and_reload_whole(tmp_path):
    """Seen: exporting a snip then a clear wrote two microcompact boundaries with one uuid, the second its own
    parent: the reload warned of a repeated uuid and dropped the clear."""
    base = compute(load(MANUAL), Settings())
    f = base
    for strategy in ("snip", "clear"):
        est = plan_estimates(f.session, "calibrated", f.estimated)
        f = after(f, plan_strategy(strategy, f.session, None, est))
    out = export_session(f.session, tmp_path / "two.jsonl", "claude-code")
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    uuids = [x["uuid"] for x in lines]
    assert len(uuids) == len(set(uuids)) and all(x.get("parentUuid") != x["uuid"] for x in lines)
    back = load(out)
    assert not back.warnings and [c.kind for c in back.compactions][-2:] == ["microcompact", "microcompact"]
    assert_same_figures(f.accounting, account(back, "calibrated"))


def test_clear_tool_uses_triggers_on_the_whole_requests_input(capsys):
    """Seen: `compact --strategy clear_tool_uses` compared the messages alone (74,555) with the 100,000 trigger and
    cleared nothing, while the API's trigger is the whole request's input (102,484 here)."""
    assert cli.main(["compact", str(MANUAL), "--strategy", "clear_tool_uses", "--json", "--dry-run"]) == 0
    planned = json.loads(capsys.readouterr().out)
    assert planned["before"] > 100_000 and planned["saved"] > 0 and "below the trigger" not in planned["note"]


async def test_the_apps_header_and_legend_state_what_report_json_states(capsys):
    """The header's used and free figures and every part of the legend are `report --json`'s for the same file and
    settings (policy, window, estimator)."""
    import re

    from app_helpers import ready

    from inspector.app import make_app
    from inspector.app.text import human
    from inspector.app.widgets.context_bar import ContextBar
    from inspector.core.categories import label

    for path, flags, settings_ in [
        (MANUAL, [], Settings()),
        (MANUAL, ["--window", "120000", "--estimator", "script"], Settings(window=120_000, estimator="script")),
        (CORPUS / "claude-code-compaction-request.jsonl", [], Settings()),
        (SAMPLE_DIR / "agent-short.jsonl", [], Settings()),
    ]:
        report = _report(capsys, path, *flags)
        app = make_app(path, home=False, settings=settings_)
        async with app.run_test(size=(200, 50)) as pilot:
            screen = await ready(app, pilot)
            text = str(screen.query_one(ContextBar).render())
        head, legend = text.splitlines()[0], " ".join(text.splitlines()[3:])
        used = int(re.search(r"used ([\d,]+) of", head).group(1).replace(",", ""))
        assert used == report["totals"]["current"] == report["current"]["used"], path
        by = report["totals"]["by_category"]
        if by["free"]:
            assert f"free {by['free']:,} " in head, (path, head)
        for key, tokens in by.items():
            name = {"free": "free", "reserved": "reserved"}.get(key, label(key))
            if tokens:
                assert f"■ {name} {human(tokens)} " in legend + " ", (path, key, legend)
        warned = [n for n in report["window"]["notes"] if "smaller than" in n]
        assert bool(warned) == ("⚠" in head) and all(w in text.replace("\n", "") for w in warned)


def test_a_compaction_requests_prefix_is_the_conversation_it_summarizes(capsys):
    """Seen: the 169k that a compaction request read from the cache was labelled "system prompt and tools"."""
    by = _report(capsys, CORPUS / "claude-code-compaction-request.jsonl")["totals"]["by_category"]
    assert by["summarized_conversation"] > 150_000 and "system_tools" not in by
    assert "summarized_conversation" not in _report(capsys, MANUAL)["totals"]["by_category"]


def test_sessions_the_real_claude_code_wrote_export_and_reload_with_their_figures(tmp_path):
    """The lab's Claude Code 2.1.332 transcripts (attachments, recorded requests, compactions): exported in either
    format and reloaded, they state the same figures; and so does a step on them."""
    from conftest import FIXTURES

    paths = [p for p in sorted((FIXTURES / "agents" / "claude-code-2.1.332").rglob("*.jsonl"))
             if p.name != "server.jsonl" and "subagents" not in p.parts]
    assert len(paths) >= 10
    for path in paths:
        session = load(path)
        for fmt in ("claude-code", "neutral"):
            back = load(export_session(session, tmp_path / f"{path.parent.name}.{fmt}.jsonl", fmt))
            assert_same_figures(account(session), account(back))
    walk(compute(load(paths[0]), Settings()), [("clear", ClearSettings(keep_recent=0))], tmp_path, ("claude-code",))


def test_prompt_session_states_reports_prefix_with_reports_estimator(capsys):
    """Seen: `prompt --session` on a Codex rollout totalled 0 while report showed a 10,201-token prefix, and it
    defaulted to another estimator than report."""
    from conftest import FIXTURES

    for path in [FIXTURES / "formats" / "codex-rollout.jsonl",
                 *sorted((FIXTURES / "agents").glob("codex-*/read-file/**/rollout-*.jsonl"))]:
        report = _report(capsys, path)
        assert cli.main(["prompt", "--session", str(path), "--json"]) == 0
        prompt = json.loads(capsys.readouterr().out)
        assert prompt["estimator"] == report["estimator"]
        prefix = sum(s["tokens"] for s in prompt["sections"] if not s.get("line"))
        assert prefix == report["totals"]["prefix"] > 0, path
