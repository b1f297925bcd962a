"""Selective prediction, smooth ECE and the Brier decomposition: hand-worked numbers,
scikit-learn, and an independent computation; and how the analysis reports them."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from grace_arena.analysis import analyze
from grace_arena.analysis.metrics import (
    SMOOTH_GRID,
    aurc,
    auroc,
    brier,
    brier_decomposition,
    percentile_interval,
    resample_counts,
    risk_coverage_curve,
    selective_accuracy,
    smooth_ece,
    smooth_reliability,
)
from grace_arena.analysis.recalibration import recalibration_report

CONF = [0.9, 0.8, 0.8, 0.3]
RIGHT = [1, 1, 0, 0]


def test_selective_prediction_by_hand() -> None:
    curve = risk_coverage_curve(CONF, RIGHT)
    # thresholds 0.9 (one row, right), 0.8 (three rows, one wrong), 0.3 (all, two wrong)
    assert curve.threshold.tolist() == [0.9, 0.8, 0.3]
    assert curve.coverage.tolist() == [0.25, 0.75, 1.0]
    assert curve.risk.tolist() == pytest.approx([0.0, 1 / 3, 0.5])
    # the tied pair both take the risk of the pair: (0 + 1/3 + 1/3 + 1/2) / 4
    assert aurc(CONF, RIGHT) == pytest.approx((0 + 2 / 3 + 1 / 2) / 4)
    # 80 % coverage needs every row here (0.75 < 0.8): accuracy 1/2
    assert selective_accuracy(CONF, RIGHT, coverage=0.8) == 0.5
    assert selective_accuracy(CONF, RIGHT, coverage=0.75) == pytest.approx(2 / 3)
    assert auroc(CONF, RIGHT) == 0.875  # 3 pairs in order, one tie: (3 + 1/2) / 4
    assert math.isnan(auroc([0.2, 0.9], [1, 1]))
    with pytest.raises(ValueError, match="coverage must lie in"):
        selective_accuracy(CONF, RIGHT, coverage=0.0)


def test_auroc_matches_scikit_learn_with_ties() -> None:
    rng = np.random.default_rng(0)
    for _ in range(20):
        n = int(rng.integers(2, 300))
        conf = np.round(rng.random(n), int(rng.integers(1, 4)))
        correct = (rng.random(n) < conf).astype(float)
        if correct.min() == correct.max():
            continue
        assert auroc(conf, correct) == pytest.approx(roc_auc_score(correct, conf), abs=1e-12)


def test_aurc_is_lowest_when_every_right_answer_ranks_first() -> None:
    right = [1, 1, 1, 0, 0]
    best = aurc([0.9, 0.8, 0.7, 0.2, 0.1], right)
    worst = aurc([0.1, 0.2, 0.3, 0.8, 0.9], right)
    # best: risks 0, 0, 0, 1/4, 2/5; worst: 1, 1, 2/3, 2/4, 2/5
    assert best == pytest.approx((1 / 4 + 2 / 5) / 5)
    assert worst == pytest.approx((1 + 1 + 2 / 3 + 1 / 2 + 2 / 5) / 5)


def test_brier_decomposition_adds_up_to_the_binned_brier_score() -> None:
    rng = np.random.default_rng(1)
    conf = rng.random(2000)
    correct = (rng.random(2000) < conf**1.5).astype(float)
    d = brier_decomposition(conf, correct)
    assert d.reliability - d.resolution + d.uncertainty == pytest.approx(d.binned, abs=1e-15)
    # the binned score is the Brier score of each confidence replaced by its bin's mean
    bins = np.minimum((conf * 10).astype(int), 9)
    means = np.bincount(bins, weights=conf) / np.bincount(bins)
    assert d.binned == pytest.approx(brier(means[bins], correct), abs=1e-15)
    assert d.brier == pytest.approx(brier(conf, correct))
    assert d.uncertainty == pytest.approx(correct.mean() * (1 - correct.mean()))
    # confidences that are constant within their bins: binned and plain agree
    centres = (np.minimum((conf * 10).astype(int), 9) + 0.5) / 10
    v = brier_decomposition(centres, correct)
    assert v.binned == pytest.approx(v.brier, abs=1e-12)


def _direct_smooth_ece(conf: np.ndarray, correct: np.ndarray, sigma: float) -> float:
    """smECE_σ = ∫₀¹ |(1/N) Σ K_σ(t, c_i)(g_i − c_i)| dt with the reflected Gaussian kernel
    written out (the image at 0 and at 1), integrated on a fine grid: no binning."""
    t = (np.arange(4000) + 0.5) / 4000

    def phi(u: np.ndarray) -> np.ndarray:
        return np.exp(-0.5 * (u / sigma) ** 2) / (sigma * math.sqrt(2 * math.pi))

    kernel = phi(t[:, None] - conf) + phi(t[:, None] + conf) + phi(2 - t[:, None] - conf)
    return float(np.abs(kernel @ (correct - conf) / conf.size).mean())


def test_smooth_ece_agrees_with_the_kernel_written_out() -> None:
    rng = np.random.default_rng(2)
    conf = rng.random(400) * 0.8 + 0.2
    correct = (rng.random(400) < conf - 0.15).astype(float)
    for sigma in (0.03, 0.08, 0.2):
        ours = smooth_ece(conf, correct, bandwidth=sigma)
        assert ours == pytest.approx(_direct_smooth_ece(conf, correct, sigma), rel=2e-3)


def test_smooth_ece_bandwidth_is_its_own_fixed_point() -> None:
    rng = np.random.default_rng(4)
    conf = rng.random(3000)
    correct = (rng.random(3000) < np.clip(conf + 0.2, 0, 1)).astype(float)  # underconfident
    curve = smooth_reliability(conf, correct)
    assert curve.smooth_ece == pytest.approx(curve.bandwidth, rel=1e-6)
    assert curve.smooth_ece == pytest.approx(smooth_ece(conf, correct))
    # the density integrates to 1; the smoothed accuracy lies above the diagonal
    assert curve.density.sum() / SMOOTH_GRID == pytest.approx(1.0)
    middle = (curve.t > 0.2) & (curve.t < 0.7)
    assert (curve.accuracy[middle] > curve.t[middle]).all()
    # well calibrated data: a small smooth ECE
    fair = (rng.random(3000) < conf).astype(float)
    assert smooth_ece(conf, fair) < 0.04
    with pytest.raises(ValueError, match="bandwidth must be positive"):
        smooth_ece(conf, fair, bandwidth=0.0)


def _steps(n_questions: int = 40, seed: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for q in range(n_questions):
        for step in range(4):
            c = min(1.0, (step + 1) / 4 * rng.uniform(0.7, 1.2))
            rows.append(
                {
                    "model": "m",
                    "question_id": f"q{q:02d}",
                    "step": step,
                    "word_index": 10 * step + 9,
                    "correct": int(rng.random() < c * 0.8),
                    "confidence_logit": c,
                    "confidence_verbal": round(c, 1),
                }
            )
    return pd.DataFrame(rows)


def test_the_analysis_reports_them_per_model_and_confidence() -> None:
    steps = _steps()
    result = analyze(steps, n_resamples=200, seed=3)
    m = result["models"]["m"]["logit"]
    conf, right = steps.confidence_logit.to_numpy(), steps.correct.to_numpy(float)
    assert m["auroc"] == pytest.approx(roc_auc_score(right, conf))
    assert m["aurc"] == pytest.approx(aurc(conf, right))
    assert m["acc_at_80"] == pytest.approx(selective_accuracy(conf, right, coverage=0.8))
    assert m["smooth_ece"] == pytest.approx(smooth_ece(conf, right))
    assert m["brier_binned"] == pytest.approx(brier_decomposition(conf, right).binned)
    codes = pd.factorize(steps.question_id, sort=True)[0]
    assert m["recalibration"] == recalibration_report(conf, right, groups=codes)
    rc = m["risk_coverage"]
    assert rc["coverage"][-1] == 1.0 and rc["risk"][-1] == pytest.approx(1 - right.mean())
    # the band: the smoothed accuracy at the band's points over the same question resamples
    smooth = m["smooth_reliability"]
    band = smooth["band"]
    points = np.rint(np.array(band["t"]) * SMOOTH_GRID - 0.5).astype(int)
    hits = []
    order = np.argsort(codes, kind="stable")
    starts = np.searchsorted(codes[order], np.arange(codes.max() + 2))
    for counts in resample_counts(codes.max() + 1, n_resamples=200, seed=3):
        for row in counts.astype(int):
            idx = np.concatenate(
                [np.tile(order[starts[j] : starts[j + 1]], row[j]) for j in np.flatnonzero(row)]
            )
            curve = smooth_reliability(conf[idx], right[idx], bandwidth=smooth["bandwidth"])
            hits.append(curve.accuracy[points])
    expected = [percentile_interval(np.array(hits)[:, k]) for k in range(points.size)]
    # single precision in the bootstrap product: equal to 1e-6
    assert band["low"] == pytest.approx([e[0] for e in expected], abs=1e-6)
    assert band["high"] == pytest.approx([e[1] for e in expected], abs=1e-6)
    assert all(lo <= hi for lo, hi in zip(band["low"], band["high"], strict=True))
    # the DataFrame view of the same numbers
    table = result.metrics
    row = table[(table.confidence == "logit") & (table.steps == "all")].iloc[0]
    assert row["auroc"] == m["auroc"] and row["smooth_ece"] == m["smooth_ece"]


def test_the_result_gives_each_new_analysis_as_a_dataframe() -> None:
    result = analyze(_steps(), n_resamples=0)
    m = result["models"]["m"]["logit"]
    recal = result.recalibration
    platt = recal[(recal.confidence == "logit") & (recal["map"] == "platt")].iloc[0]
    assert platt["ece"] == m["recalibration"]["platt"]["after"]["ece"]
    assert set(recal["map"]) == {"none", "temperature", "platt", "isotonic"}
    rc = result.risk_coverage
    assert rc[rc.confidence == "logit"].coverage.tolist() == m["risk_coverage"]["coverage"]
    smooth = result.smooth_reliability
    assert len(smooth[smooth.confidence == "logit"]) == SMOOTH_GRID
    assert result.ranking.empty  # only the leaderboard ranks
