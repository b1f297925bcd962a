"""Bonus rules: whether a tossup answered correctly earns a bonus (and in overtime), what a
part scores, whose turn the next part is (bouncebacks) or whether the team chooses to answer
alone, consult a model or abstain, and what they write to QBJ and SQBS and say of themselves.

One class a rule: :class:`NoBonuses` (tossups only), :class:`PlainBonuses`,
:class:`Bouncebacks`, :class:`ConsultBonuses` (GRACE Arena's consult rules, 15 / 10 / 5) and
:class:`QantaBonuses` (QANTA 2026's, for hybrid teams).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from grace_arena.core.config import (
    BonusSpec,
    ConsultScoring,
    ModelAnswer,
    QantaRules,
    ScoringRules,
)
from grace_arena.core.events import Ruling
from grace_arena.core.rules import qanta

__all__ = [
    "BonusRules",
    "Bouncebacks",
    "ConsultBonuses",
    "NoBonuses",
    "PlainBonuses",
    "QantaBonuses",
    "bonus_rules",
]


@dataclass(frozen=True)
class BonusRules:
    """Plain bonuses: the team that answered a tossup hears the next bonus, each part worth
    its value when right. ``answer_time``: the team's clock on a part (None: none);
    ``overtime``: tossups past regulation earn bonuses too."""

    answer_time: float | None = 10.0
    overtime: bool = False
    #: The stored rules asked for bouncebacks (SQBS's file keeps their columns for them).
    asked_bouncebacks: bool = False

    played: ClassVar[bool] = True
    consults: ClassVar[bool] = False

    # -- which tossups earn one ------------------------------------------------------------

    def earned(self, *, overtime: bool) -> bool:
        """A tossup answered correctly earns a bonus (``overtime``: it was past regulation)."""
        return self.played and (self.overtime or not overtime)

    @property
    def none_in_overtime(self) -> bool:
        """Bonuses are played, but not in overtime (PPG and P/20TUH leave overtime out)."""
        return self.played and not self.overtime

    # -- whose turn --------------------------------------------------------------------------

    def bounces_with(self, n_teams: int) -> bool:
        """A part the controlling team missed goes to the other team, among ``n_teams``."""
        return False

    def turn(self, controlling: str, teams: Sequence[str], *, bounceback: bool) -> str:
        """The team whose turn it is on a part: the controlling team, or on a bounceback the
        other one."""
        if not bounceback:
            return controlling
        return next(t for t in teams if t != controlling)

    def after_part(
        self, ruling: Ruling, *, bounceback: bool, n_teams: int, more_parts: bool
    ) -> str | None:
        """What follows a part ruled ``ruling`` (not a prompt): "bounceback", the next
        "part", or None (the bonus is over)."""
        if ruling is Ruling.INCORRECT and not bounceback and self.bounces_with(n_teams):
            return "bounceback"
        return "part" if more_parts else None

    # -- scoring -----------------------------------------------------------------------------

    def choice(self, *, bounceback: bool, consulted: bool, model: bool) -> str | None:
        """The team's choice on its part ("own" or "consult"), where the rules score one;
        None for a plain part."""
        return None

    def part_points(self, ruling: Ruling, value: int, choice: str | None) -> int:
        """What a part worth ``value`` scores when ruled ``ruling``, given the team's
        ``choice`` (:meth:`choice`)."""
        return value if ruling is Ruling.CORRECT else 0

    # -- what they write -----------------------------------------------------------------------

    @property
    def consult_points(self) -> tuple[int, int, int] | None:
        """Points alone, after consulting, for a right abstention (consult rules)."""
        return None

    def qbj(self, bonuses: Sequence[BonusSpec]) -> dict[str, Any]:
        """QBJ ``ScoringRules``' bonus fields for the ``bonuses`` of the packets played (none
        when no bonus is played: YellowFruit plays bonuses when ``maximum_bonus_score`` is
        there, and refuses a 0)."""
        values = {p.value for b in bonuses for p in b.parts} or {10}
        return {
            "maximum_bonus_score": max(
                (sum(p.value for p in b.parts) for b in bonuses), default=30
            ),
            **({"points_per_bonus_part": next(iter(values))} if len(values) == 1 else {}),
            **self._qbj_shape(bonuses),
        }

    def _qbj_shape(self, bonuses: Sequence[BonusSpec]) -> dict[str, Any]:
        parts = [len(b.parts) for b in bonuses] or [3]
        return {
            "minimum_parts_per_bonus": min(parts),
            "maximum_parts_per_bonus": max(parts),
            "bonuses_bounce_back": self.bounces_with(2),
            "overtime_includes_bonuses": self.overtime,
        }

    @property
    def sqbs_bouncebacks(self) -> bool:
        """SQBS's file keeps bounceback columns for these rules."""
        return self.played and self.asked_bouncebacks

    def describe(self, bouncebacks: bool | None = None) -> str:
        """What they say of themselves: "bonuses", "bonuses with bouncebacks".
        ``bouncebacks``: whether the match plays them, if not what the rules say."""
        played = self.bounces_with(2) if bouncebacks is None else bouncebacks
        return "bonuses with bouncebacks" if played else "bonuses"


@dataclass(frozen=True)
class NoBonuses(BonusRules):
    """Tossups only (GRACE's game)."""

    played: ClassVar[bool] = False

    def qbj(self, bonuses: Sequence[BonusSpec]) -> dict[str, Any]:
        return {}

    def describe(self, bouncebacks: bool | None = None) -> str:
        return "tossups only"


