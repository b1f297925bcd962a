"""Calibration metrics: hand-worked numbers, bin edges, scikit-learn agreement, properties."""

from __future__ import annotations

import doctest
import json
import math
import subprocess
import sys
from functools import partial
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.calibration import calibration_curve
from sklearn.metrics import brier_score_loss
from sklearn.metrics import log_loss as sklearn_log_loss

from grace_arena.analysis import metrics as metrics_module
from grace_arena.analysis.metrics import (
    METRICS,
    QUESTION_METRICS,
    PreparedRows,
    ace,
    aurc,
    auroc,
    bootstrap_ci,
    brier,
    brier_decomposition,
    brier_skill_score,
    calscore,
    calscore_ref,
    drop_missing,
    ece,
    human_fraction,
    log_loss,
    max_calibration_error,
    mce_grace,
    mce_grace_ref,
    mean_confidence_when,
    normalized_sigmoid,
    overconfidence_rate,
    reliability_table,
    risk_coverage_curve,
    smooth_reliability,
    summarize,
)


def r(x: float) -> float:
    """GRACE appendix K written out independently of the module under test."""

    def sigma(v: float) -> float:
        return 1.0 / (1.0 + math.exp(-v))

    return (sigma(x) - sigma(-1.0)) / (sigma(1.0) - sigma(-1.0))


def same(a: float | None, b: float | None, *, tol: float = 1e-9) -> bool:
    """Equal within tolerance, treating NaN == NaN and None == None."""
    if a is None or b is None:
        return a is b
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=tol, abs_tol=tol)


# ---------------------------------------------------------------------------------------
# Bin edges (verbalized confidences sit exactly on them)
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("confidence", "expected_bin"),
    [
        (0.0, 0),  # GRACE's code would put 0 in the last bin; ours is bin 0
        (0.05, 0),
        (0.0999999, 0),
        *[(float(f"0.{i}"), i) for i in range(1, 10)],  # 0.1 → bin 1, 0.3 → bin 3, ...
        (0.95, 9),
        (1.0, 9),  # the last bin is closed at 1.0
    ],
)
def test_each_confidence_lands_in_the_documented_bin(confidence: float, expected_bin: int) -> None:
    table = reliability_table([confidence], [1])
    assert [b.count for b in table] == [1 if i == expected_bin else 0 for i in range(10)]
    assert table[expected_bin].lower <= confidence <= table[expected_bin].upper


def test_edge_confidence_goes_to_the_upper_bin_in_ece() -> None:
    # 0.1 and 0.15 share bin [0.1, 0.2): acc 1/2, conf 0.125 → ECE = |0.5 − 0.125| = 0.375.
    # (With sklearn's (a, b] bins 0.1 would sit alone in bin 0: (0.1 + 0.85)/2 = 0.475.)
    assert ece([0.1, 0.15], [0, 1]) == pytest.approx(0.375)


def test_zero_confidence_stays_in_the_first_bin() -> None:
    # Bin 0 holds (0.0, right): gap 1; bin 9 holds (0.95, wrong): gap 0.95.
    # ECE = (1 + 0.95) / 2 = 0.975. Pooling 0.0 into the last bin would give 0.025.
    assert ece([0.0, 0.95], [1, 0]) == pytest.approx(0.975)


def test_ece_and_max_ce_hand_worked_on_edges() -> None:
    conf = [0.1, 0.1, 0.5, 0.9, 1.0]
    correct = [0, 1, 1, 1, 1]
    # bin 1 [0.1, 0.2): {0.1, 0.1}  acc 0.5 conf 0.1  gap 0.4  weight 2/5 → 0.16
    # bin 5 [0.5, 0.6): {0.5}       acc 1   conf 0.5  gap 0.5  weight 1/5 → 0.10
    # bin 9 [0.9, 1.0]: {0.9, 1.0}  acc 1   conf 0.95 gap 0.05 weight 2/5 → 0.02
    assert ece(conf, correct) == pytest.approx(0.28)
    assert max_calibration_error(conf, correct) == pytest.approx(0.5)
    filled = [b for b in reliability_table(conf, correct) if b.count]
    expected = [(0.1, 0.1, 0.5, 2, -0.4), (0.5, 0.5, 1.0, 1, -0.5), (0.9, 0.95, 1.0, 2, -0.05)]
    for b, row in zip(filled, expected, strict=True):
        assert (b.lower, b.mean_confidence, b.accuracy, b.count, b.gap) == pytest.approx(row)


def test_ece_with_other_bin_counts() -> None:
    # n_bins=2: [0, 0.5) holds 0.2 (wrong), 0.4 (right): acc .5 conf .3 gap .2;
    # [0.5, 1] holds 0.5 (right), 1.0 (right): acc 1 conf .75 gap .25 → (.2 + .25)/2 = .225
    assert ece([0.2, 0.4, 0.5, 1.0], [0, 1, 1, 1], n_bins=2) == pytest.approx(0.225)
    # n_bins=1 is |mean accuracy − mean confidence| = |0.75 − 0.525| = 0.225
    assert ece([0.2, 0.4, 0.5, 1.0], [0, 1, 1, 1], n_bins=1) == pytest.approx(0.225)


def test_empty_uniform_bins_are_reported_with_nan_statistics() -> None:
    table = reliability_table([0.25], [1])
    empty = table[0]
    assert (empty.count, empty.lower, empty.upper) == (0, 0.0, 0.1)
    assert math.isnan(empty.mean_confidence) and math.isnan(empty.gap)
    assert empty.as_dict()["accuracy"] is None
    json.dumps([b.as_dict() for b in table], allow_nan=False)


# ---------------------------------------------------------------------------------------
# ACE
# ---------------------------------------------------------------------------------------


def test_ace_hand_worked() -> None:
    # Sorted: 0.2 (0), 0.4 (1) | 0.6 (1), 0.8 (1); gaps |.5 − .3| = .2 and |1 − .7| = .3
    assert ace([0.8, 0.2, 0.6, 0.4], [1, 0, 1, 1], n_bins=2) == pytest.approx(0.25)


def test_ace_splits_like_array_split() -> None:
    conf = np.linspace(0.05, 0.95, 12)
    table = reliability_table(conf, np.ones(12), strategy="quantile")
    # 12 rows in 10 groups: the first 12 mod 10 = 2 groups get one extra row.
    assert [b.count for b in table] == [2, 2, 1, 1, 1, 1, 1, 1, 1, 1]
    assert (table[0].lower, table[0].upper) == pytest.approx((0.05, conf[1]))


