"""Timed halves (NAQT's option, ``half_time``) in the match engine, on a clock the test keeps:
the game clock starts with the half's first tossup, stands still in a timeout and while
paused, and when it runs out the tossup in play is read to the end, both teams may answer and
a correct answer earns its bonus; then halftime, or the end of regulation (a tie goes to
overtime, untimed, without bonuses). The clock is folded from the record: the replay has it."""

from __future__ import annotations

import pytest
from test_officiating import play

from grace_arena.core.commands import (
    Buzz,
    CallTimeout,
    HalfTimeUp,
    Pause,
    Resume,
    Reveal,
    Rule,
    RulePart,
    StartTossup,
    TimeUp,
)
from grace_arena.core.errors import IllegalCommand
from grace_arena.core.events import HalfTimeExpired, Ruling
from grace_arena.core.formats import format_named, rules_for
from grace_arena.core.match import Match
from grace_arena.core.officiating import Stage, standing

C, X = Ruling.CORRECT, Ruling.INCORRECT


def where(match: Match) -> Stage:
    return standing(match.config, match.game, match.state.half_clock).stage


def test_a_timed_half_runs_stops_and_ends_with_the_cycle_in_play() -> None:
    match, events = play("naqt", regulation=8, extras=3, half_time=60.0)
    clock = lambda: match.state.half_clock  # noqa: E731
    assert clock().ends(60.0) is None  # before the first tossup, no clock runs
    events += match.handle(StartTossup(), now=10.0)  # the clock starts
    assert clock().left(60.0, 20.0) == 50.0
    events += match.handle(Reveal(to=10_000), now=19.0)  # (a ten, not a power)
    events += match.handle(Buzz(team="red", player="red-1"), now=20.0)
    events += match.handle(Rule(ruling=C), now=20.0)
    for part, t in zip((C, X, X), (22.0, 24.0, 25.0), strict=True):  # it runs in the bonus
        events += match.handle(RulePart(ruling=part), now=t)
    events += match.handle(CallTimeout(team="blue"), now=30.0)  # stopped: 20 s used
    assert clock().ends(60.0) is None and clock().left(60.0, 65.0) == 40.0
    events += match.handle(StartTossup(), now=70.0)  # runs again
    events += match.handle(Pause(), now=75.0)  # stopped again: 25 s used
    assert clock().left(60.0, 90.0) == 35.0
    events += match.handle(Resume(), now=95.0)
    assert clock().ends(60.0) == 130.0
    with pytest.raises(IllegalCommand, match=r"not up yet \(1.0 s left\)"):
        match.decide(HalfTimeUp(), now=129.0)
    events += match.handle(HalfTimeUp(), now=130.0)
    assert isinstance(events[-1], HalfTimeExpired) and events[-1].half == 1
    assert where(match) is Stage.PLAYING  # the tossup in play is read to the end
    events += match.handle(Reveal(to=10_000), now=131.0)
    events += match.handle(Buzz(team="red", player="red-1"), now=132.0)
    events += match.handle(Rule(ruling=X), now=132.0)  # after the end: 0, and blue may answer
    events += match.handle(Buzz(team="blue", player="blue-1"), now=133.0)
    events += match.handle(Rule(ruling=C), now=133.0)
    assert match.game.bonus is not None  # a correct answer earns its bonus
    for part in (C, X, X):
        events += match.handle(RulePart(ruling=part), now=134.0)
    half = standing(match.config, match.game, clock())
    assert (half.stage, half.text) == (Stage.HALFTIME, "Halftime: time is up (after 2 tossups)")
    assert match.scores == {"red": 20, "blue": 20}

    events += match.handle(StartTossup(), now=200.0)  # the second half: a full clock
    assert clock().half == 2 and clock().ends(60.0) == 260.0 and where(match) is Stage.PLAYING
    events += match.handle(HalfTimeUp(), now=260.0)
    events += match.handle(Reveal(to=10_000), now=261.0)
    events += match.handle(TimeUp(), now=300.0)  # nobody answers: dead, regulation is over
    tied = standing(match.config, match.game, clock())
    assert tied.stage is Stage.TIED and "3 tossups, then sudden death" in (tied.text or "")
    assert clock().regulation_heard == 3

    events += match.handle(StartTossup(), now=310.0)  # overtime: untimed, no bonuses
    assert clock().ends(60.0) is None and where(match) is Stage.OVERTIME
    events += match.handle(Buzz(team="red", player="red-1"), now=311.0)
    events += match.handle(Rule(ruling=C), now=311.0)
    assert match.game.bonus is None and match.scores == {"red": 35, "blue": 20}  # a power
    # the clock is the record's: the replay has it as it was
    assert Match.replay(events).state == match.state


def test_the_clock_stands_still_while_nobody_serves_the_match_and_is_an_option_of_naqt() -> None:
    from grace_arena.core.commands import ResumeClock

    match, _ = play("naqt", regulation=8, extras=3, half_time=60.0)
    match.handle(StartTossup(), now=10.0)
    match.handle(Reveal(to=10_000), now=20.0)  # the buzz window runs: a clock to resume
    # the server was down from 22 to 82: those 60 s are not the game's
    match.handle(ResumeClock(down_since=22.0, reason="restart"), now=82.0)
    assert match.state.half_clock.ends(60.0) == 130.0
    with pytest.raises(IllegalCommand, match="halves are not timed"):
        play("naqt", regulation=8, extras=3)[0].decide(HalfTimeUp(), now=1.0)
    # NAQT plays them as an option (its format's name is kept); untimed by default
    assert format_named("naqt").keeps("half_time", 540.0)
    assert rules_for("naqt").half_time is None
    assert rules_for("naqt", half_time=540.0).format == "naqt"
