"""The tossup–bonus cycle in the match engine, rule by rule, and the formats that set it."""

from __future__ import annotations

import pytest
from engine_helpers import config

from grace_arena.core.commands import (
    AnswerPart,
    Buzz,
    GiveAnswer,
    Join,
    Reveal,
    Rule,
    RulePart,
    StartTossup,
    ThrowOut,
    ThrowOutBonus,
    TimeUp,
    UndoRuling,
)
from grace_arena.core.config import ScoringRules
from grace_arena.core.errors import IllegalCommand
from grace_arena.core.events import BonusEnded, BonusPartRuled, BonusStarted, Ruling
from grace_arena.core.formats import FORMATS, describe, rules_for
from grace_arena.core.match import Match
from grace_arena.core.packet import SAMPLE_PACKET_PATH, load_packet
from grace_arena.core.phases import Phase
from grace_arena.core.specs import match_config

C, X, P = Ruling.CORRECT, Ruling.INCORRECT, Ruling.PROMPT  # correct, incorrect, prompt


def play(fmt: str = "acf", *, humans=("red", "blue"), parts=(3, 3, 3), screen=False, **rules):
    cfg = config(
        n_tossups=4, humans=humans, bonus_parts=parts, rules=rules_for(fmt, **rules),
        reading_mode="screen" if screen else "read_aloud",
    )  # fmt: skip
    match, events = Match.create(cfg, now=0.0)
    for team in humans:
        events += match.handle(Join(team=team, player=f"{team}-1", name="One"), now=0.0)
    return match, events


def win_tossup(match: Match, team: str, now: float = 1.0) -> list:
    events = match.handle(StartTossup(), now=now)
    events += match.handle(Buzz(team=team, player=f"{team}-1"), now=now)
    return events + match.handle(Rule(ruling=C), now=now)


def test_the_team_that_answers_a_tossup_hears_the_next_bonus_and_scores_its_parts() -> None:
    match, _ = play()
    events = win_tossup(match, "blue")
    assert isinstance(events[-1], BonusStarted) and events[-1].team == "blue"
    assert match.phase is Phase.BONUS and match.bonus_turn() == "blue"
    assert match.current_bonus.id == "b0"
    for ruling in (C, X, C):
        match.handle(RulePart(ruling=ruling), now=2.0)
    assert match.phase is Phase.ANSWERED
    assert match.scores == {"red": 0, "blue": 10 + 20}
    ended = match.state.game.bonus
    assert ended.done and [r.points for r in ended.results] == [10, 0, 10]
    # the next cycle gets the next bonus
    win_tossup(match, "red", now=3.0)
    assert match.current_bonus.id == "b1" and match.bonus_turn() == "red"


def test_a_dead_tossup_has_no_bonus_and_a_tossup_only_format_none() -> None:
    match, _ = play()
    match.handle(StartTossup(), now=1.0)
    match.handle(Buzz(team="red", player="red-1"), now=1.0)
    match.handle(Rule(ruling=X), now=1.0)
    match.handle(Buzz(team="blue", player="blue-1"), now=1.0)
    match.handle(Rule(ruling=X), now=1.0)
    assert match.phase is Phase.DEAD and match.state.game.bonuses_used == ()
    grace, _ = play("grace")
    win_tossup(grace, "red")
    assert grace.phase is Phase.ANSWERED and grace.state.game.bonus is None


