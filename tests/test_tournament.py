"""A tournament of twelve teams played to the end: two prelim pools of six, a tiebreaker, a
playoff re-bracketed by prelim finish with carryover, a double final; a forfeit, games entered
by their final score (with and without statistics) and games played through the match core.
Every phase's standings against a hand computation."""

from __future__ import annotations

import pytest
from backends import on_both_backends

from grace_arena.core import schedule as pairing
from grace_arena.core.commands import Buzz, EndMatch, Join, Reveal, Rule, StartTossup
from grace_arena.core.config import TeamSpec
from grace_arena.core.events import Ruling
from grace_arena.core.packet import SAMPLE_PACKET_PATH, load_packet
from grace_arena.core.specs import match_config
from grace_arena.record.db import make_engine, upgrade
from grace_arena.record.schedule import (
    PhasePlan,
    PoolPlan,
    RoundPlan,
    TeamEntry,
    add_final,
    add_tiebreaker,
    advance_phase,
    create_event,
    enter_result,
    event_phase_standings,
    event_standings,
    final_state,
    find_game,
    load_plan,
    next_final_game,
    record_forfeit,
    set_schedule,
)
from grace_arena.record.store import MatchStore, RecordError

POOL_A = [f"a{i}" for i in range(1, 7)]
POOL_B = [f"b{i}" for i in range(1, 7)]
ROOMS = [str(i) for i in range(1, 7)]

# A game entered with statistics (ACF rules: 10 a tossup, -5 a neg, bonuses): points, tens,
# negs, bonus points. A bonus is heard for each tossup answered correctly.
A_WIN = (300, 12, 1, 185)  # 120 - 5 + 185
A_LOSS = (100, 6, 2, 50)  # 60 - 10 + 50
B_WIN = (280, 12, 1, 165)  # 120 - 5 + 165
B_LOSS = (110, 6, 2, 60)  # 60 - 10 + 60

# Prelims: in each pool the team listed first wins, except a5 over a3 (a3 > a4 > a5 > a3:
# a3, a4 and a5 finish 2-3 each, equal on every figure); b6 forfeits to b5.
UPSETS = {frozenset(("a3", "a5")): "a5"}
FORFEIT = ("b5", "b6")  # (winner, the team that forfeits)

# Playoffs (championship: a1 a2 a3 b1 b2 b3; consolation: a4 a5 a6 b4 b5 b6): the winners of
# the crossover games; each entered with pool A's statistics, but a6 over b6, entered by its
# final score alone (250-150).
PLAYOFF_WINNERS = {
    **{frozenset(("a1", b)): "a1" for b in ("b1", "b2", "b3")},
    frozenset(("b1", "a2")): "b1",
    frozenset(("b1", "a3")): "b1",
    frozenset(("a2", "b2")): "a2",
    frozenset(("a2", "b3")): "a2",
    frozenset(("b2", "a3")): "b2",
    frozenset(("a3", "b3")): "a3",
    **{frozenset((a, b)): a for a in ("a4", "a5", "a6") for b in ("b4", "b5", "b6")},
}

