"""Lineups and substitutions on a real server, on both backends: five players of a team
join an ACF match (four play, one waits on the bench and cannot buzz), the moderator
substitutes at halftime over the websocket (refused in the middle of a half), the record
replays to the live lineups after a restart, and the QBJ (validated against its schema) and
the stats give each player the tossups heard in the lineup."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from backends import on_both_backends
from live import LiveServer, clients, moderator, player, two_teams

from grace_arena.core.match import Match
from grace_arena.core.packet import SAMPLE_PACKET_PATH, load_packet
from grace_arena.core.standings import TeamInfo
from grace_arena.core.stats import event_stats, match_play
from grace_arena.io.exports import qbj_match
from grace_arena.io.record_io import load_matches
from grace_arena.record.db import make_engine
from grace_arena.server.app import Settings

PACKET = load_packet(SAMPLE_PACKET_PATH)
IDS = [t.id for t in PACKET.tossups[:4]]
QBJ_SCHEMA = Path(__file__).parent / "fixtures" / "analysis" / "qbj_match.schema.json"
SETUP = two_teams(
    format="acf", regulation_tossups=4, halftime_after=2, tossup_ids=IDS, wpm=30, bonuses=False
)
pytestmark = pytest.mark.server(first_match=SETUP)


def win(mod, phone, team: str) -> dict:
    """A tossup ``phone`` answers correctly; the state after it."""
    mod.send(type="start_tossup")
    mod.state(lambda s: s["match"]["phase"] == "reading")
    mod.send(type="pause")
    mod.state(lambda s: s["match"]["paused"])
    mod.send(type="step")
    mod.state(lambda s: s["tossup"]["position"] >= 0)
    phone.send(type="buzz", client_time=0.0)
    mod.state(lambda s: s["floor"] is not None and s["floor"]["team"] == team)
    mod.send(type="rule", ruling="correct")
    return mod.state(lambda s: s["match"]["phase"] == "answered")


@on_both_backends
def test_a_substitution_at_halftime_is_in_the_record_the_qbj_and_the_stats(server):
    mod = moderator(server)
    reds = [player(server, "red", f"Red {i}") for i in range(1, 6)]
    blue = player(server, "blue", "Bo")
    match_id = server.room().rm.id
    ids = [p.joined["player"] for p in reds]
    with clients(mod, *reds, blue):
        state = mod.state(lambda s: sum(t["size"] for t in s["teams"]) == 6)
        red = next(t for t in state["teams"] if t["id"] == "red")
        assert red["lineup"] == ids[:4]  # the first four play; Red 5 waits
        win(mod, reds[0], "red")
        # Red 5 on the bench cannot buzz
        mod.send(type="start_tossup")
        mod.state(lambda s: s["match"]["phase"] == "reading")
        mod.send(type="pause")
        mod.state(lambda s: s["match"]["paused"])
        reds[4].send(type="buzz", client_time=0.0)
        assert "Red 5 is on the bench" in reds[4].wait("error")["message"]
        mod.send(type="step")
        mod.state(lambda s: s["tossup"]["position"] >= 0)
        blue.send(type="buzz", client_time=0.0)
        mod.state(lambda s: s["floor"] is not None)
        mod.send(type="rule", ruling="correct")
        mod.state(lambda s: s["match"]["phase"] == "answered")  # halftime: 2 of 4
        mod.send(type="substitute", team="red", player_in=ids[4], player_out=ids[0])
        state = mod.state(
            lambda s: ids[4] in next(t for t in s["teams"] if t["id"] == "red")["lineup"]
        )
        assert next(t for t in state["teams"] if t["id"] == "red")["lineup"] == [
            ids[4], *ids[1:4]
        ]  # fmt: skip
        win(mod, reds[4], "red")  # Red 5 plays now
        mod.send(type="substitute", team="red", player_in=ids[0], player_out=ids[1])
        assert "at halftime, before overtime or in a timeout" in mod.wait("error")["message"]
        win(mod, reds[1], "red")
        mod.send(type="end_match")
        mod.state(lambda s: s["match"]["phase"] == "ended")
    engine = make_engine(server.arena.settings.db_url)
    (info,) = load_matches(engine, [match_id])
    qbj = qbj_match(engine, info)
    jsonschema.validate(qbj, json.loads(QBJ_SCHEMA.read_text()))
    red_team = next(t for t in qbj["match_teams"] if t["team"]["name"] == "Red")
    lineups = [
        (lu["first_question"], [p["name"] for p in lu["players"]], lu["reason"])
        for lu in red_team["lineups"]
    ]
    assert lineups == [
        (1, ["Red 1", "Red 2", "Red 3", "Red 4"], "initial"),
        (3, ["Red 5", "Red 2", "Red 3", "Red 4"], "halftime"),
    ]
    heard = {p["player"]["name"]: p["tossups_heard"] for p in red_team["match_players"]}
    # by hand: four tossups; Red 1 heard the first half, Red 5 the second, the others all
    assert heard == {"Red 1": 2, "Red 2": 4, "Red 3": 4, "Red 4": 4, "Red 5": 2}
    # the stats follow the lineups too
    from grace_arena.record.store import MatchStore

    store = MatchStore(engine)
    play = match_play(store.events(match_id), match_id=match_id)
    teams = [TeamInfo("red", "Red", "human"), TeamInfo("blue", "Blue", "human")]
    stats = {(p.team, p.name): p.tossups_heard for p in event_stats(teams, [play]).players}
    assert stats[("red", "Red 1")] == 2 and stats[("red", "Red 5")] == 2
    assert stats[("red", "Red 2")] == 4 and stats[("blue", "Bo")] == 4
    engine.dispose()


@on_both_backends
def test_the_lineups_come_back_after_a_restart(db_url):
    settings = dict(packets=[SAMPLE_PACKET_PATH], secret="s3cret", first_match=SETUP)
    with LiveServer(Settings(db_url=db_url, **settings)) as server:
        mod = moderator(server)
        reds = [player(server, "red", f"Red {i}") for i in range(1, 6)]
        ids = [p.joined["player"] for p in reds]
        with clients(mod, *reds):
            mod.send(type="substitute", team="red", player_in=ids[4], player_out=ids[2])
            mod.state(lambda s: ids[4] in next(t for t in s["teams"] if t["id"] == "red")["lineup"])
            before = server.room().match.state
    with LiveServer(Settings(db_url=db_url, **settings)) as again:
        after = again.room().match.state
        assert after.lineups == before.lineups
        assert after.lineups["red"] == (ids[0], ids[1], ids[4], ids[3])
        replayed = Match.replay(again.room().rm.store.events(again.room().rm.id)).state
        assert replayed == after