def test_ace_with_fewer_rows_than_bins_is_mean_absolute_gap() -> None:
    # Each row is its own group: (|1 − 0.3| + |0 − 0.9|) / 2 = 0.8
    assert ace([0.3, 0.9], [1, 0]) == pytest.approx(0.8)


def test_ace_breaks_confidence_ties_by_correctness_not_row_order() -> None:
    # All at 0.5: sorted as 0, 0 | 1, 1 whatever the input order → gaps .5 and .5 → .5
    assert ace([0.5] * 4, [1, 0, 1, 0], n_bins=2) == pytest.approx(0.5)
    assert ace([0.5] * 4, [0, 0, 1, 1], n_bins=2) == pytest.approx(0.5)


# ---------------------------------------------------------------------------------------
# Proper scores and rates
# ---------------------------------------------------------------------------------------


def test_brier_and_skill_score_hand_worked() -> None:
    # (0.9 − 1)² + (0.6 − 0)² + (0.2 − 0)² = 0.01 + 0.36 + 0.04 = 0.41 → /3
    assert brier([0.9, 0.6, 0.2], [1, 0, 0]) == pytest.approx(0.41 / 3)
    # ȳ = 1/3, ȳ(1 − ȳ) = 2/9 → 1 − (0.41/3)/(2/9) = 1 − 0.615 = 0.385
    assert brier_skill_score([0.9, 0.6, 0.2], [1, 0, 0]) == pytest.approx(0.385)
    # Predicting the base rate everywhere scores exactly 0 skill.
    assert brier_skill_score([0.25] * 4, [1, 0, 0, 0]) == pytest.approx(0.0)


@pytest.mark.parametrize("correct", [[1, 1], [0, 0]])
def test_brier_skill_score_is_nan_with_one_class(correct: list[int]) -> None:
    assert math.isnan(brier_skill_score([0.3, 0.6], correct))


def test_log_loss_hand_worked_and_clipped() -> None:
    # −(log 0.8 + log 0.6) / 2 = (0.223144 + 0.510826) / 2 = 0.366985
    assert log_loss([0.8, 0.4], [1, 0]) == pytest.approx(0.366985, abs=1e-6)
    # Confidence 1 on a wrong answer is clipped to 1 − 1e-6: −log(1e-6) = 13.8155
    assert log_loss([1.0], [0]) == pytest.approx(-math.log(1e-6), rel=1e-6)
    assert log_loss([0.0], [0]) == pytest.approx(-math.log1p(-1e-6))


def test_overconfidence_rate_hand_worked() -> None:
    conf = [0.95, 0.85, 0.8, 0.75, 0.5]
    correct = [1, 0, 0, 1, 0]
    # > 0.9: {0.95 right} → 0/1;  > 0.8: {0.95, 0.85} → 1/2 (0.8 itself is not above);
    # > 0.7: {0.95, 0.85, 0.8, 0.75} → 2/4
    assert overconfidence_rate(conf, correct, threshold=0.9) == 0.0
    assert overconfidence_rate(conf, correct, threshold=0.8) == 0.5
    assert overconfidence_rate(conf, correct, threshold=0.7) == 0.5
    assert math.isnan(overconfidence_rate([0.2, 0.9], [0, 1], threshold=0.9))


def test_mean_confidence_when_right_and_wrong() -> None:
    # right: (0.9 + 0.7)/2 = 0.8; wrong: 0.2; no wrong rows → NaN
    assert mean_confidence_when([0.9, 0.7, 0.2], [1, 1, 0], correct_value=1) == pytest.approx(0.8)
    assert mean_confidence_when([0.9, 0.7, 0.2], [1, 1, 0], correct_value=0) == pytest.approx(0.2)
    assert math.isnan(mean_confidence_when([0.9], [1], correct_value=0))


def test_drop_missing_counts_none_and_nan() -> None:
    conf, correct, n_missing = drop_missing([0.9, None, math.nan, 0.2], [1, 0, 1, False])
    assert conf.tolist() == [0.9, 0.2]
    assert correct.tolist() == [1.0, 0.0]
    assert n_missing == 2


def test_summarize_is_json_ready_and_counts_missing() -> None:
    s = summarize([0.9, None, 0.2], [True, True, False])
    decomposition = {f"brier_{p}" for p in ("reliability", "resolution", "uncertainty", "binned")}
    assert set(s) == {*METRICS, *decomposition, "n", "n_missing"}
    assert (s["n"], s["n_missing"]) == (2, 1)
    # Brier (0.01 + 0.04)/2 = 0.025; nothing above 0.9 → OCR@0.9 undefined → None
    assert s["brier"] == pytest.approx(0.025)
    assert s["ocr_0.9"] is None
    json.dumps(s, allow_nan=False)

    nothing = summarize([None, None], [1, 0])
    assert (nothing["n"], nothing["n_missing"]) == (0, 2)
    assert all(nothing[name] is None for name in METRICS)


# ---------------------------------------------------------------------------------------
# Input checking
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("conf", "correct", "message"),
    [
        ([0.5, 1.2], [1, 0], r"conf\[1\] = 1\.2"),
        ([-0.1], [1], r"conf\[0\] = -0\.1"),
        ([0.5, 0.5], [1, 2], r"correct\[1\] = 2\.0"),
        ([0.5, math.nan], [1, 0], r"conf\[1\] is NaN.*drop_missing"),
        ([0.5], [1, 0], "same length"),
        ([[0.5]], [1], "1-D"),
        ([], [], "empty"),
        (["high"], [1], "numeric"),
    ],
)
@pytest.mark.parametrize("name", sorted(METRICS))
def test_every_metric_rejects_bad_input_naming_the_value(
    name: str, conf: list, correct: list, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        METRICS[name](conf, correct)


def test_options_are_checked() -> None:
    with pytest.raises(ValueError, match="n_bins = 0"):
        ece([0.5], [1], n_bins=0)
    with pytest.raises(ValueError, match="strategy = 'equal'"):
        reliability_table([0.5], [1], strategy="equal")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"threshold = 1\.5"):
        overconfidence_rate([0.5], [1], threshold=1.5)
    with pytest.raises(ValueError, match="correct_value = 2"):
        mean_confidence_when([0.5], [1], correct_value=2)
    with pytest.raises(TypeError):
        ece([0.5], [1], 10)  # type: ignore[misc]  # options are keyword-only


