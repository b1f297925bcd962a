"""Officiating by the format, in the match engine: replacements of thrown-out questions from
the packet's extras, halftime, overtime proposed at a tie and decided as the format says,
timeouts and the bonus conferral clock (``grace_arena.core.officiating``)."""

from __future__ import annotations

import pytest
from engine_helpers import config

from grace_arena.core.commands import (
    Buzz,
    CallTimeout,
    Join,
    Pause,
    ReadPart,
    Resume,
    Rule,
    RulePart,
    StartTossup,
    ThrowOut,
    ThrowOutBonus,
    TimeUp,
)
from grace_arena.core.errors import IllegalCommand
from grace_arena.core.events import (
    BonusPartRead,
    BonusStarted,
    Ruling,
    TimeoutCalled,
    TossupStarted,
    event_from_dict,
    event_to_dict,
)
from grace_arena.core.formats import rules_for
from grace_arena.core.match import Match
from grace_arena.core.officiating import Stage, standing
from grace_arena.core.phases import Phase

C, X = Ruling.CORRECT, Ruling.INCORRECT


def play(fmt: str = "acf", *, regulation: int = 4, extras: int = 3, parts=3, **rules):
    """A match of ``regulation`` tossups and bonuses plus ``extras`` of each (t0.., b0..)."""
    n = regulation + extras
    cfg = config(
        n_tossups=n, bonus_parts=(parts,) * n,
        rules=rules_for(fmt, regulation_tossups=regulation, **rules),
    )  # fmt: skip
    match, events = Match.create(cfg, now=0.0)
    for team in ("red", "blue"):
        events += match.handle(Join(team=team, player=f"{team}-1", name="One"), now=0.0)
    return match, events


def cycle(match: Match, team: str | None, *, bonus=(X, X, X), now: float = 1.0) -> list:
    """One tossup: ``team`` answers it (None: nobody), then its bonus parts are ruled."""
    events = match.handle(StartTossup(), now=now)
    if team is None:
        events += match.handle(ThrowOut(reason="dead for the test"), now=now)
        return events
    events += match.handle(Buzz(team=team, player=f"{team}-1"), now=now)
    events += match.handle(Rule(ruling=C), now=now)
    for ruling in bonus:
        if match.phase is not Phase.BONUS:
            break
        events += match.handle(RulePart(ruling=ruling), now=now)
    return events


def test_a_thrown_out_tossup_is_replaced_by_the_packet_s_next_extra() -> None:
    match, events = play(regulation=4, extras=2)
    events += cycle(match, "red")  # t0
    events += match.handle(StartTossup(), now=2.0)  # t1
    events += match.handle(ThrowOut(reason="misread"), now=2.0)
    started = match.handle(StartTossup(), now=3.0)
    assert started[0] == TossupStarted(
        seq=started[0].seq, t=3.0, tossup_id="t4", index=2, replaces="t1"
    )  # the first extra, not the next regulation tossup
    # then regulation goes on in packet order: t2, t3, and 4 heard make regulation
    match.handle(Buzz(team="blue", player="blue-1"), now=3.0)
    match.handle(Rule(ruling=C), now=3.0)
    while match.phase is Phase.BONUS:
        match.handle(RulePart(ruling=X), now=3.0)
    for _ in range(2):
        events = cycle(match, "red")
        assert events[0].tossup_id in ("t2", "t3") and events[0].replaces is None
    assert match.game.heard == 4 and match.game.played == ("t0", "t1", "t4", "t2", "t3")
    assert standing(match.config, match.game).stage is Stage.DECIDED


def test_the_moderator_may_pick_the_replacement_and_with_no_extra_left_the_next_one_is_read() -> (
    None
):
    match, _ = play(regulation=3, extras=1)
    match.handle(StartTossup(), now=1.0)
    match.handle(ThrowOut(), now=1.0)
    (picked,) = match.handle(StartTossup(tossup_id="t2"), now=2.0)
    assert (picked.tossup_id, picked.replaces) == ("t2", "t0")
    match.handle(ThrowOut(), now=2.0)
    (extra,) = match.handle(StartTossup(), now=3.0)
    assert (extra.tossup_id, extra.replaces) == ("t3", "t2")
    match.handle(ThrowOut(), now=3.0)
    (sequential,) = match.handle(StartTossup(), now=4.0)  # no extra left: the next one
    assert (sequential.tossup_id, sequential.replaces) == ("t1", "t3")


