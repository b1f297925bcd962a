"""Tournament statistics (grace_arena.core.stats) of an event played through the record,
checked against numbers worked by hand; the standings and the stats report agree.

The event (``played_event``): Red, Blue and Green, NAQT rules with bouncebacks (power 15,
ten 10, neg −5, bonuses 3×10), the sample packet's first four tossups in each of 2 rounds,
all in room 1 (a bye each round).

Round 1, Red (Ann, Ada) vs Blue (Bo):
  T1 Ann power 15; bonus 1 to Red: ✓ ✗(Blue ✓ 10) ✓ → Red 20
  T2 Bo neg −5, Ada ten 10; bonus 2 to Red: ✓ ✓ ✗(Blue ✗) → Red 20
  T3 Bo neg −5, Ann wrong 0 (NAQT negs only the first team): dead, no bonus
  T4 Bo ten 10; bonus 3 to Blue: ✗(Red ✓ 10) ✗(Red ✗) ✓ → Blue 10
  Red 15+20+10+20+10 = 75, Blue 10−5−5+10+10 = 20
Round 2, Red (Ann) vs Green (Gil):
  T1 Gil ten 10; bonus 1 to Green: ✓ ✓ ✓ → 30
  T2 Ann power 15; bonus 2 to Red: ✗(Green ✗) ✗(Green ✓ 10) ✗(Green ✗) → 0
  T3 Gil power 15; bonus 3 to Green: ✓ ✗(Red ✗) ✗(Red ✗) → 10
  T4 Ann neg −5, Gil ten 10; bonus 4 to Green: ✓ ✓ ✗(Red ✓ 10) → 20
  Red 15−5+10 = 20, Green 10+30+10+15+10+10+20 = 105
"""

from __future__ import annotations

import pytest
from backends import on_both_backends
from event_helpers import make_event

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
from grace_arena.core.events import Ruling
from grace_arena.core.formats import rules_for
from grace_arena.core.packet import SAMPLE_PACKET_PATH, load_packet
from grace_arena.core.specs import match_config
from grace_arena.core.stats import event_stats, match_play, per_20_tuh, win_pct
from grace_arena.record.db import make_engine
from grace_arena.record.schedule import (
    RoundPlan,
    TeamEntry,
    event_standings,
    load_plan,
    set_schedule,
)
from grace_arena.record.store import MatchStore

C, X = Ruling.CORRECT, Ruling.INCORRECT
TEAMS = [TeamEntry("red", "Red"), TeamEntry("blue", "Blue"), TeamEntry("green", "Green")]
PLAYERS = {"red": ["Ann", "Ada"], "blue": ["Bo"], "green": ["Gil"], "gold": ["Guy"]}

# (round, room, slot, teams, players joining, cycles); a cycle is its buzzes (player, word,
# ruling) then its bonus parts' rulings in order (a bounceback's ruling right after the part)
ROUND_1 = [
    ([("Ann", 5, C)], [C, X, C, C]),
    ([("Bo", 5, X), ("Ada", 90, C)], [C, C, X, X]),
    ([("Bo", 10, X), ("Ann", 20, X)], []),
    ([("Bo", 100, C)], [X, C, X, X, C]),
]
ROUND_2 = [
    ([("Gil", 100, C)], [C, C, C]),
    ([("Ann", 5, C)], [X, X, X, C, X, X]),
    ([("Gil", 5, C)], [C, X, X, X, X]),
    ([("Ann", 10, X), ("Gil", 100, C)], [C, C, X, C]),
]
GAMES = [
    pairing.Game(1, "1", 0, ("red", "blue")),
    pairing.Game(1, None, 0, ("green",)),
    pairing.Game(2, "1", 0, ("red", "green")),
    pairing.Game(2, None, 0, ("blue",)),
]
SCRIPTS = {("red", "blue"): (["Ann", "Ada", "Bo"], ROUND_1),
           ("red", "green"): (["Ann", "Gil"], ROUND_2)}  # fmt: skip


def team_of(player: str) -> str:
    return next(t for t, names in PLAYERS.items() if player in names)


