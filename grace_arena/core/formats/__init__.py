"""Game formats: the scoring rules of the formats clubs and tournaments play, by name.

One file a format in this package (``grace.py``, ``acf.py``, ``pace.py``, ``naqt.py``), each
with a :class:`Format` named ``FORMAT``: a new format is a new file. They mirror MODAQ's format
presets and the Quizbowl Schema's ``ScoringRules``:

========  =====  =====  =========  =======  ===========  ==========  ===========================
format    tossup power  neg        bonuses  bouncebacks  regulation  overtime
========  =====  =====  =========  =======  ===========  ==========  ===========================
grace     10     15     -5         no       no           the packet  none (tossups only)
acf       10     none   -5 first   3×10     no           20          tossups only, no bonuses
pace      10     20     0          3×10     no           20          tossups only, no bonuses
naqt      10     15     -5 first   3×10     optional     20          tossups only, no bonuses
========  =====  =====  =========  =======  ===========  ==========  ===========================

"-5 first": only the first team to answer a tossup incorrectly before the end is negged
(NAQT: "a 5-point penalty if the first team to attempt answering a tossup gives an incorrect
answer"; ACF alike); another team's wrong interrupt after it scores 0. GRACE's game, where
several teams may play one tossup, negs every wrong interrupt (PRODUCT.md's rule).

"custom" is any of them with fields changed (``rules_for("acf", neg_points=0)``). A bonus's
parts are worth what the packet says (usually 10 each); the format decides whether bonuses are
played at all, and whether a part the controlling team missed bounces back to the other team.
What the rules mean (scoring, turns, exports, descriptions) is :mod:`grace_arena.core.rules`.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from grace_arena.core.config import ScoringRules
from grace_arena.core.rules import rule_set

__all__ = [
    "CLOCKS",
    "FORMATS",
    "OFFICIATING",
    "Format",
    "describe",
    "format_named",
    "registry",
    "rules_for",
]

#: What every format leaves to the room: its clocks (choosing them keeps the format's name).
CLOCKS = frozenset(
    {"answer_time", "bonus_answer_time", "buzz_window", "conferral_time", "timeout_seconds"}
)

#: What ACF, PACE and NAQT share for officiating a match: one 30-second timeout per team,
#: halftime after tossup 10 of 20, 5 seconds to confer on a bonus part once it is read,
#: overtime in sudden death (NAQT: three tossups first), and four players of a team at a
#: time (QBWiki: "Each team may have up to four players playing at any time"; MODAQ marks the
#: first four players of a registration as starters; substitutions at halftime, before
#: overtime or in a timeout, ``grace_arena.core.lineups``). Sources: QBWiki's summaries of the
#: ACF and NAQT rules ("Each team is allocated one 30-second timeout"; ACF: "a very brief
#: halftime break after 10 cycles", "overtime consists solely of sudden death"; NAQT:
#: "overtime consists of three tossups that do not lead to bonuses. If the game is still tied
#: after that, it goes into sudden death"; both: "Teams have 5 seconds to answer each bonus
#: part; the moderator prompts after 4 seconds"), QBWiki's "Overtime" (PACE: sudden death),
#: and MODAQ's presets (``src/state/GameFormats.ts``: ACF and PACE ``timeoutsAllowed: 1``,
#: ``minimumOvertimeQuestionCount: 1``, ``overtimeIncludesBonuses: false``).
OFFICIATING: Mapping[str, Any] = {
    "timeouts": 1, "timeout_seconds": 30.0, "halftime_after": 10, "conferral_time": 5.0,
    "overtime_tossups": 1, "lineup_size": 4,
}  # fmt: skip


@dataclass(frozen=True)
class Format:
    """A named rule set: the fields of :class:`ScoringRules` it sets (the others keep their
    defaults), what a tournament may change and still play it (``options``), its place in
    lists (``order``) and how the moderator's set-up lists it (``label``)."""

    name: str
    label: str
    rules: Mapping[str, Any]
    order: int
    options: frozenset[str] = field(default=CLOCKS)

    def __post_init__(self) -> None:
        unknown = set(self.rules) - set(ScoringRules.model_fields)
        if unknown:
            raise ValueError(f"format {self.name!r} sets unknown rules: {sorted(unknown)}")

    def keeps(self, key: str, value: Any) -> bool:
        """Changing rule ``key`` to ``value`` still plays this format."""
        if key in self.options:
            return True
        # consult rules go with any format that plays bonuses (QANTA 2026's follow ACF's)
        if key == "consult" and self.rules.get("bonuses"):
            return True
        return self.rules.get(key, ScoringRules.model_fields[key].default) == value


def registry() -> dict[str, Format]:
    """Every format of this package (each module's ``FORMAT``), in their order."""
    found = []
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        fmt = getattr(module, "FORMAT", None)
        if isinstance(fmt, Format):
            found.append(fmt)
    names = [f.name for f in found]
    if len(set(names)) != len(names) or "custom" in names:
        raise ValueError(f"format names must be unique and not 'custom': {names}")
    return {f.name: f for f in sorted(found, key=lambda f: (f.order, f.name))}


#: Format name -> the fields of :class:`ScoringRules` it sets (the others keep their defaults).
FORMATS: dict[str, dict[str, Any]] = {name: dict(f.rules) for name, f in registry().items()}


def format_named(name: str) -> Format:
    """The format ``name`` (any case); ``ValueError`` naming the formats for an unknown one."""
    formats, key = registry(), name.strip().lower()
    if key not in formats:
        raise ValueError(f"unknown format {name!r} (formats: {', '.join([*formats, 'custom'])})")
    return formats[key]


def rules_for(name: str = "grace", **changes: Any) -> ScoringRules:
    """The rules of format ``name`` with ``changes`` on top (then its ``format`` is
    ``"custom"`` unless the changes are what the format says already). ``ValueError`` for an
    unknown format."""
    if name.strip().lower() == "custom":
        return ScoringRules(format="custom", **changes)
    fmt = format_named(name)
    fields = {**fmt.rules, **changes}
    same = all(fmt.keeps(k, v) for k, v in changes.items())
    return ScoringRules(format=fmt.name if same else "custom", **fields)


def describe(rules: ScoringRules, *, bouncebacks: bool | None = None) -> str:
    """One line for screens: "ACF: 10 a tossup, no powers, negs -5 (first team only),
    bonuses, 20 tossups" (:meth:`grace_arena.core.rules.RuleSet.describe`).
    ``bouncebacks``: whether the match plays them (two teams), if not the rules'."""
    return rule_set(rules).describe(bouncebacks=bouncebacks)