# ---------------------------------------------------------------------------------------
# Agreement with scikit-learn
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
def test_brier_agrees_with_sklearn(seed: int) -> None:
    rng = np.random.default_rng(seed)
    conf = rng.choice([0.0, 0.1, 0.5, 0.9, 1.0, *rng.random(5)], size=50)
    correct = rng.integers(0, 2, size=50)
    assert brier(conf, correct) == pytest.approx(brier_score_loss(correct, conf))


@pytest.mark.parametrize("seed", range(5))
def test_log_loss_agrees_with_sklearn_on_clipped_probabilities(seed: int) -> None:
    rng = np.random.default_rng(seed)
    conf = rng.choice([0.0, 1.0, *rng.random(8)], size=50)
    correct = rng.integers(0, 2, size=50)
    clipped = np.clip(conf, 1e-6, 1 - 1e-6)
    expected = sklearn_log_loss(correct, clipped, labels=[0, 1])
    assert log_loss(conf, correct) == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("seed", range(5))
def test_reliability_table_agrees_with_sklearn_calibration_curve_off_edges(seed: int) -> None:
    # sklearn's bins are (a, b] (first closed at 0), ours [a, b) (last closed at 1): they
    # agree whenever no confidence sits on an inner edge, so draw confidences away from them.
    rng = np.random.default_rng(seed)
    conf = (rng.integers(0, 10, size=200) + rng.uniform(0.05, 0.95, size=200)) / 10
    correct = (rng.random(200) < conf).astype(int)
    prob_true, prob_pred = calibration_curve(correct, conf, n_bins=10, strategy="uniform")
    filled = [b for b in reliability_table(conf, correct) if b.count]
    assert [b.accuracy for b in filled] == pytest.approx(prob_true.tolist())
    assert [b.mean_confidence for b in filled] == pytest.approx(prob_pred.tolist())
    # ECE is the count-weighted mean |gap| of the same table.
    n = len(conf)
    assert ece(conf, correct) == pytest.approx(sum(b.count / n * abs(b.gap) for b in filled))


@pytest.mark.parametrize("seed", range(4))
def test_sample_weight_counts_a_row_that_many_times(seed: int) -> None:
    rng = np.random.default_rng(seed)
    conf = rng.choice([0.0, 0.1, 0.5, 0.9, 1.0, *np.round(rng.random(6), 2)], size=40)
    correct = (rng.random(40) < conf).astype(float)
    weight = rng.integers(0, 4, size=40)  # zero weights too
    groups = rng.integers(0, 3, size=40)
    repeated = np.repeat(np.arange(40), weight)
    for fn in (ece, brier, log_loss):
        expected = fn(conf[repeated], correct[repeated])
        assert fn(conf, correct, sample_weight=weight) == pytest.approx(expected, rel=1e-12)
        by_group = fn(conf[repeated], correct[repeated], groups=groups[repeated])
        assert fn(conf, correct, groups=groups, sample_weight=weight) == pytest.approx(by_group)
    # scikit-learn's weighted Brier score and log loss (any non-negative weights)
    real = rng.random(40) * weight
    assert brier(conf, correct, sample_weight=real) == pytest.approx(
        brier_score_loss(correct, conf, sample_weight=real), rel=1e-12
    )
    clipped = np.clip(conf, 1e-6, 1 - 1e-6)
    assert log_loss(conf, correct, sample_weight=real) == pytest.approx(
        sklearn_log_loss(correct, clipped, sample_weight=real, labels=[0, 1]), rel=1e-9
    )
    with pytest.raises(ValueError, match=r"sample_weight\[1\] = -1\.0"):
        brier([0.5, 0.5], [1, 0], sample_weight=[1.0, -1.0])


def test_sklearn_calibration_curve_bins_edges_differently() -> None:
    # Documented difference: sklearn puts 0.1 in (0, 0.1], we put it in [0.1, 0.2).
    prob_true, _ = calibration_curve([0, 1], [0.1, 0.15], n_bins=10)
    assert len(prob_true) == 2
    assert sum(1 for b in reliability_table([0.1, 0.15], [0, 1]) if b.count) == 1


# ---------------------------------------------------------------------------------------
# Properties over every row metric in the registry
# ---------------------------------------------------------------------------------------

LOG_LOSS_MAX = -math.log(1e-6) + 1e-9
#: Declared range of each registered metric; a metric added to METRICS must be added here.
BOUNDS: dict[str, tuple[float, float]] = {
    "ece": (0.0, 1.0),
    "ace": (0.0, 1.0),
    "max_ce": (0.0, 1.0),
    "brier": (0.0, 1.0),
    "bss": (-math.inf, 1.0),
    "log_loss": (0.0, LOG_LOSS_MAX),
    "ocr_0.7": (0.0, 1.0),
    "ocr_0.8": (0.0, 1.0),
    "ocr_0.9": (0.0, 1.0),
    "conf_right": (0.0, 1.0),
    "conf_wrong": (0.0, 1.0),
    "smooth_ece": (0.0, 1.0),
    "auroc": (0.0, 1.0),
    "aurc": (0.0, 1.0),
    "acc_at_80": (0.0, 1.0),
}
#: Metrics that measure miscalibration and must vanish on perfectly calibrated data.
CALIBRATION_ERRORS = ("ece", "max_ce")

confidences = st.one_of(
    st.sampled_from([i / 10 for i in range(11)]),  # verbalized values, on the edges
    st.floats(min_value=0.0, max_value=1.0),
)
rows = st.lists(st.tuples(confidences, st.booleans()), min_size=1, max_size=60)


def as_arrays(data: list[tuple[float, bool]]) -> tuple[np.ndarray, np.ndarray]:
    return np.array([c for c, _ in data]), np.array([g for _, g in data], dtype=int)


def test_every_registered_metric_declares_its_bounds() -> None:
    assert set(BOUNDS) == set(METRICS)


# Each property draws one data set and checks every registered metric on it (one loop
# instead of one parametrized test per metric keeps the suite fast).


@given(data=rows)
def test_every_metric_stays_within_its_bounds(data: list[tuple[float, bool]]) -> None:
    conf, correct = as_arrays(data)
    for name, fn in METRICS.items():
        value = fn(conf, correct)
        low, high = BOUNDS[name]
        assert math.isnan(value) or low - 1e-12 <= value <= high + 1e-12, (name, value)


