"""Lineups and substitutions in the match engine (``grace_arena.core.lineups``): the format's
players at a time, the bench, substitutions at the moments the rules allow, the lineups of
the record with the questions they start at, and each player's tossups heard from them."""

from __future__ import annotations

import pytest
from engine_helpers import config

from grace_arena.core.commands import Buzz, CallTimeout, Join, Rule, RulePart, StartTossup
from grace_arena.core.commands import Substitute as Sub
from grace_arena.core.errors import IllegalCommand
from grace_arena.core.events import PlayerSubstituted, Ruling, event_from_dict, event_to_dict
from grace_arena.core.formats import rules_for
from grace_arena.core.lineups import bench, lineup_history, tossups_heard_by
from grace_arena.core.match import Match
from grace_arena.core.phases import Phase

C, X = Ruling.CORRECT, Ruling.INCORRECT


def acf(regulation: int = 4, extras: int = 2, **rules) -> tuple[Match, list]:
    """An ACF match (4 players a team) of ``regulation`` tossups with halftime after 2: Red
    has five players (r1..r5: r5 on the bench), Blue one."""
    n = regulation + extras
    cfg = config(
        n_tossups=n, bonus_parts=(3,) * n,
        rules=rules_for("acf", regulation_tossups=regulation, halftime_after=2, **rules),
    )  # fmt: skip
    match, events = Match.create(cfg, now=0.0)
    for i in range(1, 6):
        events += match.handle(Join(team="red", player=f"r{i}", name=f"Red {i}"), now=0.0)
    events += match.handle(Join(team="blue", player="b1", name="Blue 1"), now=0.0)
    return match, events


def cycle(match: Match, team: str, player: str, now: float = 1.0) -> list:
    """A tossup ``player`` answers, its bonus parts all missed."""
    events = match.handle(StartTossup(), now=now)
    events += match.handle(Buzz(team=team, player=player), now=now)
    events += match.handle(Rule(ruling=C), now=now)
    while match.phase is Phase.BONUS:
        events += match.handle(RulePart(ruling=X), now=now)
    return events


def test_the_first_four_play_the_fifth_waits_on_the_bench_and_cannot_buzz() -> None:
    match, _ = acf()
    assert match.state.lineups == {"red": ("r1", "r2", "r3", "r4"), "blue": ("b1",)}
    assert bench(match.state, "red") == ["r5"]
    match.handle(StartTossup(), now=1.0)
    with pytest.raises(IllegalCommand, match="Red 5 is on the bench"):
        match.decide(Buzz(team="red", player="r5"), now=1.0)
    # the grace format fields everyone who joins: nothing to substitute
    grace = config(n_tossups=2, rules=rules_for("grace"))
    open_match, _ = Match.create(grace, now=0.0)
    open_match.handle(Join(team="red", player="a", name="A"), now=0.0)
    with pytest.raises(IllegalCommand, match="fields every player who joins"):
        open_match.decide(Sub(team="red", player_in="a"), now=0.0)


def test_substitutions_only_before_play_at_halftime_before_overtime_or_in_a_timeout() -> None:
    match, events = acf(regulation=4)
    # before the first tossup: the lineup the match starts with
    events += match.handle(Sub(team="red", player_in="r5", player_out="r4"), now=0.5)
    assert events[-1].reason == "initial"
    events += cycle(match, "red", "r1")  # 10-0
    with pytest.raises(IllegalCommand, match="at halftime, before overtime or in a timeout"):
        match.decide(Sub(team="red", player_in="r4", player_out="r5"), now=2.0)
    events += match.handle(CallTimeout(team="red"), now=2.0)
    events += match.handle(Sub(team="red", player_in="r4", player_out="r3"), now=2.0)
    assert events[-1].reason == "own_timeout"
    events += cycle(match, "blue", "b1", now=40.0)  # 10-10, halftime (2 of 4)
    with pytest.raises(IllegalCommand, match="Red 1 is in Red's lineup already"):
        match.decide(Sub(team="red", player_in="r1", player_out="r2"), now=41.0)
    with pytest.raises(IllegalCommand, match="'b1' is not in Red's lineup"):
        match.decide(Sub(team="red", player_in="r3", player_out="b1"), now=41.0)
    with pytest.raises(IllegalCommand, match="lineup is full"):
        match.decide(Sub(team="red", player_in="r3"), now=41.0)
    with pytest.raises(IllegalCommand, match="'zed' has not joined team 'red'"):
        match.decide(Sub(team="red", player_in="zed", player_out="r1"), now=41.0)
    events += match.handle(Sub(team="red", player_in="r3", player_out="r1"), now=41.0)
    assert events[-1].reason == "halftime"
    events += match.handle(StartTossup(), now=42.0)  # during a tossup: refused
    with pytest.raises(IllegalCommand):
        match.decide(Sub(team="red", player_in="r1", player_out="r3"), now=42.0)
    events += match.handle(Buzz(team="blue", player="b1"), now=42.0)
    events += match.handle(Rule(ruling=C), now=42.0)
    with pytest.raises(IllegalCommand):  # nor during its bonus
        match.decide(Sub(team="red", player_in="r1", player_out="r3"), now=42.0)
    while match.phase is Phase.BONUS:
        events += match.handle(RulePart(ruling=X), now=42.0)
    events += cycle(match, "red", "r2", now=43.0)  # 4 of 4: 20-20, tied
    events += match.handle(Sub(team="red", player_in="r1", player_out="r2"), now=44.0)
    assert events[-1].reason == "before_overtime"
    assert match.state.lineups["red"] == ("r3", "r1", "r4", "r5")
    assert bench(match.state, "red") == ["r2"]
    # the record, stored and read back, replays to the same state, lineups included
    stored = [event_from_dict(event_to_dict(e)) for e in events]
    assert sum(isinstance(e, PlayerSubstituted) for e in stored) == 4
    assert Match.replay(stored).state == match.state


