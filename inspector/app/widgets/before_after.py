"""A changed message's content before and after, side by side, as literal text.

Each block gets a dim heading (its type, tool and id) and its text as data: never markup, control characters made
visible, and each side capped at CAP characters so a multi-megabyte tool result cannot stall the screen.
"""

from __future__ import annotations

import json

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Static

from inspector.app.text import visible
from inspector.core.model import Message

CAP = 20_000


def message_text(message: Message | None, cap: int = CAP) -> Text:
    """`message` as literal text with a heading per block, at most `cap` characters of content."""
    out = Text()
    if message is None:
        out.append("(no message on this side)", style="dim italic")
        return out
    left = cap
    for b in message.blocks:
        head = b.type
        if b.tool_name:
            head += f" {b.tool_name}"
        if b.tool_id:
            head += f" {b.tool_id}"
        if b.is_error:
            head += " (error)"
        out.append(f"── {visible(head)}\n", style="dim bold")
        if b.type == "tool_use":
            body = json.dumps(b.input, ensure_ascii=False, indent=1, default=str)
        elif b.type in ("image", "document"):
            body = f"[{b.media or 'unknown type'}, {b.size:,} bytes of data, not kept]"
        else:
            body = b.all_text()
        if left <= 0:
            out.append(f"… {len(body):,} more characters\n", style="dim italic")
            continue
        out.append(visible(body[:left]))
        if len(body) > left:
            out.append(f"\n… {len(body) - left:,} more characters", style="dim italic")
        out.append("\n")
        left -= len(body)
    return out


class BeforeAfter(Horizontal):
    """Two scrolling panes: the message before the step and after it."""

    DEFAULT_CSS = """
    BeforeAfter { height: 1fr; }
    BeforeAfter > VerticalScroll { width: 1fr; border: round $panel-lighten-2; padding: 0 1; }
    BeforeAfter > #ba-after { border: round $success 60%; }
    """

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="ba-before"):
            yield Static(id="ba-before-text")
        with VerticalScroll(id="ba-after"):
            yield Static(id="ba-after-text")

    def show(self, before: Message | None, after: Message | None,
             tokens: tuple[int | None, int | None] = (None, None),
             basis: tuple[str, str] = ("estimated", "estimated")) -> None:
        """Show both sides; `tokens` are their sizes for the titles (the after side None while pending), `basis`
        how each was made (measured, derived or estimated)."""
        for side, n, how in zip(("before", "after"), tokens, basis):
            self.query_one(f"#ba-{side}").border_title = side + (f" · {n:,} tokens {how}" if n is not None else "")
        self.query_one("#ba-before-text", Static).update(message_text(before))
        self.query_one("#ba-after-text", Static).update(message_text(after))
        for pane in self.query(VerticalScroll):
            pane.scroll_home(animate=False)

    def clear(self, text: str = "") -> None:
        self.query_one("#ba-before").border_title = "before"
        self.query_one("#ba-after").border_title = "after"
        self.query_one("#ba-before-text", Static).update(Text(text, style="dim"))
        self.query_one("#ba-after-text", Static).update("")
