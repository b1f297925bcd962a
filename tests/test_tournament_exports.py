"""Games not played here in every export: a forfeit and results entered by their final score
(with each team's buzzes, with players' lines, with the score alone) in the SQBS file, laid
out as YellowFruit writes such games for SQBS (``SqbsFileGeneration.ts``: a forfeit's winner
first, scores -1, no tossups heard, forfeit line 1), and each in a QBJ match file of its own
with its round (``_round``, what YellowFruit's "Import Games" places a lone match file by),
the forfeiting team's ``forfeit_loss``, and the answer counts by value."""

from __future__ import annotations

import json

from backends import on_both_backends
from typer.testing import CliRunner

from grace_arena.cli import app
from grace_arena.core.packet import SAMPLE_PACKET_PATH
from grace_arena.record.db import make_engine
from grace_arena.record.schedule import load_plan

runner = CliRunner()


def _run(db_url: str, *args: str) -> str:
    result = runner.invoke(app, [*args, "--db", db_url])
    assert result.exit_code == 0, result.output
    return result.output


def _event(db_url: str) -> dict[frozenset[str], int]:
    """Four teams (ACF: 10 a tossup, -5 a neg, bonuses), a round robin in two rooms; round
    three games entered or forfeited by the test. The round of each pair of teams."""
    teams = [x for t in ("Ash", "Birch", "Cedar", "Dogwood") for x in ("--team", t)]
    _run(db_url, "event", "create", "cup", "--rules", "acf", *teams, "--player", "Ash:Ann",
         "--player", "Ash:Al")  # fmt: skip
    _run(db_url, "event", "schedule", "cup", "--rooms", "2", "--packet", str(SAMPLE_PACKET_PATH),
         "--tossups", "1-2", "--rounds", "3")  # fmt: skip
    plan = load_plan(make_engine(db_url), "cup")
    names = {t.id: t.name for t in plan.teams}
    return {frozenset(names[t] for t in g.teams): g.round for g in plan.games}


