"""The model players' view (confidence curves, guesses) reaches each role only when it may:
random matches, every role, every state."""

from __future__ import annotations

import json

from engine_helpers import config
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from grace_arena.core.commands import (
    Buzz,
    Command,
    GiveAnswer,
    Join,
    Reveal,
    Rule,
    StartTossup,
    ThrowOut,
    TimeUp,
    UndoRuling,
)
from grace_arena.core.config import ModelBuzz, ScoringRules
from grace_arena.core.errors import IllegalCommand
from grace_arena.core.events import Ruling, event_to_dict
from grace_arena.core.match import Match
from grace_arena.core.phases import FINISHED, Phase
from grace_arena.server.views import (
    ModelStep,
    ModelTrajectory,
    RoomFacts,
    events_for,
    state_view,
)

N_TOSSUPS = 3
CLUE_ENDS = (4, 9, 14, 19)  # engine_helpers.tossup's clues of a 20-word tossup


def guess(tossup: int, step: int) -> str:
    """The model's guess at a step: a string found nowhere else."""
    return f"guess-{tossup}-{step}-zq"


def confidence(tossup: int, step: int, kind: int) -> float:
    """A confidence whose digits are found nowhere else in a state."""
    return float(f"0.{kind + 1}{tossup}{step}7319")


def sentinels(tossup: int) -> tuple[list[str], list[str]]:
    """The guesses and the confidences (as JSON writes them) of a tossup's steps."""
    guesses = [guess(tossup, k) for k in range(len(CLUE_ENDS))]
    confidences = [
        json.dumps(confidence(tossup, k, kind)) for k in range(len(CLUE_ENDS)) for kind in (0, 1)
    ]
    return guesses, confidences


class ModelViewMachine(RuleBasedStateMachine):
    @initialize(
        buzz_steps=st.lists(st.one_of(st.none(), st.integers(0, 3)), min_size=3, max_size=3),
        exhibition=st.booleans(),
        rebuzz=st.booleans(),
        answer_time=st.sampled_from([None, 5.0]),
    )
    def setup(self, buzz_steps, exhibition, rebuzz, answer_time):
        buzzes = {
            f"t{i}": ModelBuzz(
                word_index=CLUE_ENDS[k], guess=guess(i, k), confidence=confidence(i, k, 0)
            )
            for i, k in enumerate(buzz_steps)
            if k is not None
        }
        cfg = config(
            n_tossups=N_TOSSUPS,
            rules=ScoringRules(rebuzz=rebuzz, answer_time=answer_time),
            model_buzzes=buzzes,
        )
        self.cfg = cfg.model_copy(update={"exhibition": exhibition})
        self.trajectories = {
            "bot": {
                f"t{i}": ModelTrajectory(
                    tuple(
                        ModelStep(
                            word=end,
                            guess=guess(i, k),
                            confidence=confidence(i, k, 0),
                            logit=confidence(i, k, 0),
                            verbal=confidence(i, k, 1),
                            correct=k % 2 == 0,
                        )
                        for k, end in enumerate(CLUE_ENDS)
                    )
                )
                for i in range(N_TOSSUPS)
            }
        }
        self.match, _ = Match.create(self.cfg, now=0.0)
        self.now = 0.0
        self.log: list[dict] = []
        self.last: dict[str, list[dict]] = {"player": [], "display": []}
        for team in ("red", "blue"):
            self.do(Join(team=team, player=f"{team}-1", name=team.title()))

    def do(self, command: Command) -> None:
        self.now += 1.0
        try:
            events = self.match.handle(command, now=self.now)
        except IllegalCommand:
            return
        for ev in events:
            if ev.type == "tossup_started":
                self.log = []
            self.log.append(event_to_dict(ev))
        self.last = events_for(self.match, events, self.log)

    @rule()
    def start(self):
        self.do(StartTossup())

    @rule(to=st.one_of(st.none(), st.integers(0, 19)))
    def reveal(self, to):
        self.do(Reveal(to=to))

    @rule(team=st.sampled_from(["red", "blue"]))
    def buzz(self, team):
        self.do(Buzz(team=team, player=f"{team}-1"))

    @rule(team=st.sampled_from(["red", "blue"]))
    def answer(self, team):
        self.do(GiveAnswer(team=team, player=f"{team}-1", text="typed"))

    @rule(ruling=st.sampled_from(list(Ruling)))
    def rule_(self, ruling):
        self.do(Rule(ruling=ruling))

    @rule()
    def time_up(self):
        self.do(TimeUp())

    @rule()
    def undo(self):
        self.do(UndoRuling())

    @rule()
    def throw_out(self):
        self.do(ThrowOut())

    @invariant()
    def each_role_sees_only_what_it_may(self):
        if not hasattr(self, "match"):
            return
        game = self.match.game
        facts = RoomFacts(
            match_id=1, join_code="ABCDE",
            words={t.id: [f"w{i}" for i in range(t.n_words)] for t in self.cfg.tossups},
            wpm=180, trajectories=self.trajectories, tossup_log=self.log,
        )  # fmt: skip
        spec = self.match.current_tossup
        over = game.phase in FINISHED or game.phase in (Phase.BONUS, Phase.ENDED)
        accepted = [e for e in self.log if e["type"] == "buzz_accepted" and e["team"] == "bot"]
        ruled = {e["buzz_id"] for e in self.log if e["type"] == "ruled"}
        model_buzzed = bool(accepted)
        moderator = state_view(self.match, facts, "moderator", now=self.now)
        for role in ("player", "display"):
            view = state_view(self.match, facts, role, self.last[role], now=self.now)
            text = view.model_dump_json()
            assert view.models == []  # the moderator's panel only
            for i in range(N_TOSSUPS):
                guesses, confidences = sentinels(i)
                current = spec is not None and spec.id == f"t{i}"
                if f"t{i}" not in game.played:  # a tossup not started: nothing of it
                    assert not any(g in text for g in guesses + confidences), (role, i)
                if not current:
                    continue
                if not (model_buzzed or over):
                    # before the model buzzes or the tossup ends: no guess; no confidence
                    # either, but on the display of an exhibition
                    assert not any(g in text for g in guesses), (role, text)
                    if role == "player" or not self.cfg.exhibition:
                        assert not any(c in text for c in confidences), (role, text)
                if not over and not (accepted and accepted[-1]["buzz_id"] in ruled):
                    # not even once it buzzed, before the buzz is ruled or the tossup ends
                    assert not any(g in text for g in guesses), (role, text)
            if role == "player":
                assert view.curves is None
                guesses, confidences = sentinels(int(spec.id[1:])) if spec else ([], [])
                assert not any(c in text for c in confidences)  # phones: never a curve
            elif view.curves is not None:
                # displays: the curve while reading only in an exhibition; after, every step
                assert self.cfg.exhibition or over
                (curve,) = view.curves.curves
                if over:
                    assert len(curve.points) == len(CLUE_ENDS)
                else:
                    assert [p.word for p in curve.points] == [
                        e for e in CLUE_ENDS if e <= game.position
                    ]
                    assert all(p.correct is None for p in curve.points)
            else:
                assert spec is None or game.phase is Phase.IDLE or not (self.cfg.exhibition or over)
        if spec is not None and game.phase is not Phase.IDLE:
            assert moderator.curves is not None  # the moderator sees the curves always


ModelViewMachine.TestCase.settings = settings(
    max_examples=40, stateful_step_count=25, deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)  # fmt: skip
test_model_view_roles = ModelViewMachine.TestCase
