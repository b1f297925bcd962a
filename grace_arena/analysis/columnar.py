"""The metrics of :mod:`grace_arena.analysis.metrics` and :mod:`~grace_arena.analysis.curves`,
computed on whole columns at once.

:func:`grace_arena.analysis.metrics.summarize_steps` and
:func:`~grace_arena.analysis.metrics.bootstrap_ci` are the reference definitions: they walk
Python objects question by question, which is clear but takes minutes on a million steps.
The functions here give the same numbers (the tests compare them on random data) with a
few array operations per model:

* per-question sums come from ``np.bincount`` over question codes;
* ``h_t`` for every step comes from one ``np.searchsorted`` over (question, word) keys;
* a bootstrap resample is a vector of how often each question was drawn, so a resampled
  mean or ECE is a matrix product of those counts with per-question sums. The draws are the
  very ones :func:`~grace_arena.analysis.metrics.bootstrap_ci` makes with the same seed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from grace_arena.analysis.curves import BuzzRates
from grace_arena.analysis.metrics import (
    CONFIDENCE_KINDS,
    HEADLINE_METRICS,
    QUESTION_METRICS,
    UNCATEGORIZED,
    ConfidenceKind,
    check_h_definition,
    summarize,
)
from grace_arena.analysis.tables import BuzzTable, StepTable

__all__ = [
    "ModelRows",
    "accuracy_curves",
    "bootstrap_model",
    "bootstrap_table",
    "buzz_given_correct_table",
    "human_fraction_column",
    "model_rows",
    "sh_by_model",
    "summarize_table",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

_S_M1 = 1.0 / (1.0 + math.exp(1.0))
_S_RANGE = 1.0 / (1.0 + math.exp(-1.0)) - _S_M1


def _r(x: FloatArray) -> FloatArray:
    """Vectorised :func:`~grace_arena.analysis.metrics.normalized_sigmoid`."""
    return (1.0 / (1.0 + np.exp(-x)) - _S_M1) / _S_RANGE


def _codes(values: NDArray[Any]) -> tuple[NDArray[Any], IntArray]:
    """Unique values in first-seen order and each row's code into them."""
    (codes,), uniques = factorize(values)
    out = np.empty(len(uniques), dtype=object)
    out[:] = uniques
    return out, codes


# ---------------------------------------------------------------------------------------
# h_t for every step
# ---------------------------------------------------------------------------------------


def human_fraction_column(
    steps: StepTable, buzzes: BuzzTable, *, definition: str = "reference"
) -> FloatArray:
    """``h_t`` of every step row (:func:`~grace_arena.analysis.metrics.human_fraction_by_step`,
    either definition), from every human row of ``buzzes`` on the step's question: the
    buzzes of every match (and every pooled buzzpoint) that heard it.

    Human teams are told apart by (match, team). Each buzz changes a count by a step at its
    word (reference: +1 when a team's latest buzz turns correct, −1 when it turns wrong;
    paper: +1 per correct buzz and +1 per buzz), so h_t is a difference of cumulative sums
    found with one ``searchsorted`` over (question, word) keys.
    """
    check_h_definition(definition)
    n = len(steps)
    human = buzzes.team_kind == "human"
    if n == 0 or not human.any():
        return np.zeros(n)
    (q_rows, q_buzz), questions = factorize(steps.question_id, buzzes.question_id[human])
    n_q = len(questions)
    words = buzzes.word_index[human].astype(np.int64)
    ok = (buzzes.correct[human] == 1.0).astype(float)
    span = int(max(words.max(initial=0), steps.word_index.max(initial=0))) + 2
    keys = q_buzz.astype(np.int64) * span + words
    if definition == "paper":
        num, den = ok, np.ones_like(ok)
    else:
        team, _ = _keys(
            (buzzes.match[human], buzzes.match[:0]), (buzzes.team[human], buzzes.team[:0])
        )
        # each team's buzzes on a question in the order heard (ties: table order)
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
    hi = np.searchsorted(sorted_keys, q_rows.astype(np.int64) * span + steps.word_index, "right")
    lo = np.searchsorted(sorted_keys, q_rows.astype(np.int64) * span, "left")
    count = cum_num[hi] - cum_num[lo]
    if den is None:
        total = np.bincount(q_buzz, minlength=n_q)[q_rows].astype(float)
    else:
        cum_den = np.concatenate([[0.0], np.cumsum(den[order])])
        total = cum_den[hi] - cum_den[lo]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, count / np.maximum(total, 1), 0.0)


