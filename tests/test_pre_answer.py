"""The humans' own answers before the model's is revealed (consult rules with a pre-answer
window, QANTA 2026's 2 s): in the match engine, and read back from the record."""

from __future__ import annotations

import pytest
from engine_helpers import config
from test_consult import ADVISOR, recorded, win

from grace_arena.core.commands import (
    AbstainPart,
    AnswerPart,
    ConsultPart,
    Join,
    Pause,
    PreAnswerPart,
    Resume,
    RulePart,
    TimeUp,
    UndoRuling,
)
from grace_arena.core.config import ConsultScoring
from grace_arena.core.consult import PreAnswer, part_choices
from grace_arena.core.errors import IllegalCommand
from grace_arena.core.events import (
    BonusPartConsulted,
    BonusPreAnswerGiven,
    BonusPreAnswerOpened,
    Ruling,
    event_from_dict,
    event_to_dict,
)
from grace_arena.core.formats import rules_for
from grace_arena.core.match import Match

C, X = Ruling.CORRECT, Ruling.INCORRECT


def team_of_two(window: float | None = 2.0) -> tuple[Match, list]:
    """Red (two players) and blue (one), the bonuses' model to consult; and the whole record
    the match writes from its creation on."""
    cfg = config(
        n_tossups=3, bonus_parts=(3, 2, 3), consult=ADVISOR,
        rules=rules_for("acf", consult=ConsultScoring(pre_answer_time=window)),
    )  # fmt: skip
    match, created = Match.create(cfg, now=0.0)
    events = recorded(match)
    events.extend(created)
    for team, players in (("red", ("red-1", "red-2")), ("blue", ("blue-1",))):
        for p in players:
            match.handle(Join(team=team, player=p, name=p.title()), now=0.0)
    return match, events


def test_the_models_answer_is_revealed_when_the_window_closes() -> None:
    match, events = team_of_two()
    win(match, "red", now=1.0)
    opened = match.handle(ConsultPart(team="red", player="red-1", draft="twain"), now=5.0)
    assert [type(e) for e in opened] == [BonusPreAnswerOpened]  # nothing revealed yet
    assert (opened[0].deadline, opened[0].draft) == (7.0, "twain")
    assert match.game.bonus.consulted is None and match.game.deadline == 7.0
    given = match.handle(PreAnswerPart(team="red", player="red-1", text="part 0"), now=5.5)
    assert isinstance(given[0], BonusPreAnswerGiven) and given[0].suggestion == "accept"
    # during the window the team may not answer, abstain or be ruled; nobody writes twice
    for early, what in (
        (AnswerPart(team="red", player="red-2", text="x"), "then answer"),
        (AbstainPart(team="red"), "then abstain from"),
        (RulePart(ruling=C), "then rule"),
    ):
        with pytest.raises(IllegalCommand, match=f"revealed in 1.5 s, {what}"):
            match.handle(early, now=5.5)
    with pytest.raises(IllegalCommand, match="already wrote an answer"):
        match.handle(PreAnswerPart(team="red", player="red-1", text="again"), now=5.6)
    with pytest.raises(IllegalCommand, match="team 'red''s, not team 'blue''s"):
        match.handle(PreAnswerPart(team="blue", player="blue-1", text="x"), now=5.6)
    with pytest.raises(IllegalCommand, match="time is not up yet"):
        match.handle(TimeUp(), now=6.9)
    # red-2 writes nothing: the window closes at its deadline and the model's answer shows
    (shown,) = match.handle(TimeUp(), now=7.0)
    assert isinstance(shown, BonusPartConsulted)
    assert (shown.guess, shown.player, shown.draft) == ("part 0", "red-1", "twain")
    with pytest.raises(IllegalCommand, match="no pre-answer is open"):
        match.handle(PreAnswerPart(team="red", player="red-2", text="late"), now=7.1)
    match.handle(AnswerPart(team="red", player="red-2", text="part 0"), now=8.0)
    match.handle(RulePart(ruling=C), now=8.0)
    assert match.scores["red"] == 10 + 10  # consulted: 10
    (choice,) = part_choices(events, match.config)
    assert choice.choice == "consult" and choice.pre_answers == (
        PreAnswer(player="red-1", text="part 0", correct=True),
    )
    # replay equals live, and the new events survive their JSON
    again = Match.replay([event_from_dict(event_to_dict(e)) for e in events])
    assert again.state == match.state


def test_the_window_closes_at_once_when_every_human_has_written() -> None:
    match, events = team_of_two()
    win(match, "red")
    match.handle(ConsultPart(team="red"), now=2.0)  # asked by the moderator
    match.handle(PreAnswerPart(team="red", player="red-2", text="wrong idea"), now=2.2)
    last = match.handle(PreAnswerPart(team="red", player="red-1", text="part 0"), now=2.4)
    assert [e.type for e in last] == ["bonus_pre_answer_given", "bonus_part_consulted"]
    assert match.game.bonus.pre_answer is None and match.game.deadline is None  # read aloud
    # the team keeps its own wrong answer (the model was right): under-reliance, for the record
    match.handle(AnswerPart(team="red", player="red-2", text="wrong idea"), now=3.0)
    match.handle(RulePart(ruling=X), now=3.0)
    (choice,) = part_choices(events, match.config)
    assert [(p.player, p.correct) for p in choice.pre_answers] == [
        ("red-2", False), ("red-1", True)]  # fmt: skip
    assert choice.model_correct is True and choice.agreed is False and not choice.correct


