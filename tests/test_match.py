"""Examples of the match engine's rules (PRODUCT.md "Game rules")."""

from __future__ import annotations

import pytest
from engine_helpers import config, started_match

from grace_arena.core.commands import (
    Buzz,
    EndMatch,
    GiveAnswer,
    Join,
    Pause,
    Resume,
    Reveal,
    Rule,
    StartTossup,
    ThrowOut,
    TimeUp,
    UndoRuling,
)
from grace_arena.core.config import ModelBuzz, ScoringRules
from grace_arena.core.errors import IllegalCommand
from grace_arena.core.events import (
    BuzzAccepted,
    BuzzRefused,
    BuzzRepeated,
    BuzzTiming,
    RefusalReason,
    Ruled,
    Ruling,
    TossupEnded,
    event_from_dict,
    event_to_dict,
)
from grace_arena.core.match import Match
from grace_arena.core.phases import TRANSITIONS, Phase

T = 1000.0


def play_to(match: Match, word: int) -> None:
    match.handle(Reveal(to=word), now=T)


def test_correct_buzz_in_power_scores_15_and_ends_tossup():
    match, _ = started_match(config())
    match.handle(StartTossup(), now=T)
    play_to(match, 5)
    events = match.handle(Buzz(team="red", player="red-1"), now=T + 1)
    (accepted,) = events
    assert isinstance(accepted, BuzzAccepted)
    assert (accepted.word_index, accepted.clue_index, accepted.interrupt) == (5, 1, True)
    assert accepted.fraction == pytest.approx(6 / 20)
    assert accepted.char_offset == 30
    assert match.phase is Phase.BUZZED
    ruled, ended = match.handle(Rule(ruling=Ruling.CORRECT), now=T + 2)
    assert isinstance(ruled, Ruled) and ruled.points == 15 and ruled.power
    assert isinstance(ended, TossupEnded) and ended.outcome == "answered"
    assert match.scores == {"red": 15, "blue": 0}


def test_correct_after_power_mark_scores_10():
    match, _ = started_match(config())
    match.handle(StartTossup(), now=T)
    play_to(match, 10)  # power_index 10: word 10 is after the mark
    match.handle(Buzz(team="blue", player="blue-1"), now=T)
    match.handle(Rule(ruling=Ruling.CORRECT), now=T)
    assert match.scores == {"red": 0, "blue": 10}


def test_neg_locks_team_out_and_reading_resumes_for_the_others():
    match, _ = started_match(config())
    match.handle(StartTossup(), now=T)
    play_to(match, 3)
    match.handle(Buzz(team="red", player="red-1"), now=T)
    match.handle(Rule(ruling=Ruling.INCORRECT), now=T)
    assert match.scores["red"] == -5
    assert match.phase is Phase.READING
    assert match.game.position == 3
    play_to(match, 7)
    (refused,) = match.handle(Buzz(team="red", player="red-1"), now=T)
    assert isinstance(refused, BuzzRefused) and refused.reason is RefusalReason.LOCKED_OUT
    match.handle(Buzz(team="blue", player="blue-1"), now=T)
    assert match.game.floor is not None and match.game.floor.team == "blue"


def test_incorrect_after_the_end_scores_zero_and_all_locked_out_is_dead():
    match, _ = started_match(config())
    match.handle(StartTossup(), now=T)
    play_to(match, 25)  # past the last word: reading finished
    assert match.phase is Phase.AWAITING
    match.handle(Buzz(team="red", player="red-1"), now=T)
    match.handle(Rule(ruling=Ruling.INCORRECT), now=T)
    assert match.scores["red"] == 0
    assert match.phase is Phase.AWAITING
    match.handle(Buzz(team="blue", player="blue-1"), now=T)
    events = match.handle(Rule(ruling=Ruling.INCORRECT), now=T)
    assert isinstance(events[-1], TossupEnded) and events[-1].reason == "all_locked_out"
    assert match.phase is Phase.DEAD