@on_both_backends
def test_games_not_played_here_are_in_the_sqbs_file_and_a_qbj_file_each(db_url, tmp_path):
    rounds = _event(db_url)
    r = {k: str(v) for k, v in rounds.items()}
    # Ash 250 Birch 120, with players' lines (Ann 10 tens 1 neg, Al 5 tens; Birch's team counts)
    _run(db_url, "event", "score", "cup", "--round", r[frozenset(("Ash", "Birch"))],
         "--team", "Ash=250", "--team", "Birch=120", "--player", "Ash:Ann:0/10/1@20",
         "--player", "Ash:Al:0/5/0@18", "--buzzes", "Birch=0/5/0")  # fmt: skip
    # Cedar 200 Dogwood 90, by the score alone
    _run(db_url, "event", "score", "cup", "--round", r[frozenset(("Cedar", "Dogwood"))],
         "--team", "Cedar=200", "--team", "Dogwood=90")  # fmt: skip
    # Dogwood forfeits to Ash
    _run(db_url, "event", "forfeit", "cup", "--round", r[frozenset(("Ash", "Dogwood"))],
         "--team", "Dogwood", "--against", "Ash")  # fmt: skip

    out = tmp_path / "cup.sqbs"
    _run(db_url, "export", "--format", "sqbs", "--event", "cup", "--out", str(out))
    lines = out.read_bytes().decode().split("\r\n")[:-1]
    at = 0

    def take(n: int = 1) -> list[str]:
        nonlocal at
        at += n
        return lines[at - n : at]

    assert take() == ["4"]
    # rosters: the event's players, then the stand-ins named after their team (a team's counts
    # without players), as in the QBJ files
    assert take(4) == ["3", "Ash", "Al", "Ann"]
    assert take(3) == ["2", "Birch", "Birch"]
    assert take(3) == ["2", "Cedar", "Cedar"]
    assert take(3) == ["2", "Dogwood", "Dogwood"]
    assert take() == ["3"]  # games
    games = {}
    for _ in range(3):
        head, bonus, rest = take(7), take(4), take(6)
        slots = [take(7) for _ in range(16)]
        games[head[0]] = (head, bonus, rest, slots)
    by_teams = {(g[0][1], g[0][2]): g for g in games.values()}
    # Ash (0) v Birch (1): 250-120, 20 heard; bonuses 250 - 95 - 50 = 105 on 15, 120 - 50 = 70 on 5
    head, bonus, rest, slots = by_teams[("0", "1")]
    assert head[3:] == ["250", "120", "20", r[frozenset(("Ash", "Birch"))]]
    assert bonus == ["15", "105", "5", "70"]
    assert rest == ["0", "0", "0", "0", "0", "0"]  # no overtime, not a forfeit
    # slots alternate Ash, Birch: roster index, games played, 10s, -5s, (unused), (unused), pts
    assert slots[0] == ["1", "1.00", "10", "1", "0", "0", "95"]  # Ann: 10 tens, 1 neg
    assert slots[1] == ["0", "1.00", "5", "0", "0", "0", "50"]  # Birch (stand-in)
    assert slots[2] == ["0", "0.90", "5", "0", "0", "0", "50"]  # Al: 18 of 20 heard
    assert all(s == ["-1", "0", "0", "0", "0", "0", "0"] for s in slots[3:])
    # Cedar (2) v Dogwood (3) by the score alone: no bonus heard, stand-ins with no answer
    head, bonus, rest, slots = by_teams[("2", "3")]
    assert head[3:6] == ["200", "90", "20"] and bonus == ["0", "0", "0", "0"]
    assert slots[0] == ["0", "1.00", "0", "0", "0", "0", "0"]
    # the forfeit: its winner first, scores -1, no tossups heard, the forfeit line 1
    head, bonus, rest, slots = by_teams[("0", "3")]
    assert head[3:6] == ["-1", "-1", "0"] and bonus == ["0", "0", "0", "0"]
    assert rest == ["0", "0", "0", "1", "0", "0"]
    assert all(s == ["-1", "0", "0", "0", "0", "0", "0"] for s in slots)
    assert take(5) == ["1", "1", "3", "0", "1"]  # bonuses tracked; powers/negs shown
    # the end: the tossup values (the event's rules), 3 packets, 4 teams not exhibition
    assert lines[-13:-9] == ["10", "-5", "0", "0"] and lines[-9] == "3"

    folder = tmp_path / "qbj"
    _run(db_url, "export", "--format", "qbj", "--event", "cup", "--out", str(folder))
    files = sorted(p.name for p in folder.iterdir())
    assert len([f for f in files if f.startswith("game-")]) == 3 and "cup.qbj" in files
    matches = [json.loads((folder / f).read_text()) for f in files if f.startswith("game-")]
    by = {frozenset(t["team"]["name"] for t in m["match_teams"]): m for m in matches}
    forfeit = by[frozenset(("Ash", "Dogwood"))]
    assert forfeit["_round"] == rounds[frozenset(("Ash", "Dogwood"))]
    assert {t["team"]["name"]: t["forfeit_loss"] for t in forfeit["match_teams"]} == {
        "Ash": False, "Dogwood": True
    }  # fmt: skip
    entered = by[frozenset(("Ash", "Birch"))]
    assert entered["_round"] == rounds[frozenset(("Ash", "Birch"))]
    assert entered["tossups_read"] == 20 and entered["carryover_phases"] == []
    teams = {t["team"]["name"]: t for t in entered["match_teams"]}
    assert teams["Ash"]["points"] == 250 and teams["Ash"]["bonus_points"] == 105
    counts = {
        mp["player"]["name"]: {c["answer_type"]["value"]: c["number"] for c in mp["answer_counts"]}
        for mp in teams["Ash"]["match_players"]
    }
    assert counts == {"Ann": {10: 10, -5: 1}, "Al": {10: 5}}
    assert all(t["lineups"][0]["reason"] == "initial" for t in entered["match_teams"])
    assert all("id" in t["team"] for t in entered["match_teams"]) and "id" in entered


