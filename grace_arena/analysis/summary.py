"""The whole analysis of a set of steps and buzzes, as one JSON-ready dict.

:func:`analyze` is what ``grace-arena analyze`` computes, whatever the source (the record or
plain files):

* ``models``: ``{model: {"logit": METRICS, "verbal": METRICS}}`` where METRICS holds every
  metric of :func:`~grace_arena.analysis.metrics.summarize_steps` (over all steps, ``final``
  steps and ``by_category``), bootstrap intervals ``ci`` of the headline metrics (CalScore,
  ECE, Brier; resampling questions), the reliability table, accuracy and SH (appendix H);
* ``leaderboard``: models ranked by CalScore, ECE and Brier for each confidence kind;
* ``teams`` and ``curves``: per-team buzz counts, cumulative buzz rates against fraction
  revealed (figure 4), model accuracy against fraction revealed (figure 5), P(buzz |
  correct) and P(buzz | incorrect) where the steps carry the buzz policy (figure 6);
* ``expected_wins``: the human curve fitted from the human buzzes, expected wins of every
  model team (from its buzzes) and of every model's policy (from its steps);
* ``players``: players ranked by GRACE's 20 − 20c score (appendix F.3), with quartiles.

Undefined values are ``None``.
"""

from __future__ import annotations

import math
from collections import Counter
from datetime import UTC, datetime
from typing import Any

import numpy as np

from grace_arena.analysis.columnar import (
    accuracy_curves,
    bootstrap_model,
    buzz_given_correct_table,
    buzz_rate_curves,
    factorize,
    first_buzzes,
    first_policy_buzz,
    human_fraction_column,
    model_rows,
    player_scores,
    sh_by_model,
    summarize_table,
)
from grace_arena.analysis.curves import expected_wins, fit_human_curve, quartiles
from grace_arena.analysis.metrics import CONFIDENCE_KINDS, HEADLINE_METRICS, reliability_table
from grace_arena.analysis.tables import BuzzTable, StepTable

__all__ = ["LEADERBOARD_METRICS", "analyze"]

#: Leaderboard columns: metric key -> True when lower is better.
LEADERBOARD_METRICS: dict[str, bool] = {"calscore": True, "ece": True, "brier": True}
#: Points of the buzz-rate curves (figure 4).
GRID = np.linspace(0.0, 1.0, 101)


def _none(value: float | None) -> float | None:
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value


def _reliability(conf: np.ndarray, correct: np.ndarray) -> list[dict[str, Any]]:
    keep = ~np.isnan(conf)
    if not keep.any():
        return []
    return [b.as_dict() for b in reliability_table(conf[keep], correct[keep])]


def _model_section(
    steps: StepTable, buzzes: BuzzTable, n_resamples: int, seed: int, level: float
) -> tuple[dict[str, Any], list[Any]]:
    h = human_fraction_column(steps, buzzes)
    models = model_rows(steps, h)
    summary = summarize_table(steps, models=models)
    combos = [(kind, final) for kind in CONFIDENCE_KINDS for final in (False, True)]
    for m in models:
        cis = (
            bootstrap_model(m, combos, n_resamples=n_resamples, seed=seed, level=level)
            if n_resamples > 0 and m.n_questions
            else {}
        )
        for kind in CONFIDENCE_KINDS:
            metrics = summary[m.model][kind]
            for final in (False, True):
                target = metrics["final"] if final else metrics
                ci = cis.get((kind, final), {})
                target["ci"] = {
                    name: [_none(ci[name][0]), _none(ci[name][1])] if name in ci else [None, None]
                    for name in HEADLINE_METRICS
                }
            rows = m.final
            metrics["accuracy"] = _none(float(m.correct.mean())) if m.q.size else None
            metrics["final"]["accuracy"] = (
                _none(float(m.correct[rows].mean())) if rows.size else None
            )
            metrics["reliability"] = _reliability(m.conf[kind], m.correct)
            metrics["final"]["reliability"] = _reliability(m.conf[kind][rows], m.correct[rows])
            sh, n_sh = sh_by_model(m, kind)
            metrics["sh"] = _none(sh)
            metrics["n_questions_sh"] = n_sh
    return summary, models


def _leaderboard(models: dict[str, Any]) -> dict[str, dict[str, list[dict[str, Any]]]]:
    board: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for kind in CONFIDENCE_KINDS:
        board[kind] = {}
        for metric, lower_better in LEADERBOARD_METRICS.items():
            entries = [
                {"model": name, "value": kinds[kind][metric]}
                for name, kinds in models.items()
                if kinds[kind].get(metric) is not None
            ]
            entries.sort(key=lambda e: (e["value"] if lower_better else -e["value"], e["model"]))
            for rank, entry in enumerate(entries, start=1):
                entry["rank"] = rank
            board[kind][f"by_{metric}"] = entries
    return board


