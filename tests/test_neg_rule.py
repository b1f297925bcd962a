"""Who is negged on a tossup: NAQT and ACF penalise only the first team to answer it
incorrectly before the end ("a 5-point penalty if the first team to attempt answering a tossup
gives an incorrect answer"); another team's wrong interrupt after it scores 0, and the stats
programs count it as an incorrect answer, not a neg. GRACE's game negs every wrong interrupt."""

from __future__ import annotations

import json

import pytest
from backends import on_both_backends
from engine_helpers import config, started_match

from grace_arena.core.commands import (
    Buzz,
    EndMatch,
    Join,
    Reveal,
    Rule,
    StartTossup,
    TimeUp,
    UndoRuling,
)
from grace_arena.core.config import ModelBuzz, ScoringRules
from grace_arena.core.events import Ruled, Ruling, TossupEnded
from grace_arena.core.formats import describe, rules_for
from grace_arena.core.match import Match
from grace_arena.core.standings import TeamInfo
from grace_arena.core.stats import event_stats, match_play
from grace_arena.io.exports import export
from grace_arena.io.sqbs import tossup_values
from grace_arena.protocol import MatchSettings

T = 1000.0
X, C = Ruling.INCORRECT, Ruling.CORRECT


def wrong_interrupt(match: Match, team: str, word: int, events: list | None = None) -> Ruled:
    """``team`` buzzes at ``word`` (before the end of the 20-word tossup) and is ruled wrong;
    the events are added to ``events``."""
    done = match.handle(Reveal(to=word), now=T)
    done += match.handle(Buzz(team=team, player=f"{team}-1"), now=T)
    done += match.handle(Rule(ruling=X), now=T)
    if events is not None:
        events += done
    ruled = next(e for e in done if isinstance(e, Ruled))
    assert ruled.ruling is X
    return ruled


def two_wrong_interrupts(rules: ScoringRules) -> tuple[Match, list, Ruled, Ruled]:
    """Red interrupts wrongly at word 3, then Blue at word 8: the tossup is dead."""
    match, events = started_match(config(rules=rules))
    events += match.handle(StartTossup(), now=T)
    red = wrong_interrupt(match, "red", 3, events)
    blue = wrong_interrupt(match, "blue", 8, events)
    events += match.handle(EndMatch(), now=T)
    return match, events, red, blue


@pytest.mark.parametrize("fmt", ["naqt", "acf"])
def test_only_the_first_team_to_interrupt_wrongly_is_negged(fmt):
    match, events, red, blue = two_wrong_interrupts(rules_for(fmt))
    assert (red.points, blue.points) == (-5, 0)
    assert match.scores == {"red": -5, "blue": 0}
    ended = [e for e in events if isinstance(e, TossupEnded)]
    assert [(e.outcome, e.reason) for e in ended] == [("dead", "all_locked_out")]
    # the record holds the points: a replay is the live match
    assert Match.replay(events).state == match.state


def test_grace_s_game_negs_every_wrong_interrupt():
    """GRACE's game (the default rules, PRODUCT.md's "incorrect before the end: -5")."""
    for rules in (ScoringRules(), rules_for("grace")):
        assert not rules.neg_first_team_only
        match, _, red, blue = two_wrong_interrupts(rules)
        assert (red.points, blue.points) == (-5, -5)
        assert match.scores == {"red": -5, "blue": -5}


def test_a_format_without_the_rule_negs_both_teams():
    rules = rules_for("naqt", neg_first_team_only=False)
    assert rules.format == "custom"
    _, _, red, blue = two_wrong_interrupts(rules)
    assert (red.points, blue.points) == (-5, -5)


def test_a_third_team_is_not_negged_either_and_a_correct_answer_still_scores():
    match, _ = started_match(config(rules=rules_for("naqt"), humans=("red", "blue", "green")))
    match.handle(StartTossup(), now=T)
    wrong_interrupt(match, "red", 2)
    wrong_interrupt(match, "blue", 4)
    match.handle(Reveal(to=6), now=T)
    match.handle(Buzz(team="green", player="green-1"), now=T)
    match.handle(Rule(ruling=C), now=T)
    assert match.scores == {"red": -5, "blue": 0, "green": 15}


def test_an_answer_clock_that_runs_out_on_the_second_team_costs_it_nothing():
    match, _ = started_match(config(rules=rules_for("acf", answer_time=5.0)))
    match.handle(StartTossup(), now=T)
    wrong_interrupt(match, "red", 3)
    match.handle(Reveal(to=8), now=T)
    match.handle(Buzz(team="blue", player="blue-1"), now=T)
    ruled = match.handle(TimeUp(), now=T + 5)[0]
    assert isinstance(ruled, Ruled) and (ruled.ruling, ruled.points) == (X, 0)
    assert match.scores == {"red": -5, "blue": 0}


def test_a_model_team_s_wrong_interrupt_after_a_neg_scores_nothing():
    cfg = config(rules=rules_for("naqt"), model_buzzes={"t0": ModelBuzz(word_index=9, guess="x")})
    match, _ = started_match(cfg)
    match.handle(StartTossup(), now=T)
    wrong_interrupt(match, "red", 3)
    match.handle(Reveal(to=12), now=T)  # the model buzzes at word 9
    assert match.game.floor is not None and match.game.floor.team == "bot"
    ruled = match.handle(Rule(ruling=X), now=T)[0]
    assert isinstance(ruled, Ruled) and ruled.points == 0
    assert match.scores == {"red": -5, "blue": 0, "bot": 0}