def test_bouncebacks_give_a_missed_part_to_the_other_team_in_a_two_team_match() -> None:
    match, _ = play("naqt", bouncebacks=True)
    assert match.config.rules.format == "naqt"  # bouncebacks are NAQT's option
    win_tossup(match, "red")
    events = match.handle(RulePart(ruling=X), now=2.0)
    assert events[0].resume == "bounceback" and match.bonus_turn() == "blue"
    with pytest.raises(IllegalCommand, match="this part is team 'blue''s to answer"):
        match.handle(AnswerPart(team="red", player="red-1", text="x"), now=2.0)
    match.handle(AnswerPart(team="blue", player="blue-1", text="part 0"), now=2.0)
    (ruled,) = match.handle(RulePart(ruling=C), now=2.0)
    assert (ruled.team, ruled.points, ruled.bounceback, ruled.answer) == (
        "blue",
        10,
        True,
        "part 0",
    )
    assert match.bonus_turn() == "red" and match.state.game.bonus.part == 1
    # a missed bounceback goes on to the next part; nobody loses points
    match.handle(RulePart(ruling=X), now=2.0)
    match.handle(RulePart(ruling=X), now=2.0)
    assert match.state.game.bonus.part == 2
    match.handle(RulePart(ruling=C), now=2.0)
    ended = match.handle(RulePart(ruling=C), now=2.0)[-1] if match.phase is Phase.BONUS else None
    assert ended is None and match.phase is Phase.ANSWERED
    assert match.scores == {"red": 15 + 10, "blue": 10}  # (a power: buzzed at the first word)
    # three teams: no format says whose bounceback it would be, so none is played
    three, _ = play("naqt", humans=("red", "blue", "green"), bouncebacks=True)
    win_tossup(three, "green")
    assert three.handle(RulePart(ruling=X), now=2.0)[0].resume == "part"


def test_the_team_s_first_answer_stands_and_a_prompt_allows_another() -> None:
    match, _ = play(screen=True)
    win_tossup(match, "red")
    (given,) = match.handle(AnswerPart(team="red", player="red-1", text="part 0"), now=2.0)
    assert given.suggestion == "accept"
    with pytest.raises(IllegalCommand, match="the first answer stands"):
        match.handle(AnswerPart(team="red", player="red-1", text="other"), now=2.0)
    (prompt,) = match.handle(RulePart(ruling=P), now=2.0)
    assert prompt.resume == "prompt" and prompt.deadline == 2.0 + 10.0
    match.handle(AnswerPart(team="red", player="red-1", text="part zero"), now=3.0)
    with pytest.raises(IllegalCommand, match="has not joined team 'red'"):
        match.handle(AnswerPart(team="red", player="blue-1", text="x"), now=3.0)


def test_time_up_on_a_part_rules_it_incorrect_by_the_timer_in_screen_mode() -> None:
    match, _ = play(screen=True, bonus_answer_time=5.0)
    win_tossup(match, "red", now=10.0)
    assert match.state.game.deadline == 15.0
    with pytest.raises(IllegalCommand, match="time is not up yet"):
        match.handle(TimeUp(), now=12.0)
    (ruled,) = match.handle(TimeUp(), now=15.0)
    assert isinstance(ruled, BonusPartRuled) and (ruled.by, ruled.ruling) == ("timer", X)
    assert match.state.game.deadline == 20.0  # the next part's clock
    # read aloud, the moderator reads each part and rules: no clock runs on it
    aloud, _ = play(bonus_answer_time=5.0)
    win_tossup(aloud, "red")
    assert aloud.state.game.deadline is None


def test_a_thrown_out_bonus_loses_its_points_and_the_next_unused_one_replaces_it() -> None:
    match, _ = play(parts=(3, 2))
    win_tossup(match, "red")
    match.handle(RulePart(ruling=C), now=2.0)
    assert match.scores["red"] == 20
    events = match.handle(ThrowOutBonus(reason="misread"), now=2.0)
    assert [e.type for e in events] == ["bonus_ended", "bonus_started"]
    assert events[0].outcome == "thrown_out" and events[0].reason == "misread"
    assert match.scores["red"] == 10 and match.current_bonus.id == "b1"
    match.handle(ThrowOutBonus(), now=2.0)  # no bonus left: the cycle is over
    assert match.phase is Phase.ANSWERED and match.state.game.bonuses_used == ("b0", "b1")
    win_tossup(match, "blue", now=3.0)
    assert match.phase is Phase.ANSWERED and match.scores["blue"] == 10


