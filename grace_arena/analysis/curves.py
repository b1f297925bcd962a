"""Human-vs-model curves and buzz-timing scores (GRACE figures 4–6, appendices F.3 and H).

Positions: a buzz at 0-based word index ``i`` of an ``n``-word question has heard
``i + 1`` words (QBJ: a partly heard word counts as whole), so its *fraction revealed* is
``(i + 1) / n``, capped at 1 for buzzes after the last word (:func:`fraction_revealed`).

Everything here computes numbers; plotting lives elsewhere.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, overload

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from grace_arena.analysis.metrics import _as_1d, group_codes

__all__ = [
    "AccuracyCurve",
    "BuzzRateCurve",
    "BuzzRates",
    "PlayerRank",
    "accuracy_by_fraction",
    "before_first_buzz",
    "buzz_given_correct",
    "cumulative_buzz_rates",
    "expected_wins",
    "fit_human_curve",
    "fraction_bin",
    "fraction_revealed",
    "grace_player_score",
    "quartiles",
    "rank_players",
    "sh",
    "win_probability",
]

FloatArray = NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class BuzzRateCurve:
    """Cumulative correct / incorrect buzz rates of one team on ``grid``."""

    n_questions: int
    grid: FloatArray
    correct: FloatArray
    incorrect: FloatArray


@dataclass(frozen=True, slots=True)
class AccuracyCurve:
    """Accuracy of guesses per bin of fraction revealed."""

    lower: FloatArray
    upper: FloatArray
    accuracy: FloatArray
    count: NDArray[np.intp]


@dataclass(frozen=True, slots=True)
class BuzzRates:
    """P(buzz | correct) and P(buzz | incorrect) of one model (NaN when undefined)."""

    p_buzz_given_correct: float
    p_buzz_given_incorrect: float
    n_correct: int
    n_incorrect: int


@dataclass(frozen=True, slots=True)
class PlayerRank:
    """A player's mean GRACE score over the records given."""

    player: str
    mean_score: float
    n: int


def _check_in_unit_interval(name: str, arr: FloatArray) -> None:
    bad = ~((arr >= 0.0) & (arr <= 1.0))  # NaN is bad too
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"{name} must lie in [0, 1], got {name}[{i}] = {float(arr[i])!r}")


def _check_bool_array(name: str, values: ArrayLike) -> NDArray[np.bool_]:
    arr = _as_1d(name, values)
    bad = (arr != 0.0) & (arr != 1.0)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"{name} must be 0 or 1, got {name}[{i}] = {float(arr[i])!r}")
    return arr == 1.0


def fraction_revealed(word_index: ArrayLike, n_words: ArrayLike) -> Any:
    """``(word_index + 1) / n_words`` capped at 1: the share of words heard at a buzz.

    Elementwise; NaN where ``n_words`` is unknown (less than 1); a float for scalars.

    >>> fraction_revealed(0, 4), fraction_revealed(3, 4), fraction_revealed(7, 4)
    (0.25, 1.0, 1.0)
    >>> fraction_revealed([0, 5], [4, -1]).tolist()
    [0.25, nan]
    """
    w = np.asarray(word_index, dtype=np.float64)
    n = np.asarray(n_words, dtype=np.float64)
    if np.any(w < 0):
        raise ValueError(f"word_index must be >= 0, got word_index = {int(w[w < 0].flat[0])}")
    with np.errstate(invalid="ignore", divide="ignore"):
        x = np.where(n >= 1, np.minimum((w + 1) / np.maximum(n, 1), 1.0), np.nan)
    return float(x) if x.ndim == 0 else x


def _group_order(
    groups: ArrayLike | None, n: int
) -> tuple[NDArray[np.intp] | slice, NDArray[np.intp]]:
    """Row order that keeps each group's rows together (in the given order within it), and
    each row's group code; the order is ``slice(None)`` when they are together already."""
    if groups is None:
        return slice(None), np.zeros(n, dtype=np.intp)
    codes, _ = group_codes(groups, n)
    if not np.any(codes[1:] < codes[:-1]):
        return slice(None), codes
    return np.argsort(codes, kind="stable"), codes


