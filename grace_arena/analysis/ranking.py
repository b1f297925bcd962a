"""Models ranked on one question set, KalshiBench-style (``grace-arena leaderboard``).

:func:`rank_models` takes an analysis (:func:`grace_arena.analysis.analyze`) of several models
on the same questions and adds, for one confidence kind, a ranked table: CalScore (the rank),
ECE, Brier, AUROC and accuracy by fraction of the question revealed, each with a percentile
bootstrap interval over questions. CalScore, ECE and Brier and their intervals are the
analysis' own; AUROC's interval comes from
:func:`~grace_arena.analysis.metrics.bootstrap_ci`; accuracy per fraction bin is
:func:`~grace_arena.analysis.curves.accuracy_by_fraction`, resampled as hits over steps per
question with the same question draws (:func:`~grace_arena.analysis.metrics.resample_counts`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from grace_arena.analysis.curves import accuracy_by_fraction, fraction_bin, fraction_revealed
from grace_arena.analysis.metrics import (
    bootstrap_ci,
    group_codes,
    percentile_interval,
    resample_counts,
)

__all__ = ["rank_models"]


def _none(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else float(value)


def _entry(value: float | None, ci: Any) -> dict[str, Any]:
    low, high = ci if ci is not None else (None, None)
    return {"value": _none(value), "ci": [_none(low), _none(high)]}


def _accuracy_by_fraction_ci(
    fraction: np.ndarray,
    correct: np.ndarray,
    questions: np.ndarray,
    edges: np.ndarray,
    *,
    n_resamples: int,
    seed: int,
    level: float,
) -> list[tuple[float, float]]:
    """Per fraction bin, the percentile interval of the accuracy over question resamples."""
    bins = fraction_bin(fraction, edges)
    known = bins >= 0
    bins = bins[known]
    codes, k = group_codes(questions[known], int(known.sum()))
    n_bins = edges.size - 1
    cell = codes * n_bins + bins
    hits = np.bincount(cell, weights=correct[known], minlength=k * n_bins).reshape(k, n_bins)
    rows = np.bincount(cell, minlength=k * n_bins).reshape(k, n_bins).astype(float)
    sums = np.hstack([hits, rows])
    totals = np.vstack(
        [counts @ sums for counts in resample_counts(k, n_resamples=n_resamples, seed=seed)]
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        accuracy = totals[:, :n_bins] / totals[:, n_bins:]
    return [percentile_interval(accuracy[:, b], level=level) for b in range(n_bins)]


def rank_models(
    result: Mapping[str, Any],
    steps: pd.DataFrame,
    *,
    confidence: str = "logit",
    fraction_bins: int = 4,
) -> dict[str, Any]:
    """The ranking of the models of ``result`` (analysed from ``steps``), best CalScore
    first, as a JSON-ready dict: ``columns`` (key and label) and ``rows`` (rank, model, and
    per column ``{"value", "ci"}``). Models without a CalScore for ``confidence`` come last.
    The bootstrap settings are the analysis' own."""
    boot = result["settings"]["bootstrap"]
    n_resamples, seed, level = boot["n_resamples"], boot["seed"], boot["level"]
    edges = np.arange(fraction_bins + 1) / fraction_bins
    columns = [
        {"key": "calscore", "label": "CalScore"},
        {"key": "ece", "label": "ECE"},
        {"key": "brier", "label": "Brier"},
        {"key": "auroc", "label": "AUROC"},
    ] + [
        {"key": f"accuracy_{b}", "label": f"accuracy at {lo:.0%}–{hi:.0%}"}
        for b, (lo, hi) in enumerate(itertools.pairwise(edges))
    ]
    rows = []
    for model, kinds in result["models"].items():
        m = kinds[confidence]
        mine = steps[steps["model"].astype(str) == model]
        conf = mine[f"confidence_{confidence}"].to_numpy(dtype=float)
        correct = mine["correct"].to_numpy(dtype=float)
        questions = mine["question_id"].astype(str).to_numpy()
        known = ~np.isnan(conf)
        row: dict[str, Any] = {"model": model}
        for key in ("calscore", "ece", "brier"):
            row[key] = _entry(m.get(key), m.get("ci", {}).get(key))
        auroc_ci = (
            bootstrap_ci(
                conf[known],
                correct[known],
                groups=questions[known],
                metric="auroc",
                n_resamples=n_resamples,
                seed=seed,
                level=level,
            )
            if n_resamples and known.any()
            else None
        )
        row["auroc"] = _entry(m.get("auroc"), auroc_ci)
        n_words = (
            mine["n_words"].astype("Float64").to_numpy(dtype=float, na_value=np.nan)
            if "n_words" in mine
            else np.full(len(mine), np.nan)
        )
        fraction = fraction_revealed(mine["word_index"].to_numpy(), np.nan_to_num(n_words, nan=-1))
        curve = accuracy_by_fraction(fraction, correct, bins=edges)
        cis = (
            _accuracy_by_fraction_ci(
                fraction, correct, questions, edges,
                n_resamples=n_resamples, seed=seed, level=level,
            )
            if n_resamples and (~np.isnan(fraction)).any()
            else [None] * fraction_bins
        )  # fmt: skip
        for b in range(fraction_bins):
            row[f"accuracy_{b}"] = _entry(curve.accuracy[b], cis[b])
        rows.append(row)
    rows.sort(
        key=lambda r: (
            r["calscore"]["value"] is None,
            r["calscore"]["value"] if r["calscore"]["value"] is not None else 0.0,
            r["model"],
        )
    )
    for rank, row in enumerate(rows, start=1):
        row["rank"] = rank
    return {
        "confidence": confidence,
        "caption": (
            f"{len(rows)} model(s) on the same questions, ranked by CalScore (lower is better; "
            f"{confidence} confidence). ECE and Brier: lower is better; AUROC: higher is "
            f"better. [{int(level * 100)}% bootstrap interval over questions, {n_resamples} "
            "resamples.] Accuracy by the share of the question revealed at the step."
        ),
        "columns": columns,
        "rows": rows,
    }