@given(data=rows, order=st.randoms(use_true_random=False))
def test_every_metric_ignores_row_order(data: list[tuple[float, bool]], order) -> None:
    shuffled = list(data)
    order.shuffle(shuffled)
    for name, fn in METRICS.items():
        before, after = fn(*as_arrays(data)), fn(*as_arrays(shuffled))
        assert same(before, after), (name, before, after)


@st.composite
def calibrated_groups(draw: st.DrawFn) -> list[tuple[float, bool]]:
    """Groups of m rows at confidence k/m with exactly k correct: accuracy = confidence."""
    out: list[tuple[float, bool]] = []
    for _ in range(draw(st.integers(1, 8))):
        m = draw(st.integers(1, 10))
        k = draw(st.integers(0, m))
        out += [(k / m, True)] * k + [(k / m, False)] * (m - k)
    return out


@given(data=calibrated_groups())
def test_perfect_calibration_has_zero_error(data: list[tuple[float, bool]]) -> None:
    conf, correct = as_arrays(data)
    for name in CALIBRATION_ERRORS:
        assert METRICS[name](conf, correct) == pytest.approx(0.0, abs=1e-12), name
    assert all(abs(b.gap) < 1e-12 for b in reliability_table(conf, correct) if b.count)


@given(m=st.integers(9, 20), data=st.data())
def test_perfect_calibration_has_zero_ace(m: int, data: st.DataObject) -> None:
    # Ten groups of m rows with distinct confidences k/m: the equal-mass split falls
    # exactly on the group boundaries, so every group is calibrated.
    ks = data.draw(st.lists(st.integers(0, m), min_size=10, max_size=10, unique=True))
    rows_ = [(k / m, i < k) for k in ks for i in range(m)]
    assert ace(*as_arrays(rows_)) == pytest.approx(0.0, abs=1e-12)
    assert METRICS["ace"](*as_arrays(rows_)) == pytest.approx(0.0, abs=1e-12)


@given(data=rows)
def test_ece_never_exceeds_the_maximum_bin_error(data: list[tuple[float, bool]]) -> None:
    conf, correct = as_arrays(data)
    assert ece(conf, correct) <= max_calibration_error(conf, correct) + 1e-12


@given(data=rows, missing=st.lists(st.booleans(), min_size=60, max_size=60))
def test_missing_confidences_are_left_out_and_counted(
    data: list[tuple[float, bool]], missing: list[bool]
) -> None:
    conf, correct = as_arrays(data)
    holes = np.array(missing[: len(conf)])
    with_holes = np.where(holes, np.nan, conf)
    s = summarize(with_holes, correct)
    assert s["n_missing"] == int(holes.sum())
    assert s["n"] == int((~holes).sum())
    for name, fn in METRICS.items():
        expected = fn(conf[~holes], correct[~holes]) if s["n"] else math.nan
        assert same(s[name], None if math.isnan(expected) else expected)
        if holes.any():  # metric functions take cleaned arrays and refuse NaN
            with pytest.raises(ValueError, match="NaN"):
                fn(with_holes, correct)


# ---------------------------------------------------------------------------------------
# groups=: one value per group, equal to the metric of each group's rows
# ---------------------------------------------------------------------------------------

#: Confidences on bin edges (and 0), with ties.
EDGES = [0.0, 0.1, 0.5, 0.9, 1.0]


def grouped_rows(seed: int, n: int, n_groups: int) -> tuple[np.ndarray, ...]:
    """Random rows in groups 0..n_groups-1 with one label left empty, half the confidences
    on bin edges (many ties), the rest rounded to two decimals (more ties)."""
    rng = np.random.default_rng(seed)
    conf = np.where(rng.random(n) < 0.5, rng.choice(EDGES, n), np.round(rng.random(n), 2))
    correct = (rng.random(n) < conf).astype(float)
    groups = rng.integers(0, n_groups, n)
    groups[groups == 1] = 0  # label 1 has no rows
    return conf, correct, groups


def per_group(fn, conf, correct, groups, k):
    return [fn(conf[groups == g], correct[groups == g]) if (groups == g).any() else math.nan
            for g in range(k)]  # fmt: skip


@pytest.mark.parametrize("seed", range(6))
def test_grouped_metrics_equal_the_metric_of_each_group(seed: int) -> None:
    conf, correct, groups = grouped_rows(seed, n=40 + 60 * seed, n_groups=5)
    names = np.array(["b", "a", "c", "d", "e"])[groups]  # "a" (group 1) has no rows
    for name, fn in METRICS.items():
        expected = per_group(fn, conf, correct, groups, 5)
        grouped = fn(conf, correct, groups=groups)
        assert grouped.shape == (5,) and math.isnan(grouped[1]), name
        assert all(same(a, b, tol=1e-12) for a, b in zip(grouped, expected, strict=True)), name
        # other labels: one value per label present, in sorted order of the labels
        by_name = fn(conf, correct, groups=names)
        present = [expected[g] for g in (0, 2, 3, 4)]  # b, c, d, e
        assert all(same(a, b, tol=1e-12) for a, b in zip(by_name, present, strict=True)), name
    parts = brier_decomposition(conf, correct, groups=groups)
    for g in (0, 2, 3, 4):
        alone = brier_decomposition(conf[groups == g], correct[groups == g])
        for field in ("reliability", "resolution", "uncertainty", "binned", "brier"):
            assert same(getattr(parts, field)[g], getattr(alone, field), tol=1e-12), field
    assert math.isnan(parts.reliability[1]) and math.isnan(parts.brier[1])


grouped_data = st.lists(
    st.tuples(confidences, st.booleans(), st.integers(0, 3)), min_size=0, max_size=60
)


@given(data=grouped_data)
def test_grouped_metrics_equal_per_group_calls_on_any_rows(
    data: list[tuple[float, bool, int]],
) -> None:
    conf = np.array([c for c, _, _ in data], dtype=float)
    correct = np.array([g for _, g, _ in data], dtype=float)
    groups = np.array([k for _, _, k in data], dtype=np.int64)
    k = int(groups.max()) + 1 if groups.size else 0
    for name, fn in METRICS.items():
        grouped = fn(conf, correct, groups=groups)
        expected = per_group(fn, conf, correct, groups, k)
        assert len(grouped) == k
        assert all(same(a, b, tol=1e-12) for a, b in zip(grouped, expected, strict=True)), name


