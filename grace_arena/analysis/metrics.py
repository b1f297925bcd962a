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
* Per-group values come from the same function: every row metric takes ``groups=``, a
  label for each row, and then returns an array with the metric of each group's rows, one
  value per label in sorted order (non-negative integer labels are used as they are: one
  value for each of 0 to the largest label, NaN for a label without rows). Without
  ``groups`` it returns a float, the metric of all the rows (one group). The question
  metrics' ``groups=`` labels each row's question, over which they average.
* Every metric is a function of its arguments alone. The rows come as two arrays
  ``(conf, correct)``, checked on each call, or as one :class:`PreparedRows`, checked once
  when it is built: a caller that scores the same rows with several metrics builds one and
  passes it to each (:func:`summarize` does for its metrics), so that the rows are sorted
  by confidence and binned once. It keeps read-only copies of the rows, so what it finds of
  them stays true.
* Undefined values are ``float("nan")`` in the functions and ``None`` in the JSON-ready
  dicts returned by :func:`summarize` and the analysis (:mod:`grace_arena.analysis.summary`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "BOOTSTRAP_SUMS",
    "CONFIDENCE_KINDS",
    "HEADLINE_METRICS",
    "H_DEFINITIONS",
    "METRICS",
    "QUESTION_METRICS",
    "SMOOTH_GRID",
    "UNCATEGORIZED",
    "BrierDecomposition",
    "PreparedRows",
    "ReliabilityBin",
    "RiskCoverage",
    "SmoothReliability",
    "ace",
    "aurc",
    "auroc",
    "bootstrap_ci",
    "brier",
    "brier_decomposition",
    "brier_skill_score",
    "calscore",
    "calscore_ref",
    "drop_missing",
    "ece",
    "group_codes",
    "human_fraction",
    "log_loss",
    "max_calibration_error",
    "mce_grace",
    "mce_grace_ref",
    "mean_confidence_when",
    "normalized_sigmoid",
    "overconfidence_rate",
    "percentile_interval",
    "question_sums",
    "reliability_table",
    "resample_counts",
    "risk_coverage_curve",
    "selective_accuracy",
    "smooth_band_sums",
    "smooth_bandwidth",
    "smooth_ece",
    "smooth_ece_bandwidth",
    "smooth_reliability",
    "stats_from_sums",
    "summarize",
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
# Input checking and groups
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
    if np.count_nonzero(arr) == np.count_nonzero(arr == 1.0):  # every non-zero is a 1
        return arr
    bad = (arr != 0.0) & (arr != 1.0)  # NaN is bad too
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"{name} must be 0 or 1, got {name}[{i}] = {float(arr[i])!r}")
    return arr


def _check_unit_interval(name: str, arr: FloatArray, *, allow_nan: bool) -> None:
    if arr.size:  # the usual case in two reductions; NaN fails min/max, fmin/fmax skip it
        low, high = (np.fmin, np.fmax) if allow_nan else (np.minimum, np.maximum)
        if low.reduce(arr) >= 0.0 and high.reduce(arr) <= 1.0:
            return
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
    if isinstance(conf, PreparedRows):
        raise ValueError(
            "this function takes conf and correct as arrays; prepared rows go to the metrics "
            "(and to summarize as prepared=)"
        )
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


def group_codes(groups: ArrayLike, n_rows: int) -> tuple[NDArray[np.intp], int]:
    """Integer codes ``0..k-1`` of ``groups`` in sorted order of the labels, and ``k``.

    Non-negative integer labels are used as they are (no sort: codes of absent labels are
    simply empty), so callers that already hold question codes pay nothing.
    """
    arr = np.asarray(groups)
    if arr.ndim != 1 or arr.shape[0] != n_rows:
        raise ValueError(f"groups must be a 1-D array of {n_rows} labels, got shape {arr.shape}")
    if arr.dtype.kind in "iu" and (arr.size == 0 or arr.min() >= 0):
        return arr.astype(np.intp, copy=False), int(arr.max()) + 1 if arr.size else 0
    labels, codes = np.unique(arr, return_inverse=True)
    return codes.astype(np.intp), int(labels.size)


def _group_labels(groups: ArrayLike, n_rows: int) -> tuple[NDArray[np.intp], NDArray[Any]]:
    """:func:`group_codes` with the label of each code (``0..k-1`` for integer labels)."""
    arr = np.asarray(groups)
    codes, k = group_codes(arr, n_rows)
    if arr.dtype.kind in "iu" and (arr.size == 0 or arr.min() >= 0):
        return codes, np.arange(k)
    return codes, np.unique(arr)


def _group_sum(codes: NDArray[np.intp], weights: Any, k: int) -> FloatArray:
    """``Σ weights`` per group (the plain sum when there is one group)."""
    if k == 1:
        return np.array([np.sum(weights, dtype=np.float64)])
    return np.bincount(codes, weights=weights, minlength=k).astype(np.float64, copy=False)


class PreparedRows:
    """Rows of the row metrics checked once, with what several metrics need of them found
    once: the caller that scores the same rows with several metrics builds one with
    :meth:`of` and passes it to each in place of ``conf`` and ``correct``
    (``ece(rows)``, ``brier(rows)``, ``risk_coverage_curve(rows)``, ...; ``summarize``
    takes it as ``prepared=``).

    It holds read-only copies of the checked rows (``conf``, ``correct``, and ``codes``,
    each row's group ``0..k-1``; ``weight`` when built with ``sample_weight``), so that what
    it finds of them on first use (their equal-width bins, their order by confidence, the tie
    blocks, the sums per group) stays true for as long as it lives: it is a value, and a
    metric of it is a function of that value alone. ``groups`` and ``sample_weight`` are
    given when it is built; a metric given prepared rows takes neither. Rows built with
    ``groups`` give one value per group, as a metric called with ``groups=`` does.

    >>> rows = PreparedRows.of([0.1, 0.1, 0.95, 1.0], [0, 1, 1, 1])
    >>> round(ece(rows), 6), round(brier(rows), 6), round(max_calibration_error(rows), 6)
    (0.2125, 0.205625, 0.4)
    >>> rows.conf[0] = 0.5
    Traceback (most recent call last):
    ...
    ValueError: assignment destination is read-only
    """

    __slots__ = ("_memo", "_per_row", "codes", "conf", "correct", "grouped", "k", "weight")
    conf: FloatArray
    correct: FloatArray
    codes: NDArray[np.intp]
    k: int
    grouped: bool
    weight: FloatArray | None
    _per_row: dict[Any, Any]
    _memo: dict[Any, Any]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("PreparedRows.of(conf, correct) builds prepared rows, and checks them")

    @classmethod
    def _checked(
        cls,
        conf: FloatArray,
        correct: FloatArray,
        codes: NDArray[np.intp],
        k: int,
        *,
        grouped: bool,
        weight: FloatArray | None = None,
        per_row: dict[Any, Any] | None = None,
    ) -> PreparedRows:
        """Rows already checked, in arrays no one else holds (:meth:`of` checks and copies
        them); the arrays are made read-only. ``per_row``: what is known of the same rows
        in another grouping (:meth:`_regroup`)."""
        for arr in (conf, correct, codes, weight):
            if arr is not None:
                arr.flags.writeable = False
        rows = object.__new__(cls)
        fields = {
            "conf": conf, "correct": correct, "codes": codes, "k": k, "grouped": grouped,
            "weight": weight, "_per_row": {} if per_row is None else per_row, "_memo": {},
        }  # fmt: skip
        for name, value in fields.items():
            object.__setattr__(rows, name, value)
        return rows

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"PreparedRows are read-only: cannot set {name!r}")

    @classmethod
    def of(
        cls,
        conf: ArrayLike,
        correct: ArrayLike,
        *,
        groups: ArrayLike | None = None,
        sample_weight: ArrayLike | None = None,
    ) -> PreparedRows:
        """Check the rows as every metric does (a ``ValueError`` names the first bad value)
        and keep read-only copies of them."""
        conf_arr, correct_arr = _check_rows(conf, correct, allow_empty=groups is not None)
        weight = None if sample_weight is None else _check_weight(sample_weight, conf_arr.size)
        if groups is None:
            codes, k = np.zeros(conf_arr.size, np.intp), 1
        else:
            codes, k = group_codes(groups, conf_arr.size)
            codes = codes.copy()
        return cls._checked(
            conf_arr.copy(), correct_arr.copy(), codes, k, grouped=groups is not None,
            weight=None if weight is None else weight.copy(),
        )  # fmt: skip

    def __len__(self) -> int:
        return int(self.conf.size)

    def __repr__(self) -> str:
        groups = f", {self.k} groups" if self.grouped else ""
        weights = ", weighted" if self.weight is not None else ""
        return f"<PreparedRows: {self.conf.size} rows{groups}{weights}>"

    def _regroup(self, codes: NDArray[np.intp], k: int) -> PreparedRows:
        """The same rows in other groups (``codes``, checked, no one else's), sharing what
        depends on the rows alone."""
        return PreparedRows._checked(self.conf, self.correct, codes, k, grouped=True,
                                     per_row=self._per_row)  # fmt: skip

    def _row_memo(self, key: Any, compute: Callable[[], Any]) -> Any:
        """What depends on the rows alone, found once for every grouping of them."""
        if key not in self._per_row:
            self._per_row[key] = _read_only(compute())
        return self._per_row[key]

    def _group_memo(self, key: Any, compute: Callable[[], Any]) -> Any:
        if key not in self._memo:
            self._memo[key] = _read_only(compute())
        return self._memo[key]

    def result(self, values: Any) -> Any:
        """A float without groups, else an array with one value per group."""
        values = np.asarray(values, dtype=np.float64)
        return values if self.grouped else float(values[0])

    def sum(self, values: Any) -> FloatArray:
        """``Σ values`` per group, each row counted by its sample weight."""
        weighted = values if self.weight is None else values * self.weight
        return _group_sum(self.codes, weighted, self.k)

    @property
    def count(self) -> FloatArray:
        """Rows per group (each counted by its sample weight)."""

        def compute() -> FloatArray:
            if self.weight is not None:
                return _group_sum(self.codes, self.weight, self.k)
            if self.k == 1:
                return np.array([float(self.conf.size)])
            return np.bincount(self.codes, minlength=self.k).astype(np.float64)

        return self._group_memo("count", compute)

    @property
    def hits(self) -> FloatArray:
        """Correct rows per group."""
        return self._group_memo("hits", lambda: self.sum(self.correct))

    def bins(self, n_bins: int) -> NDArray[np.intp]:
        """Each row's equal-width bin (:func:`_uniform_bin_index`)."""
        return self._row_memo(("bins", n_bins), lambda: _uniform_bin_index(self.conf, n_bins))

    def uniform_sums(self, n_bins: int) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Rows, confidence and correct rows per group and equal-width bin, ``(k, n_bins)``."""

        def compute() -> tuple[FloatArray, FloatArray, FloatArray]:
            bins = self.bins(n_bins)
            cell = self.codes * n_bins + bins if self.k > 1 else bins
            size = self.k * n_bins
            return _cell_sums(cell, self.conf, self.correct, size, n_bins, self.weight)

        return self._group_memo(("uniform", n_bins), compute)

    @property
    def squared_errors(self) -> FloatArray:
        """``(c − g)²`` of each row."""
        return self._row_memo("squared", lambda: (self.conf - self.correct) ** 2)

    @property
    def sse(self) -> FloatArray:
        """Sum of squared errors per group."""
        return self._group_memo("sse", lambda: self.sum(self.squared_errors))

    @property
    def grid_cells(self) -> tuple[NDArray[np.intp], FloatArray]:
        """The rows' cells on the smoothing grid (:func:`_grid_cells`)."""
        return self._row_memo("grid", lambda: _grid_cells(self.conf))

    @property
    def order(self) -> NDArray[np.intp]:
        """Rows by group, then confidence, ties broken by correctness (incorrect first).

        One sort of an int64 key: the bits of a float in [0, 1] order like the float, with
        room for the correctness as a last bit (``(conf + 0.0)`` turns −0.0 into 0.0); then
        a stable sort by group (a radix sort of small integers). Rows equal in all three may
        come in any order, which no metric can see."""

        def by_confidence() -> NDArray[np.intp]:
            key = ((self.conf + 0.0).view(np.int64) << 1) | self.correct.astype(np.int64)
            return np.argsort(key)

        def compute() -> NDArray[np.intp]:
            order = self._row_memo("order", by_confidence)
            if self.k > 1:
                small = np.int16 if self.k <= np.iinfo(np.int16).max else np.int64
                order = order[np.argsort(self.codes[order].astype(small), kind="stable")]
            return order

        return self._group_memo("order", compute)

    @property
    def sorted(self) -> tuple[FloatArray, FloatArray, NDArray[np.intp]]:
        """Confidence, correctness and group of the rows in :attr:`order`."""
        order = self.order
        codes = self.codes  # one group: all zeros, in any order
        return self._group_memo(
            "sorted",
            lambda: (self.conf[order], self.correct[order], codes[order] if self.k > 1 else codes),
        )

    @property
    def blocks(self) -> _TieBlocks:
        """Tie blocks: within each group, the distinct confidences in increasing order (of
        the rows alone when they are one group without weights)."""
        if self.k == 1 and self.weight is None:
            return self._row_memo("blocks", lambda: _TieBlocks.of(self))
        return self._group_memo("blocks", lambda: _TieBlocks.of(self))


