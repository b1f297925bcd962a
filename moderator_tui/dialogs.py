"""Modal screens: help (every key), yes/no confirmations, the join QR code, and the question
when another moderator controls the match."""

from __future__ import annotations

from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Footer, Static

from moderator_tui.widgets import QRCode, join_text


def keys_table(screen: Screen) -> Table:
    """Every key of ``screen`` (and of the app), with what it does and whether it works now."""
    table = Table(box=None, padding=(0, 2, 0, 0), show_header=True, header_style="bold")
    table.add_column("key", style="bold", no_wrap=True)
    table.add_column("does")
    table.add_column("now", no_wrap=True)
    seen: set[str] = set()
    watching = bool(getattr(screen.app, "watching", False))
    for binding in screen.BINDINGS:
        if isinstance(binding, tuple):
            continue
        if binding.action in seen and binding.action not in ("pause", "resume"):
            continue
        if binding.action in getattr(screen, "HELP_HIDDEN", ()):
            continue  # a key's second binding that only explains why it does nothing now
        seen.add(binding.action)
        key = binding.key_display or binding.key.split(",")[0].replace("question_mark", "?")
        does = binding.tooltip or binding.description
        action = binding.action.removeprefix("app.")
        enabled = screen.check_action(action, ()) if not binding.action.startswith("app.") else True
        if enabled:
            now = Text("yes", style="green")
        elif enabled is None and watching:  # the match allows it, but another moderator acts
            now = Text("no: watching", style="yellow")
        else:
            now = Text("not now", style="dim")
        table.add_row(
            key,
            f"{binding.description}" + (f" — {does}" if does != binding.description else ""),
            now,
        )
    for binding in screen.app.BINDINGS:  # the app's keys that work here now
        if isinstance(binding, tuple) or not binding.show:
            continue
        if screen.app.check_action(binding.action, ()):
            key = binding.key_display or binding.key
            table.add_row(key, f"{binding.description} — {binding.tooltip}", "yes")
    if not any(getattr(b, "key", "") == "ctrl+q" for b in screen.BINDINGS):
        table.add_row("ctrl+q", "Quit at once (the match goes on on the server)", "yes")
    return table


class HelpScreen(ModalScreen[None]):
    """``?``: every key of the screen underneath, and what is possible right now."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark,q,f1", "dismiss", "Close help", key_display="esc"),
    ]

    def __init__(self, under: Screen) -> None:
        super().__init__()
        self.under = under

    def compose(self) -> ComposeResult:
        with Vertical(id="help-box"):
            yield Static(Text("Keys", style="bold"), classes="section")
            with VerticalScroll():
                yield Static(keys_table(self.under), id="help-keys")
                yield from self.notes()
        yield Footer()

    def notes(self) -> ComposeResult:
        """What follows the keys; screens with more to explain override this."""
        yield Static(
            "Keys that do not work in the current phase are hidden from the footer "
            "(and marked 'not now' here). The server holds the match: if this screen "
            "is closed or the network drops, reconnecting shows the match as it is. "
            "Words count from 1 on screen, as they are read (word 1 is the first); the "
            "record's word_index counts from 0.",
            classes="hint",
        )
        if getattr(self.app, "watching", False):
            yield Static(
                "You are watching: another moderator controls this match (or none does now), "
                "so the keys that act on it are off ('no: watching'). T takes control.",
                classes="hint",
            )

    def action_dismiss(self) -> None:  # type: ignore[override]
        self.dismiss(None)


class InUseScreen(ModalScreen[str]):
    """Another moderator controls the match (the server refused this one's ``hello``): take
    over, watch, or quit. Dismissed with ``"take_over"`` or ``"watch"``."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "t",
            "choose('take_over')",
            "Take over",
            tooltip="Control the match; the other moderator then watches",
        ),
        Binding(
            "w",
            "choose('watch')",
            "Watch",
            tooltip="Follow the match without acting (T: take over later)",
        ),
        Binding("question_mark", "app.help", "Help", key_display="?"),
        Binding("q", "app.leave", "Quit", tooltip="Close this screen; the match goes on"),
    ]

    def __init__(self, where: str) -> None:
        super().__init__()
        self.where = where  # "match 3", "room ABCDE"

    def compose(self) -> ComposeResult:
        def key(k: str) -> tuple[str, str]:
            return (f" {k} ", "bold reverse")

        with Vertical(id="in-use-box"):
            yield Static(
                Text.assemble(
                    ("Another moderator controls this match", "bold"),
                    f" ({self.where}): one moderator controls a match at a time.\n\n",
                    key("t"),
                    " take over: you control the match, the other moderator then watches\n",
                    key("w"),
                    " watch: follow the match without acting (T takes control later)\n",
                    key("q"),
                    " quit: the match goes on on the server\n\n",
                    ("grace-arena moderate ... --take-over", "bold"),
                    " takes over at once.",
                ),
                id="in-use-text",
            )
        yield Footer()

    def action_choose(self, choice: str) -> None:
        self.dismiss(choice)


class ConfirmScreen(ModalScreen[bool]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-box"):
            yield Static(self.question, id="question")
            yield Static(
                Text.assemble(("y", "bold reverse"), " yes   ", ("n", "bold reverse"), " no"),
                classes="hint",
            )
        yield Footer()

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class JoinScreen(ModalScreen[None]):
    """The join URL, code and QR code, for latecomers."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,j,q", "close", "Close", key_display="esc")
    ]

    def __init__(self, url: str, code: str) -> None:
        super().__init__()
        self.url, self.code = url, code

    def compose(self) -> ComposeResult:
        with Vertical(id="join-box"):
            yield Static(join_text(self.url, self.code))
            yield QRCode(self.url)
        yield Footer()

    def action_close(self) -> None:
        self.dismiss(None)