@given(data=grouped_data, missing=st.lists(st.booleans(), min_size=60, max_size=60))
def test_summarize_by_label_equals_summarize_of_each_label(
    data: list[tuple[float, bool, int]], missing: list[bool]
) -> None:
    conf = np.array([c for c, _, _ in data], dtype=float)
    conf[np.array(missing[: conf.size], dtype=bool)] = np.nan
    correct = np.array([g for _, g, _ in data], dtype=float)
    h = np.linspace(0, 1, conf.size)
    questions = np.arange(conf.size) // 3  # three steps a question
    everything = summarize(conf, correct, groups=questions, human_frac=h)
    by_row = np.array([["x", "y", "z", "w"][k] for _, _, k in data], dtype=object)
    by_question = np.array(["x", "y", "z", "w"], dtype=object)[questions % 4]
    for labels in (by_row, by_question):  # a question's rows under one label or several
        per_label = summarize(conf, correct, groups=questions, human_frac=h, by=labels)
        assert list(per_label) == sorted(set(labels))
        for label, s in per_label.items():
            mine = labels == label
            alone = summarize(conf[mine], correct[mine], groups=questions[mine], human_frac=h[mine])
            assert set(s) == set(alone)
            assert all(same(s[key], alone[key], tol=1e-12) for key in s), label
        total, again = summarize(
            conf, correct, groups=questions, human_frac=h, by=labels, total=True
        )
        assert again == per_label
        assert set(total) == set(everything)
        assert all(same(total[key], everything[key], tol=1e-12) for key in total)


# ---------------------------------------------------------------------------------------
# GRACE: CalScore, MCE and h_t
# ---------------------------------------------------------------------------------------


def test_normalized_sigmoid_maps_minus_one_zero_one() -> None:
    assert normalized_sigmoid(-1.0) == pytest.approx(0.0, abs=1e-15)
    assert normalized_sigmoid(0.0) == pytest.approx(0.5)
    assert normalized_sigmoid(1.0) == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("conf", "correct", "human", "expected"),
    [
        ([1.0, 1.0, 1.0], [1, 1, 1], [0, 0, 0], 0.0),  # 1 − r(1) = 0: the best score
        ([1.0, 1.0, 1.0], [0, 0, 0], [0, 0, 0], 1.0),  # 1 − r(−1) = 1: confidently wrong
        ([0.0, 0.0], [1, 0], [0, 0], 0.5),  # no confidence: 1 − r(0) = 0.5
        ([1.0, 1.0], [1, 1], [1, 1], 0.5),  # humans already right: 1 − r(0) = 0.5
        ([1.0, 1.0], [0, 0], [1, 1], 0.5),  # ... also when wrong: no weight left
    ],
)
def test_calscore_anchors(
    conf: list[float], correct: list[int], human: list[float], expected: float
) -> None:
    assert calscore(conf, correct, human_frac=human) == pytest.approx(expected, abs=1e-12)


def test_calscore_hand_worked() -> None:
    # wrong at 0.5 with h=0, right at 0.8 with h=0.5:
    # mean = (1·(−1)·0.5 + 0.5·(+1)·0.8) / 2 = (−0.5 + 0.4)/2 = −0.05 → 1 − r(−0.05)
    value = calscore([0.5, 0.8], [0, 1], human_frac=[0.0, 0.5])
    assert value == pytest.approx(1 - r(-0.05))
    assert value == pytest.approx(0.52704, abs=1e-5)
    # MCE drops h: mean = (−0.5 + 0.8)/2 = 0.15 → 1 − r(0.15) = 0.41900
    assert mce_grace([0.5, 0.8], [0, 1]) == pytest.approx(1 - r(0.15))
    assert mce_grace([0.5, 0.8], [0, 1]) == pytest.approx(0.41900, abs=1e-5)


def test_reference_code_variants_hand_worked() -> None:
    # g ∈ {0,1}, no r: 1 − (0·0.5 + 0.5·1·0.8)/2 = 1 − 0.2 = 0.8; without h: 1 − 0.4 = 0.6
    assert calscore_ref([0.5, 0.8], [0, 1], human_frac=[0.0, 0.5]) == pytest.approx(0.8)
    assert mce_grace_ref([0.5, 0.8], [0, 1]) == pytest.approx(0.6)
    # Anchors: always right at confidence 1 → 0; a wrong answer earns nothing → 1.
    assert calscore_ref([1.0, 1.0], [1, 1], human_frac=[0, 0]) == pytest.approx(0.0)
    assert calscore_ref([1.0, 1.0], [0, 0], human_frac=[0, 0]) == pytest.approx(1.0)
    assert calscore_ref([1.0, 1.0], [1, 1], human_frac=[1, 1]) == pytest.approx(1.0)


@given(
    data=st.lists(
        st.tuples(st.floats(0, 1), st.booleans(), st.floats(0, 1)),
        min_size=1,
        max_size=20,
    )
)
def test_question_metrics_are_in_unit_interval_and_mce_is_calscore_without_humans(
    data: list[tuple[float, bool, float]],
) -> None:
    conf = [c for c, _, _ in data]
    correct = [int(g) for _, g, _ in data]
    human = [h for _, _, h in data]
    for fn in QUESTION_METRICS.values():
        assert -1e-12 <= fn(np.array(conf), np.array(correct, float), human_frac=human) <= 1 + 1e-12
    zeros = [0.0] * len(conf)
    assert same(mce_grace(conf, correct), calscore(conf, correct, human_frac=zeros))
    assert same(mce_grace_ref(conf, correct), calscore_ref(conf, correct, human_frac=zeros))


def test_question_metrics_check_their_inputs() -> None:
    with pytest.raises(ValueError, match="one value per step"):
        calscore([0.5, 0.5], [1, 1], human_frac=[0.0])
    with pytest.raises(ValueError, match=r"human_frac\[0\] = 1\.5"):
        calscore([0.5], [1], human_frac=[1.5])
    with pytest.raises(ValueError, match="empty"):
        mce_grace([], [])


def human_fraction_by_step(words, buzzes, *, definition="reference"):
    """h_t of one question's steps from ``(team, word, correct)`` buzzes."""
    return human_fraction(
        words,
        [w for _, w, _ in buzzes],
        [int(c) for _, _, c in buzzes],
        buzz_team=[t for t, _, _ in buzzes],
        definition=definition,
    )