def test_a_pause_holds_the_window_and_an_undo_takes_it_back() -> None:
    match, events = team_of_two()
    win(match, "red")
    match.handle(AnswerPart(team="red", player="red-1", text="part 0"), now=2.0)
    match.handle(RulePart(ruling=C), now=2.0)  # part 1 alone: 15
    match.handle(ConsultPart(team="red", player="red-1"), now=3.0)
    match.handle(Pause(), now=3.5)
    assert match.game.held == 1.5 and match.game.deadline is None
    with pytest.raises(IllegalCommand, match="no time limit"):
        match.handle(TimeUp(), now=10.0)  # no clock runs while paused
    with pytest.raises(IllegalCommand, match=r"revealed in 1\.5 s"):
        match.handle(AbstainPart(team="red"), now=10.0)
    match.handle(PreAnswerPart(team="red", player="red-1", text="wrong"), now=20.0)  # paused
    match.handle(Resume(), now=30.0)
    assert match.game.deadline == 31.5  # the 1.5 s it had left
    match.handle(PreAnswerPart(team="red", player="red-2", text="part 1"), now=31.0)
    assert match.game.bonus.consulted is not None  # both wrote: revealed
    # an undo takes back part 1's ruling: the window and the reveal go with the state after it
    match.handle(UndoRuling(), now=32.0)
    assert match.game.bonus.part == 0 and match.game.bonus.pre_answer is None
    assert match.game.bonus.consulted is None
    assert part_choices(events, match.config) == []
    assert Match.replay(events).state == match.state


def test_without_a_window_the_model_answers_at_once_as_before() -> None:
    match, _ = team_of_two(window=None)
    win(match, "red")
    (shown,) = match.handle(ConsultPart(team="red", player="red-1"), now=2.0)
    assert isinstance(shown, BonusPartConsulted)
    with pytest.raises(IllegalCommand, match="no pre-answer is open"):
        match.handle(PreAnswerPart(team="red", player="red-1", text="x"), now=2.0)


def test_a_window_is_configured_in_seconds_within_reason() -> None:
    with pytest.raises(ValueError, match="greater than 0"):
        ConsultScoring(pre_answer_time=0)
    with pytest.raises(ValueError, match="less than or equal to 60"):
        ConsultScoring(pre_answer_time=61)


def test_the_window_is_a_match_setting_and_a_command_line_option() -> None:
    import typer
    from pydantic import ValidationError

    from grace_arena.cli.options import consult_settings
    from grace_arena.protocol import MatchSettings

    settings = MatchSettings(**consult_settings("tfidf", None, 2.0), format="acf")
    assert settings.scoring()["consult"]["pre_answer_time"] == 2.0
    assert ConsultScoring(**settings.scoring()["consult"]).pre_answer_time == 2.0
    with pytest.raises(ValidationError, match="consult_pre_answer"):
        MatchSettings(consult_model="tfidf", consult_pre_answer=0.5)
    with pytest.raises(typer.BadParameter, match="needs --consult MODEL"):
        consult_settings(None, None, 2.0)
    described = rules_for("acf", consult=ConsultScoring(pre_answer_time=2)).consult
    from grace_arena.core.rules import ConsultBonuses

    assert "writes their own answer for 2 s before the model's is revealed" in (
        ConsultBonuses(scoring=described).describe()
    )


def test_the_moderators_terminal_shows_the_window_and_what_each_player_wrote() -> None:
    """The moderator's bonus banner (a pure rendering of the moderator's view) says the
    players are writing, how many have, and what; the log names both new events."""
    from rich.console import Console

    from grace_arena.server.views import RoomFacts, state_view
    from moderator_tui.widgets import BuzzBanner, describe_event

    match, events = team_of_two()
    win(match, "red")
    match.handle(ConsultPart(team="red", player="red-1"), now=2.0)
    match.handle(PreAnswerPart(team="red", player="red-2", text="part 0"), now=2.5)
    room = RoomFacts(match_id=1, join_code="ABCD", words={}, wpm=180, trajectories={},
                     tossup_log=[])  # fmt: skip
    state = state_view(match, room, "moderator", now=3.0)
    assert state.bonus.pre_answer.seconds_left == 1.0
    console = Console(width=100, record=True)
    console.print(BuzzBanner()._bonus(state, state.bonus))
    shown = console.export_text()
    assert "the players write their own answers (1 of 2); the model's is revealed in 1 s" in shown
    assert "Red-2: “part 0”" in shown
    player = state_view(match, room, "player", now=3.0)
    assert player.bonus.pre_answer.answers is None and player.bonus.pre_answer.written == 1
    teams = state.teams
    lines = [describe_event(e.model_dump(mode="json"), teams) for e in events[-2:]]
    assert "Red asked for the model's answer: its players write their own first" in str(lines[0])
    assert "(own answer, before the model's) answers “part 0” judge: accept" in str(lines[1])