# The hand computation (team: W, L, points, PPG, PPB), rank order. A forfeit counts in W-L
# only: b5's and b6's four other games make their points, PPG and PPB.
#  a1: 5 wins x 300 = 1500, PPG 300, PPB 5 x 185 / (5 x 12) = 15.42
#  a2: 4 x 300 + 100 = 1300, PPB (4 x 185 + 50) / (4 x 12 + 6) = 790 / 54 = 14.63
#  a3, a4, a5: 2 x 300 + 3 x 100 = 900, PPB (370 + 150) / (24 + 18) = 12.38
#  a6: 5 x 100 = 500, PPB 250 / 30 = 8.33
#  b1: 5 x 280 = 1400, PPB 825 / 60 = 13.75; b2: 4 x 280 + 110 = 1230, PPB 720 / 54 = 13.33
#  b3: 3 x 280 + 2 x 110 = 1060, PPB 615 / 48 = 12.81; b4: 2 x 280 + 3 x 110 = 890, 12.14
#  b5: forfeit win + 4 x 110 = 440 in 4 games (PPG 110), PPB 240 / 24 = 10.00
#  b6: forfeit loss + 4 x 110 = 440 in 4 games (PPG 110), PPB 10.00
PRELIMS = {
    "Pool A": [
        ("a1", 5, 0, 1500, 300.0, 15.42),
        ("a2", 4, 1, 1300, 260.0, 14.63),
        ("a3", 2, 3, 900, 180.0, 12.38),
        ("a4", 2, 3, 900, 180.0, 12.38),
        ("a5", 2, 3, 900, 180.0, 12.38),
        ("a6", 0, 5, 500, 100.0, 8.33),
    ],
    "Pool B": [
        ("b1", 5, 0, 1400, 280.0, 13.75),
        ("b2", 4, 1, 1230, 246.0, 13.33),
        ("b3", 3, 2, 1060, 212.0, 12.81),
        ("b4", 2, 3, 890, 178.0, 12.14),
        ("b5", 1, 4, 440, 110.0, 10.0),
        ("b6", 0, 5, 440, 110.0, 10.0),
    ],
}
# Seeds: places in the pools, then PPB (rank, then PPB): b3 (12.81) above a3 (12.38).
SEEDS = {
    "Championship": ["a1", "b1", "a2", "b2", "b3", "a3"],
    "Consolation": ["a4", "b4", "a5", "b5", "b6", "a6"],
}
# Playoffs: the crossover games, and the prelim games between teams of one playoff pool
# carried over (a1-a2, a1-a3, a2-a3, b1-b2, ...; b5's forfeit win over b6 included).
#  b1: crossover 2-1 (600 + 100, bonuses 370 + 50 on 30) + carried 2-0 (560, 330 on 24):
#      1260, PPB 750 / 54 = 13.89
#  a2: crossover 2-1 (700, 420 on 30) + carried 1-1 (400, 235 on 18): 1100, PPB 13.65
#  b2: crossover 1-2 (500, 285 on 24) + carried 1-1 (390, 225 on 18): 890, PPB 12.14
#  a3: crossover 1-2 (500, 285 on 24) + carried 0-2 (200, 100 on 12): 700, PPB 10.69
#  b3: crossover 0-3 (300, 150 on 18) + carried 0-2 (220, 120 on 12): 520, PPB 9.00
#  a6: crossover 3-0, one entered by score alone (600 + 250, 370 on 24) + carried 0-2
#      (200, 100 on 12): 1050, PPB 470 / 36 = 13.06
#  b4: crossover 0-3 (300, 150 on 18) + carried 2-0 (560, 330 on 24): 860, PPB 11.43
#  b5: crossover 0-3 (300, 150 on 18) + carried: forfeit win, loss to b4 (110, 60 on 6):
#      410 in 4 games, PPG 102.50, PPB 8.75
#  b6: crossover 0-3 (200 + 150 entered alone, 100 on 12) + carried: forfeit loss, loss to b4
#      (110, 60 on 6): 460 in 4 games, PPG 115.00, PPB 160 / 18 = 8.89
PLAYOFFS = {
    "Championship": [
        ("a1", 5, 0, 1500, 300.0, 15.42),
        ("b1", 4, 1, 1260, 252.0, 13.89),
        ("a2", 3, 2, 1100, 220.0, 13.65),
        ("b2", 2, 3, 890, 178.0, 12.14),
        ("a3", 1, 4, 700, 140.0, 10.69),
        ("b3", 0, 5, 520, 104.0, 9.0),
    ],
    "Consolation": [
        ("a4", 5, 0, 1500, 300.0, 15.42),
        ("a5", 4, 1, 1300, 260.0, 14.63),
        ("a6", 3, 2, 1050, 210.0, 13.06),
        ("b4", 2, 3, 860, 172.0, 11.43),
        ("b5", 1, 4, 410, 102.5, 8.75),
        ("b6", 0, 5, 460, 115.0, 8.89),
    ],
}


def _line(row):
    ppb = round(row.points_per_bonus, 2) if row.points_per_bonus is not None else None
    return (row.team, row.won, row.lost, row.points, row.points_per_game, ppb)


def _enter(engine, game, winner, win, loss):
    loser = next(t for t in game.teams if t != winner)
    enter_result(
        engine,
        "invitational",
        game,
        points={winner: win[0], loser: loss[0]},
        tossups_heard=20,
        counts={
            winner: {"tens": win[1], "negs": win[2], "bonus_points": win[3]},
            loser: {"tens": loss[1], "negs": loss[2], "bonus_points": loss[3]},
        },
    )


