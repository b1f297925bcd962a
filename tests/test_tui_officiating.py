"""Officiating a match from the moderator's keys (``App.run_test`` + ``Pilot``) against a real
server: a timeout (1, 2), a bonus part's conferral clock (d), a tie at the end of regulation
proposed for overtime, a thrown-out overtime tossup replaced by the packet's next extra, and
the end screen's count; the assertions are on the screens and the server's record."""

from __future__ import annotations

import asyncio
import time

import pytest
from live import LiveServer, player, two_teams
from test_tui import SIZE, phase, shown, text_of, until

from grace_arena.core.events import BonusPartRead, TimeoutCalled, TossupStarted
from grace_arena.core.match import Match
from grace_arena.core.packet import SAMPLE_PACKET_PATH, load_packet
from grace_arena.server.app import Settings
from moderator_tui import make_tui
from moderator_tui.dialogs import ConfirmScreen
from moderator_tui.end import EndScreen
from moderator_tui.live import LiveScreen
from moderator_tui.setup import LobbyScreen
from moderator_tui.widgets import BuzzBanner, StatusLine

pytestmark = [pytest.mark.anyio, pytest.mark.server(first_match=None, secret="tui-test")]


async def test_timeout_conferral_overtime_and_a_replacement_with_keys(db_url):
    ids = [t.id for t in load_packet(SAMPLE_PACKET_PATH).tossups[:5]]
    # ACF with 2 tossups of regulation: the packet's other 3 are its extras
    setup = two_teams(format="acf", regulation_tossups=2, tossup_ids=ids)
    settings = Settings(db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="s", first_match=setup)
    with LiveServer(settings) as server:
        match_id = server.room().rm.id
        ann = await asyncio.to_thread(player, server, "red", "Ann", match_id)
        bob = await asyncio.to_thread(player, server, "blue", "Bob", match_id)
        app = make_tui(server.http_url, token=server.events.tokens.server(), match_id=match_id)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: shown(app, LobbyScreen), "the lobby")
            await pilot.press("s")
            live = await until(pilot, lambda: shown(app, LiveScreen), "live")
            banner = live.query_one(BuzzBanner)
            assert "timeout: 1 Red (1 left) · 2 Blue (1 left)" in text_of(banner)

            await pilot.press("1")  # Red calls its one timeout
            await until(pilot, lambda: app.state.timeout is not None, "the timeout")
            assert app.state.teams[0].timeouts_left == 0
            await until(pilot, lambda: "TIMEOUT: Red" in text_of(banner), "the timeout shown")
            assert "1 Red" not in text_of(banner) and "2 Blue (1 left)" in text_of(banner)

            async def win(client, team_index: int) -> None:
                await pilot.press("n")
                await until(pilot, lambda: phase(app) == "reading", "reading")
                await pilot.press("space")
                await until(pilot, lambda: app.state.match.paused, "paused")
                await pilot.press("w")
                await until(pilot, lambda: app.state.tossup.position >= 0, "a word")
                client.send(type="buzz", client_time=time.time())
                await until(pilot, lambda: phase(app) == "buzzed", "the buzz")
                await pilot.press("c")
                await until(pilot, lambda: phase(app) in ("bonus", "answered"), "correct")

            await win(ann, 0)
            assert app.state.timeout is None  # a tossup started: the timeout is over
            assert "tossup 1/2" in text_of(live.query_one(StatusLine))
            await pilot.press("d")  # part 1 read: the team confers
            await until(pilot, lambda: app.state.conferral is not None, "the conferral clock")
            assert "confer" in text_of(banner)
            await pilot.press("c")
            await until(pilot, lambda: app.state.bonus.part == 1, "part 2")
            assert app.state.conferral is None  # ruled: the clock stopped
            await pilot.press("i")
            await until(pilot, lambda: app.state.bonus.part == 2, "part 3")
            await pilot.press("i")
            await until(pilot, lambda: phase(app) == "answered", "the bonus over")

            await win(bob, 1)
            for key in ("c", "i", "i"):
                before = app.state.bonus.points.get("blue", 0), app.state.bonus.part
                await pilot.press(key)
                await until(
                    pilot,
                    lambda b=before: (
                        phase(app) == "answered"
                        or (app.state.bonus.points.get("blue", 0), app.state.bonus.part) != b
                    ),
                    "a part ruled",
                )
            await until(pilot, lambda: phase(app) == "answered", "regulation over")
            assert [t.score for t in app.state.teams] == [20, 20]
            assert app.state.match.stage == "tied"
            hint = text_of(banner)
            assert "Tied after regulation: overtime (sudden death, no bonuses)" in hint

            # overtime's first tossup is thrown out and replaced by the next extra
            await pilot.press("n")
            await until(pilot, lambda: phase(app) == "reading", "overtime")
            await pilot.press("t")
            assert isinstance(app.screen, ConfirmScreen)
            await pilot.press("y")
            await until(pilot, lambda: phase(app) == "thrown_out", "the throw-out")
            await win(ann, 0)
            assert app.state.bonus is None and app.state.match.stage == "decided"
            assert "overtime tossup 1" in text_of(live.query_one(StatusLine))
            assert "regulation is over: E ends the match" in text_of(banner)
            await pilot.press("E", "y")
            end = await until(pilot, lambda: shown(app, EndScreen), "the end")
            await pilot.pause()
            title = text_of(end.query_one("#end-title"))
            assert "2 of 2 tossups heard, 1 in overtime (1 thrown out)" in title
        for c in (ann, bob):
            c.close()

        events = server.arena.store.events(match_id)
        assert Match.replay(events).state == server.room(match_id).match.state
        (timeout,) = [e for e in events if isinstance(e, TimeoutCalled)]
        assert (timeout.team, timeout.number) == ("red", 1)
        assert [e.part for e in events if isinstance(e, BonusPartRead)] == [0]
        started = [(e.tossup_id, e.replaces) for e in events if isinstance(e, TossupStarted)]
        assert started == [(ids[0], None), (ids[1], None), (ids[2], None), (ids[3], ids[2])]
