"""Protests and corrections of earlier cycles in the match engine: events that amend the
record, the scores and standings that follow them, and the replay that equals the live match."""

from __future__ import annotations

import pytest
from engine_helpers import config

from grace_arena.core import protests
from grace_arena.core.commands import (
    Buzz,
    CorrectRuling,
    EndMatch,
    FileProtest,
    Join,
    ResolveProtest,
    Reveal,
    Rule,
    RulePart,
    StartTossup,
    TimeUp,
    UndoRuling,
)
from grace_arena.core.errors import IllegalCommand
from grace_arena.core.events import (
    BonusPartCorrected,
    ProtestFiled,
    ProtestResolved,
    Ruling,
    RulingCorrected,
)
from grace_arena.core.formats import rules_for
from grace_arena.core.match import Match
from grace_arena.core.phases import Phase
from grace_arena.core.stats import match_play

C, X = Ruling.CORRECT, Ruling.INCORRECT


class Game:
    """An ACF match of red and blue (one player each, red-1 and red-2 for red), recorded."""

    def __init__(self, fmt: str = "acf", **rules) -> None:
        cfg = config(n_tossups=5, bonus_parts=(3, 3, 3, 3, 3), rules=rules_for(fmt, **rules))
        self.match, self.events = Match.create(cfg, now=0.0)
        self.now = 0.0
        self.do(Join(team="red", player="red-1", name="Ann"))
        self.do(Join(team="red", player="red-2", name="Bea"))
        self.do(Join(team="blue", player="blue-1", name="Cal"))

    def do(self, command) -> list:
        self.now += 1.0
        events = self.match.handle(command, now=self.now)
        self.events += events
        return events

    def cycle(self, team: str, *parts: Ruling, player: str | None = None) -> None:
        """A tossup answered correctly by ``team`` at the first word, and its bonus ruled."""
        self.do(StartTossup())
        self.do(Buzz(team=team, player=player or f"{team}-1"))
        self.do(Rule(ruling=C))
        for ruling in parts:
            self.do(RulePart(ruling=ruling))

    def negged_dead(self, team: str) -> None:
        """``team`` interrupts and is ruled wrong (a neg); nobody else answers."""
        self.do(StartTossup())
        self.do(Buzz(team=team, player=f"{team}-1"))
        self.do(Rule(ruling=X))
        self.do(Reveal(to=10_000))
        self.now += 100.0
        self.do(TimeUp())

    def seq_of(self, cycle: int, *, team: str, part: int | None = None) -> int:
        """The seq of a ruling in force, as the officiating view lists it."""
        rulings = protests.cycles(self.match.state)[cycle - 1].rulings
        return next(r.seq for r in rulings if r.team == team and r.part == part)

    def replayed(self) -> Match:
        return Match.replay(self.events)


def test_a_bonus_part_two_cycles_back_is_corrected_and_the_replay_equals_the_live_match():
    g = Game()
    g.cycle("red", C, X, C)  # 10 + 20
    g.cycle("blue", X, X, X)  # 10
    g.cycle("blue", C, C, C)  # 10 + 30
    assert g.match.scores == {"red": 30, "blue": 50}
    amended = g.seq_of(1, team="red", part=1)
    events = g.do(CorrectRuling(seq=amended, ruling=C, reason="the answer was right"))
    assert [type(e) for e in events] == [BonusPartCorrected]
    assert events[0].amends == amended and events[0].points == 10
    assert g.match.scores == {"red": 40, "blue": 50}
    assert g.match.phase is Phase.ANSWERED  # the match goes on where it was
    # the ruling corrected stays in the record; the correction is in force in its place
    assert amended in {e.seq for e in g.events}
    assert g.seq_of(1, team="red", part=1) == events[0].seq
    assert g.replayed().state == g.match.state
    # the stats follow: red's bonus points, and its PPB over the one bonus it heard
    red = match_play(g.events, match_id=1).result().teams["red"]
    assert (red.bonus_points, red.bonuses_heard, red.points) == (30, 1, 40)


def test_who_buzzed_is_corrected_and_the_points_follow_the_buzz():
    g = Game("naqt")  # powers 15 before the mark (word 10): the buzz was at word 0
    g.cycle("red", X, X, X)
    g.cycle("blue", X, X, X)
    g.cycle("red", X, X, X)
    assert g.match.scores == {"red": 30, "blue": 15}
    seq = g.seq_of(1, team="red")
    g.do(CorrectRuling(seq=seq, player="red-2", reason="Bea buzzed, not Ann"))
    cycle = protests.cycles(g.match.state)[0]
    assert [(r.player, r.points, r.corrected) for r in cycle.rulings if r.part is None] == [
        ("red-2", 15, True)
    ]
    # the player's stats follow, the team's score does not move
    buzzes = match_play(g.events, match_id=1).buzzes
    assert [(b.player, b.points, b.power) for b in buzzes] == [
        ("red-2", 15, True), ("blue-1", 15, True), ("red-1", 15, True),
    ]  # fmt: skip
    assert g.match.scores == {"red": 30, "blue": 15}
    # another team's player: the buzz moves to that team, its points with it
    g.do(CorrectRuling(seq=g.seq_of(1, team="red"), player="blue-1"))
    assert g.match.scores == {"red": 15, "blue": 30}
    assert g.replayed().state == g.match.state