def test_a_thrown_out_bonus_is_replaced_by_the_next_extra_bonus_or_the_moderator_s_pick() -> None:
    match, _ = play(regulation=3, extras=2)
    match.handle(StartTossup(), now=1.0)
    match.handle(Buzz(team="red", player="red-1"), now=1.0)
    match.handle(Rule(ruling=C), now=1.0)
    assert match.current_bonus.id == "b0"
    events = match.handle(ThrowOutBonus(reason="typo in part 2"), now=1.0)
    assert isinstance(events[-1], BonusStarted)
    assert (events[-1].bonus_id, events[-1].replaces) == ("b3", "b0")
    with pytest.raises(IllegalCommand, match="'b3' has already been used"):
        match.decide(ThrowOutBonus(replacement="b3"), now=1.0)
    with pytest.raises(IllegalCommand, match="no bonus 'b9'"):
        match.decide(ThrowOutBonus(replacement="b9"), now=1.0)
    events = match.handle(ThrowOutBonus(replacement="b2"), now=1.0)
    assert (events[-1].bonus_id, events[-1].replaces) == ("b2", "b3")
    for _ in range(3):
        match.handle(RulePart(ruling=C), now=1.0)
    cycle(match, "blue")  # the next cycle has the next regulation bonus
    assert match.game.bonuses_used == ("b0", "b3", "b2", "b1")


def test_halftime_comes_after_the_format_s_tossup() -> None:
    match, _ = play(regulation=20, extras=0, halftime_after=2)
    cycle(match, "red")
    assert standing(match.config, match.game).stage is Stage.PLAYING
    cycle(match, "blue")
    half = standing(match.config, match.game)
    assert half == standing(match.config, match.game)
    assert (half.stage, half.text) == (Stage.HALFTIME, "Halftime (after 2 of 20 tossups)")
    match.handle(StartTossup(), now=5.0)
    assert standing(match.config, match.game).stage is Stage.PLAYING
    match.handle(ThrowOut(), now=5.0)  # the second half has begun: no halftime again
    assert standing(match.config, match.game).stage is Stage.PLAYING
    assert rules_for("acf").halftime_after == 10 and rules_for("naqt").halftime_after == 10


def test_acf_overtime_is_sudden_death_without_bonuses() -> None:
    match, _ = play("acf", regulation=2, extras=3)
    cycle(match, "red", bonus=(C, X, X))  # 20
    cycle(match, "blue", bonus=(C, X, X))  # 20-20
    tied = standing(match.config, match.game)
    assert (tied.stage, tied.text) == (
        Stage.TIED, "Tied after regulation: overtime (sudden death, no bonuses)"
    )  # fmt: skip
    cycle(match, None)  # thrown out: it is not heard, its replacement is
    assert standing(match.config, match.game).stage is Stage.TIED
    events = match.handle(StartTossup(), now=5.0)
    assert events[0].tossup_id == "t3" and events[0].replaces == "t2"
    assert standing(match.config, match.game).stage is Stage.SUDDEN_DEATH
    match.handle(Buzz(team="blue", player="blue-1"), now=5.0)
    match.handle(Rule(ruling=C), now=5.0)
    assert match.phase is Phase.ANSWERED  # no bonus in overtime
    decided = standing(match.config, match.game)
    assert (decided.stage, decided.text) == (
        Stage.DECIDED, "The match is decided in overtime: end it"
    )  # fmt: skip


def test_naqt_overtime_reads_three_tossups_whatever_the_score_then_sudden_death() -> None:
    assert rules_for("naqt").overtime_tossups == 3 and rules_for("acf").overtime_tossups == 1
    match, _ = play("naqt", regulation=2, extras=5)
    cycle(match, "red")  # 15 (a power)
    cycle(match, "blue")  # 15-15
    tied = standing(match.config, match.game)
    assert (tied.stage, tied.text) == (
        Stage.TIED, "Tied after regulation: overtime (3 tossups, then sudden death, no bonuses)"
    )  # fmt: skip
    cycle(match, "red")  # overtime 1: 30-15, no bonus
    assert match.phase is Phase.ANSWERED and match.scores == {"red": 30, "blue": 15}
    s = standing(match.config, match.game)
    assert (s.stage, s.text) == (Stage.OVERTIME, "Overtime: tossup 2 of 3 next")
    cycle(match, "blue")  # 30-30
    match.handle(StartTossup(), now=3.0)
    assert standing(match.config, match.game).text == "Overtime: tossup 3 of 3"
    match.handle(ThrowOut(), now=3.0)
    cycle(match, None)  # (thrown out twice: neither counts)
    assert standing(match.config, match.game).stage is Stage.OVERTIME
    cycle(match, "blue")  # the third: 30-45, decided
    assert standing(match.config, match.game).stage is Stage.DECIDED


