"""The rough edges a new user hits (issue 20): keys that skip what cannot run, labels that say what is shown,
help that lists each key once, Codex sessions described in Codex's terms."""

from __future__ import annotations

from app_helpers import CORPUS, ready, until

from inspector.app import make_app
from inspector.samples import SAMPLE_DIR

SESSION = CORPUS / "claude-code-manual-compact.jsonl"


async def test_next_estimator_skips_exact_without_a_key_and_says_why_once(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    from inspector.app.widgets.settings import estimator_names

    names = estimator_names()
    app = make_app(SAMPLE_DIR / "agent-short.jsonl", home=False)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(app, pilot)
        seen = []
        for _ in range(2 * len(names)):
            await pilot.press("e")
            await screen.workers.wait_for_complete()
            await pilot.pause()
            seen.append(screen.figures.settings.estimator)
        assert "exact" not in seen and set(seen) == set(names) - {"exact"}  # it moves through every other one
        told = [n.message for n in app._notifications if n.message.startswith("skipping exact")]
        assert len(told) == 1 and "ANTHROPIC_API_KEY" in told[0]
        assert not any("not applied" in (n.title or "") for n in app._notifications)