def test_undo_works_across_the_cycle() -> None:
    match, _ = play()
    win_tossup(match, "red")
    match.handle(RulePart(ruling=C), now=2.0)
    match.handle(RulePart(ruling=C), now=2.0)
    match.handle(RulePart(ruling=C), now=2.0)
    assert match.phase is Phase.ANSWERED and match.scores["red"] == 40
    undone = match.handle(UndoRuling(), now=3.0)
    assert undone[0].type == "bonus_part_undone" and match.phase is Phase.BONUS
    assert match.state.game.bonus.part == 2 and match.scores["red"] == 30
    match.handle(UndoRuling(), now=3.0)
    match.handle(UndoRuling(), now=3.0)
    # before any part: the tossup's ruling itself, and the bonus goes back unused
    assert match.handle(UndoRuling(), now=3.0)[0].type == "ruling_undone"
    assert match.phase is Phase.BUZZED and match.state.game.bonuses_used == ()
    match.handle(Rule(ruling=C), now=4.0)
    assert match.current_bonus.id == "b0"


def test_a_cycle_thrown_out_takes_its_tossup_and_bonus_points_away() -> None:
    match, _ = play()
    win_tossup(match, "red")
    match.handle(RulePart(ruling=C), now=2.0)
    match.handle(ThrowOut(reason="the tossup was misread"), now=2.0)
    assert match.phase is Phase.THROWN_OUT and match.scores == {"red": 0, "blue": 0}
    assert match.state.game.bonus is None and match.state.game.bonuses_used == ("b0",)


def test_overtime_tossups_earn_no_bonus_unless_the_format_says_so() -> None:
    match, _ = play(regulation_tossups=2)
    for now, team in ((1.0, "red"), (2.0, "blue")):
        win_tossup(match, team, now=now)
        while match.phase is Phase.BONUS:
            match.handle(RulePart(ruling=X), now=now)
    win_tossup(match, "red", now=3.0)  # tossup 3: overtime
    assert match.phase is Phase.ANSWERED and len(match.state.game.bonuses_used) == 2
    generous, _ = play(regulation_tossups=1, overtime_bonuses=True)
    win_tossup(generous, "red")
    generous.handle(ThrowOutBonus(), now=1.0)
    generous.handle(ThrowOutBonus(), now=1.0)
    generous.handle(ThrowOutBonus(), now=1.0)
    win_tossup(generous, "blue", now=2.0)
    assert generous.phase is Phase.ANSWERED  # (every bonus was used)


def test_a_match_on_the_sample_packet_plays_its_original_bonuses() -> None:
    from grace_arena.core.config import TeamSpec

    packet = load_packet(SAMPLE_PACKET_PATH)
    cfg = match_config(
        packet, [TeamSpec(id="red", name="Red"), TeamSpec(id="blue", name="Blue")],
        rules=rules_for("acf"), reading_mode="screen",
    )  # fmt: skip
    assert [b.id for b in cfg.bonuses] == [b.id for b in packet.bonuses]
    match, _ = Match.create(cfg, now=0.0)
    match.handle(Join(team="red", player="r", name="R"), now=0.0)
    match.handle(StartTossup(), now=1.0)
    match.handle(Buzz(team="red", player="r"), now=1.0)
    match.handle(GiveAnswer(team="red", player="r", text="Moby Dick"), now=1.0)
    match.handle(Rule(ruling=C), now=1.0)
    assert match.current_bonus.id == "b-lit-american-1"
    given = match.handle(AnswerPart(team="red", player="r", text="mark twain"), now=2.0)
    assert given[0].suggestion == "accept"
    events = match.handle(RulePart(ruling=C), now=2.0)
    assert events[0].points == 10 and match.scores["red"] == 20  # ACF: no powers


def test_bonus_events_survive_the_record_s_json() -> None:
    from grace_arena.core.events import event_from_dict, event_to_dict

    match, events = play(bouncebacks=True, fmt="naqt")
    events += win_tossup(match, "red")
    events += match.handle(RulePart(ruling=X), now=2.0)
    events += match.handle(UndoRuling(), now=2.0)
    events += match.handle(ThrowOutBonus(), now=2.0)
    assert [event_from_dict(event_to_dict(e)) for e in events] == events
    assert Match.replay(events).state == match.state
    assert any(isinstance(e, BonusEnded) for e in events)