def test_a_correction_then_an_undo_of_the_last_ruling_keeps_the_correction():
    g = Game()
    g.cycle("red", C, C, C)
    g.cycle("blue")  # the bonus is up
    g.do(RulePart(ruling=C))
    with pytest.raises(IllegalCommand, match="allowed now"):  # not while a bonus is played
        g.do(CorrectRuling(seq=g.seq_of(1, team="red"), ruling=X))
    g.do(RulePart(ruling=C))
    g.do(RulePart(ruling=C))
    g.do(CorrectRuling(seq=g.seq_of(1, team="red", part=0), ruling=X))
    assert g.match.scores == {"red": 30, "blue": 40}
    g.do(UndoRuling())  # blue's last part
    assert g.match.scores == {"red": 30, "blue": 30}
    assert g.match.phase is Phase.BONUS
    assert g.replayed().state == g.match.state


def test_corrections_that_make_no_sense_are_refused_and_change_nothing():
    g = Game()
    g.cycle("red", C, C, C)
    g.negged_dead("blue")
    before = g.match.state
    seq = g.seq_of(1, team="red")
    cases = [
        (CorrectRuling(seq=seq, ruling=C), "correct already"),
        (CorrectRuling(seq=999, ruling=C), "no ruling 999 in force"),
        (CorrectRuling(seq=seq, player="nobody"), "no player 'nobody'"),
        (CorrectRuling(seq=g.seq_of(1, team="red", part=0), player="red-2"), "no player to"),
        (CorrectRuling(seq=seq, ruling=Ruling.PROMPT), "not a prompt"),
    ]
    for command, message in cases:
        with pytest.raises(IllegalCommand, match=message):
            g.match.decide(command, now=g.now)
    # a second correct answer on a tossup is refused: the one that stands is corrected first
    g.do(StartTossup())
    g.do(Buzz(team="red", player="red-1"))
    g.do(Rule(ruling=X))
    g.do(Buzz(team="blue", player="blue-1"))
    g.do(Rule(ruling=C))
    for ruling in (X, X, X):
        g.do(RulePart(ruling=ruling))
    with pytest.raises(IllegalCommand, match=r"team blue's correct answer .* stands"):
        g.do(CorrectRuling(seq=g.seq_of(3, team="red"), ruling=C))
    # a ruling corrected is no longer in force: the correction is
    g.do(CorrectRuling(seq=seq, ruling=X))
    with pytest.raises(IllegalCommand, match="it was corrected"):
        g.do(CorrectRuling(seq=seq, ruling=C))
    assert before.seq < g.match.state.seq


def play_to_a_close_end() -> Game:
    """Red 25, blue 40 at the end: red's neg on the third tossup decides it."""
    g = Game()
    g.cycle("red", C, C, X)  # red 30
    g.cycle("blue", C, C, C)  # blue 40
    g.negged_dead("red")  # red 25
    g.do(FileProtest(team="red", tossup="3", answer="Carver", reason="the answer line takes it"))
    g.do(FileProtest(team="red", tossup="t0", part=3, answer="Iowa", reason="we said Iowa State"))
    g.do(EndMatch())
    return g


def test_an_upheld_protest_changes_the_ruling_the_score_and_the_result():
    g = play_to_a_close_end()
    assert g.match.scores == {"red": 25, "blue": 40}
    tossup, part = protests.protests(g.match.state)
    assert (tossup.team, tossup.tossup_id, tossup.part, tossup.open) == ("red", "t2", None, True)
    assert tossup.ruling_seq == g.seq_of(3, team="red")
    assert (part.tossup_id, part.part, part.answer) == ("t0", 2, "Iowa")
    # whether it matters, before anyone decides
    impact = protests.impact(g.match.state, tossup.seq)
    assert impact.if_upheld == {"red": 40, "blue": 40} and impact.changes_result
    assert "it would change the result (a tie, not blue ahead)" in impact.describe()
    assert protests.impact(g.match.state, part.seq).if_upheld == {"red": 35, "blue": 40}
    assert not protests.impact(g.match.state, part.seq).changes_result
    events = g.do(ResolveProtest(protest=tossup.seq, decision="upheld", by="Dana (TD)",
                                 reason="Carver is on the answer line"))  # fmt: skip
    assert [type(e) for e in events] == [ProtestResolved, RulingCorrected]
    assert (events[1].by, events[1].protest_seq, events[1].points) == ("td", tossup.seq, 10)
    assert g.match.scores == {"red": 40, "blue": 40}
    assert g.match.phase is Phase.ENDED
    resolved = protests.protests(g.match.state)[0]
    assert (resolved.decision, resolved.decided_by, resolved.correction_seq) == (
        "upheld", "Dana (TD)", events[1].seq,
    )  # fmt: skip
    assert g.replayed().state == g.match.state
    red = match_play(g.events, match_id=1).result().teams["red"]
    assert (red.points, red.negs, red.correct) == (40, 0, 2)


