"""An event's standings (grace_arena.core.standings), worked by hand."""

from __future__ import annotations

import pytest

from grace_arena.core.events import (
    RulingUndone,
    TossupEnded,
    TossupOutcome,
    TossupStarted,
    tossups_heard,
)
from grace_arena.core.formats import rules_for
from grace_arena.core.standings import (
    MatchResult,
    TeamInfo,
    TeamLine,
    standings,
    unrated_tossups,
)

TEAMS = [
    TeamInfo("red", "Red"),
    TeamInfo("blue", "Blue"),
    TeamInfo("green", "Green"),
    TeamInfo("tfidf", "Model (tfidf)", "model"),
]


def line(points: int, correct: int = 0, incorrect: int = 0, negs: int = 0, powers: int = 0):
    return TeamLine(points, correct, powers, incorrect, negs)


def test_wins_then_points_per_tossup_heard_decide_the_order() -> None:
    results = [
        # round 1: Red 35 (a power and two tens) beats Blue 5 (a ten and a neg)
        MatchResult(1, {"red": line(35, 3, powers=1), "blue": line(5, 1, 1, 1)}, 4, True, 1),
        # Green 20 vs the model 20: a tie
        MatchResult(2, {"green": line(20, 2), "tfidf": line(20, 2)}, 4, True, 1),
        # round 2, under way: Red 10, the model 0
        MatchResult(3, {"red": line(10, 1), "tfidf": line(0)}, 2, False, 2),
    ]
    rows = {s.team: s for s in standings(TEAMS, results)}
    red, blue, green, model = rows["red"], rows["blue"], rows["green"], rows["tfidf"]
    assert (red.played, red.won, red.lost, red.live) == (1, 1, 0, 1)
    # the match under way adds its points (in play) and nothing else
    assert (red.points, red.live_points, red.finished_points) == (45, 10, 35)
    assert (red.points_against, red.tossups_heard, red.games) == (5, 4, 1)
    assert (red.correct, red.powers, red.incorrect) == (3, 1, 0)
    assert (red.points_per_game, red.points_per_20_tuh) == (35.0, 175.0)
    assert (blue.won, blue.lost, blue.negs, blue.incorrect) == (0, 1, 1, 1)
    assert (green.tied, model.tied, model.live, model.points_against) == (1, 1, 1, 20)
    assert red.points_per_tossup == pytest.approx(35 / 4)
    assert green.win_share == 0.5
    # Red 1 win; Green and the model half a win each and 20 in 4 tossups each (the model's
    # 2 tossups under way are not counted yet): they share second place
    assert [s.team for s in standings(TEAMS, results)] == ["red", "green", "tfidf", "blue"]
    assert [s.rank for s in standings(TEAMS, results)] == [1, 2, 2, 4]


def test_equal_teams_share_a_rank_and_a_team_without_matches_is_listed() -> None:
    results = [MatchResult(1, {"red": line(10, 1), "blue": line(10, 1)}, 2, True)]
    rows = standings(TEAMS, results)
    assert [(s.team, s.rank) for s in rows] == [
        ("blue", 1),
        ("red", 1),
        ("green", 3),
        ("tfidf", 3),
    ]
    assert rows[2].played == 0 and rows[2].points_per_tossup is None


def test_a_live_match_moves_points_but_not_the_record_nor_the_figures() -> None:
    """A match under way (its tossup being read counts as heard in it) adds its points, in
    play, and no game, tossup heard, PPG or P/20TUH: a team without a finished match has
    none (not 0.0)."""
    live = [MatchResult(1, {"red": line(30, 3), "blue": line(0)}, 3, False)]
    red = next(s for s in standings(TEAMS, live) if s.team == "red")
    assert (red.won, red.played, red.games, red.live) == (0, 0, 0, 1)
    assert (red.points, red.live_points, red.tossups_heard, red.correct) == (30, 30, 0, 0)
    assert (red.points_per_game, red.points_per_20_tuh, red.points_per_tossup) == (None,) * 3
    # once over, the match is a game like any other
    over = standings(TEAMS, [MatchResult(1, {"red": line(30, 3), "blue": line(0)}, 3, True)])
    red = next(s for s in over if s.team == "red")
    assert (red.games, red.live_points, red.tossups_heard, red.points_per_game) == (1, 0, 3, 30.0)


def test_a_team_not_in_the_event_is_an_error() -> None:
    with pytest.raises(ValueError, match=r"match 7: teams \['gold'\]"):
        standings(TEAMS, [MatchResult(7, {"gold": line(0)}, 0, True)])