def _modaq_match(round_: int) -> dict:
    """A MODAQ match file of three tossups: Pat gets the first (bonus 10/0/10); Ola negs the
    second and Pia gets it (bonus 0/0/0); the third goes dead. Pine 40, Oak -5."""

    def buzz(team: str, player: str, word: int, value: int) -> dict:
        return {
            "team": {"id": f"t-{team}", "name": team},
            "player": {"id": f"p-{player}", "name": player},
            "buzz_position": {"word_index": word},
            "result": {"value": value},
        }

    def bonus(*points: int) -> dict:
        return {
            "question": {"question_number": 1, "type": "bonus", "parts": 3},
            "parts": [{"controlled_points": p, "bounceback_points": 0} for p in points],
        }

    def line(player: str, value: int) -> dict:
        answers = [{"number": 1, "answer_type": {"value": value}}]
        return {"player": {"name": player}, "tossups_heard": 3, "answer_counts": answers}

    return {
        "_round": round_,
        "tossups_read": 3,
        "packets": "modaq-round",
        "match_teams": [
            {
                "team": {"name": "Pine"},
                "bonus_points": 20,
                "match_players": [line("Pat", 10), line("Pia", 10)],
            },
            {
                "team": {"name": "Oak"},
                "bonus_points": 0,
                "match_players": [line("Ola", -5)],
            },
        ],
        "match_questions": [
            {"question_number": 1, "tossup_question": {"question_number": 1, "type": "tossup",
             "parts": 1}, "buzzes": [buzz("Pine", "Pat", 12, 10)], "bonus": bonus(10, 0, 10)},
            {"question_number": 2, "tossup_question": {"question_number": 2, "type": "tossup",
             "parts": 1}, "buzzes": [buzz("Oak", "Ola", 5, -5), buzz("Pine", "Pia", 30, 10)],
             "bonus": bonus(0, 0, 0)},
            {"question_number": 3, "tossup_question": {"question_number": 3, "type": "tossup",
             "parts": 1}, "buzzes": []},
        ],
    }  # fmt: skip


@on_both_backends
def test_a_game_read_from_a_modaq_file_is_written_back_with_its_cycles(db_url, tmp_path):
    """MODAQ rebuilds a game from its cycles (buzzes and bonus parts), YellowFruit reads the
    answer counts: the game written back has both, its buzzes naming the event's teams and
    players, and its cycles still make its score."""
    _run(db_url, "event", "create", "cup", "--rules", "acf", "--team", "Pine", "--team", "Oak")
    _run(db_url, "event", "schedule", "cup", "--packet", str(SAMPLE_PACKET_PATH))
    (tmp_path / "round1.qbj").write_text(json.dumps(_modaq_match(1)))
    out = _run(db_url, "event", "score", "cup", "--from", str(tmp_path / "round1.qbj"))
    assert "Pine 40, Oak -5 (entered)" in out
    folder = tmp_path / "qbj"
    _run(db_url, "export", "--format", "qbj", "--event", "cup", "--out", str(folder))
    (game,) = [json.loads(p.read_text()) for p in folder.glob("game-*.qbj")]
    assert game["_round"] == 1 and game["tossups_read"] == 3 and game["packets"] == "modaq-round"
    teams = {t["team"]["name"]: t for t in game["match_teams"]}
    ids = {name: t["team"]["id"] for name, t in teams.items()}
    rebuilt = {"Pine": 0, "Oak": 0}  # what MODAQ adds up: buzz values and bonus parts
    for q in game["match_questions"]:
        for b in q["buzzes"]:
            assert b["team"]["id"] == ids[b["team"]["name"]]
            rebuilt[b["team"]["name"]] += b["result"]["value"]
        owner = next((b["team"]["name"] for b in q["buzzes"] if b["result"]["value"] > 0), None)
        if "bonus" in q:
            rebuilt[owner] += sum(p["controlled_points"] for p in q["bonus"]["parts"])
    assert rebuilt == {name: t["points"] for name, t in teams.items()} == {"Pine": 40, "Oak": -5}
    assert [b["buzz_position"]["word_index"] for q in game["match_questions"]
            for b in q["buzzes"]] == [12, 5, 30]  # fmt: skip
    players = {p["player"]["name"]: p["player"]["id"] for p in teams["Pine"]["match_players"]}
    second = game["match_questions"][1]["buzzes"][1]
    assert second["player"] == {"id": players["Pia"], "name": "Pia"}
    # the tournament file holds it too, its buzzes references to the registered teams
    tournament = json.loads((folder / "cup.qbj").read_text())
    (match,) = [o for o in tournament["objects"] if o.get("type") == "Match"]
    refs = [b["team"] for q in match["match_questions"] for b in q["buzzes"]]
    assert refs == [{"$ref": ids["Pine"]}, {"$ref": ids["Oak"]}, {"$ref": ids["Pine"]}]