def _play(engine, plan, game, packet, winner):
    """The game played through the match core: the winner answers the first tossup."""
    teams = [TeamSpec(id=t, name=plan.team(t).name) for t in game.teams]
    config = match_config(packet, teams, tossup_ids=plan.round_(game.round).tossup_ids)
    live = MatchStore(engine).create(config, now=0.0, event=plan.name, game_id=game.id)
    for t in game.teams:
        live.handle(Join(team=t, player=f"p-{t}", name=f"Captain {t}"), now=1.0)
    live.handle(StartTossup(), now=2.0)
    live.handle(Reveal(to=40), now=3.0)
    live.handle(Buzz(team=winner, player=f"p-{winner}"), now=4.0)
    live.handle(Rule(ruling=Ruling.CORRECT), now=5.0)
    live.handle(EndMatch(), now=6.0)
    return live.match.scores


@on_both_backends
def test_a_twelve_team_tournament_is_played_to_the_end(db_url, tmp_path) -> None:
    upgrade(db_url)
    engine = make_engine(db_url)
    packet = load_packet(SAMPLE_PACKET_PATH)
    MatchStore(engine).save_packet(packet, source=SAMPLE_PACKET_PATH)
    create_event(
        engine,
        "invitational",
        teams=[TeamEntry(t, t.upper()) for t in [*POOL_A, *POOL_B]],
        defaults={"format": "acf"},
    )
    one = RoundPlan(0, packet.packet.id, (packet.tossups[0].id, packet.tossups[1].id))

    # Prelims: two pools of six, a round robin in each, six rooms
    prelims = PhasePlan(
        "prelims",
        "Prelims",
        "prelim",
        pools=(PoolPlan("a", "Pool A", tuple(POOL_A)), PoolPlan("b", "Pool B", tuple(POOL_B))),
    )
    games = pairing.assign_rooms(pairing.pooled_round_robin([POOL_A, POOL_B]), ROOMS)
    plan = set_schedule(
        engine,
        "invitational",
        rooms=ROOMS,
        rounds=[RoundPlan(r, one.packet_id, one.tossup_ids) for r in range(1, 6)],
        games=games,
        phase=prelims,
    )
    assert len(plan.rounds) == 5 and len([g for g in plan.games if not g.bye]) == 30
    assert {g.pool_id for g in plan.games} == {"a", "b"}
    for game in plan.games:
        pair = frozenset(game.teams)
        if set(game.teams) == set(FORFEIT):
            record_forfeit(engine, "invitational", game, FORFEIT[1])
            continue
        pool = POOL_A if game.teams[0] in POOL_A else POOL_B
        winner = UPSETS.get(pair) or min(game.teams, key=pool.index)
        win, loss = (A_WIN, A_LOSS) if pool is POOL_A else (B_WIN, B_LOSS)
        _enter(engine, game, winner, win, loss)

    _, pools = event_phase_standings(engine, "invitational", "prelims")
    assert {ps.pool.name: [_line(r) for r in ps.rows] for ps in pools} == PRELIMS
    a_rows = {r.team: r for r in pools[0].rows}
    assert a_rows["a3"].rank == a_rows["a4"].rank == a_rows["a5"].rank == 3
    by_team = {r.team: r for ps in pools for r in ps.rows}
    assert (by_team["b5"].forfeits, by_team["b6"].forfeits, by_team["b6"].games) == (1, 1, 4)

    tiers = [pairing.Tier("Championship", 3), pairing.Tier("Consolation", 3)]
    bracket = {"source": "prelims", "tiers": tiers, "packets": [one]}
    # a3, a4 and a5 share third place at the cut: refused until a tiebreaker
    with pytest.raises(RecordError, match="share a place at a cut: a3, a4, a5"):
        advance_phase(engine, "invitational", phase_id="playoffs", phase_name="Playoffs", **bracket)  # type: ignore[arg-type]

    # The tiebreaker, played through the match core: a3 beats a4 and a5, a4 beats a5
    plan = add_tiebreaker(engine, "invitational", teams=["a3", "a4", "a5"], packet=one)
    tiebreaker = plan.phase("Tiebreaker")
    assert tiebreaker is not None and tiebreaker.kind == "tiebreaker"
    tb_games = [g for g in plan.games if g.phase_id == tiebreaker.id and not g.bye]
    assert [g.round for g in tb_games] == [6, 7, 8]
    for game in tb_games:
        winner = "a3" if "a3" in game.teams else "a4"
        scores = _play(engine, plan, game, packet, winner)
        assert scores[winner] > 0
    _, tb = event_phase_standings(engine, "invitational", "Tiebreaker")
    assert [(r.team, r.won, r.lost) for r in tb[0].rows] == [
        ("a3", 2, 0),
        ("a4", 1, 1),
        ("a5", 0, 2),
    ]
    # the tiebreaker counts in no other phase: the prelims are as they were
    _, again = event_phase_standings(engine, "invitational", "prelims")
    assert {ps.pool.name: [_line(r) for r in ps.rows] for ps in again} == PRELIMS

    # Playoffs: re-bracketed by prelim finish, prelim games between teams that meet again
    # carried over, the others played (crossover: each team meets the three from the other
    # pool in three rounds)
    plan = advance_phase(
        engine, "invitational", phase_id="playoffs", phase_name="Playoffs", **bracket
    )  # type: ignore[arg-type]
    playoffs = plan.phase("playoffs")
    assert playoffs is not None
    assert {p.name: list(p.teams) for p in playoffs.pools} == SEEDS
    new = [g for g in plan.games if g.phase_id == "playoffs"]
    assert sorted({g.round for g in new}) == [9, 10, 11] and len(new) == 18
    carried = [g for g in plan.games if "playoffs" in g.carryover]
    assert len(carried) == 12  # three games in each half of each playoff pool
    assert all(frozenset(g.teams) not in {frozenset(c.teams) for c in carried} for g in new)
    for game in new:
        winner = PLAYOFF_WINNERS[frozenset(game.teams)]
        if set(game.teams) == {"a6", "b6"}:  # entered by its final score alone
            enter_result(engine, "invitational", game, points={"a6": 250, "b6": 150})
            continue
        _enter(engine, game, winner, A_WIN, A_LOSS)
    _, pools = event_phase_standings(engine, "invitational", "playoffs")
    assert {ps.pool.name: [_line(r) for r in ps.rows] for ps in pools} == PLAYOFFS

    # A double final: a1 (the advantage: 5-0 in the playoffs) must be beaten twice
    plan = add_final(engine, "invitational", teams=("a1", "b1"), packet=one, advantaged="a1")
    first = next(g for g in plan.games if g.phase_id == "finals")
    _play(engine, plan, first, packet, "b1")
    plan = load_plan(engine, "invitational")
    assert final_state(engine, plan) == (None, True)
    first = next(g for g in plan.games if g.id == first.id)
    with pytest.raises(RecordError, match=f"is match {first.match_id} in the record"):
        enter_result(engine, "invitational", first, points={"a1": 10, "b1": 0})
    plan = next_final_game(engine, "invitational", packet=one)
    second = next(g for g in plan.games if g.phase_id == "finals" and g.id != first.id)
    assert second.round == 13
    _play(engine, plan, second, packet, "a1")
    plan = load_plan(engine, "invitational")
    assert final_state(engine, plan) == ("a1", False)
    _, finals = event_phase_standings(engine, "invitational", "finals")
    assert [(r.team, r.won, r.lost) for r in finals[0].rows] == [("a1", 1, 1), ("b1", 1, 1)]

    # Every game is over; the whole event's standings count each game once
    assert all(g.ended for g in plan.games if not g.bye)
    _, overall = event_standings(engine, "invitational")
    total = {r.team: r.won + r.lost for r in overall}
    assert total["a1"] == 5 + 3 + 2  # prelims, crossover, final (carryover counted once)
    assert total["a3"] == 5 + 2 + 3
    # the stats report counts the games entered and forfeited as the standings do
    from grace_arena.io.stats_report import html_stats, load_event_stats

    plan, stats, plays = load_event_stats(engine, "invitational")
    assert stats.standings == overall
    assert len(stats.games) == len([g for g in plan.games if not g.bye])
    assert "250" in html_stats(plan, stats, plays)
    _check_qbj(engine, tmp_path)
    engine.dispose()


