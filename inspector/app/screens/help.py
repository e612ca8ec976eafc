"""F1 help: every key that works on the screen underneath, grouped by the widget that owns it, with its binding id
(the name to use with `App.set_keymap`)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Static

ABOUT = ("Filter (/): words match message text; kind:user|assistant|tool|meta|summary and tool:NAME narrow it; "
         "enter applies, esc clears.  Figures marked measured come from the API's usage; the rest are estimates "
         "(pick the estimator with e or in settings, s).  ctrl+p opens the command palette.")


class HelpScreen(ModalScreen[None]):
    CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > Vertical { width: 96; height: 85%; background: $panel; border: thick $primary; padding: 0 1; }
    HelpScreen DataTable { height: 1fr; }
    HelpScreen Static { height: auto; margin: 1 0; color: $text-muted; }
    """
    BINDINGS = [Binding("escape,f1,q", "dismiss", "Close", id="help.close")]

    def __init__(self, under: Screen) -> None:
        super().__init__()
        self.under = under

    def compose(self) -> ComposeResult:
        with Vertical():
            yield DataTable(cursor_type="row", zebra_stripes=True)
            yield Static(ABOUT)

    def on_mount(self) -> None:
        self.query_one(Vertical).border_title = "Keys (esc closes)"
        table = self.query_one(DataTable)
        table.add_columns("key", "action", "where", "binding id")
        groups: dict[tuple[str, str], tuple[list[str], Binding]] = {}
        nodes = [*self.under.focus_chain, self.under, self.app]
        for node in dict.fromkeys(nodes):
            where = type(node).__name__
            for key, binding in node._bindings:
                groups.setdefault((binding.id or binding.action, where), ([], binding))[0].append(key)
        for (_, where), (keys, binding) in groups.items():
            shown = ", ".join(self.app.get_key_display(Binding(k, "")) for k in keys)
            table.add_row(Text(shown, style="bold"), Text(binding.description or binding.action),
                          Text(where), Text(binding.id or "", style="dim"))
        table.focus()
