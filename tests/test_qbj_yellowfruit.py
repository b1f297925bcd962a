"""An event's QBJ files as YellowFruit and MODAQ read them, by the rules of their own code.

The rules below were read in their code (YellowFruit 4.0, ``ANadig/YellowFruit``; MODAQ
1.42, ``alopezlago/MODAQ``), and our files were run through that code outside the project;
each rule is a check of this test.

YellowFruit, "Open QBJ Tournament" (``TournamentManager.loadTournamentFromQbjObjects``,
``FileParser.parseTournament``), after turning snake_case keys into camelCase:

* ``version`` is one of ``validQbjVersions`` (``QbjUtils.ts``: only "2.1.1"), else "This file
  doesn't use a supported version of the tournament schema";
* one ``Tournament`` object; the ids of the file's objects (``collectRefTargets``) resolve
  every ``$ref``;
* scoring rules: answer types are integers within ±1000, one positive; ``teams_per_match`` 2;
  bonuses are played when ``maximum_bonus_score`` is there (1..1000, so never 0), with
  ``points_per_bonus_part`` × ``maximum_parts_per_bonus`` = ``maximum_bonus_score``;
* registrations, teams and players named; a team has a player;
* a round's name reads as a number (``parseFloat``), else its matches are skipped;
* each match: ``carryover_phases`` is iterated (absent: "ary is not iterable"), exactly two
  ``match_teams``, each a reference to a registered team, ``match_players`` references to its
  players, ``answer_counts`` whose values are answer types (a 0 is skipped);
  ``calculateTotalPoints`` makes the score the answer counts' points plus ``bonus_points``
  and ``bonus_bounceback_points``; ``validateAll``: the tossups answered correctly in
  regulation (all, less ``YfData.overTimeBuzzes``) are at most the regulation tossups read
  ("Based on overtime stats, 21 tossups were answered correctly in regulation, but only 20
  were read in regulation"), the positive overtime answers at most ``overtime_tossups_read``,
  and the score less the overtime points is tied after regulation.

YellowFruit, "Import Games" of a match file (``importMatchesFromQbj``): a file without
``objects`` is one match; its round is ``_round`` (MODAQ's field), else "Couldn't determine a
round for the game in this file"; its teams and players are matched by name to the
tournament's (``getYfTeamFromName``), so they are written in full, not by ``$ref``.

MODAQ, "Import from QBJ" (``QBJ.fromQBJ``) of a match file with a packet: two teams with names,
``match_players`` with names, a lineup whose players are among them, every buzz by one of
them; cycle i is read against the packet's tossup i (a buzz past its words + 1 is refused:
"Buzz on cycle 3 … is larger than the number of words in the question") while its points come
from the tossup its ``question_number`` names; a correct buzz before the power mark is a power,
only the first incorrect buzz of a cycle (by word) is a neg, and one at the end-of-question
mark (word n, the number of words) costs nothing. Its roster import (``parseRegistration``)
reads the tournament's registrations written in it, with their teams (it does not follow
``$ref``).

The event: Red, Blue, Green and Gold, NAQT rules (power 15, ten 10, neg −5 for the first team
only, bonuses 3 × 10), in rooms 1 and 2; round 1 reads the sample packet's tossups 1–4,
round 2 its tossups 7–10, round 3 tossups 11–13 with 2 tossups of regulation, then overtime
without bonuses. "END": a buzz after the whole tossup was read.

Round 1, Red (Ann, Ada) 65 – Blue (Bo) 10: T1 Ann power 15, bonus 20; T2 Bo neg −5, Ada 10,
  bonus 20; T3 Bo neg −5, Ann wrong 0 (the second team); T4 Bo 10, bonus 10.
Round 1, Green (Gil) 35 – Gold (Guy) 15: T1 Gil power 15, bonus 20; T2 Guy neg −5, Gil wrong
  at END 0; T3 Guy wrong at END 0; T4 Guy 10, bonus 10.
Round 2, Red 10 – Green 95: T7 Gil 10, bonus 30; T8 Ann power 15, bonus 0; T9 Gil power 15,
  bonus 10; T10 Ann neg −5, Gil 10 at END, bonus 20.
Round 2, Blue 40 – Gold 35: T7 Bo 10, bonus 30; T8 Guy power 15, bonus 0; T9 Bo wrong at END
  0, Guy 10 at END, bonus 10; T10 dead.
Round 3, Red 10 – Green 25: T11 Ann 10, bonus 0; T12 Gil 10, bonus 0 (tied 10–10); overtime
  T13 Gil power 15.
Round 3, Blue 15 – Gold 35: T11 Bo 10, bonus 10; T12 Guy 10, bonus 10 (tied 20–20); overtime
  T13 Bo neg −5, Guy power 15.

Standings (PPG and P/20TUH leave out the overtime tossup and its points, as YellowFruit
does): Green 3–0, 155 points, 11 TUH, PPG (155 − 15) ÷ 3 = 46.67, P/20TUH 140 ÷ 10 × 20 =
280, PPB 80 ÷ 5 = 16; Red 1–2, 85, PPG 28.33, P/20TUH 170; Blue 1–2, 65, PPG (65 + 5) ÷ 3 =
23.33, P/20TUH 140; Gold 1–2, 85, PPG 23.33, P/20TUH 140.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
from backends import on_both_backends
from event_helpers import make_event
from test_stats import PLAYERS, C, X, team_of
from typer.testing import CliRunner

from grace_arena.cli import app
from grace_arena.core import schedule as pairing
from grace_arena.core.commands import (
    Buzz,
    EndMatch,
    Join,
    Reveal,
    Rule,
    RulePart,
    StartTossup,
    TimeUp,
)
from grace_arena.core.config import TeamSpec
from grace_arena.core.formats import rules_for
from grace_arena.core.packet import SAMPLE_PACKET_PATH, load_packet
from grace_arena.core.specs import match_config
from grace_arena.core.tokenize import POWER_MARK, tokenize
from grace_arena.io.exports import modaq_word_index, modaq_words
from grace_arena.io.stats_report import OVERTIME_NOTE, load_event_stats
from grace_arena.record.db import make_engine
from grace_arena.record.schedule import RoundPlan, TeamEntry, event_standings, set_schedule
from grace_arena.record.store import MatchStore

END = 10_000  # a word past the last: the whole tossup is read before the buzz
TEAMS = [TeamEntry(t, t.title()) for t in ("red", "blue", "green", "gold")]
GAMES = [
    pairing.Game(1, "1", 0, ("red", "blue")),
    pairing.Game(1, "2", 0, ("green", "gold")),
    pairing.Game(2, "1", 0, ("red", "green")),
    pairing.Game(2, "2", 0, ("blue", "gold")),
    pairing.Game(3, "1", 0, ("red", "green")),
    pairing.Game(3, "2", 0, ("blue", "gold")),
]
# (round, first team) -> players joining, then per tossup its buzzes (player, word, ruling)
# and its bonus parts' rulings
SCRIPTS = {
    (1, "red"): (["Ann", "Ada", "Bo"], [
        ([("Ann", 5, C)], [C, X, C]),
        ([("Bo", 5, X), ("Ada", 90, C)], [C, C, X]),
        ([("Bo", 10, X), ("Ann", 20, X)], []),
        ([("Bo", 100, C)], [X, C, X]),
    ]),
    (1, "green"): (["Gil", "Guy"], [
        ([("Gil", 5, C)], [C, X, C]),
        ([("Guy", 5, X), ("Gil", END, X)], []),
        ([("Guy", END, X)], []),
        ([("Guy", 100, C)], [X, C, X]),
    ]),
    (2, "red"): (["Ann", "Gil"], [
        ([("Gil", 100, C)], [C, C, C]),
        ([("Ann", 5, C)], [X, X, X]),
        ([("Gil", 5, C)], [C, X, X]),
        ([("Ann", 10, X), ("Gil", END, C)], [C, C, X]),
    ]),
    (2, "blue"): (["Bo", "Guy"], [
        ([("Bo", 100, C)], [C, C, C]),
        ([("Guy", 5, C)], [X, X, X]),
        ([("Bo", END, X), ("Guy", END, C)], [C, X, X]),
        ([], []),
    ]),
    (3, "red"): (["Ann", "Gil"], [
        ([("Ann", 100, C)], [X, X, X]),
        ([("Gil", 100, C)], [X, X, X]),
        ([("Gil", 5, C)], []),
    ]),
    (3, "blue"): (["Bo", "Guy"], [
        ([("Bo", 100, C)], [C, X, X]),
        ([("Guy", 100, C)], [C, X, X]),
        ([("Bo", 3, X), ("Guy", 50, C)], []),
    ]),
}  # fmt: skip
SCORES = {
    (1, "red"): {"Red": 65, "Blue": 10},
    (1, "green"): {"Green": 35, "Gold": 15},
    (2, "red"): {"Red": 10, "Green": 95},
    (2, "blue"): {"Blue": 40, "Gold": 35},
    (3, "red"): {"Red": 10, "Green": 25},
    (3, "blue"): {"Blue": 15, "Gold": 35},
}
LINEUP_REASONS = {"initial", "own_timeout", "other_timeout", "halftime", "segment_break",
                  "before_overtime"}  # fmt: skip


def play(match, joining, cycles) -> None:
    """Play ``cycles`` (the clock moved on between tossups), then end the match."""
    from grace_arena.core.errors import IllegalCommand

    now = 1.0

    def close() -> None:  # read to the end and let the buzz window close
        for command, at in ((Reveal(to=END), now), (TimeUp(), now + 100)):
            with contextlib.suppress(IllegalCommand):
                match.handle(command, now=at)

    for name in joining:
        match.handle(Join(team=team_of(name), player=name.lower(), name=name), now=now)
    for buzzes, parts in cycles:
        now += 1000
        try:
            match.handle(StartTossup(), now=now)
        except IllegalCommand:
            close()
            match.handle(StartTossup(), now=now + 100)
        for name, word, ruling in buzzes:
            with contextlib.suppress(IllegalCommand):  # (the reading is over: a buzz after it)
                match.handle(Reveal(to=word), now=now)
            match.handle(Buzz(team=team_of(name), player=name.lower()), now=now)
            match.handle(Rule(ruling=ruling), now=now)
        for ruling in parts:
            match.handle(RulePart(ruling=ruling), now=now)
    try:
        match.handle(EndMatch(), now=now)
    except IllegalCommand:
        close()
        match.handle(EndMatch(), now=now + 100)


def played_event(db_url: str):
    players = [(team_of(p), p) for t in PLAYERS.values() for p in t]
    make_event(db_url, name="yf", teams=TEAMS, rounds=3, rooms=("1", "2"), fmt="round_robin",
               tossups=4, players=players)  # fmt: skip
    engine = make_engine(db_url)
    packet = load_packet(SAMPLE_PACKET_PATH)
    ids = [t.id for t in packet.tossups]
    read = {1: tuple(ids[0:4]), 2: tuple(ids[6:10]), 3: tuple(ids[10:13])}
    rules = {1: rules_for("naqt"), 2: rules_for("naqt"), 3: rules_for("naqt", regulation_tossups=2)}
    plan = set_schedule(engine, "yf", rooms=["1", "2"], games=GAMES,
                        rounds=[RoundPlan(r, packet.packet.id, read[r]) for r in read])  # fmt: skip
    for game in plan.games:
        specs = [TeamSpec(id=t, name=plan.team(t).name) for t in game.teams]
        config = match_config(packet, specs, tossup_ids=read[game.round], rules=rules[game.round])
        match = MatchStore(engine).create(config, now=0.0, event="yf", game_id=game.id)
        play(match, *SCRIPTS[(game.round, game.teams[0])])
    return packet, engine


def _int(value, low=-1000, high=1000) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


@pytest.fixture
def exported(db_url, tmp_path):
    packet, engine = played_event(db_url)
    try:
        _, stats, _ = load_event_stats(engine, "yf")
        _, live = event_standings(engine, "yf")
    finally:
        engine.dispose()
    out = tmp_path / "qbj"
    result = CliRunner().invoke(
        app, ["export", "--format", "qbj", "--event", "yf", "--out", str(out), "--db", db_url]
    )
    assert result.exit_code == 0, result.output
    # the standings and the stats report say how PPG and P/20TUH count the overtime
    result = CliRunner().invoke(app, ["event", "standings", "yf", "--db", db_url])
    assert result.exit_code == 0, result.output
    assert "PPG and P/20TUH leave out the tossups of an overtime" in " ".join(result.output.split())
    html = tmp_path / "stats.html"
    result = CliRunner().invoke(app, ["event", "stats", "yf", "--html", str(html), "--db", db_url])
    assert result.exit_code == 0, result.output
    assert OVERTIME_NOTE in html.read_text()
    return packet, stats, live, out


@on_both_backends
def test_yellowfruit_opens_the_tournament_file_and_adds_up_our_scores(exported) -> None:
    _, stats, live, out = exported
    data = json.loads((out / "yf.qbj").read_text())
    assert data["version"] == "2.1.1"
    by_id: dict[str, dict] = {}  # every object defined with an id, at any depth

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
    assert values == [15, 10, -5] and all(_int(v) for v in values)
    assert rules["teams_per_match"] == 2 and _int(rules["maximum_players_per_team"], 1)
    assert rules["maximum_bonus_score"] == 30 == rules["points_per_bonus_part"] * 3
    assert rules["maximum_parts_per_bonus"] == 3 and rules["overtime_includes_bonuses"] is False

    # the registrations are written in the tournament (MODAQ's roster import reads them there)
    teams, players = {}, {}
    for registration in tournament["registrations"]:
        assert "$ref" not in registration and registration["name"].strip()
        for team in registration["teams"]:
            assert team["id"] and team["name"].strip() and team["players"]
            teams[team["id"]] = team
            for player in team["players"]:
                assert player["id"] and player["name"].strip() and "(" not in player["name"]
                players[player["id"]] = (team["id"], player["name"])
    assert {t["name"] for t in teams.values()} == {"Red", "Blue", "Green", "Gold"}

    (phase,) = tournament["phases"]
    rounds = {}
    for rnd in phase["rounds"]:
        number = int(float(rnd["name"]))  # YellowFruit's parseFloat: a number, or no matches
        rounds[number] = [resolve(m) for m in rnd["matches"]]
    assert sorted(rounds) == [1, 2, 3] and all(len(ms) == 2 for ms in rounds.values())
    for number, matches in rounds.items():
        for match in matches:
            assert match["type"] == "Match" and match["id"].startswith("match_")
            assert match["carryover_phases"] == [] and match["_round"] == number
            read_in_overtime = match["overtime_tossups_read"]
            regulation = match["tossups_read"] - read_in_overtime
            assert (regulation, read_in_overtime) == ((2, 1) if number == 3 else (4, 0))
            score, regulation_score, converted, converted_in_overtime = {}, {}, 0, 0
            for entry in match["match_teams"]:
                team_id = entry["team"]["$ref"]
                assert set(entry["team"]) == {"$ref"} and team_id in teams
                assert "points" not in entry and _int(entry["bonus_points"], 0)
                total = entry["bonus_points"] + entry["bonus_bounceback_points"]
                for lineup in entry["lineups"]:
                    assert lineup["reason"] in LINEUP_REASONS and lineup["first_question"] == 1
                for mp in entry["match_players"]:
                    assert players[mp["player"]["$ref"]][0] == team_id  # on that team
                    assert mp["tossups_heard"] == match["tossups_read"]
                    for count in mp["answer_counts"]:
                        assert set(count) == {"number", "answer_type"}  # no "answer" key
                        value = count["answer_type"]["value"]
                        assert _int(count["number"], 0) and (value in values or value == 0)
                        total += count["number"] * value
                        converted += count["number"] * (value > 0)
                # each team's answers in overtime, when there was overtime
                assert ("YfData" in entry) == (number == 3)
                overtime = entry.get("YfData", {}).get("overTimeBuzzes", [])
                for count in overtime:
                    assert count["answer_type"]["value"] in values  # (a 0 has no answer type)
                    converted_in_overtime += count["number"] * (count["answer_type"]["value"] > 0)
                name = teams[team_id]["name"]
                score[name] = total
                regulation_score[name] = total - sum(
                    c["number"] * c["answer_type"]["value"] for c in overtime
                )
            # YellowFruit's score (calculateTotalPoints) is ours, and its overtime checks pass
            assert score in SCORES.values()
            assert converted - converted_in_overtime <= regulation
            assert converted_in_overtime <= read_in_overtime
            if number == 3:
                assert len(set(regulation_score.values())) == 1  # tied after regulation
    # the standings: the stats' and the live ones agree, and are those worked by hand
    assert stats.standings == live
    got = {
        s.name: (s.won, s.lost, s.points, s.tossups_heard, round(s.points_per_game, 2),
                 round(s.points_per_20_tuh, 2), s.points_per_bonus)
        for s in stats.standings
    }  # fmt: skip
    assert got == {
        "Green": (3, 0, 155, 11, 46.67, 280.0, 16.0),
        "Red": (1, 2, 85, 11, 28.33, 170.0, 10.0),
        "Blue": (1, 2, 65, 11, 23.33, 140.0, 50 / 3),
        "Gold": (1, 2, 85, 11, 23.33, 140.0, 7.5),
    }


@on_both_backends
def test_a_match_file_imports_into_its_round_and_modaq_rebuilds_its_score(exported) -> None:
    packet, _, _, out = exported
    tournament = json.loads((out / "yf.qbj").read_text())
    registered = {
        team["name"]: {p["name"] for p in team["players"]}
        for o in tournament["objects"]
        if o["type"] == "Tournament"
        for r in o["registrations"]
        for team in r["teams"]
    }
    files = sorted(out.glob("match-*.qbj"))
    assert len(files) == 6
    for path in files:
        match = json.loads(path.read_text())
        # YellowFruit's Import Games: one match, its round, teams and players by name
        assert "objects" not in match and match["id"].startswith("match_")
        number = match["_round"]
        assert match["carryover_phases"] == []
        names = tuple(entry["team"]["name"] for entry in match["match_teams"])
        key = next(k for k, score in SCORES.items() if k[0] == number and set(score) == set(names))
        for entry in match["match_teams"]:
            team = entry["team"]
            assert team["id"] == f"Team_{team['name']}" and team["name"] in registered
            for mp in entry["match_players"]:
                assert mp["player"]["id"] and mp["player"]["name"] in registered[team["name"]]
            assert all(set(c) == {"number", "answer_type"} for mp in entry["match_players"]
                       for c in mp["answer_counts"])  # fmt: skip
        # MODAQ's Import from QBJ, against the packet the file names: the event's for a round
        # from its first tossup, else the packet of the match's own tossups written beside it
        if match["packets"] == packet.packet.id:
            assert number == 1
            questions = [t.text for t in packet.tossups]
        else:
            assert number in (2, 3)
            written = json.loads((out / f"{match['packets']}.json").read_text())
            questions = [t["question"] for t in written["tossups"]]
            assert len(written["bonuses"]) == len(packet.bonuses)
            first = {2: 7, 3: 11}[number]
            assert match["packets"] == f"{packet.packet.id}-{first}-{first + len(questions) - 1}"
            assert questions == [
                t.text for t in packet.tossups[first - 1 : first - 1 + len(questions)]
            ]
        rebuilt = _modaq_score(match, questions)
        assert rebuilt == SCORES[key]


def _modaq_score(match: dict, questions: list[str]) -> dict[str, int]:
    """The score MODAQ's fromQBJ rebuilds (its rules in the module docstring)."""
    players = {}
    for entry in match["match_teams"]:
        team = entry["team"]["name"]
        names = [mp["player"]["name"] for mp in entry["match_players"]]
        assert len(set(names)) == len(names) and entry["lineups"]
        assert {p["name"] for p in entry["lineups"][0]["players"]} <= set(names)
        players[team] = set(names)
    score = dict.fromkeys(players, 0)
    previous = 0
    for i, cycle in enumerate(match["match_questions"]):
        number = cycle["tossup_question"]["question_number"]
        assert number > previous  # a gap is read as tossups thrown out
        previous = number
        text = questions[number - 1]
        words = modaq_words(text)  # as MODAQ counts them (checked below)
        power_mark = text.find(POWER_MARK)
        before_power = sum(1 for at in words if at < power_mark) if power_mark >= 0 else None
        length_of_cycle_i = len(questions[i].split())
        wrong = []
        for buzz in cycle["buzzes"]:
            assert buzz["player"]["name"] in players[buzz["team"]["name"]]
            word = buzz["buzz_position"]["word_index"]
            assert 0 <= word <= length_of_cycle_i + 1  # else MODAQ refuses the file
            value = buzz["result"]["value"]
            if value > 0:
                power = before_power is not None and word < before_power
                assert value == (15 if power else 10)
                score[buzz["team"]["name"]] += value
            else:
                wrong.append((word, buzz))
        if wrong:  # the first incorrect buzz by word: a neg unless at the end (word n)
            word, buzz = min(wrong, key=lambda w: w[0])
            neg = -5 if word < len(words) else 0
            assert [b["result"]["value"] for _, b in wrong] == [neg] + [0] * (len(wrong) - 1)
            score[buzz["team"]["name"]] += neg
        bonus = cycle.get("bonus")
        if bonus is not None:
            correct = next(b["team"]["name"] for b in cycle["buzzes"] if b["result"]["value"] > 0)
            score[correct] += sum(p["controlled_points"] for p in bonus["parts"])
            assert all(not p.get("bounceback_points") for p in bonus["parts"])
    return score


