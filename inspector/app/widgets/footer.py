"""A footer that shows only the keys that fit whole: never "^o Sessi" cut at the edge.

Textual's Footer lays every shown key out in one row and lets the terminal's edge cut the last ones. This one, at
each layout, leaves out keys until the rest fit: first those the screen names as least useful (`FOOTER_DROP`, a
tuple of binding ids on the screen class, in order), then from the right, with Help and Quit kept to the last; a
key left out early comes back when the room the later ones left holds it.
Every key still works and is listed by F1 help.
"""

from __future__ import annotations

from textual import events
from textual.app import ComposeResult
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

KEPT_LAST = ("app.help", "app.quit")
PALETTE_EXTRA = 3  # the palette key's border and right padding


def key_width(key: FooterKey) -> int:
    """Cells a (non-compact) footer key takes: its key with a space each side, its description and a space."""
    return len(key.key_display) + 2 + (len(key.description) + 1 if key.description else 0)


class FittedFooter(Footer):
    def compose(self) -> ComposeResult:
        widgets = list(super().compose())
        width = self.size.width or self.app.size.width
        keys = [w for w in widgets if isinstance(w, FooterKey) and not w.has_class("-command-palette")]
        used = sum(key_width(w) + (PALETTE_EXTRA if w.has_class("-command-palette") else 0)
                   for w in widgets if isinstance(w, FooterKey))
        dropped: list[FooterKey] = []
        for key in self._drop_order(keys):
            if used <= width:
                break
            used -= key_width(key)
            dropped.append(key)
        for key in reversed(dropped):  # a key left out early may fit in the room the later ones left
            if used + key_width(key) <= width:
                used += key_width(key)
                dropped.remove(key)
        yield from (w for w in widgets if w not in dropped)

    def _drop_order(self, keys: list[FooterKey]) -> list[FooterKey]:
        """The keys in the order they go: the screen's least useful first, then from the right, Help and Quit
        last."""
        ids = {k: self._binding_id(k) for k in keys}
        first: tuple[str, ...] = getattr(self.screen, "FOOTER_DROP", ())
        rank = {name: n for n, name in enumerate(first)}

        def order(item: tuple[int, FooterKey]) -> tuple:
            n, key = item
            bid = ids[key]
            if bid in KEPT_LAST:
                return (2, KEPT_LAST.index(bid))
            if bid in rank:
                return (0, rank[bid])
            return (1, -n)

        return [key for _, key in sorted(enumerate(keys), key=order)]

    def _binding_id(self, key: FooterKey) -> str:
        found = self.screen.active_bindings.get(key.key)
        return (found.binding.id or "") if found is not None else ""

    def on_resize(self, event: events.Resize) -> None:
        self.call_after_refresh(self.recompose)