def _check_qbj(engine, tmp_path) -> None:
    """The tournament file: its phases (YellowFruit's types and codes), pools in seed order,
    rounds numbered on from phase to phase, carryover, the tiebreakers, the forfeit and the
    games entered by their score."""
    import json

    from grace_arena.io.exports import export

    export(engine, "qbj", tmp_path / "qbj", events=["invitational"])
    data = json.loads((tmp_path / "qbj" / "invitational.qbj").read_text())
    assert data["version"] == "2.1.1"
    by_id = {o["id"]: o for o in data["objects"] if "id" in o}
    (tournament,) = [o for o in data["objects"] if o["type"] == "Tournament"]
    team_name = {t["id"]: t["name"] for r in tournament["registrations"] for t in r["teams"]}
    phases = tournament["phases"]
    assert [(p["name"], p["YfData"]["phaseType"], p["YfData"]["code"]) for p in phases] == [
        ("Prelims", "Prelim", "1"),
        ("Tiebreaker", "Tiebreaker", "2T"),
        ("Playoffs", "Playoff", "2"),
        ("Finals", "Finals", "3"),
    ]
    pools = {
        (p["name"], pool["name"]): [team_name[pt["team"]["$ref"]] for pt in pool["pool_teams"]]
        for p in phases
        for pool in p["pools"]
    }
    assert pools[("Prelims", "Pool A")] == [t.upper() for t in POOL_A]
    assert pools[("Playoffs", "Championship")] == [t.upper() for t in SEEDS["Championship"]]
    numbers = [[int(r["name"]) for r in p["rounds"]] for p in phases]
    assert numbers == [[1, 2, 3, 4, 5], [6, 7, 8], [9, 10, 11], [12, 13]]
    matches = {
        p["name"]: [by_id[m["$ref"]] for r in p["rounds"] for m in r["matches"]] for p in phases
    }
    assert [len(matches[p]) for p in ("Prelims", "Tiebreaker", "Playoffs", "Finals")] == [
        30,
        3,
        18,
        2,
    ]
    carried = [m for m in matches["Prelims"] if m["carryover_phases"]]
    assert len(carried) == 12
    assert {m["carryover_phases"][0]["$ref"] for m in carried} == {phases[2]["id"]}
    assert all(m.get("tiebreaker") for m in matches["Tiebreaker"])
    assert not any(m.get("tiebreaker") for m in matches["Prelims"] + matches["Playoffs"])

    def teams_of(m):
        return {team_name[e["team"]["$ref"]]: e for e in m["match_teams"]}

    (forfeit,) = [
        m for m in matches["Prelims"] if any(e.get("forfeit_loss") for e in m["match_teams"])
    ]
    sides = teams_of(forfeit)
    assert set(sides) == {"B5", "B6"} and sides["B6"]["forfeit_loss"] is True
    assert sides["B5"]["forfeit_loss"] is False and "tossups_read" not in forfeit
    (alone,) = [m for m in matches["Playoffs"] if set(teams_of(m)) == {"A6", "B6"}]
    assert {n: e["points"] for n, e in teams_of(alone).items()} == {"A6": 250, "B6": 150}
    # a game entered with statistics adds up as YellowFruit adds it: answers and bonuses
    entered = next(m for m in matches["Prelims"] if set(teams_of(m)) == {"A1", "A2"})
    for name, entry in teams_of(entered).items():
        answers = sum(
            c["number"] * c["answer_type"]["value"]
            for mp in entry["match_players"]
            for c in mp["answer_counts"]
        )
        assert answers + entry["bonus_points"] == entry["points"] == (300 if name == "A1" else 100)
        assert [mp["tossups_heard"] for mp in entry["match_players"]] == [20]