def test_second_buzz_loses_the_race_with_margin():
    match, _ = started_match(config())
    match.handle(StartTossup(), now=T)
    play_to(match, 2)
    match.handle(Buzz(team="red", player="red-1", timing=BuzzTiming(received_mono=5.0)), now=T)
    (lost,) = match.handle(
        Buzz(team="blue", player="blue-1", timing=BuzzTiming(received_mono=5.012)), now=T
    )
    assert lost.reason is RefusalReason.LOST_RACE
    assert lost.margin == pytest.approx(0.012)
    assert lost.holder_buzz_id == 1 and lost.buzz_id == 2


def test_prompt_then_correct_and_typed_answers_get_suggestions():
    match, _ = started_match(config())
    match.handle(StartTossup(), now=T)
    play_to(match, 12)
    (acc,) = match.handle(Buzz(team="red", player="red-1", answer="Carver"), now=T)
    assert acc.suggestion == "prompt"
    match.handle(Rule(ruling=Ruling.PROMPT), now=T)
    assert match.phase is Phase.PROMPTED
    (given,) = match.handle(
        GiveAnswer(team="red", player="red-1", text="George Washington Carver"), now=T
    )
    assert given.suggestion == "accept"
    with pytest.raises(IllegalCommand, match="does not have the floor"):
        match.decide(GiveAnswer(team="blue", player="blue-1", text="x"), now=T)
    match.handle(Rule(ruling=Ruling.CORRECT), now=T)
    assert match.scores["red"] == 10


def test_undo_restores_the_exact_previous_game_state():
    match, _ = started_match(config())
    match.handle(StartTossup(), now=T)
    play_to(match, 4)
    match.handle(Buzz(team="red", player="red-1"), now=T)
    before = match.game
    match.handle(Rule(ruling=Ruling.INCORRECT), now=T)
    play_to(match, 8)
    match.handle(UndoRuling(), now=T)
    assert match.game == before
    match.handle(Rule(ruling=Ruling.CORRECT), now=T)
    assert match.scores["red"] == 15
    match.handle(UndoRuling(), now=T)
    assert match.game == before


def test_undo_restarts_the_answer_clock():
    match, _ = started_match(config(rules=ScoringRules(answer_time=5.0)))
    match.handle(StartTossup(), now=T)
    play_to(match, 4)
    match.handle(Buzz(team="red", player="red-1"), now=T)
    match.handle(Rule(ruling=Ruling.INCORRECT), now=T + 1)
    match.handle(UndoRuling(), now=T + 60)  # long after the first deadline
    assert match.game.deadline == T + 65
    with pytest.raises(IllegalCommand, match="not up yet"):
        match.decide(TimeUp(), now=T + 61)


def test_an_answer_given_stops_the_answer_clock():
    """The answer time is for answering: once the answer is in (typed by a player, or a model's
    guess, which comes with its buzz), the moderator's ruling may take its time; an undo of
    that ruling does not start the clock again, an undo of a prompt's ruling does."""
    rules = ScoringRules(answer_time=5.0)
    buzzes = {"t0": ModelBuzz(word_index=6, guess="George Washington Carver", confidence=0.8)}
    match, _ = started_match(config(rules=rules, model_buzzes=buzzes))
    match.handle(StartTossup(), now=T)
    match.handle(Reveal(to=10), now=T)
    assert match.game.floor.team == "bot" and match.game.deadline is None
    with pytest.raises(IllegalCommand, match="no time limit"):
        match.decide(TimeUp(), now=T + 60)
    match.handle(Rule(ruling=Ruling.INCORRECT), now=T + 60)
    match.handle(UndoRuling(), now=T + 61)
    assert match.phase is Phase.BUZZED and match.game.deadline is None
    match.handle(Rule(ruling=Ruling.CORRECT), now=T + 62)
    assert match.scores["bot"] == 15

    match, _ = started_match(config(rules=rules))
    match.handle(StartTossup(), now=T)
    play_to(match, 4)
    match.handle(Buzz(team="red", player="red-1"), now=T)
    assert match.game.deadline == T + 5  # no answer yet: the clock runs
    match.handle(GiveAnswer(team="red", player="red-1", text="Carver"), now=T + 2)
    assert match.game.deadline is None
    match.handle(Rule(ruling=Ruling.PROMPT), now=T + 30)
    assert match.game.deadline == T + 35  # an answer to the prompt is awaited
    match.handle(Rule(ruling=Ruling.INCORRECT), now=T + 32)
    match.handle(UndoRuling(), now=T + 33)  # back to the prompt, unanswered: the clock runs
    assert match.phase is Phase.PROMPTED and match.game.deadline == T + 38
    with pytest.raises(IllegalCommand, match="answer time ran out"):  # a late answer
        match.decide(GiveAnswer(team="red", player="red-1", text="George Carver"), now=T + 38)
    match.handle(GiveAnswer(team="red", player="red-1", text="George Carver"), now=T + 34)
    assert match.game.deadline is None
    match.handle(Rule(ruling=Ruling.CORRECT), now=T + 40)
    match.handle(UndoRuling(), now=T + 41)  # back to the prompt, answered: no clock
    assert match.phase is Phase.PROMPTED and match.game.deadline is None
    with pytest.raises(IllegalCommand, match="no time limit"):
        match.decide(TimeUp(), now=T + 60)


