"""QANTA 2026's scoring for hybrid teams, as the organisers' tournament runner computes it.

The runner (``qanta-org/qb-tournament-runner``) scores in ``shared/scoring.ts`` and
``server/game/engine.ts``; this module follows its formulas (not its code), with the settings
of :class:`~grace_arena.core.config.QantaRules` (its ``GameConfig`` fields, ``shared/types.ts``
lines 83-114; the preset ``config/rule-presets/qanta26.json``):

- **An AI's correct tossup buzz** (``aiTossupPoints``, ``shared/scoring.ts`` lines 58-74,
  applied in ``handleAnswerRuling``, ``engine.ts`` lines 651-656): with tossup deflation
  ``weighted`` (or none set) the tossup's points times ``ai_tossup_score_factors`` of the AI's
  weight class, rounded as JavaScript's ``Math.round`` (half up); ``none``: the points;
  ``static``: ``max(0, points - tossup_static_deflation)``. A wrong answer by an AI costs what
  a human's does (``engine.ts`` lines 657-662: no factor).
- **A bonus part** (``handleBonusPartResult``, ``engine.ts`` lines 880-895): answered alone
  (``own``), the part's points when right; after consulting the team's AIs (``consult_ai``),
  ``bonusConsultPoints`` (``shared/scoring.ts`` lines 21-45) when right: ``weighted``, the
  part's points minus the sum of ``bonus_weight_deflation`` over every AI player of the team
  (floored at 0); ``static``, minus ``bonus_static_deflation``; ``none``, in full; no mode,
  ``Math.round(points * bonus_ai_consult_factor)``; an abstention, ``bonus_abstain_points``
  when right (nobody, human or AI, had the answer), else 0. Nothing on a bonus is negative.
- **The autonomous gate** (``checkForAIBuzzes``, ``engine.ts`` lines 476-503): an autonomous
  AI buzzes on its first decision to buzz made at token ``K`` or later (``K`` its own or
  ``autonomous_default_k``; at least 1); semi AIs buzz only when a human presses their key,
  muted AIs never.

Weight classes come from a model's active parameters (the runner's
``scripts/create_ai_roster.py`` lines 66-72): under 10 billion lightweight, under 50 billion
midweight, else heavyweight (:func:`weight_class_for`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from grace_arena.core.config import AiStep, QantaRules

__all__ = [
    "ai_tossup_points",
    "autonomous_step",
    "bonus_consult_points",
    "describe",
    "js_round",
    "latest_step",
    "settings",
    "weight_class_for",
]


def js_round(x: float) -> int:
    """JavaScript's ``Math.round``: the nearest integer, halves up (``js_round(-2.5) == -2``;
    Python's ``round`` takes halves to the even one)."""
    return math.floor(x + 0.5)


def weight_class_for(active_params_billion: float) -> str:
    """The weight class of a model with this many active parameters (billions)."""
    if active_params_billion < 10:
        return "lightweight"
    if active_params_billion < 50:
        return "midweight"
    return "heavyweight"


def ai_tossup_points(q: QantaRules, base: int, weight_class: str | None) -> int:
    """What an AI's correct buzz on a tossup worth ``base`` scores."""
    mode = q.tossup_deflation_mode
    if mode is None or mode == "weighted":
        factors = q.ai_tossup_score_factors
        factor = factors.of(weight_class) if weight_class else factors.lightweight
        return js_round(base * factor)
    if mode == "none":
        return base
    return max(0, base - q.tossup_static_deflation)


def bonus_consult_points(q: QantaRules, full: int, team_weight_classes: Iterable[str]) -> int:
    """What a bonus part worth ``full`` scores answered right after consulting the team's AIs
    (``team_weight_classes``: one per AI player of the team, muted ones too)."""
    mode = q.bonus_deflation_mode
    if mode is None:
        return js_round(full * q.bonus_ai_consult_factor)
    if mode == "none":
        return full
    if mode == "static":
        return max(0, full - q.bonus_static_deflation)
    deflation = sum(q.bonus_weight_deflation.of(w) for w in team_weight_classes)
    return max(0, js_round(full - deflation))


def autonomous_step(steps: Sequence[AiStep], k: int) -> AiStep | None:
    """Where an autonomous AI with gate ``k`` buzzes: its first decision to buzz made at
    token ``k`` or later (None: it never does)."""
    gate = max(1, k)
    return next((s for s in sorted(steps, key=lambda s: s.token) if s.buzz and s.token >= gate),
                None)  # fmt: skip


def latest_step(steps: Sequence[AiStep], word_index: int) -> AiStep | None:
    """An AI's latest guess once word ``word_index`` has been read (what a semi AI answers)."""
    heard = [s for s in steps if s.word_index <= word_index]
    return max(heard, key=lambda s: s.token) if heard else None


def settings(q: QantaRules) -> dict[str, object]:
    """Every setting, by the runner's names (the rules printout, QBJ and the stats)."""
    return q.model_dump(mode="json")


def describe(q: QantaRules) -> str:
    """Every setting in one line for screens and printouts."""
    f, d = q.ai_tossup_score_factors, q.bonus_weight_deflation
    return (
        f"AI tossups ×{f.lightweight:g}/{f.midweight:g}/{f.heavyweight:g} (light/mid/heavy, "
        f"{q.tossup_deflation_mode}; static −{q.tossup_static_deflation}), autonomous after "
        f"K={q.autonomous_default_k}, consult −{d.lightweight:g}/{d.midweight:g}/"
        f"{d.heavyweight:g} per AI ({q.bonus_deflation_mode or 'factor'}; static "
        f"−{q.bonus_static_deflation}, factor {q.bonus_ai_consult_factor:g}), right "
        f"abstention {q.bonus_abstain_points}"
    )
