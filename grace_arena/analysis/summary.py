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
import re
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
from grace_arena.analysis.metrics import (
    CONFIDENCE_KINDS,
    HEADLINE_METRICS,
    check_h_definition,
    reliability_table,
)
from grace_arena.analysis.tables import BuzzTable, StepTable

__all__ = ["H_LABELS", "LEADERBOARD_METRICS", "analyze", "figure4", "natural_key"]

#: How each definition of h_t is named in reports.
H_LABELS = {
    "reference": "h_t as GRACE's reference code: human teams whose latest buzz up to t was "
    "correct, over all human buzzes on the question (every room)",
    "paper": "h_t as the GRACE paper's text: correct human buzzes up to t over all human "
    "buzzes up to t (every room)",
}

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
    steps: StepTable,
    buzzes: BuzzTable,
    n_resamples: int,
    seed: int,
    level: float,
    h_definition: str = "reference",
) -> tuple[dict[str, Any], list[Any]]:
    h = human_fraction_column(steps, buzzes, definition=h_definition)
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


def natural_key(text: str) -> tuple[Any, ...]:
    """Sort key that puts numbers in order: H2 before H10.

    >>> sorted(["H10", "H2", "M1", "H1"], key=natural_key)
    ['H1', 'H2', 'H10', 'M1']
    """
    return tuple(
        (0, int(part), "") if part.isdigit() else (1, 0, part.lower())
        for part in re.split(r"(\d+)", str(text))
        if part
    )


#: The metrics that need a model's confidence at every clue, which buzzes alone lack.
NEEDS_MODEL_STEPS = "CalScore, MCE, ECE, Brier, reliability and figures 5-6"


def normalisation(buzzes: BuzzTable) -> str:
    """How buzz rates are normalised: per match played (the paper) when every buzz comes
    from a known match, else per tossup heard (pooled data, or files without matches)."""
    hm = buzzes.heard_columns[0]
    if hm.size and not (hm == "").any():
        return "matches played"
    return "tossups heard"


def matches_played(buzzes: BuzzTable) -> dict[str, int]:
    """How many known matches each team heard questions in (teams of pooled data: none)."""
    hm, ht, _ = buzzes.heard_columns
    matches: dict[str, set[str]] = {}
    for m, t in zip(hm.tolist(), ht.tolist(), strict=True):
        if m:
            matches.setdefault(t, set()).add(m)
    return {t: len(ms) for t, ms in matches.items()}


def figure4(
    buzzes: BuzzTable, curves: dict[str, dict[str, Any]], *, n_groups: int = 4
) -> dict[str, Any]:
    """GRACE figure 4: human teams grouped into quartiles Q1–Q4 by total correct buzzes
    (Q1 the most), each group's mean cumulative correct and incorrect buzz rates against
    the fraction of the question revealed, and each model team's own; normalised by the
    matches each team played, or by the tossups it heard where matches are unknown."""
    by = normalisation(buzzes)
    matches = matches_played(buzzes)
    correct_totals = Counter(buzzes.team[buzzes.correct == 1.0].tolist())

    def scaled(team: str, key: str) -> np.ndarray:
        c = curves[team]
        values = np.asarray(c[key], dtype=float)
        if by == "matches played":  # rate per tossup heard → buzzes per match
            values = values * c["n_questions"] / max(matches.get(team, 0), 1)
        return values

    humans = sorted(
        (t for t, c in curves.items() if c["kind"] == "human"),
        key=lambda t: (-correct_totals.get(t, 0), natural_key(t)),
    )
    groups: dict[str, Any] = {}
    if humans:
        n = min(n_groups, len(humans))
        for i, members in enumerate(np.array_split(np.array(humans, dtype=object), n), start=1):
            names = sorted(members.tolist(), key=natural_key)
            groups[f"Q{i}"] = {
                "kind": "human",
                "teams": names,
                "correct_buzzes": [int(correct_totals.get(t, 0)) for t in names],
                "correct": np.mean([scaled(t, "correct") for t in names], axis=0).tolist(),
                "incorrect": np.mean([scaled(t, "incorrect") for t in names], axis=0).tolist(),
            }
    for team in sorted((t for t, c in curves.items() if c["kind"] == "model"), key=natural_key):
        groups[team] = {
            "kind": "model",
            "teams": [team],
            "correct_buzzes": [int(correct_totals.get(team, 0))],
            "correct": scaled(team, "correct").tolist(),
            "incorrect": scaled(team, "incorrect").tolist(),
        }
    return {
        "normalised_by": by,
        "grouping": "human teams ranked by total correct buzzes, split into "
        f"{min(n_groups, len(humans)) if humans else 0} groups of nearly equal size "
        "(Q1: the most); model teams on their own",
        "grid": GRID.tolist(),
        "groups": groups,
    }


def _team_section(buzzes: BuzzTable) -> tuple[dict[str, Any], dict[str, Any]]:
    """Per-team counts and the figure-4 curves."""
    kinds = buzzes.team_kinds()
    curves = buzz_rate_curves(buzzes, GRID)
    curves = {t: curves[t] for t in sorted(curves, key=natural_key)}
    heard = Counter(buzzes.heard_columns[1].tolist())
    played = matches_played(buzzes)
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
            "matches_played": played.get(team) or None,
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
    h_definition: str = "reference",
) -> dict[str, Any]:
    """Every metric, curve and ranking of GRACE Arena's analysis (see the module docstring).

    ``h_definition`` picks h_t's definition behind CalScore (``"reference"``: GRACE's code,
    the default; ``"paper"``: the paper's text; see
    :func:`~grace_arena.analysis.metrics.human_fraction_by_step`).
    """
    check_h_definition(h_definition)
    models, rows = _model_section(steps, buzzes, n_resamples, seed, level, h_definition)
    teams, rate_curves = _team_section(buzzes)
    policy = buzz_given_correct_table(rows)
    notes = []
    if len(buzzes) and not len(steps):
        notes.append(
            f"no model steps: {NEEDS_MODEL_STEPS} need a model's confidence at every clue "
            "(grace-arena precompute --packet FILE; a GRACE file works)"
        )
    return {
        "notes": notes,
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "source": source or {},
        "settings": {
            "n_bins": 10,
            "bootstrap": {"n_resamples": n_resamples, "seed": seed, "level": level},
            "confidence_kinds": list(CONFIDENCE_KINDS),
            "h_definition": h_definition,
            "h_definition_label": H_LABELS[h_definition],
            "buzz_rates_normalised_by": normalisation(buzzes),
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
            "figure4": figure4(buzzes, rate_curves),
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