def test_undo_is_refused_while_a_newer_buzz_waits():
    match, _ = started_match(config())
    match.handle(StartTossup(), now=T)
    play_to(match, 4)
    match.handle(Buzz(team="red", player="red-1"), now=T)
    match.handle(Rule(ruling=Ruling.INCORRECT), now=T)
    match.handle(Buzz(team="blue", player="blue-1"), now=T)
    with pytest.raises(IllegalCommand, match="cannot undo while the match is buzzed"):
        match.decide(UndoRuling(), now=T)


def test_a_ruling_after_which_a_model_took_the_floor_at_once_may_be_undone():
    """Two model teams at one word: the first ruled wrong by mistake, the second takes the
    floor at once. The moderator may take the ruling back (the first has the floor again, no
    points changed); a later ruling gives the second its floor again."""
    at_five = {"t0": ModelBuzz(word_index=5, guess="Carver")}
    rules = ScoringRules(buzz_window=0.0)
    match, _ = started_match(
        config(rules=rules, model_buzzes=at_five, second_model_buzzes=at_five, humans=("red",))
    )
    match.handle(StartTossup(), now=T)
    match.handle(Reveal(to=10), now=T)
    assert match.game.floor is not None and match.game.floor.team == "bot"
    match.handle(Rule(ruling=Ruling.INCORRECT), now=T)
    assert match.phase is Phase.BUZZED and match.game.floor.team == "bot2"
    match.handle(UndoRuling(), now=T)
    assert match.phase is Phase.BUZZED and match.game.floor.team == "bot"
    assert match.scores == {"red": 0, "bot": 0, "bot2": 0}
    match.handle(Rule(ruling=Ruling.INCORRECT), now=T)
    assert match.game.floor.team == "bot2"
    match.handle(Rule(ruling=Ruling.CORRECT), now=T)
    assert match.scores == {"red": 0, "bot": -5, "bot2": 15}


def test_undo_is_refused_while_a_model_that_buzzed_later_has_the_floor():
    """A model that took the floor on a later word (reading went on after the ruling) is a
    newer buzz like a person's: the ruling before it stays until it is ruled."""
    rules = ScoringRules(buzz_window=0.0)
    match, _ = started_match(
        config(
            rules=rules, humans=("red",),
            model_buzzes={"t0": ModelBuzz(word_index=5, guess="Carver")},
            second_model_buzzes={"t0": ModelBuzz(word_index=8, guess="Carver")},
        )
    )  # fmt: skip
    match.handle(StartTossup(), now=T)
    match.handle(Reveal(to=6), now=T)
    match.handle(Rule(ruling=Ruling.INCORRECT), now=T)
    match.handle(Reveal(to=9), now=T)
    assert match.phase is Phase.BUZZED and match.game.floor.team == "bot2"
    with pytest.raises(IllegalCommand, match="cannot undo while the match is buzzed"):
        match.decide(UndoRuling(), now=T)