def play(match, joining, cycles, *, now: float = 1.0) -> None:
    """Play ``cycles`` in a created match, then end it."""
    for name in joining:
        match.handle(Join(team=team_of(name), player=name.lower(), name=name), now=now)
    for buzzes, parts in cycles:
        match.handle(StartTossup(), now=now)
        for name, word, ruling in buzzes:
            match.handle(Reveal(to=word), now=now)
            match.handle(Buzz(team=team_of(name), player=name.lower()), now=now)
            match.handle(Rule(ruling=ruling), now=now)
        for ruling in parts:
            match.handle(RulePart(ruling=ruling), now=now)
    match.handle(EndMatch(), now=now)


def played_event(db_url: str, *, name: str = "stats", games=GAMES, scripts=SCRIPTS, teams=TEAMS,
                 rules=None):  # fmt: skip
    """The event of the module docstring, played and over, in the record at ``db_url``:
    its plan, and the engine (the caller disposes of it). ``rules``: the rules of every match,
    or a dict of them by round."""
    rules = rules or rules_for("naqt", bouncebacks=True)
    by_round = rules if isinstance(rules, dict) else {1: rules, 2: rules}
    make_event(db_url, name=name, teams=teams, rounds=2, rooms=("1",), fmt="round_robin",
               tossups=4, players=[(team_of(p), p) for t in PLAYERS.values() for p in t
                                   if team_of(p) in {x.id for x in teams}])  # fmt: skip
    engine = make_engine(db_url)
    packet = load_packet(SAMPLE_PACKET_PATH)
    ids = tuple(t.id for t in packet.tossups[:4])
    plan = set_schedule(engine, name, rooms=["1"], games=games,
                        rounds=[RoundPlan(r, packet.packet.id, ids) for r in (1, 2)])  # fmt: skip
    for game in plan.games:
        if game.bye:
            continue
        specs = [TeamSpec(id=t, name=plan.team(t).name) for t in game.teams]
        config = match_config(packet, specs, tossup_ids=ids, rules=by_round[game.round])
        match = MatchStore(engine).create(config, now=0.0, event=name, game_id=game.id)
        joining, cycles = scripts[game.teams]
        play(match, joining, cycles)
    return load_plan(engine, name), engine


def plays_of(engine, plan):
    store = MatchStore(engine)
    return [
        match_play(store.events(g.match_id), match_id=g.match_id, round=g.round, room=g.room_id)
        for g in plan.games
        if g.match_id is not None
    ]


def test_the_metrics_are_their_formulas() -> None:
    assert win_pct(1, 1) == 0.5 and win_pct(0, 0) == 0.0 and win_pct(1, 0, 1) == 0.75
    assert per_20_tuh(90, 8) == 225.0 and per_20_tuh(5, 0) is None
    with pytest.raises(ValueError, match="tossups_heard must be >= 0, got -1"):
        per_20_tuh(1, -1)


