"""The scoring rules of an event's QBJ tournament file are those its games were counted by.

YellowFruit ("Open QBJ Tournament", ``FileParser.parseTournament``) reads one set of scoring
rules for the whole file and checks every game against it: an answer count whose value is not
one of its answer types refuses the whole file ("Failed to associate a PlayerAnswerCount object
with a valid AnswerType"), and without bonuses a game's tossup points must make its score
("Players' points don't add up to total score", a game it then leaves out of every standing).
The overtime tossups read whatever the score are ``minimum_overtime_question_count``: MODAQ's
"Import from QBJ" ends a tied game's overtime after them (``GameState.playableCycles``), so an
NAQT game whose first overtime tossup left the teams apart is rebuilt only with NAQT's 3.

The event: ACF (10 a tossup, −5 a neg, bonuses 3 × 10) set by the director; round 1 entered by
its final score with statistics (Red 120 − 5 + 65 = 180, Blue 60 − 10 + 30 = 80); round 2
played here by the default rules of a match (power 15): Blue's power. Ann and Bo play round 2
only: round 1's counts, entered for the teams, are no player's.
"""

from __future__ import annotations

import json

from backends import on_both_backends

from grace_arena.core import schedule as pairing
from grace_arena.core.commands import Buzz, EndMatch, Join, Reveal, Rule, StartTossup
from grace_arena.core.config import TeamSpec
from grace_arena.core.events import Ruling
from grace_arena.core.packet import SAMPLE_PACKET_PATH, load_packet
from grace_arena.core.specs import match_config
from grace_arena.io.exports import export
from grace_arena.record.db import make_engine, upgrade
from grace_arena.record.schedule import (
    RoundPlan,
    TeamEntry,
    create_event,
    enter_result,
    set_schedule,
)
from grace_arena.record.store import MatchStore


@on_both_backends
def test_the_tournament_file_has_the_event_s_rules_and_every_value_its_games_scored(
    db_url, tmp_path
) -> None:
    upgrade(db_url)
    engine = make_engine(db_url)
    try:
        packet = load_packet(SAMPLE_PACKET_PATH)
        MatchStore(engine).save_packet(packet, source=SAMPLE_PACKET_PATH)
        create_event(engine, "cup", teams=[TeamEntry("red", "Red"), TeamEntry("blue", "Blue")],
                     defaults={"format": "acf"})  # fmt: skip
        ids = (packet.tossups[0].id, packet.tossups[1].id)
        plan = set_schedule(
            engine,
            "cup",
            rooms=["1"],
            rounds=[RoundPlan(r, packet.packet.id, ids) for r in (1, 2)],
            games=[
                pairing.Game(1, "1", 0, ("red", "blue")),
                pairing.Game(2, "1", 0, ("blue", "red")),
            ],
        )
        first, second = sorted(plan.games, key=lambda g: g.round)
        enter_result(engine, "cup", first, points={"red": 180, "blue": 80}, tossups_heard=20,
                     counts={"red": {"tens": 12, "negs": 1, "bonus_points": 65},
                             "blue": {"tens": 6, "negs": 2, "bonus_points": 30}})  # fmt: skip
        teams = [TeamSpec(id=t, name=plan.team(t).name) for t in second.teams]
        live = MatchStore(engine).create(match_config(packet, teams, tossup_ids=ids),
                                         now=0.0, event="cup", game_id=second.id)  # fmt: skip
        live.handle(Join(team="blue", player="bo", name="Bo"), now=1.0)
        live.handle(Join(team="red", player="ann", name="Ann"), now=1.0)
        live.handle(StartTossup(), now=2.0)
        live.handle(Reveal(to=3), now=3.0)
        live.handle(Buzz(team="blue", player="bo"), now=4.0)
        live.handle(Rule(ruling=Ruling.CORRECT), now=5.0)
        live.handle(EndMatch(), now=6.0)
        assert live.match.scores == {"blue": 15, "red": 0}
        export(engine, "qbj", tmp_path / "qbj", events=["cup"])
    finally:
        engine.dispose()
    data = json.loads((tmp_path / "qbj" / "cup.qbj").read_text())
    (tournament,) = [o for o in data["objects"] if o["type"] == "Tournament"]
    rules = tournament["scoring_rules"]
    # the event's rules (ACF: bonuses), not those of the one match played here
    assert rules["name"] == "GRACE Arena ACF" and rules["maximum_bonus_score"] == 30
    assert rules["regulation_tossup_count"] == 20
    assert rules["minimum_overtime_question_count"] == 1  # ACF: sudden death
    values = [a["value"] for a in rules["answer_types"]]
    assert values == [15, 10, -5]  # the ACF values and the power scored in round 2
    matches = [o for o in data["objects"] if o["type"] == "Match"]
    assert len(matches) == 2
    names = {t["id"]: t["name"] for r in tournament["registrations"] for t in r["teams"]}
    scores = []
    for match in matches:
        score = {}
        for entry in match["match_teams"]:
            counts = [c for mp in entry["match_players"] for c in mp["answer_counts"]]
            assert all(c["answer_type"]["value"] in values for c in counts)
            # YellowFruit's score of a team: its answer counts' points plus its bonus points,
            # which must be the score written (a game entered by its final score has one)
            total = sum(c["number"] * c["answer_type"]["value"] for c in counts)
            total += entry.get("bonus_points", 0)
            assert entry.get("points", total) == total
            score[names[entry["team"]["$ref"]]] = total
        scores.append(score)
    assert scores == [{"Red": 180, "Blue": 80}, {"Blue": 15, "Red": 0}]
    # the entered game's counts (no players given) are on a player named after the team, not
    # on Ann or Bo, who played only round 2: YellowFruit credits a match player's answers
    player = {p["id"]: p["name"] for r in tournament["registrations"] for t in r["teams"]
              for p in t["players"]}  # fmt: skip
    played = [
        sorted(player[mp["player"]["$ref"]] for e in m["match_teams"] for mp in e["match_players"])
        for m in matches
    ]
    assert played == [["Blue", "Red"], ["Ann", "Bo"]]


@on_both_backends
def test_an_naqt_event_s_file_says_overtime_is_three_tossups(db_url, tmp_path) -> None:
    from test_stats import played_event

    _, engine = played_event(db_url)
    try:
        export(engine, "qbj", tmp_path / "qbj", events=["stats"])
    finally:
        engine.dispose()
    data = json.loads((tmp_path / "qbj" / "stats.qbj").read_text())
    (tournament,) = [o for o in data["objects"] if o["type"] == "Tournament"]
    rules = tournament["scoring_rules"]
    assert rules["name"] == "GRACE Arena NAQT"
    assert rules["minimum_overtime_question_count"] == 3
