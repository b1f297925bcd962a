"""What the match's screens (the lobby, the tossups, the end) share: a status line and the
control banner that follow the link, and when a screen may draw at all."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Footer, Static

from moderator_tui.widgets import ControlBanner, StatusLine

LINK = ("connected", "link_detail", "watching", "controlled")


def showing(screen: Screen) -> bool:
    """Whether a screen is still the app's to draw. A screen is on the stack before its widgets
    are mounted: one replaced at once, or one the app quits from meanwhile, loses its widgets
    before its first drawing."""
    app = screen.app
    return app.is_running and screen.is_attached and screen in app.screen_stack


class MatchScreen(Screen):
    """A screen of one match. Its subclasses yield a ``StatusLine`` and a ``ControlBanner`` and
    draw the app's state only while ``showing``."""

    def follow_link(self) -> None:
        """Keep the status line and the banner in step with the app's link (from on_mount)."""
        for name in LINK:
            self.watch(self.app, name, self._link)

    @property
    def showing(self) -> bool:
        return showing(self)

    def _link(self, _: Any = None) -> None:
        if not self.showing:
            return
        status = self.query_one(StatusLine)
        status.connected = self.app.connected  # type: ignore[attr-defined]
        status.detail = self.app.link_detail  # type: ignore[attr-defined]
        banner = self.query_one(ControlBanner)
        banner.watching = self.app.watching  # type: ignore[attr-defined]
        banner.controlled = self.app.controlled  # type: ignore[attr-defined]
        self.refresh_bindings()


def connecting_text(url: str, what: str, detail: str) -> Text:
    """What the screen says until the server welcomes this moderator: where it connects, to
    what, and how the last try went (``detail``, the app's ``link_detail``)."""
    text = Text()
    text.append(f"Connecting to {url} ({what})…\n\n", style="bold")
    text.append(detail)
    text.append("\n\nThe match's screen comes up once the server answers. q quits.", style="dim")
    return text


class ConnectingScreen(Screen):
    """Up until the first state of the match arrives: the moderator sees what the app is
    doing, and why it has not got in yet, rather than a blank screen."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "app.leave", "Quit"),
        Binding("question_mark", "app.help", "Help", key_display="?"),
    ]

    def __init__(self, what: str) -> None:
        super().__init__()
        self.what = what

    def compose(self) -> ComposeResult:
        with Vertical(id="connecting-box"):
            yield Static(id="connecting")
        yield Footer()

    def on_mount(self) -> None:
        self.watch(self.app, "link_detail", self._show)

    def _show(self, detail: str) -> None:
        url = self.app.target.url  # type: ignore[attr-defined]
        self.query_one("#connecting", Static).update(connecting_text(url, self.what, detail))