# ---------------------------------------------------------------------------------------
# One model's rows, sorted by question then step
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelRows:
    """One model's steps sorted by (question, step); questions coded in first-seen order."""

    model: str
    question_ids: NDArray[Any]  # code -> question id
    q: IntArray  # question code of each row
    step: IntArray
    word_index: IntArray
    correct: FloatArray
    conf: dict[str, FloatArray]  # kind -> confidences (NaN = missing)
    h: FloatArray
    category: NDArray[Any]  # code -> category of the question
    n_words: IntArray  # code -> words in the question (-1 unknown)
    would_buzz: FloatArray
    final: IntArray  # row index of each question's last step

    @property
    def n_questions(self) -> int:
        return int(self.question_ids.size)


def model_rows(steps: StepTable, h: FloatArray | None = None) -> list[ModelRows]:
    """Split ``steps`` by model (sorted by name); ``h`` defaults to all zeros.

    Raises ``ValueError`` on a duplicate (model, question, step), like
    :func:`~grace_arena.analysis.metrics.group_by_question`.
    """
    if h is None:
        h = np.zeros(len(steps))
    out = []
    (model_codes,), names = factorize(steps.model)
    for code, model in sorted(enumerate(names), key=lambda item: str(item[1])):
        idx = np.flatnonzero(model_codes == code)
        qids, q = _codes(steps.question_id[idx])
        order = np.lexsort((steps.step[idx], q))
        idx, q = idx[order], q[order]
        step = steps.step[idx]
        dup = (q[1:] == q[:-1]) & (step[1:] == step[:-1])
        if dup.any():
            i = int(np.argmax(dup))
            raise ValueError(
                f"duplicate step: model={model!r} question={qids[q[i]]!r} step={int(step[i])!r}"
            )
        for kind, col in (("logit", steps.confidence_logit), ("verbal", steps.confidence_verbal)):
            vals = col[idx]
            bad = ~np.isnan(vals) & ((vals < 0.0) | (vals > 1.0))
            if bad.any():
                i = int(np.argmax(bad))
                raise ValueError(
                    f"confidence_{kind} must lie in [0, 1], got {float(vals[i])!r} at "
                    f"model={model!r} question={qids[q[i]]!r} step={int(step[i])!r}"
                )
        n_q = qids.size
        last = np.ones(idx.size, dtype=bool)
        last[:-1] = q[1:] != q[:-1]
        final = np.flatnonzero(last)
        # a question's category: the first one its steps carry, in step order
        cats = steps.category[idx]
        has = np.array([c is not None for c in cats], dtype=bool)
        category = np.full(n_q, UNCATEGORIZED, dtype=object)
        if has.any():
            qs, first = np.unique(q[has], return_index=True)
            category[qs] = cats[has][first]
        n_words = np.full(n_q, -1, dtype=np.int64)
        nw = steps.n_words[idx]
        known = nw >= 0
        n_words[q[known]] = nw[known]
        out.append(
            ModelRows(
                model=model,
                question_ids=qids,
                q=q,
                step=step,
                word_index=steps.word_index[idx],
                correct=steps.correct[idx],
                conf={
                    "logit": steps.confidence_logit[idx],
                    "verbal": steps.confidence_verbal[idx],
                },
                h=h[idx],
                category=category,
                n_words=n_words,
                would_buzz=steps.would_buzz[idx],
                final=final,
            )
        )
    return out


# ---------------------------------------------------------------------------------------
# Summaries (same keys and numbers as metrics.summarize_steps)
# ---------------------------------------------------------------------------------------


def _question_scores(
    q: IntArray, conf: FloatArray, correct: FloatArray, h: FloatArray, n_q: int
) -> tuple[dict[str, FloatArray], NDArray[np.bool_]]:
    """Every question metric per question code, and which questions have a confidence."""
    keep = ~np.isnan(conf)
    qk, c, g, hk = q[keep], conf[keep], correct[keep], h[keep]
    count = np.bincount(qk, minlength=n_q).astype(float)
    scored = count > 0
    signed = 2.0 * g - 1.0

    def mean(weights: FloatArray) -> FloatArray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.bincount(qk, weights=weights, minlength=n_q) / count

    scores = {
        "calscore": 1.0 - _r(mean((1.0 - hk) * signed * c)),
        "calscore_ref": 1.0 - mean((1.0 - hk) * g * c),
        "mce_grace": 1.0 - _r(mean(signed * c)),
        "mce_grace_ref": 1.0 - mean(g * c),
    }
    return scores, scored


