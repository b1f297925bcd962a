"""Post-hoc recalibration of a model's confidences: temperature scaling, Platt scaling and
isotonic regression, fitted with question-grouped K-fold cross-validation.

* **Temperature scaling** (on the logit of the confidence): ``p = σ(logit(c) / T)`` with one
  parameter ``T > 0`` fitted by maximum likelihood. It keeps the order of the confidences
  and 0.5 fixed.
* **Platt scaling**: ``p = σ(a · logit(c) + b)``, logistic regression of correctness on the
  logit (what ``sklearn.linear_model.LogisticRegression`` without penalty fits on that one
  feature).
* **Isotonic regression**: the non-decreasing step function of ``c`` closest to the
  correctness in squared error (pool adjacent violators; ties in ``c`` pooled first), read
  between its points by linear interpolation and clipped outside them, as
  ``sklearn.isotonic.IsotonicRegression(out_of_bounds="clip")``.

``logit(c)`` is taken on ``clip(c, 1e-6, 1 − 1e-6)`` (as :func:`~grace_arena.analysis.metrics.
log_loss` clips), so confidences of exactly 0 or 1 stay finite.

**Cross-validation by question.** The steps of one question are correlated (one trajectory),
so they are never split: :func:`question_folds` puts each question, with all its steps, in
one of ``n_splits`` folds, and :func:`cross_val_predict` fits on the other folds and predicts
on it. Metrics of those out-of-fold confidences are honest "after" numbers; metrics of the
confidences as they are, the "before".

A fitted map (:class:`Calibrator`) is plain data (``to_dict``/``from_dict``), so it can be
stored (``grace-arena model calibrate``) and applied to new steps (``precompute`` and the buzz
policy).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from grace_arena.analysis.metrics import (
    LOG_LOSS_EPS,
    PreparedRows,
    _check_prepared,
    _check_rows,
    brier,
    ece,
    group_codes,
    log_loss,
)

__all__ = [
    "METHODS",
    "Calibrator",
    "cross_val_predict",
    "fit_calibrator",
    "logit",
    "question_folds",
    "read_calibration",
    "recalibration_report",
]

FloatArray = NDArray[np.float64]
Method = Literal["temperature", "platt", "isotonic"]
#: The recalibration methods, in the order reports list them.
METHODS: tuple[Method, ...] = ("temperature", "platt", "isotonic")
_NEWTON_STEPS = 50


def logit(conf: ArrayLike, *, eps: float = LOG_LOSS_EPS) -> FloatArray:
    """``log(p / (1 − p))`` of ``p = clip(conf, eps, 1 − eps)``.

    >>> logit([0.5, 0.8]).round(4).tolist()
    [0.0, 1.3863]
    """
    p = np.clip(np.asarray(conf, dtype=np.float64), eps, 1.0 - eps)
    return np.log(p) - np.log1p(-p)


def _sigmoid(z: FloatArray) -> FloatArray:
    from scipy.special import expit

    return expit(z)


def _newton_logistic(
    x: FloatArray,
    hits: FloatArray,
    weight: FloatArray,
    *,
    intercept: bool,
    start: tuple[float, float] = (1.0, 0.0),
) -> tuple[float, float]:
    """Maximum likelihood ``(a, b)`` of correctness ``~ σ(a x + b)`` (``b = 0`` without
    intercept) on rows aggregated by value: ``weight[i]`` rows at ``x[i]``, ``hits[i]`` of
    them correct. Newton's method from ``start``, halving a step that would raise the loss;
    stops when the Newton decrement ``gᵀH⁻¹g`` falls below 1e-20 per row."""
    a, b = start
    n = float(weight.sum())

    def loss(a: float, b: float) -> float:
        z = a * x + b
        return float(weight @ np.logaddexp(0.0, z) - hits @ z)

    current = None
    for _ in range(_NEWTON_STEPS):
        p = _sigmoid(a * x + b)
        r = weight * p - hits
        w = weight * p * (1.0 - p)
        if intercept:
            g = np.array([r @ x, r.sum()])
            wx = w @ x
            h = np.array([[w @ (x * x), wx], [wx, w.sum()]])
            try:
                step = np.linalg.solve(h, g)
            except np.linalg.LinAlgError:
                break
        else:
            hxx = float(w @ (x * x))
            if hxx <= 0.0:
                break
            step = np.array([float(r @ x) / hxx, 0.0])
        decrement = float(g @ step) if intercept else float(step[0] * (r @ x))
        if decrement < 1e-20 * n:
            break
        if decrement > 1e-6 * n:  # far from the optimum: make sure the step helps
            current = loss(a, b) if current is None else current
            t = 1.0
            while t > 1e-8 and (new := loss(a - t * step[0], b - t * step[1])) > current:
                t /= 2.0
            current = new
        else:  # near it, Newton's step is sound (the loss is convex)
            t, current = 1.0, None
        a, b = a - t * float(step[0]), b - t * float(step[1])
    return a, b


@dataclass(frozen=True)
class Calibrator:
    """A fitted recalibration map; :meth:`predict` applies it to confidences.

    ``params``: ``{"temperature": T}``, ``{"a": a, "b": b}`` (Platt) or ``{"x": [...],
    "y": [...]}`` (isotonic: the fitted points, increasing in x).
    """

    method: Method
    params: dict[str, Any]
    n: int = 0  # rows it was fitted on
    meta: dict[str, Any] = field(default_factory=dict)

    def predict(self, conf: ArrayLike) -> FloatArray:
        """The recalibrated confidences (NaN stays NaN: a missing confidence stays missing)."""
        c = np.asarray(conf, dtype=np.float64)
        out = np.full(c.shape, np.nan)
        ok = ~np.isnan(c)
        if self.method == "temperature":
            t = self.params["temperature"]  # None: no positive temperature fits, all 0.5
            out[ok] = 0.5 if t is None else _sigmoid(logit(c[ok]) / t)
        elif self.method == "platt":
            out[ok] = _sigmoid(self.params["a"] * logit(c[ok]) + self.params["b"])
        else:
            out[ok] = np.interp(c[ok], self.params["x"], self.params["y"])
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (:meth:`from_dict` reads it back)."""
        return {"method": self.method, "params": self.params, "n": self.n, **self.meta}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Calibrator:
        method = data.get("method")
        if method not in METHODS:
            raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
        params = dict(data.get("params") or {})
        needed = {"temperature": ("temperature",), "platt": ("a", "b"), "isotonic": ("x", "y")}
        missing = [k for k in needed[method] if k not in params]
        if missing:
            raise ValueError(f"a {method} map needs params {', '.join(missing)}")
        meta = {k: v for k, v in data.items() if k not in ("method", "params", "n")}
        return cls(method=method, params=params, n=int(data.get("n", 0)), meta=meta)


