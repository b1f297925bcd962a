"""Calibration metrics for model guesses, with and without human grounding.

Two families live here:

* **Row metrics** take one confidence and one correctness flag per row (a row is one
  clue prefix of one question): ECE, ACE, maximum calibration error, Brier score, Brier
  skill score, log loss, overconfidence rates and mean confidence when right / wrong.
  They are collected in the :data:`METRICS` registry, which :func:`summarize` runs.
* **GRACE question metrics** take the steps t = 1..T of one question: CalScore and GRACE's
  MCE (paper eq. 1 and appendix K) and the variants of the public reference code. The
  value for a data set is the mean over questions.

Conventions (see PRODUCT.md, "Calibration metrics"):

* ``conf`` is a 1-D array of confidences in [0, 1]; ``correct`` a 1-D array of 0/1 (or
  bool) of the same length. A metric function raises ``ValueError`` naming the first bad
  value. NaN marks a missing confidence (a verbalized answer that could not be parsed):
  metric functions refuse it, :func:`drop_missing` removes and counts it.
* Equal-width bins: bin i is ``[i/n, (i+1)/n)`` and the last bin is closed at 1.0, so a
  confidence of exactly 0.1 falls in bin 1 and 1.0 falls in the last bin. Edges are
  computed as ``i / n`` (correctly rounded, so they equal the floats parsed from "0.1",
  "0.3", ...), not with ``np.linspace`` (whose 0.30000000000000004 would move 0.3 down a
  bin). This differs from ``sklearn.calibration.calibration_curve``, whose bins are
  ``(a, b]`` with the first closed at 0, and from GRACE's code, which uses
  ``np.digitize(..., right=True) - 1`` and so puts a confidence of 0 in the last bin.
* Undefined values are ``float("nan")`` in the functions and ``None`` in the JSON-ready
  dicts returned by :func:`summarize` and :func:`summarize_steps`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "CONFIDENCE_KINDS",
    "HEADLINE_METRICS",
    "H_DEFINITIONS",
    "METRICS",
    "QUESTION_METRICS",
    "UNCATEGORIZED",
    "HumanBuzz",
    "ReliabilityBin",
    "Step",
    "ace",
    "bootstrap_ci",
    "brier",
    "brier_skill_score",
    "calscore_question",
    "calscore_ref_question",
    "drop_missing",
    "ece",
    "group_by_question",
    "human_fraction_by_step",
    "log_loss",
    "max_calibration_error",
    "mce_grace_question",
    "mce_grace_ref_question",
    "mean_confidence_when",
    "normalized_sigmoid",
    "overconfidence_rate",
    "reliability_table",
    "step_metric",
    "summarize",
    "summarize_steps",
]

FloatArray = NDArray[np.float64]
QuestionId = str | int
ConfidenceKind = Literal["logit", "verbal"]

#: The two confidences logged for every model step.
CONFIDENCE_KINDS: tuple[ConfidenceKind, ...] = ("logit", "verbal")
#: Metrics reported with a bootstrap confidence interval.
HEADLINE_METRICS: tuple[str, ...] = ("calscore", "ece", "brier")
#: Default clipping for :func:`log_loss`.
LOG_LOSS_EPS = 1e-6
#: Category key used for questions that carry none.
UNCATEGORIZED = "uncategorized"


# ---------------------------------------------------------------------------------------
# Records
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Step:
    """One model guess on one clue prefix of one question.

    ``word_index`` is the 0-based index of the last word of the prefix. A confidence of
    ``None`` (or NaN) means it is missing; it is left out of that kind's metrics and
    counted.
    """

    model: str
    question_id: QuestionId
    step: int
    word_index: int
    correct: bool
    confidence_logit: float | None
    confidence_verbal: float | None
    category: str | None = None


class HumanBuzz(NamedTuple):
    """A human team's buzz on a question (a plain ``(team, word_index, correct)`` works too)."""

    team: str
    word_index: int
    correct: bool


@dataclass(frozen=True, slots=True)
class ReliabilityBin:
    """One row of a reliability table.

    ``gap`` is ``mean_confidence - accuracy`` (positive = overconfident, KalshiBench's
    convention). Empty bins have ``count == 0`` and NaN statistics.
    """

    lower: float
    upper: float
    mean_confidence: float
    accuracy: float
    count: int
    gap: float

    def as_dict(self) -> dict[str, float | int | None]:
        """JSON-ready form: NaN becomes ``None``."""
        return {
            "lower": self.lower,
            "upper": self.upper,
            "mean_confidence": _none_if_nan(self.mean_confidence),
            "accuracy": _none_if_nan(self.accuracy),
            "count": self.count,
            "gap": _none_if_nan(self.gap),
        }


# ---------------------------------------------------------------------------------------
# Input checking
# ---------------------------------------------------------------------------------------


def _as_1d(name: str, values: ArrayLike) -> FloatArray:
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric: {exc}") from None
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array, got shape {arr.shape}")
    return arr


def _check_correct(correct: ArrayLike, name: str = "correct") -> FloatArray:
    arr = _as_1d(name, correct)
    bad = (arr != 0.0) & (arr != 1.0)  # NaN is bad too
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"{name} must be 0 or 1, got {name}[{i}] = {float(arr[i])!r}")
    return arr


