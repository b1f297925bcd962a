"""A timed half on a live server (NAQT's option, a 5-second half): the moderator's state and
the projector (headless Chromium) show the game clock; when it runs out the tossup in play is
read to the end and answered, then halftime; the record's replay has the clock as it was.
Nothing here times the clock: the assertions follow the order of events."""

from __future__ import annotations

import re

import pytest
from live import moderator, player, two_teams
from playwright.sync_api import expect

from grace_arena.core.match import Match
from grace_arena.core.packet import SAMPLE_PACKET_PATH, load_packet

IDS = [t.id for t in load_packet(SAMPLE_PACKET_PATH).tossups[:6]]
pytestmark = [
    pytest.mark.slow,
    pytest.mark.server(
        first_match=two_teams(
            format="naqt", half_time=5.0, tossup_ids=IDS, wpm=30, regulation_tossups=4
        )
    ),
]


def test_the_game_clock_shows_runs_out_and_the_tossup_in_play_is_finished(server, pages):
    room = server.room()
    display = pages({"width": 1280, "height": 720})
    display.goto(f"{server.http_url}/display?code={room.join_code}")
    mod = moderator(server)
    blue = player(server, "blue", "Bo")
    try:
        first = mod.state()
        assert first["game_clock"] == {"half": 1, "length": 5.0, "ends": None, "left": 5.0,
                                       "expired": False}  # fmt: skip
        mod.send(type="start_tossup")
        running = mod.state(lambda s: s["match"]["phase"] == "reading")["game_clock"]
        assert running["ends"] is not None and not running["expired"]
        expect(display.locator("#officiating")).to_have_text(re.compile(r"^Half 1 · 0:0[0-5]"))
        mod.send(type="pause")  # the reading stands still (and so does the clock)
        mod.state(lambda s: s["match"]["paused"])
        mod.send(type="resume")
        # the clock runs out while the tossup is read: the tossup goes on
        up = mod.state(lambda s: s["game_clock"] and s["game_clock"]["expired"])
        assert up["match"]["phase"] in ("reading", "awaiting") and up["match"]["stage"] == "playing"
        expect(display.locator("#officiating")).to_have_text(re.compile("Half 1 · time is up"))
        blue.send(type="buzz", client_time=0.0)
        mod.state(lambda s: s["match"]["phase"] == "buzzed")
        mod.send(type="rule", ruling="correct")
        bonus = mod.state(lambda s: s["match"]["phase"] == "bonus")
        assert bonus["bonus"]["team"] == "blue"  # a correct answer earns its bonus
        for part in (1, 2):
            mod.send(type="rule", ruling="incorrect")
            mod.state(lambda s, p=part: s["bonus"] and s["bonus"]["part"] == p)
        mod.send(type="rule", ruling="incorrect")
        half = mod.state(lambda s: s["match"]["phase"] == "answered")["match"]
        assert (half["stage"], half["stage_text"]) == (
            "halftime", "Halftime: time is up (after 1 tossups)")  # fmt: skip
        expect(display.locator("#officiating")).to_contain_text("Halftime: time is up")
        mod.send(type="start_tossup")  # the second half: a full clock again
        second = mod.state(lambda s: s["match"]["tossups_played"] == 2)["game_clock"]
        assert second["half"] == 2 and not second["expired"]
    finally:
        mod.close()
        blue.close()
    events = server.arena.store.events(room.rm.id)
    kinds = [e.type for e in events]
    assert kinds.count("half_time_expired") == 1
    assert kinds.index("half_time_expired") < kinds.index("buzz_accepted")
    assert Match.replay(events).state.half_clock == room.match.state.half_clock
