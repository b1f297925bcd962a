"""Random tossup–bonus cycles against the match engine: every step an event, scores the sum of
the rulings in force, undo exact across the cycle, and a replay that rebuilds the same match."""

from __future__ import annotations

from dataclasses import replace

from engine_helpers import config
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from grace_arena.core.commands import (
    AnswerPart,
    Buzz,
    CallTimeout,
    Command,
    EndMatch,
    Join,
    ReadPart,
    Rule,
    RulePart,
    StartTossup,
    ThrowOut,
    ThrowOutBonus,
    TimeUp,
    UndoRuling,
)
from grace_arena.core.errors import IllegalCommand
from grace_arena.core.events import (
    BonusEnded,
    BonusPartRuled,
    BonusPartUndone,
    BonusStarted,
    BuzzRepeated,
    Ruled,
    Ruling,
    RulingUndone,
    TossupEnded,
    TossupStarted,
)
from grace_arena.core.formats import rules_for
from grace_arena.core.match import Match
from grace_arena.core.phases import HAS_FLOOR, Phase

TEAMS = ("red", "blue")


class CycleMachine(RuleBasedStateMachine):
    @initialize(
        fmt=st.sampled_from(["acf", "pace", "naqt"]),
        bouncebacks=st.booleans(),
        parts=st.lists(st.integers(1, 4), min_size=1, max_size=4).map(tuple),
        screen=st.booleans(),
        regulation=st.sampled_from([None, 2]),
    )
    def setup(self, fmt, bouncebacks, parts, screen, regulation):
        rules = rules_for(fmt, bouncebacks=bouncebacks, regulation_tossups=regulation,
                          bonus_answer_time=4.0)  # fmt: skip
        self.cfg = config(
            n_tossups=4, rules=rules, bonus_parts=parts,
            reading_mode="screen" if screen else "read_aloud",
        )  # fmt: skip
        self.match, self.events = Match.create(self.cfg, now=0.0)
        self.now = 0.0
        self.counted: dict[int, tuple] = {}  # ruling seq -> (tossup, team, points, bonus)
        self.before_rulings: list = []
        for team in TEAMS:
            self.do(Join(team=team, player=f"{team}-1", name="One"))

    def do(self, command: Command) -> list:
        before = self.match.state
        try:
            events = self.match.handle(command, now=self.now)
        except IllegalCommand as exc:
            assert str(exc) and self.match.state is before
            return []
        for ev in events:
            event(ev.type)
            match ev:
                case Ruled():
                    self.counted[ev.seq] = (ev.tossup_id, ev.team, ev.points, None)
                case BonusPartRuled():
                    self.counted[ev.seq] = (ev.tossup_id, ev.team, ev.points, ev.bonus_id)
                    part = self.cfg.bonus(ev.bonus_id).parts[ev.part]
                    assert ev.points == (part.value if ev.ruling is Ruling.CORRECT else 0)
                case RulingUndone() | BonusPartUndone():
                    del self.counted[ev.ruled_seq]
                case TossupEnded(outcome="thrown_out"):
                    self.counted = {k: v for k, v in self.counted.items() if v[0] != ev.tossup_id}
                case BonusEnded(outcome="thrown_out"):
                    self.counted = {k: v for k, v in self.counted.items() if v[3] != ev.bonus_id}
                case BonusStarted():
                    assert ev.team == self.match.game.bonus.team
                case TossupStarted():
                    self.before_rulings.clear()
        if events and isinstance(events[0], Ruled | BonusPartRuled):
            self.before_rulings.append(before.game)
        if isinstance(command, UndoRuling) and events:
            restored = self.before_rulings.pop()
            # (the conferral clock of the part taken back is over: the moderator reads again)
            g = self.match.game
            assert g == replace(restored, deadline=g.deadline, conferral=None, conferral_held=None)
            assert self.match.phase in (Phase.BUZZED, Phase.PROMPTED, Phase.BONUS)
        if any(isinstance(e, TossupEnded | BonusEnded) and e.outcome == "thrown_out"
               for e in events):  # fmt: skip
            self.before_rulings.clear()
        self.events.extend(e for e in events if not isinstance(e, BuzzRepeated))
        return events

    # -- moves ---------------------------------------------------------------------------------

    @precondition(lambda self: self.match.phase in (Phase.IDLE, Phase.ANSWERED, Phase.DEAD,
                                                    Phase.THROWN_OUT))  # fmt: skip
    @rule(team=st.sampled_from(TEAMS), correct=st.booleans())
    def play_a_tossup(self, team, correct):
        if not self.do(StartTossup()):
            return
        self.now += 1
        self.do(Buzz(team=team, player=f"{team}-1"))
        self.do(Rule(ruling=Ruling.CORRECT if correct else Ruling.INCORRECT))

    @precondition(lambda self: self.match.phase in HAS_FLOOR)
    @rule(ruling=st.sampled_from(list(Ruling)))
    def rule_tossup(self, ruling):
        self.do(Rule(ruling=ruling))

    @precondition(lambda self: self.match.phase is Phase.BONUS)
    @rule(turn=st.booleans(), text=st.sampled_from(["part 0", "part 2", "no idea"]))
    def answer(self, turn, text):
        team = self.match.bonus_turn() if turn else next(
            t for t in TEAMS if t != self.match.bonus_turn()
        )  # fmt: skip
        self.do(AnswerPart(team=team, player=f"{team}-1", text=text))

    @precondition(lambda self: self.match.phase is Phase.BONUS)
    @rule(ruling=st.sampled_from([Ruling.CORRECT, Ruling.CORRECT, Ruling.INCORRECT,
                                  Ruling.PROMPT]))  # fmt: skip
    def rule_part(self, ruling):
        self.do(RulePart(ruling=ruling))

    @precondition(lambda self: self.match.game.deadline is not None)
    @rule(seconds=st.sampled_from([1.0, 5.0, 11.0]))
    def time_up(self, seconds):
        self.now += seconds
        self.do(TimeUp())

    @rule()
    def undo(self):
        self.do(UndoRuling())

    @precondition(lambda self: self.match.phase is Phase.BONUS)
    @rule()
    def throw_out_bonus(self):
        self.do(ThrowOutBonus(reason="misread"))

    @precondition(lambda self: self.match.game.tossup_id is not None)
    @rule()
    def throw_out_cycle(self):
        self.do(ThrowOut())

    @precondition(lambda self: self.match.phase is Phase.BONUS)
    @rule()
    def read_part(self):
        if self.do(ReadPart()):
            assert self.match.game.conferral == self.now + self.cfg.rules.conferral_time

    @rule(team=st.sampled_from(TEAMS), seconds=st.sampled_from([1.0, 40.0]))
    def call_timeout(self, team, seconds):
        self.now += seconds
        self.do(CallTimeout(team=team))

    @precondition(lambda self: len(self.events) > 30)
    @rule()
    def end(self):
        self.do(EndMatch())

    # -- invariants ----------------------------------------------------------------------------

    @invariant()
    def scores_are_the_rulings_in_force(self):
        expected = dict.fromkeys(TEAMS, 0)
        for _, team, points, _ in self.counted.values():
            expected[team] += points
        assert self.match.scores == expected

    @invariant()
    def the_record_replays_to_the_same_match(self):
        assert [e.seq for e in self.events] == list(range(1, len(self.events) + 1))
        assert Match.replay(self.events).state == self.match.state

    @invariant()
    def a_bonus_follows_only_a_tossup_answered_correctly_in_regulation(self):
        g = self.match.game
        if g.phase is Phase.BONUS:
            assert g.bonus is not None and g.floor is not None
            assert g.bonus.team == g.floor.team and g.bonus.tossup_id == g.tossup_id
            assert g.outcomes[g.tossup_id] == "answered"
            heard = sum(1 for t in g.played if g.outcomes.get(t) != "thrown_out")
            regulation = self.cfg.rules.regulation_tossups
            assert regulation is None or heard <= regulation
            assert not g.bonus.bounceback or self.cfg.rules.bouncebacks
            assert g.bonus.bounceback or self.match.bonus_turn() == g.bonus.team
        assert len(set(g.bonuses_used)) == len(g.bonuses_used)

    @invariant()
    def the_conferral_clock_runs_only_on_a_part_read_aloud_and_timeouts_keep_the_count(self):
        g = self.match.game
        if g.conferral is not None:
            assert g.phase is Phase.BONUS and self.cfg.reading_mode == "read_aloud"
            assert g.bonus.answer is None
        for team in TEAMS:
            called = sum(1 for t in self.match.state.timeouts if t.team == team)
            assert called <= self.cfg.rules.timeouts

    @invariant()
    def read_aloud_parts_run_no_clock(self):
        if self.cfg.reading_mode == "read_aloud" and self.match.phase is Phase.BONUS:
            assert self.match.game.deadline is None


CycleMachine.TestCase.settings = settings(
    max_examples=300, stateful_step_count=50, deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)  # fmt: skip
TestCycleMachine = CycleMachine.TestCase