def _summarize_rows(m: ModelRows, rows: IntArray, kind: ConfidenceKind) -> dict[str, Any]:
    conf = m.conf[kind][rows]
    scores, scored = _question_scores(m.q[rows], conf, m.correct[rows], m.h[rows], m.n_questions)
    present = np.zeros(m.n_questions, dtype=bool)
    present[m.q[rows]] = True
    out: dict[str, Any] = {
        name: float(np.mean(scores[name][scored])) if scored.any() else None
        for name in QUESTION_METRICS
    }
    out.update(summarize(conf, m.correct[rows]))
    out["n_questions"] = int(scored.sum())
    out["n_questions_skipped"] = int((present & ~scored).sum())
    return out


def summarize_table(
    steps: StepTable,
    buzzes: BuzzTable | None = None,
    *,
    kinds: Sequence[ConfidenceKind] = CONFIDENCE_KINDS,
    models: list[ModelRows] | None = None,
    h_definition: str = "reference",
) -> dict[str, dict[str, dict[str, Any]]]:
    """:func:`~grace_arena.analysis.metrics.summarize_steps` on columns: the same dict.

    ``buzzes`` supplies the human buzzes behind ``h_t`` (``h_definition`` picks its
    definition); pass ``models`` (from :func:`model_rows`) to reuse a split already made.
    """
    if models is None:
        h = (
            human_fraction_column(steps, buzzes, definition=h_definition)
            if buzzes is not None
            else None
        )
        models = model_rows(steps, h)
    result: dict[str, dict[str, dict[str, Any]]] = {}
    for m in models:
        all_rows = np.arange(m.q.size)
        (cat_codes,), cats = factorize(m.category)
        row_cat = cat_codes[m.q]
        by_cat = {cat: np.flatnonzero(row_cat == i) for i, cat in enumerate(cats)}
        result[m.model] = {}
        for kind in kinds:
            metrics = _summarize_rows(m, all_rows, kind)
            metrics["final"] = _summarize_rows(m, m.final, kind)
            metrics["by_category"] = {
                cat: _summarize_rows(m, by_cat[cat], kind) for cat in sorted(by_cat)
            }
            result[m.model][kind] = metrics
    return result


# ---------------------------------------------------------------------------------------
# Bootstrap (same draws and numbers as metrics.bootstrap_ci)
# ---------------------------------------------------------------------------------------


def _per_question_sums(
    m: ModelRows, rows: IntArray, kind: ConfidenceKind, n_bins: int = 10
) -> dict[str, FloatArray]:
    """Per question: CalScore (NaN if unscored), and the sums behind Brier and ECE."""
    n_q = m.n_questions
    conf = m.conf[kind][rows]
    correct = m.correct[rows]
    scores, scored = _question_scores(m.q[rows], conf, correct, m.h[rows], n_q)
    keep = ~np.isnan(conf)
    q, c, g = m.q[rows][keep], conf[keep], correct[keep]
    edges = np.arange(n_bins + 1) / n_bins
    b = np.minimum(np.searchsorted(edges, c, side="right") - 1, n_bins - 1)
    cell = q * n_bins + b
    return {
        "calscore": np.where(scored, scores["calscore"], 0.0),
        "scored": scored.astype(float),
        "n": np.bincount(q, minlength=n_q).astype(float),
        "sse": np.bincount(q, weights=(c - g) ** 2, minlength=n_q),
        "bin_conf": np.bincount(cell, weights=c, minlength=n_q * n_bins).reshape(n_q, n_bins),
        "bin_correct": np.bincount(cell, weights=g, minlength=n_q * n_bins).reshape(n_q, n_bins),
    }


_SUM_KEYS = ("calscore", "scored", "n", "sse")