def test_throw_out_removes_the_tossups_points():
    match, _ = started_match(config())
    match.handle(StartTossup(), now=T)
    play_to(match, 2)
    match.handle(Buzz(team="red", player="red-1"), now=T)
    match.handle(Rule(ruling=Ruling.CORRECT), now=T)
    match.handle(StartTossup(), now=T)
    play_to(match, 2)
    match.handle(Buzz(team="blue", player="blue-1"), now=T)
    match.handle(Rule(ruling=Ruling.INCORRECT), now=T)
    match.handle(ThrowOut(reason="misread"), now=T)
    assert match.phase is Phase.THROWN_OUT
    assert match.scores == {"red": 15, "blue": 0}
    with pytest.raises(IllegalCommand, match="cannot undo while the match is thrown_out"):
        match.decide(UndoRuling(), now=T)


def test_time_up_is_checked_against_now():
    match, _ = started_match(config(rules=ScoringRules(answer_time=5.0, buzz_window=3.0)))
    match.handle(StartTossup(), now=T)
    play_to(match, 2)
    match.handle(Buzz(team="red", player="red-1"), now=T)
    with pytest.raises(IllegalCommand, match=r"4\.0 s left"):
        match.decide(TimeUp(), now=T + 1)
    ruled, *_ = match.handle(TimeUp(), now=T + 5)
    assert ruled.by == "timer" and ruled.points == -5
    play_to(match, 30)
    with pytest.raises(IllegalCommand, match="not up yet"):
        match.decide(TimeUp(), now=T + 2)
    (ended,) = match.handle(TimeUp(), now=T + 3)
    assert ended.reason == "time_up" and match.phase is Phase.DEAD


def test_no_rebuzz_rule_kills_the_tossup_after_a_neg():
    match, _ = started_match(config(rules=ScoringRules(rebuzz=False)))
    match.handle(StartTossup(), now=T)
    play_to(match, 2)
    match.handle(Buzz(team="red", player="red-1"), now=T)
    *_, ended = match.handle(Rule(ruling=Ruling.INCORRECT), now=T)
    assert ended.reason == "no_rebuzz" and match.phase is Phase.DEAD


def test_a_buzz_on_the_last_word_comes_after_the_question_and_costs_nothing():
    """Hearing part of a word counts as hearing it (PRODUCT.md): once the last word is out,
    an incorrect answer is not a neg, whether the reader's end of the question came yet or
    not, for a person and for a model whose buzz position is the last word."""
    match, _ = started_match(config())
    match.handle(StartTossup(), now=T)
    play_to(match, 19)  # the last of 20 words: reading not yet finished
    assert match.phase is Phase.READING
    (accepted,) = match.handle(Buzz(team="red", player="red-1"), now=T)
    assert isinstance(accepted, BuzzAccepted) and not accepted.interrupt
    match.handle(Rule(ruling=Ruling.INCORRECT), now=T)
    assert match.scores["red"] == 0
    assert match.phase is Phase.AWAITING  # the others may still buzz in the window
    (accepted,) = match.handle(Buzz(team="blue", player="blue-1"), now=T)
    assert isinstance(accepted, BuzzAccepted)

    buzzes = {"t0": ModelBuzz(word_index=19, guess="Booker T. Washington", confidence=0.6)}
    match, _ = started_match(config(model_buzzes=buzzes))
    match.handle(StartTossup(), now=T)
    play_to(match, 18)
    (accepted,) = match.handle(Buzz(team="red", player="red-1"), now=T)
    assert accepted.interrupt  # the word before the last: a neg
    match.handle(Rule(ruling=Ruling.INCORRECT), now=T)
    assert match.scores["red"] == -5
    events = match.handle(Reveal(to=25), now=T)
    acc = next(e for e in events if isinstance(e, BuzzAccepted))
    assert (acc.team, acc.word_index, acc.interrupt) == ("bot", 19, False)
    match.handle(Rule(ruling=Ruling.INCORRECT), now=T)
    assert match.scores["bot"] == 0