@on_both_backends
def test_an_entered_result_that_does_not_add_up_is_refused_and_stores_nothing(db_url) -> None:
    upgrade(db_url)
    engine = make_engine(db_url)
    packet = load_packet(SAMPLE_PACKET_PATH)
    MatchStore(engine).save_packet(packet, source=SAMPLE_PACKET_PATH)
    create_event(
        engine, "cup", teams=[TeamEntry("x", "X"), TeamEntry("y", "Y")], defaults={"format": "acf"}
    )
    plan = set_schedule(
        engine,
        "cup",
        rooms=["1"],
        rounds=[RoundPlan(1, packet.packet.id)],
        games=pairing.assign_rooms(pairing.round_robin(["x", "y"]), ["1"]),
    )
    game = find_game(plan, 1, ["y", "x"])
    for points, counts, message in (
        ({"x": 100}, None, "give the points of x and y"),
        ({"x": 100, "y": 50}, {"x": {"tens": 20, "negs": 0, "bonus_points": 0}}, "make 200 points"),
        ({"x": 100, "y": 50}, {"x": {"tens": 2, "bonus_points": 80}}, "cannot be"),
        ({"x": 300, "y": 70}, {"x": {"tens": 15}, "y": {"tens": 6}}, "21 tossups answered"),
        ({"x": 100, "y": 50}, {"x": {"powers": 1, "tens": 0}}, "rules have none"),
    ):
        with pytest.raises(RecordError, match=message):
            enter_result(engine, "cup", game, points=points, counts=counts)
    assert load_plan(engine, "cup").games[0].result is None
    with pytest.raises(RecordError, match="no game of round 1 between x and z"):
        find_game(plan, 1, ["x", "z"])
    with pytest.raises(RecordError, match="'z' is not in round 1"):
        record_forfeit(engine, "cup", game, "z")
    plan = record_forfeit(engine, "cup", game, "y")
    _, rows = event_standings(engine, "cup")
    by = {r.team: r for r in rows}
    assert (by["x"].won, by["x"].played, by["x"].points_per_game, by["y"].lost) == (1, 0, None, 1)
    with pytest.raises(RecordError, match="has a result already"):
        enter_result(engine, "cup", plan.games[0], points={"x": 10, "y": 0})
    with pytest.raises(RecordError, match="round 1 has started \\(a game of it was decided\\)"):
        set_schedule(engine, "cup", rooms=["1"], rounds=[RoundPlan(1, packet.packet.id)], games=[])
    engine.dispose()