def test_a_denied_protest_keeps_the_ruling_and_is_kept_with_who_decided_and_why():
    g = play_to_a_close_end()
    part = protests.protests(g.match.state)[1]
    events = g.do(ResolveProtest(protest=part.seq, decision="denied", by="Dana (TD)",
                                 reason="Iowa alone is not enough"))  # fmt: skip
    assert [type(e) for e in events] == [ProtestResolved]
    assert g.match.scores == {"red": 25, "blue": 40}
    denied = protests.protests(g.match.state)[1]
    assert (denied.decision, denied.decided_by, denied.decision_reason, denied.open) == (
        "denied", "Dana (TD)", "Iowa alone is not enough", False,
    )  # fmt: skip
    with pytest.raises(IllegalCommand, match="already resolved: denied by Dana"):
        g.do(ResolveProtest(protest=part.seq, decision="upheld", by="Eve"))
    with pytest.raises(IllegalCommand, match="no protest 1 in this match"):
        g.do(ResolveProtest(protest=1, decision="upheld", by="Eve"))
    assert g.replayed().state == g.match.state


def test_a_protest_is_filed_while_the_match_goes_on_and_bad_ones_are_refused():
    g = Game()
    g.cycle("red", C, C, C)
    g.do(StartTossup())
    g.do(Buzz(team="blue", player="blue-1"))
    events = g.do(FileProtest(team="blue", tossup="1", reason="the tossup had two answers"))
    assert [type(e) for e in events] == [ProtestFiled]
    assert g.match.phase is Phase.BUZZED and g.match.state.game.floor is not None
    assert events[0].ruling_seq == g.seq_of(1, team="red")  # the correct answer it contests
    # weighed at once, while the tossup is played: red's ten would become a neg
    upheld = protests.impact(g.match.state, events[0].seq)
    assert (upheld.refused, upheld.if_upheld) == (None, {"red": 25, "blue": 0})
    for command, message in [
        (FileProtest(team="green", tossup="1"), "no team 'green'"),
        (FileProtest(team="red", tossup="9"), "no tossup '9' played"),
        (FileProtest(team="red", tossup="t4"), "'t4' has not been played"),
        (FileProtest(team="red", tossup="1", part=4), "3 parts, not 4"),
        (FileProtest(team="red", tossup="1", by="player", player="blue-1"), "has not joined"),
        (FileProtest(team="red", tossup="1", by="player", player="red-1"), "moderator only"),
    ]:
        with pytest.raises(IllegalCommand, match=message):
            g.match.decide(command, now=g.now)
    with pytest.raises(IllegalCommand, match="allowed now"):  # resolved after the game
        g.do(ResolveProtest(protest=events[0].seq, decision="denied", by="TD"))
    assert g.replayed().state == g.match.state


def test_bonuses_heard_count_a_bonus_read_on_a_tossup_reversed_and_one_earned_unread():
    """A team hears a bonus for every tossup it answered where a bonus follows, read or not
    (YellowFruit's and SQBS's count), and keeps the bonus it was read on a tossup reversed
    after it (the bonus stays with its cycle): Red answers two tossups and hears both
    bonuses (30 + 20); the first is reversed: Red still heard 2 (50 points, PPB 25). Blue's
    tossup, answered as the match ends, earned a bonus never read: heard 1, 0 points."""
    g = Game()
    g.cycle("red", C, C, C)
    g.cycle("red", C, C, X)
    g.do(CorrectRuling(seq=g.seq_of(1, team="red"), ruling=X, reason="a wrong answer taken"))
    g.do(StartTossup())
    g.do(Buzz(team="blue", player="blue-1"))
    g.do(Rule(ruling=C))
    g.do(EndMatch())
    lines = match_play(g.events, match_id=1).result().teams
    assert (lines["red"].correct, lines["red"].bonuses_heard, lines["red"].bonus_points) == (
        1,
        2,
        50,
    )
    assert (lines["blue"].bonuses_heard, lines["blue"].bonus_points) == (1, 0)
