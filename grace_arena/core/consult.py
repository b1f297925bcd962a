"""What each team chose on each bonus part under consult rules, as it stands. Pure.

One :class:`PartChoice` per bonus part a team was ruled on under consult rules (its own turn,
not a bounceback; a model team's answers are not choices): whether it consulted the model and
what it was shown, what it had in mind before (its draft, if typed, with the judge's
suggestion on it, and each human's own answer written before the model's was revealed, with
the judge's verdict on it), its final answer or its abstention, the ruling and the points. A ruling
that was undone is not in force, nor the parts of a bonus thrown out or of a tossup thrown
out, as in :func:`grace_arena.core.standings.bonuses_played`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from grace_arena.core.config import MatchConfig, TeamKind
from grace_arena.core.events import (
    BonusAnswerGiven,
    BonusEnded,
    BonusPartConsulted,
    BonusPartRuled,
    BonusPartUndone,
    BonusPreAnswerGiven,
    BonusPreAnswerOpened,
    BonusStarted,
    Event,
    MatchCreated,
    Ruling,
    TossupEnded,
    TossupOutcome,
)
from grace_arena.core.judge import Directive, judge
from grace_arena.core.rules import ConsultBonuses, rule_set

__all__ = ["PartChoice", "PreAnswer", "part_choices", "same_answer"]


@dataclass(frozen=True)
class PreAnswer:
    """One human's own answer to a part, written before the model's was revealed."""

    player: str
    text: str
    correct: bool  # the judge accepts it (a directed prompt is not an acceptance)


@dataclass(frozen=True)
class PartChoice:
    tossup_id: str
    bonus_id: str
    part: int  # 0-based
    team: str
    choice: str  # "own", "consult" or "abstain"
    consulted: bool
    model: str | None = None  # the model consulted (the match's, whether or not it was)
    model_guess: str | None = None  # what the team was shown (None: not consulted, or none)
    model_confidence: float | None = None
    model_correct: bool | None = None  # the judge's verdict on the model's answer
    draft: str | None = None  # what the team had typed before consulting
    draft_correct: bool | None = None  # the judge accepts the draft (None: no draft)
    answer: str | None = None  # the team's final answer (None: abstained, or said aloud)
    correct: bool = False  # the final answer ruled correct
    points: int = 0
    agreed: bool | None = None  # consulted and answered: the answer is the model's
    #: An abstention: right when the model's answer to the part (shown or not) was wrong —
    #: nobody had it (QANTA 2026), as the engine scored it; None for an answer.
    abstained_right: bool | None = None
    #: Consult rules with a pre-answer window: each human's own answer before the model's was
    #: revealed, in the order written (empty: no window, or nobody wrote in time).
    pre_answers: tuple[PreAnswer, ...] = ()

    @property
    def changed(self) -> bool | None:
        """Consulted with a draft and answered: the final answer is not the draft."""
        if not self.consulted or self.draft is None or self.choice == "abstain":
            return None
        same = _same(self.answer, self.draft)  # None: the answer was said aloud, not typed
        return None if same is None else not same


def same_answer(answer: str | None, other: str | None) -> bool | None:
    """Whether two typed answers are the same answer (equal, or the judge accepts the one
    against the other as an answer line); None when either is missing."""
    return _same(answer, other)


def _same(answer: str | None, other: str | None) -> bool | None:
    if not answer or not other:
        return None
    if answer.strip().casefold() == other.strip().casefold():
        return True
    return judge(answer, other).directive is Directive.ACCEPT


def part_choices(events: Sequence[Event], config: MatchConfig | None = None) -> list[PartChoice]:
    """The choices in force in one match's record (module docstring), in the order ruled."""
    if config is None:
        first = next((e for e in events if isinstance(e, MatchCreated)), None)
        if first is None:
            return []
        config = first.config
    if not rule_set(config.rules).bonuses.consults:
        return []
    model = config.consult.model if config.consult is not None else None

    def abstained_right(bonus_id: str, part: int) -> bool:
        # as the engine scores it (ConsultBonuses.abstain_points)
        seen = config.consult.answer(bonus_id, part) if config.consult is not None else None
        return ConsultBonuses.abstention_right(seen)

    humans = {t.id for t in config.teams if t.kind is TeamKind.HUMAN}
    ruled: dict[int, PartChoice] = {}  # seq of the ruling -> its choice
    before: dict[int, tuple[BonusPartConsulted | None, BonusAnswerGiven | None,
                            tuple[PreAnswer, ...]]] = {}  # fmt: skip
    consulted: BonusPartConsulted | None = None
    answer: BonusAnswerGiven | None = None
    pre: tuple[PreAnswer, ...] = ()
    for ev in events:
        match ev:
            case BonusStarted():
                consulted, answer, pre = None, None, ()
            case BonusPartConsulted():
                consulted = ev
            case BonusPreAnswerOpened():
                pre = ()
            case BonusPreAnswerGiven():
                accepted = ev.suggestion == Directive.ACCEPT.value
                pre = (*pre, PreAnswer(player=ev.player, text=ev.text, correct=accepted))
            case BonusAnswerGiven():
                answer = ev
            case BonusPartRuled() if ev.resume == "prompt":
                before[ev.seq] = (consulted, answer, pre)  # an undo of the prompt restores all
                answer = None  # the team answers again (its consult stands)
            case BonusPartRuled():
                before[ev.seq] = (consulted, answer, pre)
                if ev.choice is not None and not ev.bounceback and ev.team in humans:
                    seen = (
                        consulted if consulted is not None and consulted.part == ev.part else None
                    )
                    given = ev.answer if ev.choice != "abstain" else None
                    ruled[ev.seq] = PartChoice(
                        tossup_id=ev.tossup_id, bonus_id=ev.bonus_id, part=ev.part,
                        team=ev.team, choice=ev.choice, consulted=seen is not None, model=model,
                        model_guess=seen.guess if seen else None,
                        model_confidence=seen.confidence if seen else None,
                        model_correct=seen.model_correct if seen else None,
                        draft=seen.draft if seen else None,
                        draft_correct=None if seen is None or seen.draft is None
                        else seen.draft_suggestion == Directive.ACCEPT.value,
                        answer=given, correct=ev.ruling is Ruling.CORRECT, points=ev.points,
                        agreed=_same(given, seen.guess) if seen and given else None,
                        abstained_right=abstained_right(ev.bonus_id, ev.part)
                        if ev.choice == "abstain" else None,
                        pre_answers=pre if seen is not None else (),
                    )  # fmt: skip
                consulted, answer, pre = None, None, ()
            case BonusPartUndone():
                ruled.pop(ev.ruled_seq, None)
                consulted, answer, pre = before.get(ev.ruled_seq, (None, None, ()))
            case BonusEnded() if ev.outcome == "thrown_out":
                ruled = {s: c for s, c in ruled.items() if c.bonus_id != ev.bonus_id}
            case TossupEnded() if ev.outcome is TossupOutcome.THROWN_OUT:
                ruled = {s: c for s, c in ruled.items() if c.tossup_id != ev.tossup_id}
            case _:
                pass
    return [c for _, c in sorted(ruled.items())]