def test_human_fraction_groups_questions_hand_worked() -> None:
    # q1: A right at 12, B wrong at 5; q2: C right at 3. Steps of q1 at words 10 and 20 and
    # of q2 at word 4: reference q1 [0/2, 1/2], q2 [1/1]; a buzz never counts on another
    # question.
    h = human_fraction(
        [10, 20, 4],
        [12, 5, 3],
        [1, 0, 1],
        step_groups=["q1", "q1", "q2"],
        buzz_groups=["q1", "q1", "q2"],
        buzz_team=["A", "B", "C"],
    )
    assert h.tolist() == [0.0, 0.5, 1.0]
    # a question without buzzes has h = 0
    assert human_fraction([9], [3], [1], step_groups=["q9"], buzz_groups=["q1"]).tolist() == [0]


def test_human_fraction_by_step_hand_worked() -> None:
    buzzes = [("A", 12, True), ("B", 5, False), ("C", 30, True)]
    # Three teams buzzed. Correct buzzes at words 12 (A) and 30 (C).
    # step ends at word 10 → 0/3; at 20 → 1/3; at 40 → 2/3
    assert human_fraction_by_step([10, 20, 40], buzzes) == pytest.approx([0, 1 / 3, 2 / 3])


def test_human_fraction_counts_a_buzz_on_the_last_word_of_the_prefix() -> None:
    assert human_fraction_by_step([11, 12], [("A", 12, True)]).tolist() == [0.0, 1.0]


def test_human_fraction_reference_counts_each_teams_latest_buzz_over_all_buzzes() -> None:
    # Team A negs at 3 then (another player) answers right at 8; B negs at 9: 3 buzzes.
    buzzes = [("A", 3, False), ("A", 8, True), ("B", 9, False)]
    # step to word 5: A's latest is its neg → 0/3; to 10: A's latest is correct → 1/3
    assert human_fraction_by_step([5, 10], buzzes) == pytest.approx([0.0, 1 / 3])
    # a team that answers right and then (in another room) wrong counts its latest
    assert human_fraction_by_step([8, 12], [("A", 4, True), ("A", 10, False)]).tolist() == [
        0.5,
        0.0,
    ]


def test_human_fraction_paper_divides_by_the_buzzes_so_far() -> None:
    buzzes = [("A", 3, False), ("A", 8, True), ("B", 9, False)]
    # to word 2: no buzz yet → 0; to 5: 0 of 1; to 8: 1 of 2; to 10: 1 of 3
    assert human_fraction_by_step([2, 5, 8, 10], buzzes, definition="paper") == pytest.approx(
        [0.0, 0.0, 0.5, 1 / 3]
    )
    with pytest.raises(ValueError, match="h_definition"):
        human_fraction_by_step([1], buzzes, definition="text")  # type: ignore[arg-type]


def test_human_fraction_pooled_over_rooms_hand_worked() -> None:
    # GRACE-style pooling: a dozen rooms' buzzes on one tossup, several on one word.
    buzzes = [("H6", 54, False), ("H1", 59, True), ("H12", 65, False), ("H7", 88, True),
              ("H15", 89, True), ("H13", 94, True), ("H4", 94, True), ("H3", 103, True),
              ("H14", 103, False), ("H17", 103, True), ("H5", 103, True)]  # fmt: skip
    words = [50, 60, 90, 94, 103]
    # reference: correct teams so far / 11 buzzes
    assert human_fraction_by_step(words, buzzes) == pytest.approx(
        [0 / 11, 1 / 11, 3 / 11, 5 / 11, 8 / 11]
    )
    # paper: correct buzzes so far / buzzes so far
    assert human_fraction_by_step(words, buzzes, definition="paper") == pytest.approx(
        [0.0, 1 / 2, 3 / 5, 5 / 7, 8 / 11]
    )


def test_human_fraction_is_zero_when_no_human_buzzed() -> None:
    assert human_fraction_by_step([3, 7, 9], []).tolist() == [0.0, 0.0, 0.0]


# ---------------------------------------------------------------------------------------
# Per-question values with groups=
# ---------------------------------------------------------------------------------------

# Two questions of one model: q1 (wrong at 0.5 with h = 0, right at 0.8 with h = ½) and
# q2 (wrong at 0.9 and at 0.2, no humans).
CONF = [0.5, 0.8, 0.9, 0.2]
CORRECT = [0, 1, 0, 0]
H = [0.0, 0.5, 0.0, 0.0]
GROUPS = ["q1", "q1", "q2", "q2"]


def test_question_metrics_per_question_and_mean_hand_worked() -> None:
    # q1: mean((1)(−1)(0.5), (½)(+1)(0.8)) = −0.05; q2: (−0.9 − 0.2)/2 = −0.55
    per_q = calscore(CONF, CORRECT, human_frac=H, groups=GROUPS, per_question=True)
    assert per_q == pytest.approx([1 - r(-0.05), 1 - r(-0.55)])
    assert calscore(CONF, CORRECT, human_frac=H, groups=GROUPS) == pytest.approx(
        ((1 - r(-0.05)) + (1 - r(-0.55))) / 2
    )
    # MCE ignores humans: q1 (−0.5 + 0.8)/2 = 0.15; q2 −0.55
    assert mce_grace(CONF, CORRECT, groups=GROUPS) == pytest.approx(
        ((1 - r(0.15)) + (1 - r(-0.55))) / 2
    )
    # reference code: q1 1 − (0 + ½·0.8)/2 = 0.8; q2 1 − 0 = 1 → 0.9
    assert calscore_ref(CONF, CORRECT, human_frac=H, groups=GROUPS) == pytest.approx(0.9)
    assert mce_grace_ref(CONF, CORRECT, groups=GROUPS, per_question=True) == pytest.approx(
        [0.6, 1.0]
    )


def test_per_question_values_follow_the_sorted_labels_and_ignore_row_order() -> None:
    order = [3, 1, 2, 0]
    shuffled = calscore(
        np.take(CONF, order),
        np.take(CORRECT, order),
        human_frac=np.take(H, order),
        groups=np.take(GROUPS, order),
        per_question=True,
    )
    assert shuffled == pytest.approx([1 - r(-0.05), 1 - r(-0.55)])
    # integer codes are used as they are
    codes = calscore(CONF, CORRECT, human_frac=H, groups=[0, 0, 1, 1], per_question=True)
    assert codes == pytest.approx(shuffled)


def test_groups_are_checked() -> None:
    with pytest.raises(ValueError, match="groups must be a 1-D array of 4 labels"):
        calscore(CONF, CORRECT, groups=["q1"])


