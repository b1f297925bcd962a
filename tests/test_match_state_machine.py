"""Random command sequences against the match engine, with invariants checked after each step."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from engine_helpers import config
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from grace_arena.core.commands import (
    AnswerPart,
    Buzz,
    Command,
    EndMatch,
    GiveAnswer,
    Join,
    Pause,
    Resume,
    Reveal,
    Rule,
    RulePart,
    StartTossup,
    ThrowOut,
    ThrowOutBonus,
    TimeUp,
    UndoRuling,
)
from grace_arena.core.config import ModelBuzz, ScoringRules
from grace_arena.core.errors import IllegalCommand
from grace_arena.core.events import (
    BonusEnded,
    BonusPartRuled,
    BonusPartUndone,
    BonusStarted,
    BuzzAccepted,
    BuzzRefused,
    BuzzRepeated,
    BuzzTiming,
    RefusalReason,
    Ruled,
    Ruling,
    RulingUndone,
    TossupEnded,
    TossupOutcome,
    TossupStarted,
)
from grace_arena.core.match import Match
from grace_arena.core.phases import HAS_FLOOR, Phase

HUMANS = ("red", "blue", "green")
PLAYERS = ("p1", "p2")


class MatchMachine(RuleBasedStateMachine):
    @initialize(
        rules=st.builds(
            ScoringRules,
            power_points=st.sampled_from([15, 20, None]),
            neg_points=st.sampled_from([-5, 0, -10]),
            negs_only_before_end=st.booleans(),
            neg_first_team_only=st.booleans(),
            rebuzz=st.booleans(),
            answer_time=st.sampled_from([None, 5.0]),
            buzz_window=st.just(3.0),
            bonuses=st.sampled_from([True, True, True, False]),
            bouncebacks=st.booleans(),
            bonus_answer_time=st.sampled_from([None, 4.0]),
            regulation_tossups=st.sampled_from([None, None, 1, 2]),
            overtime_bonuses=st.booleans(),
        ),
        model_positions=st.lists(st.one_of(st.none(), st.integers(0, 19)), min_size=3, max_size=3),
        # a second team of the same model: none, or per tossup a word (often the first's)
        second_positions=st.one_of(
            st.none(),
            st.lists(st.sampled_from([-1, -1, None]) | st.integers(0, 19), min_size=3, max_size=3),
        ),
        n_humans=st.integers(1, 3),
        bonus_parts=(st.lists(st.integers(1, 4), min_size=1, max_size=3) | st.just([])).map(tuple),
        reading_mode=st.sampled_from(["read_aloud", "screen"]),
    )
    def setup(self, rules, model_positions, second_positions, n_humans, bonus_parts, reading_mode):
        buzzes = {
            f"t{i}": ModelBuzz(word_index=p, guess="Carver" if p % 2 else "Washington")
            for i, p in enumerate(model_positions)
            if p is not None
        }
        second = None
        if second_positions is not None:  # -1: at the first team's word
            words = [(model_positions[i] if p == -1 else p) for i, p in enumerate(second_positions)]
            second = {
                f"t{i}": ModelBuzz(word_index=p, guess="Washington" if p % 2 else "Carver")
                for i, p in enumerate(words)
                if p is not None
            }
        self.cfg = config(
            rules=rules, model_buzzes=buzzes, humans=HUMANS[:n_humans], bonus_parts=bonus_parts,
            reading_mode=reading_mode, second_model_buzzes=second,
        )  # fmt: skip
        self.match, self.events = Match.create(self.cfg, now=0.0)
        self.now = 0.0
        #: Ruled seq -> (tossup, team, points), and the bonus of a part's ruling
        self.ledger: dict[int, tuple] = {}
        self.undo_stack: list = []
        #: Presses counted, not stored: each with the tossup and holder of the floor it met.
        self.repeats: list[tuple[BuzzRepeated, str | None, int | None]] = []
        for team in HUMANS[:n_humans]:
            for p in PLAYERS:
                self.do(Join(team=team, player=f"{team}-{p}", name=p))

    # -- driving -------------------------------------------------------------------------------

    def do(self, command: Command) -> None:
        before_state = self.match.state
        before_game = self.match.game
        locked_before = before_game.locked_out
        try:
            events = self.match.handle(command, now=self.now)
        except IllegalCommand as exc:
            assert str(exc)  # a clear message
            assert self.match.state is before_state  # an illegal command changes nothing
            return
        assert events, f"{command} was accepted but produced no event"
        if all(isinstance(ev, BuzzRepeated) for ev in events):
            assert self.match.state is before_state  # a repeated press changes nothing
        for ev in events:
            event(ev.type)  # shown by --hypothesis-show-statistics: what the runs exercised
            match ev:
                case BuzzAccepted():
                    # a locked-out team never gets the floor
                    assert ev.team not in locked_before
                    assert ev.team not in self.match.game.locked_out or ev is not events[-1]
                case Ruled():
                    self.ledger[ev.seq] = (ev.tossup_id, ev.team, ev.points)
                case BonusPartRuled():
                    self.ledger[ev.seq] = (ev.tossup_id, ev.team, ev.points, ev.bonus_id)
                    # a bonus part never loses points, and is worth its value or nothing
                    assert ev.points in (0, 10)
                    assert ev.team == self.match.game.bonus.team or ev.bounceback
                case RulingUndone() | BonusPartUndone():
                    del self.ledger[ev.ruled_seq]
                case TossupEnded(outcome=TossupOutcome.THROWN_OUT):
                    self.ledger = {k: v for k, v in self.ledger.items() if v[0] != ev.tossup_id}
                case BonusEnded(outcome="thrown_out"):
                    self.ledger = {k: v for k, v in self.ledger.items() if v[3:] != (ev.bonus_id,)}
                case BonusStarted():
                    # only the team that answered the tossup gets a bonus, never twice the same
                    assert ev.team == self.match.game.floor.team or isinstance(
                        command, ThrowOutBonus
                    )
                    assert self.match.game.bonuses_used.count(ev.bonus_id) == 1
                    assert self.cfg.rules.bonuses
                case TossupStarted():
                    self.undo_stack.clear()
        if events and isinstance(events[0], Ruled | BonusPartRuled):
            self.undo_stack.append(before_game)
            if isinstance(events[-1], BuzzAccepted) and self.match.phase is Phase.BUZZED:
                # a model took the floor at once on that ruling: it may still be taken back
                event("a model took the floor at once on a ruling")
                assert self.match.decide(UndoRuling(), now=self.now)
        if isinstance(command, UndoRuling):
            # undo restores the exact previous state, except that the answer clock restarts
            # where it ran (not where an answer given had stopped it)
            restored = self.undo_stack.pop()
            if restored.phase is Phase.BONUS:
                seconds = self.cfg.rules.bonus_answer_time
                if self.cfg.reading_mode == "read_aloud":
                    seconds = None
            else:
                seconds = self.cfg.rules.answer_time
            stopped = seconds is None or (restored.deadline is None and restored.held is None)
            # ...and a pause is not a ruling: the match stays paused (its clock held) or not
            if self.match.game.paused:
                expected = replace(
                    restored, paused=True, deadline=None, held=None if stopped else seconds
                )
            else:
                expected_deadline = None if stopped else self.now + seconds
                expected = replace(restored, paused=False, held=None, deadline=expected_deadline)
            assert self.match.game == expected
        if any(
            isinstance(ev, TossupEnded | BonusEnded) and ev.outcome == "thrown_out" for ev in events
        ):
            self.undo_stack.clear()
        # what the record stores: every event but the repeated presses
        self.events.extend(ev for ev in events if not isinstance(ev, BuzzRepeated))
        game = self.match.game
        for ev in events:
            if isinstance(ev, BuzzRepeated):
                holder = game.floor.buzz_id if ev.reason is RefusalReason.LOST_RACE else None
                assert game.floor is not None or holder is None
                self.repeats.append((ev, game.tossup_id, holder))

    # -- commands ------------------------------------------------------------------------------

    def phase_in(*phases):
        return precondition(lambda self: self.match.phase in phases)

    @phase_in(Phase.IDLE, Phase.ANSWERED, Phase.DEAD, Phase.THROWN_OUT)
    @rule(tossup=st.one_of(st.none(), st.sampled_from(["t0", "t1", "t2", "nope"])))
    def start(self, tossup):
        self.do(StartTossup(tossup_id=tossup))

    @phase_in(Phase.READING)
    @rule(step=st.one_of(st.none(), st.integers(0, 25)))
    def reveal(self, step):
        pos = self.match.game.position
        self.do(Reveal(to=None if step is None else pos + step))

    @rule(
        team=st.sampled_from(HUMANS),
        player=st.sampled_from(PLAYERS),
        mono=st.floats(0, 1),
        answer=st.one_of(st.none(), st.sampled_from(["Carver", "George Washington Carver", ""])),
    )
    def buzz(self, team, player, mono, answer):
        timing = BuzzTiming(received_mono=self.now + mono, received_wall=self.now)
        self.do(Buzz(team=team, player=f"{team}-{player}", timing=timing, answer=answer))

    @phase_in(*HAS_FLOOR)
    @rule(ruling=st.sampled_from(list(Ruling)))
    def rule_(self, ruling):
        self.do(Rule(ruling=ruling))

    @precondition(
        lambda self: self.match.phase in HAS_FLOOR and self.match.game.floor.team in ("bot", "bot2")
    )
    @rule()
    def rule_a_model_wrong(self):
        # often enough that a second model team at the same word takes the floor at once
        self.do(Rule(ruling=Ruling.INCORRECT))

    @rule(text=st.text(max_size=20))
    def answer(self, text):
        floor = self.match.game.floor
        if floor is not None and self.match.phase in HAS_FLOOR:
            self.do(GiveAnswer(team=floor.team, player=floor.player, text=text))

    @precondition(lambda self: self.match.game.deadline is not None)
    @rule(seconds=st.sampled_from([0.5, 3.0, 6.0]))
    def time_passes_then_time_up(self, seconds):
        self.now += seconds
        self.do(TimeUp())

    @phase_in(Phase.BONUS)
    @rule(
        player=st.sampled_from(PLAYERS),
        other=st.booleans(),
        text=st.sampled_from(["part 0", "part 1", "nonsense", ""]),
    )
    def answer_part(self, player, other, text):
        turn = self.match.bonus_turn()
        team = next((t.id for t in self.cfg.teams if t.id != turn), turn) if other else turn
        self.do(AnswerPart(team=team, player=f"{team}-{player}", text=text))

    @phase_in(Phase.BONUS)
    @rule(ruling=st.sampled_from(list(Ruling)))
    def rule_part(self, ruling):
        self.do(RulePart(ruling=ruling))

    @phase_in(Phase.BONUS)
    @rule()
    def throw_out_bonus(self):
        self.do(ThrowOutBonus())

    @phase_in(Phase.READING, Phase.AWAITING, Phase.BONUS)
    @precondition(lambda self: not self.match.game.paused)
    @rule()
    def pause(self):
        self.do(Pause())

    @precondition(lambda self: self.match.game.paused)
    @rule()
    def resume(self):
        self.do(Resume())

    @precondition(lambda self: self.match.game.history or self.match.phase is Phase.BUZZED)
    @rule()
    def undo(self):
        self.do(UndoRuling())

    @precondition(lambda self: self.match.game.tossup_id is not None)
    @rule()
    def throw_out(self):
        # (a throw-out in a bonus throws out the whole cycle)
        self.do(ThrowOut())

    @precondition(lambda self: len(self.events) > 40)
    @rule()
    def end(self):
        self.do(EndMatch())

    @rule(
        command=st.sampled_from(
            [
                StartTossup(),
                Reveal(),
                Rule(ruling=Ruling.CORRECT),
                TimeUp(),
                Pause(),
                Resume(),
                UndoRuling(),
                ThrowOut(),
                GiveAnswer(team="red", player="red-p1", text="x"),
                Buzz(team="bot", player="model:tfidf"),
                Join(team="bot", player="intruder", name="I"),
            ]
        )
    )
    def any_command_in_any_phase(self, command):
        """Mostly illegal: must raise IllegalCommand with a message and change nothing."""
        self.do(command)

    # -- invariants ----------------------------------------------------------------------------

    @invariant()
    def at_most_one_buzz_is_being_answered(self):
        g = self.match.game
        if g.phase in HAS_FLOOR:
            assert g.floor is not None
        elif g.phase in (Phase.READING, Phase.AWAITING, Phase.IDLE, Phase.DEAD):
            assert g.floor is None

    @invariant()
    def no_clock_runs_while_paused(self):
        g = self.match.game
        assert g.held is None or g.paused
        if g.paused:
            assert g.deadline is None and not g.reading

    @invariant()
    def score_is_the_sum_of_ruling_points(self):
        expected = {t.id: 0 for t in self.cfg.teams}
        for _, team, points, *_ in self.ledger.values():
            expected[team] += points
        assert self.match.scores == expected

    @invariant()
    def a_tossup_negs_only_its_first_team_under_that_rule(self):
        # the tossup rulings in force: at most one neg a tossup under the rule, and none that
        # costs other than the rules' neg
        negs = Counter(v[0] for v in self.ledger.values() if len(v) == 3 and v[2] < 0)
        assert all(
            points in (0, self.cfg.rules.neg_points)
            for _, _, points, *bonus in self.ledger.values()
            if not bonus and points <= 0
        )
        if self.cfg.rules.neg_first_team_only:
            assert all(n == 1 for n in negs.values()), negs
        if negs and max(negs.values()) > 1:
            event("a tossup with more than one neg")

    @invariant()
    def replay_rebuilds_the_same_state(self):
        assert [e.seq for e in self.events] == list(range(1, len(self.events) + 1))
        assert Match.replay(self.events).state == self.match.state

    @invariant()
    def a_refusal_is_stored_once_and_its_repeats_counted_on_it(self):
        # one refusal in full per tossup, player, reason and holder of the floor; every
        # repeated press names that refusal (a tossup is played once: its id keys its presses)
        first: dict[tuple, int] = {}
        for ev in self.events:
            if isinstance(ev, BuzzRefused):
                key = (ev.tossup_id, ev.team, ev.player, ev.reason, ev.holder_buzz_id)
                assert key not in first, f"{key} stored twice"
                first[key] = ev.buzz_id
        for ev, tossup, holder in self.repeats:
            assert first[(tossup, ev.team, ev.player, ev.reason, holder)] == ev.buzz_id

    @invariant()
    def a_bonus_is_played_only_by_the_rules_and_its_part_exists(self):
        g = self.match.game
        if g.phase is Phase.BONUS:
            assert g.bonus is not None and not g.bonus.done
            spec = self.cfg.bonus(g.bonus.bonus_id)
            assert 0 <= g.bonus.part < len(spec.parts)
            assert not g.bonus.bounceback or (
                self.cfg.rules.bouncebacks and len(self.cfg.teams) == 2
            )
        assert len(set(g.bonuses_used)) == len(g.bonuses_used)
        if not self.cfg.rules.bonuses:
            assert not g.bonuses_used

    @invariant()
    def reading_position_is_in_range(self):
        g = self.match.game
        if g.tossup_id is not None:
            n = self.cfg.tossup(g.tossup_id).n_words
            assert -1 <= g.position < n


MatchMachine.TestCase.settings = settings(
    max_examples=400,
    stateful_step_count=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestMatchMachine = MatchMachine.TestCase