def _read_only(value: Any) -> Any:
    """``value`` with its arrays (itself, those of a tuple, the fields of a dataclass) made
    read-only: what :class:`PreparedRows` keeps is shared by every metric it is passed to."""
    if isinstance(value, np.ndarray):
        value.flags.writeable = False
    elif isinstance(value, tuple):
        for item in value:
            _read_only(item)
    elif isinstance(value, _TieBlocks):
        for name in value.__slots__:
            _read_only(getattr(value, name))
    return value


def _cell_sums(
    cell: NDArray[np.intp],
    conf: FloatArray,
    correct: FloatArray,
    size: int,
    n_bins: int,
    weight: FloatArray | None = None,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Rows, confidence and correct rows per cell (group × bin), as ``(k, n_bins)`` arrays
    (rows counted by their ``weight``)."""
    values = (None, conf, correct) if weight is None else (weight, conf * weight, correct * weight)
    return tuple(  # type: ignore[return-value]
        np.bincount(cell, weights=w, minlength=size).astype(float, copy=False).reshape(-1, n_bins)
        for w in values
    )


@dataclass(frozen=True, slots=True)
class _TieBlocks:
    """Rows of equal confidence within a group: the blocks in increasing order of
    confidence within each group, the groups in order. Per block: its group, confidence,
    rows and correct rows, and the rows and correct rows of its group at or above its
    confidence (what a threshold at it keeps) and strictly below. Counts are whole
    numbers, so every sum of them is exact."""

    group: NDArray[np.intp]
    conf: FloatArray
    rows: FloatArray
    hits: FloatArray
    rows_kept: FloatArray
    hits_kept: FloatArray
    rows_below: FloatArray
    hits_below: FloatArray

    @classmethod
    def of(cls, r: PreparedRows) -> _TieBlocks:
        c, y, g = r.sorted
        start = np.ones(c.size, dtype=bool)
        np.not_equal(c[1:], c[:-1], out=start[1:])
        if r.k > 1:
            start[1:] |= g[1:] != g[:-1]
        starts = np.flatnonzero(start)
        group = g[starts]
        rows = np.diff(np.append(starts, c.size)).astype(float)
        hits = np.add.reduceat(y, starts) if c.size else np.zeros(0)
        first = np.minimum(np.searchsorted(group, np.arange(r.k)), max(group.size - 1, 0))

        def below(values: FloatArray) -> FloatArray:
            before = np.cumsum(values) - values  # over every earlier block, all groups
            return before - before[first][group] if values.size and r.k > 1 else before

        rows_below, hits_below = below(rows), below(hits)
        return cls(
            group, c[starts], rows, hits,
            r.count[group] - rows_below, r.hits[group] - hits_below, rows_below, hits_below,
        )  # fmt: skip


def _rows(
    conf: ArrayLike | PreparedRows,
    correct: ArrayLike | None,
    groups: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None,
    *,
    per_group: bool = True,
    weighted: bool = False,
) -> PreparedRows:
    """The rows a metric scores: ``conf`` itself when it is :class:`PreparedRows`, else
    ``(conf, correct)`` checked, with their groups and weights. ``per_group=False``: a
    metric without groups; ``weighted=False``: one without sample weights."""
    if isinstance(conf, PreparedRows):
        if correct is not None or groups is not None or sample_weight is not None:
            raise ValueError(
                "prepared rows carry their correctness, groups and weights: give them to "
                "PreparedRows.of, not again to the metric"
            )
        if conf.grouped and not per_group:
            raise ValueError("this metric takes no groups; prepare the rows without groups")
        if conf.weight is not None and not weighted:
            raise ValueError("this metric takes no sample weights; prepare the rows without them")
        return conf
    if correct is None:
        raise TypeError("a metric needs conf and correct, or one PreparedRows")
    return PreparedRows.of(conf, correct, groups=groups, sample_weight=sample_weight)


def _check_weight(sample_weight: ArrayLike, n: int) -> FloatArray:
    weight = _as_1d("sample_weight", sample_weight)
    if weight.size != n:
        raise ValueError(f"sample_weight must have one value per row, got {weight.size} for {n}")
    bad = ~((weight >= 0.0) & np.isfinite(weight))
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(
            "sample_weight must be finite and non-negative, got "
            f"sample_weight[{i}] = {float(weight[i])!r}"
        )
    return weight


def _divide(numerator: Any, denominator: Any) -> FloatArray:
    """``numerator / denominator``, NaN where the denominator is 0."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, numerator / denominator, np.nan)


# ---------------------------------------------------------------------------------------
# Binned calibration errors
# ---------------------------------------------------------------------------------------


def _uniform_bin_index(conf: FloatArray, n_bins: int) -> NDArray[np.intp]:
    """Bin i = [i/n, (i+1)/n), the last bin closed at 1.0: ``floor(c · n)``, moved by one
    where rounding put a confidence on the wrong side of an edge ``i / n``."""
    edges = np.arange(n_bins + 1) / n_bins
    idx = np.minimum((conf * n_bins).astype(np.intp), n_bins - 1)
    idx -= conf < edges[idx]
    idx += (idx < n_bins - 1) & (conf >= edges[np.minimum(idx + 1, n_bins)])
    return idx


def _quantile_sizes(r: PreparedRows, n_bins: int) -> NDArray[np.intp]:
    """Rows per group and equal-mass bin, ``(k, n_bins)``: each group's rows by confidence
    (ties: incorrect first, as in :attr:`PreparedRows.order`) split as ``np.array_split`` splits
    them into ``n_bins`` (the first ``n mod n_bins`` one row larger)."""
    size = r.count.astype(np.intp)
    return (size // n_bins)[:, None] + (np.arange(n_bins) < (size % n_bins)[:, None])


def _ece_from_gaps(gap: Any, n: Any) -> Any:
    """``Σ_b |Σ_{t∈b} g_t − Σ_{t∈b} c_t| / N`` from the per-bin gaps (last axis: bins)."""
    return np.abs(gap).sum(axis=-1) / n


def ece(
    conf: ArrayLike | PreparedRows,
    correct: ArrayLike | None = None,
    *,
    n_bins: int = 10,
    groups: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None,
) -> Any:
    """Expected calibration error over equal-width bins.

    ``ECE = Σ_b (n_b / N) |acc_b − conf_b|`` with bin b = ``[b/n, (b+1)/n)`` and the last
    bin closed at 1.0; equivalently ``(1/N) Σ_b |Σ_{t∈b} g_t − Σ_{t∈b} c_t|`` (GRACE
    appendix G). With ``groups``, one value per group (see the module docstring);
    ``sample_weight`` counts each row as that many rows (every count and sum weighted).

    Example: confidences 0.1, 0.1, 0.95, 1.0 with correctness 0, 1, 1, 1. Rows 1–2 sit on
    the edge 0.1 and fall in bin [0.1, 0.2): accuracy 0.5, confidence 0.1, gap 0.4. Rows 3–4
    fall in the last bin [0.9, 1.0]: accuracy 1, confidence 0.975, gap 0.025.
    ECE = 2/4 · 0.4 + 2/4 · 0.025 = 0.2125. Per group, the first two rows alone and the
    last two alone: 0.4 and 0.025.

    >>> round(ece([0.1, 0.1, 0.95, 1.0], [0, 1, 1, 1]), 6)
    0.2125
    >>> ece([0.1, 0.1, 0.95, 1.0], [0, 1, 1, 1], groups=["a", "a", "b", "b"]).round(6).tolist()
    [0.4, 0.025]
    """
    r = _rows(conf, correct, groups, sample_weight, weighted=True)
    n_bins = _check_n_bins(n_bins)
    _, sum_conf, sum_correct = r.uniform_sums(n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        return r.result(_ece_from_gaps(sum_correct - sum_conf, r.count))


def ace(
    conf: ArrayLike | PreparedRows,
    correct: ArrayLike | None = None,
    *,
    n_bins: int = 10,
    groups: ArrayLike | None = None,
) -> Any:
    """Adaptive calibration error: ECE over equal-mass bins.

    Rows are sorted by confidence (ties: incorrect before correct) and split with
    ``np.array_split`` into ``n_bins`` nearly equal groups (the first ``N mod n_bins``
    groups have one row more); then ``ACE = Σ_b (n_b / N) |acc_b − conf_b|``. Empty groups
    (when N < n_bins) contribute nothing. Not netcal's "ACE", which is an *average* error.

    With ``groups``, one value per group (see the module docstring).

    Example with ``n_bins=2``: confidences 0.2, 0.4, 0.6, 0.8 and correctness 0, 1, 1, 1
    give groups {0.2, 0.4} (accuracy 0.5, confidence 0.3, gap 0.2) and {0.6, 0.8}
    (accuracy 1, confidence 0.7, gap 0.3). ACE = 0.5 · 0.2 + 0.5 · 0.3 = 0.25.

    >>> round(ace([0.8, 0.2, 0.6, 0.4], [1, 0, 1, 1], n_bins=2), 6)
    0.25
    """
    r = _rows(conf, correct, groups)
    n_bins = _check_n_bins(n_bins)

    def compute() -> FloatArray:
        conf_sorted, correct_sorted, _ = r.sorted
        sizes = _quantile_sizes(r, n_bins).ravel()  # the cells are runs of the sorted rows
        filled = sizes > 0
        starts = (np.cumsum(sizes) - sizes)[filled]
        gap = np.zeros(sizes.size)
        if starts.size:
            gap[filled] = np.add.reduceat(correct_sorted - conf_sorted, starts)
        with np.errstate(invalid="ignore", divide="ignore"):
            return _ece_from_gaps(gap.reshape(r.k, n_bins), r.count)

    return r.result(compute())


def max_calibration_error(
    conf: ArrayLike | PreparedRows,
    correct: ArrayLike | None = None,
    *,
    n_bins: int = 10,
    groups: ArrayLike | None = None,
) -> Any:
    """Maximum calibration error: the largest ``|acc_b − conf_b|`` over non-empty bins.

    Same equal-width bins as :func:`ece`. Called "MCE" in KalshiBench (eq. 5); named in
    full here because GRACE uses "MCE" for something else (:func:`mce_grace_question`).

    With ``groups``, one value per group (see the module docstring).

    Example: confidences 0.1, 0.1, 0.95, 1.0 with correctness 0, 1, 1, 1 have gaps 0.4 in
    [0.1, 0.2) and 0.025 in [0.9, 1.0], so the maximum is 0.4.

    >>> round(max_calibration_error([0.1, 0.1, 0.95, 1.0], [0, 1, 1, 1]), 6)
    0.4
    """
    r = _rows(conf, correct, groups)
    n_bins = _check_n_bins(n_bins)
    count, sum_conf, sum_correct = r.uniform_sums(n_bins)
    gap = np.where(count > 0, np.abs(sum_correct - sum_conf) / np.maximum(count, 1), -np.inf)
    return r.result(np.where(r.count > 0, gap.max(axis=-1, initial=-np.inf), np.nan))


def reliability_table(
    conf: ArrayLike | PreparedRows,
    correct: ArrayLike | None = None,
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
    r = _rows(conf, correct, per_group=False)
    n_bins = _check_n_bins(n_bins)
    if strategy == "uniform":
        count, sum_conf, sum_correct = (s[0] for s in r.uniform_sums(n_bins))
    elif strategy == "quantile":
        idx = np.empty(r.conf.size, dtype=np.intp)
        idx[r.order] = np.repeat(np.arange(n_bins), _quantile_sizes(r, n_bins)[0])
        count, sum_conf, sum_correct = (
            s[0] for s in _cell_sums(idx, r.conf, r.correct, n_bins, n_bins)
        )
    else:
        raise ValueError(f"strategy must be 'uniform' or 'quantile', got strategy = {strategy!r}")
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
            in_bin = r.conf[idx == b]
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


def brier(
    conf: ArrayLike | PreparedRows,
    correct: ArrayLike | None = None,
    *,
    groups: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None,
) -> Any:
    """Brier score ``(1/N) Σ (c − g)²``; agrees with ``sklearn.metrics.brier_score_loss``,
    with ``sample_weight`` too (``Σ w (c − g)² / Σ w``).
    With ``groups``, one value per group (see the module docstring).

    Example: (0.9 − 1)² + (0.6 − 0)² + (0.2 − 0)² = 0.01 + 0.36 + 0.04 = 0.41; /3 = 0.13667.
    The first row alone scores 0.01, the other two (0.36 + 0.04)/2 = 0.2.

    >>> round(brier([0.9, 0.6, 0.2], [1, 0, 0]), 5)
    0.13667
    >>> brier([0.9, 0.6, 0.2], [1, 0, 0], groups=[0, 1, 1]).round(5).tolist()
    [0.01, 0.2]
    """
    r = _rows(conf, correct, groups, sample_weight, weighted=True)
    return r.result(_divide(r.sse, r.count))


def brier_skill_score(
    conf: ArrayLike | PreparedRows,
    correct: ArrayLike | None = None,
    *,
    groups: ArrayLike | None = None,
) -> Any:
    """Brier skill score ``1 − Brier / (ȳ (1 − ȳ))``, ȳ the accuracy of the same rows.

    Positive means better than always predicting the base rate ȳ. Undefined, and returned
    as ``float("nan")``, when ȳ is 0 or 1 (the reference Brier score is then 0).
    With ``groups``, one value per group (see the module docstring).

    Example: Brier 0.41/3 as in :func:`brier`; ȳ = 1/3 so ȳ(1 − ȳ) = 2/9;
    BSS = 1 − (0.41/3)/(2/9) = 1 − 0.615 = 0.385.

    >>> round(brier_skill_score([0.9, 0.6, 0.2], [1, 0, 0]), 6)
    0.385
    """
    r = _rows(conf, correct, groups)
    base_rate = _divide(r.hits, r.count)
    reference = base_rate * (1.0 - base_rate)
    with np.errstate(invalid="ignore", divide="ignore"):
        score = 1.0 - (r.sse / r.count) / reference
    return r.result(np.where(reference > 0.0, score, np.nan))


def log_loss(
    conf: ArrayLike | PreparedRows,
    correct: ArrayLike | None = None,
    *,
    eps: float = LOG_LOSS_EPS,
    groups: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None,
) -> Any:
    """Log loss ``−(1/N) Σ [g log p + (1 − g) log(1 − p)]``, ``p = clip(c, eps, 1 − eps)``.

    Clipping keeps a confidence of exactly 0 or 1 finite (at most −log(1e-6) ≈ 13.8 per
    row). Agrees with ``sklearn.metrics.log_loss`` given the clipped probabilities (with
    ``sample_weight`` too). With ``groups``, one value per group (see the module docstring).

    Example: −(log 0.8 + log(1 − 0.4)) / 2 = (0.223144 + 0.510826) / 2 = 0.366985.

    >>> round(log_loss([0.8, 0.4], [1, 0]), 6)
    0.366985
    """
    r = _rows(conf, correct, groups, sample_weight, weighted=True)
    if not 0.0 < eps < 0.5:
        raise ValueError(f"eps must lie in (0, 0.5), got eps = {eps!r}")

    def log_likelihood() -> FloatArray:
        p = np.clip(r.conf, eps, 1.0 - eps)
        # g log p + (1 − g) log(1 − p) is the log of the probability given to what happened
        return np.log(np.where(r.correct == 1.0, p, 1.0 - p))

    return r.result(-_divide(r.sum(r._row_memo(("log", eps), log_likelihood)), r.count))


def overconfidence_rate(
    conf: ArrayLike | PreparedRows,
    correct: ArrayLike | None = None,
    *,
    threshold: float,
    groups: ArrayLike | None = None,
) -> Any:
    """Share of incorrect rows among rows with confidence strictly above ``threshold``.

    KalshiBench eq. 6, ``OCR@τ = |{c > τ ∧ wrong}| / |{c > τ}|``. ``float("nan")`` when no
    row has confidence above τ. A confidence equal to τ does not count.
    With ``groups``, one value per group (see the module docstring).

    Example (τ = 0.8): rows with confidence 0.9, 0.85, 0.8 (correct 1, 0, 0) — 0.8 is not
    above τ, so 1 wrong out of 2 rows: 0.5.

    >>> overconfidence_rate([0.9, 0.85, 0.8], [1, 0, 0], threshold=0.8)
    0.5
    """
    r = _rows(conf, correct, groups)
    threshold = _check_probability("threshold", threshold)
    above = (r.conf > threshold).astype(np.float64)
    return r.result(1.0 - _divide(r.sum(above * r.correct), r.sum(above)))


def mean_confidence_when(
    conf: ArrayLike | PreparedRows,
    correct: ArrayLike | None = None,
    *,
    correct_value: int,
    groups: ArrayLike | None = None,
) -> Any:
    """Mean confidence over rows whose correctness equals ``correct_value`` (0 or 1).

    ``float("nan")`` when there is no such row.
    With ``groups``, one value per group (see the module docstring).

    >>> mean_confidence_when([0.9, 0.7, 0.2], [1, 1, 0], correct_value=1)
    0.8
    """
    r = _rows(conf, correct, groups)
    if correct_value not in (0, 1):
        raise ValueError(f"correct_value must be 0 or 1, got correct_value = {correct_value!r}")
    chosen = r.correct if correct_value == 1 else 1.0 - r.correct
    chosen_rows = r.hits if correct_value == 1 else r.count - r.hits
    return r.result(_divide(r.sum(chosen * r.conf), chosen_rows))


# ---------------------------------------------------------------------------------------
# Brier decomposition (Murphy 1973)
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BrierDecomposition:
    """Murphy's decomposition of the binned Brier score: ``binned = reliability −
    resolution + uncertainty`` (exactly; ``brier`` is the score of the confidences as they
    are, ``brier − binned`` what binning moves). Floats, or arrays (one value per group)
    from a call with ``groups``."""

    reliability: Any
    resolution: Any
    uncertainty: Any
    binned: Any
    brier: Any

    def as_dict(self) -> dict[str, float | None]:
        return {k: _none_if_nan(getattr(self, k)) for k in self.__slots__}


def brier_decomposition(
    conf: ArrayLike | PreparedRows,
    correct: ArrayLike | None = None,
    *,
    n_bins: int = 10,
    groups: ArrayLike | None = None,
) -> BrierDecomposition:
    """Reliability, resolution and uncertainty of the Brier score (Murphy 1973), over the
    equal-width bins of :func:`ece`.

    With ``n_b`` rows in bin b, mean confidence ``c̄_b``, accuracy ``ō_b`` and overall
    accuracy ``ō``: ``REL = Σ_b (n_b/N)(c̄_b − ō_b)²``, ``RES = Σ_b (n_b/N)(ō_b − ō)²``,
    ``UNC = ō(1 − ō)``. ``REL − RES + UNC`` equals the Brier score of the confidences
    replaced by their bin's mean (``binned``), since within a bin
    ``Σ (c̄_b − g)² = n_b (c̄_b − ō_b)² + n_b ō_b (1 − ō_b)``.
    With ``groups``, one value per group (see the module docstring).

    Example: confidences 0.1, 0.1 (right, wrong) and 0.95, 1.0 (both right): ō = 3/4,
    UNC = 3/16; REL = ½(0.1 − ½)² + ½(0.975 − 1)² = 0.0803125; RES = ½(½ − ¾)² +
    ½(1 − ¾)² = 0.0625; binned = 0.0803125 − 0.0625 + 0.1875 = 0.2053125.

    >>> d = brier_decomposition([0.1, 0.1, 0.95, 1.0], [0, 1, 1, 1])
    >>> round(d.reliability, 7), round(d.resolution, 4), round(d.binned, 7)
    (0.0803125, 0.0625, 0.2053125)
    """
    r = _rows(conf, correct, groups)
    n_bins = _check_n_bins(n_bins)
    count, sum_conf, sum_correct = r.uniform_sums(n_bins)
    base = _divide(r.hits, r.count)
    with np.errstate(invalid="ignore", divide="ignore"):
        c_bar, o_bar = sum_conf / count, sum_correct / count
        weight = count / r.count[:, None]
    filled = count > 0
    reliability = np.where(filled, weight * (c_bar - o_bar) ** 2, 0.0).sum(axis=-1)
    resolution = np.where(filled, weight * (o_bar - base[:, None]) ** 2, 0.0).sum(axis=-1)
    empty = r.count == 0
    reliability[empty] = resolution[empty] = np.nan
    uncertainty = base * (1.0 - base)
    return BrierDecomposition(
        reliability=r.result(reliability),
        resolution=r.result(resolution),
        uncertainty=r.result(uncertainty),
        binned=r.result(reliability - resolution + uncertainty),
        brier=r.result(_divide(r.sse, r.count)),
    )


# ---------------------------------------------------------------------------------------
# Selective prediction: ranking by confidence
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RiskCoverage:
    """The risk–coverage curve: keeping the rows with confidence ≥ ``threshold[j]`` covers
    ``coverage[j]`` of them with error rate ``risk[j]`` (thresholds decreasing)."""

    threshold: FloatArray
    coverage: FloatArray
    risk: FloatArray


def risk_coverage_curve(
    conf: ArrayLike | PreparedRows, correct: ArrayLike | None = None
) -> RiskCoverage:
    """Coverage and risk (share incorrect) of the rows kept at each confidence threshold.

    A buzz is a selective prediction: answering only when the confidence is at least τ
    covers ``#{c ≥ τ}/N`` of the rows with risk ``#{c ≥ τ, wrong}/#{c ≥ τ}``. One point per
    distinct confidence, so tied rows are kept or dropped together.

    >>> r = risk_coverage_curve([0.9, 0.8, 0.8, 0.3], [1, 1, 0, 0])
    >>> r.coverage.tolist(), r.risk.round(4).tolist()
    ([0.25, 0.75, 1.0], [0.0, 0.3333, 0.5])
    """
    r = _rows(conf, correct, per_group=False)
    b = r.blocks
    kept, right = b.rows_kept[::-1], b.hits_kept[::-1]
    return RiskCoverage(
        threshold=b.conf[::-1].copy(), coverage=kept / r.conf.size, risk=1.0 - right / kept
    )


def aurc(
    conf: ArrayLike | PreparedRows,
    correct: ArrayLike | None = None,
    *,
    groups: ArrayLike | None = None,
) -> Any:
    """Area under the risk–coverage curve: ``(1/N) Σ_k risk(k)`` over the rows ranked by
    confidence, where ``risk(k)`` is the error rate of the k most confident; tied rows all
    take the risk of their whole tie group (so the value does not depend on how ties are
    ordered). Lower is better; a ranking that puts every correct row first reaches the
    minimum for its accuracy.
    With ``groups``, one value per group (see the module docstring).

    Example: confidences 0.9 (right), 0.8, 0.8 (right, wrong), 0.3 (wrong): risks 0 for
    the first row, 1/3 for the tied pair, 1/2 for the last: (0 + 2/3 + 1/2)/4 = 0.29167.

    >>> round(aurc([0.9, 0.8, 0.8, 0.3], [1, 1, 0, 0]), 5)
    0.29167
    """
    r = _rows(conf, correct, groups)
    b = r.blocks
    risk = b.rows * (1.0 - b.hits_kept / b.rows_kept)
    return r.result(_divide(_group_sum(b.group, risk, r.k), r.count))


def selective_accuracy(
    conf: ArrayLike | PreparedRows,
    correct: ArrayLike | None = None,
    *,
    coverage: float = 0.8,
    groups: ArrayLike | None = None,
) -> Any:
    """Accuracy of the most confident rows at ``coverage``: the rows with confidence at least
    the highest threshold whose coverage reaches ``coverage`` (ties at that threshold are all
    kept, so slightly more may be covered).
    With ``groups``, one value per group (see the module docstring).

    >>> selective_accuracy([0.9, 0.8, 0.8, 0.3], [1, 1, 0, 0], coverage=0.5)
    0.6666666666666666
    """
    r = _rows(conf, correct, groups)
    if not 0.0 < coverage <= 1.0:
        raise ValueError(f"coverage must lie in (0, 1], got coverage = {coverage!r}")
    b = r.blocks
    # within a group the coverage falls as the threshold rises: the blocks that reach it
    # are the group's lowest ones, and the highest of those is the threshold
    reaches = b.rows_kept / r.count[b.group] >= coverage - 1e-12
    last = np.searchsorted(b.group, np.arange(r.k)) + _group_sum(b.group, reaches, r.k) - 1
    last = np.clip(last, 0, None).astype(np.intp)
    with np.errstate(invalid="ignore", divide="ignore"):
        value = b.hits_kept[last] / b.rows_kept[last] if b.group.size else np.zeros(r.k)
    return r.result(np.where(r.count > 0, value, np.nan))


def auroc(
    conf: ArrayLike | PreparedRows,
    correct: ArrayLike | None = None,
    *,
    groups: ArrayLike | None = None,
) -> Any:
    """Area under the ROC curve of the confidence as a score for correctness: the chance that
    a correct row has a higher confidence than an incorrect one, ties counting one half
    (agrees with ``sklearn.metrics.roc_auc_score(correct, conf)``). ``float("nan")`` when
    all rows are correct or all wrong.
    With ``groups``, one value per group (see the module docstring).

    Example: correct rows at 0.9 and 0.8, wrong ones at 0.8 and 0.3: of the 4 pairs, 3 are
    ordered right and one tied: (3 + ½)/4 = 0.875.

    >>> auroc([0.9, 0.8, 0.8, 0.3], [1, 1, 0, 0])
    0.875
    """
    r = _rows(conf, correct, groups)
    b = r.blocks
    misses = b.rows - b.hits
    misses_below = b.rows_below - b.hits_below  # wrong rows with a lower confidence
    pairs = _group_sum(b.group, b.hits * (misses_below + 0.5 * misses), r.k)
    return r.result(_divide(pairs, r.hits * (r.count - r.hits)))


# ---------------------------------------------------------------------------------------
# Smooth ECE (Błasiok and Nakkiran 2023)
# ---------------------------------------------------------------------------------------

#: Cells of the grid the smooth ECE is computed on (width 1/200 = 0.005).
SMOOTH_GRID = 200


@dataclass(frozen=True, slots=True)
class SmoothReliability:
    """The kernel-smoothed reliability curve: at each ``t`` (cell centres of the grid), the
    smoothed accuracy and the smoothed density of confidences, with the bandwidth used and
    the smooth ECE at that bandwidth."""

    t: FloatArray
    accuracy: FloatArray
    density: FloatArray
    bandwidth: float
    smooth_ece: float


def _grid_cells(conf: FloatArray, grid: int = SMOOTH_GRID) -> tuple[NDArray[np.intp], FloatArray]:
    """Linear binning: each row's weight goes ``1 − frac`` to cell ``lo`` and ``frac`` to
    cell ``lo + 1``, the two cell centres ``(i + ½)/grid`` around its confidence (all to the
    end cell beyond the first or last centre)."""
    pos = np.clip(conf * grid - 0.5, 0.0, grid - 1.0)
    lo = np.minimum(pos.astype(np.intp), grid - 2)
    return lo, pos - lo


def _grid_mass(
    conf: FloatArray,
    weights: FloatArray,
    grid: int = SMOOTH_GRID,
    *,
    codes: NDArray[np.intp] | None = None,
    k: int = 1,
    cells: tuple[NDArray[np.intp], FloatArray] | None = None,
) -> FloatArray:
    """Each row's weight binned linearly on the grid (:func:`_grid_cells`, or ``cells`` as
    it gave them); with ``codes``, per group: ``(k, grid)``."""
    lo, frac = _grid_cells(conf, grid) if cells is None else cells
    if codes is not None and k > 1:
        lo = lo + codes * grid
    size = k * grid
    mass = np.bincount(lo, weights=(1.0 - frac) * weights, minlength=size) + np.bincount(
        lo + 1, weights=frac * weights, minlength=size
    )
    mass = mass.astype(np.float64, copy=False)  # (bincount gives integers on no rows)
    return mass if codes is None else mass.reshape(k, grid)


def _smooth(mass: FloatArray, bandwidth: Any, grid: int = SMOOTH_GRID) -> FloatArray:
    """Gaussian smoothing (standard deviation ``bandwidth``, one per row of ``mass`` or one
    for all) of cell masses, reflected at 0 and 1 so that no mass leaves [0, 1] (every
    image, not just the nearest: the heat kernel with reflecting ends). In the cosine basis
    of the cells this is exact and cheap: the k-th coefficient is multiplied by
    ``exp(−(π k σ)² / 2)``."""
    from scipy.fft import dct, idct

    return idct(dct(mass, norm="ortho", axis=-1) * _damping(bandwidth, grid), norm="ortho", axis=-1)


def _damping(bandwidth: Any, grid: int = SMOOTH_GRID) -> FloatArray:
    sigma = np.asarray(bandwidth, dtype=np.float64)[..., None]
    return np.exp(-0.5 * (np.pi * np.arange(grid) * sigma) ** 2)


def _smooth_ece_at(residual: FloatArray, bandwidth: Any) -> Any:
    return np.abs(_smooth(residual, bandwidth)).sum(axis=-1)


def smooth_ece_bandwidth(residual_mass: FloatArray) -> Any:
    """The bandwidth σ* with ``smECE_σ* = σ*`` (Błasiok and Nakkiran's rule), by bisection
    on [1/grid, 1] (``smECE_σ`` falls as σ grows, so the fixed point is unique); σ* = 1/grid
    when even there ``smECE_σ < σ``. ``residual_mass`` is ``(g − c)/N`` binned on the grid;
    a ``(k, grid)`` array gives the k bandwidths of its rows (the bisections run side by
    side)."""
    from scipy.fft import dct, idct

    mass = np.asarray(residual_mass, dtype=np.float64)
    coefficients = dct(mass, norm="ortho", axis=-1)  # once: each σ only damps them

    def error(sigma: FloatArray) -> FloatArray:
        return np.abs(idct(coefficients * _damping(sigma), norm="ortho", axis=-1)).sum(axis=-1)

    shape = mass.shape[:-1]
    lo, hi = np.full(shape, 1.0 / SMOOTH_GRID), np.ones(shape)
    settled = error(lo) <= lo
    for _ in range(30):  # to within 1e-9
        mid = 0.5 * (lo + hi)
        above = error(mid) > mid
        lo, hi = np.where(above, mid, lo), np.where(above, hi, mid)
    sigma = np.where(settled, 1.0 / SMOOTH_GRID, 0.5 * (lo + hi))
    return float(sigma) if sigma.ndim == 0 else sigma


def smooth_ece(
    conf: ArrayLike | PreparedRows,
    correct: ArrayLike | None = None,
    *,
    bandwidth: float | None = None,
    groups: ArrayLike | None = None,
) -> Any:
    """Smooth ECE (Błasiok and Nakkiran 2023): the calibration error of the kernel-smoothed
    reliability curve, without bins.

    ``smECE_σ = ∫₀¹ |(1/N) Σ_i K_σ(t, c_i)(g_i − c_i)| dt`` with ``K_σ`` the Gaussian kernel
    of standard deviation σ reflected at 0 and 1 (all its images). The bandwidth is, unless
    given, their rule: the σ* with ``smECE_σ* = σ*`` (:func:`smooth_ece_bandwidth`), which is large
    enough to average noise on small samples and small enough to keep real miscalibration.
    Computed on a grid of :data:`SMOOTH_GRID` cells (width 0.005) with linear binning.
    With ``groups``, one value per group (see the module docstring), each at its own
    bandwidth unless ``bandwidth`` is given.

    Example: every row at confidence 0.9 and correct: the residual 0.1 sits at 0.9, and
    smoothing keeps its mass, so smECE_σ = 0.1 at any σ, and σ* = 0.1.

    >>> round(smooth_ece([0.9] * 10, [1] * 10), 6)
    0.1
    """
    r = _rows(conf, correct, groups)
    if bandwidth is not None and not float(bandwidth) > 0.0:
        raise ValueError(f"bandwidth must be positive, got bandwidth = {bandwidth!r}")
    filled = r.count > 0
    cells = r.grid_cells
    residual = _grid_mass(r.conf, r.correct - r.conf, codes=r.codes, k=r.k, cells=cells)[filled]
    residual /= r.count[filled, None]
    sigma = smooth_ece_bandwidth(residual) if bandwidth is None else float(bandwidth)
    value = np.full(r.k, np.nan)
    value[filled] = _smooth_ece_at(residual, sigma)
    return r.result(value)


def smooth_bandwidth(conf: ArrayLike | PreparedRows, correct: ArrayLike | None = None) -> float:
    """The bandwidth :func:`smooth_ece` and :func:`smooth_reliability` pick for these rows
    when none is given (:func:`smooth_ece_bandwidth` of their binned residual).

    >>> round(smooth_bandwidth([0.9] * 10, [1] * 10), 6)
    0.1
    """
    r = _rows(conf, correct, per_group=False)
    return float(smooth_ece_bandwidth(_residual_mass(r)))


def _residual_mass(r: PreparedRows) -> FloatArray:
    """``(g − c)/N`` of one group's rows binned on the grid."""
    return _grid_mass(r.conf, r.correct - r.conf, cells=r.grid_cells) / r.conf.size


def smooth_reliability(
    conf: ArrayLike | PreparedRows,
    correct: ArrayLike | None = None,
    *,
    bandwidth: float | None = None,
) -> SmoothReliability:
    """The smoothed reliability curve behind :func:`smooth_ece`: at each grid point t, the
    kernel regression of correctness on confidence ``Σ K(t, c_i) g_i / Σ K(t, c_i)`` (NaN
    where no confidence is near) and the density of confidences ``(1/N) Σ K(t, c_i)``."""
    r = _rows(conf, correct, per_group=False)
    c, y, cells = r.conf, r.correct, r.grid_cells
    residual = _residual_mass(r)
    sigma = smooth_ece_bandwidth(residual) if bandwidth is None else float(bandwidth)
    mass = _smooth(_grid_mass(c, np.ones_like(c), cells=cells), sigma)
    hits = _smooth(_grid_mass(c, y, cells=cells), sigma)
    with np.errstate(invalid="ignore", divide="ignore"):
        accuracy = np.where(mass > 1e-9 * c.size, hits / mass, np.nan)
    return SmoothReliability(
        t=(np.arange(SMOOTH_GRID) + 0.5) / SMOOTH_GRID,
        accuracy=accuracy,
        density=mass / c.size * SMOOTH_GRID,
        bandwidth=sigma,
        smooth_ece=float(_smooth_ece_at(residual, sigma)),
    )


def smooth_band_sums(
    conf: FloatArray,
    correct: FloatArray,
    codes: NDArray[np.intp],
    n_groups: int,
    *,
    bandwidth: float,
    points: NDArray[np.intp],
) -> FloatArray:
    """Per question (rows), the smoothed correct-row mass and row mass of
    :func:`smooth_reliability` at the grid cells ``points`` (columns: the hits at each
    point, then the masses): both are linear in the rows, so a question resample's smoothed
    accuracy at ``points`` is ``(counts @ hits) / (counts @ masses)``, which gives the
    bootstrap band of the reliability plot. Missing (NaN) confidences are left out.

    A question's rows put their linear-binning weights on its grid cells (a sparse row of
    question × cell, built in question order), and one sparse product with the smoothing
    operator at ``points`` gives every question's sums."""
    from scipy.sparse import csr_matrix

    keep = ~np.isnan(conf)
    c, y, q = conf[keep], correct[keep], codes[keep]
    if q.size and np.any(q[1:] < q[:-1]):  # questions together (stable: rows keep their order)
        order = np.argsort(q, kind="stable")
        c, y, q = c[order], y[order], q[order]
    lo, frac = _grid_cells(c)
    cells = np.column_stack([lo, lo + 1]).ravel()  # each row's two cells, side by side
    share = np.column_stack([1.0 - frac, frac]).ravel()
    bounds = np.zeros(n_groups + 1, dtype=np.intp)
    np.cumsum(2 * np.bincount(q, minlength=n_groups), out=bounds[1:])
    # cell -> smoothed at points: the smoothing is symmetric, so the points' own rows
    operator = _smooth(np.eye(SMOOTH_GRID)[points], bandwidth).T
    # one sparse matrix: the questions' correct rows, then the same questions' rows
    weights = np.concatenate([share * np.repeat(y, 2), share])
    rows = np.concatenate([bounds, bounds[1:] + bounds[-1]])
    both = csr_matrix((weights, np.tile(cells, 2), rows), shape=(2 * n_groups, SMOOTH_GRID))
    sums = np.asarray(both @ operator)
    return np.hstack([sums[:n_groups], sums[n_groups:]])


#: Row metrics: name → function of ``(conf, correct)`` arrays without missing values (and
#: ``groups=`` for one value per group), or of one :class:`PreparedRows`.
METRICS: dict[str, Callable[..., Any]] = {
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
    "smooth_ece": smooth_ece,
    "auroc": auroc,
    "aurc": aurc,
    "acc_at_80": partial(selective_accuracy, coverage=0.8),
}


def _compact(cells: NDArray[np.intp], size: int) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """Codes ``0..m-1`` of the cells present (in increasing order of cell), and those cells."""
    if size <= 4 * cells.size + 1024:
        present = np.bincount(cells, minlength=size) > 0
        return (np.cumsum(present) - 1)[cells], np.flatnonzero(present)
    used, codes = np.unique(cells, return_inverse=True)
    return codes.astype(np.intp), used


#: The entries of a summary that count rows or questions (integers).
_COUNTS = ("n", "n_missing", "n_questions", "n_questions_skipped")


def summarize(
    conf: ArrayLike,
    correct: ArrayLike,
    *,
    groups: ArrayLike | None = None,
    human_frac: ArrayLike | None = None,
    by: ArrayLike | None = None,
    total: bool = False,
    prepared: PreparedRows | None = None,
) -> Any:
    """Every row metric in :data:`METRICS`, the Brier decomposition
    (:func:`brier_decomposition`: ``brier_reliability``, ``brier_resolution``,
    ``brier_uncertainty``, ``brier_binned``), plus ``n`` and ``n_missing``, JSON-ready; with
    ``groups`` (each row's question) also every question metric of :data:`QUESTION_METRICS`
    (``human_frac``: h_t of each row, for CalScore), ``n_questions`` (questions with a
    confidence) and ``n_questions_skipped`` (questions whose every confidence is missing).

    Missing confidences (NaN or ``None``) are left out and counted in ``n_missing``; ``n``
    is the number of rows used. Undefined values (no rows, BSS with one class, OCR with no
    row above τ, ...) are ``None``.

    ``by`` (a label for each row) gives the same for each label's rows, as a dict from
    label to summary in sorted order of the labels (non-negative integers: each label
    from 0 to the largest). Every metric runs once over all the labels (its ``groups=``);
    each question is scored once and a label's question metrics are means over its
    questions (over its (label, question) pairs where a question's rows carry several
    labels). With ``total=True`` the summary of all the rows comes too, as
    ``(summary, {label: summary})``; both share the rows' checks, order by confidence,
    bins and question scores.

    ``prepared``: the rows that have a confidence (those :func:`drop_missing` keeps, in
    order), as :class:`PreparedRows` without groups or weights, for a caller that scores
    them with other metrics too: what the summary finds of them (their order by
    confidence, bins, ...) then serves those metrics. A ``ValueError`` says when they are
    not those rows.

    >>> s = summarize([0.9, None, 0.2], [1, 1, 0])
    >>> s["n"], s["n_missing"], round(s["brier"], 6), s["ocr_0.9"]
    (2, 1, 0.025, None)
    >>> per = summarize([0.9, None, 0.2], [1, 1, 0], by=["x", "x", "y"])
    >>> [(label, s["n"], s["n_missing"], round(s["brier"], 6)) for label, s in per.items()]
    [('x', 1, 1, 0.01), ('y', 1, 0, 0.04)]
    """
    conf_all, correct_all = _check_rows(conf, correct, allow_missing=True, allow_empty=True)
    n_all = conf_all.size
    whole = np.zeros(n_all, dtype=np.intp)
    if by is None:
        by_codes, labels = whole, np.zeros(1, dtype=np.intp)
    else:
        by_codes, labels = _group_labels(by, n_all)
    keep = ~np.isnan(conf_all)
    if prepared is None:  # checked above; fresh arrays (a selection copies)
        base = PreparedRows._checked(
            conf_all[keep], correct_all[keep], whole[keep], 1, grouped=False
        )
    else:
        base = _check_prepared(prepared, conf_all, correct_all, keep)
    # every metric on the same rows, grouped by label (and as one group): one check, one
    # sort and one binning for all
    groupings = [base._regroup(by_codes[keep], labels.size)]
    if by is not None and total:
        groupings.append(base._regroup(whole[keep], 1))
    all_codes = [by_codes, whole]
    questions = None
    if groups is not None:
        q_codes, n_q = group_codes(groups, n_all)
        h = None if human_frac is None else _as_1d("human_frac", human_frac)[keep]
        questions = _Questions(base, q_codes, n_q, keep, h)
    tables = []
    for rows, codes in zip(groupings, all_codes, strict=False):
        table: dict[str, Any] = {}
        if questions is not None:
            table.update(questions.summary(rows, codes))
        for name, fn in METRICS.items():
            table[name] = fn(rows)
        parts = brier_decomposition(rows)
        for part in ("reliability", "resolution", "uncertainty", "binned"):
            table[f"brier_{part}"] = getattr(parts, part)
        table["n"] = rows.count
        table["n_missing"] = np.bincount(codes[~keep], minlength=rows.k)
        for name in ("n_questions", "n_questions_skipped"):  # after the others
            if name in table:
                table[name] = table.pop(name)
        tables.append(table)
    summaries = [
        [
            {
                name: int(values[i]) if name in _COUNTS else _none_if_nan(values[i])
                for name, values in table.items()
            }
            for i in range(len(table["n"]))
        ]
        for table in tables
    ]
    if by is None:
        return summaries[0][0]
    per_label = {label.item() if hasattr(label, "item") else label: s
                 for label, s in zip(labels, summaries[0], strict=True)}  # fmt: skip
    return (summaries[1][0], per_label) if total else per_label


def _check_prepared(
    prepared: PreparedRows, conf: FloatArray, correct: FloatArray, keep: NDArray[np.bool_]
) -> PreparedRows:
    """``prepared`` when it holds the rows of ``conf`` and ``correct`` that ``keep`` selects,
    without groups or weights."""
    if not isinstance(prepared, PreparedRows):
        raise ValueError(f"prepared must be PreparedRows, got {type(prepared).__name__}")
    if prepared.grouped or prepared.weight is not None:
        raise ValueError("prepared rows for summarize must have no groups and no weights")
    n_kept = int(np.count_nonzero(keep))
    every = n_kept == conf.size  # (no selection to copy)
    same = (
        prepared.conf.size == n_kept
        and np.array_equal(prepared.conf, conf if every else conf[keep])
        and np.array_equal(prepared.correct, correct if every else correct[keep])
    )
    if not same:
        raise ValueError(
            "prepared must hold the rows of conf and correct that have a confidence, in order"
        )
    return prepared


class _Questions:
    """The questions of :func:`summarize`'s rows: each question (or (label, question) pair)
    scored once by every question metric, and a group's value the mean over its
    questions."""

    def __init__(
        self,
        rows: PreparedRows,
        codes: NDArray[np.intp],
        n_q: int,
        keep: NDArray[np.bool_],
        human_frac: FloatArray | None,
    ) -> None:
        self.rows, self.codes, self.n_q, self.keep = rows, codes, max(n_q, 1), keep
        self.h = human_frac
        self.scores: dict[Any, Any] = {}

    def _scored(self, cells: NDArray[np.intp], size: int) -> Any:
        """Each cell's score by every question metric, for the cells that have rows."""
        if not cells.size:
            return np.zeros(0, dtype=np.intp), {name: np.zeros(0) for name in QUESTION_METRICS}
        codes, used = _compact(cells, size)
        return used, {
            name: question_fn(self.rows, human_frac=self.h, groups=codes, per_question=True)
            for name, question_fn in QUESTION_METRICS.items()
        }

    def summary(self, rows: PreparedRows, group_of_row: NDArray[np.intp]) -> dict[str, FloatArray]:
        """Per group of ``rows`` (a grouping of this summary's rows): each question metric's
        mean over the group's questions, ``n_questions`` (questions with a confidence) and
        ``n_questions_skipped``."""
        k, n_q, keep = rows.k, self.n_q, self.keep
        if "questions" not in self.scores:  # every question once, on its kept rows
            self.scores["questions"] = self._scored(self.codes[keep], n_q)
        group_of_q = np.full(n_q, -1, dtype=np.intp)
        group_of_q[self.codes] = group_of_row
        if np.array_equal(group_of_q[self.codes], group_of_row):  # a question, one group
            used, per_q = self.scores["questions"]
            group, seen_q = group_of_q[used], np.flatnonzero(np.bincount(self.codes, minlength=n_q))
            seen = np.bincount(group_of_q[seen_q], minlength=k).astype(float)
        else:  # a question's rows in several groups: score each (group, question)
            cells = group_of_row * n_q + self.codes
            used, per_q = self._scored(cells[keep], k * n_q)
            group = used // n_q
            seen = np.bincount(_compact(cells, k * n_q)[1] // n_q, minlength=k).astype(float)
        scored = np.bincount(group, minlength=k).astype(float)
        out = {
            name: _divide(_group_sum(group, values, k), scored) for name, values in per_q.items()
        }
        out["n_questions"] = scored
        out["n_questions_skipped"] = seen - scored
        return out


def _per_group_mean(
    values: FloatArray, groups: ArrayLike | None, *, per_question: bool
) -> float | FloatArray:
    """Mean of ``values`` within each group, then (unless ``per_question``) over groups.

    ``per_question`` returns one value per group present, in sorted order of the labels.
    """
    if groups is None:
        mean = float(np.mean(values))
        return np.array([mean]) if per_question else mean
    codes, k = group_codes(groups, values.size)
    count = np.bincount(codes, minlength=k)
    present = count > 0
    means = np.bincount(codes, weights=values, minlength=k)[present] / count[present]
    return means if per_question else float(np.mean(means))


# ---------------------------------------------------------------------------------------
# GRACE: CalScore and MCE
# ---------------------------------------------------------------------------------------

_SIGMOID_MINUS_ONE = 1.0 / (1.0 + math.exp(1.0))
_SIGMOID_RANGE = 1.0 / (1.0 + math.exp(-1.0)) - _SIGMOID_MINUS_ONE


def normalized_sigmoid(x: ArrayLike) -> Any:
    """GRACE appendix K: ``r(x) = (σ(x) − σ(−1)) / (σ(1) − σ(−1))``, maps [−1, 1] to [0, 1].

    Elementwise on arrays; a float for a scalar.

    >>> normalized_sigmoid(-1.0), normalized_sigmoid(0.0), normalized_sigmoid(1.0)
    (0.0, 0.5, 1.0)
    """
    arr = np.asarray(x, dtype=np.float64)
    r = (1.0 / (1.0 + np.exp(-arr)) - _SIGMOID_MINUS_ONE) / _SIGMOID_RANGE
    return float(r) if r.ndim == 0 else r


def _check_question(
    conf: ArrayLike | PreparedRows, correct: ArrayLike | None, human_frac: ArrayLike | None
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """The rows of a question metric (prepared rows: their own, which a question metric
    takes without groups or weights: its ``groups`` are the questions) and ``h_t``."""
    if isinstance(conf, PreparedRows) or correct is None:
        r = _rows(conf, correct, per_group=False)
        conf_arr, correct_arr = r.conf, r.correct
    else:
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


def calscore(
    conf: ArrayLike | PreparedRows,
    correct: ArrayLike | None = None,
    *,
    human_frac: ArrayLike | None = None,
    groups: ArrayLike | None = None,
    per_question: bool = False,
) -> Any:
    """CalScore (GRACE eq. 1 with appendix K's normalisation), the mean over questions.

    ``CalScore_q = 1 − r(mean_t[(1 − h_t) g±_t c_t])`` over the steps t of question q, with
    ``g±_t = +1`` if the guess at step t is correct and −1 otherwise, ``c_t`` the
    confidence, ``h_t`` the fraction of human teams with a correct buzz by step t
    (:func:`human_fraction`; 0 when ``human_frac`` is not given) and ``r``
    :func:`normalized_sigmoid`. 0 is best (always right with confidence 1 before any
    human), 1 worst (always wrong with confidence 1); confidence 0 gives 0.5.

    ``groups`` labels each row with its question (``None``: all rows are one question);
    the result is the mean of ``CalScore_q`` over questions, or with ``per_question`` the
    array of ``CalScore_q`` in sorted order of the labels.

    Example: two steps, wrong at 0.5 with h = 0, then right at 0.8 with h = 0.5:
    mean = ((1)(−1)(0.5) + (0.5)(+1)(0.8)) / 2 = −0.05; σ(−0.05) = 0.48750,
    σ(−1) = 0.26894, σ(1) = 0.73106, so r(−0.05) = 0.21856 / 0.46212 = 0.47296 and
    CalScore = 0.52704.

    >>> round(calscore([0.5, 0.8], [0, 1], human_frac=[0.0, 0.5]), 5)
    0.52704
    """
    conf_arr, correct_arr, h = _check_question(conf, correct, human_frac)
    signed = 2.0 * correct_arr - 1.0
    means = _per_group_mean((1.0 - h) * signed * conf_arr, groups, per_question=True)
    scores = 1.0 - normalized_sigmoid(means)
    return scores if per_question else float(np.mean(scores))


def mce_grace(
    conf: ArrayLike | PreparedRows,
    correct: ArrayLike | None = None,
    *,
    groups: ArrayLike | None = None,
    per_question: bool = False,
) -> Any:
    """GRACE's MCE: CalScore without human adjustment (§4.2), the mean over questions.

    ``MCE_q = 1 − r(mean_t[g±_t c_t])``: :func:`calscore` with ``h_t = 0``. Not the maximum
    calibration error (:func:`max_calibration_error`).

    Example: wrong at 0.5, right at 0.8: mean = (−0.5 + 0.8)/2 = 0.15; σ(0.15) = 0.53743,
    r(0.15) = (0.53743 − 0.26894) / 0.46212 = 0.58100; MCE = 0.41900.

    >>> round(mce_grace([0.5, 0.8], [0, 1]), 5)
    0.419
    """
    return calscore(conf, correct, human_frac=None, groups=groups, per_question=per_question)


def calscore_ref(
    conf: ArrayLike | PreparedRows,
    correct: ArrayLike | None = None,
    *,
    human_frac: ArrayLike | None = None,
    groups: ArrayLike | None = None,
    per_question: bool = False,
) -> Any:
    """CalScore as computed by the public reference code (yysung/advcalibration).

    ``1 − mean_t[(1 − h_t) g_t c_t]`` per question with ``g_t ∈ {0, 1}`` and no
    normalisation ``r``; ``groups`` and ``per_question`` as in :func:`calscore`.

    Example: wrong at 0.5 with h = 0, right at 0.8 with h = 0.5:
    1 − (0 + 0.5 · 0.8) / 2 = 0.8.

    >>> round(calscore_ref([0.5, 0.8], [0, 1], human_frac=[0.0, 0.5]), 6)
    0.8
    """
    conf_arr, correct_arr, h = _check_question(conf, correct, human_frac)
    means = _per_group_mean((1.0 - h) * correct_arr * conf_arr, groups, per_question=True)
    scores = 1.0 - means
    return scores if per_question else float(np.mean(scores))


def mce_grace_ref(
    conf: ArrayLike | PreparedRows,
    correct: ArrayLike | None = None,
    *,
    groups: ArrayLike | None = None,
    per_question: bool = False,
) -> Any:
    """Reference-code MCE: ``1 − mean_t[g_t c_t]`` per question (:func:`calscore_ref`, h = 0).

    >>> round(mce_grace_ref([0.5, 0.8], [0, 1]), 6)
    0.6
    """
    return calscore_ref(conf, correct, human_frac=None, groups=groups, per_question=per_question)


#: GRACE's question metrics: name → function of ``(conf, correct, *, human_frac, groups,
#: per_question)`` or ``(rows, *, ...)`` with :class:`PreparedRows` without groups (the MCEs
#: ignore ``human_frac``).
QUESTION_METRICS: dict[str, Callable[..., Any]] = {
    "calscore": calscore,
    "calscore_ref": calscore_ref,
    "mce_grace": lambda conf, correct=None, *, human_frac=None, **kw: mce_grace(
        conf, correct, **kw
    ),
    "mce_grace_ref": lambda conf, correct=None, *, human_frac=None, **kw: mce_grace_ref(
        conf, correct, **kw
    ),
}


#: The two definitions of ``h_t`` (PRODUCT.md): the reference code's (the default) and the
#: paper's text.
H_DEFINITIONS = ("reference", "paper")
HDefinition = Literal["reference", "paper"]


def _labels(values: NDArray[Any]) -> NDArray[Any]:
    """Group labels as they are when integers, else as text (so mixed types compare)."""
    return values if values.dtype.kind in "iu" else values.astype(str)


def check_h_definition(definition: str) -> str:
    if definition not in H_DEFINITIONS:
        raise ValueError(
            f"h_definition must be one of {', '.join(H_DEFINITIONS)}, got {definition!r}"
        )
    return definition


def human_fraction(
    step_word_index: ArrayLike,
    buzz_word_index: ArrayLike,
    buzz_correct: ArrayLike,
    *,
    step_groups: ArrayLike | None = None,
    buzz_groups: ArrayLike | None = None,
    buzz_team: ArrayLike | None = None,
    definition: HDefinition = "reference",
) -> FloatArray:
    """``h_t`` of every step, from the human buzzes pooled over every room that heard the
    step's question.

    A step is the last word index of its prefix and its question (``step_groups``); a buzz is
    its word index, correctness, question (``buzz_groups``) and team (``buzz_team``: whoever
    buzzed, told apart by match and team where that is known; default: every buzz its own
    team). Buzzes are given in the order they happened (it breaks ties on a word).

    * ``definition="reference"`` (GRACE's public code, the default): the number of human
      teams whose latest buzz at a word index ≤ the step's last word was correct, divided by
      the number of human buzzes on the question (every room, every t).
    * ``definition="paper"`` (GRACE §4.1's text): correct human buzzes at a word index ≤
      the step's last word divided by all human buzzes up to there (0 when none).

    Both are 0 on questions without human buzzes. Each buzz changes a count by a step at its
    word (reference: +1 when a team's latest buzz turns correct, −1 when it turns wrong;
    paper: +1 per correct buzz and +1 per buzz), so h_t is a difference of cumulative sums
    found with one ``searchsorted`` over (question, word) keys.

    Example: teams A (correct at word 12), B (wrong at 5) and C (correct at 30), steps
    ending at words 10, 20, 40. Reference: [0/3, 1/3, 2/3]. Paper: [0/1, 1/2, 2/3].

    >>> h = human_fraction([10, 20, 40], [12, 5, 30], [1, 0, 1], buzz_team=["A", "B", "C"])
    >>> h.round(4).tolist()
    [0.0, 0.3333, 0.6667]
    >>> human_fraction([10, 20, 40], [12, 5, 30], [1, 0, 1], definition="paper").round(4).tolist()
    [0.0, 0.5, 0.6667]
    """
    check_h_definition(definition)
    step_words = _as_1d("step_word_index", step_word_index)
    words = _as_1d("buzz_word_index", buzz_word_index)
    ok = _check_correct(buzz_correct, "buzz_correct")
    if ok.shape != words.shape:
        raise ValueError("buzz_word_index and buzz_correct must have the same length")
    n = step_words.size
    if n == 0 or words.size == 0:
        return np.zeros(n)
    sg = np.zeros(n, dtype=object) if step_groups is None else np.asarray(step_groups)
    bg = np.zeros(words.size, dtype=object) if buzz_groups is None else np.asarray(buzz_groups)
    if sg.shape != step_words.shape or bg.shape != words.shape:
        raise ValueError("step_groups and buzz_groups must label every step and every buzz")
    both = np.concatenate([sg, bg])
    if both.dtype.kind in "iu" and both.min() >= 0:  # question codes already
        codes, n_labels = both.astype(np.int64), int(both.max()) + 1
    else:
        labels, codes = np.unique(_labels(both), return_inverse=True)
        n_labels = labels.size
    q_rows, q_buzz = codes[:n].astype(np.int64), codes[n:].astype(np.int64)
    words = words.astype(np.int64)
    span = int(max(words.max(initial=0), step_words.max(initial=0))) + 2
    keys = q_buzz * span + words
    if definition == "paper":
        num, den = ok, np.ones_like(ok)
    else:
        team = (
            np.arange(words.size)
            if buzz_team is None
            else group_codes(_labels(np.asarray(buzz_team)), words.size)[0]
        )
        # each team's buzzes on a question in the order heard (ties: given order)
        order = np.lexsort((np.arange(keys.size), words, team, q_buzz))
        same = np.zeros(order.size, dtype=bool)
        same[1:] = (q_buzz[order][1:] == q_buzz[order][:-1]) & (team[order][1:] == team[order][:-1])
        before = np.zeros(order.size)
        before[1:] = np.where(same[1:], ok[order][:-1], 0.0)
        num = np.empty_like(ok)
        num[order] = ok[order] - before
        den = None
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    cum_num = np.concatenate([[0.0], np.cumsum(num[order])])
    hi = np.searchsorted(sorted_keys, q_rows * span + step_words.astype(np.int64), "right")
    lo = np.searchsorted(sorted_keys, np.arange(n_labels) * span, "left")[q_rows]
    count = cum_num[hi] - cum_num[lo]
    if den is None:
        total = np.bincount(q_buzz, minlength=n_labels)[q_rows].astype(float)
    else:
        cum_den = np.concatenate([[0.0], np.cumsum(den[order])])
        total = cum_den[hi] - cum_den[lo]
    return np.where(total > 0, count / np.maximum(total, 1), 0.0)


# ---------------------------------------------------------------------------------------
# Bootstrap over questions
# ---------------------------------------------------------------------------------------


def resample_counts(
    n_groups: int,
    *,
    n_resamples: int,
    seed: int = 0,
    chunk: int = 100,
    dtype: type = np.float64,
) -> Iterator[NDArray[Any]]:
    """How often each of ``n_groups`` questions is drawn in each bootstrap resample.

    Yields ``(b, n_groups)`` matrices, ``b ≤ chunk``, ``n_resamples`` rows in all: resample i
    draws ``n_groups`` questions with replacement (``numpy.random.default_rng(seed)``, drawn
    as 64-bit integers, which ``np.bincount`` takes without a cast; below 2**32 questions
    they are the values 32-bit draws give), so a resampled mean of per-question sums is a
    matrix product with these counts.
    """
    rng = np.random.default_rng(seed)
    done = 0
    while done < n_resamples:
        b = min(chunk, n_resamples - done)
        draws = rng.integers(0, max(n_groups, 1), size=(b, n_groups), dtype=np.int64)
        counts = np.empty((b, n_groups), dtype=dtype)  # small integers: exact in float32
        for i in range(b):  # one bincount per row: faster than one over the whole block
            counts[i] = np.bincount(draws[i], minlength=n_groups)
        yield counts
        done += b


def percentile_interval(stats: ArrayLike, *, level: float = 0.95) -> Any:
    """The percentile interval of bootstrap statistics; NaN ones (the metric undefined on
    that resample) are left out, and ``(nan, nan)`` when all are. A 2-D ``stats`` (one
    column per statistic) gives the two arrays of the columns' lows and highs."""
    values = np.asarray(stats, dtype=np.float64)
    alpha = (1.0 - level) / 2.0
    if values.ndim == 2:
        low, high = np.full(values.shape[1], np.nan), np.full(values.shape[1], np.nan)
        whole = ~np.isnan(values).any(axis=0)
        if values.shape[0] and whole.any():
            low[whole], high[whole] = np.quantile(values[:, whole], [alpha, 1.0 - alpha], axis=0)
        for j in np.flatnonzero(~whole):
            low[j], high[j] = percentile_interval(values[:, j], level=level)
        return low, high
    values = values[~np.isnan(values)]
    if values.size == 0:
        return (math.nan, math.nan)
    low, high = np.quantile(values, [alpha, 1.0 - alpha])
    return (float(low), float(high))


def _check_bootstrap(n_resamples: int, level: float) -> None:
    if isinstance(n_resamples, bool) or n_resamples < 1:
        raise ValueError(f"n_resamples must be a positive integer, got {n_resamples!r}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie in (0, 1), got level = {level!r}")


#: The metrics whose bootstrap runs on per-question sums (one matrix product per chunk).
BOOTSTRAP_SUMS = ("calscore", "ece", "brier")


def question_sums(
    conf: FloatArray,
    correct: FloatArray,
    human_frac: FloatArray,
    codes: NDArray[np.intp],
    n_groups: int,
    *,
    n_bins: int = 10,
) -> FloatArray:
    """Per question (rows) the sums behind CalScore, ECE and Brier (columns), so that a
    resample's value is a function of ``counts @ sums`` (:func:`stats_from_sums`): the
    question's CalScore, whether it is scored, its rows, its squared errors, and per bin
    ``Σ g_t − Σ c_t`` (ECE's numerator is linear in the counts bin by bin). Rows with a
    missing (NaN) confidence are left out; a question left with none is unscored."""
    keep = ~np.isnan(conf)
    c, g, h, q = conf[keep], correct[keep], human_frac[keep], codes[keep]
    n = np.bincount(q, minlength=n_groups).astype(float)
    scored = n > 0
    per_q = np.zeros(n_groups)
    if scored.any():
        per_q[scored] = calscore(c, g, human_frac=h, groups=q, per_question=True)
    cell = q * n_bins + _uniform_bin_index(c, n_bins)
    size = n_groups * n_bins
    return np.column_stack(
        [
            per_q,
            scored.astype(float),
            n,
            np.bincount(q, weights=(c - g) ** 2, minlength=n_groups),
            np.bincount(cell, weights=g - c, minlength=size).reshape(n_groups, n_bins),
        ]
    )


def stats_from_sums(totals: FloatArray, *, n_bins: int = 10) -> dict[str, FloatArray]:
    """CalScore, ECE and Brier from resampled totals of :func:`question_sums` columns
    (one row per resample): the same formulas as :func:`calscore`, :func:`ece` and
    :func:`brier`, written on sums."""
    calscore_sum, scored, n, sse = (totals[:, j] for j in range(4))
    gap = totals[:, 4 : 4 + n_bins]
    with np.errstate(invalid="ignore", divide="ignore"):
        return {
            "calscore": calscore_sum / scored,
            "brier": sse / n,
            "ece": _ece_from_gaps(gap, n),
        }


def bootstrap_ci(
    conf: ArrayLike,
    correct: ArrayLike,
    *,
    groups: ArrayLike,
    metric: str = "calscore",
    human_frac: ArrayLike | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[float, float]:
    """Percentile bootstrap interval of ``metric``, resampling questions, not rows.

    Steps of one question are correlated, so resampling rows would give intervals that are
    too narrow. Each resample draws as many questions as there are (``groups`` labels each
    row's question), with replacement, and computes ``metric`` on the rows drawn (a question
    drawn twice counts twice). ``metric`` is a name of :data:`QUESTION_METRICS` (mean over
    questions) or :data:`METRICS`. Missing (NaN) confidences are left out; resamples on
    which the metric is undefined are ignored, and ``(nan, nan)`` when all are.

    >>> low, high = bootstrap_ci([0.7] * 6, [1, 0, 1, 0, 1, 0], groups=range(6),
    ...                          metric="brier", n_resamples=200)
    >>> round(low, 3), round(high, 3)
    (0.155, 0.423)
    """
    _check_bootstrap(n_resamples, level)
    conf_arr, correct_arr = _check_rows(conf, correct, allow_missing=True)
    h = np.zeros_like(conf_arr) if human_frac is None else _as_1d("human_frac", human_frac)
    codes, k = group_codes(np.asarray(list(groups) if isinstance(groups, range) else groups),
                           conf_arr.size)  # fmt: skip
    present = np.bincount(codes, minlength=k) > 0
    if not present.all():  # renumber so that every code is a question
        codes = (np.cumsum(present) - 1)[codes]
        k = int(present.sum())
    counts = np.vstack(list(resample_counts(k, n_resamples=n_resamples, seed=seed)))
    if metric in BOOTSTRAP_SUMS:
        sums = question_sums(conf_arr, correct_arr, h, codes, k)
        return percentile_interval(stats_from_sums(counts @ sums)[metric], level=level)
    keep = ~np.isnan(conf_arr)
    c, g, hk, q = conf_arr[keep], correct_arr[keep], h[keep], codes[keep]
    if metric in QUESTION_METRICS:
        scored = np.bincount(q, minlength=k) > 0
        per_q = np.zeros(k)
        if scored.any():
            per_q[scored] = QUESTION_METRICS[metric](
                c, g, human_frac=hk, groups=q, per_question=True
            )
        with np.errstate(invalid="ignore", divide="ignore"):
            stats = (counts @ per_q) / (counts @ scored.astype(float))
        return percentile_interval(stats, level=level)
    if metric not in METRICS:
        known = ", ".join([*QUESTION_METRICS, *METRICS])
        raise ValueError(f"unknown metric = {metric!r}; known: {known}")
    fn = METRICS[metric]
    order = np.argsort(q, kind="stable")
    starts = np.searchsorted(q[order], np.arange(k + 1))
    stats_list = []
    for row in counts.astype(np.intp):
        idx = np.concatenate(
            [np.tile(order[starts[j] : starts[j + 1]], row[j]) for j in np.flatnonzero(row)]
        )
        stats_list.append(fn(c[idx], g[idx]) if idx.size else math.nan)
    return percentile_interval(stats_list, level=level)