def test_a_director_runs_the_phases_from_the_command_line(db_url) -> None:
    import json

    from typer.testing import CliRunner

    from grace_arena.cli import app

    runner = CliRunner()

    def run(*args: str) -> str:
        result = runner.invoke(app, [*args, "--db", db_url])
        assert result.exit_code == 0, result.output
        return result.output

    teams = ["Ash", "Birch", "Cedar", "Dogwood", "Elm", "Fir", "Gum", "Hazel"]
    run("event", "create", "cup", *[x for t in teams for x in ("--team", t)], "--rules", "acf")
    out = run(
        "event",
        "schedule",
        "cup",
        "--pools",
        "2",
        "--rooms",
        "4",
        "--packet",
        str(SAMPLE_PACKET_PATH),
        "--tossups",
        "1-2",
    )
    assert "Pool A" in out and "Ash, Dogwood, Elm, Hazel" in out  # the snake: 1, 4, 5, 8
    engine = make_engine(db_url)
    plan = load_plan(engine, "cup")
    assert [len(p.teams) for p in plan.phases[0].pools] == [4, 4] and len(plan.rounds) == 3
    seed = {t.id: i for i, t in enumerate(plan.teams)}
    names = {t.id: t.name for t in plan.teams}
    for game in plan.games:
        win, lose = sorted(game.teams, key=seed.get)  # type: ignore[arg-type]
        if {names[win], names[lose]} == {"Elm", "Hazel"}:
            out = run(
                "event",
                "forfeit",
                "cup",
                "--round",
                str(game.round),
                "--team",
                "Hazel",
                "--against",
                "Elm",
            )
            assert "Hazel forfeits to Elm" in out
            continue
        run(
            "event",
            "score",
            "cup",
            "--round",
            str(game.round),
            "--team",
            f"{names[win]}=300",
            "--team",
            f"{names[lose]}=100",
            "--buzzes",
            f"{names[win]}=0/12/1",
            "--buzzes",
            f"{names[lose]}=0/6/2",
        )
    refused = runner.invoke(
        app,
        [
            "event",
            "score",
            "cup",
            "--round",
            "1",
            "--team",
            "Ash=5",
            "--team",
            "Gum=0",
            "--db",
            db_url,
        ],
    )
    assert refused.exit_code == 1 and "no game of round 1 between" in refused.output
    data = json.loads(run("event", "standings", "cup", "--phase", "Prelims", "--json"))
    pool_a = data["pools"][0]["rows"]
    assert [(r["name"], r["won"], r["lost"]) for r in pool_a] == [
        ("Ash", 3, 0),
        ("Dogwood", 2, 1),
        ("Elm", 1, 2),
        ("Hazel", 0, 3),
    ]
    hazel = next(r for r in pool_a if r["name"] == "Hazel")
    # Hazel: a forfeit and two losses of 100: 200 points in 2 games
    assert (hazel["forfeits"], hazel["games"], hazel["points"]) == (1, 2, 200)
    out = run(
        "event",
        "advance",
        "cup",
        "--tier",
        "Upper:2",
        "--tier",
        "Lower:2",
        "--packet",
        str(SAMPLE_PACKET_PATH),
        "--tossups",
        "3-4",
    )
    assert "Playoffs" in out and "carried over" in out
    plan = load_plan(engine, "cup")
    upper = plan.phase("Playoffs").pools[0]  # type: ignore[union-attr]
    assert [names[t] for t in upper.teams][:2] == ["Ash", "Birch"]
    playoff_games = [g for g in plan.games if g.phase_id == plan.phase("Playoffs").id]  # type: ignore[union-attr]
    assert len(playoff_games) == 8 and {g.round for g in playoff_games} == {4, 5}
    # the event's projector: every prelim game played, each room's first playoff game next
    from grace_arena.server.schedules import schedule_of

    statuses = {(m.round, m.room): m.status for m in schedule_of(plan)}
    assert {r for r, _ in statuses} == {4, 5}
    assert [s for (r, _), s in sorted(statuses.items()) if r == 4] == ["next"] * 4
    shown = run("event", "show", "cup")
    assert "phases" in shown and "Upper" in shown and "forfeited by Hazel" in shown
    table = run("event", "standings", "cup", "--phase", "playoffs")
    assert "Playoffs, Upper" in table and "Playoffs, Lower" in table
    assert "Prelims, Pool B" in run("event", "stats", "cup", "--phase", "Prelims")
    missing = runner.invoke(app, ["event", "standings", "cup", "--phase", "Semis", "--db", db_url])
    assert (
        missing.exit_code == 1 and "no phase 'Semis' (phases: Prelims, Playoffs)" in missing.output
    )
    engine.dispose()