def test_formats_mirror_the_quizbowl_presets() -> None:
    acf = rules_for("acf")
    assert (acf.power_points, acf.neg_points, acf.bonuses, acf.bouncebacks) == (
        None,
        -5,
        True,
        False,
    )
    assert acf.regulation_tossups == 20 and not acf.overtime_bonuses
    pace = rules_for("PACE")
    assert (pace.power_points, pace.neg_points, pace.format) == (20, 0, "pace")
    naqt = rules_for("naqt")
    assert (naqt.power_points, naqt.neg_points) == (15, -5)
    # NAQT and ACF neg only the first team to answer a tossup incorrectly
    assert acf.neg_first_team_only and naqt.neg_first_team_only
    assert rules_for("grace") == ScoringRules(format="grace")  # today's game, named
    assert rules_for("acf", neg_points=0).format == "custom"
    assert rules_for("acf", answer_time=20.0).format == "acf"  # the room's clock is its own
    assert set(FORMATS) == {"grace", "acf", "pace", "naqt", "qanta26"}
    with pytest.raises(ValueError, match=r"unknown format 'quiz'.*acf"):
        rules_for("quiz")
    assert describe(acf) == (
        "ACF: 10 a tossup, no powers, negs -5 (first team only), bonuses, 20 tossups"
    )


def test_the_moderator_is_told_when_regulation_is_over_and_overtime_begins() -> None:
    from grace_arena.server import views
    from moderator_tui.widgets import BuzzBanner

    match, _ = play(regulation_tossups=1)
    win_tossup(match, "red")
    while match.phase is Phase.BONUS:
        match.handle(RulePart(ruling=X), now=2.0)
    facts = views.RoomFacts(match_id=1, join_code="ABCDEF", words={}, wpm=180,
                            trajectories={}, tossup_log=[])  # fmt: skip
    state = views.state_view(match, facts, "moderator", now=3.0)
    assert (state.match.tossups_heard, state.match.overtime) == (1, False)
    hint = BuzzBanner()._hint(state)
    assert "regulation is over: E ends the match" in str(hint.renderables[-1])
    match.handle(StartTossup(), now=4.0)  # the other team ties it
    match.handle(Buzz(team="blue", player="blue-1"), now=4.0)
    match.handle(Rule(ruling=C), now=4.0)
    state = views.state_view(match, facts, "moderator", now=5.0)
    assert state.match.overtime and state.bonus is None  # overtime: no bonus
    assert "overtime: tied, n for another tossup" in str(BuzzBanner()._hint(state).renderables[-1])


def test_an_answer_or_ruling_for_what_is_no_longer_up_is_refused_not_moved_on() -> None:
    """A phone's tossup answer that arrives in the bonus, a second key press, a moderator's
    ruling that the timer beat: each names what it was for, and is refused when that is over
    (it used to become the team's answer to part 1, or the next turn's ruling)."""
    match, _ = play("naqt", bouncebacks=True, screen=True, bonus_answer_time=5.0)
    match.handle(StartTossup(), now=1.0)
    (accepted,) = match.handle(Buzz(team="red", player="red-1"), now=1.0)
    match.handle(Rule(ruling=C, buzz_id=accepted.buzz_id), now=1.0)
    with pytest.raises(IllegalCommand, match="that answer was for the tossup"):
        match.handle(GiveAnswer(team="red", player="red-1", text="Moby Dick"), now=1.1)
    with pytest.raises(IllegalCommand, match="that ruling was for the tossup's buzz"):
        match.handle(Rule(ruling=C, buzz_id=accepted.buzz_id), now=1.1)  # the key pressed twice
    given = match.handle(
        GiveAnswer(team="red", player="red-1", text="part 0", part=1, bounceback=False), now=2.0
    )
    assert given[0].type == "bonus_answer_given"
    match.handle(Rule(ruling=C, part=1, bounceback=False), now=2.0)
    with pytest.raises(IllegalCommand, match="that ruling was for part 1; part 2 is up now"):
        match.handle(Rule(ruling=C, part=1, bounceback=False), now=2.1)
    match.handle(TimeUp(), now=7.0)  # the timer rules red's part 2 before the moderator
    with pytest.raises(IllegalCommand, match="it is team 'blue''s bounceback"):
        match.handle(Rule(ruling=C, part=2, bounceback=False), now=7.1)
    assert match.scores == {"red": 25, "blue": 0}  # nothing credited to blue's turn
    match.handle(Rule(ruling=C, part=2, bounceback=True), now=8.0)
    assert match.scores == {"red": 25, "blue": 10}
    match.handle(Rule(ruling=X, part=3), now=9.0)  # part 3 is up: taken (blue's bounceback)
    match.handle(Rule(ruling=X, part=3, bounceback=True), now=9.0)
    assert match.phase is Phase.ANSWERED
    # after the bonus, a part's answer or ruling is refused by name
    with pytest.raises(IllegalCommand, match="cannot answer while the match is answered"):
        match.handle(GiveAnswer(team="red", player="red-1", text="x", part=3), now=9.0)


