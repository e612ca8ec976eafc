"""F1 help: every key that works on the screen underneath, grouped by the widget that owns it, with its binding id
(the name to use with `App.set_keymap`)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Static

FIGURES = ("Figures marked measured come from the API's usage; the rest are estimates (pick the estimator with e or "
           "in settings, s).  ctrl+p opens the command palette.")
ABOUT = ("Filter (/): words match message text; kind:user|assistant|tool|meta|summary and tool:NAME narrow it; "
         "enter applies, esc clears.  " + FIGURES)


KEY_WIDTH, WHERE_WIDTH, MIN_ACTION = 18, 16, 16  # the widest the key and where columns get; the least for action


class HelpScreen(ModalScreen[None]):
    CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > Vertical { width: 100%; max-width: 112; height: 90%; background: $panel; border: thick $primary;
                            padding: 0 1; }
    HelpScreen DataTable { height: 1fr; }
    HelpScreen Static { height: auto; max-height: 5; margin: 1 0 0 0; color: $text-muted; }
    """
    BINDINGS = [
        Binding("escape,f1,q", "dismiss", "Close", id="help.close"),
        Binding("home,g", "first", "First", show=False, priority=True, id="help.first"),  # the table's own:
        Binding("end,G", "last", "Last", show=False, priority=True, id="help.last"),  # its first and last column
    ]

    def __init__(self, under: Screen) -> None:
        super().__init__()
        self.under = under

    def compose(self) -> ComposeResult:
        with Vertical():
            yield DataTable(cursor_type="row", zebra_stripes=True)
            yield Static(getattr(self.under, "KEYS_ABOUT", FIGURES))

    def rows(self) -> list[tuple[str, str, str, str]]:
        """(keys, action, where, binding id) for every key that works on the screen underneath: the screen's, then
        its widgets' own (with ids), the app's, and last Textual's standard keys of the focused widget and its
        ancestors (an input's cursor keys); each binding once per kind of widget, each key once; Textual's system
        bindings (ctrl+c's reminder of how to quit) left out."""
        focused = self.under.focused
        path = set(focused.ancestors_with_self) if focused is not None else set()
        groups: dict[tuple[int, str, str], tuple[list[str], Binding]] = {}
        nodes = [self.under, *self.under.focus_chain, self.app]
        for node in dict.fromkeys(nodes):
            where = "anywhere" if node is self.app else "this screen" if node is self.under else type(node).__name__
            for key, binding in node._bindings:
                if binding.system or (binding.id is None and node not in path and node is not self.app):
                    continue  # a standard key of a widget not in use
                section = 3 if binding.id is None else 0 if node is self.under else 2 if node is self.app else 1
                keys = groups.setdefault((section, binding.id or binding.action, where), ([], binding))[0]
                if key not in keys:
                    keys.append(key)
        out = []
        for (_, _, where), (keys, binding) in sorted(groups.items(), key=lambda item: item[0][0]):
            shown = ", ".join(dict.fromkeys(self.app.get_key_display(Binding(k, "")) for k in keys))
            out.append((shown, binding.description or binding.action, where, binding.id or ""))
        return out

    def on_mount(self) -> None:
        self.query_one(Vertical).border_title = "Keys (esc closes)"
        rows = self.rows()
        box = min(112, self.app.size.width) - 4  # the border and padding
        widths = [min(KEY_WIDTH, max((len(r[0]) for r in rows), default=3)), 0,
                  min(WHERE_WIDTH, max((len(r[2]) for r in rows), default=5)), max((len(r[3]) for r in rows),
                                                                                   default=10)]
        widths[1] = max(MIN_ACTION, box - 2 - sum(widths) - 2 * len(widths))  # 2: the scrollbar; 2 per cell
        table = self.query_one(DataTable)
        for label, width in zip(("key", "action", "where", "binding id"), widths):
            table.add_column(label, width=width)
        for keys, action, where, bid in rows:
            table.add_row(Text(_clip(keys, widths[0]), style="bold"), Text(_clip(action, widths[1])),
                          Text(_clip(where, widths[2])), Text(bid, style="dim"))
        table.focus()

    def action_first(self) -> None:
        self.query_one(DataTable).action_scroll_top()

    def action_last(self) -> None:
        self.query_one(DataTable).action_scroll_bottom()


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"