# ---------------------------------------------------------------------------------------
# Bootstrap over questions
# ---------------------------------------------------------------------------------------


def test_bootstrap_resamples_questions_not_rows() -> None:
    # One question with rows that disagree: every resample is that same question, so the
    # interval collapses onto the point value. Row resampling would spread it out.
    point = brier([0.5, 0.8], [0, 1])
    for metric in ("brier", "log_loss"):
        interval = bootstrap_ci([0.5, 0.8], [0, 1], groups=["q1", "q1"], metric=metric,
                                n_resamples=50)  # fmt: skip
        if metric == "brier":
            assert interval == pytest.approx((point, point))
        assert interval[0] == pytest.approx(interval[1])


def test_bootstrap_interval_is_reproducible_and_brackets_the_questions() -> None:
    kw = {"groups": GROUPS, "human_frac": H, "n_resamples": 200, "seed": 3}
    low, high = bootstrap_ci(CONF, CORRECT, metric="calscore", **kw)
    assert (low, high) == bootstrap_ci(CONF, CORRECT, metric="calscore", **kw)
    # Two questions: resamples range from "q1 twice" to "q2 twice".
    q1, q2 = 1 - r(-0.05), 1 - r(-0.55)
    assert low == pytest.approx(min(q1, q2)) and high == pytest.approx(max(q1, q2))
    # the same through the generic path (a question metric not computed on sums)
    low_ref, high_ref = bootstrap_ci(CONF, CORRECT, metric="calscore_ref", **kw)
    assert (low_ref, high_ref) == pytest.approx((0.8, 1.0))


def test_bootstrap_of_ece_on_sums_equals_ece_of_the_rows_drawn() -> None:
    # The sums path and the metric itself agree resample by resample: with every question
    # drawn once (a single question) the interval is the ECE of the rows.
    conf, correct = [0.1, 0.1, 0.95, 1.0], [0, 1, 1, 1]
    low, high = bootstrap_ci(conf, correct, groups=[7] * 4, metric="ece", n_resamples=20)
    assert low == pytest.approx(0.2125) and high == pytest.approx(0.2125)
    # row metrics outside the sums path run on the rows drawn
    low, high = bootstrap_ci(conf, correct, groups=[7] * 4, metric="max_ce", n_resamples=5)
    assert low == pytest.approx(0.4) and high == pytest.approx(0.4)


def test_bootstrap_checks_arguments() -> None:
    with pytest.raises(ValueError, match="unknown metric = 'accuracy'"):
        bootstrap_ci(CONF, CORRECT, groups=GROUPS, metric="accuracy")
    with pytest.raises(ValueError, match="level"):
        bootstrap_ci(CONF, CORRECT, groups=GROUPS, metric="ece", level=1.5)
    with pytest.raises(ValueError, match="empty"):
        bootstrap_ci([], [], groups=[], metric="ece")


def test_bootstrap_ignores_undefined_resamples() -> None:
    # BSS is undefined on q2 alone (all wrong); those resamples are skipped.
    low, high = bootstrap_ci(CONF, CORRECT, groups=GROUPS, metric="bss", n_resamples=100)
    assert not math.isnan(low) and low <= high
    # missing confidences are left out: q2 has none, so every resample is q1's rows
    conf = [0.5, 0.8, math.nan, math.nan]
    low, high = bootstrap_ci(conf, CORRECT, groups=GROUPS, metric="brier", n_resamples=50)
    assert (low, high) != (math.nan, math.nan)
    assert high >= brier([0.5, 0.8], [0, 1]) - 1e-12


# ---------------------------------------------------------------------------------------
# Docstring examples and import hygiene
# ---------------------------------------------------------------------------------------