def test_teams_equal_on_win_pct_ppb_and_points_per_20_tossups_share_a_rank() -> None:
    # (Points no longer break a tie: the order is win %, PPB, P/20TUH, as SQBS and
    # YellowFruit rank; grace_arena.core.stats.)
    results = [
        # Red and Green tie 10–10 in 2 tossups: 100 per 20 tossups heard each
        MatchResult(1, {"red": line(10, 1), "green": line(10, 1)}, 2, True),
        # Blue and the model tie −5 to −5 in 1 tossup, then 0–0 in 3: −25 per 20 each
        MatchResult(2, {"blue": line(-5, 0, 1, 1), "tfidf": line(-5, 0, 1, 1)}, 1, True),
        MatchResult(3, {"blue": line(0), "tfidf": line(0)}, 3, True),
    ]
    rows = standings(TEAMS, results)
    assert [(s.team, s.rank) for s in rows] == [
        ("green", 1),
        ("red", 1),
        ("blue", 3),
        ("tfidf", 3),
    ]
    assert rows[0].points_per_20_tuh == rows[1].points_per_20_tuh == 100.0
    assert rows[2].points_per_20_tuh == rows[3].points_per_20_tuh == -25.0
    # PPB comes before P/20TUH: the model, below on points a tossup, ahead on 20 a bonus
    bonus = TeamLine(20, bonuses_heard=1, bonus_points=20)
    with_bonus = [*results, MatchResult(4, {"tfidf": bonus}, 0, True)]
    assert next(s.team for s in standings(TEAMS, with_bonus)) == "tfidf"


def test_a_tossup_ended_again_after_an_undo_is_heard_once() -> None:
    dead, answered, out = TossupOutcome.DEAD, TossupOutcome.ANSWERED, TossupOutcome.THROWN_OUT
    events = [
        TossupStarted(tossup_id="t1", index=0),
        TossupEnded(tossup_id="t1", outcome=dead, reason="all_locked_out"),
        RulingUndone(ruled_seq=0, buzz_id=2, tossup_id="t1"),  # reopened ...
        TossupEnded(tossup_id="t1", outcome=answered, reason="correct_answer"),  # ... and over
        TossupStarted(tossup_id="t2", index=1),
        TossupEnded(tossup_id="t2", outcome=answered, reason="correct_answer"),
        TossupEnded(tossup_id="t2", outcome=out, reason="misread"),  # thrown out once over
        TossupStarted(tossup_id="t3", index=2),
        TossupEnded(tossup_id="t3", outcome=out, reason="misread"),
        TossupStarted(tossup_id="t4", index=3),  # being read
    ]
    assert tossups_heard(events) == ["t1", "t4"]


def test_ppg_and_p20tuh_leave_out_an_overtime_without_bonuses_as_yellowfruit_does() -> None:
    # ACF, 2 tossups of regulation then overtime without bonuses: Red 20 (a ten, a bonus of
    # 10) and Green 20 after regulation, then Red wins on a ten in overtime, 30 to 20
    acf = rules_for("acf", regulation_tossups=2)
    assert unrated_tossups(acf, ["t1", "t2", "t3"]) == ["t3"]
    red = TeamLine(30, 1 + 1, bonuses_heard=1, bonus_points=10, overtime_points=10)
    green = TeamLine(20, 1, bonuses_heard=1, bonus_points=10)
    result = MatchResult(1, {"red": red, "green": green}, 3, True, 1, overtime_tossups=1)
    rows = {s.team: s for s in standings(TEAMS, [result])}
    # points and TUH count everything; PPG and P/20TUH leave the overtime tossup and its 10 out
    assert (rows["red"].points, rows["red"].tossups_heard, rows["red"].won) == (30, 3, 1)
    assert (rows["red"].points_per_game, rows["red"].points_per_20_tuh) == (20.0, 200.0)
    assert (rows["green"].points_per_game, rows["green"].points_per_20_tuh) == (20.0, 200.0)
    # tossups only, or bonuses in overtime: the overtime counts like any tossup
    assert unrated_tossups(rules_for("grace", regulation_tossups=2), ["t1", "t2", "t3"]) == []
    with_bonuses = rules_for("acf", regulation_tossups=2, overtime_bonuses=True)
    assert unrated_tossups(with_bonuses, ["t1", "t2", "t3"]) == []
