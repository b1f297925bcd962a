"""The standings folded one game's result at a time are the standings computed from every
result, after every change: rulings made, undone, corrected (a result that goes down as well
as up), matches ended, games forfeited or entered by their score, a phase added (its pools,
the games carried over into it), in the event's standings and in each pool's."""

from __future__ import annotations

import random
import sys
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grace_arena.core.standings import MatchResult, TeamInfo, TeamLine, standings
from grace_arena.core.standings_fold import StandingsFold
from grace_arena.record.schedule import (
    EventPlan,
    GamePlan,
    PhasePlan,
    PoolPlan,
    TeamEntry,
    phase_standings,
)
from grace_arena.record.standings_fold import EventFold

TEAMS = tuple(TeamEntry(t, t.upper(), "model" if t in "cf" else "human") for t in "abcdef")
PRELIM = PhasePlan(
    "prelim", "Prelims", "round_robin",
    pools=(PoolPlan("p1", "Pool 1", ("a", "b", "c")), PoolPlan("p2", "Pool 2", ("d", "e", "f"))),
)  # fmt: skip
PLAYOFF = PhasePlan(
    "playoff", "Playoffs", "round_robin", position=1,
    pools=(PoolPlan("top", "Top", ("a", "b", "d", "e")), PoolPlan("bottom", "Bottom", ("c", "f"))),
)  # fmt: skip
PRELIM_GAMES = (
    GamePlan(1, 1, "r1", 0, ("a", "b"), phase_id="prelim", carryover=("playoff",)),
    GamePlan(2, 1, "r2", 1, ("d", "e"), phase_id="prelim", carryover=("playoff",)),
    GamePlan(3, 2, "r1", 0, ("a", "c"), phase_id="prelim"),
    GamePlan(4, 2, "r2", 1, ("d", "f"), phase_id="prelim"),
    GamePlan(5, 3, "r1", 0, ("b", "c"), phase_id="prelim"),
    GamePlan(6, 3, "r2", 1, ("e",), phase_id="prelim"),  # a bye
)
PLAYOFF_GAMES = (
    GamePlan(7, 4, "r1", 0, ("a", "d"), phase_id="playoff"),
    GamePlan(8, 4, "r2", 1, ("b", "e"), phase_id="playoff"),
    GamePlan(9, 4, "r3", 2, ("c", "f"), phase_id="playoff"),
)


def _plan(games: dict[int, tuple], playoffs: bool) -> EventPlan:
    """The event with each game as it stands: a match (its id: the game's times 10), a
    forfeit, a result entered, or nothing yet."""
    out = []
    for g in PRELIM_GAMES + (PLAYOFF_GAMES if playoffs else ()):
        state = games.get(g.id, ("none",))
        kind = state[0]
        out.append(
            GamePlan(
                g.id, g.round, g.room_id, g.slot, g.teams,
                match_id=g.id * 10 if kind in ("live", "ended") else None,
                ended=kind != "live" and kind != "none",
                phase_id=g.phase_id, carryover=g.carryover,
                forfeit=state[1] if kind == "forfeit" else None,
                result={"entered": True} if kind == "entered" else None,
            )
        )  # fmt: skip
    return EventPlan(
        1, "night", "Night", TEAMS, games=tuple(out),
        phases=(PRELIM, PLAYOFF) if playoffs else (PRELIM,),
    )  # fmt: skip


def _results(plan: EventPlan, games: dict[int, tuple]) -> list[MatchResult]:
    """As ``StandingsReader.read_results`` lists them: the begun matches' in the games'
    order, then the games decided without a match."""
    played, decided = [], []
    for g in plan.games:
        state = games.get(g.id, ("none",))
        if state[0] in ("live", "ended"):
            lines, heard, overtime = state[1:]
            played.append(
                MatchResult(
                    g.id * 10, dict(zip(g.teams, lines, strict=False)), heard,
                    ended=state[0] == "ended", round=g.round, overtime_tossups=overtime,
                )
            )  # fmt: skip
        elif state[0] == "forfeit":
            decided.append(
                MatchResult(-g.id, {t: TeamLine() for t in g.teams}, 0, True, g.round, 0, state[1])
            )
        elif state[0] == "entered":
            lines, heard, _ = state[1:]
            decided.append(
                MatchResult(-g.id, dict(zip(g.teams, lines, strict=False)), heard, True, g.round)
            )
    return played + decided


lines = st.builds(
    TeamLine,
    points=st.integers(-20, 400),
    correct=st.integers(0, 20),
    powers=st.integers(0, 5),
    incorrect=st.integers(0, 10),
    negs=st.integers(0, 5),
    bonuses_heard=st.integers(0, 20),
    bonus_points=st.integers(0, 300),
    bounceback_points=st.integers(0, 50),
    bounceback_parts=st.integers(0, 10),
    bounceback_available=st.integers(0, 100),
    overtime_points=st.integers(0, 30),
)
game_ids = st.sampled_from([g.id for g in PRELIM_GAMES + PLAYOFF_GAMES if len(g.teams) == 2])
step = st.one_of(
    # a ruling (made, undone, corrected, a protest upheld, a tossup thrown out): the match's
    # result as it stands after it, under way or ended
    st.tuples(
        game_ids,
        st.sampled_from(["live", "ended", "entered"]),
        st.tuples(lines, lines),
        st.integers(0, 30),
        st.integers(0, 3),
    ).map(lambda s: (s[0], (s[1], s[2], s[3], min(s[3], s[4]) if s[1] != "entered" else 0))),
    st.tuples(game_ids, st.integers(0, 1)).map(lambda s: (s[0], ("forfeit", s[1]))),
    st.tuples(game_ids).map(lambda s: (s[0], ("none",))),  # (a result taken back)
    st.just((0, ("playoffs",))),  # the playoff phase added (or, for the test, taken away)
)