#: Above this many rows, fits run on cells of width 1e-4 of the confidence (see _Distinct).
EXACT_ROWS = 10_000
CELL = 1e-4


@dataclass(frozen=True)
class _Distinct:
    """Rows aggregated by confidence, in increasing order: what every fit needs, found once.

    Up to :data:`EXACT_ROWS` rows, one entry per distinct confidence. Above, one entry per
    cell of width :data:`CELL` that holds rows, at the mean confidence of its rows (exact
    when a cell holds one distinct value, as verbalized confidences do): the fits then cost
    the same on a million rows as on ten thousand, and move by far less than their
    sampling error.
    """

    conf: FloatArray  # increasing
    logit: FloatArray
    row: NDArray[np.intp]  # each row's entry

    @classmethod
    def of(cls, conf: FloatArray) -> _Distinct:
        if conf.size <= EXACT_ROWS:
            values, row = np.unique(conf, return_inverse=True)
            return cls(values, logit(values), row.astype(np.intp))
        cell = np.rint(conf / CELL).astype(np.intp)
        count = np.bincount(cell)
        used = np.flatnonzero(count)
        index = np.zeros(count.size, dtype=np.intp)
        index[used] = np.arange(used.size)
        first = np.zeros(count.size)
        first[cell[::-1]] = conf[::-1]  # a row of each cell: the mean as an offset from it
        offset = np.bincount(cell, weights=conf - first[cell]) / np.maximum(count, 1)
        values = (first + offset)[used]  # exactly the value where a cell holds one
        return cls(values, logit(values), index[cell])

    def totals(
        self, rows: NDArray[np.bool_] | slice, correct: FloatArray
    ) -> tuple[FloatArray, FloatArray]:
        """Rows and correct rows at each entry, over ``rows``."""
        idx = self.row[rows]
        size = self.conf.size
        return (
            np.bincount(idx, minlength=size).astype(float),
            np.bincount(idx, weights=correct[rows], minlength=size),
        )


