"""Rule sets as objects: what a match's stored :class:`~grace_arena.core.config.ScoringRules`
mean, asked rather than read flag by flag.

A :class:`RuleSet` is a match's :class:`~grace_arena.core.rules.tossups.TossupRules` (powers,
negs, lockout, clocks), its :class:`~grace_arena.core.rules.bonuses.BonusRules` (none, plain,
bouncebacks, consult) and its regulation (overtime past it). Each says what it scores, whose
turn comes next, what it writes to QBJ and SQBS, and how it describes itself. The stored
``ScoringRules`` stay what a match is created with and replayed from: ``rule_set(rules)`` reads
them (the same rules, the same object).

The formats that name rule sets (GRACE, ACF, PACE, NAQT) are in
:mod:`grace_arena.core.formats`, one file each.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from grace_arena.core.config import BonusSpec, ScoringRules
from grace_arena.core.rules.bonuses import (
    BonusRules,
    Bouncebacks,
    ConsultBonuses,
    NoBonuses,
    PlainBonuses,
    QantaBonuses,
    bonus_rules,
)
from grace_arena.core.rules.tossups import BuzzScore, TossupRules

__all__ = [
    "BonusRules",
    "Bouncebacks",
    "BuzzScore",
    "ConsultBonuses",
    "NoBonuses",
    "PlainBonuses",
    "QantaBonuses",
    "RuleSet",
    "TossupRules",
    "rule_set",
]


@dataclass(frozen=True)
class RuleSet:
    """A match's rules: ``tossups``, ``bonuses``, ``regulation`` (tossups in regulation; None:
    the packet's, no overtime) and the ``format`` they came from (None: GRACE's game, as a
    match made before formats were named; "custom": a format changed)."""

    tossups: TossupRules
    bonuses: BonusRules
    regulation: int | None = None
    format: str | None = None

    @classmethod
    def of(cls, rules: ScoringRules) -> RuleSet:
        return cls(
            tossups=TossupRules.of(rules),
            bonuses=bonus_rules(rules),
            regulation=rules.regulation_tossups,
            format=rules.format,
        )

    # -- overtime ------------------------------------------------------------------------------

    def in_overtime(self, heard: int) -> bool:
        """Past regulation, ``heard`` tossups having been heard."""
        return self.regulation is not None and heard > self.regulation

    def overtime_tossups(self, heard: int) -> int:
        """How many of ``heard`` tossups were past regulation."""
        return max(0, heard - self.regulation) if self.regulation else 0

    def unrated(self, heard: Sequence[str]) -> list[str]:
        """The tossups (``heard``, in order) that PPG and P/20TUH leave out: those of an
        overtime played without bonuses, in rules that play bonuses (YellowFruit's rule)."""
        if not self.bonuses.none_in_overtime or self.regulation is None:
            return []
        return list(heard[self.regulation :])

    # -- what they write -------------------------------------------------------------------------

    @property
    def name(self) -> str:
        """The name screens give them: "GRACE", "ACF", "QANTA 2026", "Custom"."""
        if self.format == "qanta26":
            return "QANTA 2026"
        return "Custom" if self.format == "custom" else (self.format or "grace").upper()

    def describe(self, *, bouncebacks: bool | None = None) -> str:
        """One line for screens: "ACF: 10 a tossup, no powers, negs -5 (first team only),
        bonuses, 20 tossups". ``bouncebacks``: whether the match plays them (two teams), if
        not the rules'."""
        bits = [*self.tossups.describe(), self.bonuses.describe(bouncebacks)]
        if self.regulation:
            bits.append(f"{self.regulation} tossups")
        return f"{self.name}: " + ", ".join(bits)

    @property
    def qbj_name(self) -> str:
        """QBJ ``ScoringRules.name``."""
        if self.format in (None, "grace"):
            return "GRACE Arena tossups"
        if self.format == "qanta26":
            return "GRACE Arena QANTA 2026"
        return f"GRACE Arena {self.format.upper() if self.format != 'custom' else 'custom'}"

    def qbj_bonuses(self, bonuses: Sequence[BonusSpec]) -> dict[str, Any]:
        """QBJ ``ScoringRules``' bonus fields, for the ``bonuses`` of the packets played."""
        return self.bonuses.qbj(bonuses)


@lru_cache(maxsize=512)
def rule_set(rules: ScoringRules) -> RuleSet:
    """The rule set stored ``rules`` mean."""
    return RuleSet.of(rules)
