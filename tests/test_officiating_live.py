"""Officiating a match on a real server, its moderator a real websocket client, on both
backends of the record: a timeout, a bonus part's conferral clock held by a pause, a
thrown-out bonus and tossup replaced by the packet's extras, a tie at the end of regulation
sent to overtime and decided; every phone sees it, the record replays to the live match and
the exports (QBJ, SQBS, the stats) count the tossups as the screens do."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from backends import on_both_backends
from live import moderator, player, two_teams

from grace_arena.core.match import Match
from grace_arena.core.packet import SAMPLE_PACKET_PATH, load_packet
from grace_arena.core.stats import match_play
from grace_arena.io.exports import qbj_match
from grace_arena.io.record_io import load_matches
from grace_arena.record.db import make_engine

PACKET = load_packet(SAMPLE_PACKET_PATH)
IDS = [t.id for t in PACKET.tossups[:5]]
BONUSES = [b.id for b in PACKET.bonuses]
QBJ_SCHEMA = Path(__file__).parent / "fixtures" / "analysis" / "qbj_match.schema.json"

# ACF, 2 tossups of regulation: the other 3 tossups, and the bonuses past the second, are
# the packet's extras
pytestmark = pytest.mark.server(
    first_match=two_teams(format="acf", regulation_tossups=2, tossup_ids=IDS, wpm=30)
)


def _win(mod, phone, team: str) -> dict:
    """The moderator starts the next tossup, pauses, steps a word; ``phone`` buzzes and the
    moderator rules it correct: the state after."""
    mod.send(type="start_tossup")
    mod.state(lambda s: s["match"]["phase"] == "reading")
    mod.send(type="pause")
    mod.state(lambda s: s["match"]["paused"])
    mod.send(type="step")
    mod.state(lambda s: s["tossup"]["position"] >= 0)
    phone.send(type="buzz", client_time=0.0)
    mod.state(lambda s: s["floor"] is not None and s["floor"]["team"] == team)
    mod.send(type="rule", ruling="correct")
    return mod.state(lambda s: s["match"]["phase"] in ("bonus", "answered"))


def _parts(mod, rulings: str) -> dict:
    for i, r in enumerate(rulings):
        mod.send(type="rule", ruling="correct" if r == "c" else "incorrect", part=i + 1)
        state = mod.state(
            lambda s, i=i: s["match"]["phase"] == "answered" or s["bonus"]["part"] == i + 1
        )
    return state


@on_both_backends
def test_an_officiated_acf_match_over_websockets_is_in_the_record_and_the_exports(server):
    mod = moderator(server)
    red, blue = player(server, "red", "Ann"), player(server, "blue", "Bo")
    match_id = server.room().rm.id
    try:
        # a timeout: Red's one of the match, then none left; a second one is refused
        mod.send(type="timeout", team="red")
        state = mod.state(lambda s: s["timeout"] is not None)
        assert state["timeout"]["team"] == "red" and state["timeout"]["number"] == 1
        assert [t["timeouts_left"] for t in state["teams"]] == [0, 1]
        seen = blue.state(lambda s: s["timeout"] is not None)  # every phone sees it
        assert seen["timeout"]["ends"] == state["timeout"]["ends"]
        mod.send(type="timeout", team="red")
        error = mod.wait("error")
        assert "has called its 1 timeout of this match" in error["message"]

        # the first tossup is thrown out: the first extra (the packet's third) replaces it
        mod.send(type="start_tossup")
        state = mod.state(lambda s: s["match"]["phase"] == "reading")
        assert state["timeout"] is None and state["tossup"]["id"] == IDS[0]
        mod.send(type="throw_out")
        mod.state(lambda s: s["match"]["phase"] == "thrown_out")
        state = _win(mod, red, "red")  # 10
        assert state["tossup"]["id"] == IDS[2] and state["bonus"]["id"] == BONUSES[0]
        # the part is read: the conferral clock runs (5 s, ACF), a pause holds it
        mod.send(type="read_part")
        state = mod.state(lambda s: s["conferral"] is not None)
        assert 0 < state["conferral"] - state["server_time"] <= 5.0
        assert red.state(lambda s: s["conferral"] is not None)["conferral"] == state["conferral"]
        mod.send(type="pause")
        state = mod.state(lambda s: s["match"]["paused"])
        assert state["conferral"] is None and 0 < state["conferral_held"] <= 5.0
        mod.send(type="resume")
        mod.state(lambda s: not s["match"]["paused"] and s["conferral"] is not None)
        # the bonus is thrown out: the first extra bonus replaces it
        mod.send(type="throw_out_bonus", reason="a typo in part 2")
        state = mod.state(lambda s: s["bonus"] is not None and s["bonus"]["id"] == BONUSES[2])
        assert state["conferral"] is None
        _parts(mod, "cii")  # 20
        state = _win(mod, blue, "blue")
        state = _parts(mod, "cii")  # 20-20 after regulation
        assert state["match"]["stage"] == "tied"
        assert state["match"]["stage_text"] == (
            "Tied after regulation: overtime (sudden death, no bonuses)"
        )
        # overtime: its first tossup is thrown out, the next extra replaces it
        mod.send(type="start_tossup")
        mod.state(lambda s: s["match"]["phase"] == "reading")
        mod.send(type="throw_out")
        mod.state(lambda s: s["match"]["phase"] == "thrown_out")
        state = _win(mod, blue, "blue")  # 20-30, no bonus in overtime
        assert state["tossup"]["id"] == IDS[4] and state["bonus"] is None
        assert state["match"]["stage"] == "decided"
        assert state["match"]["tossups_thrown_out"] == 2
        mod.send(type="end_match")
        final = mod.state(lambda s: s["match"]["phase"] == "ended")
        assert final["match"]["result"]["text"] == "Blue won 30–20 in overtime"
    finally:
        for c in (mod, red, blue):
            c.close()

    events = server.arena.store.events(match_id)
    assert Match.replay(events).state == server.room(match_id).match.state
    # the stats and standings count what the screens said: 3 heard, 1 of them in overtime,
    # the thrown-out bonus not heard and its replacement heard
    result = match_play(events, match_id=match_id).result()
    assert (result.tossups_heard, result.overtime_tossups) == (3, 1)
    red_line, blue_line = result.teams["red"], result.teams["blue"]
    assert (red_line.points, blue_line.points) == (20, 30)
    assert (red_line.bonuses_heard, red_line.bonus_points) == (1, 10)

    engine = make_engine(server.arena.settings.db_url)
    (info,) = load_matches(engine, [match_id])
    qbj = qbj_match(engine, info)
    jsonschema.validate(qbj, json.loads(QBJ_SCHEMA.read_text()))
    assert (qbj["tossups_read"], qbj["overtime_tossups_read"]) == (3, 1)
    first, second, overtime = qbj["match_questions"]
    # tossup 1 thrown out, tossup 3 (an extra) read in its place
    assert first["tossup_question"]["question_number"] == 1
    assert first["replacement_tossup_question"]["question_number"] == 3
    # the bonus thrown out in cycle 1 (bonus 1), replaced by bonus 3: its parts read
    assert first["bonus"]["question"]["question_number"] == 1
    assert first["replacement_bonus"]["question"]["question_number"] == 3
    assert [p["controlled_points"] for p in first["replacement_bonus"]["parts"]] == [10, 0, 0]
    assert "replacement_tossup_question" not in second
    # overtime's tossup 4 thrown out, tossup 5 read in its place: the next one, a sequential
    # replacement as MODAQ writes one (both name the tossup read)
    assert overtime["tossup_question"]["question_number"] == 5
    assert overtime["replacement_tossup_question"]["question_number"] == 5
    assert overtime["buzzes"][0]["result"]["value"] == 10 and "bonus" not in overtime
    assert qbj["notes"] == (
        f"Tossup {IDS[0]} thrown out, replaced by {IDS[2]}.\n"
        f"Tossup {IDS[3]} thrown out, replaced by {IDS[4]}."
    )
    scores = {
        t["team"]["name"]: sum(
            c["number"] * c["answer_type"]["value"]
            for p in t["match_players"]
            for c in p["answer_counts"]
        )
        + t["bonus_points"]
        for t in qbj["match_teams"]
    }
    assert scores == {"Red": 20, "Blue": 30}
    assert all(p["tossups_heard"] == 3 for t in qbj["match_teams"] for p in t["match_players"])