def _fit(
    d: _Distinct,
    weight: FloatArray,
    hits: FloatArray,
    method: Method,
    start: dict[str, Any] | None = None,
    *,
    lists: bool = True,
) -> Calibrator:
    """Fit ``method`` on rows aggregated by distinct confidence (see :func:`fit_calibrator`);
    ``lists=False`` keeps an isotonic map's points as arrays (a map that is only applied)."""
    n = int(weight.sum())
    if method == "temperature":
        a0 = 1.0 / start["temperature"] if start and start.get("temperature") else 1.0
        a, _ = _newton_logistic(d.logit, hits, weight, intercept=False, start=(a0, 0.0))
        if a <= 0.0:  # confidence anti-correlated with correctness: T → ∞ fits best
            return Calibrator(method, {"temperature": None}, n=n)
        return Calibrator(method, {"temperature": float(1.0 / a)}, n=n)
    if method == "platt":
        a0, b0 = (start["a"], start["b"]) if start else (1.0, 0.0)
        a, b = _newton_logistic(d.logit, hits, weight, intercept=True, start=(a0, b0))
        return Calibrator(method, {"a": float(a), "b": float(b)}, n=n)
    if method == "isotonic":
        # pool adjacent violators (SciPy's, which scikit-learn's isotonic_regression calls)
        # on the distinct confidences, each weighted by its rows: ties in confidence are
        # pooled first; clipped to [0, 1] as scikit-learn's y_min, y_max
        from scipy.optimize import isotonic_regression

        seen = weight > 0
        fitted = isotonic_regression(hits[seen] / weight[seen], weights=weight[seen]).x
        x, y = d.conf[seen], np.clip(fitted, 0.0, 1.0)
        return Calibrator(
            method, {"x": x.tolist(), "y": y.tolist()} if lists else {"x": x, "y": y}, n=n
        )
    raise ValueError(f"method must be one of {', '.join(METHODS)}, got method = {method!r}")


def fit_calibrator(conf: ArrayLike, correct: ArrayLike, *, method: Method) -> Calibrator:
    """Fit a recalibration map of ``method`` (``"temperature"``, ``"platt"`` or
    ``"isotonic"``, see the module docstring) on confidences and correctness.

    Example: confidences 0.9 right, 0.9 wrong, 0.6 right, 0.6 wrong are overconfident at
    0.9: isotonic regression pools them to 0.5 everywhere, and Platt scaling finds
    ``a = 0`` (the confidence tells nothing), ``b = 0``: 0.5 for every confidence.

    >>> fit_calibrator([0.9, 0.9, 0.6, 0.6], [1, 0, 1, 0], method="isotonic").predict(
    ...     [0.6, 0.9]).tolist()
    [0.5, 0.5]
    >>> [round(v, 6) + 0.0 for v in fit_calibrator(
    ...     [0.9, 0.9, 0.6, 0.6], [1, 0, 1, 0], method="platt").params.values()]
    [0.0, 0.0]
    """
    c, y = _check_rows(conf, correct)
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got method = {method!r}")
    d = _Distinct.of(c)
    weight, hits = d.totals(slice(None), y)
    return _fit(d, weight, hits, method)


def question_folds(groups: ArrayLike, *, n_splits: int = 5, seed: int = 0) -> NDArray[np.intp]:
    """The fold (``0..n_splits-1``) of each row: questions (``groups``) are shuffled with
    ``numpy.random.default_rng(seed)`` and dealt to the folds in turn, so every step of a
    question is in the same fold and the folds hold nearly equal numbers of questions.

    >>> f = question_folds(["a", "a", "b", "c", "c", "d"], n_splits=2)
    >>> bool(f[0] == f[1] and f[3] == f[4]), sorted(np.bincount(f).tolist())
    (True, [3, 3])
    """
    if isinstance(n_splits, bool) or not isinstance(n_splits, int) or n_splits < 2:
        raise ValueError(f"n_splits must be an integer >= 2, got n_splits = {n_splits!r}")
    arr = np.asarray(groups)
    codes, k = group_codes(arr, arr.shape[0] if arr.ndim == 1 else -1)
    present = np.flatnonzero(np.bincount(codes, minlength=k) > 0)
    if present.size < n_splits:
        raise ValueError(
            f"n_splits = {n_splits} folds need at least as many questions, got {present.size}"
        )
    fold_of = np.zeros(k, dtype=np.intp)
    order = np.random.default_rng(seed).permutation(present.size)
    fold_of[present[order]] = np.arange(present.size) % n_splits
    return fold_of[codes]


@dataclass(frozen=True)
class _Folds:
    """Rows and correct rows per fold and entry of :class:`_Distinct`: what every fit on
    the other folds needs, and what the metrics of its out-of-fold predictions need."""

    cell: NDArray[np.intp]  # each row's (fold, entry), as fold · entries + entry
    rows: FloatArray  # (folds, entries)
    hits: FloatArray

    @classmethod
    def of(cls, d: _Distinct, correct: FloatArray, folds: NDArray[np.intp], n: int) -> _Folds:
        size = d.conf.size
        cell = folds * size + d.row
        rows = np.bincount(cell, minlength=n * size).astype(float).reshape(n, size)
        hits = np.bincount(cell, weights=correct, minlength=n * size).reshape(n, size)
        return cls(cell, rows, hits)


