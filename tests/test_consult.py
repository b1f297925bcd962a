"""Consulting a model on bonus parts (QANTA 2026's human rules) in the match engine."""

from __future__ import annotations

import pytest
from engine_helpers import config

from grace_arena.core.commands import (
    AbstainPart,
    AnswerPart,
    Buzz,
    ConsultPart,
    Join,
    Rule,
    RulePart,
    StartTossup,
    TimeUp,
    UndoRuling,
)
from grace_arena.core.config import ConsultScoring, ConsultSpec, ModelAnswer
from grace_arena.core.errors import IllegalCommand
from grace_arena.core.events import BonusPartConsulted, BonusPartRuled, Ruling
from grace_arena.core.formats import rules_for
from grace_arena.core.match import Match
from grace_arena.core.phases import Phase

C, X, P = Ruling.CORRECT, Ruling.INCORRECT, Ruling.PROMPT

ADVISOR = ConsultSpec(
    model="tfidf",
    answers={
        "b0": (
            ModelAnswer(guess="part 0", confidence=0.91, correct=True),
            ModelAnswer(guess="wrong", confidence=0.35, correct=False),
            ModelAnswer(guess="part 2", confidence=0.6, correct=True),
        ),
        "b1": (ModelAnswer(guess=None), ModelAnswer(guess="part 1", correct=True)),
    },
)


def consult_match(scoring: ConsultScoring | None = None, **rules):
    cfg = config(
        n_tossups=3, bonus_parts=(3, 2, 3), consult=ADVISOR,
        rules=rules_for("acf", consult=scoring or ConsultScoring(), **rules),
    )  # fmt: skip
    match, _ = Match.create(cfg, now=0.0)
    for team in ("red", "blue"):
        match.handle(Join(team=team, player=f"{team}-1", name="One"), now=0.0)
    return match


def win(match: Match, team: str, now: float = 1.0) -> None:
    match.handle(StartTossup(), now=now)
    match.handle(Buzz(team=team, player=f"{team}-1"), now=now)
    match.handle(Rule(ruling=C), now=now)


def recorded(match: Match) -> list:
    """Every event ``match`` emits from now on (the match goes on as before)."""
    events: list = []
    handle = match.handle

    def handled(command, *, now: float) -> list:
        emitted = handle(command, now=now)
        events.extend(emitted)
        return emitted

    match.handle = handled  # type: ignore[method-assign]
    return events


def screen_match_won_by_red() -> Match:
    """A match read on screen (a 10 s clock for each part), red's bonus up at t = 1."""
    cfg = config(
        n_tossups=1, bonus_parts=(3,), consult=ADVISOR, reading_mode="screen",
        rules=rules_for("acf", consult=ConsultScoring(), bonus_answer_time=10.0),
    )  # fmt: skip
    match, _ = Match.create(cfg, now=0.0)
    match.handle(Join(team="red", player="red-1", name="One"), now=0.0)
    win(match, "red", now=1.0)
    return match


def part_ruled(events) -> BonusPartRuled:
    return next(e for e in events if isinstance(e, BonusPartRuled))


def test_each_choice_is_scored_by_qanta_2026_points() -> None:
    match = consult_match()
    win(match, "red")  # red: 10 for the tossup
    # part 1 on its own, correct: 15
    match.handle(AnswerPart(team="red", player="red-1", text="part 0"), now=2.0)
    ruled = part_ruled(match.handle(RulePart(ruling=C), now=2.0))
    assert (ruled.choice, ruled.points) == ("own", 15)
    # part 2 after consulting (the model is wrong, the team too): 0
    seen = match.handle(ConsultPart(team="red", player="red-1", draft="my idea"), now=3.0)[0]
    assert isinstance(seen, BonusPartConsulted)
    assert (seen.model, seen.guess, seen.confidence) == ("tfidf", "wrong", 0.35)
    assert seen.model_correct is False and seen.draft == "my idea"
    assert seen.draft_suggestion == "reject" and seen.deadline is None  # read aloud: no clock
    given = match.handle(AnswerPart(team="red", player="red-1", text="wrong"), now=3.0)[0]
    assert given.choice == "consult"
    ruled = part_ruled(match.handle(RulePart(ruling=X), now=3.0))
    assert (ruled.choice, ruled.points, ruled.resume) == ("consult", 0, "part")  # no bounceback
    # part 3 after consulting, correct: 10
    match.handle(ConsultPart(team="red", player="red-1"), now=4.0)
    match.handle(AnswerPart(team="red", player="red-1", text="part 2"), now=4.0)
    ruled = part_ruled(match.handle(RulePart(ruling=C), now=4.0))
    assert (ruled.choice, ruled.points) == ("consult", 10)
    assert match.phase is Phase.ANSWERED and match.scores == {"red": 10 + 15 + 0 + 10, "blue": 0}


