"""The prompt view: a system prompt's sections with tokens and sources, the selected section's text, and lint
findings. Two prompts can be shown (key b): the loaded session's own (`Figures.prompt`: recorded, measured or
reconstructed by the core) and the one our agent would build for the session's working directory
(`inspector.core.prompt.assemble`, in a worker: it reads CLAUDE.md files and runs git). Grouped sections (a
recorded Claude Code request: system blocks, tools, each MCP server, system-reminders) sit under a heading row with
the group's tokens. Key r shows, instead, what changed from one recorded request to the next (RequestChangesView).
The view only lays them out."""

from __future__ import annotations

import os
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import DataTable, Static

from inspector.core.figures import Figures, PromptInfo
from inspector.app.sizes import NARROW, SHORT
from inspector.app.text import counted, human, one_line, plain, visible
from inspector.app.widgets.detail import DetailView
from inspector.app.widgets.request_changes import RequestChangesView
from inspector.core.prompt.session_view import group_title


def _short(path: str) -> str:
    """A path relative to the working directory when it lies below it (shorter, and the same on every checkout)."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


class AgentPromptReady(Message):
    def __init__(self, prompt: PromptInfo, estimator: str) -> None:
        super().__init__()
        self.prompt, self.estimator = prompt, estimator


class PromptView(Vertical, can_focus=False):
    DEFAULT_CSS = """
    PromptView #prompt-summary { height: auto; padding: 0 1; background: $panel; }
    PromptView #prompt-sections { width: 2fr; height: 1fr; }
    PromptView #prompt-text { width: 3fr; }
    PromptView #prompt-lint { height: 10; border-top: hkey $panel-lighten-2; }
    PromptView #prompt-changes { display: none; }
    PromptView.-narrow #prompt-sections { width: 1fr; }
    PromptView.-narrow #prompt-text { width: 1fr; }
    PromptView.-short #prompt-lint { height: 6; }
    """
    BINDINGS = [Binding("b", "toggle_source", "Session/agent prompt", id="prompt.source"),
                Binding("r", "toggle_changes", "Request changes", id="prompt.changes")]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.figures: Figures | None = None
        self.agent = False  # showing the prompt our agent would build instead of the session's
        self._agent_prompt: tuple[str, PromptInfo] | None = None  # (estimator, prompt)
        self._rows: list[int | None] = []  # table row -> section index (None: a group's heading row)
        self._drawn: tuple | None = None  # what the tables show: (agent, prompt, estimator, prefix sections)

    def compose(self) -> ComposeResult:
        yield Static("", id="prompt-summary")
        with Horizontal(id="prompt-main"):
            yield DataTable(id="prompt-sections", cursor_type="row", zebra_stripes=True)
            yield DetailView(id="prompt-text")
        yield DataTable(id="prompt-lint", cursor_type="row")
        yield RequestChangesView(id="prompt-changes")

    def on_resize(self) -> None:
        """Narrow: the sections table gets half the width (its columns whole); short: the findings fewer rows."""
        self.set_class(self.size.width < NARROW, "-narrow")
        self.set_class(self.app.size.height <= SHORT, "-short")

    def on_mount(self) -> None:
        self.query_one("#prompt-sections", DataTable).add_columns("section", "tokens", "source", "kind")
        self.query_one("#prompt-lint", DataTable).add_columns("rule", "where", "finding")

    @property
    def focusable(self) -> bool:  # focus goes to the section table
        return False

    def focus(self, scroll_visible: bool = True) -> PromptView:
        if self.has_class("changes"):
            self.query_one(RequestChangesView).focus(scroll_visible)
        else:
            self.query_one("#prompt-sections").focus(scroll_visible)
        return self

    def action_toggle_changes(self) -> None:
        """Between the prompt and what changed from one recorded request to the next."""
        self.toggle_class("changes")
        changes = self.has_class("changes")
        for part in ("#prompt-summary", "#prompt-main"):
            self.query_one(part).display = not changes
        self.query_one("#prompt-changes").display = changes
        self._lint_display()
        if changes and self.figures is not None:
            self.query_one(RequestChangesView).show(self.figures.session)
        self.focus()

    def _lint_display(self) -> None:
        prompt = self.prompt
        self.query_one("#prompt-lint").display = bool(prompt and prompt.findings) and not self.has_class("changes")

    def on_show(self) -> None:
        """Shown (its tab chosen by key, palette or mouse): the section table takes the keys."""
        self.focus()

    @property
    def prompt(self) -> PromptInfo | None:
        """What is on show: the session's prompt, or the agent's once built."""
        if self.agent:
            return self._agent_prompt[1] if self._agent_prompt else None
        return self.figures.prompt if self.figures else None

    def show(self, figures: Figures) -> None:
        self.figures = figures
        self._render_prompt()
        if self.has_class("changes"):
            self.query_one(RequestChangesView).show(figures.session)
        if self.agent and (self._agent_prompt is None or self._agent_prompt[0] != figures.settings.estimator):
            self.build_agent_prompt(figures)

    def action_toggle_source(self) -> None:
        self.agent = not self.agent
        if self.agent and self.figures is not None and self._agent_prompt is None:
            self.build_agent_prompt(self.figures)
        self._render_prompt()

    @work(thread=True, exclusive=True, exit_on_error=False, group="agent-prompt")
    def build_agent_prompt(self, figures: Figures) -> None:
        from inspector.core.prompt import assemble, lint

        cwd = figures.session.cwd
        where = Path(cwd) if cwd and Path(cwd).is_dir() else Path.cwd()
        note = f"our agent's prompt for {where}" + ("" if cwd and where == Path(cwd) else
                                                   " (the session's directory does not exist here)")
        try:
            built = assemble(cwd=where, estimator=figures.settings.estimator)
            info = PromptInfo(built.sections, lint(built.sections), "; ".join([note, *built.notes]))
        except Exception as exc:  # a template or estimator error: say it, keep the view
            info = PromptInfo([], [], f"{note}: cannot build it ({exc})")
        self.post_message(AgentPromptReady(info, figures.settings.estimator))

    @on(AgentPromptReady)
    def _agent_ready(self, event: AgentPromptReady) -> None:
        self._agent_prompt = (event.estimator, event.prompt)
        if self.agent:
            self._render_prompt()

    def _render_prompt(self) -> None:
        prompt, f = self.prompt, self.figures
        drawn = (self.agent, prompt, f.settings.estimator if f else None, f.prefix_sections if f else None)
        if drawn == self._drawn:  # a live append's figures: the same prompt (rebuilding the tables costs a layout)
            return
        self._drawn = drawn
        table = self.query_one("#prompt-sections", DataTable)
        lint = self.query_one("#prompt-lint", DataTable)
        row = table.cursor_row
        table.clear()
        lint.clear()
        which = "agent prompt (b: session's)" if self.agent else "session prompt (b: our agent's for its directory)"
        if prompt is None or f is None:
            self.query_one("#prompt-summary", Static).update(plain(f"{which}: being built…"))
            self.query_one(DetailView).show_text("", "")
            return
        self._rows = []
        for n, s in enumerate(prompt.sections):
            if s.group and (n == 0 or prompt.sections[n - 1].group != s.group):
                tokens = sum(t.tokens for t in prompt.sections if t.group == s.group)
                table.add_row(plain(group_title(s.group, prompt.sections)[:34], "bold"),
                              Text(f"{tokens:,}", justify="right", style="bold"), "", "", key=f"group:{s.group}")
                self._rows.append(None)
            table.add_row(plain(("  " if s.group else "") + s.title[:32]), Text(f"{s.tokens:,}", justify="right"),
                          plain(s.source[:24]), plain(s.kind), key=str(n))
            self._rows.append(n)
        for finding in prompt.findings:
            lint.add_row(plain(finding.rule), plain(finding.location()[:50]), plain(one_line(finding.message, 200)))
        self._lint_display()
        total = sum(s.tokens for s in prompt.sections)
        findings = counted(len(prompt.findings), "lint finding") if prompt.findings else "no lint findings"
        summary = f"{which} · {counted(len(prompt.sections), 'section')}, {human(total)} tokens " \
            f"({f.settings.estimator}) · {findings}"
        if prompt.note:
            summary += f"\n{prompt.note}"
        if f.prefix_sections and not self.agent:  # the measured prefix by name (core.prefix)
            summary += "\nprefix in context: " + ", ".join(
                f"{s.name} {human(s.tokens)}{'' if s.source == 'measured' else '~'}" for s in f.prefix_sections[:8]) \
                + (f", +{len(f.prefix_sections) - 8} more" if len(f.prefix_sections) > 8 else "") + \
                ("  (~: a share estimated" + ("" if f.prefix_sections[0].recorded else " from published sizes") + ")")
        self.query_one("#prompt-summary", Static).update(plain(summary))
        if prompt.sections:
            table.move_cursor(row=min(row, len(self._rows) - 1))
            self._show_section(table.cursor_row)
        else:
            self.query_one(DetailView).show_text("No prompt sections", "")

    @on(DataTable.RowHighlighted, "#prompt-sections")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_section(event.cursor_row)

    def _show_section(self, row: int) -> None:
        prompt = self.prompt
        if prompt is None or not 0 <= row < len(self._rows):
            return
        if self._rows[row] is None:  # a group's heading: the group's sections, listed
            group = next(prompt.sections[i].group for i in self._rows[row + 1:row + 2] if i is not None)
            members = [s for s in prompt.sections if s.group == group]
            text = "\n".join(f"{s.tokens:>8,}  {visible(s.title)}" for s in members)
            self.query_one(DetailView).show_text(visible(group_title(group, prompt.sections)), text,
                                                 [f"{sum(s.tokens for s in members):,} tokens in all"])
            return
        s = prompt.sections[self._rows[row]]
        notes = [f"source: {visible(s.source)}" + (f" ({visible(_short(s.path))})" if s.path else ""),
                 f"{s.tokens:,} tokens · {s.kind}"] + ([visible(s.note)] if s.note else [])
        self.query_one(DetailView).show_text(visible(s.title), s.text, notes)