def test_replay_equals_live_and_tossups_heard_follow_the_lineups() -> None:
    match, events = acf(regulation=4)
    events += cycle(match, "red", "r1")  # question 1: r1 r2 r3 r4
    events += match.handle(CallTimeout(team="red"), now=2.0)
    events += match.handle(Sub(team="red", player_in="r5", player_out="r1"), now=2.0)
    events += cycle(match, "blue", "b1", now=40.0)  # question 2: r5 r2 r3 r4
    events += match.handle(Sub(team="red", player_in="r1", player_out="r2"), now=41.0)
    events += cycle(match, "red", "r1", now=42.0)  # question 3: r5 r1 r3 r4
    events += cycle(match, "red", "r3", now=43.0)  # question 4
    assert Match.replay(events).state == match.state
    spans = lineup_history(events)
    red = [(s.first_question, s.names, s.reason) for s in spans if s.team == "red"]
    assert red == [
        (1, ("Red 1", "Red 2", "Red 3", "Red 4"), "initial"),
        (2, ("Red 5", "Red 2", "Red 3", "Red 4"), "own_timeout"),
        (3, ("Red 5", "Red 1", "Red 3", "Red 4"), "halftime"),
    ]
    heard = tossups_heard_by(spans, 4)
    # by hand: r1 heard 1 and 3-4, r2 1-2, r3 and r4 all four, r5 2-4; Blue's one all four
    assert {p: heard[("red", p)] for p in ("r1", "r2", "r3", "r4", "r5")} == {
        "r1": 3, "r2": 2, "r3": 4, "r4": 4, "r5": 3,
    }  # fmt: skip
    assert heard[("blue", "b1")] == 4


def test_a_late_arrival_takes_a_free_place_and_the_other_team_s_timeout_is_a_moment() -> None:
    match, events = acf(regulation=4)
    events += cycle(match, "blue", "b1")
    # Blue plays short: a late arrival takes a free place, from the next tossup
    events += match.handle(Join(team="blue", player="b2", name="Blue 2"), now=2.0)
    assert match.state.lineups["blue"] == ("b1", "b2") and bench(match.state, "blue") == []
    events += match.handle(CallTimeout(team="blue"), now=2.0)  # Red's sub in Blue's timeout
    events += match.handle(Sub(team="red", player_in="r5", player_out="r4"), now=2.0)
    assert events[-1].reason == "other_timeout"
    events += cycle(match, "blue", "b2", now=40.0)
    spans = lineup_history(events)
    assert [(s.team, s.first_question, s.names, s.reason) for s in spans[2:]] == [
        ("red", 2, ("Red 1", "Red 2", "Red 3", "Red 5"), "other_timeout"),
        ("blue", 2, ("Blue 1", "Blue 2"), "segment_break"),
    ]  # fmt: skip
    # without a lineup size a late arrival plays from the next tossup too
    grace = config(n_tossups=3, rules=rules_for("grace"))
    open_match, open_events = Match.create(grace, now=0.0)
    open_events += open_match.handle(Join(team="red", player="a", name="A"), now=0.0)
    open_events += open_match.handle(StartTossup(), now=1.0)
    open_events += open_match.handle(Join(team="red", player="b", name="B"), now=1.0)
    open_events += open_match.handle(Buzz(team="red", player="b"), now=1.0)
    open_events += open_match.handle(Rule(ruling=C), now=1.0)
    open_events += open_match.handle(StartTossup(), now=2.0)
    spans = [s for s in lineup_history(open_events) if s.team == "red"]
    assert [(s.first_question, s.names, s.reason) for s in spans] == [
        (1, ("A",), "initial"), (2, ("A", "B"), "segment_break"),
    ]  # fmt: skip
    assert tossups_heard_by(spans, 2) == {("red", "a"): 2, ("red", "b"): 1}
