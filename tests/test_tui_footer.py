"""The moderator's footer keeps every key it shows inside 120 columns, at its most crowded:
an event's room (r, the standings) under consult rules, a bonus part read aloud (c i p, the
bonus thrown out, consult, abstain, part read, pause, join, help, quit)."""

from __future__ import annotations

import asyncio
import time

import pytest
from event_helpers import HUMANS, code_of, event_server, make_event, room_player
from live import clients
from test_tui import phase, shown, until
from textual.widgets._footer import FooterKey

from moderator_tui import make_tui
from moderator_tui.live import LiveScreen
from moderator_tui.setup import LobbyScreen

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def test_the_footer_fits_120_columns_in_a_consult_bonus_of_an_event(tmp_path):
    path = tmp_path / "template.db"
    defaults = {"answer_time": None, "wpm": 600, "format": "acf", "consult_model": "tfidf"}
    plan = make_event(f"sqlite:///{path}", teams=HUMANS, rounds=1, rooms=("1",),
                      fmt="round_robin", defaults=defaults)  # fmt: skip
    code = code_of(plan, "1")
    with event_server(f"sqlite:///{path}") as server:
        token = server.run(server.events.moderator_token(server.events.rooms[code]))
        ann = await asyncio.to_thread(room_player, server, code, "red", "Ann")
        with clients(ann):
            app = make_tui(server.http_url, room=code, moderator_token=token)
            async with app.run_test(size=(120, 40)) as pilot:
                await until(pilot, lambda: shown(app, LobbyScreen | LiveScreen), "the lobby")
                if shown(app, LobbyScreen):
                    await pilot.press("s")
                live = await until(pilot, lambda: shown(app, LiveScreen), "live")
                await pilot.press("n")
                await until(pilot, lambda: phase(app) == "reading", "reading")
                ann.send(type="buzz", client_time=time.time())
                await until(pilot, lambda: phase(app) == "buzzed", "Ann's buzz")
                await pilot.press("c")
                await until(pilot, lambda: phase(app) == "bonus", "the bonus")
                assert app.state.bonus.consult
                await pilot.pause(0.2)
                keys = {k.key: k.region for k in live.query(FooterKey)}
                # the keys of the part: rule it, consult, abstain, start its clock, throw the
                # bonus out, pause; and the help, which lists the keys left out
                assert {"c", "i", "p", "b", "k", "a", "d", "space", "question_mark",
                        "q"} <= set(keys), sorted(keys)  # fmt: skip
                assert all(r.width > 0 and r.right <= 120 for r in keys.values()), keys
                # a key left out still works: the pace changes
                assert "plus" not in keys
                wpm = app.state.reading.wpm
                await pilot.press("plus")
                await until(pilot, lambda: app.state.reading.wpm > wpm, "a faster pace")