def _team_section(buzzes: BuzzTable) -> tuple[dict[str, Any], dict[str, Any]]:
    """Per-team counts and the figure-4 curves."""
    kinds = buzzes.team_kinds()
    curves = buzz_rate_curves(buzzes, GRID)
    heard = Counter(buzzes.heard_columns[1].tolist())
    fractions = np.where(
        buzzes.n_words > 0,
        np.minimum((buzzes.word_index + 1) / np.maximum(buzzes.n_words, 1), 1.0),
        np.nan,
    )
    teams: dict[str, Any] = {}
    for team, curve in curves.items():
        rows = buzzes.team == team
        correct = buzzes.correct[rows]
        fr = fractions[rows][(correct == 1) & ~np.isnan(fractions[rows])]
        teams[team] = {
            "kind": kinds.get(team, curve["kind"]),
            "questions_heard": heard.get(team, 0),
            "buzzes": int(rows.sum()),
            "correct": int((correct == 1).sum()),
            "incorrect": int((correct == 0).sum()),
            "mean_fraction_correct": _none(float(fr.mean())) if fr.size else None,
        }
    return teams, curves


def _expected_wins(buzzes: BuzzTable, models: list[Any]) -> dict[str, Any]:
    kinds = buzzes.team_kinds()
    first = first_buzzes(buzzes)
    (team_codes,), teams_seen = factorize(first.team)
    model_team = np.array([kinds.get(t) == "model" for t in teams_seen], dtype=bool)
    is_model = model_team[team_codes] if team_codes.size else np.zeros(0, dtype=bool)
    # a buzz whose position is unknown (no question length) cannot be placed on the curve
    usable = ~(first.correct & np.isnan(first.fraction))
    human = ~is_model & usable
    n_human = int(human.sum())
    out: dict[str, Any] = {"human_curve": None, "n_human_records": n_human}
    if not n_human or np.isnan(first.fraction).all():
        out["teams"], out["models"] = {}, {}
        return out
    hit = human & first.correct & ~np.isnan(first.fraction)
    w = fit_human_curve(first.fraction[hit], n_human)
    out["human_curve"] = [float(c) for c in w.coefficients]
    teams: dict[str, Any] = {}
    for team in sorted({t for t, k in kinds.items() if k == "model"}):
        rows = is_model & usable & (first.team == team)
        if rows.any():
            value = expected_wins(first.fraction[rows], first.correct[rows], w)
            teams[team] = {"expected_wins": value, "n_questions": int(rows.sum())}
    out["teams"] = teams
    policy: dict[str, Any] = {}
    for m in models:
        if np.isnan(m.would_buzz).all():
            continue
        x, ok = first_policy_buzz(m)
        if x.size:
            policy[m.model] = {"expected_wins": expected_wins(x, ok, w), "n_questions": int(x.size)}
    out["models"] = policy
    return out


def _players(buzzes: BuzzTable) -> list[dict[str, Any]]:
    """GRACE appendix F.3: players ranked by mean 20 − 20c score, with quartiles."""
    kinds = buzzes.team_kinds()
    ranked = player_scores(buzzes)
    groups = quartiles({p: score for p, _, score, _ in ranked}) if ranked else {}
    return [
        {
            "rank": i,
            "player": player,
            "team": team,
            "kind": kinds.get(team, "human"),
            "mean_score": score,
            "n_questions": n,
            "quartile": groups.get(player),
        }
        for i, (player, team, score, n) in enumerate(ranked, start=1)
    ]


def analyze(
    steps: StepTable,
    buzzes: BuzzTable,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    source: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Every metric, curve and ranking of GRACE Arena's analysis (see the module docstring)."""
    models, rows = _model_section(steps, buzzes, n_resamples, seed, level)
    teams, rate_curves = _team_section(buzzes)
    policy = buzz_given_correct_table(rows)
    return {
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "source": source or {},
        "settings": {
            "n_bins": 10,
            "bootstrap": {"n_resamples": n_resamples, "seed": seed, "level": level},
            "confidence_kinds": list(CONFIDENCE_KINDS),
        },
        "counts": {
            "steps": len(steps),
            "models": len(models),
            "questions": len(set(steps.question_id.tolist()) | set(buzzes.question_id.tolist())),
            "buzzes": len(buzzes),
            "teams": len(teams),
        },
        "models": models,
        "leaderboard": _leaderboard(models),
        "teams": teams,
        "curves": {
            "buzz_rates": rate_curves,
            "accuracy": accuracy_curves(rows),
            "buzz_given_correct": {
                model: {
                    "p_buzz_given_correct": _none(r.p_buzz_given_correct),
                    "p_buzz_given_incorrect": _none(r.p_buzz_given_incorrect),
                    "n_correct": r.n_correct,
                    "n_incorrect": r.n_incorrect,
                }
                for model, r in policy.items()
            },
        },
        "expected_wins": _expected_wins(buzzes, rows),
        "players": _players(buzzes),
    }


def comparable(result: dict[str, Any]) -> dict[str, Any]:
    """``result`` without what differs between two runs on the same data (time, source)."""
    return {k: v for k, v in result.items() if k not in ("generated_at", "source")}