def bootstrap_model(
    m: ModelRows,
    combos: Sequence[tuple[ConfidenceKind, bool]] = (
        ("logit", False),
        ("logit", True),
        ("verbal", False),
        ("verbal", True),
    ),
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    chunk: int = 50,
    n_bins: int = 10,
) -> dict[tuple[str, bool], dict[str, tuple[float, float]]]:
    """Percentile intervals of CalScore, ECE and Brier over question resamples.

    For each ``(kind, final)`` of ``combos``, the same as ``bootstrap_ci(steps,
    step_metric(name, kind=kind, human_buzzes=...), n_resamples=..., seed=...)`` for each
    name of :data:`~grace_arena.analysis.metrics.HEADLINE_METRICS` on one model's steps (or
    on each question's final step when ``final``): the same draws, the same NaN handling.
    The draws depend only on the seed and the number of questions, so they are made once
    and shared by every combination: one matrix product per chunk of resamples.
    """
    if isinstance(n_resamples, bool) or n_resamples < 1:
        raise ValueError(f"n_resamples must be a positive integer, got {n_resamples!r}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie in (0, 1), got level = {level!r}")
    n_q = m.n_questions
    if n_q == 0:
        raise ValueError("steps are empty; nothing to resample")
    blocks = []
    for kind, final in combos:
        sums = _per_question_sums(m, m.final if final else np.arange(m.q.size), kind, n_bins)
        blocks.append(np.column_stack([*(sums[k] for k in _SUM_KEYS), sums["bin_correct"],
                                       sums["bin_conf"]]))  # fmt: skip
    width = len(_SUM_KEYS) + 2 * n_bins
    # (columns x questions): OpenBLAS is far faster with this orientation than the other
    matrix_t = np.ascontiguousarray(np.hstack(blocks).T)
    rng = np.random.default_rng(seed)
    parts = []
    done = 0
    while done < n_resamples:
        b = min(chunk, n_resamples - done)
        draws = rng.integers(0, n_q, size=(b, n_q))
        counts = np.empty((b, n_q))
        for i in range(b):  # how often each question was drawn in resample i
            counts[i] = np.bincount(draws[i], minlength=n_q)
        parts.append((matrix_t @ counts.T).T)
        done += b
    totals = np.vstack(parts)
    alpha = (1.0 - level) / 2.0
    out: dict[tuple[str, bool], dict[str, tuple[float, float]]] = {}
    for i, combo in enumerate(combos):
        t = totals[:, i * width : (i + 1) * width]
        calscore, scored, n, sse = (t[:, j] for j in range(len(_SUM_KEYS)))
        bins = t[:, len(_SUM_KEYS) :]
        with np.errstate(invalid="ignore", divide="ignore"):
            stats = {
                "calscore": calscore / scored,
                "brier": sse / n,
                "ece": np.abs(bins[:, :n_bins] - bins[:, n_bins:]).sum(axis=1) / n,
            }
        out[combo] = {}
        for name in HEADLINE_METRICS:
            values = stats[name][~np.isnan(stats[name])]
            if values.size == 0:
                out[combo][name] = (math.nan, math.nan)
            else:
                low, high = np.quantile(values, [alpha, 1.0 - alpha])
                out[combo][name] = (float(low), float(high))
    return out