@on_both_backends
def test_an_events_stats_are_the_hand_worked_numbers(db_url) -> None:
    plan, engine = played_event(db_url)
    try:
        plays = plays_of(engine, plan)
        _, rows = event_standings(engine, "stats")
    finally:
        engine.dispose()
    assert [p.result().teams[t].points for p in plays for t in p.teams] == [75, 20, 20, 105]
    stats = event_stats(plan.team_infos(), plays)
    # the live standings (read from the record's buzz rows) and the stats (replayed) agree
    assert stats.standings == rows
    by = {s.team: s for s in rows}
    assert [(s.team, s.rank) for s in rows] == [("green", 1), ("red", 2), ("blue", 3)]
    red, blue, green = by["red"], by["blue"], by["green"]
    assert (red.won, red.lost, red.games, red.win_pct) == (1, 1, 2, 0.5)
    assert (red.points, red.points_per_game, red.tossups_heard) == (95, 47.5, 8)
    assert red.points_per_20_tuh == 237.5  # 95 / 8 × 20
    assert (red.powers, red.correct - red.powers, red.negs, red.incorrect) == (2, 1, 1, 2)
    assert (red.bonuses_heard, red.bonus_points) == (3, 40)
    assert red.points_per_bonus == pytest.approx(40 / 3)
    assert (red.bounceback_points, red.bounceback_parts, red.bounceback_available) == (20, 5, 50)
    assert red.bounceback_conversion == 0.4
    assert (blue.won, blue.lost, blue.points, blue.points_per_20_tuh) == (0, 1, 20, 100.0)
    assert (blue.powers, blue.correct, blue.negs, blue.points_per_bonus) == (0, 1, 2, 10.0)
    assert blue.bounceback_conversion == 0.5  # 10 of 20
    assert (green.won, green.points, green.points_per_game, green.points_per_20_tuh) == (
        1, 105, 105.0, 525.0)  # fmt: skip
    assert (green.powers, green.correct, green.negs) == (1, 3, 0)
    assert (green.bonuses_heard, green.bonus_points, green.points_per_bonus) == (3, 60, 20.0)
    assert green.bounceback_conversion == pytest.approx(1 / 3)  # 10 of 30

    players = {(p.team, p.name): p for p in stats.players}
    ann, ada, bo, gil = (players[k] for k in (("red", "Ann"), ("red", "Ada"), ("blue", "Bo"),
                                              ("green", "Gil")))  # fmt: skip
    assert (ann.games, ann.tossups_heard, ann.powers, ann.tens, ann.negs, ann.points) == (
        2, 8, 2, 0, 1, 25)  # fmt: skip
    assert ann.incorrect == 2  # her wrong answer after Bo's neg is no neg
    assert (ann.points_per_20_tuh, ann.points_per_game) == (62.5, 12.5)
    assert (ada.games, ada.tossups_heard, ada.tens, ada.points, ada.points_per_20_tuh) == (
        1, 4, 1, 10, 50.0)  # fmt: skip
    assert (bo.tens, bo.negs, bo.points, bo.points_per_20_tuh) == (1, 2, 0, 0.0)
    assert (gil.powers, gil.tens, gil.points, gil.points_per_20_tuh) == (1, 2, 35, 175.0)
    assert [p.name for p in stats.players] == ["Gil", "Ann", "Ada", "Bo"]  # by P/20TUH, then points

    assert [(t.number, t.heard, t.correct, t.powers, t.negs) for t in stats.tossups] == [
        (1, 2, 2, 1, 0),
        (2, 2, 2, 1, 1),
        (3, 2, 1, 1, 1),
        (4, 2, 2, 0, 1),
    ]
    assert [(t.conversion, t.power_rate) for t in stats.tossups] == [
        (1.0, 0.5), (1.0, 0.5), (0.5, 0.5), (1.0, 0.0)]  # fmt: skip
    assert [(b.number, b.heard, b.points, b.points_per_bonus) for b in stats.bonuses] == [
        (1, 2, 50, 25.0),
        (2, 2, 20, 10.0),
        (3, 2, 20, 10.0),
        (4, 1, 20, 20.0),
    ]
    assert [b.part_conversion for b in stats.bonuses] == [
        (1.0, 0.5, 1.0),
        (0.5, 0.5, 0.0),
        (0.5, 0.0, 0.5),
        (1.0, 1.0, 0.0),
    ]
    assert [(g.round, g.room, g.scores) for g in stats.games] == [
        (1, "1", (("red", 75), ("blue", 20))),
        (2, "1", (("red", 20), ("green", 105))),
    ]


def test_one_match_alone_is_an_event_of_one_match(db_url) -> None:
    plan, engine = played_event(db_url)
    try:
        first = plays_of(engine, plan)[:1]
    finally:
        engine.dispose()
    stats = event_stats(plan.team_infos(), first)
    by = {s.team: s for s in stats.standings}
    assert (by["red"].points, by["blue"].points, by["green"].games) == (75, 20, 0)
    assert by["red"].points_per_bonus == 20.0 and by["blue"].points_per_bonus == 10.0
    assert [t.heard for t in stats.tossups] == [1, 1, 1, 1]