def _group_starts(codes: NDArray[np.intp]) -> NDArray[np.intp]:
    """For rows sorted by group, the index of the first row of each row's group."""
    start = np.ones(codes.size, dtype=bool)
    start[1:] = codes[1:] != codes[:-1]
    return np.maximum.accumulate(np.where(start, np.arange(codes.size), 0))


# ---------------------------------------------------------------------------------------
# Figure 4: cumulative buzz rates per team
# ---------------------------------------------------------------------------------------


def cumulative_buzz_rates(
    fraction: ArrayLike,
    correct: ArrayLike,
    *,
    groups: ArrayLike,
    grid: ArrayLike,
    n_questions: int,
) -> BuzzRateCurve:
    """One team's share of its questions with a correct (incorrect) buzz by each ``x``.

    ``correct(x) = #{questions with a correct buzz at fraction revealed ≤ x} / n_q`` and the
    same for incorrect buzzes, where ``n_q = n_questions`` is the number of questions the team
    heard. ``groups`` labels each buzz's question (match and question where a team heard a
    question in several matches); a question counts once per kind, at the team's earliest
    buzz of that kind.

    Example: a team buzzes correctly at x = 0.5 on q1 and wrongly at x = 0.5 on q2 and heard
    4 questions: on grid [0.25, 0.5, 1.0] its correct rate is [0, 1/4, 1/4] and its
    incorrect rate [0, 1/4, 1/4].

    >>> r = cumulative_buzz_rates([0.5, 0.5], [1, 0], groups=["q1", "q2"],
    ...                           grid=[0.25, 0.5, 1.0], n_questions=4)
    >>> r.correct.tolist(), r.incorrect.tolist()
    ([0.0, 0.25, 0.25], [0.0, 0.25, 0.25])
    """
    grid_arr = _as_1d("grid", grid)
    _check_in_unit_interval("grid", grid_arr)
    x = _as_1d("fraction", fraction)
    ok = _check_bool_array("correct", correct)
    codes, _ = group_codes(np.asarray(groups), x.size)
    n_team_questions = np.unique(codes).size
    if n_questions < max(n_team_questions, 1):
        raise ValueError(
            f"the team buzzed on {n_team_questions} questions but n_questions = {n_questions}"
        )

    def rate(kind: bool) -> FloatArray:
        mine = ok == kind
        key, xs = codes[mine], x[mine]
        order = np.lexsort((xs, key))
        first = np.ones(order.size, dtype=bool)
        first[1:] = key[order][1:] != key[order][:-1]
        earliest = np.sort(xs[order][first])
        return np.searchsorted(earliest, grid_arr, side="right") / n_questions

    return BuzzRateCurve(
        n_questions=int(n_questions), grid=grid_arr, correct=rate(True), incorrect=rate(False)
    )


# ---------------------------------------------------------------------------------------
# Figure 5: accuracy against fraction revealed
# ---------------------------------------------------------------------------------------


def _bin_edges(bins: int | ArrayLike) -> FloatArray:
    if isinstance(bins, int | np.integer) and not isinstance(bins, bool):
        if bins < 1:
            raise ValueError(f"bins must be a positive integer or edges, got bins = {bins!r}")
        return np.arange(int(bins) + 1) / int(bins)
    edges = _as_1d("bins", bins)
    if edges.size < 2 or np.any(np.diff(edges) <= 0):
        raise ValueError(f"bin edges must be increasing with at least two, got {edges.tolist()}")
    return edges


def fraction_bin(fraction: ArrayLike, edges: ArrayLike) -> NDArray[np.intp]:
    """The bin of each fraction: bins ``[a, b)`` between ``edges``, the last closed; −1 for
    a fraction outside the edges or NaN (length unknown).

    >>> fraction_bin([0.0, 0.5, 1.0, float("nan")], [0, 0.5, 1]).tolist()
    [0, 1, 1, -1]
    """
    x = _as_1d("fraction", fraction)
    e = _as_1d("edges", edges)
    idx = np.minimum(np.searchsorted(e, x, side="right") - 1, e.size - 2)
    return np.where((x >= e[0]) & (x <= e[-1]), idx, -1)


