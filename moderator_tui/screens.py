"""What the match's screens (the lobby, the tossups, the end) share: a status line and the
control banner that follow the link, and when a screen may draw at all."""

from __future__ import annotations

from typing import Any

from textual.screen import Screen

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
