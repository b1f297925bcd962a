"""A director's standard schedule and a phase played by NAQT's card system, from the command
line to the record (both backends): the schedule the core makes is the one stored, the cards
pass to the winners, and the phase's standings are the games' results."""

from __future__ import annotations

import json

from backends import on_both_backends
from typer.testing import CliRunner

from grace_arena.cli import app
from grace_arena.core import schedule as pairing
from grace_arena.core.packet import SAMPLE_PACKET_PATH
from grace_arena.record.db import make_engine
from grace_arena.record.schedule import card_state, load_plan

runner = CliRunner()


def _run(db_url: str, *args: str, code: int = 0) -> str:
    result = runner.invoke(app, [*args, "--db", db_url])
    assert result.exit_code == code, result.output
    return result.output


@on_both_backends
def test_a_standard_schedule_is_picked_by_the_team_count(db_url, tmp_path) -> None:
    names = [f"Team {c}" for c in "ABCDEFGHIJK"]  # 11 teams: pools of 5 and 6 (the snake)
    _run(db_url, "event", "create", "cup", *[x for t in names for x in ("--team", t)])
    out = _run(
        db_url, "event", "schedule", "cup", "--standard", "--rooms", "3",
        "--packet", str(SAMPLE_PACKET_PATH), code=2,
    )  # fmt: skip
    assert "--standard makes the pools and rooms" in out
    out = _run(
        db_url, "event", "schedule", "cup", "--standard", "--packet", str(SAMPLE_PACKET_PATH),
        "--tossups", "1-2",
    )  # fmt: skip
    assert "Pool A" in out and "Pool B" in out
    plan = load_plan(make_engine(db_url), "cup")
    made = pairing.standard_schedule([t.id for t in plan.teams])
    assert [r.name for r in plan.rooms] == made.rooms == ["1", "2", "3", "4", "5"]
    assert len(plan.rounds) == made.rounds == 5
    assert [list(p.teams) for p in plan.phases[0].pools] == made.pools
    stored = sorted((g.round, g.room_id or "-", g.teams) for g in plan.games)
    assert stored == sorted((g.round, g.room or "-", g.teams) for g in made.games)
    byes = [g for g in plan.games if g.bye]
    assert len(byes) == 5 and {g.pool_id for g in byes} == {"a"}  # pool A has 5: a bye each
    # the byes are recorded: in the phase's standings and in the QBJ tournament file's rounds
    view = json.loads(_run(db_url, "event", "standings", "cup", "--phase", "Prelims", "--json"))
    got = {r["team"]: r["byes"] for p in view["pools"] for r in p["rows"]}
    assert got == {g.teams[0]: [g.round] for g in byes} | {t: [] for t in made.pools[1]}
    out = _run(db_url, "event", "standings", "cup", "--phase", "Prelims")
    assert "byes: Team A (round " in out
    folder = tmp_path / "qbj"
    _run(db_url, "export", "--format", "qbj", "--event", "cup", "--out", str(folder))
    tournament = json.loads((folder / "cup.qbj").read_text())["objects"][0]
    rounds = tournament["phases"][0]["rounds"]
    assert [len(r["_grace_arena"]["byes"]) for r in rounds] == [1] * 5
    names = {plan.team(g.teams[0]).name: g.round for g in byes}
    assert {r["_grace_arena"]["byes"][0]["$ref"]: int(r["name"]) for r in rounds} == {
        f"Team_{name}": number for name, number in names.items()
    }


# The eight teams' results, the better seed winning but s8 over s4 (twice): the hand-worked
# bracket of tests/test_schedule.py. Each winner 200-100 (ACF: tossup points and bonuses left
# unknown: W-L, points and PPG count).
UPSETS = {frozenset(("s4", "s8")): "s8"}


@on_both_backends
def test_a_card_phase_is_played_round_by_round_by_the_cards(db_url) -> None:
    seeds = [f"s{i}" for i in range(1, 9)]
    _run(db_url, "event", "create", "hs", *[x for t in seeds for x in ("--team", t)],
         "--rules", "acf")  # fmt: skip
    packet = ("--packet", str(SAMPLE_PACKET_PATH), "--tossups", "1-2")
    teams = [x for t in seeds for x in ("--team", t)]
    out = _run(db_url, "event", "cards", "hs", *packet, *teams, code=2)
    assert "--rounds N" in out  # the first run needs the schedule's length
    out = _run(db_url, "event", "cards", "hs", "--rounds", "3", *packet, *teams)
    assert "cards after 0 of 3 rounds" in out
    engine = make_engine(db_url)
    plan = load_plan(engine, "hs")
    assert [r.name for r in plan.rooms] == ["1", "2", "3", "4"]
    assert sorted(g.teams for g in plan.games) == [
        ("s1", "s5"), ("s2", "s6"), ("s3", "s7"), ("s4", "s8")
    ]  # fmt: skip
    out = _run(db_url, "event", "cards", "hs", *packet, code=1)
    assert "not over" in out  # the cards pass once every game of the round is over
    for number in (1, 2, 3):
        plan = load_plan(engine, "hs")
        for g in (g for g in plan.games if g.round == number):
            pair = frozenset(g.teams)
            won = UPSETS.get(pair, min(g.teams, key=lambda t: int(t[1:])))
            lost = next(t for t in g.teams if t != won)
            _run(db_url, "event", "score", "hs", "--round", str(number),
                 "--team", f"{won}=200", "--team", f"{lost}=100")  # fmt: skip
        out = _run(db_url, "event", "cards", "hs", *packet)
        plan = load_plan(engine, "hs")
        state = card_state(engine, plan)
        assert state.played == number
    assert "Cards has played its 3 rounds" in out
    assert state.holders == {
        1: "s1", 2: "s2", 3: "s5", 4: "s6", 5: "s3", 6: "s8", 7: "s4", 8: "s7"
    }  # fmt: skip
    assert len(plan.rounds) == 3  # no round beyond the schedule's
    rows = json.loads(_run(db_url, "event", "standings", "hs", "--phase", "Cards", "--json"))
    got = {r["team"]: (r["won"], r["lost"], r["points"]) for r in rows["pools"][0]["rows"]}
    assert got == {
        "s1": (3, 0, 600), "s2": (2, 1, 500), "s3": (2, 1, 500), "s8": (2, 1, 500),
        "s4": (1, 2, 400), "s5": (1, 2, 400), "s6": (1, 2, 400), "s7": (0, 3, 300),
    }  # fmt: skip
    # each round's games were between teams of records within one win: the card guarantee
    record = {t: [0, 0] for t in seeds}
    for number in (1, 2, 3):
        for g in (g for g in plan.games if g.round == number):
            a, b = g.teams
            assert abs(record[a][0] - record[b][0]) <= 1
            won = g.teams[0] if g.result["points"][a] > g.result["points"][b] else b
            record[won][0] += 1
            record[a if won == b else b][1] += 1
    engine.dispose()


def test_a_card_phase_of_one_team_is_refused(db_url) -> None:
    _run(db_url, "event", "create", "tiny", "--team", "A", "--team", "B")
    out = _run(db_url, "event", "cards", "tiny", "--rounds", "0", "--team", "A",
               "--packet", str(SAMPLE_PACKET_PATH), code=2)  # fmt: skip
    assert "--rounds" in out
    out = _run(db_url, "event", "cards", "tiny", "--rounds", "2", "--team", "A",
               "--packet", str(SAMPLE_PACKET_PATH), code=1)  # fmt: skip
    assert "needs at least 2 teams" in out
