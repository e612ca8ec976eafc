"""The command palette's contextual commands: views, sorting, filters for the session's own tools, policies and
estimators, the picker. Built from the current screen each time the palette opens, so they fit what is loaded."""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import Callable

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.markup import escape

from inspector.app.text import visible

Command = tuple[str, Callable[[], object], str]


class InspectorCommands(Provider):
    def _commands(self) -> list[Command]:
        from inspector.app.screens.main import MainScreen
        from inspector.app.widgets.message_list import Filter, MessageList
        from inspector.app.widgets.settings import estimator_names, policy_names

        screen = self.screen
        app = self.app
        out: list[Command] = [("Open another session", app.action_pick, "the session picker"),  # type: ignore
                              ("New agent session", app.action_new_agent, "a fresh session for the agent"),  # type: ignore
                              ("Capture: record an agent's API requests", app.action_capture,  # type: ignore
                               "a local proxy; the app follows the file it writes"),
                              ("Help: keys", app.action_help, "every key, with its binding id")]  # type: ignore
        if not isinstance(screen, MainScreen):
            return out
        lst = screen.query_one(MessageList)
        out += [
            ("View: messages", partial(screen.action_view, "messages"), "list and detail"),
            ("View: prompt", partial(screen.action_view, "prompt"), "system prompt sections and lint"),
            ("View: timeline", partial(screen.action_view, "timeline"), "context per request, forecast"),
            ("View: agent", partial(screen.action_view, "agent"), "run the agent on this session"),
            ("Agent: reset the compaction circuit breaker", screen.query_one("#agent-panel").reset_breaker,
             "auto-compaction on again after failures"),
            ("Jump to the largest message", lst.action_largest, "among the rows shown"),
            ("Sort by size" if not lst.by_size else "Sort by position", lst.action_toggle_sort, ""),
            ("Settings", screen.action_settings, "policy, window, estimator, microcompaction"),
            ("Compaction workbench", screen.action_workbench, "preview, step through, undo, summary, export"),
            ("Clear filter", partial(screen.apply_filter, Filter()), ""),
            ("Show load warnings", screen.action_warnings, ""),
        ]
        for kind, label in (("prompt", "user prompts"), ("assistant", "assistant messages"),
                            ("tool_result", "tool results"), ("meta", "injected (meta) messages"),
                            ("compact_summary", "compaction summaries")):
            out.append((f"Filter: {label}", partial(screen.apply_filter, Filter(frozenset({kind}))), ""))
        if screen.figures is not None:
            for tool in sorted(set(screen.figures.tool_names.values())):
                out.append((f"Filter: tool {tool}", partial(screen.apply_filter, Filter(tool=tool)),
                            "its calls and results"))
        out.append(("Policy: the session's own", partial(self._set, screen, policy=None), "its harness's thresholds"))
        for policy in policy_names():
            out.append((f"Policy: {policy}", partial(self._set, screen, policy=policy), "thresholds"))
        for name in estimator_names():
            out.append((f"Estimator: {name}", partial(self._set, screen, estimator=name), "token estimates"))
        return out

    @staticmethod
    def _set(screen, **changes: object) -> None:
        screen.set_settings(replace(screen.settings, **changes))

    # The palette reads a command's name as markup, and names hold the session's tool names: escape them, or a tool
    # named "[@click=app.quit]" would be a live action.
    async def discover(self) -> Hits:
        for name, callback, help_text in self._commands():
            yield DiscoveryHit(escape(visible(name)), callback, text=name, help=help_text or None)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, callback, help_text in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(escape(visible(name))), callback, text=name,
                          help=help_text or None)