@dataclass(frozen=True)
class PlainBonuses(BonusRules):
    """Bonuses without bouncebacks (ACF, PACE, NAQT's default)."""


@dataclass(frozen=True)
class Bouncebacks(BonusRules):
    """A part the controlling team missed goes to the other team, in a two-team match (with
    more teams, whose turn it would be is no format's rule)."""

    def bounces_with(self, n_teams: int) -> bool:
        return n_teams == 2


@dataclass(frozen=True)
class ConsultBonuses(BonusRules):
    """GRACE Arena's consult rules (not QANTA 2026's, which are :class:`QantaBonuses`): on
    its own part a human team answers alone, consults a model
    first, or abstains, and scores ``scoring``'s points instead of the part's value (a wrong
    answer, or an abstention when the model was right, scores 0). A bounceback, or a model
    team's answer, is scored by the part's value; no part bounces back (QANTA's bonuses follow
    ACF's, which has none)."""

    scoring: ConsultScoring = field(default_factory=ConsultScoring)

    consults: ClassVar[bool] = True

    def choice(self, *, bounceback: bool, consulted: bool, model: bool) -> str | None:
        if bounceback or model:
            return None
        return "consult" if consulted else "own"

    def part_points(self, ruling: Ruling, value: int, choice: str | None) -> int:
        if choice is None:
            return super().part_points(ruling, value, choice)
        if ruling is not Ruling.CORRECT:
            return 0
        return self.scoring.consult_points if choice == "consult" else self.scoring.own_points

    @staticmethod
    def abstention_right(seen: ModelAnswer | None) -> bool:
        """An abstention is right when no one had the answer: the model's (as judged) was not
        correct."""
        return seen is None or not seen.guess or seen.correct is not True

    def abstain_points(self, seen: ModelAnswer | None) -> int:
        """What an abstention scores, given the model's answer to the part."""
        return self.scoring.abstain_points if self.abstention_right(seen) else 0

    @property
    def consult_points(self) -> tuple[int, int, int]:
        c = self.scoring
        return c.own_points, c.consult_points, c.abstain_points

    def qbj(self, bonuses: Sequence[BonusSpec]) -> dict[str, Any]:
        # a part is scored by the team's choice, not its value: the most a bonus scores is
        # every part answered alone, and bonus totals are sums of these points (5 apart, by
        # default: not of the usual 10)
        c = self.scoring
        parts = [len(b.parts) for b in bonuses] or [3]
        return {
            "maximum_bonus_score": c.own_points * max(parts),
            "bonus_divisor": math.gcd(c.own_points, c.consult_points, c.abstain_points) or 1,
            **self._qbj_shape(bonuses),
        }

    def describe(self, bouncebacks: bool | None = None) -> str:
        c = self.scoring
        before = (
            f"; each player writes their own answer for {c.pre_answer_time:g} s before the "
            "model's is revealed"
            if c.pre_answer_time is not None
            else ""
        )
        return (
            f"bonuses with a model to consult ({c.own_points} alone, {c.consult_points} "
            f"after consulting, {c.abstain_points} for a right abstention{before})"
        )


@dataclass(frozen=True)
class QantaBonuses(BonusRules):
    """QANTA 2026's bonuses for hybrid teams (:mod:`grace_arena.core.rules.qanta`): on each
    part the team answers alone (the part's points when right), consults its AI players
    first (the part's points less the consult deflation of the team's AIs) or abstains
    (``bonus_abstain_points`` when nobody, human or AI, had it). No part bounces back (the
    runner has none)."""

    qanta: QantaRules = field(default_factory=QantaRules)

    consults: ClassVar[bool] = True

    def choice(self, *, bounceback: bool, consulted: bool, model: bool) -> str | None:
        if bounceback or model:
            return None
        return "consult" if consulted else "own"

    def consult_value(self, ruling: Ruling, value: int, weight_classes: Sequence[str]) -> int:
        """A part worth ``value`` ruled ``ruling`` after consulting a team whose AI players
        have these weight classes."""
        if ruling is not Ruling.CORRECT:
            return 0
        return qanta.bonus_consult_points(self.qanta, value, weight_classes)

    def abstain_value(self, right: bool) -> int:
        return self.qanta.bonus_abstain_points if right else 0

    def qbj(self, bonuses: Sequence[BonusSpec]) -> dict[str, Any]:
        # a consult or an abstention scores what no part's value says: any total may occur
        # (every QANTA 2026 setting by the runner's names, under an extension key as QBJ
        # allows: "_qanta2026")
        base = super().qbj(bonuses)
        base.pop("points_per_bonus_part", None)
        return {**base, "bonus_divisor": 1, "_qanta2026": qanta.settings(self.qanta)}

    def describe(self, bouncebacks: bool | None = None) -> str:
        return f"QANTA 2026 bonuses and AI players ({qanta.describe(self.qanta)})"


def bonus_rules(rules: ScoringRules) -> BonusRules:
    """The bonus rules of stored ``rules``."""
    fields = {
        "answer_time": rules.bonus_answer_time,
        "overtime": rules.overtime_bonuses,
        "asked_bouncebacks": rules.bouncebacks,
    }
    if not rules.bonuses:
        return NoBonuses(**fields)
    if rules.qanta is not None:
        return QantaBonuses(**fields, qanta=rules.qanta)
    if rules.consult is not None:
        return ConsultBonuses(**fields, scoring=rules.consult)
    if rules.bouncebacks:
        return Bouncebacks(**fields)
    return PlainBonuses(**fields)