def test_docstring_examples_hold() -> None:
    result = doctest.testmod(metrics_module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 10
    assert result.failed == 0


def test_analysis_imports_no_framework() -> None:
    # every module of the analysis package, not just its __init__
    code = (
        "import importlib, pkgutil, sys, grace_arena.analysis as a\n"
        "for m in pkgutil.iter_modules(a.__path__):\n"
        "    importlib.import_module('grace_arena.analysis.' + m.name)\n"
        "bad = [m for m in ('sqlmodel', 'sqlalchemy', 'fastapi', 'textual', 'litellm',"
        " 'grace_arena.record', 'grace_arena.io') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@settings(max_examples=25)
@given(data=rows)
def test_registry_metrics_return_plain_floats(data: list[tuple[float, bool]]) -> None:
    conf, correct = as_arrays(data)
    assert all(type(fn(conf, correct)) is float for fn in METRICS.values())


# ---------------------------------------------------------------------------------------
# Prepared rows: the rows checked once, sorted and binned once, passed explicitly
# ---------------------------------------------------------------------------------------


def bitwise_equal(a: Any, b: Any) -> bool:
    """The same numbers to the last bit (NaN equal to NaN), floats or arrays."""
    return np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True)


def test_prepared_rows_sort_once_for_the_summary_and_the_curves_and_change_no_number(
    monkeypatch,
) -> None:
    rng = np.random.default_rng(7)
    conf = rng.random(5000)
    correct = (rng.random(5000) < conf).astype(float)
    questions = np.arange(5000) // 10
    alone = (
        summarize(conf, correct, groups=questions),
        risk_coverage_curve(conf, correct),
        ece(conf, correct),
        reliability_table(conf, correct),
    )
    sorts = []
    real_argsort = np.argsort
    monkeypatch.setattr(
        np, "argsort", lambda a, *k, **kw: sorts.append(a.size) or real_argsort(a, *k, **kw)
    )
    rows = PreparedRows.of(conf, correct)
    shared = (
        summarize(conf, correct, groups=questions, prepared=rows),
        risk_coverage_curve(rows),
        ece(rows),
        reliability_table(rows),
    )
    assert json.dumps(shared[0], sort_keys=True) == json.dumps(alone[0], sort_keys=True)
    assert bitwise_equal(shared[1].coverage, alone[1].coverage)
    assert bitwise_equal(shared[1].risk, alone[1].risk)
    assert shared[2] == alone[2] and shared[3] == alone[3]
    # one sort of the rows by confidence for the summary and the curve
    assert sorts.count(5000) == 1
    # a metric called on the arrays sorts them for itself: nothing is kept between calls
    sorts.clear()
    risk_coverage_curve(conf, correct)
    risk_coverage_curve(conf, correct)
    assert sorts.count(5000) == 2


def test_a_metric_of_arrays_sees_them_changed_in_place_and_prepared_rows_do_not_change() -> None:
    conf = np.array([0.1, 0.1, 0.95, 1.0])
    correct = np.array([0.0, 1.0, 1.0, 1.0])
    rows = PreparedRows.of(conf, correct)
    assert ece(conf, correct) == pytest.approx(0.2125)
    conf[:] = [0.9, 0.9, 0.05, 0.0]  # the same arrays, other numbers
    # (0.9·2 − 1) + |1 − 0.05| + |1 − 0| over 4 rows: every call reads the arrays as they are
    assert ece(conf, correct) == pytest.approx((0.8 + 0.95 + 1.0) / 4)
    assert brier(conf, correct) == pytest.approx((0.81 + 0.01 + 0.9025 + 1.0) / 4)
    summary = summarize(conf, correct)
    assert summary["ece"] == pytest.approx((0.8 + 0.95 + 1.0) / 4)
    # the prepared rows hold a copy of the rows they were given
    assert ece(rows) == pytest.approx(0.2125)
    assert rows.conf.tolist() == [0.1, 0.1, 0.95, 1.0]
    assert conf.flags.writeable and correct.flags.writeable  # the caller's arrays stay theirs


def test_prepared_rows_are_read_only_and_so_is_what_they_find() -> None:
    rows = PreparedRows.of([0.9, 0.2, 0.6, 0.6], [1, 0, 1, 0], groups=[0, 0, 1, 1])
    aurc(rows)  # finds the order and the tie blocks
    ece(rows)  # and the bins
    for arr in (rows.conf, rows.correct, rows.codes, rows.order, rows.blocks.conf,
                rows.uniform_sums(10)[0], rows.count):  # fmt: skip
        assert not arr.flags.writeable
        with pytest.raises(ValueError, match="read-only"):
            arr[0] = 0
    with pytest.raises(AttributeError):
        rows.conf = np.zeros(4)  # type: ignore[misc]
    # only PreparedRows.of builds them, which checks the rows
    with pytest.raises(TypeError, match=r"PreparedRows\.of"):
        PreparedRows(np.array([2.0]), np.array([1.0]), np.zeros(1, np.intp), 1, grouped=False)


@pytest.mark.parametrize(
    ("conf", "correct"),
    [
        ([0.5, float("nan")], [1, 0]),
        ([0.5, 1.5], [1, 0]),
        ([0.5, -0.1], [1, 0]),
        ([0.5, 0.6], [1, 2]),
        ([0.5, 0.6], [1]),
        ([], []),
        ([[0.5]], [[1]]),
        (["a"], [1]),
    ],
)
def test_prepared_rows_refuse_what_every_metric_refuses(conf, correct) -> None:
    with pytest.raises(ValueError) as by_metric:
        ece(conf, correct)
    with pytest.raises(ValueError) as prepared:
        PreparedRows.of(conf, correct)
    assert str(prepared.value) == str(by_metric.value)


def test_prepared_rows_carry_their_groups_and_weights_and_metrics_refuse_them_twice() -> None:
    conf, correct = [0.1, 0.1, 0.95, 1.0], [0, 1, 1, 1]
    grouped = PreparedRows.of(conf, correct, groups=["a", "a", "b", "b"])
    assert ece(grouped).round(6).tolist() == [0.4, 0.025]
    with pytest.raises(ValueError, match=r"give them to PreparedRows\.of"):
        ece(grouped, groups=["a", "a", "b", "b"])
    with pytest.raises(ValueError, match=r"give them to PreparedRows\.of"):
        ece(PreparedRows.of(conf, correct), correct)
    for fn in (reliability_table, risk_coverage_curve, smooth_reliability, calscore):
        with pytest.raises(ValueError, match="takes no groups"):
            fn(grouped)
    weighted = PreparedRows.of(conf, correct, sample_weight=[1, 1, 2, 0])
    assert brier(weighted) == pytest.approx((0.01 + 0.81 + 2 * 0.0025) / 4)
    for fn in (ace, aurc, auroc, max_calibration_error):
        with pytest.raises(ValueError, match="takes no sample weights"):
            fn(weighted)
    with pytest.raises(TypeError, match="conf and correct"):
        ece(conf)
    for takes_arrays in (summarize, drop_missing, partial(bootstrap_ci, groups=[0, 1, 2, 3])):
        with pytest.raises(ValueError, match="as arrays; prepared rows go to the metrics"):
            takes_arrays(PreparedRows.of(conf, correct), correct)


def test_summarize_refuses_prepared_rows_of_other_rows() -> None:
    conf, correct = [0.9, None, 0.2], [1, 1, 0]
    kept = PreparedRows.of([0.9, 0.2], [1, 0])
    assert summarize(conf, correct, prepared=kept) == summarize(conf, correct)
    for other in (
        PreparedRows.of([0.9, 0.3], [1, 0]),  # another confidence
        PreparedRows.of([0.9, 0.2], [1, 1]),  # another correctness
        PreparedRows.of([0.2, 0.9], [0, 1]),  # another order
        PreparedRows.of([0.9, 0.2, 0.2], [1, 0, 0]),  # more rows
        PreparedRows.of([0.9, 0.2], [1, 0], groups=[0, 1]),
    ):
        with pytest.raises(ValueError, match="prepared"):
            summarize(conf, correct, prepared=other)


@settings(max_examples=50, deadline=None)  # some forty metric calls per example
@given(data=grouped_data)
def test_every_metric_of_prepared_rows_equals_the_metric_of_the_arrays(
    data: list[tuple[float, bool, int]],
) -> None:
    conf = np.array([c for c, _, _ in data], dtype=float)
    correct = np.array([g for _, g, _ in data], dtype=float)
    groups = np.array([k for _, _, k in data], dtype=np.int64)
    grouped = PreparedRows.of(conf, correct, groups=groups)
    for name, fn in METRICS.items():
        assert bitwise_equal(fn(grouped), fn(conf, correct, groups=groups)), name
    if not conf.size:
        return
    rows = PreparedRows.of(conf, correct)
    for name, fn in METRICS.items():
        assert bitwise_equal(fn(rows), fn(conf, correct)), name
    for name, fn in QUESTION_METRICS.items():
        by_rows = fn(rows, human_frac=conf / 2, groups=groups, per_question=True)
        assert bitwise_equal(by_rows, fn(conf, correct, human_frac=conf / 2, groups=groups,
                                         per_question=True)), name  # fmt: skip