@on_both_backends
def test_a_single_elimination_bracket_is_played_round_by_round_to_its_winner(db_url) -> None:
    from typer.testing import CliRunner

    from grace_arena.cli import app

    runner = CliRunner()

    def run(*args: str) -> str:
        result = runner.invoke(app, [*args, "--db", db_url])
        assert result.exit_code == 0, result.output
        return result.output

    teams = ["One", "Two", "Three", "Four", "Five"]
    run("event", "create", "ko", *[x for t in teams for x in ("--team", t)])
    run(
        "event",
        "schedule",
        "ko",
        "--pools",
        "1",
        "--rooms",
        "2",
        "--rounds",
        "1",
        "--packet",
        str(SAMPLE_PACKET_PATH),
        "--tossups",
        "1-2",
    )
    engine = make_engine(db_url)
    for game in load_plan(engine, "ko").games:  # round 1 of the pool: scores to start from
        if not game.bye:
            enter_result(engine, "ko", game, points=dict(zip(game.teams, (30, 10), strict=True)))
    out = run(
        "event",
        "bracket",
        "ko",
        *[x for t in teams for x in ("--team", t)],
        "--packet",
        str(SAMPLE_PACKET_PATH),
    )
    plan = load_plan(engine, "ko")
    first = [g for g in plan.games if g.phase_id == "bracket"]
    # five teams: a bracket of eight, the top three seeds through on byes, four plays five
    assert [g.teams for g in first if not g.bye] == [("four", "five")]
    assert sorted(g.teams for g in first if g.bye) == [("one",), ("three",), ("two",)]
    refused = runner.invoke(
        app, ["event", "bracket", "ko", "--packet", str(SAMPLE_PACKET_PATH), "--db", db_url]
    )
    assert refused.exit_code == 1 and "is not over" in refused.output
    seed = {t.lower(): i for i, t in enumerate(teams)}
    for _ in range(3):  # the better seed wins each game, but five beats four
        plan = load_plan(engine, "ko")
        for g in plan.games:
            if g.phase_id == "bracket" and not g.bye and not g.ended:
                win = "five" if set(g.teams) == {"four", "five"} else min(g.teams, key=seed.get)
                lose = next(t for t in g.teams if t != win)
                enter_result(engine, "ko", g, points={win: 200, lose: 100})
        out = run("event", "bracket", "ko", "--packet", str(SAMPLE_PACKET_PATH))
    plan = load_plan(engine, "ko")
    rounds = {}
    for g in plan.games:
        if g.phase_id == "bracket" and not g.bye:
            rounds.setdefault(g.round, []).append(set(g.teams))
    assert rounds == {
        2: [{"four", "five"}],
        3: [{"one", "five"}, {"two", "three"}],
        4: [{"one", "two"}],
    }
    assert "Bracket is won by One" in out
    engine.dispose()