def test_model_buzzes_when_reading_reaches_its_position():
    buzzes = {"t0": ModelBuzz(word_index=6, guess="George Washington Carver", confidence=0.8)}
    match, _ = started_match(config(model_buzzes=buzzes))
    match.handle(StartTossup(), now=T)
    events = match.handle(Reveal(to=15), now=T)
    assert [e.type for e in events] == ["words_revealed", "buzz_accepted"]
    assert events[0].position == 6  # the reveal stops at the model's buzz
    acc = events[1]
    assert (acc.team, acc.kind, acc.word_index, acc.answer) == (
        "bot",
        "model",
        6,
        "George Washington Carver",
    )
    assert acc.suggestion == "accept" and acc.confidence == 0.8
    match.handle(Rule(ruling=Ruling.CORRECT), now=T)
    assert match.scores["bot"] == 15


def test_a_model_buzz_cannot_be_prompted_and_the_match_is_unchanged():
    buzzes = {"t0": ModelBuzz(word_index=6, guess="Carver", confidence=0.8)}
    match, _ = started_match(config(model_buzzes=buzzes))
    match.handle(StartTossup(), now=T)
    match.handle(Reveal(to=15), now=T)
    before = match.game
    with pytest.raises(IllegalCommand, match="model team: it gave its one answer"):
        match.handle(Rule(ruling=Ruling.PROMPT), now=T)
    assert match.game == before and match.phase is Phase.BUZZED
    match.handle(Rule(ruling=Ruling.INCORRECT), now=T)  # a ruling it can take still works
    assert match.scores["bot"] == -5  # an interrupt


def test_model_buzzes_right_away_when_reading_resumes_past_its_position():
    buzzes = {"t0": ModelBuzz(word_index=6, guess="Booker T. Washington")}
    match, _ = started_match(config(model_buzzes=buzzes))
    match.handle(StartTossup(), now=T)
    play_to(match, 4)
    match.handle(Buzz(team="red", player="red-1"), now=T)
    match.handle(Rule(ruling=Ruling.INCORRECT), now=T)
    play_to(match, 6)
    assert match.game.floor is not None and match.game.floor.team == "bot"
    acc = [e for e in match.state.config.teams if e.id == "bot"]
    assert acc


def test_pause_is_recorded_and_the_moderator_may_still_step():
    match, _ = started_match(config())
    match.handle(StartTossup(), now=T)
    match.handle(Pause(), now=T)
    assert match.game.paused
    with pytest.raises(IllegalCommand, match="already paused"):
        match.decide(Pause(), now=T)
    match.handle(Reveal(), now=T)
    assert match.game.position == 0 and match.game.paused
    match.handle(Resume(), now=T)
    assert not match.game.paused


@pytest.mark.parametrize(
    ("command", "message"),
    [
        (Rule(ruling=Ruling.CORRECT), "cannot rule while the match is reading"),
        (Buzz(team="green", player="x"), "no team 'green'"),
        (Buzz(team="red", player="nobody"), "has not joined team 'red'"),
        (StartTossup(), "cannot start tossup while the match is reading"),
        (Reveal(to=-1), "already revealed"),
        (Join(team="red", player="blue-1", name="B"), "already plays for team 'blue'"),
    ],
)
def test_illegal_commands_raise_one_domain_error(command, message):
    match, _ = started_match(config())
    match.handle(StartTossup(), now=T)
    with pytest.raises(IllegalCommand, match=message):
        match.decide(command, now=T)


def test_decide_does_not_change_the_match():
    match, _ = started_match(config())
    match.handle(StartTossup(), now=T)
    before = match.state
    match.decide(Reveal(to=10), now=T)
    assert match.state is before