@settings(max_examples=150, deadline=None)
@given(st.lists(step, min_size=1, max_size=25))
def test_the_fold_equals_the_full_computation_after_every_change(steps) -> None:
    games: dict[int, tuple] = {}
    playoffs = False
    plan = _plan(games, playoffs)
    fold = EventFold(plan)
    for game_id, change in steps:
        if change[0] == "playoffs":
            playoffs = not playoffs
        elif change[0] == "forfeit":
            teams = next(g.teams for g in PRELIM_GAMES + PLAYOFF_GAMES if g.id == game_id)
            games[game_id] = ("forfeit", teams[change[1]])
        else:
            games[game_id] = change
        plan = _plan(games, playoffs)
        results = _results(plan, games)
        fold.update(plan, results)
        assert fold.rows() == standings(plan.team_infos(), results)
        for phase in plan.phases:
            for ps in phase_standings(plan, results, phase.id):
                assert fold.phase_rows(phase, ps.pool) == ps.rows
        # the projection made afresh from the record's results is the one kept up to date
        again = EventFold(plan)
        again.update(plan, results)
        assert again.rows() == fold.rows()


def test_a_ruling_folds_one_match_and_not_the_others() -> None:
    """A change to one match is one result out and one in, whatever the number of games."""
    teams = [TeamInfo(f"t{i}", f"T{i}") for i in range(200)]
    fold = StandingsFold(teams)
    pair = [(f"t{2 * (m % 100)}", f"t{2 * (m % 100) + 1}") for m in range(1000)]
    results = [
        MatchResult(m, {a: TeamLine(points=m), b: TeamLine()}, 10, ended=True)
        for m, (a, b) in enumerate(pair)
    ]
    for r in results:
        fold.put(r)
    before = fold.folds
    changed = MatchResult(7, {"t14": TeamLine(points=30, correct=3), "t15": TeamLine()}, 11, True)
    assert fold.put(changed)
    assert fold.folds - before == 2  # the old result out, the new one in
    assert not fold.put(changed)  # the same result again: nothing to do
    assert fold.rows() == standings(teams, [changed if r.match_id == 7 else r for r in results])


def test_a_result_of_a_team_not_in_the_event_changes_nothing() -> None:
    fold = StandingsFold([TeamInfo("a", "A"), TeamInfo("b", "B")])
    fold.put(MatchResult(1, {"a": TeamLine(points=10), "b": TeamLine()}, 2, ended=True))
    rows = fold.rows()
    with pytest.raises(ValueError, match="not in the event"):
        fold.put(MatchResult(1, {"a": TeamLine(), "zed": TeamLine()}, 2, ended=True))
    assert fold.rows() == rows


@pytest.fixture
def frequent_switches():
    """Threads switched as often as the interpreter can (crossings that are rare otherwise)."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(before)


def test_folds_from_several_threads_at_once_count_each_result_once(frequent_switches) -> None:
    """Two computations of one event that cross (in two worker threads) fold the same
    results into one fold: each counts once, and the rows read meanwhile are of one state."""
    teams = [TeamInfo(f"t{i}", f"T{i}") for i in range(40)]
    rnd = random.Random(1)
    results = []
    for m in range(1500):
        a, b = rnd.sample(range(40), 2)
        results.append(
            MatchResult(
                m,
                {
                    f"t{a}": TeamLine(points=rnd.randrange(0, 400, 5), correct=3),
                    f"t{b}": TeamLine(points=rnd.randrange(0, 400, 5), correct=2),
                },
                20,
                ended=True,
            )
        )
    expected = standings(teams, results)
    for _ in range(3):
        fold = StandingsFold(teams)

        def put_all(fold: StandingsFold = fold) -> None:
            for i, r in enumerate(results):
                fold.put(r, i)
                if i % 100 == 0:
                    fold.rows()

        threads = [threading.Thread(target=put_all) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert fold.rows() == expected


def test_event_folds_from_several_threads_at_once_equal_the_full_computation(
    frequent_switches,
) -> None:
    games = {
        g.id: ("ended", (TeamLine(points=10 * g.id, correct=g.id), TeamLine(points=5)), 20, 0)
        for g in PRELIM_GAMES + PLAYOFF_GAMES
        if len(g.teams) == 2
    }
    plan = _plan(games, True)
    results = _results(plan, games)
    for _ in range(20):
        fold = EventFold(plan)
        threads = [threading.Thread(target=fold.update, args=(plan, results)) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert fold.rows() == standings(plan.team_infos(), results)
        for phase in plan.phases:
            for ps in phase_standings(plan, results, phase.id):
                assert fold.phase_rows(phase, ps.pool) == ps.rows