def bootstrap_table(
    m: ModelRows,
    kind: ConfidenceKind,
    *,
    final: bool = False,
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> dict[str, tuple[float, float]]:
    """:func:`bootstrap_model` for one confidence kind over all steps (or final steps)."""
    return bootstrap_model(m, ((kind, final),), n_resamples=n_resamples, seed=seed, level=level)[
        (kind, final)
    ]


# ---------------------------------------------------------------------------------------
# Curves and buzz-timing scores
# ---------------------------------------------------------------------------------------


def accuracy_curves(models: list[ModelRows], *, bins: int = 10) -> dict[str, dict[str, Any]]:
    """Accuracy per bin of fraction revealed, per model (GRACE figure 5).

    Same bins and numbers as :func:`~grace_arena.analysis.curves.accuracy_by_fraction`;
    steps of questions whose length is unknown are left out.
    """
    edges = np.arange(bins + 1) / bins
    out: dict[str, dict[str, Any]] = {}
    for m in models:
        n_words = m.n_words[m.q]
        known = n_words > 0
        x = np.minimum((m.word_index[known] + 1) / n_words[known], 1.0)
        idx = np.minimum(np.searchsorted(edges, x, side="right") - 1, bins - 1)
        count = np.bincount(idx, minlength=bins)
        hits = np.bincount(idx, weights=m.correct[known], minlength=bins)
        with np.errstate(invalid="ignore", divide="ignore"):
            acc = hits / count
        out[m.model] = {
            "lower": edges[:-1].tolist(),
            "upper": edges[1:].tolist(),
            "accuracy": [None if math.isnan(a) else float(a) for a in acc],
            "count": count.astype(int).tolist(),
        }
    return out


def _before_first_buzz(m: ModelRows) -> NDArray[np.bool_]:
    """Rows up to and including each question's first step whose policy would buzz."""
    wb = np.nan_to_num(m.would_buzz, nan=0.0)
    csum = np.cumsum(wb)
    start = np.ones(m.q.size, dtype=bool)
    start[1:] = m.q[1:] != m.q[:-1]
    group_start = np.maximum.accumulate(np.where(start, np.arange(m.q.size), 0))
    before = csum - wb - (csum[group_start] - wb[group_start])  # buzzes before this row
    return before == 0


def buzz_given_correct_table(models: list[ModelRows]) -> dict[str, BuzzRates]:
    """P(buzz | correct) and P(buzz | incorrect) per model, up to each first buzz (figure 6).

    Same numbers as :func:`~grace_arena.analysis.curves.buzz_given_correct`; only steps
    whose ``would_buzz`` is known count, and models with none are left out.
    """
    out: dict[str, BuzzRates] = {}
    for m in models:
        known = ~np.isnan(m.would_buzz)
        if not known.any():
            continue
        sub = np.flatnonzero(known)
        restricted = ModelRows(
            **{
                **m.__dict__,
                "q": m.q[sub],
                "would_buzz": m.would_buzz[sub],
            }
        )
        use = _before_first_buzz(restricted)
        g = m.correct[sub][use]
        b = m.would_buzz[sub][use]
        n_c, n_w = int((g == 1).sum()), int((g == 0).sum())
        out[m.model] = BuzzRates(
            p_buzz_given_correct=float(b[g == 1].sum() / n_c) if n_c else math.nan,
            p_buzz_given_incorrect=float(b[g == 0].sum() / n_w) if n_w else math.nan,
            n_correct=n_c,
            n_incorrect=n_w,
        )
    return out


def first_policy_buzz(m: ModelRows) -> tuple[FloatArray, FloatArray]:
    """Per question of a model with a known length: the fraction revealed at the policy's
    first buzz (NaN if it never buzzes) and whether that guess was correct."""
    n_q = m.n_questions
    wb = np.nan_to_num(m.would_buzz, nan=0.0) == 1.0
    x = np.full(n_q, np.nan)
    ok = np.zeros(n_q)
    rows = np.flatnonzero(wb)
    qs, first = np.unique(m.q[rows], return_index=True)
    first_rows = rows[first]
    nw = m.n_words[qs]
    known_len = nw > 0
    x[qs[known_len]] = np.minimum((m.word_index[first_rows][known_len] + 1) / nw[known_len], 1.0)
    ok[qs[known_len]] = m.correct[first_rows][known_len]
    has_len = m.n_words > 0
    return x[has_len], ok[has_len]


def sh_by_model(m: ModelRows, kind: ConfidenceKind) -> tuple[float | None, int]:
    """Mean over questions of GRACE appendix H's SH_q (:func:`~grace_arena.analysis.curves.
    sh_question`) with missing confidences left out; returns (mean, questions scored)."""
    conf = m.conf[kind]
    keep = ~np.isnan(conf)
    if not keep.any():
        return None, 0
    q, c, g, h = m.q[keep], conf[keep], m.correct[keep], m.h[keep]
    n = q.size
    start = np.ones(n, dtype=bool)
    start[1:] = q[1:] != q[:-1]
    group_start = np.maximum.accumulate(np.where(start, np.arange(n), 0))
    # ∏_{i<t} (1 − c_i) within the question, robust to c = 1
    ones = (c >= 1.0).astype(float)
    logs = np.log1p(-np.where(c >= 1.0, 0.0, c))
    cum_log = np.cumsum(logs) - logs
    cum_ones = np.cumsum(ones) - ones
    before_log = cum_log - cum_log[group_start]
    before_ones = cum_ones - cum_ones[group_start]
    not_yet = np.where(before_ones > 0, 0.0, np.exp(before_log))
    bg = c * not_yet * g
    cum_bg = np.cumsum(bg)
    within = cum_bg - (cum_bg[group_start] - bg[group_start])
    n_q = m.n_questions
    k_sum = np.bincount(q, weights=h * within, minlength=n_q)
    h_sum = np.bincount(q, weights=h, minlength=n_q)
    bg_sum = np.bincount(q, weights=bg, minlength=n_q)
    scored = np.bincount(q, minlength=n_q) > 0
    sh = k_sum + (1.0 - h_sum) * bg_sum
    return float(sh[scored].mean()), int(scored.sum())


# ---------------------------------------------------------------------------------------
# Buzzes: first buzzes, buzz-rate curves (figure 4), player scores (appendix F.3)
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FirstBuzzes:
    """The first ruled buzz of each (match, team, question) heard, aligned with ``heard``."""

    match: NDArray[Any]
    team: NDArray[Any]
    question_id: NDArray[Any]
    fraction: FloatArray  # NaN: no buzz, or question length unknown
    correct: NDArray[np.bool_]  # False when there was no buzz


def factorize(*arrays: NDArray[Any]) -> tuple[list[IntArray], list[Any]]:
    """Integer codes of the values of ``arrays`` in one shared space, and the values by code.

    A dict lookup per value: faster than ``np.unique`` on object arrays of strings.
    """
    index: dict[Any, int] = {}
    codes = [
        np.fromiter((index.setdefault(v, len(index)) for v in arr.tolist()), np.int64, arr.size)
        for arr in arrays
    ]
    return codes, list(index)


def _keys(*columns: tuple[NDArray[Any], NDArray[Any]]) -> tuple[IntArray, IntArray]:
    """One int64 key per row for two tables sharing the same key columns.

    Each argument is one key column as ``(values in table 1, values in table 2)``.
    """
    key1 = np.zeros(columns[0][0].size, dtype=np.int64)
    key2 = np.zeros(columns[0][1].size, dtype=np.int64)
    for first, second in columns:
        (c1, c2), values = factorize(first, second)
        size = max(len(values), 1)
        key1, key2 = key1 * size + c1, key2 * size + c2
    return key1, key2


def _heard_arrays(buzzes: BuzzTable) -> tuple[NDArray[Any], NDArray[Any], NDArray[Any]]:
    return buzzes.heard_columns


def _fractions(buzzes: BuzzTable) -> FloatArray:
    nw = buzzes.n_words
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(
            nw > 0, np.minimum((buzzes.word_index + 1) / np.maximum(nw, 1), 1.0), np.nan
        )


def first_buzzes(buzzes: BuzzTable, *, by: str = "team") -> FirstBuzzes:
    """Each heard (match, team, question) with the team's earliest ruled buzz on it.

    ``by="team"`` as stated; the earliest buzz is the one at the lowest word index (the
    first in the table on a tie).
    """
    hm, ht, hq = _heard_arrays(buzzes)
    n = hm.size
    fraction = np.full(n, np.nan)
    correct = np.zeros(n, dtype=bool)
    if len(buzzes) and n:
        bkey, hkey = _keys((buzzes.match, hm), (getattr(buzzes, by), ht), (buzzes.question_id, hq))
        order = np.lexsort((np.arange(bkey.size), buzzes.word_index, bkey))
        sorted_key = bkey[order]
        first = np.ones(order.size, dtype=bool)
        first[1:] = sorted_key[1:] != sorted_key[:-1]
        rows = order[first]
        fkeys = bkey[rows]
        pos = np.searchsorted(fkeys, hkey)
        pos = np.minimum(pos, max(fkeys.size - 1, 0))
        found = fkeys[pos] == hkey
        fraction[found] = _fractions(buzzes)[rows[pos[found]]]
        correct[found] = buzzes.correct[rows[pos[found]]] == 1.0
    return FirstBuzzes(hm, ht, hq, fraction, correct)


def buzz_rate_curves(buzzes: BuzzTable, grid: FloatArray) -> dict[str, dict[str, Any]]:
    """Per team, cumulative correct / incorrect buzz rates on ``grid`` (GRACE figure 4).

    Same numbers as :func:`~grace_arena.analysis.curves.cumulative_buzz_rates` with
    ``questions_played`` = the questions each team heard, on (match, question) keys: a
    question counts once per team and kind, at the earliest such buzz.
    """
    kinds = buzzes.team_kinds()
    _, ht, _ = _heard_arrays(buzzes)
    teams_heard, n_heard = np.unique(ht.astype(str), return_counts=True) if ht.size else ([], [])
    heard = dict(zip(list(teams_heard), [int(n) for n in n_heard], strict=True))
    x = _fractions(buzzes)
    known = ~np.isnan(x)
    key, _ = _keys(
        (buzzes.team, buzzes.team[:0]),
        (buzzes.match, buzzes.match[:0]),
        (buzzes.question_id, buzzes.question_id[:0]),
        (buzzes.correct, buzzes.correct[:0]),
    )
    key = key[known]
    xs, team, ok = x[known], buzzes.team[known].astype(str), buzzes.correct[known]
    order = np.lexsort((xs, key))
    first = np.ones(order.size, dtype=bool)
    first[1:] = key[order][1:] != key[order][:-1]
    rows = order[first]
    out: dict[str, dict[str, Any]] = {}
    for t in sorted(set(kinds) | set(heard)):
        n_q = max(heard.get(t, 0), 1)
        mine = rows[team[rows] == t]

        def rate(value: float, mine: NDArray[np.int64] = mine, n_q: int = n_q) -> list[float]:
            vals = np.sort(xs[mine][ok[mine] == value])
            return (np.searchsorted(vals, grid, side="right") / n_q).tolist()

        out[t] = {
            "kind": kinds.get(t, "human"),
            "n_questions": n_q,
            "grid": grid.tolist(),
            "correct": rate(1.0),
            "incorrect": rate(0.0),
        }
    return out


def player_scores(buzzes: BuzzTable) -> list[tuple[str, str, float, int]]:
    """GRACE appendix F.3 per player: ``(player, team, mean score, questions)``, best first.

    Every player who buzzed in a match is credited with every question their team heard
    there: 20 − 20c for a correct first buzz at clue fraction c (``(clue + 1) / n_clues``,
    or the fraction of words when the clues are unknown), −5 for an incorrect one, 0 when
    they did not buzz. The same numbers as :func:`~grace_arena.analysis.curves.rank_players`.
    """
    if not len(buzzes):
        return []
    hm, ht, _hq = _heard_arrays(buzzes)
    heard_per_team: dict[tuple[str, str], int] = {}
    for m, t in zip(hm.tolist(), ht.tolist(), strict=True):
        heard_per_team[(m, t)] = heard_per_team.get((m, t), 0) + 1
    roster = {
        (m, t, p)
        for m, t, p in zip(
            buzzes.match.tolist(), buzzes.team.tolist(), buzzes.player.tolist(), strict=True
        )
    }
    n_records: dict[str, int] = {}
    team_of: dict[str, str] = {}
    for m, t, p in sorted(roster):
        n_records[p] = n_records.get(p, 0) + heard_per_team.get((m, t), 0)
        team_of.setdefault(p, t)
    with np.errstate(invalid="ignore", divide="ignore"):
        clue = np.where(
            (buzzes.clue_index >= 0) & (buzzes.n_clues > 0),
            np.minimum((buzzes.clue_index + 1) / np.maximum(buzzes.n_clues, 1), 1.0),
            _fractions(buzzes),
        )
    usable = ~np.isnan(clue)
    key, _ = _keys(
        (buzzes.match, buzzes.match[:0]),
        (buzzes.player, buzzes.player[:0]),
        (buzzes.question_id, buzzes.question_id[:0]),
    )
    key = key[usable]
    order = np.lexsort((np.arange(key.size), buzzes.word_index[usable], key))
    first = np.ones(order.size, dtype=bool)
    first[1:] = key[order][1:] != key[order][:-1]
    rows = np.flatnonzero(usable)[order[first]]
    score = np.where(buzzes.correct[rows] == 1.0, 20.0 - 20.0 * clue[rows], -5.0)
    totals: dict[str, float] = {}
    for p, sc in zip(buzzes.player[rows].tolist(), score.tolist(), strict=True):
        totals[p] = totals.get(p, 0.0) + sc
    ranked = [(p, team_of[p], totals.get(p, 0.0) / n, n) for p, n in n_records.items() if n > 0]
    return sorted(ranked, key=lambda r: (-r[2], r[0]))
