"""The join screen (``j``) shows the URL, the code and the QR code, not an empty box."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.app import App

import moderator_tui
from moderator_tui.dialogs import JoinScreen

pytestmark = pytest.mark.anyio


class _Host(App):
    CSS_PATH = Path(moderator_tui.__file__).parent / "moderator.tcss"

    def on_mount(self) -> None:
        self.push_screen(JoinScreen("http://192.168.1.5:8000/?code=ABCDE", "ABCDE"))


async def test_the_join_screen_shows_its_url_and_qr_code() -> None:
    app = _Host()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        shown = [w for w in app.screen.query("#join-box > *")]
        assert [type(w).__name__ for w in shown] == ["Static", "QRCode"]
        text, qr = (w.region for w in shown)
        assert text.width >= len("http://192.168.1.5:8000/?code=ABCDE") and text.height >= 1
        assert qr.width >= 21 and qr.height >= 10  # a QR code of at least 21 modules