def model_event(db_url: str, *, finish_last: bool = True):
    """Red and Blue against Robo and Careful (two teams of the model tfidf), two rounds of
    two tossups each (the packet's first two in round 1, the next two in round 2), room 1
    and room 2. Robo buzzes on the first tossup only (word 3, ruled correct: a power, 15), so
    it buzzes in round 1 (against Red) and not in round 2 (against Blue); Careful never buzzes.
    In round 2 Red's Ann powers the first tossup (15) against Careful, and Blue's Bo against
    Robo. ``finish_last``: whether the last match (Blue–Robo) ends or is left with its
    second tossup being read."""
    from grace_arena.core.config import ModelBuzz, TeamKind

    teams = [TeamEntry("red", "Red"), TeamEntry("blue", "Blue"),
             TeamEntry("robo", "Robo", "model", "tfidf", 0.5),
             TeamEntry("careful", "Careful", "model", "tfidf", 0.9)]  # fmt: skip
    make_event(db_url, name="models", teams=teams, rounds=2, rooms=("1", "2"), tossups=4,
               players=[("red", "Ann"), ("blue", "Bo")])  # fmt: skip
    engine = make_engine(db_url)
    packet = load_packet(SAMPLE_PACKET_PATH)
    ids = [t.id for t in packet.tossups[:4]]
    pairs = [(1, "1", ("red", "robo")), (1, "2", ("blue", "careful")),
             (2, "1", ("red", "careful")), (2, "2", ("blue", "robo"))]  # fmt: skip
    games = [pairing.Game(r, room, 0, teams) for r, room, teams in pairs]
    plan = set_schedule(engine, "models", rooms=["1", "2"], games=games,
                        rounds=[RoundPlan(1, packet.packet.id, tuple(ids[:2])),
                                RoundPlan(2, packet.packet.id, tuple(ids[2:]))])  # fmt: skip
    buzz = {ids[0]: ModelBuzz(word_index=3, guess="x")}
    rules = rules_for("grace").model_copy(update={"answer_time": None, "buzz_window": 0.0})
    for game in plan.games:
        specs = [
            TeamSpec(id=t, name=plan.team(t).name, kind=TeamKind.MODEL, model="tfidf",
                     buzzes=buzz if t == "robo" else {})
            if plan.team(t).kind == "model" else TeamSpec(id=t, name=plan.team(t).name)
            for t in game.teams
        ]  # fmt: skip
        tossups = ids[:2] if game.round == 1 else ids[2:]
        config = match_config(packet, specs, tossup_ids=tossups, rules=rules)
        match = MatchStore(engine).create(config, now=0.0, event="models", game_id=game.id)
        human = game.teams[0]
        player = {"red": "ann", "blue": "bo"}[human]
        match.handle(Join(team=human, player=player, name=player.title()), now=1.0)
        last = game.teams == ("blue", "robo")
        for n, tossup in enumerate(tossups):
            match.handle(StartTossup(tossup_id=tossup), now=1.0)
            if last and not finish_last and n == 1:
                break
            if game.teams in (("red", "careful"), ("blue", "robo")) and n == 0:
                match.handle(Reveal(to=2), now=1.0)
                match.handle(Buzz(team=human, player=player), now=1.0)
                match.handle(Rule(ruling=C), now=1.0)
                continue
            match.handle(Reveal(to=config.tossups[n].n_words), now=1.0)
            if match.match.game.floor is not None:  # the model buzzed
                match.handle(Rule(ruling=C), now=1.0)
            else:
                match.handle(TimeUp(), now=1.0)  # dead
        if not (last and not finish_last):
            match.handle(EndMatch(), now=1.0)
    return load_plan(engine, "models"), engine


def test_a_model_team_s_player_plays_every_tossup_of_its_team(db_url) -> None:
    plan, engine = model_event(db_url)
    try:
        stats = event_stats(plan.team_infos(), plays_of(engine, plan))
    finally:
        engine.dispose()
    players = {(p.team, p.name): p for p in stats.players}
    # one row per model team, its player named by its model (as in QBJ and SQBS, and without
    # parentheses, which YellowFruit's SQBS import reads as a school year); the team's games
    # and tossups
    robo, careful = players["robo", "tfidf"], players["careful", "tfidf"]
    team = {s.team: s for s in stats.standings}
    assert (robo.games, robo.tossups_heard, robo.points) == (2, 4, 15)
    assert (robo.games, robo.tossups_heard) == (team["robo"].games, team["robo"].tossups_heard)
    assert robo.points_per_20_tuh == team["robo"].points_per_20_tuh == 75.0
    assert (careful.games, careful.tossups_heard, careful.points) == (2, 4, 0)
    assert not any(p.name.startswith("model:") for p in stats.players)
    # round 1's first tossup and round 2's first tossup: each numbered in its own round
    assert [(t.rounds, t.number) for t in stats.tossups] == [((1,), 1), ((1,), 2), ((2,), 1),
                                                             ((2,), 2)]  # fmt: skip