def accuracy_by_fraction(
    fraction: ArrayLike, correct: ArrayLike, *, bins: int | ArrayLike = 10
) -> AccuracyCurve:
    """Accuracy of guesses binned by the fraction of the question revealed.

    Bins follow the ECE convention: ``[a, b)`` with the last closed; ``bins`` is a count of
    equal-width bins on [0, 1] or explicit edges. Fractions outside the edges, and NaN ones
    (question length unknown), are left out. Empty bins have NaN accuracy and count 0.

    Example: guesses at fractions 0.25 (wrong), 0.5 (wrong), 1.0 (right) with ``bins=2``:
    [0, 0.5) holds one wrong guess → 0.0; [0.5, 1] holds one wrong and one right → 0.5.

    >>> accuracy_by_fraction([0.25, 0.5, 1.0], [0, 0, 1], bins=2).accuracy.tolist()
    [0.0, 0.5]
    """
    edges = _bin_edges(bins)
    n_bins = edges.size - 1
    x = _as_1d("fraction", fraction)
    y = _check_bool_array("correct", correct).astype(np.float64)
    if x.shape != y.shape:
        raise ValueError(f"fraction and correct must have the same length, got {x.size}, {y.size}")
    idx = fraction_bin(x, edges)
    inside = idx >= 0
    idx = idx[inside]
    count = np.bincount(idx, minlength=n_bins)
    hits = np.bincount(idx, weights=y[inside], minlength=n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        accuracy = hits / count
    return AccuracyCurve(lower=edges[:-1], upper=edges[1:], accuracy=accuracy, count=count)


# ---------------------------------------------------------------------------------------
# Figure 6: P(buzz | correct), P(buzz | incorrect)
# ---------------------------------------------------------------------------------------


def before_first_buzz(
    would_buzz: ArrayLike, *, groups: ArrayLike | None = None
) -> NDArray[np.bool_]:
    """Which rows come up to and including their question's first row whose ``would_buzz``
    is 1; rows are in step order within each question (``groups`` labels the question).

    >>> before_first_buzz([0, 1, 1, 0, 0], groups=["a", "a", "a", "b", "b"]).tolist()
    [True, True, False, True, True]
    """
    wb = _check_bool_array("would_buzz", would_buzz).astype(np.float64)
    order, codes = _group_order(groups, wb.size)
    w = wb[order]
    csum = np.cumsum(w)
    starts = _group_starts(codes[order])
    before = csum - w - (csum[starts] - w[starts])  # buzzes earlier in the question
    out = np.empty(wb.size, dtype=bool)
    out[order] = before == 0
    return out


def buzz_given_correct(
    correct: ArrayLike,
    would_buzz: ArrayLike,
    *,
    groups: ArrayLike | None = None,
    until_first_buzz: bool = True,
) -> BuzzRates:
    """P(buzz | guess correct) and P(buzz | guess incorrect) over steps.

    ``P(b | g=1) = #{steps correct and would buzz} / #{steps correct}``, likewise for
    g = 0. With ``until_first_buzz`` (GRACE footnote 10: later guesses do not count in a
    real game) only the steps of each question (``groups``) up to and including the first
    step whose ``would_buzz`` is 1 are used; rows are in step order within each question.

    Example: one question, steps (correct, would_buzz) = (0, 0), (1, 0), (1, 1), (1, 1):
    up to the first buzz there are 2 correct steps, 1 with a buzz → 0.5, and 1 incorrect
    step without a buzz → 0.0.

    >>> r = buzz_given_correct([0, 1, 1, 1], [0, 0, 1, 1])
    >>> r.p_buzz_given_correct, r.p_buzz_given_incorrect
    (0.5, 0.0)
    """
    g = _check_bool_array("correct", correct)
    b = _check_bool_array("would_buzz", would_buzz)
    if g.shape != b.shape:
        raise ValueError(
            f"correct and would_buzz must have the same length, got {g.size}, {b.size}"
        )
    if until_first_buzz:
        use = before_first_buzz(b, groups=groups)
        g, b = g[use], b[use]
    n_c, n_w = int(g.sum()), int((~g).sum())
    return BuzzRates(
        p_buzz_given_correct=float(b[g].sum() / n_c) if n_c else math.nan,
        p_buzz_given_incorrect=float(b[~g].sum() / n_w) if n_w else math.nan,
        n_correct=n_c,
        n_incorrect=n_w,
    )


# ---------------------------------------------------------------------------------------
# Expected wins (Rodriguez et al. 2019) and GRACE appendix H
# ---------------------------------------------------------------------------------------


def fit_human_curve(
    human_buzz_fractions_correct: ArrayLike,
    n_human_records: int,
    *,
    grid: ArrayLike | None = None,
) -> np.poly1d:
    """Cubic least-squares fit ``w(x)`` of ``1 − F(x)`` (Rodriguez et al. 2019).

    ``F(x) = #{correct human records with fraction revealed < x} / n_human_records`` is
    the share of human player–question records that answered correctly before position x;
    ``n_human_records`` counts every record, also wrong or silent ones. ``1 − F`` is
    evaluated on ``grid`` (default 101 points on [0, 1]) and fitted with ``np.polyfit``.
    A cubic need not stay in [0, 1]: evaluate it with :func:`win_probability`, which clips.

    GRACE appendix E.3 prints closed-form coefficients (0.0775x − 1.278x² + 0.588x³);
    they are not reused here because that polynomial is negative for every x > 0.063
    (−0.61 at x = 1), so it is not a probability. The curve is fitted from our own logged
    human buzzes instead.

    Example: correct buzzes spread evenly over [0, 1] by every record make F(x) ≈ x, so
    w(x) ≈ 1 − x.

    >>> w = fit_human_curve(np.linspace(0, 1, 1001), 1001)
    >>> round(float(win_probability(w, 0.25)), 2)
    0.75
    """
    fractions = _as_1d("human_buzz_fractions_correct", human_buzz_fractions_correct)
    _check_in_unit_interval("human_buzz_fractions_correct", fractions)
    if n_human_records < max(fractions.size, 1):
        raise ValueError(
            f"n_human_records must be at least the number of correct records "
            f"({fractions.size}) and positive, got n_human_records = {n_human_records!r}"
        )
    x = np.linspace(0.0, 1.0, 101) if grid is None else _as_1d("grid", grid)
    _check_in_unit_interval("grid", x)
    if x.size < 4:
        raise ValueError(f"a cubic fit needs at least 4 grid points, got {x.size}")
    share_correct_before = (fractions[None, :] < x[:, None]).sum(axis=1) / n_human_records
    return np.poly1d(np.polyfit(x, 1.0 - share_correct_before, 3))


@overload
def win_probability(w: np.poly1d, x: float) -> float: ...
@overload
def win_probability(w: np.poly1d, x: ArrayLike) -> FloatArray: ...
def win_probability(w: np.poly1d, x: ArrayLike) -> float | FloatArray:
    """``clip(w(x), 0, 1)``: the fitted chance that no human has answered by ``x``."""
    value = np.clip(w(np.asarray(x, dtype=np.float64)), 0.0, 1.0)
    return float(value) if np.ndim(value) == 0 else value


def expected_wins(buzz_fraction: ArrayLike, correct: ArrayLike, w: np.poly1d) -> float:
    """Mean over questions of ``EW_q = w(x_q) · 1[correct_q]``.

    ``x_q`` is the model's first buzz position over the question length; ``w`` comes from
    :func:`fit_human_curve` and is clipped to [0, 1]. A question the model never buzzed on
    has ``correct = 0`` and may have ``x = NaN``.

    Example with w(x) = 1 − x: correct at 0.25 → 0.75, wrong at 0.5 → 0, correct at 1.0 →
    0; mean 0.25.

    >>> expected_wins([0.25, 0.5, 1.0], [1, 0, 1], np.poly1d([-1.0, 1.0]))
    0.25
    """
    x = _as_1d("buzz_fraction", buzz_fraction)
    hit = _check_bool_array("correct", correct)
    if x.shape != hit.shape:
        raise ValueError(
            f"buzz_fraction and correct must have the same length, got {x.size} and {hit.size}"
        )
    if x.size == 0:
        raise ValueError("buzz_fraction is empty")
    _check_in_unit_interval("buzz_fraction", np.where(hit | ~np.isnan(x), x, 0.0))
    return float(np.mean(np.where(hit, win_probability(w, np.nan_to_num(x)), 0.0)))


def sh(
    conf: ArrayLike,
    correct: ArrayLike,
    human_frac: ArrayLike,
    *,
    groups: ArrayLike | None = None,
    per_question: bool = False,
    assume_final_buzz: bool = False,
) -> Any:
    """GRACE appendix H's human-adjusted calibration score SH, the mean over questions.

    Per question, with steps t = 0..T in order, confidence ``c_t``, correctness
    ``g_t ∈ {0, 1}`` and ``h_t`` the proportion of humans answering correctly by step t
    (appendix H, as printed):

    * buzz confidence ``b_t = c_t ∏_{i<t} (1 − c_i)``;
    * ``K_t = h_t Σ_{e≤t} b_e g_e``;
    * ``SH_q = Σ_t K_t + (1 − Σ_t h_t) Σ_t b_t g_t``.

    ``groups`` labels each row's question (``None``: one question); rows are in step order
    within each question. ``per_question`` returns ``SH_q`` in sorted order of the labels.
    Higher is better. Implemented exactly as printed (and as in the reference code's
    ``compute_human_adjusted_score``). Two consequences worth knowing: with a cumulative
    ``h_t``, ``Σ_t h_t`` can exceed 1 and the second term turns negative, so SH_q is not
    confined to [0, 1] (pass per-step increments ``np.diff(h, prepend=0)`` for the
    probability reading); and the appendix assumes ``Σ_t b_t = 1`` ("the system must
    reach full confidence at some point"), which holds only if some ``c_t = 1``. The
    assumption is not imposed unless ``assume_final_buzz=True``, which sets each question's
    last ``c_T = 1``.

    Example: c = [0.5, 0.5], g = [0, 1], h = [0, 0.5]: b = [0.5, 0.25], b·g = [0, 0.25],
    K = [0, 0.5 · 0.25] = [0, 0.125], SH = 0.125 + (1 − 0.5) · 0.25 = 0.25.

    >>> sh([0.5, 0.5], [0, 1], [0.0, 0.5])
    0.25
    """
    c0 = _as_1d("conf", conf)
    g0 = _check_bool_array("correct", correct).astype(np.float64)
    h0 = _as_1d("human_frac", human_frac)
    if not (c0.shape == g0.shape == h0.shape):
        raise ValueError(
            f"conf, correct and human_frac must have the same length, got "
            f"{c0.size}, {g0.size} and {h0.size}"
        )
    if c0.size == 0:
        raise ValueError("a question needs at least one step")
    _check_in_unit_interval("conf", c0)
    _check_in_unit_interval("human_frac", h0)
    order, codes = _group_order(groups, c0.size)
    q, c, g, h = codes[order], c0[order], g0[order], h0[order]
    starts = _group_starts(q)
    if assume_final_buzz:
        last = np.ones(q.size, dtype=bool)
        last[:-1] = q[1:] != q[:-1]
        c = np.where(last, 1.0, c)
    # ∏_{i<t} (1 − c_i) within the question, robust to c = 1
    ones = (c >= 1.0).astype(float)
    logs = np.log1p(-np.where(c >= 1.0, 0.0, c))
    cum_log = np.cumsum(logs) - logs
    cum_ones = np.cumsum(ones) - ones
    not_yet = np.where(cum_ones - cum_ones[starts] > 0, 0.0, np.exp(cum_log - cum_log[starts]))
    bg = c * not_yet * g
    cum_bg = np.cumsum(bg)
    within = cum_bg - (cum_bg[starts] - bg[starts])
    k = int(q.max()) + 1
    present = np.bincount(q, minlength=k) > 0
    k_sum = np.bincount(q, weights=h * within, minlength=k)
    h_sum = np.bincount(q, weights=h, minlength=k)
    bg_sum = np.bincount(q, weights=bg, minlength=k)
    per_q = (k_sum + (1.0 - h_sum) * bg_sum)[present]
    return per_q if per_question else float(per_q.mean())


# ---------------------------------------------------------------------------------------
# Appendix F.3: player scores, ranking, quartiles
# ---------------------------------------------------------------------------------------


@overload
def grace_player_score(clue_fraction: float, correct: bool) -> float: ...
@overload
def grace_player_score(clue_fraction: ArrayLike, correct: ArrayLike) -> FloatArray: ...
def grace_player_score(clue_fraction: ArrayLike, correct: ArrayLike) -> float | FloatArray:
    """GRACE appendix F.3: ``20 − 20c`` for a correct buzz at clue fraction c, −5 if wrong.

    >>> grace_player_score(0.25, True), grace_player_score(0.25, False)
    (15.0, -5.0)
    """
    c = np.asarray(clue_fraction, dtype=np.float64)
    ok = np.asarray(correct)
    scalar = c.ndim == 0 and ok.ndim == 0
    c1 = np.atleast_1d(c)
    _check_in_unit_interval("clue_fraction", c1)
    ok1 = _check_bool_array("correct", np.atleast_1d(ok).astype(np.float64))
    score = np.where(ok1, 20.0 - 20.0 * c1, -5.0)
    return float(score[0]) if scalar else score


def rank_players(
    player: ArrayLike,
    clue_fraction: ArrayLike,
    correct: ArrayLike,
    *,
    names: ArrayLike | None = None,
) -> list[PlayerRank]:
    """Rank players by mean :func:`grace_player_score` per question, best first.

    One row per question a player saw: ``clue_fraction`` NaN means no buzz and scores 0.
    Ties are broken by name. With ``names`` (distinct), ``player`` gives each row's player
    as an index into them, and names without a row are left out.

    >>> [(r.player, r.mean_score) for r in rank_players(
    ...     ["ann", "ann", "bob", "bob"], [0.5, np.nan, 0.1, 0.0], [1, 0, 0, 1])]
    [('bob', 7.5), ('ann', 5.0)]
    >>> [(r.player, r.mean_score, r.n) for r in rank_players(
    ...     [1, 1, 0], [0.5, np.nan, 0.1], [1, 0, 1], names=["bob", "ann", "cy"])]
    [('bob', 18.0, 1), ('ann', 5.0, 2)]
    """
    x = _as_1d("clue_fraction", clue_fraction)
    ok = _check_bool_array("correct", correct)
    buzzed = ~np.isnan(x)
    score = np.zeros(x.size)
    if buzzed.any():
        score[buzzed] = grace_player_score(x[buzzed], ok[buzzed])
    if names is None:
        codes, labels = pd.factorize(np.asarray(player, dtype=object))
        # a name given as text and as a number is one player, as in the text of the name
        labels = pd.Index([str(p) for p in labels])
        codes, labels = pd.Index(labels).factorize()[0][codes], labels.unique()
    else:
        codes = np.asarray(player, dtype=np.intp)
        labels = pd.Index([str(p) for p in np.asarray(names, dtype=object)])
        bad = (codes < 0) | (codes >= labels.size)
        if bad.any():
            raise ValueError(
                f"player must index the {labels.size} names, got player[{int(np.argmax(bad))}]"
                f" = {int(codes[np.argmax(bad)])}"
            )
    n = np.bincount(codes, minlength=labels.size)
    total = np.bincount(codes, weights=score, minlength=labels.size)
    ranks = [
        PlayerRank(str(p), float(t / c), int(c))
        for p, t, c in zip(labels, total, n, strict=True)
        if c
    ]
    return sorted(ranks, key=lambda r: (-r.mean_score, r.player))


def quartiles(scores: Mapping[str, float], *, n_groups: int = 4) -> dict[str, int]:
    """Group players by score: 1 = bottom group … ``n_groups`` = top (4 = quartiles, 2 = halves).

    Cut points are ``np.percentile`` at 100k/n_groups; a score equal to a cut point goes to
    the lower group, as in GRACE's analysis code.

    >>> quartiles({"a": 1.0, "b": 2.0, "c": 3.0, "d": 4.0})
    {'a': 1, 'b': 2, 'c': 3, 'd': 4}
    """
    if isinstance(n_groups, bool) or n_groups < 1:
        raise ValueError(f"n_groups must be a positive integer, got n_groups = {n_groups!r}")
    if not scores:
        return {}
    values = _as_1d("scores", list(scores.values()))
    cuts = np.percentile(values, [100.0 * k / n_groups for k in range(1, n_groups)])
    groups = np.searchsorted(cuts, values, side="left") + 1
    return {player: int(g) for player, g in zip(scores, groups, strict=True)}