@on_both_backends
def test_a_tossups_only_event_s_tournament_file_has_no_bonus_score(db_url, tmp_path) -> None:
    from test_stats import model_event

    _, engine = model_event(db_url)
    engine.dispose()
    out = tmp_path / "qbj"
    result = CliRunner().invoke(
        app, ["export", "--format", "qbj", "--event", "models", "--out", str(out), "--db", db_url]
    )
    assert result.exit_code == 0, result.output
    data = json.loads((out / "models.qbj").read_text())
    (tournament,) = [o for o in data["objects"] if o["type"] == "Tournament"]
    # YellowFruit plays bonuses when maximum_bonus_score is there, and refuses a 0
    assert "maximum_bonus_score" not in tournament["scoring_rules"]
    # a model team's player is its model, as in the stats and SQBS
    rosters = {t["name"]: [p["name"] for p in t["players"]]
               for r in tournament["registrations"] for t in r["teams"]}  # fmt: skip
    assert rosters["Robo"] == rosters["Careful"] == ["tfidf"]
    assert Path(out / "match-1.qbj").exists()


def test_words_are_counted_as_modaq_counts_them() -> None:
    # MODAQ (FormattedTextParser, Tossup.getWords, with its formats' guide markers ("…")):
    # a pronunciation guide, a reader directive such as (pause) and the power mark are not
    # words; a formatting tag is cut out of its word; a lone dash is a word. We count
    # "(pause)" and not "—", so a buzz is written at the word MODAQ counts.
    text = 'Nietzsche ("NEE-chuh") wrote (pause) this (*) book. <b>For 10</b>, name it — now.'
    assert [text[at:].split()[0] for at in modaq_words(text)] == [
        "Nietzsche", "wrote", "this", "book.", "For", "10</b>,", "name", "it", "—", "now.",
    ]  # fmt: skip
    ours = [w.text for w in tokenize(text).words]
    assert ours == ["Nietzsche", "wrote", "(pause)", "this", "book.", "<b>For", "10</b>,",
                    "name", "it", "now."]  # fmt: skip
    assert [modaq_word_index(text, i) for i in range(len(ours))] == [0, 1, 1, 2, 3, 4, 5, 6, 7, 9]
    # after the whole tossup was read: MODAQ's end-of-question mark, one past its last word
    assert modaq_word_index(text, None) == 10
    # ours before the power mark ("this", our 3rd) is MODAQ's before it (its 2nd of 2)
    assert modaq_word_index(text, 3) < sum(1 for at in modaq_words(text) if at < text.find("(*)"))