def test_teams_come_from_a_qbj_registration_and_a_game_from_a_modaq_match_file(
    db_url, tmp_path
) -> None:
    import json

    from typer.testing import CliRunner

    from grace_arena.cli import app

    runner = CliRunner()
    # a tournament file whose registrations are references (as YellowFruit writes them), one
    # registration written in place (as MODAQ wants them)
    registration = {
        "version": "2.1.1",
        "objects": [
            {
                "type": "Tournament",
                "name": "Cup",
                "registrations": [
                    {"$ref": "reg_1"},
                    {
                        "name": "Oak",
                        "teams": [{"name": "Oak", "players": [{"name": "Ola"}, {"name": "Omar"}]}],
                    },
                ],
            },
            {
                "type": "Registration",
                "id": "reg_1",
                "name": "Pine",
                "teams": [{"$ref": "team_pine"}],
            },
            {
                "type": "Team",
                "id": "team_pine",
                "name": "Pine",
                "players": [{"id": "p1", "name": "Pat"}, {"$ref": "p2"}],
            },
            {"type": "Player", "id": "p2", "name": "Pia"},
        ],
    }
    (tmp_path / "cup.qbj").write_text(json.dumps(registration))
    result = runner.invoke(
        app,
        [
            "event",
            "create",
            "cup",
            "--teams-from",
            str(tmp_path / "cup.qbj"),
            "--rules",
            "acf",
            "--db",
            db_url,
        ],
    )
    assert result.exit_code == 0, result.output
    plan = load_plan(make_engine(db_url), "cup")
    assert [t.name for t in plan.teams] == ["Pine", "Oak"]
    assert sorted((p.team, p.name) for p in plan.players) == [
        ("oak", "Ola"),
        ("oak", "Omar"),
        ("pine", "Pat"),
        ("pine", "Pia"),
    ]
    result = runner.invoke(
        app, ["event", "schedule", "cup", "--packet", str(SAMPLE_PACKET_PATH), "--db", db_url]
    )
    assert result.exit_code == 0, result.output
    # MODAQ's match file: answer counts per player, bonus points, no total (YellowFruit adds)
    match = {
        "version": "2.1.1",
        "objects": [
            {
                "type": "Match",
                "_round": 1,
                "tossups_read": 20,
                "match_teams": [
                    {
                        "team": {"name": "Pine"},
                        "bonus_points": 110,
                        "match_players": [
                            {
                                "player": {"name": "Pat"},
                                "tossups_heard": 20,
                                "answer_counts": [
                                    {"number": 7, "answer_type": {"value": 10}},
                                    {"number": 1, "answer_type": {"value": -5}},
                                ],
                            },
                            {
                                "player": {"name": "Pia"},
                                "tossups_heard": 20,
                                "answer_counts": [
                                    {"number": 4, "answer_type": {"value": 10}},
                                    {"number": 2, "answer_type": {"value": 0}},
                                ],
                            },
                        ],
                    },
                    {
                        "team": {"name": "Oak"},
                        "bonus_points": 40,
                        "match_players": [
                            {
                                "player": {"name": "Ola"},
                                "tossups_heard": 20,
                                "answer_counts": [{"number": 5, "answer_type": {"value": 10}}],
                            }
                        ],
                    },
                ],
            }
        ],
    }
    (tmp_path / "round1.qbj").write_text(json.dumps(match))
    result = runner.invoke(
        app, ["event", "score", "cup", "--from", str(tmp_path / "round1.qbj"), "--db", db_url]
    )
    assert result.exit_code == 0, result.output
    assert "Pine 215, Oak 90 (entered)" in result.output  # 110 - 5 + 110; 50 + 40
    _, rows = event_standings(make_engine(db_url), "cup")
    by = {r.team: r for r in rows}
    assert (by["pine"].won, by["pine"].points, by["pine"].correct, by["pine"].negs) == (
        1,
        215,
        11,
        1,
    )
    assert round(by["pine"].points_per_bonus, 2) == round(110 / 11, 2)
    assert (by["oak"].lost, by["oak"].bonuses_heard, by["oak"].bonus_points) == (1, 5, 40)
    again = runner.invoke(
        app, ["event", "score", "cup", "--from", str(tmp_path / "round1.qbj"), "--db", db_url]
    )
    assert again.exit_code == 1 and "has a result already" in again.output
    (tmp_path / "bad.qbj").write_text(json.dumps({"objects": [{"type": "Tournament"}]}))
    bad = runner.invoke(
        app, ["event", "create", "x", "--teams-from", str(tmp_path / "bad.qbj"), "--db", db_url]
    )
    assert bad.exit_code == 2 and "no registration or team in the file" in bad.output
