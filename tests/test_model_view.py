"""The model players' view of a tossup as pure functions: the curves a role gets, the spoiler
guard, the replay of a finished tossup from its events; and the exhibition setting, from the
command line to the record."""

from __future__ import annotations

import pytest
from engine_helpers import config, started_match
from typer.testing import CliRunner

from grace_arena.cli import app
from grace_arena.core.commands import Buzz, Reveal, Rule, StartTossup, ThrowOut, UndoRuling
from grace_arena.core.config import ModelBuzz, ScoringRules
from grace_arena.core.events import Ruling, event_to_dict
from grace_arena.core.match import Match
from grace_arena.server.views import (
    ModelStep,
    ModelTrajectory,
    ReplayRefused,
    RoomFacts,
    curves_view,
    replay_view,
    state_view,
)

#: The model's steps on t0 (a 20-word tossup of clues ending at words 4, 9, 14, 19): it buzzes
#: at word 9, where its logit confidence first reaches its threshold (0.5).
STEPS = (
    ModelStep(word=4, guess="Lincoln", confidence=0.2, logit=0.2, verbal=0.4, correct=False),
    ModelStep(word=9, guess="Carver", confidence=0.6, logit=0.6, verbal=0.7, correct=True),
    ModelStep(word=14, guess="Carver", confidence=0.8, logit=0.8, verbal=0.9, correct=True),
    ModelStep(word=19, guess="Carver", confidence=0.9, logit=0.9, verbal=1.0, correct=True),
)
TRAJECTORIES = {"bot": {"t0": ModelTrajectory(STEPS)}}


def _match(*, exhibition: bool = False, buzz: bool = True) -> tuple[Match, list]:
    buzzes = {"t0": ModelBuzz(word_index=9, guess="Carver", confidence=0.6)} if buzz else {}
    cfg = config(rules=ScoringRules(answer_time=None), model_buzzes=buzzes)
    cfg = cfg.model_copy(
        update={
            "exhibition": exhibition,
            "teams": tuple(
                t.model_copy(update={"threshold": 0.5, "confidence": "logit"})
                if t.id == "bot"
                else t
                for t in cfg.teams
            ),
        }
    )
    return started_match(cfg, now=0.0)


class _Room:
    """A match and its tossup's log, as a room keeps them."""

    def __init__(self, *, exhibition: bool = False, buzz: bool = True) -> None:
        self.match, self.events = _match(exhibition=exhibition, buzz=buzz)
        self.log: list[dict] = []
        self.now = 1.0

    def do(self, command) -> list:
        self.now += 1.0
        events = self.match.handle(command, now=self.now)
        self.events += events
        for ev in events:
            if ev.type == "tossup_started":
                self.log = []
            self.log.append(event_to_dict(ev))
        return events

    def state(self, role):
        facts = RoomFacts(
            match_id=3, join_code="ABCDE",
            words={t.id: [f"w{i}" for i in range(t.n_words)] for t in self.match.config.tossups},
            wpm=180, trajectories=TRAJECTORIES, tossup_log=self.log,
        )  # fmt: skip
        return state_view(self.match, facts, role, now=self.now)


def test_an_exhibition_display_gets_the_steps_read_so_far_and_no_guess():
    room = _Room(exhibition=True)
    room.do(StartTossup(tossup_id="t0"))
    room.do(Reveal(to=6))
    display = room.state("display")
    (curve,) = display.curves.curves
    assert display.curves.tossup == "tossup-1" and display.curves.n_words == 20
    assert [(p.word, p.logit, p.verbal) for p in curve.points] == [(4, 0.2, 0.4)]
    assert curve.points[0].correct is None  # whether it is right: once the tossup is over
    assert (curve.threshold, curve.confidence, curve.name) == (0.5, "logit", "Bot")
    assert curve.guess is None and curve.buzz_word is None
    assert room.state("player").curves is None
    # the moderator sees the same curve (and its model panel, the guesses)
    assert room.state("moderator").curves.curves[0].points == curve.points


def test_a_display_gets_no_curve_while_reading_unless_the_match_is_an_exhibition():
    room = _Room()
    room.do(StartTossup(tossup_id="t0"))
    room.do(Reveal(to=6))
    assert room.state("display").curves is None
    assert room.state("moderator").curves is not None


