"""The structural diff of a compaction: one row per message (kept / changed / removed / added), with its tokens
before and after and the delta, drawn with the Line API so a plan over 100,000 messages shows at once.

Rows are the core's `Row`s (a plan's or a diff's). Runs of kept rows fold into one line unless `show_kept`; the
display list holds a row index (>= 0) or a folded run (-1 - run number), built in one pass. Scrolling, the cursor
and the line cache are CursorLines'. A plan's rows come as the core's `StepRows` (in the figures of the context
bars): a row is built only when it is drawn, and the display list is folded from the changed rows' positions alone
(100,000 rows are not built to show 20 lines). After a re-plan the cursor stays on its message when that message
has the same fate.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.message import Message as TMessage
from textual.strip import Strip

from inspector.app.text import human, one_line
from inspector.app.widgets.cursor_lines import CursorLines
from inspector.app.widgets.message_list import KIND_LABEL, preview
from inspector.core.compaction.plan import Row
from inspector.core.figures import StepRows

# Plan fates and diff statuses, grouped by what happened to the message.
STATUS = {"kept": "kept", "changed": "changed", "snipped": "changed", "cleared": "changed", "removed": "removed",
          "summarized": "removed", "added": "added"}
MARK = {"kept": " ", "changed": "~", "removed": "-", "added": "+"}
STYLE = {"kept": Style(dim=True), "changed": Style(color="yellow"), "removed": Style(color="red"),
         "added": Style(color="green", bold=True)}
# The columns a row shows besides fate, before, after and delta, widest first: the first that leaves the content
# its cells is used (CursorLines). The new index goes first (the old one names the message; an added one shows its new
# index there), then the kind (the content says what it is).
LAYOUTS = (("old", "new", "kind"), ("old", "kind"), ("old",))
WIDTHS = {"old": 7, "new": 7, "kind": 12}
FIXED = 2 + 11 + 8 + 8 + 10  # the mark and fate, before, after, delta


class DiffView(CursorLines):
    """Diff rows with a cursor; posts `Highlighted` with the row under it (None on a folded run)."""

    DEFAULT_CSS = """
    DiffView { background: $surface; scrollbar-gutter: stable; }
    DiffView > .diff-view--cursor { background: $accent 40%; }
    DiffView:focus > .diff-view--cursor { background: $accent; color: $text; }
    DiffView > .diff-view--dim { color: $text-muted; }
    DiffView > .diff-view--survives { color: $success; text-style: bold; }
    """
    LAYOUTS, WIDTHS = LAYOUTS, WIDTHS
    COMPONENT_CLASSES = {"diff-view--cursor", "diff-view--dim", "diff-view--survives"}
    BINDINGS = [
        Binding("up,k", "cursor_up", "Up", show=False, id="diff.up"),
        Binding("down,j", "cursor_down", "Down", show=False, id="diff.down"),
        Binding("pageup", "page_up", "Page up", show=False, id="diff.page_up"),
        Binding("pagedown", "page_down", "Page down", show=False, id="diff.page_down"),
        Binding("home,g", "first", "First", show=False, id="diff.first"),
        Binding("end,G", "last", "Last", show=False, id="diff.last"),
        Binding("n", "next_change", "Next change", show=False, id="diff.next_change"),
        Binding("N", "previous_change", "Previous change", show=False, id="diff.previous_change"),
        Binding("K", "toggle_kept", "Kept rows", id="diff.toggle_kept"),
    ]

    class Highlighted(TMessage):
        def __init__(self, row: Row | None) -> None:
            super().__init__()
            self.row = row

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: Sequence[Row] = []
        self.runs: list[tuple[int, int]] = []  # folded kept runs: [start, end) in rows
        self.lines: list[int] = []
        self.show_kept = False
        self.survives: set[int] = set()  # old message indices whose content Claude Code re-injects

    @property
    def line_count(self) -> int:
        return len(self.lines)

    # -- data -------------------------------------------------------------------------------------------------------

    def show(self, rows: Sequence[Row], survives: set[int] | None = None) -> None:
        """Show new rows, keeping the cursor on the row it was on when it is among them, else on the first change."""
        old = self.current
        self.rows = rows
        self.survives = survives or set()
        self._rebuild(old)

    def _rebuild(self, keep: Row | None = None) -> None:
        lines: list[int] = []
        runs: list[tuple[int, int]] = []
        rows, show_kept = self.rows, self.show_kept
        i, n = 0, len(rows)
        if show_kept:
            lines, i = list(range(n)), n
        elif isinstance(rows, StepRows):  # fold the gaps between changes without building the kept rows
            for change in [*rows.changes, n]:
                if change - i == 1:
                    lines.append(i)
                elif change - i > 1:
                    lines.append(-1 - len(runs))
                    runs.append((i, change))
                if change < n:
                    lines.append(change)
                i = change + 1
        while i < n:
            if rows[i].fate != "kept":
                lines.append(i)
                i += 1
                continue
            j = i
            while j < n and rows[j].fate == "kept":
                j += 1
            if j - i == 1:
                lines.append(i)
            else:
                lines.append(-1 - len(runs))
                runs.append((i, j))
            i = j
        self.lines, self.runs = lines, runs
        self.reset()
        target = self._line_of(keep) if keep is not None else None
        if target is None:  # a new diff: start on its first change
            target = next((k for k, r in enumerate(lines) if r >= 0 and rows[r].fate != "kept"), 0)
        self._move(target, force=True)

    def _line_of(self, keep: Row) -> int | None:
        """The display line of the row for the same message with the same fate as `keep` (a row of the rows shown
        before: after a re-plan the cursor stays on its message), None when it is not shown on a line of its own."""
        rows, lines = self.rows, self.lines

        def same(row: Row) -> bool:
            return row is keep or (row.fate, row.old, row.new) == (keep.fate, keep.old, keep.new)

        if not isinstance(rows, StepRows):
            return next((k for k, r in enumerate(lines) if r >= 0 and same(rows[r])), None)
        k = rows.position(keep)  # found without building the rows before it
        if k is None or not same(rows[k]):
            return None
        try:
            return lines.index(k)
        except ValueError:  # inside a folded run
            return None

    @property
    def current(self) -> Row | None:
        if 0 <= self.cursor < len(self.lines) and self.lines[self.cursor] >= 0:
            return self.rows[self.lines[self.cursor]]
        return None

    # -- cursor -----------------------------------------------------------------------------------------------------

    def watch_cursor(self, line: int) -> None:
        self.post_message(self.Highlighted(self.current))

    def _is_change(self, line: int) -> bool:
        r = self.lines[line]
        return r >= 0 and self.rows[r].fate != "kept"

    def action_next_change(self) -> None:
        for k in range(self.cursor + 1, len(self.lines)):
            if self._is_change(k):
                self._move(k)
                return

    def action_previous_change(self) -> None:
        for k in range(self.cursor - 1, -1, -1):
            if self._is_change(k):
                self._move(k)
                return

    def action_toggle_kept(self) -> None:
        self.show_kept = not self.show_kept
        self._rebuild(self.current)

    # -- drawing ----------------------------------------------------------------------------------------------------

    @staticmethod
    def header(columns: tuple[str, ...] = LAYOUTS[0]) -> str:
        """Column titles aligned with the rows drawn with `columns`."""
        index = f"{'old':>6} {'new':>6} " if "new" in columns else f"{'#':>6} "
        kind = f"{'kind':<11} " if "kind" in columns else ""
        return f"  {'fate':<10} {index}{kind}{'before':>7} {'after':>7} {'delta':>8}  content"

    def fixed_cells(self) -> int:
        return FIXED

    def line_text(self, line: int, width: int = 200) -> str:
        """The plain text of display line `line` (tests, snapshots of state)."""
        return "".join(s.text for s in self.render_row(line, width, False))

    def render_row(self, line: int, width: int, is_cursor: bool) -> Strip:
        r = self.lines[line]
        base = self.rich_style
        dim = base + self.get_component_rich_style("diff-view--dim")
        if r < 0:
            a, b = self.runs[-1 - r]
            rows = self.rows
            tokens = rows.tokens(a, b) if isinstance(rows, StepRows) else sum(rows[k].before for k in range(a, b))
            first = self.rows[a].old if self.rows[a].old is not None else self.rows[a].new
            last = self.rows[b - 1].old if self.rows[b - 1].old is not None else self.rows[b - 1].new
            count = f"{b - a:,} messages"
            index = f"{first:>6} {last:>6} " if "new" in self.columns else f"{first:>6} "
            kind = f"{count:<11} " if "kind" in self.columns else ""
            what = "unchanged (K shows them)" if kind else f"{count} from {first} to {last}, unchanged (K shows them)"
            segs = [Segment(f"  {'kept':<10} {index}{kind}{human(tokens):>7} {human(tokens):>7} {'0':>8}  {what}",
                            dim)]
        else:
            row = self.rows[r]
            status = STATUS.get(row.fate, "changed")
            style = base + STYLE[status]
            after = "pending" if row.after is None else human(row.after)
            delta = "" if row.after is None else (f"{row.delta:+,}" if row.delta else "0")
            old = "" if row.old is None else str(row.old)
            new = "" if row.new is None else str(row.new)
            kind = KIND_LABEL.get(row.kind, row.kind)
            index = f"{old:>6} {new:>6} " if "new" in self.columns else f"{old or new:>6} "
            segs = [Segment(f"{MARK[status]} {row.fate:<10} ", style), Segment(index, dim)]
            if "kind" in self.columns:
                segs.append(Segment(f"{kind:<11} ", base))
            segs += [Segment(f"{human(row.before):>7} {after:>7} ", base),
                    Segment(f"{delta:>8}  ", style if row.delta else dim)]
            if row.old is not None and row.old in self.survives:
                segs.append(Segment("↻ re-injected ", base + self.get_component_rich_style("diff-view--survives")))
            content = preview(row.message, width) if row.message is not None else ""
            if row.note:
                content = f"[{row.note}] {content}" if content else row.note
            segs.append(Segment(one_line(content, width), base if status != "kept" else dim))
        if is_cursor:
            cursor = self.get_component_rich_style("diff-view--cursor")
            segs = [Segment(s.text, (s.style or base) + cursor) for s in segs]
            return Strip(segs).crop_extend(0, width, base + cursor)
        return Strip(segs).crop_extend(0, width, base)