def _check_unit_interval(name: str, arr: FloatArray, *, allow_nan: bool) -> None:
    nan = np.isnan(arr)
    if not allow_nan and nan.any():
        i = int(np.argmax(nan))
        raise ValueError(
            f"{name}[{i}] is NaN (a missing confidence); remove missing rows with "
            "drop_missing() first"
        )
    bad = ~nan & ((arr < 0.0) | (arr > 1.0))
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"{name} must lie in [0, 1], got {name}[{i}] = {float(arr[i])!r}")


def _check_rows(
    conf: ArrayLike, correct: ArrayLike, *, allow_missing: bool = False, allow_empty: bool = False
) -> tuple[FloatArray, FloatArray]:
    conf_arr = _as_1d("conf", conf)
    correct_arr = _check_correct(correct)
    if conf_arr.shape != correct_arr.shape:
        raise ValueError(
            "conf and correct must have the same length, got "
            f"{conf_arr.shape[0]} and {correct_arr.shape[0]}"
        )
    if not allow_empty and conf_arr.size == 0:
        raise ValueError("conf and correct are empty; a metric needs at least one row")
    _check_unit_interval("conf", conf_arr, allow_nan=allow_missing)
    return conf_arr, correct_arr


def _check_n_bins(n_bins: int) -> int:
    if isinstance(n_bins, bool) or not isinstance(n_bins, int | np.integer) or n_bins < 1:
        raise ValueError(f"n_bins must be a positive integer, got n_bins = {n_bins!r}")
    return int(n_bins)


def _check_probability(name: str, value: float) -> float:
    if not 0.0 <= value <= 1.0:  # also rejects NaN
        raise ValueError(f"{name} must lie in [0, 1], got {name} = {value!r}")
    return float(value)


def _none_if_nan(value: float | None) -> float | None:
    if value is None or math.isnan(value):
        return None
    return float(value)


def drop_missing(conf: ArrayLike, correct: ArrayLike) -> tuple[FloatArray, FloatArray, int]:
    """Remove rows whose confidence is missing (NaN or ``None``) and count them.

    Returns ``(conf, correct, n_missing)`` with both arrays checked like every metric's
    input, so the result can go straight into any metric.

    >>> conf, correct, n_missing = drop_missing([0.9, None, float("nan"), 0.2], [1, 0, 1, 0])
    >>> conf.tolist(), correct.tolist(), n_missing
    ([0.9, 0.2], [1.0, 0.0], 2)
    """
    conf_arr, correct_arr = _check_rows(conf, correct, allow_missing=True, allow_empty=True)
    keep = ~np.isnan(conf_arr)
    return conf_arr[keep], correct_arr[keep], int(conf_arr.size - keep.sum())


# ---------------------------------------------------------------------------------------
# Binned calibration errors
# ---------------------------------------------------------------------------------------


def _uniform_bin_index(conf: FloatArray, n_bins: int) -> NDArray[np.intp]:
    """Bin i = [i/n, (i+1)/n), the last bin closed at 1.0."""
    edges = np.arange(n_bins + 1) / n_bins
    return np.minimum(np.searchsorted(edges, conf, side="right") - 1, n_bins - 1)


def _quantile_bin_index(conf: FloatArray, correct: FloatArray, n_bins: int) -> NDArray[np.intp]:
    """Equal-mass groups: sort, then ``np.array_split`` into ``n_bins`` groups.

    Ties in confidence are broken by correctness (incorrect first), so the groups, and
    hence ACE, depend only on the multiset of rows and not on their order.
    """
    order = np.lexsort((correct, conf))
    sizes = [len(part) for part in np.array_split(order, n_bins)]
    idx = np.empty(conf.size, dtype=np.intp)
    idx[order] = np.repeat(np.arange(n_bins), sizes)
    return idx


def _bin_sums(
    idx: NDArray[np.intp], conf: FloatArray, correct: FloatArray, n_bins: int
) -> tuple[NDArray[np.intp], FloatArray, FloatArray]:
    count = np.bincount(idx, minlength=n_bins)
    sum_conf = np.bincount(idx, weights=conf, minlength=n_bins)
    sum_correct = np.bincount(idx, weights=correct, minlength=n_bins)
    return count, sum_conf, sum_correct


def ece(conf: ArrayLike, correct: ArrayLike, *, n_bins: int = 10) -> float:
    """Expected calibration error over equal-width bins.

    ``ECE = Σ_b (n_b / N) |acc_b − conf_b|`` with bin b = ``[b/n, (b+1)/n)`` and the last
    bin closed at 1.0; equivalently ``(1/N) Σ_b |Σ_{t∈b} g_t − Σ_{t∈b} c_t|`` (GRACE
    appendix G).

    Example: confidences 0.1, 0.1, 0.95, 1.0 with correctness 0, 1, 1, 1. Rows 1–2 sit on
    the edge 0.1 and fall in bin [0.1, 0.2): accuracy 0.5, confidence 0.1, gap 0.4. Rows 3–4
    fall in the last bin [0.9, 1.0]: accuracy 1, confidence 0.975, gap 0.025.
    ECE = 2/4 · 0.4 + 2/4 · 0.025 = 0.2125.

    >>> round(ece([0.1, 0.1, 0.95, 1.0], [0, 1, 1, 1]), 6)
    0.2125
    """
    conf_arr, correct_arr = _check_rows(conf, correct)
    n_bins = _check_n_bins(n_bins)
    _, sum_conf, sum_correct = _bin_sums(
        _uniform_bin_index(conf_arr, n_bins), conf_arr, correct_arr, n_bins
    )
    return float(np.abs(sum_correct - sum_conf).sum() / conf_arr.size)