def test_a_neg_taken_back_and_ruled_again_is_still_a_neg():
    """What counts is a neg in force on the tossup: an undone ruling is no neg (a prompt,
    worth 0, is no incorrect answer either)."""
    match, _ = started_match(config(rules=rules_for("naqt")))
    match.handle(StartTossup(), now=T)
    match.handle(Reveal(to=3), now=T)
    match.handle(Buzz(team="red", player="red-1"), now=T)
    match.handle(Rule(ruling=Ruling.PROMPT), now=T)
    match.handle(Rule(ruling=X), now=T)
    match.handle(UndoRuling(), now=T)  # red has the floor again
    assert match.scores == {"red": 0, "blue": 0}
    match.handle(Rule(ruling=X), now=T)
    assert match.scores == {"red": -5, "blue": 0}
    assert wrong_interrupt(match, "blue", 8).points == 0


def test_after_the_end_the_second_team_scores_nothing_either_way():
    """Negs counted after the end too (``negs_only_before_end`` off): still the first only."""
    match, _ = started_match(config(rules=rules_for("acf", negs_only_before_end=False)))
    match.handle(StartTossup(), now=T)
    match.handle(Reveal(to=19), now=T)  # the last word: the question is over
    for team in ("red", "blue"):
        match.handle(Buzz(team=team, player=f"{team}-1"), now=T)
        match.handle(Rule(ruling=X), now=T)
    assert match.scores == {"red": -5, "blue": 0}


def test_the_stats_count_one_neg_and_two_incorrect_answers():
    _, events, _, _ = two_wrong_interrupts(rules_for("naqt"))
    play = match_play(events, match_id=1)
    result = play.result()
    red, blue = result.teams["red"], result.teams["blue"]
    assert (red.points, red.incorrect, red.negs) == (-5, 1, 1)
    assert (blue.points, blue.incorrect, blue.negs) == (0, 1, 0)
    stats = event_stats([TeamInfo("red", "Red"), TeamInfo("blue", "Blue")], [play])
    assert {(p.team, p.negs, p.incorrect) for p in stats.players} == {("red", 1, 1), ("blue", 0, 1)}
    assert {s.team: s.negs for s in stats.standings} == {"red": 1, "blue": 0}
    (tossup,) = stats.tossups
    assert (tossup.heard, tossup.correct, tossup.negs) == (1, 0, 1)
    # SQBS's tossup values: 0 is not one (the 0-point answer is counted in none)
    assert tossup_values([play]) == [15, 10, -5]


@on_both_backends
def test_the_qbj_export_writes_the_second_wrong_interrupt_as_0(store, tmp_path):
    rm = store.create(config(rules=rules_for("naqt", answer_time=None)), now=T)
    for team in ("red", "blue"):
        rm.handle(Join(team=team, player=f"{team}-1", name=team.title()), now=T)
    rm.handle(StartTossup(), now=T)
    for team, word in (("red", 3), ("blue", 8)):
        rm.handle(Reveal(to=word), now=T)
        rm.handle(Buzz(team=team, player=f"{team}-1"), now=T)
        rm.handle(Rule(ruling=X), now=T)
    rm.handle(EndMatch(), now=T)
    path = tmp_path / "m.qbj"
    export(store.engine, "qbj", path, [rm.id])
    match = json.loads(path.read_text())
    (question,) = match["match_questions"]
    got = [(b["team"]["name"], b["result"]["value"]) for b in question["buzzes"]]
    assert got == [("Red", -5), ("Blue", 0)]
    counts = {
        t["team"]["name"]: [
            (c["number"], c["answer_type"]["value"]) for p in t["match_players"]
            for c in p["answer_counts"]
        ]
        for t in match["match_teams"]
    }  # fmt: skip
    assert counts == {"Red": [(1, -5)], "Blue": [(1, 0)]}


def test_the_rule_set_says_it_and_an_old_record_s_rules_keep_negging_both():
    assert rules_for("naqt").neg_first_team_only and rules_for("acf").neg_first_team_only
    assert not rules_for("pace").neg_first_team_only  # no negs: nothing to say
    assert "first team only" in describe(rules_for("naqt"))
    assert "first team only" in describe(rules_for("acf"))
    assert "first team only" not in describe(rules_for("grace"))
    assert "first team only" not in describe(rules_for("pace"))
    # a match created before the rule was named stored its rules without it: it was played
    # negging every wrong interrupt, and its rules still say so
    old = rules_for("acf").model_dump()
    del old["neg_first_team_only"]
    assert not ScoringRules.model_validate(old).neg_first_team_only


def test_a_match_s_settings_turn_the_rule_on_or_off_and_a_format_s_holds_otherwise():
    def rules_of(**settings) -> ScoringRules:
        made = MatchSettings(**settings)
        fmt = made.format
        return rules_for(fmt, **made.scoring()) if fmt else ScoringRules(**made.scoring())

    assert rules_of(format="naqt").neg_first_team_only
    assert rules_of(format="acf", neg_points=-10).neg_first_team_only  # custom, from ACF's
    assert not rules_of().neg_first_team_only
    on = rules_of(neg_first_team_only=True)
    assert on.neg_first_team_only and on.format is None
    off = rules_of(format="naqt", neg_first_team_only=False)
    assert not off.neg_first_team_only and off.format == "custom"
    assert rules_of(format="naqt", neg_first_team_only=True).format == "naqt"
