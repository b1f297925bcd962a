"""Game formats: the scoring rules of the formats clubs and tournaments play, by name.

They mirror MODAQ's format presets and the Quizbowl Schema's ``ScoringRules``:

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
"""

from __future__ import annotations

from typing import Any

from grace_arena.core.config import ScoringRules

__all__ = ["FORMATS", "describe", "rules_for"]

#: What ACF, PACE and NAQT share for officiating a match: one 30-second timeout per team,
#: halftime after tossup 10 of 20, 5 seconds to confer on a bonus part once it is read, and
#: overtime in sudden death (NAQT: three tossups first). Sources: QBWiki's summaries of the
#: ACF and NAQT rules ("Each team is allocated one 30-second timeout"; ACF: "a very brief
#: halftime break after 10 cycles", "overtime consists solely of sudden death"; NAQT:
#: "overtime consists of three tossups that do not lead to bonuses. If the game is still tied
#: after that, it goes into sudden death"; both: "Teams have 5 seconds to answer each bonus
#: part; the moderator prompts after 4 seconds"), QBWiki's "Overtime" (PACE: sudden death),
#: and MODAQ's presets (``src/state/GameFormats.ts``: ACF and PACE ``timeoutsAllowed: 1``,
#: ``minimumOvertimeQuestionCount: 1``, ``overtimeIncludesBonuses: false``).
_OFFICIATING: dict[str, Any] = {
    "timeouts": 1, "timeout_seconds": 30.0, "halftime_after": 10, "conferral_time": 5.0,
    "overtime_tossups": 1,
}  # fmt: skip

#: Format name -> the fields of :class:`ScoringRules` it sets (the others keep their defaults).
FORMATS: dict[str, dict[str, Any]] = {
    "grace": {"correct_points": 10, "power_points": 15, "neg_points": -5, "bonuses": False},
    "acf": {
        "correct_points": 10, "power_points": None, "neg_points": -5, "neg_first_team_only": True,
        "bonuses": True, "bouncebacks": False, "regulation_tossups": 20, "overtime_bonuses": False,
        **_OFFICIATING,
    },
    "pace": {
        "correct_points": 10, "power_points": 20, "neg_points": 0, "bonuses": True,
        "bouncebacks": False, "regulation_tossups": 20, "overtime_bonuses": False,
        **_OFFICIATING,
    },
    "naqt": {
        "correct_points": 10, "power_points": 15, "neg_points": -5, "neg_first_team_only": True,
        "bonuses": True, "bouncebacks": False, "regulation_tossups": 20, "overtime_bonuses": False,
        **_OFFICIATING, "overtime_tossups": 3,
    },
}  # fmt: skip


#: What a format leaves to the tournament (choosing it keeps the format's name).
_CLOCKS = frozenset(
    {"answer_time", "bonus_answer_time", "buzz_window", "conferral_time", "timeout_seconds"}
)  # the room's own
_OPTIONS: dict[str, frozenset[str]] = {
    **dict.fromkeys(FORMATS, _CLOCKS),
    "naqt": _CLOCKS | {"bouncebacks"},
}


def rules_for(name: str = "grace", **changes: Any) -> ScoringRules:
    """The rules of format ``name`` with ``changes`` on top (then its ``format`` is
    ``"custom"`` unless the changes are what the format says already). ``ValueError`` for an
    unknown format."""
    key = name.strip().lower()
    if key == "custom":
        return ScoringRules(format="custom", **changes)
    if key not in FORMATS:
        raise ValueError(f"unknown format {name!r} (formats: {', '.join([*FORMATS, 'custom'])})")
    fields = {**FORMATS[key], **changes}
    # consult rules go with any format that plays bonuses (QANTA 2026's follow ACF's)
    same = all(
        k in _OPTIONS.get(key, ())
        or (k == "consult" and fields.get("bonuses"))
        or FORMATS[key].get(k, ScoringRules.model_fields[k].default) == v
        for k, v in changes.items()
    )
    return ScoringRules(format=key if same else "custom", **fields)


def describe(rules: ScoringRules, *, bouncebacks: bool | None = None) -> str:
    """One line for screens: "ACF: 10 a tossup, no powers, negs -5 (first team only),
    bonuses, 20 tossups".
    ``bouncebacks``: whether the match plays them (two teams), if not the rules'."""
    bits = [f"{rules.correct_points} a tossup"]
    bits.append(f"powers {rules.power_points}" if rules.power_points is not None else "no powers")
    if not rules.neg_points:
        bits.append("no negs")
    elif rules.neg_first_team_only:
        bits.append(f"negs {rules.neg_points} (first team only)")
    else:
        bits.append(f"negs {rules.neg_points}")
    if rules.bonuses and rules.consult is not None:
        c = rules.consult
        bits.append(
            f"bonuses with a model to consult ({c.own_points} alone, {c.consult_points} "
            f"after consulting, {c.abstain_points} for a right abstention)"
        )
    elif rules.bonuses:
        played = rules.bouncebacks if bouncebacks is None else bouncebacks
        bits.append("bonuses with bouncebacks" if played else "bonuses")
    else:
        bits.append("tossups only")
    if rules.regulation_tossups:
        bits.append(f"{rules.regulation_tossups} tossups")
    # (no format: GRACE's game, as a match made before formats were named)
    name = "Custom" if rules.format == "custom" else (rules.format or "grace").upper()
    return f"{name}: " + ", ".join(bits)