def test_an_abstention_scores_when_the_model_was_wrong_and_ends_the_turn_at_once() -> None:
    match = consult_match()
    win(match, "blue")
    # abstaining where the model was right scores nothing
    ruled = part_ruled(match.handle(AbstainPart(team="blue", player="blue-1"), now=2.0))
    assert (ruled.choice, ruled.ruling, ruled.points, ruled.by) == ("abstain", X, 0, "team")
    # after consulting a wrong model, abstaining is right: 5 (the moderator records it)
    match.handle(ConsultPart(team="blue"), now=3.0)
    ruled = part_ruled(match.handle(AbstainPart(team="blue"), now=3.0))
    assert (ruled.choice, ruled.points, ruled.resume) == ("abstain", 5, "part")
    # an undo takes the abstention back: the part is up again, consulted as it was
    match.handle(UndoRuling(), now=3.5)
    assert match.state.game.bonus.part == 1 and match.state.game.bonus.consulted is not None
    assert match.scores["blue"] == 10
    match.handle(AbstainPart(team="blue"), now=3.6)
    assert match.scores["blue"] == 15
    # a model with no answer to a part: nobody had it, abstaining is right
    match.handle(AbstainPart(team="blue"), now=4.0)  # part 3: the model was right
    win(match, "blue", now=5.0)
    ruled = part_ruled(match.handle(AbstainPart(team="blue"), now=5.0))
    assert ruled.points == 5
    assert match.scores["blue"] == 10 + 0 + 5 + 0 + 10 + 5


def test_consult_rules_keep_the_format_they_go_with() -> None:
    from grace_arena.core.formats import describe

    rules = rules_for("acf", consult=ConsultScoring())
    assert rules.format == "acf"
    assert describe(rules) == (
        "ACF: 10 a tossup, no powers, negs -5 (first team only), bonuses with a model to "
        "consult (15 alone, 10 after consulting, 5 for a right abstention), 20 tossups"
    )
    assert rules_for("grace", consult=ConsultScoring()).format == "custom"  # no bonuses there


def test_points_per_choice_are_configurable() -> None:
    match = consult_match(ConsultScoring(own_points=10, consult_points=5, abstain_points=1))
    win(match, "red")
    match.handle(AnswerPart(team="red", player="red-1", text="part 0"), now=2.0)
    assert part_ruled(match.handle(RulePart(ruling=C), now=2.0)).points == 10
    match.handle(ConsultPart(team="red"), now=2.0)
    assert part_ruled(match.handle(AbstainPart(team="red"), now=2.0)).points == 1
    match.handle(ConsultPart(team="red"), now=2.0)
    match.handle(AnswerPart(team="red", player="red-1", text="part 2"), now=2.0)
    assert part_ruled(match.handle(RulePart(ruling=C), now=2.0)).points == 5


def test_what_may_not_be_consulted_or_abstained_is_refused_by_name() -> None:
    match = consult_match()
    win(match, "red")
    with pytest.raises(IllegalCommand, match="team 'red''s, not team 'blue''s"):
        match.handle(ConsultPart(team="blue", player="blue-1"), now=2.0)
    with pytest.raises(IllegalCommand, match="has not joined"):
        match.handle(ConsultPart(team="red", player="blue-1"), now=2.0)
    with pytest.raises(IllegalCommand, match="part 1 is up now"):
        match.handle(ConsultPart(team="red", part=2), now=2.0)
    match.handle(ConsultPart(team="red", player="red-1"), now=2.0)
    with pytest.raises(IllegalCommand, match="already consulted"):
        match.handle(ConsultPart(team="red", player="red-1"), now=2.0)
    match.handle(AnswerPart(team="red", player="red-1", text="x"), now=2.0)
    with pytest.raises(IllegalCommand, match="already answered"):
        match.handle(AbstainPart(team="red", player="red-1"), now=2.0)
    # a prompt: the team answers again, it cannot abstain then
    match.handle(RulePart(ruling=P), now=2.0)
    with pytest.raises(IllegalCommand, match="already answered"):
        match.handle(AbstainPart(team="red"), now=2.0)
    # a match without consult rules refuses both
    plain, _ = Match.create(config(n_tossups=1, bonus_parts=(3,), rules=rules_for("acf")), now=0)
    plain.handle(Join(team="red", player="red-1", name="One"), now=0.0)
    win(plain, "red")
    with pytest.raises(IllegalCommand, match="no consult rules"):
        plain.handle(ConsultPart(team="red"), now=1.0)
    with pytest.raises(ValueError, match="need a model to consult"):
        config(n_tossups=1, rules=rules_for("acf", consult=ConsultScoring()))


