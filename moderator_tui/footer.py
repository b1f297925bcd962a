"""The moderator's footer, fitted to the terminal's width.

Textual's footer lays its keys out in one row and cuts the row where the terminal ends: a bonus
part under consult rules in an event's room offers some sixteen keys, 180 columns of them, and
a 120-column terminal showed "… r Sta". This footer goes compact when the keys that work now do
not fit, then leaves out the keys its screen names in ``FOOTER_SHED`` (first named, first left
out) until they do. A key left out still works, and the help (``?``) lists it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from itertools import groupby

from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Footer
from textual.widgets._footer import FooterKey, FooterLabel, KeyGroup

__all__ = ["FittingFooter", "footer_width"]

#: A footer entry: a group of keys (or None: one key) and the bindings of each action in it.
Entry = tuple[Binding.Group | None, list[list[tuple[Binding, bool, str]]]]


def _entries(bindings: Iterable[tuple[Binding, bool, str]]) -> list[Entry]:
    """The footer's entries, as Textual's footer groups them (an action once, by its first
    key; the actions of one group side by side as one entry)."""
    by_action: defaultdict[str, list[tuple[Binding, bool, str]]] = defaultdict(list)
    for binding, enabled, tooltip in bindings:
        by_action[binding.action].append((binding, enabled, tooltip))
    return [
        (group, list(actions))
        for group, actions in groupby(by_action.values(), lambda a: a[0][0].group)
    ]


def footer_width(entries: list[Entry], key_display: dict[str, str], *, compact: bool) -> int:
    """Columns the entries take, as Textual's footer styles lay them out: a key is its key,
    its description and the spaces around them (two compact, three not); a group its keys
    with a space between and either side (the one before it shared with a compact key's),
    then its label and a space."""
    pad = 2 if compact else 3
    width = 0
    for group, actions in entries:
        if group is not None and len(actions) > 1:
            width += sum(len(key_display[a[0][0].key]) for a in actions) + len(actions)
            width += (0 if compact else 1) + len(group.description) + 1
        else:
            width += sum(len(key_display[a[0][0].key]) + len(a[0][0].description) + pad
                         for a in actions)  # fmt: skip
    return width


class FittingFooter(Footer):
    """A footer that fits its width (see the module docstring); compact below ``narrow``
    columns (less space between the keys) whatever they are."""

    def __init__(self, *, narrow: int = 100) -> None:
        super().__init__()
        self.narrow = narrow

    def _shown(self) -> list[tuple[Binding, bool, str]]:
        return [
            (binding, enabled, tooltip)
            for (_, binding, enabled, tooltip) in self.screen.active_bindings.values()
            if binding.show
        ]

    def fitted(self) -> tuple[list[Entry], bool]:
        """The entries shown, and whether compact, at the footer's width now."""
        shown = self._shown()
        display = {b.key: self.app.get_key_display(b) for b, _, _ in shown}
        width = self.size.width or self.app.size.width
        compact = width < self.narrow
        entries = _entries(shown)
        if footer_width(entries, display, compact=compact) > width:
            compact = True
        shed: tuple[str, ...] = getattr(self.screen, "FOOTER_SHED", ())
        left_out: set[str] = set()
        groups = {b.action: b.group for b, _, _ in shown}
        for action in shed:
            if footer_width(entries, display, compact=compact) <= width:
                break
            group = groups.get(action)
            # (a group's keys go together: "- Slower" alone would be a riddle)
            left_out |= {a for a, g in groups.items() if a == action or (g and g == group)}
            entries = _entries(b for b in shown if b[0].action not in left_out)
        return entries, compact

    def compose(self) -> ComposeResult:
        if not self._bindings_ready:
            return
        entries, compact = self.fitted()
        if compact != self.compact:
            self.set_reactive(Footer.compact, compact)
            self.set_class(compact, "-compact")
        self.styles.grid_size_columns = sum(len(actions) for _, actions in entries)
        yield from self._keys(entries)

    def _keys(self, entries: list[Entry]) -> Iterator[FooterKey | FooterLabel | KeyGroup]:
        # (as Textual's own footer composes them)
        for group, actions in entries:
            if group is not None and len(actions) > 1:
                with KeyGroup(classes="-compact" if group.compact else ""):
                    for action in actions:
                        binding, enabled, tooltip = action[0]
                        yield FooterKey(
                            binding.key, self.app.get_key_display(binding), "", binding.action,
                            disabled=not enabled, tooltip=tooltip or binding.description,
                            classes="-grouped",
                        ).data_bind(compact=Footer.compact)  # fmt: skip
                yield FooterLabel(group.description)
                continue
            for action in actions:
                binding, enabled, tooltip = action[0]
                yield FooterKey(
                    binding.key, self.app.get_key_display(binding), binding.description,
                    binding.action, disabled=not enabled, tooltip=tooltip,
                ).data_bind(compact=Footer.compact)  # fmt: skip

    def on_resize(self) -> None:
        # a wider or narrower terminal fits more or fewer keys
        if self._bindings_ready:
            self.call_after_refresh(self.recompose)
