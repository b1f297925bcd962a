"""Recalibration (temperature, Platt, isotonic) with question-grouped cross-validation,
against hand-worked numbers and scikit-learn."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression

from grace_arena.analysis import recalibration as rc
from grace_arena.analysis.metrics import brier, ece, log_loss
from grace_arena.analysis.recalibration import (
    Calibrator,
    cross_val_predict,
    fit_calibrator,
    logit,
    question_folds,
    recalibration_report,
)


def data(n: int = 3000, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Overconfident confidences (accuracy c², not c), rounded so that ties occur, in
    questions of 6 steps."""
    rng = np.random.default_rng(seed)
    conf = np.round(rng.random(n), 3)
    correct = (rng.random(n) < conf**2).astype(float)
    return conf, correct, np.arange(n) // 6


def test_temperature_by_hand() -> None:
    # one confidence, 0.9, right 3 times in 4: σ(logit(0.9)/T) = 0.75 gives
    # T = logit(0.9)/logit(0.75) = ln 9 / ln 3 = 2
    cal = fit_calibrator([0.9] * 4, [1, 1, 1, 0], method="temperature")
    assert cal.params["temperature"] == pytest.approx(2.0, rel=1e-9)
    assert cal.predict([0.9]).tolist() == pytest.approx([0.75])
    assert cal.predict([0.5]).tolist() == pytest.approx([0.5])  # 0.5 stays fixed


def test_platt_by_hand() -> None:
    # two confidences, each with its own accuracy: Platt fits both exactly (two points, two
    # parameters): σ(a·logit(0.8) + b) = 0.5 and σ(a·logit(0.2) + b) = 0.25
    cal = fit_calibrator([0.8, 0.8, 0.2, 0.2, 0.2, 0.2], [1, 0, 1, 0, 0, 0], method="platt")
    assert cal.predict([0.8, 0.2]).tolist() == pytest.approx([0.5, 0.25], abs=1e-9)
    a = (0 - logit([0.25])[0]) / (logit([0.8])[0] - logit([0.2])[0])
    assert cal.params["a"] == pytest.approx(a, rel=1e-9)


def test_platt_and_temperature_match_scikit_learn() -> None:
    conf, correct, _ = data()
    x = logit(conf)[:, None]
    platt = fit_calibrator(conf, correct, method="platt")
    lr = LogisticRegression(C=np.inf, tol=1e-12, max_iter=10_000).fit(x, correct)
    assert platt.params["a"] == pytest.approx(lr.coef_[0, 0], rel=1e-6)
    assert platt.params["b"] == pytest.approx(lr.intercept_[0], rel=1e-6)
    assert platt.predict(conf) == pytest.approx(lr.predict_proba(x)[:, 1], abs=1e-7)
    temp = fit_calibrator(conf, correct, method="temperature")
    lr0 = LogisticRegression(C=np.inf, fit_intercept=False, tol=1e-12, max_iter=10_000)
    lr0.fit(x, correct)
    assert temp.params["temperature"] == pytest.approx(1 / lr0.coef_[0, 0], rel=1e-6)


def test_isotonic_matches_scikit_learn() -> None:
    conf, correct, _ = data()
    ours = fit_calibrator(conf, correct, method="isotonic")
    theirs = IsotonicRegression(out_of_bounds="clip", y_min=0, y_max=1).fit(conf, correct)
    grid = np.linspace(-0.1, 1.1, 997)
    np.testing.assert_allclose(ours.predict(grid), theirs.predict(grid), atol=1e-12)
    np.testing.assert_allclose(ours.predict(conf), theirs.predict(conf), atol=1e-12)


def test_large_data_fit_on_cells_of_the_confidence(monkeypatch) -> None:
    """Above EXACT_ROWS rows the fits run on cells of width 1e-4; they move by far less
    than the sampling error, and not at all for confidences with few distinct values."""
    rng = np.random.default_rng(3)
    conf = rng.random(30_000)
    correct = (rng.random(30_000) < conf**2).astype(float)
    cells = {m: fit_calibrator(conf, correct, method=m) for m in ("platt", "temperature")}
    monkeypatch.setattr(rc, "EXACT_ROWS", 10**9)
    for method, cal in cells.items():
        exact = fit_calibrator(conf, correct, method=method)
        for key, value in cal.params.items():
            assert value == pytest.approx(exact.params[key], rel=1e-5), (method, key)
    verbal = np.round(conf, 1)
    exact = fit_calibrator(verbal, correct, method="isotonic").params
    monkeypatch.setattr(rc, "EXACT_ROWS", 10)
    assert fit_calibrator(verbal, correct, method="isotonic").params == exact