def test_the_guess_is_shown_once_the_buzz_is_ruled_and_hidden_again_when_undone():
    room = _Room(exhibition=True)
    room.do(StartTossup(tossup_id="t0"))
    room.do(Reveal(to=9))  # the model buzzes at word 9
    (curve,) = room.state("display").curves.curves
    assert curve.buzz_word == 9 and curve.guess is None and len(curve.points) == 2
    room.do(Rule(ruling=Ruling.INCORRECT))
    view = room.state("display").curves
    (curve,) = view.curves
    assert (curve.guess, curve.guess_confidence, curve.correct) == ("Carver", 0.6, False)
    assert [(b.word, b.team, b.kind, b.ruling) for b in view.buzzes] == [
        (9, "bot", "model", "incorrect")
    ]
    room.do(UndoRuling())
    (curve,) = room.state("display").curves.curves
    assert curve.guess is None  # the floor is the model's again: not ruled


def test_once_the_tossup_is_over_every_step_with_its_verdict_and_the_last_guess_read():
    room = _Room(buzz=False)
    room.do(StartTossup(tossup_id="t0"))
    room.do(Reveal(to=12))
    room.do(Buzz(team="red", player="red-1"))
    room.do(Rule(ruling=Ruling.CORRECT))
    view = room.state("display").curves
    assert view.over and view.position == 12
    (curve,) = view.curves
    assert [p.correct for p in curve.points] == [False, True, True, True]
    # no buzz: its guess where the reading stopped (the step at word 9), with its verdict
    assert (curve.guess, curve.guess_confidence, curve.correct) == ("Carver", 0.6, True)
    assert [(b.team, b.kind, b.ruling) for b in view.buzzes] == [("red", "human", "correct")]
    assert room.state("player").curves is None  # phones: never


def test_the_curves_of_a_tossup_without_steps_are_empty_and_a_match_without_models_has_none():
    view = curves_view(
        _match()[0].config, {}, "t1", "tossup-2", position=3, over=False, tossup_log=[]
    )
    assert [c.points for c in view.curves] == [[]]
    match, _ = started_match(config(), now=0.0)
    match.handle(StartTossup(), now=1.0)
    facts = RoomFacts(
        match_id=1, join_code="A", words={}, wpm=180, trajectories={},
        tossup_log=[],
    )  # fmt: skip
    assert state_view(match, facts, "moderator", now=2.0).curves is None


def test_a_replay_is_built_from_the_events_once_the_tossup_has_ended():
    room = _Room()
    room.do(StartTossup(tossup_id="t0"))
    room.do(Reveal(to=3))
    room.do(Buzz(team="red", player="red-1"))
    words = {"t0": [f"word{i}" for i in range(20)]}
    with pytest.raises(ReplayRefused) as refused:
        replay_view(3, room.events, 1, words, TRAJECTORIES)
    assert refused.value.status == 409 and "still being played" in str(refused.value)
    room.do(Rule(ruling=Ruling.INCORRECT))
    room.do(Reveal(to=9))  # the model buzzes
    room.do(Rule(ruling=Ruling.CORRECT))
    room.do(StartTossup(tossup_id="t1"))  # the next tossup: not part of the replay
    view = replay_view(3, room.events, 1, words, TRAJECTORIES)
    assert view.words == words["t0"] and view.outcome == "correct_answer"
    assert view.answer.startswith("<b>George") and view.tossups_played == 2
    assert [(b.word, b.team_name, b.player_name, b.ruling, b.points) for b in view.buzzes] == [
        (3, "Red", "P", "incorrect", -5),
        (9, "Bot", "tfidf", "correct", 15),  # in power
    ]
    (curve,) = view.curves.curves
    assert len(curve.points) == 4 and curve.guess == "Carver" and curve.correct is True
    with pytest.raises(ReplayRefused) as refused:  # under way
        replay_view(3, room.events, 2, words, TRAJECTORIES)
    assert refused.value.status == 409
    with pytest.raises(ReplayRefused) as refused:
        replay_view(3, room.events, 3, words, TRAJECTORIES)
    assert refused.value.status == 404 and str(refused.value) == (
        "match 3 has no tossup 3: 2 played so far"
    )
    with pytest.raises(ReplayRefused):
        replay_view(3, [], 1, words, TRAJECTORIES)