@on_both_backends
def test_the_stats_report_has_the_players_of_entered_games_as_the_files_have_them(db_url, tmp_path):
    """The players' table counts a result entered with players' lines (or a team's counts)
    as the QBJ and SQBS files write it, and as YellowFruit counts those files
    (``PhaseStandings.addMatchTeamToIndividualStats``, ``PlayerStats.addMatchPlayer``: every
    match player of a game in the standings, its games played the tossups heard over the
    game's); a team known by its score alone has no line, and the standings say that
    YellowFruit cannot hold such a game (``MatchTeam.validateBonusPoints``: the whole score
    taken for bonus points on no bonus heard is an error, and ``Match.determineStatsValidity``
    leaves the game out)."""
    from grace_arena.io.stats_report import SCORE_ONLY_NOTE, load_event_stats

    rounds = {k: str(v) for k, v in _event(db_url).items()}
    _run(db_url, "event", "score", "cup", "--round", rounds[frozenset(("Ash", "Birch"))],
         "--team", "Ash=250", "--team", "Birch=120", "--player", "Ash:Ann:0/10/1@20",
         "--player", "Ash:Al:0/5/0@18", "--buzzes", "Birch=0/5/0")  # fmt: skip
    before = " ".join(_run(db_url, "event", "standings", "cup").split())
    assert "YellowFruit cannot hold" not in before
    _run(db_url, "event", "score", "cup", "--round", rounds[frozenset(("Cedar", "Dogwood"))],
         "--team", "Cedar=200", "--team", "Dogwood=90")  # fmt: skip
    _, stats, _ = load_event_stats(make_engine(db_url), "cup")
    lines = {
        (p.team, p.name): (p.games, p.games_played, p.tossups_heard, p.tens, p.negs, p.points)
        for p in stats.players
    }
    assert lines == {
        ("ash", "Ann"): (1, 1.0, 20, 10, 1, 95),
        ("ash", "Al"): (1, 0.9, 18, 5, 0, 50),
        ("birch", "Birch"): (1, 1.0, 20, 5, 0, 50),  # the team's counts, on its stand-in
    }
    al = next(p for p in stats.players if p.name == "Al")
    assert al.points_per_game == 50 / 0.9  # per game played
    # the standings count the game entered by its score alone, and say what YellowFruit does
    after = " ".join(_run(db_url, "event", "standings", "cup").split())
    assert SCORE_ONLY_NOTE in after
    assert SCORE_ONLY_NOTE in " ".join(_run(db_url, "event", "stats", "cup").split())
    html = tmp_path / "cup.html"
    _run(db_url, "event", "stats", "cup", "--html", str(html))
    assert SCORE_ONLY_NOTE in html.read_text()
    assert '<td class="l">Al</td><td class="l">Ash</td><td>0.9</td><td>18</td>' in html.read_text()


@on_both_backends
def test_an_entered_player_who_heard_no_tossup_plays_no_part_of_the_game(db_url, tmp_path):
    """A player entered with 0 tossups heard (``@0``) is in the game's lines with 0 games
    played, in the stats report, the QBJ match file and SQBS alike (not the whole game, as
    an absent count means)."""
    from grace_arena.io.stats_report import load_event_stats

    rounds = {k: str(v) for k, v in _event(db_url).items()}
    _run(db_url, "event", "score", "cup", "--round", rounds[frozenset(("Ash", "Birch"))],
         "--team", "Ash=250", "--team", "Birch=120", "--player", "Ash:Ann:0/10/1@20",
         "--player", "Ash:Al:0/5/0@18", "--player", "Ash:Abe:0/0/0@0",
         "--buzzes", "Birch=0/5/0")  # fmt: skip
    _, stats, _ = load_event_stats(make_engine(db_url), "cup")
    abe = next(p for p in stats.players if p.name == "Abe")
    assert (abe.games_played, abe.tossups_heard, abe.points) == (0.0, 0, 0)
    folder = tmp_path / "qbj"
    _run(db_url, "export", "--format", "qbj", "--event", "cup", "--out", str(folder))
    heard = {
        mp["player"]["name"]: mp["tossups_heard"]
        for qbj in folder.glob("game-*.qbj")
        for team in json.loads(qbj.read_text())["match_teams"]
        for mp in team.get("match_players", [])
    }
    assert heard["Abe"] == 0 and heard["Al"] == 18