def test_timeouts_are_as_many_as_the_format_allows_between_tossups() -> None:
    match, _ = play("acf", regulation=4)
    assert rules_for("acf").timeouts == 1
    (called,) = match.handle(CallTimeout(team="red"), now=1.0)
    assert isinstance(called, TimeoutCalled) and (called.number, called.ends) == (1, 31.0)
    with pytest.raises(IllegalCommand, match="a timeout of team 'red' is on now"):
        match.decide(CallTimeout(team="blue"), now=2.0)
    cycle(match, "red", now=40.0)
    with pytest.raises(IllegalCommand, match="'red' has called its 1 timeout of this match"):
        match.decide(CallTimeout(team="red"), now=41.0)
    with pytest.raises(IllegalCommand, match="no team 'green'"):
        match.decide(CallTimeout(team="green"), now=41.0)
    match.handle(StartTossup(), now=42.0)
    with pytest.raises(IllegalCommand, match="cannot timeout while the match is reading"):
        match.decide(CallTimeout(team="blue"), now=42.0)
    unlimited, _ = play("grace", regulation=4, timeouts=None)
    for now in (1.0, 40.0, 80.0):
        unlimited.handle(CallTimeout(team="red"), now=now)
    assert [t.team for t in unlimited.state.timeouts] == ["red"] * 3


def test_the_conferral_clock_runs_once_the_part_is_read_and_stands_still_while_paused() -> None:
    match, _ = play("acf", regulation=4)
    assert rules_for("acf").conferral_time == 5.0
    match.handle(StartTossup(), now=1.0)
    match.handle(Buzz(team="red", player="red-1"), now=1.0)
    match.handle(Rule(ruling=C), now=1.0)
    assert match.game.deadline is None  # read aloud: no answer clock on the part
    (read,) = match.handle(ReadPart(), now=10.0)
    assert read == BonusPartRead(seq=read.seq, t=10.0, bonus_id="b0", part=0, deadline=15.0)
    assert match.game.conferral == 15.0
    match.handle(Pause(), now=12.0)
    assert (match.game.conferral, match.game.conferral_held) == (None, 3.0)
    match.handle(Resume(), now=100.0)
    assert (match.game.conferral, match.game.conferral_held) == (103.0, None)
    with pytest.raises(IllegalCommand, match="no time limit running"):
        match.decide(TimeUp(), now=200.0)  # the clock rules nothing: the moderator does
    match.handle(RulePart(ruling=C), now=104.0)
    assert match.game.conferral is None and match.game.bonus.part == 1
    no_clock, _ = play("grace", regulation=4, bonuses=True)
    no_clock.handle(StartTossup(), now=1.0)
    no_clock.handle(Buzz(team="red", player="red-1"), now=1.0)
    no_clock.handle(Rule(ruling=C), now=1.0)
    with pytest.raises(IllegalCommand, match="no conferral clock"):
        no_clock.decide(ReadPart(), now=2.0)


def test_replay_of_the_record_is_the_live_match() -> None:
    match, events = play("naqt", regulation=2, extras=4)
    events += match.handle(CallTimeout(team="blue"), now=0.5)
    events += cycle(match, "red", bonus=())
    events += match.handle(ReadPart(), now=2.0)
    events += match.handle(Pause(), now=3.0)
    events += match.handle(ThrowOutBonus(), now=3.0)
    events += match.handle(ReadPart(), now=3.5)
    for _ in range(3):
        events += match.handle(RulePart(ruling=X), now=4.0)
    events += match.handle(StartTossup(), now=5.0)
    events += match.handle(ThrowOut(), now=5.0)
    events += cycle(match, "blue", bonus=(C, C, X))
    stored = [event_from_dict(event_to_dict(e)) for e in events]
    assert stored == events
    assert Match.replay(stored).state == match.state


def test_a_match_s_settings_may_change_the_format_s_officiating_within_bounds() -> None:
    from pydantic import ValidationError

    from grace_arena.protocol import MatchSettings

    settings = MatchSettings(format="naqt", timeouts=2, halftime_after=12, conferral_time=7)
    rules = rules_for("naqt", **settings.scoring())
    assert (rules.timeouts, rules.halftime_after, rules.conferral_time) == (2, 12, 7.0)
    assert rules.overtime_tossups == 3 and rules.format == "custom"
    assert rules_for("naqt", **MatchSettings(format="naqt").scoring()).format == "naqt"
    with pytest.raises(ValidationError, match="timeouts must be from 0 to 10 timeouts"):
        MatchSettings(timeouts=11)