def test_a_model_team_answers_its_bonus_parts_at_once_and_plays_bouncebacks() -> None:
    from grace_arena.core.config import ModelAnswer, ModelBuzz

    answers = {
        "b0": (
            ModelAnswer(guess="part 0", confidence=0.9, correct=True),
            ModelAnswer(guess="nothing", confidence=0.2, correct=False),
            ModelAnswer(guess=None),
        ),
        "b1": (ModelAnswer(guess="part 0", confidence=0.7),) * 3,
    }
    cfg = config(n_tossups=2, humans=("red",), bonus_parts=(3, 3),
                 rules=rules_for("naqt", bouncebacks=True), bonus_answers=answers,
                 model_buzzes={"t0": ModelBuzz(word_index=0, guess="x")})  # fmt: skip
    match, _ = Match.create(cfg, now=0.0)
    match.handle(StartTossup(), now=1.0)
    match.handle(Reveal(), now=1.0)  # the model buzzes at the first word
    events = match.handle(Rule(ruling=C), now=1.0)
    # the bonus starts and the model's answer to part 1 comes with it
    assert [type(e).__name__ for e in events[-2:]] == ["BonusStarted", "BonusAnswerGiven"]
    given = events[-1]
    assert (given.team, given.player, given.text) == ("bot", "model:tfidf", "part 0")
    assert given.confidence == 0.9 and given.suggestion == "accept"
    events = match.handle(RulePart(ruling=C), now=2.0)
    assert events[-1].text == "nothing" and events[-1].part == 1  # part 2 answered at once
    match.handle(Join(team="red", player="red-1", name="One"), now=2.0)
    assert match.handle(RulePart(ruling=X), now=2.0)[0].resume == "bounceback"
    assert match.bonus_turn() == "red"  # a human team's bounceback: no answer from the model
    events = match.handle(RulePart(ruling=X), now=2.0)
    assert events[-1].text == "" and events[-1].part == 2  # no guess: answered with nothing
    match.handle(RulePart(ruling=X), now=2.0)
    match.handle(RulePart(ruling=X), now=2.0)  # red's bounceback on part 3
    assert match.phase is Phase.ANSWERED and match.scores == {
        "red": 0,
        "bot": 15 + 10,
    }  # a power, part 1
    # the human team's missed part goes back to the model, which answers it at once
    win_tossup(match, "red", now=3.0)
    events = match.handle(RulePart(ruling=X), now=3.0)
    assert events[0].resume == "bounceback" and events[-1].team == "bot"
    assert events[-1].text == "part 0"
    match.handle(RulePart(ruling=C), now=3.0)
    assert match.scores["bot"] == 35  # and the bounceback
    # a model gives its one answer: a prompt, which it could not answer, is refused
    match.handle(RulePart(ruling=C), now=3.0)  # red's part 2
    match.handle(RulePart(ruling=X), now=3.0)  # red's part 3 misses: the model's bounceback
    with pytest.raises(IllegalCommand, match="model team: it gave its one answer"):
        match.handle(RulePart(ruling=P), now=3.0)
    assert describe(cfg.rules, bouncebacks=False).endswith("bonuses, 20 tossups")
