"""Hybrid teams from the moderator's terminal UI (QANTA 2026), with keys against a real server:
``y`` lists the AI players with their weight class, mode and K; ``s`` makes one semi before
the match, ``m`` mutes another for the rest of the match; the record holds both."""

from __future__ import annotations

import time

import pytest
from live import LiveServer
from test_hybrid import _config
from test_tui import SIZE, shown, until

from grace_arena.core.packet import SAMPLE_PACKET_PATH
from grace_arena.record.db import make_engine, upgrade
from grace_arena.record.store import MatchStore
from grace_arena.server.app import Settings
from moderator_tui import make_tui
from moderator_tui.hybrid import AiPlayersScreen
from moderator_tui.live import LiveScreen

pytestmark = [pytest.mark.anyio]


@pytest.fixture
def hybrid_match(db_url):
    upgrade(db_url)
    engine = make_engine(db_url)
    rm = MatchStore(engine).create(_config(), now=time.time(), join_code="HYBRD")
    settings = Settings(db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="s")
    with LiveServer(settings) as server:
        server.run(server.events.room_by_code("HYBRD"))
        yield server, rm.id, server.run(server.events.match_moderator_token(rm.id)), engine
    engine.dispose()


def _modes(app) -> dict[str, str]:
    return {a.id: a.mode for t in app.state.teams for a in t.ais}


async def test_the_moderator_sets_a_mode_and_mutes_an_ai_with_keys(hybrid_match):
    server, match_id, token, engine = hybrid_match
    app = make_tui(server.http_url, match_id=match_id, moderator_token=token)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.connected and app.state is not None, "connected")
        await pilot.press("s")
        live = await until(pilot, lambda: shown(app, LiveScreen), "live")
        assert live.check_action("ai_players", ()) is True
        await pilot.press("y")
        dialog = await until(pilot, lambda: shown(app, AiPlayersScreen), "the AI players")
        assert dialog.query_one("#ai-table").row_count == 3
        await pilot.press("s")  # the first: red's lightweight
        await until(pilot, lambda: _modes(app)["lw"] == "semi", "lw semi")
        await pilot.press("y")
        await until(pilot, lambda: shown(app, AiPlayersScreen), "the AI players")
        await pilot.press("down", "down", "m")  # blue's heavyweight
        await until(pilot, lambda: _modes(app)["hw"] == "muted", "hw muted")
    events = MatchStore(engine).events(match_id)
    assert [(e.type, e.team) for e in events if e.type.startswith("ai_")] == [
        ("ai_modes_set", "red"), ("ai_muted", "blue"),
    ]  # fmt: skip
