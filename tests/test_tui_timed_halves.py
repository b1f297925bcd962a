"""The moderator's terminal shows a timed half's game clock at the top (``App.run_test`` +
``Pilot`` against a real server): standing still before the first tossup, counting down once
it starts (where it stops and runs out: test_timed_halves, test_browser_timed_halves)."""

from __future__ import annotations

import re

import pytest
from live import LiveServer, two_teams
from test_tui import SIZE, phase, shown, text_of, until

from grace_arena.core.packet import SAMPLE_PACKET_PATH
from grace_arena.server.app import Settings
from moderator_tui import make_tui
from moderator_tui.live import LiveScreen
from moderator_tui.setup import LobbyScreen
from moderator_tui.widgets import StatusLine

pytestmark = [pytest.mark.anyio, pytest.mark.server(first_match=None, secret="tui-test")]


async def test_the_status_line_shows_the_game_clock(db_url):
    setup = two_teams(format="naqt", half_time=540.0)
    settings = Settings(db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="s", first_match=setup)
    with LiveServer(settings) as server:
        match_id = server.room().rm.id
        app = make_tui(server.http_url, token=server.events.tokens.server(), match_id=match_id)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: shown(app, LobbyScreen), "the lobby")
            await pilot.press("s")
            live = await until(pilot, lambda: shown(app, LiveScreen), "live")
            status = live.query_one(StatusLine)
            await until(pilot, lambda: "Half 1 9:00 stopped" in text_of(status), "a still clock")
            await pilot.press("n")
            await until(pilot, lambda: phase(app) == "reading", "reading")
            await until(pilot, lambda: app.state.game_clock.ends is not None, "a running clock")
            assert re.search(r"Half 1 [89]:\d\d(?! stopped)", text_of(status)), text_of(status)
