"""Tossup rules: what a buzz scores (powers, negs and the first-team-only neg rule), whether a
tossup goes on after a wrong answer (lockout and rebuzzes), the clocks of a tossup, and what
they write to QBJ and SQBS and say of themselves."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from grace_arena.core.config import ScoringRules
from grace_arena.core.events import Ruling

__all__ = ["BuzzScore", "TossupRules"]


@dataclass(frozen=True)
class BuzzScore:
    points: int
    power: bool = False


@dataclass(frozen=True)
class TossupRules:
    """A tossup is worth ``correct_points``, or ``power_points`` for an answer buzzed before
    the power mark. A wrong answer costs ``neg_points`` (a neg) when it interrupted the
    reading (or always, without ``negs_only_before_end``); under ``neg_first_team_only`` only
    the first team to answer wrongly is negged (NAQT's and ACF's rule). A team that answered
    wrongly is locked out; with ``rebuzz`` the others may still buzz, otherwise the tossup
    dies. ``answer_time`` is the clock of the player with the floor (None: none),
    ``buzz_window`` the time to buzz once the last word is read."""

    correct_points: int = 10
    power_points: int | None = 15
    neg_points: int = -5
    negs_only_before_end: bool = True
    neg_first_team_only: bool = False
    rebuzz: bool = True
    answer_time: float | None = 10.0
    buzz_window: float = 5.0

    @classmethod
    def of(cls, rules: ScoringRules) -> TossupRules:
        return cls(
            correct_points=rules.correct_points,
            power_points=rules.power_points,
            neg_points=rules.neg_points,
            negs_only_before_end=rules.negs_only_before_end,
            neg_first_team_only=rules.neg_first_team_only,
            rebuzz=rules.rebuzz,
            answer_time=rules.answer_time,
            buzz_window=rules.buzz_window,
        )

    # -- scoring -----------------------------------------------------------------------------

    def in_power(self, word_index: int, power_index: int | None) -> bool:
        """A buzz at ``word_index`` is in power: the rules have powers and the tossup a mark
        (words before ``power_index`` are in power)."""
        if self.power_points is None or power_index is None:
            return False
        return word_index < power_index

    def buzz_score(
        self,
        ruling: Ruling,
        *,
        word_index: int,
        power_index: int | None,
        interrupt: bool,
        before: Sequence[int] = (),
    ) -> BuzzScore:
        """What a buzz ruled ``ruling`` (correct or incorrect) scores: at ``word_index`` of a
        tossup with its power mark at ``power_index``; ``interrupt``: the buzz came before the
        end of the question; ``before``: the points of the rulings in force on the tossup
        before this one (a negative one is a neg already given)."""
        if ruling is Ruling.CORRECT:
            power = self.in_power(word_index, power_index)
            points = self.power_points if power else self.correct_points
            assert points is not None
            return BuzzScore(points, power)
        if ruling is not Ruling.INCORRECT:
            raise ValueError(f"a {ruling.value} ruling scores nothing yet")
        return BuzzScore(
            self.incorrect_points(interrupt=interrupt, negged=any(p < 0 for p in before))
        )

    def incorrect_points(self, *, interrupt: bool, negged: bool) -> int:
        """What an incorrect answer scores: ``neg_points`` (a neg) or 0. ``negged``: another
        team has a neg in force on this tossup already."""
        if self.negs_only_before_end and not interrupt:
            return 0
        if self.neg_first_team_only and negged:
            return 0
        return self.neg_points

    # -- whose turn ---------------------------------------------------------------------------

    def ends_after_incorrect(
        self, locked_out: Collection[str], teams: Collection[str]
    ) -> str | None:
        """Why a tossup ends after a wrong answer that locked out ``locked_out`` (the team that
        just answered included): every team of ``teams`` is locked out, or the rules play one
        buzz a tossup; None: the others may still buzz."""
        if all(t in locked_out for t in teams):
            return "all_locked_out"
        if not self.rebuzz:
            return "no_rebuzz"
        return None

    # -- what they write -----------------------------------------------------------------------

    def point_values(self) -> set[int]:
        """The values a tossup can score under these rules (0 included when a value is 0)."""
        values = {self.correct_points, self.neg_points}
        if self.power_points is not None:
            values.add(self.power_points)
        return values

    def qbj_answer_types(self) -> list[dict[str, Any]]:
        """QBJ ``ScoringRules.answer_types``: each non-zero value, highest first."""
        return [{"value": v} for v in sorted(self.point_values(), reverse=True) if v]

    @property
    def powers_or_negs(self) -> bool:
        """SQBS's power and neg statistics are worth keeping."""
        return self.power_points is not None or bool(self.neg_points)

    def describe(self) -> list[str]:
        """What they say of themselves: "10 a tossup", "powers 15", "negs -5 (first team
        only)"."""
        bits = [f"{self.correct_points} a tossup"]
        bits.append(f"powers {self.power_points}" if self.power_points is not None else "no powers")
        if not self.neg_points:
            bits.append("no negs")
        elif self.neg_first_team_only:
            bits.append(f"negs {self.neg_points} (first team only)")
        else:
            bits.append(f"negs {self.neg_points}")
        return bits