def test_refused_buzz_when_no_tossup_is_live_and_running_out_of_tossups():
    match, _ = started_match(config(n_tossups=1))
    (refused,) = match.handle(Buzz(team="red", player="red-1"), now=T)
    assert refused.reason is RefusalReason.NOT_LIVE and refused.tossup_id is None
    match.handle(StartTossup(), now=T)
    match.handle(ThrowOut(), now=T)
    with pytest.raises(IllegalCommand, match="every tossup"):
        match.decide(StartTossup(), now=T)
    (ended,) = match.handle(EndMatch(), now=T)
    assert ended.scores == {"red": 0, "blue": 0}
    with pytest.raises(IllegalCommand, match="this match has ended: it is over"):
        match.decide(StartTossup(), now=T)
    with pytest.raises(IllegalCommand, match="this match has ended: it takes no more players"):
        match.decide(Join(team="red", player="late", name="Late"), now=T)


def _press(match: Match, team: str, player: str, at: float):
    (ev,) = match.handle(
        Buzz(team=team, player=player, timing=BuzzTiming(received_wall=at, received_mono=at)),
        now=at,
    )
    return ev


def test_a_refused_press_repeated_is_counted_on_the_first_not_stored():
    match, _ = started_match(config())
    match.handle(StartTossup(), now=T)
    play_to(match, 3)
    won = _press(match, "red", "red-1", T + 1)
    first = _press(match, "blue", "blue-1", T + 1.2)
    assert isinstance(first, BuzzRefused) and first.reason is RefusalReason.LOST_RACE
    assert first.holder_buzz_id == won.buzz_id and first.seq == match.state.seq
    state = match.state
    again = _press(match, "blue", "blue-1", T + 1.5)
    # the same race lost again: counted on the first refusal, no place in the record's
    # sequence, no buzz id of its own, nothing changed
    assert isinstance(again, BuzzRepeated)
    assert (again.buzz_id, again.team, again.player, again.reason) == (
        first.buzz_id,
        "blue",
        "blue-1",
        RefusalReason.LOST_RACE,
    )
    assert (again.seq, again.received_wall, again.word_index) == (first.seq, T + 1.5, 3)
    assert match.state is state
    # the holder of the floor pressing again loses a race of its own, once
    own = _press(match, "red", "red-1", T + 1.6)
    assert isinstance(own, BuzzRefused) and own.holder_buzz_id == won.buzz_id
    assert _press(match, "red", "red-1", T + 1.7).buzz_id == own.buzz_id


def test_each_reason_player_and_holder_of_the_floor_has_its_own_first_refusal():
    match, _ = started_match(config())
    match.handle(Join(team="red", player="red-2", name="Q"), now=T)
    match.handle(Join(team="blue", player="blue-2", name="Q"), now=T)
    match.handle(StartTossup(), now=T)
    play_to(match, 3)
    first_holder = _press(match, "red", "red-1", T)
    lost = _press(match, "blue", "blue-2", T)
    match.handle(Rule(ruling=Ruling.INCORRECT), now=T)  # red locked out, reading goes on
    locked = _press(match, "red", "red-1", T)
    assert isinstance(locked, BuzzRefused) and locked.reason is RefusalReason.LOCKED_OUT
    assert isinstance(_press(match, "red", "red-1", T), BuzzRepeated)
    # another player of the locked-out team: a refusal of their own
    assert isinstance(_press(match, "red", "red-2", T), BuzzRefused)
    second_holder = _press(match, "blue", "blue-1", T)
    assert isinstance(second_holder, BuzzAccepted)
    # locked out whoever holds the floor: still the same refusal
    assert _press(match, "red", "red-1", T).buzz_id == locked.buzz_id
    # a race lost to another holder is another race: stored in full
    relost = _press(match, "blue", "blue-2", T)
    assert isinstance(relost, BuzzRefused) and relost.holder_buzz_id == second_holder.buzz_id
    assert lost.holder_buzz_id == first_holder.buzz_id != relost.buzz_id
    assert _press(match, "blue", "blue-2", T).buzz_id == relost.buzz_id
    match.handle(Rule(ruling=Ruling.CORRECT), now=T)
    not_live = _press(match, "blue", "blue-2", T)
    assert isinstance(not_live, BuzzRefused) and not_live.reason is RefusalReason.NOT_LIVE
    assert _press(match, "blue", "blue-2", T).buzz_id == not_live.buzz_id