def ace(conf: ArrayLike, correct: ArrayLike, *, n_bins: int = 10) -> float:
    """Adaptive calibration error: ECE over equal-mass bins.

    Rows are sorted by confidence (ties: incorrect before correct) and split with
    ``np.array_split`` into ``n_bins`` nearly equal groups (the first ``N mod n_bins``
    groups have one row more); then ``ACE = Σ_b (n_b / N) |acc_b − conf_b|``. Empty groups
    (when N < n_bins) contribute nothing. Not netcal's "ACE", which is an *average* error.

    Example with ``n_bins=2``: confidences 0.2, 0.4, 0.6, 0.8 and correctness 0, 1, 1, 1
    give groups {0.2, 0.4} (accuracy 0.5, confidence 0.3, gap 0.2) and {0.6, 0.8}
    (accuracy 1, confidence 0.7, gap 0.3). ACE = 0.5 · 0.2 + 0.5 · 0.3 = 0.25.

    >>> round(ace([0.8, 0.2, 0.6, 0.4], [1, 0, 1, 1], n_bins=2), 6)
    0.25
    """
    conf_arr, correct_arr = _check_rows(conf, correct)
    n_bins = _check_n_bins(n_bins)
    idx = _quantile_bin_index(conf_arr, correct_arr, n_bins)
    _, sum_conf, sum_correct = _bin_sums(idx, conf_arr, correct_arr, n_bins)
    return float(np.abs(sum_correct - sum_conf).sum() / conf_arr.size)


def max_calibration_error(conf: ArrayLike, correct: ArrayLike, *, n_bins: int = 10) -> float:
    """Maximum calibration error: the largest ``|acc_b − conf_b|`` over non-empty bins.

    Same equal-width bins as :func:`ece`. Called "MCE" in KalshiBench (eq. 5); named in
    full here because GRACE uses "MCE" for something else (:func:`mce_grace_question`).

    Example: confidences 0.1, 0.1, 0.95, 1.0 with correctness 0, 1, 1, 1 have gaps 0.4 in
    [0.1, 0.2) and 0.025 in [0.9, 1.0], so the maximum is 0.4.

    >>> round(max_calibration_error([0.1, 0.1, 0.95, 1.0], [0, 1, 1, 1]), 6)
    0.4
    """
    conf_arr, correct_arr = _check_rows(conf, correct)
    n_bins = _check_n_bins(n_bins)
    count, sum_conf, sum_correct = _bin_sums(
        _uniform_bin_index(conf_arr, n_bins), conf_arr, correct_arr, n_bins
    )
    filled = count > 0
    return float(np.max(np.abs(sum_correct[filled] - sum_conf[filled]) / count[filled]))


