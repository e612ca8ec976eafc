"""The detail pane: one message in full, blocks separated, with its tool call or result and its request's usage.

A Line API widget like the list: content is split into logical lines once, wrapped per width on demand and drawn
line by line, so a message holding megabytes scrolls smoothly. Each block shows at most `cap` characters (press `m`
for more); text is data, so it goes through `visible()` and plain Segments, never markup.
"""

from __future__ import annotations

import json
from pathlib import Path

from rich.cells import cell_len, chop_cells
from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widget import Widget

from inspector.core.figures import Figures, Links
from inspector.app.text import human, visible
from inspector.core.compaction.diff import freed
from inspector.core.model import Block, Message, Request, Session
from inspector.core.usage_terms import usage_parts

CAP = 20_000
MAX_BLOCKS = 200  # blocks drawn per message (and per result): one can hold 100,000 parallel calls or parts
HEAD = Style(bold=True, color="#5fd7d7")
RULE = Style(color="#5f87af", bold=True)
DIM = Style(dim=True)
ERROR = Style(color="#ff5f5f", bold=True)
SPAWN = Style(color="#d787ff", bold=True)
Line = tuple[str, Style | None]


def _json(value: object, cap: int) -> str:
    try:
        text = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return text[:cap + 1]


def _wrap(text: str, width: int) -> list[str]:
    """Greedy word wrap of a line of single-cell characters, breaking words longer than the width."""
    out: list[str] = []
    while len(text) > width:
        cut = text.rfind(" ", width // 2, width + 1)
        if cut <= 0:
            out.append(text[:width])
            text = text[width:]
        else:
            out.append(text[:cut])
            text = text[cut + 1:]
    out.append(text)
    return out


def _more_blocks(total: int) -> list[Line]:
    if total <= MAX_BLOCKS:
        return []
    return [("", None), (f"… {total - MAX_BLOCKS:,} more blocks not shown", Style(color="#d7d75f", italic=True))]


class DetailView(ScrollView, can_focus=True, inherit_bindings=False):
    DEFAULT_CSS = """
    DetailView { background: $surface; padding: 0 1; overflow-y: scroll; overflow-x: hidden; }
    """
    BINDINGS = [
        Binding("up,k", "scroll_up", "Up", show=False, id="detail.up"),
        Binding("down,j", "scroll_down", "Down", show=False, id="detail.down"),
        Binding("pageup,ctrl+b", "page_up", "Page up", show=False, id="detail.page_up"),
        Binding("pagedown,ctrl+f,space", "page_down", "Page down", show=False, id="detail.page_down"),
        Binding("home,g", "scroll_home", "Top", show=False, id="detail.top"),
        Binding("end,G", "scroll_end", "Bottom", show=False, id="detail.bottom"),
        Binding("m", "more", "More text", id="detail.more"),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.lines: list[Line] = []
        self._wrapped: list[Line] = []
        self._wrapped_width = -1
        self.cap = CAP
        self._what: tuple[Figures | Links, int | None, int | None] | None = None
        self._requests: tuple[Session | None, dict[str, Request]] = (None, {})
        self._base: Style | None = None  # the widget's rich_style, looked up once per style change
        self.spawned: dict[int, list] = {}  # message index -> the subagents it started (`core.subagents`)
        self.first_number = 0  # what message 0 is numbered, as in the list (a preview counts back from the end)
        self.previewing = False  # showing a preview of the session's end (`core.formats.tail`: no line numbers)

    # -- content ----------------------------------------------------------------------------------------------------

    def show_message(self, figures: Figures | Links, index: int | None, compaction: int | None = None) -> None:
        if self._what is None or self._what[1:] != (index, compaction):
            self.cap = CAP
            self.scroll_to(0, 0, animate=False, immediate=True)
        self._what = (figures, index, compaction)
        if compaction is not None:
            self._set(self._compaction_lines(figures, compaction))
        elif index is None:
            self._set([("No message selected.", DIM)])
        else:
            self._set(self._message_lines(figures, index))

    def show_text(self, title: str, text: str, notes: list[str] | None = None) -> None:
        """Show any text (a prompt section, a raw line) with a title, capped like message content."""
        if self._what is not None:
            self.cap = CAP
        self._what = None
        self.scroll_to(0, 0, animate=False, immediate=True)
        lines: list[Line] = [(title, HEAD)] + [(n, DIM) for n in notes or ()] + [("", None)]
        self._set(lines + self._text_lines(text[:self.cap + 1], len(text)))

    def action_more(self) -> None:
        if self._what:
            self.cap *= 5
            self.show_message(*self._what)

    def _set(self, lines: list[Line]) -> None:
        # Headers hold session text too (timestamps, models, tool names and ids, triggers): one choke point.
        self.lines = [(visible(text).replace("\t", " ").replace("\n", " "), style) for text, style in lines]
        self._wrapped_width = -1
        self._rewrap()
        self.refresh()

    def _compaction_lines(self, f: Figures | Links, k: int) -> list[Line]:
        c = f.session.compactions[k]
        out: list[Line] = [(f"{c.kind} boundary before message #{c.index + self.first_number}", HEAD),
                           (f"trigger: {c.trigger or 'unknown'}", None)]
        if c.pre_tokens is not None:
            out.append((f"context before: {c.pre_tokens:,} tokens", None))
        if c.tokens_saved is not None:
            out.append((f"tokens: {freed(c.tokens_saved, word='saved')}", None))
        if c.cleared_tool_ids:
            out.append((f"tool results cleared: {len(c.cleared_tool_ids)}", None))
        out += self._source((c.line,) if c.line else ())
        out += [(f"at {c.timestamp}", DIM)] if c.timestamp else []
        return out

    def _source(self, lines: tuple[int, ...]) -> list[Line]:
        """The file lines it came from; a preview of the session's end has no line numbers yet."""
        if not lines:
            return [("source line ? (once all is read)", DIM)] if self.previewing else []
        where = f"{lines[0]}" if len(lines) == 1 else f"{lines[0]}-{lines[-1]} ({len(lines)} lines)"
        return [(f"source line {where}", DIM)]

    def _message_lines(self, f: Figures | Links, i: int) -> list[Line]:
        m = f.session.messages[i]
        out: list[Line] = []
        head = f"#{i + self.first_number}  {m.role}" + (f" / {m.kind}" if m.kind != m.role else "")
        head += f"  {m.timestamp}" if m.timestamp else ""
        head += f"  {m.model}" if m.model else ""
        out.append((head, HEAD))
        if isinstance(f, Figures):
            basis = f.basis(i)
            how = {"measured": "measured (its share of the usage the API reported)",
                   "derived": "derived (a measured share adjusted by a compaction no request has measured)",
                   "estimated": "estimated"}[basis]
            estimate = f"({f.settings.estimator})" if basis == "estimated" else \
                f"· estimate {f.estimated[i]:,} ({f.settings.estimator})"
            marked = " (provisional)" if f.provisional else " (the preview's own)" if f.preview else ""
            out.append((f"tokens: {f.size(i):,} {how} {estimate}" + marked
                        + f" · context through here {f.cumulative[i]:,}", None))
            if i in f.orphans:
                out.append(("orphan: a tool call without its result, or a result without its call", ERROR))
        else:
            out.append(("tokens: being computed…", DIM))
        out += self._source(m.lines)
        req = self._request_of(f.session, m)
        if req is not None:
            usage = " · ".join(f"{label} {tokens:,}" for label, tokens in usage_parts(req, f.session.format))
            out.append((f"request {req.id}: {usage}", Style(color="#5fd75f")))
        for a in self.spawned.get(i, ()):
            window = Path(a.path).name if a.path else "its window's file is not beside the session"
            out.append((f"⇢ started subagent {a.number} ({a.what}): {window}" + (" · enter opens it" if a.path
                                                                               else ""), SPAWN))
        for n, b in enumerate(m.blocks[:MAX_BLOCKS], 1):
            out.append(("", None))
            out.extend(self._block_lines(f, b, n))
        out += _more_blocks(len(m.blocks))
        self._linked(f, m, out)
        return out

    def _block_lines(self, f: Figures | Links, b: Block, n: int | str) -> list[Line]:
        title = f"── [{n}] {b.type}"
        if b.type == "tool_use":
            title += f" {b.tool_name} ({b.tool_id})"
        elif b.type == "tool_result":
            title += f" for {f.tool_names.get(b.tool_id or '', '?')} ({b.tool_id})"
            title += "  ERROR" if b.is_error else ""
        elif b.type in ("image", "document"):
            title += f" {b.media or ''} {b.size:,} bytes of data (not kept)"
        out: list[Line] = [(title + " ", RULE)]
        if b.type == "tool_use":
            args = b.input
            out += self._text_lines(_json(args, self.cap), len(json.dumps(args, default=str)))
        elif b.type == "unknown":
            out += self._text_lines(_json(b.raw, self.cap), None)
        else:
            if b.text or not b.content:
                out += self._text_lines(b.text[:self.cap + 1], len(b.text))
            for k, c in enumerate((b.content or [])[:MAX_BLOCKS], 1):
                out += self._block_lines(f, c, f"{n}.{k}")
            out += _more_blocks(len(b.content or ()))
        return out

    def _text_lines(self, text: str, total: int | None) -> list[Line]:
        cut = len(text) > self.cap
        lines: list[Line] = [(line, None) for line in visible(text[:self.cap]).expandtabs(4).split("\n")]
        if cut:
            more = f"{total - self.cap:,} more characters" if total else "more"
            lines.append((f"… {more} (press m to show more)", Style(color="#d7d75f", italic=True)))
        return lines

    def _linked(self, f: Figures | Links, m: Message, out: list[Line]) -> None:
        """A tool call's result, or a result's call, shown after the message itself (for the blocks shown)."""
        partners: dict[int, dict[str | None, list[Block]]] = {}  # message -> tool id -> its blocks, built once

        def partner(j: int, tool_id: str | None) -> list[Block]:
            if j not in partners:
                partners[j] = {}
                for c in f.session.messages[j].blocks:
                    partners[j].setdefault(c.tool_id, []).append(c)
            return partners[j].get(tool_id, [])

        for b in m.blocks[:MAX_BLOCKS]:
            if b.type == "tool_use" and b.tool_id in f.result_at:
                j = f.result_at[b.tool_id]
                size = f", {human(f.size(j))} tokens" if isinstance(f, Figures) else ""
                out += [("", None), (f"═══ result of {b.tool_name} (message #{j + self.first_number}{size}) ", RULE)]
                for r in partner(j, b.tool_id):
                    if r.type == "tool_result":
                        out += self._block_lines(f, r, "→")[1:]
            elif b.type == "tool_result" and b.tool_id in f.call_at:
                j = f.call_at[b.tool_id]
                for u in partner(j, b.tool_id):
                    if u.type == "tool_use":
                        out += [("", None), (f"═══ call (message #{j + self.first_number}): {u.tool_name} ", RULE)]
                        out += self._text_lines(_json(u.input, min(self.cap, 4000)), None)

    def _request_of(self, session: Session, m: Message) -> Request | None:
        """The request that produced `m`, through a map built once per session (Session.request_for scans)."""
        if self._requests[0] is not session:
            self._requests = (session, {r.id: r for r in session.requests})
        return self._requests[1].get(m.response_id) if m.response_id else None

    # -- drawing ----------------------------------------------------------------------------------------------------

    def _rewrap(self) -> None:
        width = max(10, self.scrollable_content_region.width or self.size.width or 80)
        if width == self._wrapped_width:
            return
        wrapped: list[Line] = []
        for text, style in self.lines:
            if style is RULE:
                wrapped.append((text.ljust(width, "─")[:width], style))
            elif len(text) <= width and (text.isascii() or cell_len(text) <= width):
                wrapped.append((text, style))
            elif text.isascii() or cell_len(text) == len(text):  # one cell per character: wrap at spaces
                wrapped.extend((piece, style) for piece in _wrap(text, width))
            else:
                wrapped.extend((piece, style) for piece in chop_cells(text, width))
        self._wrapped, self._wrapped_width = wrapped, width
        size = Size(width, len(wrapped))
        if size != self.virtual_size:
            # Not `self.virtual_size = size`: that reactive asks for a layout of the whole screen, on every cursor
            # move in the list. The vertical scrollbar is always there (overflow-y: scroll), so updating it and
            # repainting this widget is all a new message needs.
            self.set_reactive(Widget.virtual_size, size)
            self._scroll_update(size)
            self.refresh()

    def on_resize(self) -> None:
        self._rewrap()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._base = None

    def render_line(self, y: int) -> Strip:
        self._rewrap()
        width = self.scrollable_content_region.width or self.size.width
        row = round(self.scroll_offset.y) + y
        if self._base is None:
            self._base = self.rich_style
        base = self._base
        if not 0 <= row < len(self._wrapped):
            return Strip.blank(width, base)
        text, style = self._wrapped[row]
        return Strip([Segment(text, base + style if style else base)]).crop_extend(0, width, base)

    @property
    def plain(self) -> str:
        """Everything shown, as plain text (for tests and copying)."""
        return "\n".join(text for text, _ in self.lines)