def test_refusals_are_counted_per_tossup():
    match, _ = started_match(config())
    before = _press(match, "red", "red-1", T)  # no tossup yet
    assert _press(match, "red", "red-1", T).buzz_id == before.buzz_id
    for _ in range(2):
        match.handle(StartTossup(), now=T)
        assert match.state.refused == {}
        match.handle(ThrowOut(), now=T)
        between = _press(match, "red", "red-1", T)
        assert isinstance(between, BuzzRefused) and between.buzz_id != before.buzz_id
        assert isinstance(_press(match, "red", "red-1", T), BuzzRepeated)
        before = between


def test_an_undo_keeps_the_refusals_of_the_tossup_and_replay_is_the_live_match():
    match, stored = started_match(config())
    for command in (StartTossup(), Reveal(to=3)):
        stored += match.handle(command, now=T)
    presses: list = []

    def press(team: str, player: str):
        presses.append(_press(match, team, player, T))
        if not isinstance(presses[-1], BuzzRepeated):
            stored.append(presses[-1])
        return presses[-1]

    press("red", "red-1")
    lost = press("blue", "blue-1")
    stored += match.handle(Rule(ruling=Ruling.INCORRECT), now=T)
    locked = press("red", "red-1")
    stored += match.handle(UndoRuling(), now=T)  # red has the floor again
    assert match.state.refused  # the refusals stay in the record: still known
    assert press("blue", "blue-1").buzz_id == lost.buzz_id
    stored += match.handle(Rule(ruling=Ruling.INCORRECT), now=T)
    assert press("red", "red-1").buzz_id == locked.buzz_id
    assert [type(p).__name__ for p in presses].count("BuzzRepeated") == 2
    assert [e.seq for e in stored] == list(range(1, len(stored) + 1))
    assert Match.replay(stored).state == match.state


def test_a_repeated_press_is_not_an_event_of_the_sequence():
    match, _ = started_match(config())
    _press(match, "red", "red-1", T)
    repeat = _press(match, "red", "red-1", T)
    assert event_from_dict(event_to_dict(repeat)) == repeat
    with pytest.raises(ValueError, match="does not follow"):
        match.apply([repeat.model_copy(update={"seq": repeat.seq + 1})])


def test_events_round_trip_through_dicts_and_replay_rebuilds_state():
    buzzes = {"t1": ModelBuzz(word_index=3, guess="Carver")}
    match, events = started_match(config(model_buzzes=buzzes))
    for cmd in [
        StartTossup(),
        Reveal(to=5),
        Buzz(team="red", player="red-1", timing=BuzzTiming(received_mono=1.0, rtt=0.02)),
        Rule(ruling=Ruling.INCORRECT),
        Reveal(to=30),
        TimeUp(),
        StartTossup(),
        Reveal(to=2),
        Buzz(team="red", player="red-1"),  # before the model's buzz: a human can be prompted
        Rule(ruling=Ruling.PROMPT),
        Rule(ruling=Ruling.INCORRECT),
        UndoRuling(),
    ]:
        events += match.handle(cmd, now=T + 100 if isinstance(cmd, TimeUp) else T)
    rebuilt = Match.replay(event_from_dict(event_to_dict(e)) for e in events)
    assert rebuilt.state == match.state
    assert [e.seq for e in events] == list(range(1, len(events) + 1))


def test_every_phase_has_a_row_in_the_table():
    phases_with_moves = {phase for phase, _ in TRANSITIONS}
    assert phases_with_moves == set(Phase)
    # an ended match takes only the officials' amendments (protests, corrections)
    ended = {command for phase, command in TRANSITIONS if phase is Phase.ENDED}
    assert ended == {"protest", "correct", "resolve_protest"}