def test_a_tossup_reopened_by_undoing_the_ruling_that_ended_it_is_under_way_again():
    room = _Room(buzz=False)
    room.do(StartTossup(tossup_id="t0"))
    room.do(Reveal(to=3))
    room.do(Buzz(team="red", player="red-1"))
    room.do(Rule(ruling=Ruling.CORRECT))  # the tossup ends...
    words = {"t0": [f"word{i}" for i in range(20)]}
    assert replay_view(3, room.events, 1, words, TRAJECTORIES).outcome == "correct_answer"
    room.do(UndoRuling())  # ...and is under way again, its buzz waiting for a ruling
    with pytest.raises(ReplayRefused) as refused:
        replay_view(3, room.events, 1, words, TRAJECTORIES)
    assert refused.value.status == 409 and "still being played" in str(refused.value)
    room.do(Rule(ruling=Ruling.INCORRECT))
    room.do(ThrowOut())  # it ends again
    view = replay_view(3, room.events, 1, words, TRAJECTORIES)
    assert view.outcome == "thrown out by the moderator"
    assert [(b.word, b.ruling) for b in view.buzzes] == [(3, "incorrect")]


def test_the_exhibition_setting_is_kept_with_the_match():
    _, events = _match(exhibition=True)
    assert Match.replay(events).config.exhibition  # a restart rebuilds it from the record
    assert not Match.replay(_match()[1]).config.exhibition


def test_event_create_keeps_the_exhibition_setting_for_the_events_matches(tmp_path):
    from grace_arena.protocol import MatchSetup
    from grace_arena.record.db import make_engine
    from grace_arena.record.schedule import load_plan

    url = f"sqlite:///{tmp_path / 'club.db'}"
    runner = CliRunner()
    for name, flags in (("show", ["--exhibition"]), ("study", [])):
        result = runner.invoke(
            app, ["event", "create", name, "--team", "Red", "--team", "Blue", *flags, "--db", url]
        )
        assert result.exit_code == 0, result.output
    engine = make_engine(url)
    try:
        shown, studied = load_plan(engine, "show"), load_plan(engine, "study")
    finally:
        engine.dispose()
    assert shown.defaults.get("exhibition") is True
    assert "exhibition" not in studied.defaults
    assert MatchSetup(packet_id="p", teams=[{"id": "a", "name": "A"}], **shown.defaults).exhibition


def test_serve_exhibition_makes_the_first_match_an_exhibition(tmp_path, monkeypatch):
    import grace_arena.server.app

    started = []
    monkeypatch.setattr(grace_arena.server.app, "create_app", lambda settings: settings)
    monkeypatch.setattr(
        grace_arena.server.app, "run", lambda settings, **_: started.append(settings)
    )
    url = f"sqlite:///{tmp_path / 'serve.db'}"
    for flags in (["--exhibition"], []):
        result = CliRunner().invoke(
            app, ["serve", "--host", "127.0.0.1", "--port", "0", *flags, "--db", url]
        )
        assert result.exit_code == 0, result.output
    assert [s.first_match.exhibition for s in started] == [True, False]


def test_the_moderators_model_panel_says_the_confidence_against_the_threshold():
    from rich.console import Console

    from moderator_tui.widgets import ModelPanel

    def shown(state) -> str:
        console = Console(width=80, record=True)
        console.print(ModelPanel().render_state(state))
        return console.export_text()

    room = _Room()
    room.do(StartTossup(tossup_id="t0"))
    room.do(Reveal(to=6))
    text = shown(room.state("moderator"))
    assert "logit 0.20 vs threshold 0.50 below" in text and "will buzz at word 10" in text
    room.do(Reveal(to=9))
    assert "logit 0.60 vs threshold 0.50 reached" in shown(room.state("moderator"))
    room.do(Rule(ruling=Ruling.CORRECT))
    text = shown(room.state("moderator"))
    assert "trajectory (logit, threshold 0.50): 0.20✗ 0.60✓ 0.80✓ 0.90✓" in text