def test_the_answer_clock_starts_again_after_a_consult_on_screen() -> None:
    match = screen_match_won_by_red()
    assert match.state.game.deadline == 11.0
    seen = match.handle(ConsultPart(team="red", player="red-1"), now=9.0)[0]
    assert seen.deadline == 19.0  # time to read the model's answer and decide
    ruled = part_ruled(match.handle(TimeUp(), now=19.0))
    assert (ruled.by, ruled.choice, ruled.points) == ("timer", "consult", 0)


def test_the_choices_in_force_are_read_back_from_the_record() -> None:
    """part_choices: one per part ruled under consult rules, with what the team was shown and
    its draft; an undone ruling is not in force, nor the parts of a bonus thrown out."""
    from grace_arena.core.commands import ThrowOutBonus
    from grace_arena.core.consult import part_choices

    match = consult_match()
    events = recorded(match)
    cfg = match.config
    win(match, "red")
    match.handle(ConsultPart(team="red", player="red-1", draft="hemingway"), now=2.0)
    match.handle(AnswerPart(team="red", player="red-1", text="part 0"), now=2.0)
    match.handle(RulePart(ruling=C), now=2.0)
    match.handle(AbstainPart(team="red"), now=2.0)  # model wrong: right, 5
    match.handle(UndoRuling(), now=2.0)  # ... taken back
    match.handle(AnswerPart(team="red", player="red-1", text="wrong"), now=2.0)
    match.handle(RulePart(ruling=X), now=2.0)
    match.handle(AnswerPart(team="red", player="red-1", text="part 2"), now=2.0)
    match.handle(RulePart(ruling=C), now=2.0)
    win(match, "blue", now=3.0)
    match.handle(ConsultPart(team="blue"), now=3.0)
    match.handle(ThrowOutBonus(), now=3.0)  # its parts are not heard
    choices = part_choices(events, cfg)
    assert [(c.team, c.part, c.choice, c.points) for c in choices] == [
        ("red", 0, "consult", 10), ("red", 1, "own", 0), ("red", 2, "own", 15),
    ]  # fmt: skip
    first = choices[0]
    assert (first.model, first.model_guess, first.model_confidence) == ("tfidf", "part 0", 0.91)
    assert first.model_correct is True and first.draft == "hemingway"
    assert first.draft_correct is False and first.answer == "part 0" and first.correct
    assert first.agreed is True and first.changed is True  # it gave the model's answer
    assert choices[1].consulted is False and choices[1].changed is None


def test_a_consult_stands_through_a_prompt_taken_back() -> None:
    from grace_arena.core.consult import part_choices

    match = consult_match()
    events = recorded(match)
    win(match, "red")
    match.handle(ConsultPart(team="red", player="red-1", draft="x"), now=2.0)
    match.handle(AnswerPart(team="red", player="red-1", text="part"), now=2.0)
    match.handle(RulePart(ruling=P), now=2.0)
    match.handle(UndoRuling(), now=2.0)  # the prompt taken back: answer and consult as before
    match.handle(RulePart(ruling=C), now=2.0)
    (choice,) = part_choices(events, match.config)
    assert (choice.choice, choice.consulted, choice.model_guess, choice.points) == (
        "consult", True, "part 0", 10)  # fmt: skip


def test_a_consult_or_abstention_after_the_answer_time_is_refused() -> None:
    match = screen_match_won_by_red()
    for late in (ConsultPart(team="red", player="red-1"), AbstainPart(team="red")):
        with pytest.raises(IllegalCommand, match="the answer time ran out"):
            match.handle(late, now=11.0)
    assert part_ruled(match.handle(TimeUp(), now=11.0)).choice == "own"


def test_an_abstention_is_right_by_the_models_answer_whatever_it_scores() -> None:
    from grace_arena.core.consult import part_choices

    match = consult_match(ConsultScoring(abstain_points=0))
    events = recorded(match)
    win(match, "red")
    match.handle(AbstainPart(team="red"), now=2.0)  # the model was right: wrong to abstain
    match.handle(AbstainPart(team="red"), now=2.0)  # the model was wrong: right, worth 0
    assert [(c.points, c.abstained_right) for c in part_choices(events, match.config)] == [
        (0, False), (0, True)]  # fmt: skip
