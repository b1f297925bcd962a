"""The QBJ tournament file of a 2-round event with bonuses as YellowFruit opens it.

YellowFruit (``ANadig/YellowFruit``, ``src/renderer/DataModel/FileParsing.ts``,
``FileParser.parseTournament``) reads a ``.qbj`` this way, after turning the snake_case keys
into camelCase (``CaseConversion.ts``); each point below is a check of this test:

* ``scoring_rules.answer_types``: integers within ±1000, at least one positive (else it
  refuses the file); ``teams_per_match`` 2; bonuses are on when ``maximum_bonus_score`` is
  given (1..1000), with ``minimum_/maximum_parts_per_bonus`` (min ≤ max) and, if given,
  ``points_per_bonus_part`` × ``maximum_parts_per_bonus`` = ``maximum_bonus_score``;
  ``maximum_players_per_team`` ≥ 1;
* registrations, teams and players: every name non-empty, every team with a player, ids on
  teams and players (a match's teams and players are found by id or ``$ref`` only);
* phases with a name and rounds; a round whose name does not read as a number keeps none of
  its matches; a round's first packet's ``name``;
* a match: ``tossups_read``, ``overtime_tossups_read``, exactly two ``match_teams``, each a
  reference to a registered team, with ``bonus_points`` and ``bonus_bounceback_points``
  (integers) and ``match_players``: a registered player of that team, ``tossups_heard``, and
  ``answer_counts`` of ``{number, answer_type | answer: {value}}``, the value one of the
  answer types (or 0, which it skips); a team's total is its answer counts' points plus its
  bonus and bounceback points when ``points`` is absent (``calculateTotalPoints``). It does
  not read ``match_questions`` (``Tournament.useQuestionLevelData`` is false).

The event: 4 teams in one room, so that each round has two matches in that room (their
``serial`` must differ).
"""

from __future__ import annotations

import json

from backends import on_both_backends
from test_stats import ROUND_1, ROUND_2, played_event, plays_of
from typer.testing import CliRunner

from grace_arena.cli import app
from grace_arena.core import schedule as pairing
from grace_arena.record.schedule import TeamEntry

TEAMS = [TeamEntry(t, t.title()) for t in ("red", "blue", "green", "gold")]
GAMES = [
    pairing.Game(1, "1", 0, ("red", "blue")),
    pairing.Game(1, "1", 1, ("green", "gold")),
    pairing.Game(2, "1", 0, ("red", "green")),
    pairing.Game(2, "1", 1, ("blue", "gold")),
]


def renamed(script, names: dict[str, str]):
    return [([(names.get(p, p), w, r) for p, w, r in buzzes], parts) for buzzes, parts in script]


SCRIPTS = {
    ("red", "blue"): (["Ann", "Ada", "Bo"], ROUND_1),
    ("green", "gold"): (
        ["Gil", "Guy"],
        renamed(ROUND_1, {"Ann": "Gil", "Ada": "Gil", "Bo": "Guy"}),
    ),
    ("red", "green"): (["Ann", "Gil"], ROUND_2),
    ("blue", "gold"): (["Bo", "Guy"], renamed(ROUND_2, {"Ann": "Bo", "Gil": "Guy"})),
}


def _int(value, low=-1000, high=1000) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