def _out_of_fold(
    d: _Distinct,
    f: _Folds,
    methods: tuple[Method, ...],
    starts: dict[str, dict[str, Any]] | None = None,
) -> dict[str, FloatArray]:
    """Each method's maps fitted out of fold, ``(folds, entries)``: row k is the map fitted
    on every fold but k (the totals of all rows less fold k's), at each entry."""
    weight, hits = f.rows.sum(axis=0), f.hits.sum(axis=0)
    out = {}
    for method in methods:
        start = (starts or {}).get(method)
        out[method] = np.array(
            [
                _fit(d, weight - f.rows[k], hits - f.hits[k], method, start, lists=False).predict(
                    d.conf
                )
                for k in range(f.rows.shape[0])
            ]
        ).reshape(f.rows.shape)
    return out


def cross_val_predict(
    conf: ArrayLike,
    correct: ArrayLike,
    *,
    groups: ArrayLike,
    method: Method,
    n_splits: int = 5,
    seed: int = 0,
) -> FloatArray:
    """Out-of-fold recalibrated confidences: each question's steps are predicted by the map
    fitted on the other folds (:func:`question_folds`), never on themselves."""
    c, y = _check_rows(conf, correct)
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got method = {method!r}")
    folds = question_folds(groups, n_splits=n_splits, seed=seed)
    d = _Distinct.of(c)
    f = _Folds.of(d, y, folds, n_splits)
    return _out_of_fold(d, f, (method,))[method].ravel()[f.cell]


def _scores(rows: PreparedRows) -> dict[str, float]:
    return {"ece": ece(rows), "brier": brier(rows), "log_loss": log_loss(rows)}


def recalibration_report(
    conf: ArrayLike,
    correct: ArrayLike,
    *,
    groups: ArrayLike,
    n_splits: int = 5,
    seed: int = 0,
    methods: tuple[Method, ...] = METHODS,
    prepared: PreparedRows | None = None,
) -> dict[str, Any] | None:
    """ECE, Brier and log loss before recalibration and after each method (out of fold, as
    :func:`cross_val_predict`), with each method's map fitted on all the rows; missing
    (NaN) confidences are left out. ``None`` when there are fewer questions than folds or
    only one class of correctness (nothing to fit).

    The distinct confidences are sorted once and every fit runs on them, weighted by their
    rows; the folds' fits start from the fit on all rows (so Newton's method needs a step or
    two). The rows of one fold at one distinct confidence get the same recalibrated
    confidence, so the "after" metrics run on those (fold, confidence, correct) cells, each
    weighted by its rows.

    ``prepared``: the rows that have a confidence, as ``summarize`` takes them (its
    ``prepared``), for a caller that scores them with other metrics too."""
    c_all, y_all = _check_rows(conf, correct, allow_missing=True, allow_empty=True)
    g = np.asarray(groups)
    keep = ~np.isnan(c_all)
    c, y, g = c_all[keep], y_all[keep], g[keep]
    if c.size == 0 or y.min() == y.max():
        return None
    codes, k = group_codes(g, g.size)
    if np.count_nonzero(np.bincount(codes, minlength=k)) < n_splits:
        return None
    folds = question_folds(g, n_splits=n_splits, seed=seed)
    d = _Distinct.of(c)
    f = _Folds.of(d, y, folds, n_splits)
    out: dict[str, Any] = {
        "n_splits": n_splits,
        "seed": seed,
        "n": int(c.size),
        "before": _scores(
            PreparedRows.of(c, y)
            if prepared is None
            else _check_prepared(prepared, c_all, y_all, keep)
        ),
    }
    fitted = {method: _fit(d, f.rows.sum(axis=0), f.hits.sum(axis=0), method) for method in methods}
    after = _out_of_fold(d, f, methods, starts={m: fit.params for m, fit in fitted.items()})
    # every (fold, entry) twice, for its correct rows and its wrong ones: the cells that
    # hold rows
    hits, rows = f.hits.ravel(), f.rows.ravel()
    weight = np.concatenate([hits, rows - hits])
    held = np.flatnonzero(weight > 0)
    correct_cells = (held < hits.size).astype(float)
    weight = weight[held]
    for method in methods:
        params = fitted[method].params
        if method == "isotonic":
            params = {"points": len(params["x"])}
        cells = np.tile(after[method].ravel(), 2)[held]
        after_rows = PreparedRows.of(cells, correct_cells, sample_weight=weight)
        out[method] = {"after": _scores(after_rows), "params": params}
    return out


def read_calibration(path: str | Path) -> Calibrator:
    """A map written by ``grace-arena model calibrate`` (JSON: ``method``, ``params`` and
    what it was fitted on: ``model``, ``confidence``, ``cv``...)."""
    import json

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: not a calibration map ({exc})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: not a calibration map (a JSON object is expected)")
    return Calibrator.from_dict(data)