def test_anti_correlated_confidence_gets_no_temperature() -> None:
    cal = fit_calibrator([0.9, 0.9, 0.1, 0.1], [0, 0, 1, 1], method="temperature")
    assert cal.params["temperature"] is None
    assert cal.predict([0.9, 0.1]).tolist() == [0.5, 0.5]


def test_folds_keep_each_question_whole_and_even() -> None:
    groups = np.repeat(np.arange(23), 5)
    folds = question_folds(groups, n_splits=5, seed=1)
    for q in range(23):
        assert np.unique(folds[groups == q]).size == 1
    per_fold = np.bincount(folds) // 5
    assert sorted(per_fold.tolist()) == [4, 4, 5, 5, 5]
    assert not np.array_equal(folds, question_folds(groups, n_splits=5, seed=2))
    with pytest.raises(ValueError, match="n_splits = 5 folds need at least"):
        question_folds(np.arange(4), n_splits=5)
    with pytest.raises(ValueError, match="n_splits must be an integer >= 2"):
        question_folds(groups, n_splits=1)


def test_cross_validation_never_uses_a_questions_own_steps() -> None:
    conf, correct, groups = data(600)
    folds = question_folds(groups, n_splits=5)
    before = cross_val_predict(conf, correct, groups=groups, method="isotonic")
    flipped = correct.copy()
    flipped[folds == 2] = 1 - flipped[folds == 2]  # change fold 2's own outcomes only
    after = cross_val_predict(conf, flipped, groups=groups, method="isotonic")
    np.testing.assert_array_equal(before[folds == 2], after[folds == 2])
    assert not np.array_equal(before[folds != 2], after[folds != 2])
    # and fold 2's predictions are the map fitted on the other folds
    fitted = fit_calibrator(conf[folds != 2], correct[folds != 2], method="isotonic")
    np.testing.assert_allclose(before[folds == 2], fitted.predict(conf[folds == 2]))


def test_the_report_before_and_after() -> None:
    conf, correct, groups = data()
    report = recalibration_report(conf, correct, groups=groups)
    assert report is not None
    assert report["before"] == pytest.approx(
        {
            "ece": ece(conf, correct),
            "brier": brier(conf, correct),
            "log_loss": log_loss(conf, correct),
        }
    )
    platt = cross_val_predict(conf, correct, groups=groups, method="platt")
    assert report["platt"]["after"]["brier"] == pytest.approx(brier(platt, correct))
    # the data are overconfident: every map lowers the out-of-fold ECE a lot
    for method in ("platt", "isotonic"):
        assert report[method]["after"]["ece"] < report["before"]["ece"] / 3
    assert report["temperature"]["params"]["temperature"] > 0
    # missing confidences are left out; too few questions or one class: nothing to fit
    holed = conf.copy()
    holed[::7] = np.nan
    assert recalibration_report(holed, correct, groups=groups)["n"] == int((~np.isnan(holed)).sum())
    assert recalibration_report(conf[:24], correct[:24], groups=groups[:24]) is None
    assert recalibration_report(conf, np.ones_like(conf), groups=groups) is None


def test_a_fitted_map_round_trips_as_data() -> None:
    conf, correct, _ = data(500)
    for method in ("temperature", "platt", "isotonic"):
        cal = fit_calibrator(conf, correct, method=method)
        again = Calibrator.from_dict(cal.to_dict())
        np.testing.assert_allclose(again.predict(conf), cal.predict(conf))
        assert math.isnan(again.predict([math.nan])[0])
    with pytest.raises(ValueError, match="method must be one of"):
        Calibrator.from_dict({"method": "magic", "params": {}})
    with pytest.raises(ValueError, match="needs params a, b"):
        Calibrator.from_dict({"method": "platt", "params": {}})