def reliability_table(
    conf: ArrayLike,
    correct: ArrayLike,
    *,
    n_bins: int = 10,
    strategy: Literal["uniform", "quantile"] = "uniform",
) -> list[ReliabilityBin]:
    """Per-bin mean confidence, accuracy, count and gap (confidence − accuracy).

    ``strategy="uniform"`` returns all ``n_bins`` equal-width bins (as in :func:`ece`),
    including empty ones (count 0, NaN statistics), with ``lower``/``upper`` the bin edges.
    ``strategy="quantile"`` returns the non-empty equal-mass groups of :func:`ace`, with
    ``lower``/``upper`` the smallest and largest confidence in the group.

    Example: ``reliability_table([0.1, 0.1, 0.95, 1.0], [0, 1, 1, 1])`` has bin 1
    [0.1, 0.2) with mean confidence 0.1, accuracy 0.5, count 2, gap −0.4, and bin 9
    [0.9, 1.0] with 0.975, 1.0, 2, −0.025; the other eight bins are empty.

    >>> [(b.lower, b.count) for b in reliability_table([0.1, 0.1, 0.95, 1.0], [0, 1, 1, 1])
    ...  if b.count]
    [(0.1, 2), (0.9, 2)]
    """
    conf_arr, correct_arr = _check_rows(conf, correct)
    n_bins = _check_n_bins(n_bins)
    if strategy == "uniform":
        idx = _uniform_bin_index(conf_arr, n_bins)
    elif strategy == "quantile":
        idx = _quantile_bin_index(conf_arr, correct_arr, n_bins)
    else:
        raise ValueError(f"strategy must be 'uniform' or 'quantile', got strategy = {strategy!r}")
    count, sum_conf, sum_correct = _bin_sums(idx, conf_arr, correct_arr, n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_conf = sum_conf / count
        accuracy = sum_correct / count
    table: list[ReliabilityBin] = []
    for b in range(n_bins):
        if strategy == "uniform":
            lower, upper = b / n_bins, (b + 1) / n_bins
        elif count[b] == 0:
            continue
        else:
            in_bin = conf_arr[idx == b]
            lower, upper = float(in_bin.min()), float(in_bin.max())
        table.append(
            ReliabilityBin(
                lower=lower,
                upper=upper,
                mean_confidence=float(mean_conf[b]),
                accuracy=float(accuracy[b]),
                count=int(count[b]),
                gap=float(mean_conf[b] - accuracy[b]),
            )
        )
    return table


# ---------------------------------------------------------------------------------------
# Proper scores and rates
# ---------------------------------------------------------------------------------------


def brier(conf: ArrayLike, correct: ArrayLike) -> float:
    """Brier score ``(1/N) Σ (c − g)²``; agrees with ``sklearn.metrics.brier_score_loss``.

    Example: (0.9 − 1)² + (0.6 − 0)² + (0.2 − 0)² = 0.01 + 0.36 + 0.04 = 0.41; /3 = 0.13667.

    >>> round(brier([0.9, 0.6, 0.2], [1, 0, 0]), 5)
    0.13667
    """
    conf_arr, correct_arr = _check_rows(conf, correct)
    return float(np.mean((conf_arr - correct_arr) ** 2))


def brier_skill_score(conf: ArrayLike, correct: ArrayLike) -> float:
    """Brier skill score ``1 − Brier / (ȳ (1 − ȳ))``, ȳ the accuracy of the same rows.

    Positive means better than always predicting the base rate ȳ. Undefined, and returned
    as ``float("nan")``, when ȳ is 0 or 1 (the reference Brier score is then 0).

    Example: Brier 0.41/3 as in :func:`brier`; ȳ = 1/3 so ȳ(1 − ȳ) = 2/9;
    BSS = 1 − (0.41/3)/(2/9) = 1 − 0.615 = 0.385.

    >>> round(brier_skill_score([0.9, 0.6, 0.2], [1, 0, 0]), 6)
    0.385
    """
    conf_arr, correct_arr = _check_rows(conf, correct)
    base_rate = float(correct_arr.mean())
    reference = base_rate * (1.0 - base_rate)
    if reference == 0.0:
        return math.nan
    return float(1.0 - np.mean((conf_arr - correct_arr) ** 2) / reference)


def log_loss(conf: ArrayLike, correct: ArrayLike, *, eps: float = LOG_LOSS_EPS) -> float:
    """Log loss ``−(1/N) Σ [g log p + (1 − g) log(1 − p)]``, ``p = clip(c, eps, 1 − eps)``.

    Clipping keeps a confidence of exactly 0 or 1 finite (at most −log(1e-6) ≈ 13.8 per
    row). Agrees with ``sklearn.metrics.log_loss`` given the clipped probabilities.

    Example: −(log 0.8 + log(1 − 0.4)) / 2 = (0.223144 + 0.510826) / 2 = 0.366985.

    >>> round(log_loss([0.8, 0.4], [1, 0]), 6)
    0.366985
    """
    conf_arr, correct_arr = _check_rows(conf, correct)
    if not 0.0 < eps < 0.5:
        raise ValueError(f"eps must lie in (0, 0.5), got eps = {eps!r}")
    p = np.clip(conf_arr, eps, 1.0 - eps)
    return float(-np.mean(correct_arr * np.log(p) + (1.0 - correct_arr) * np.log1p(-p)))


def overconfidence_rate(conf: ArrayLike, correct: ArrayLike, *, threshold: float) -> float:
    """Share of incorrect rows among rows with confidence strictly above ``threshold``.

    KalshiBench eq. 6, ``OCR@τ = |{c > τ ∧ wrong}| / |{c > τ}|``. ``float("nan")`` when no
    row has confidence above τ. A confidence equal to τ does not count.

    Example (τ = 0.8): rows with confidence 0.9, 0.85, 0.8 (correct 1, 0, 0) — 0.8 is not
    above τ, so 1 wrong out of 2 rows: 0.5.

    >>> overconfidence_rate([0.9, 0.85, 0.8], [1, 0, 0], threshold=0.8)
    0.5
    """
    conf_arr, correct_arr = _check_rows(conf, correct)
    threshold = _check_probability("threshold", threshold)
    above = conf_arr > threshold
    if not above.any():
        return math.nan
    return float(1.0 - correct_arr[above].mean())


def mean_confidence_when(conf: ArrayLike, correct: ArrayLike, *, correct_value: int) -> float:
    """Mean confidence over rows whose correctness equals ``correct_value`` (0 or 1).

    ``float("nan")`` when there is no such row.

    >>> mean_confidence_when([0.9, 0.7, 0.2], [1, 1, 0], correct_value=1)
    0.8
    """
    conf_arr, correct_arr = _check_rows(conf, correct)
    if correct_value not in (0, 1):
        raise ValueError(f"correct_value must be 0 or 1, got correct_value = {correct_value!r}")
    chosen = correct_arr == float(correct_value)
    if not chosen.any():
        return math.nan
    return float(conf_arr[chosen].mean())


#: Row metrics: name → function of already-cleaned ``(conf, correct)`` arrays.
METRICS: dict[str, Callable[[ArrayLike, ArrayLike], float]] = {
    "ece": ece,
    "ace": ace,
    "max_ce": max_calibration_error,
    "brier": brier,
    "bss": brier_skill_score,
    "log_loss": log_loss,
    "ocr_0.7": partial(overconfidence_rate, threshold=0.7),
    "ocr_0.8": partial(overconfidence_rate, threshold=0.8),
    "ocr_0.9": partial(overconfidence_rate, threshold=0.9),
    "conf_right": partial(mean_confidence_when, correct_value=1),
    "conf_wrong": partial(mean_confidence_when, correct_value=0),
}


def summarize(conf: ArrayLike, correct: ArrayLike) -> dict[str, float | int | None]:
    """Every row metric in :data:`METRICS`, plus ``n`` and ``n_missing``, JSON-ready.

    Missing confidences (NaN or ``None``) are left out and counted in ``n_missing``; ``n``
    is the number of rows used. Undefined values (no rows, BSS with one class, OCR with no
    row above τ, ...) are ``None``.

    >>> s = summarize([0.9, None, 0.2], [1, 1, 0])
    >>> s["n"], s["n_missing"], round(s["brier"], 6), s["ocr_0.9"]
    (2, 1, 0.025, None)
    """
    conf_arr, correct_arr, n_missing = drop_missing(conf, correct)
    out: dict[str, float | int | None] = {}
    for name, fn in METRICS.items():
        out[name] = _none_if_nan(fn(conf_arr, correct_arr)) if conf_arr.size else None
    out["n"] = int(conf_arr.size)
    out["n_missing"] = n_missing
    return out


# ---------------------------------------------------------------------------------------
# GRACE: CalScore and MCE per question
# ---------------------------------------------------------------------------------------


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


_SIGMOID_MINUS_ONE = _sigmoid(-1.0)
_SIGMOID_RANGE = _sigmoid(1.0) - _SIGMOID_MINUS_ONE


def normalized_sigmoid(x: float) -> float:
    """GRACE appendix K: ``r(x) = (σ(x) − σ(−1)) / (σ(1) − σ(−1))``, maps [−1, 1] to [0, 1].

    >>> normalized_sigmoid(-1.0), normalized_sigmoid(0.0), normalized_sigmoid(1.0)
    (0.0, 0.5, 1.0)
    """
    return (_sigmoid(x) - _SIGMOID_MINUS_ONE) / _SIGMOID_RANGE


def _check_question(
    conf: ArrayLike, correct: ArrayLike, human_frac: ArrayLike | None
) -> tuple[FloatArray, FloatArray, FloatArray]:
    conf_arr, correct_arr = _check_rows(conf, correct)
    if human_frac is None:
        return conf_arr, correct_arr, np.zeros_like(conf_arr)
    h = _as_1d("human_frac", human_frac)
    if h.shape != conf_arr.shape:
        raise ValueError(
            "human_frac must have one value per step, got "
            f"{h.shape[0]} values for {conf_arr.shape[0]} steps"
        )
    _check_unit_interval("human_frac", h, allow_nan=False)
    return conf_arr, correct_arr, h


def calscore_question(conf: ArrayLike, correct: ArrayLike, human_frac: ArrayLike) -> float:
    """CalScore of one question (GRACE eq. 1 with appendix K's normalisation).

    ``CalScore_q = 1 − r(mean_t[(1 − h_t) g±_t c_t])`` with ``g±_t = +1`` if the guess at
    step t is correct and −1 otherwise, ``c_t`` the confidence, ``h_t`` the fraction of
    human teams with a correct buzz by step t (:func:`human_fraction_by_step`) and ``r``
    :func:`normalized_sigmoid`. 0 is best (always right with confidence 1 before any
    human), 1 worst (always wrong with confidence 1); confidence 0 gives 0.5.

    Example: two steps, wrong at 0.5 with h = 0, then right at 0.8 with h = 0.5:
    mean = ((1)(−1)(0.5) + (0.5)(+1)(0.8)) / 2 = −0.05; σ(−0.05) = 0.48750,
    σ(−1) = 0.26894, σ(1) = 0.73106, so r(−0.05) = 0.21856 / 0.46212 = 0.47296 and
    CalScore = 0.52704.

    >>> round(calscore_question([0.5, 0.8], [0, 1], [0.0, 0.5]), 5)
    0.52704
    """
    conf_arr, correct_arr, h = _check_question(conf, correct, human_frac)
    signed = 2.0 * correct_arr - 1.0
    return 1.0 - normalized_sigmoid(float(np.mean((1.0 - h) * signed * conf_arr)))


def mce_grace_question(conf: ArrayLike, correct: ArrayLike) -> float:
    """GRACE's MCE of one question: CalScore without human adjustment (§4.2).

    ``MCE_q = 1 − r(mean_t[g±_t c_t])``. Not the maximum calibration error
    (:func:`max_calibration_error`).

    Example: wrong at 0.5, right at 0.8: mean = (−0.5 + 0.8)/2 = 0.15; σ(0.15) = 0.53743,
    r(0.15) = (0.53743 − 0.26894) / 0.46212 = 0.58100; MCE = 0.41900.

    >>> round(mce_grace_question([0.5, 0.8], [0, 1]), 5)
    0.419
    """
    conf_arr, correct_arr, _ = _check_question(conf, correct, None)
    signed = 2.0 * correct_arr - 1.0
    return 1.0 - normalized_sigmoid(float(np.mean(signed * conf_arr)))


def calscore_ref_question(conf: ArrayLike, correct: ArrayLike, human_frac: ArrayLike) -> float:
    """CalScore as computed by the public reference code (yysung/advcalibration).

    ``1 − mean_t[(1 − h_t) g_t c_t]`` with ``g_t ∈ {0, 1}`` and no normalisation ``r``.

    Example: wrong at 0.5 with h = 0, right at 0.8 with h = 0.5:
    1 − (0 + 0.5 · 0.8) / 2 = 0.8.

    >>> round(calscore_ref_question([0.5, 0.8], [0, 1], [0.0, 0.5]), 6)
    0.8
    """
    conf_arr, correct_arr, h = _check_question(conf, correct, human_frac)
    return float(1.0 - np.mean((1.0 - h) * correct_arr * conf_arr))


def mce_grace_ref_question(conf: ArrayLike, correct: ArrayLike) -> float:
    """Reference-code MCE: ``1 − mean_t[g_t c_t]`` with ``g_t ∈ {0, 1}`` (h = 0).

    >>> round(mce_grace_ref_question([0.5, 0.8], [0, 1]), 6)
    0.6
    """
    conf_arr, correct_arr, _ = _check_question(conf, correct, None)
    return float(1.0 - np.mean(correct_arr * conf_arr))


#: Question metrics: name → function of one question's ``(conf, correct, human_frac)``.
QUESTION_METRICS: dict[str, Callable[[FloatArray, FloatArray, FloatArray], float]] = {
    "calscore": calscore_question,
    "calscore_ref": calscore_ref_question,
    "mce_grace": lambda conf, correct, _h: mce_grace_question(conf, correct),
    "mce_grace_ref": lambda conf, correct, _h: mce_grace_ref_question(conf, correct),
}


#: The two definitions of ``h_t`` (PRODUCT.md): the reference code's (the default) and the
#: paper's text.
H_DEFINITIONS = ("reference", "paper")
HDefinition = Literal["reference", "paper"]


def check_h_definition(definition: str) -> str:
    if definition not in H_DEFINITIONS:
        raise ValueError(
            f"h_definition must be one of {', '.join(H_DEFINITIONS)}, got {definition!r}"
        )
    return definition


def human_fraction_by_step(
    step_last_word_indices: ArrayLike,
    human_buzzes: Iterable[tuple[str, int, bool]],
    *,
    definition: HDefinition = "reference",
) -> FloatArray:
    """``h_t`` for each step of one question, from the human buzzes pooled over every room
    that heard it. ``human_buzzes`` holds ``(team, word_index, correct)`` in the order they
    happened; a team is whoever buzzed (told apart by match and team where that is known).

    * ``definition="reference"`` (GRACE's public code, the default): the number of human
      teams whose latest buzz at a word index ≤ the last word of prefix t was correct,
      divided by the number of human buzzes on the question (every room, every t).
    * ``definition="paper"`` (GRACE §4.1's text): correct human buzzes at a word index ≤
      the last word of prefix t divided by all human buzzes up to there (0 when none).

    Both are 0 at every step when no human buzzed.

    Example: teams A (correct at word 12), B (wrong at 5) and C (correct at 30), steps
    ending at words 10, 20, 40. Reference: [0/3, 1/3, 2/3]. Paper: [0/1, 1/2, 2/3].

    >>> hb = [("A", 12, True), ("B", 5, False), ("C", 30, True)]
    >>> human_fraction_by_step([10, 20, 40], hb).round(4).tolist()
    [0.0, 0.3333, 0.6667]
    >>> human_fraction_by_step([10, 20, 40], hb, definition="paper").round(4).tolist()
    [0.0, 0.5, 0.6667]
    """
    check_h_definition(definition)
    last_words = _as_1d("step_last_word_indices", step_last_word_indices)
    buzzes = list(human_buzzes)
    if not buzzes:
        return np.zeros_like(last_words)
    words = np.array([float(w) for _, w, _ in buzzes])
    correct = np.array([bool(c) for _, _, c in buzzes])
    heard = words[None, :] <= last_words[:, None]  # step x buzz
    if definition == "paper":
        n = heard.sum(axis=1)
        hits = (heard & correct[None, :]).sum(axis=1)
        return np.where(n > 0, hits / np.maximum(n, 1), 0.0)
    heard_order = sorted(buzzes, key=lambda b: b[1])  # by word; a tie keeps the given order
    out = np.zeros_like(last_words)
    for t, w in enumerate(last_words):
        latest: dict[str, bool] = {}
        for team, word, ok in heard_order:
            if word <= w:
                latest[team] = bool(ok)
        out[t] = sum(latest.values()) / len(buzzes)
    return out


# ---------------------------------------------------------------------------------------
# Step records → per-model summaries
# ---------------------------------------------------------------------------------------


def _confidences(steps: Sequence[Step], kind: ConfidenceKind) -> FloatArray:
    if kind == "logit":
        values = [s.confidence_logit for s in steps]
    elif kind == "verbal":
        values = [s.confidence_verbal for s in steps]
    else:
        raise ValueError(f"kind must be 'logit' or 'verbal', got kind = {kind!r}")
    return np.array([math.nan if v is None else v for v in values], dtype=np.float64)


def _correctness(steps: Sequence[Step]) -> FloatArray:
    return np.array([1.0 if s.correct else 0.0 for s in steps], dtype=np.float64)


def group_by_question(steps: Iterable[Step]) -> dict[QuestionId, list[Step]]:
    """Steps grouped by question id (first-seen order), each group sorted by step.

    Raises ``ValueError`` if the same (model, question, step) appears twice or a
    confidence lies outside [0, 1], naming the step.
    """
    groups: dict[QuestionId, list[Step]] = {}
    seen: set[tuple[str, QuestionId, int]] = set()
    for s in steps:
        key = (s.model, s.question_id, s.step)
        where = f"model={s.model!r} question={s.question_id!r} step={s.step!r}"
        if key in seen:
            raise ValueError(f"duplicate step: {where}")
        seen.add(key)
        for kind, value in (("logit", s.confidence_logit), ("verbal", s.confidence_verbal)):
            if value is not None and not math.isnan(value) and not 0.0 <= value <= 1.0:
                raise ValueError(f"confidence_{kind} must lie in [0, 1], got {value!r} at {where}")
        groups.setdefault(s.question_id, []).append(s)
    for group in groups.values():
        group.sort(key=lambda s: s.step)
    return groups


def _question_scores(
    question: Sequence[Step],
    human_buzzes: Mapping[QuestionId, Sequence[tuple[str, int, bool]]],
    kind: ConfidenceKind,
    h_definition: HDefinition = "reference",
) -> dict[str, float] | None:
    """Every question metric for one question, or None if no step has a confidence."""
    conf = _confidences(question, kind)
    keep = ~np.isnan(conf)
    if not keep.any():
        return None
    h = human_fraction_by_step(
        [s.word_index for s in question],
        human_buzzes.get(question[0].question_id, ()),
        definition=h_definition,
    )
    correct = _correctness(question)
    return {name: fn(conf[keep], correct[keep], h[keep]) for name, fn in QUESTION_METRICS.items()}


def _summarize_questions(
    questions: Sequence[Sequence[Step]],
    human_buzzes: Mapping[QuestionId, Sequence[tuple[str, int, bool]]],
    kind: ConfidenceKind,
    h_definition: HDefinition = "reference",
) -> dict[str, Any]:
    per_question = [_question_scores(q, human_buzzes, kind, h_definition) for q in questions]
    scored = [s for s in per_question if s is not None]
    out: dict[str, Any] = {
        name: float(np.mean([s[name] for s in scored])) if scored else None
        for name in QUESTION_METRICS
    }
    rows = [s for q in questions for s in q]
    out.update(summarize(_confidences(rows, kind), _correctness(rows)))
    out["n_questions"] = len(scored)
    out["n_questions_skipped"] = len(per_question) - len(scored)
    return out


def _question_category(question: Sequence[Step]) -> str:
    for s in question:
        if s.category is not None:
            return s.category
    return UNCATEGORIZED


def summarize_steps(
    steps: Iterable[Step],
    human_buzzes: Mapping[QuestionId, Sequence[tuple[str, int, bool]]] | None = None,
    *,
    kinds: Sequence[ConfidenceKind] = CONFIDENCE_KINDS,
    h_definition: HDefinition = "reference",
) -> dict[str, dict[str, dict[str, Any]]]:
    """All metrics for every model and confidence kind, JSON-ready.

    Returns ``{model: {kind: metrics}}`` where ``metrics`` has

    * ``calscore``, ``calscore_ref``, ``mce_grace``, ``mce_grace_ref``: means over
      questions of the question metrics (:data:`QUESTION_METRICS`);
    * every row metric of :data:`METRICS` over all steps, with ``n`` and ``n_missing``;
    * ``n_questions`` (questions scored) and ``n_questions_skipped`` (no confidence left);
    * ``final``: the same keys over each question's final step only;
    * ``by_category``: ``{category: the same flat keys over all steps}`` (a question's
      category is the first one its steps carry, else ``"uncategorized"``).

    A missing confidence leaves its step out of that kind's metrics: the row metrics count
    it in ``n_missing``; CalScore drops it from the question's mean, and a question with no
    step left is skipped and counted. ``human_buzzes`` maps question id to that question's
    ``(team, word_index, correct)`` human buzzes; questions absent from it have h = 0.
    ``h_definition`` picks h_t's definition (:func:`human_fraction_by_step`).
    """
    check_h_definition(h_definition)
    hb: Mapping[QuestionId, Sequence[tuple[str, int, bool]]] = human_buzzes or {}
    by_model: dict[str, list[Step]] = {}
    for s in steps:
        by_model.setdefault(s.model, []).append(s)
    result: dict[str, dict[str, dict[str, Any]]] = {}
    for model in sorted(by_model):
        questions = list(group_by_question(by_model[model]).values())
        finals = [[q[-1]] for q in questions]
        by_category: dict[str, list[list[Step]]] = {}
        for q in questions:
            by_category.setdefault(_question_category(q), []).append(q)
        result[model] = {}
        for kind in kinds:
            metrics = _summarize_questions(questions, hb, kind, h_definition)
            metrics["final"] = _summarize_questions(finals, hb, kind, h_definition)
            metrics["by_category"] = {
                cat: _summarize_questions(qs, hb, kind, h_definition)
                for cat, qs in sorted(by_category.items())
            }
            result[model][kind] = metrics
    return result


# ---------------------------------------------------------------------------------------
# Bootstrap over questions
# ---------------------------------------------------------------------------------------

QuestionsMetric = Callable[[Sequence[Sequence[Step]]], float]


def step_metric(
    name: str,
    *,
    kind: ConfidenceKind = "logit",
    human_buzzes: Mapping[QuestionId, Sequence[tuple[str, int, bool]]] | None = None,
    h_definition: HDefinition = "reference",
) -> QuestionsMetric:
    """A metric over a list of questions (each a list of one model's steps), for bootstrapping.

    ``name`` is a question metric (``"calscore"``, ``"mce_grace"``, ...: mean over
    questions with at least one confidence) or a row metric of :data:`METRICS` (over all
    steps with a confidence). Returns NaN where the metric is undefined. Per-question work
    is cached, so calling it on many resamples of the same question lists is cheap.
    """
    if kind not in CONFIDENCE_KINDS:
        raise ValueError(f"kind must be 'logit' or 'verbal', got kind = {kind!r}")
    hb: Mapping[QuestionId, Sequence[tuple[str, int, bool]]] = human_buzzes or {}
    # id(question) -> (question, value); keeping the question alive keeps its id unique.
    cache: dict[int, tuple[Sequence[Step], Any]] = {}

    def cached(question: Sequence[Step], compute: Callable[[], Any]) -> Any:
        hit = cache.get(id(question))
        if hit is None or hit[0] is not question:
            hit = (question, compute())
            cache[id(question)] = hit
        return hit[1]

    def check_one_model(question: Sequence[Step]) -> None:
        if len({s.model for s in question}) > 1:
            raise ValueError(
                f"question {question[0].question_id!r} holds steps of several models; "
                "bootstrap one model at a time"
            )

    if name in QUESTION_METRICS:

        def question_metric(questions: Sequence[Sequence[Step]]) -> float:
            values = []
            for q in questions:
                check_one_model(q)
                scores = cached(q, lambda q=q: _question_scores(q, hb, kind, h_definition))
                if scores is not None:
                    values.append(scores[name])
            return float(np.mean(values)) if values else math.nan

        return question_metric

    if name in METRICS:
        fn = METRICS[name]

        def row_metric(questions: Sequence[Sequence[Step]]) -> float:
            for q in questions:
                check_one_model(q)
            parts = [
                cached(q, lambda q=q: drop_missing(_confidences(q, kind), _correctness(q)))
                for q in questions
            ]
            conf = np.concatenate([p[0] for p in parts]) if parts else np.empty(0)
            correct = np.concatenate([p[1] for p in parts]) if parts else np.empty(0)
            return fn(conf, correct) if conf.size else math.nan

        return row_metric

    known = ", ".join([*QUESTION_METRICS, *METRICS])
    raise ValueError(f"unknown metric name = {name!r}; known: {known}")


def bootstrap_ci(
    steps: Iterable[Step],
    metric_fn: QuestionsMetric,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[float, float]:
    """Percentile bootstrap interval for ``metric_fn``, resampling questions, not rows.

    The steps are grouped by question (:func:`group_by_question`); each resample draws as
    many questions as there are, with replacement, and passes the list of question groups
    (a question drawn twice appears twice) to ``metric_fn``, e.g.
    ``step_metric("calscore", kind="logit", human_buzzes=hb)``. Steps of one question are
    correlated, so resampling rows would give intervals that are too narrow. Resamples on
    which the metric is undefined (NaN) are ignored; if all are, ``(nan, nan)``.

    >>> steps = [Step("m", q, 1, 9, q % 2 == 0, 0.7, None) for q in range(6)]
    >>> low, high = bootstrap_ci(steps, step_metric("brier"), n_resamples=200)
    >>> round(low, 3), round(high, 3)
    (0.155, 0.423)
    """
    if isinstance(n_resamples, bool) or n_resamples < 1:
        raise ValueError(f"n_resamples must be a positive integer, got {n_resamples!r}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie in (0, 1), got level = {level!r}")
    questions = list(group_by_question(steps).values())
    if not questions:
        raise ValueError("steps are empty; nothing to resample")
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(questions), size=(n_resamples, len(questions)))
    stats = np.array([metric_fn([questions[i] for i in row]) for row in draws], dtype=float)
    stats = stats[~np.isnan(stats)]
    if stats.size == 0:
        return (math.nan, math.nan)
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(stats, [alpha, 1.0 - alpha])
    return (float(low), float(high))