@on_both_backends
def test_the_tournament_file_has_what_yellowfruits_importer_reads(db_url, tmp_path) -> None:
    plan, engine = played_event(db_url, name="yf", teams=TEAMS, games=GAMES, scripts=SCRIPTS)
    try:
        scores = {p.match_id: {t: line.points for t, line in p.result().teams.items()}
                  for p in plays_of(engine, plan)}  # fmt: skip
    finally:
        engine.dispose()
    out = tmp_path / "qbj"
    result = CliRunner().invoke(
        app, ["export", "--format", "qbj", "--event", "yf", "--out", str(out), "--db", db_url]
    )
    assert result.exit_code == 0, result.output
    data = json.loads((out / "yf.qbj").read_text())
    assert isinstance(data["version"], str) and isinstance(data["objects"], list)
    by_id: dict[str, dict] = {}  # every object with an id, at any depth (QBJ's $ref targets)

    def index(value) -> None:
        if isinstance(value, dict):
            if "id" in value and "$ref" not in value:
                assert value["id"] not in by_id, f"id {value['id']} defined twice"
                by_id[value["id"]] = value
            for item in value.values():
                index(item)
        elif isinstance(value, list):
            for item in value:
                index(item)

    index(data["objects"])

    def resolve(obj):
        return by_id[obj["$ref"]] if "$ref" in obj else obj

    (tournament,) = [o for o in data["objects"] if o["type"] == "Tournament"]
    rules = tournament["scoring_rules"]
    values = [a["value"] for a in rules["answer_types"]]
    assert all(_int(v) for v in values) and any(v > 0 for v in values)
    assert values == [15, 10, -5]  # NAQT
    assert rules["teams_per_match"] == 2 and _int(rules["maximum_players_per_team"], 1)
    assert _int(rules["maximum_bonus_score"], 1) and rules["maximum_bonus_score"] == 30
    low, high = rules["minimum_parts_per_bonus"], rules["maximum_parts_per_bonus"]
    assert _int(low, 1) and _int(high, 1) and low <= high
    assert rules["points_per_bonus_part"] * high == rules["maximum_bonus_score"]
    assert rules["bonuses_bounce_back"] is True

    teams, players = {}, {}
    for registration in map(resolve, tournament["registrations"]):
        assert registration["type"] == "Registration" and registration["name"].strip()
        for team in registration["teams"]:
            assert team["id"] and team["name"].strip() and team["players"]
            teams[team["id"]] = team
            for player in team["players"]:
                assert player["id"] and player["name"].strip()
                players[player["id"]] = (team["id"], player["name"])
    assert {t["name"] for t in teams.values()} == {"Red", "Blue", "Green", "Gold"}
    assert {n for _, n in players.values()} == {"Ann", "Ada", "Bo", "Gil", "Guy"}

    (phase,) = tournament["phases"]
    assert phase["name"] and phase["rounds"]
    (pool,) = phase["pools"]
    assert {resolve(pt["team"])["id"] for pt in pool["pool_teams"]} == set(teams)
    serials, seen = [], 0
    for rnd in phase["rounds"]:
        number = float(rnd["name"])  # YellowFruit's parseFloat: a number, or no matches
        assert isinstance(rnd["packets"][0]["name"], str)
        assert len(rnd["matches"]) == 2
        for match in map(resolve, rnd["matches"]):
            seen += 1
            assert match["type"] == "Match" and match["_round"] == number
            serials.append(match["serial"])
            assert _int(match["tossups_read"], 0) and match["tossups_read"] == 4
            assert _int(match["overtime_tossups_read"], 0)
            assert len(match["match_teams"]) == 2
            game = scores[match["_grace_arena"]["match"]]
            for entry in match["match_teams"]:
                assert set(entry["team"]) == {"$ref"}  # a reference to a registered team
                team_id = entry["team"]["$ref"]
                assert team_id in teams
                assert "points" not in entry  # (QBJ: not with bonus_points; YF adds it up)
                assert _int(entry["bonus_points"], 0) and _int(entry["bonus_bounceback_points"], 0)
                assert entry.get("forfeit_loss", False) is False
                total = entry["bonus_points"] + entry["bonus_bounceback_points"]
                assert entry["match_players"]
                for mp in entry["match_players"]:
                    assert set(mp["player"]) == {"$ref"}
                    assert players[mp["player"]["$ref"]][0] == team_id  # on that team
                    assert _int(mp["tossups_heard"], 0) and mp["tossups_heard"] == 4
                    for count in mp["answer_counts"]:
                        value = (count.get("answer_type") or count["answer"])["value"]
                        assert _int(count["number"], 0) and (value in values or value == 0)
                        total += count["number"] * value
                # what YellowFruit computes as the team's score is the match's
                assert total == game[team_id.removeprefix("team_")]
    assert seen == 4
    # two matches in one room in one round: serials differ
    assert sorted(serials) == ["1-1-1", "1-1-2", "2-1-1", "2-1-2"]
