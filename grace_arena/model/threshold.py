"""Choosing a model's buzz threshold from data.

Both methods work on *trajectories*: per question, the confidence, correctness and last word
index of each clue prefix. For a threshold ``λ`` the policy buzzes at the first prefix whose
confidence is ≥ ``λ`` (and whose last word is ≥ ``not_before_word``).

(a) **Expected wins** (:func:`threshold_expected_wins`, Rodriguez et al. 2019, GRACE E.3):
``EW(λ) = mean_q w(x_q(λ)) · 1[correct_q(λ)]``, where ``x_q`` is the buzz position as a fraction
of the question and ``w(x)`` the fitted chance that no human has answered correctly by ``x``
(a cubic fit of ``1 − F(x)`` from logged human buzzes, :func:`grace_arena.analysis.curves.
fit_human_curve`). The threshold with the largest EW is chosen (ties: the highest threshold).

(b) **Learn-then-Test** (:func:`threshold_ltt`; Angelopoulos et al. 2021) with a finite-sample
guarantee on the share of incorrect buzzes. With ``n(λ)`` buzzes of which ``k(λ)`` are wrong on
the calibration questions, the null hypothesis ``H_λ: R(λ) > α`` (``R`` = probability that a
buzz is wrong) has the exact binomial tail p-value ``p(λ) = P(Binomial(n(λ), α) ≤ k(λ))``.
Thresholds are tested in a fixed order, from the most cautious (highest) down the grid, each at
level ``δ``, stopping at the first that is not rejected (fixed-sequence testing controls the
family-wise error at ``δ`` without a multiplicity correction). The lowest rejected threshold is
returned: with probability at least ``1 − δ`` over the draw of calibration questions, its
incorrect-buzz share on new questions from the same distribution is at most ``α``.

The sequence starts at the highest grid threshold with at least ``n_min = ⌈log δ / log(1 − α)⌉``
buzzes: with fewer, even a perfect record has ``p = (1 − α)^n > δ`` and would stop the sequence
before it began (the highest thresholds buzz on a handful of questions). The start depends only on
how many questions buzz, never on whether they were right; strictly, this conditions the test on
buzz counts at the skipped thresholds, a small departure from a fixed order that the synthetic
test (``tests/test_model_threshold.py``) checks empirically. ``risk="question"`` instead bounds the
share of *questions* with an incorrect buzz (``n`` = number of questions, every threshold tested
from the top), which needs no start rule and is exactly valid.

Questions are the unit of sampling: a question's prefixes are never split between calibration
and evaluation (:func:`split_by_question`), since they are strongly dependent.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from scipy.stats import binom

from grace_arena.analysis.curves import fit_human_curve, win_probability

__all__ = [
    "DEFAULT_GRID",
    "LTTResult",
    "ThresholdResult",
    "Trajectory",
    "buzz_outcomes",
    "split_by_question",
    "threshold_expected_wins",
    "threshold_ltt",
    "trajectories_from_steps",
]

DEFAULT_GRID: tuple[float, ...] = tuple(round(x, 3) for x in np.linspace(0.0, 1.0, 101))


@dataclass(frozen=True)
class Trajectory:
    """One question's steps: confidence (NaN = missing), correctness and last word index."""

    question_id: str
    confidence: np.ndarray
    correct: np.ndarray
    word_index: np.ndarray
    n_words: int

    def __post_init__(self) -> None:
        if not (len(self.confidence) == len(self.correct) == len(self.word_index)):
            raise ValueError(f"question {self.question_id!r}: arrays of different lengths")
        if self.n_words <= 0:
            raise ValueError(f"question {self.question_id!r}: n_words must be > 0")


def trajectories_from_steps(
    steps_by_question: dict[str, Sequence[Any]],
    n_words: dict[str, int],
    *,
    confidence: str = "confidence_logit",
) -> list[Trajectory]:
    """Trajectories from recorded steps (``ModelStepRow``-like objects), sorted by step."""
    out = []
    for qid, steps in steps_by_question.items():
        steps = sorted(steps, key=lambda s: s.step)
        conf = [getattr(s, confidence) for s in steps]
        out.append(
            Trajectory(
                question_id=qid,
                confidence=np.array(
                    [
                        np.nan if c is None or not s.guess else c
                        for c, s in zip(conf, steps, strict=True)
                    ],
                    dtype=float,
                ),
                correct=np.array([bool(s.correct) for s in steps]),
                word_index=np.array([s.word_index for s in steps]),
                n_words=n_words[qid],
            )
        )
    return out


def buzz_outcomes(
    trajectories: Sequence[Trajectory],
    thresholds: Sequence[float],
    *,
    not_before_word: int = 0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each threshold (rows) and question (columns): buzzed?, correct?, buzz fraction.

    The fraction is ``(word_index + 1) / n_words`` of the buzz (NaN without a buzz).
    """
    lam = np.asarray(thresholds, dtype=float)
    n_q = len(trajectories)
    buzzed = np.zeros((lam.size, n_q), dtype=bool)
    correct = np.zeros((lam.size, n_q), dtype=bool)
    frac = np.full((lam.size, n_q), np.nan)
    for j, tr in enumerate(trajectories):
        conf = np.where(tr.word_index >= not_before_word, tr.confidence, np.nan)
        conf = np.nan_to_num(conf, nan=-np.inf)
        if conf.size == 0:
            continue
        passes = conf[None, :] >= lam[:, None]  # thresholds x steps
        any_pass = passes.any(axis=1)
        first = passes.argmax(axis=1)
        buzzed[:, j] = any_pass
        correct[:, j] = any_pass & tr.correct[first]
        frac[:, j] = np.where(any_pass, (tr.word_index[first] + 1) / tr.n_words, np.nan)
    return buzzed, correct, np.minimum(frac, 1.0)


@dataclass(frozen=True)
class ThresholdResult:
    threshold: float
    expected_wins: float
    table: list[tuple[float, float, int, int]]  # (threshold, EW, buzzes, correct buzzes)


def threshold_expected_wins(
    trajectories: Sequence[Trajectory],
    human_curve: np.poly1d,
    *,
    grid: Sequence[float] = DEFAULT_GRID,
    not_before_word: int = 0,
) -> ThresholdResult:
    """The grid threshold that maximises expected wins against ``human_curve`` (method (a))."""
    if not trajectories:
        raise ValueError("no trajectories to choose a threshold from")
    buzzed, correct, frac = buzz_outcomes(trajectories, grid, not_before_word=not_before_word)
    ew = np.where(correct, win_probability(human_curve, np.nan_to_num(frac)), 0.0).mean(axis=1)
    best = max(range(len(grid)), key=lambda i: (round(float(ew[i]), 12), grid[i]))
    table = [
        (float(grid[i]), float(ew[i]), int(buzzed[i].sum()), int(correct[i].sum()))
        for i in range(len(grid))
    ]
    return ThresholdResult(float(grid[best]), float(ew[best]), table)


def human_curve_from_fractions(fractions_correct: Sequence[float], n_records: int) -> np.poly1d:
    """The cubic ``w(x)`` from correct human buzz fractions and the number of records."""
    return fit_human_curve(np.asarray(fractions_correct, dtype=float), n_records)


@dataclass(frozen=True)
class LTTResult:
    threshold: float | None  # None: no threshold could be certified
    alpha: float
    delta: float
    risk: str
    tested: list[tuple[float, int, int, float]] = field(default_factory=list)  # λ, n, k, p


def threshold_ltt(
    trajectories: Sequence[Trajectory],
    *,
    alpha: float,
    delta: float = 0.1,
    grid: Sequence[float] = DEFAULT_GRID,
    not_before_word: int = 0,
    risk: Literal["buzz", "question"] = "buzz",
) -> LTTResult:
    """Learn-then-Test threshold with a finite-sample guarantee (method (b), module docstring).

    Returns the lowest threshold certified to keep the incorrect-buzz share ≤ ``alpha`` with
    probability ≥ ``1 − delta``; ``threshold`` is None if none could be certified.
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")
    if risk not in ("buzz", "question"):
        raise ValueError(f"risk must be 'buzz' or 'question', got {risk!r}")
    if not trajectories:
        raise ValueError("no trajectories to choose a threshold from")
    order = sorted(set(float(x) for x in grid), reverse=True)  # most cautious first
    buzzed, correct, _ = buzz_outcomes(trajectories, order, not_before_word=not_before_word)
    n_buzz = buzzed.sum(axis=1)
    n_wrong = (buzzed & ~correct).sum(axis=1)
    chosen = None
    tested: list[tuple[float, int, int, float]] = []
    # With n buzzes and none wrong the p-value is (1 − α)^n: below n_min nothing can be rejected.
    n_min = max(1, math.ceil(math.log(delta) / math.log(1 - alpha)))
    started = risk == "question"
    for i, lam in enumerate(order):
        n = int(n_buzz[i]) if risk == "buzz" else len(trajectories)
        k = int(n_wrong[i])
        if not started:
            if n_buzz[i] < n_min:
                continue
            started = True
        p = float(binom.cdf(k, n, alpha)) if n > 0 else 1.0
        tested.append((lam, n, k, p))
        if p > delta:
            break
        chosen = lam
    return LTTResult(chosen, alpha, delta, risk, tested)


def split_by_question(
    trajectories: Sequence[Trajectory], fraction: float, *, seed: int = 0
) -> tuple[list[Trajectory], list[Trajectory]]:
    """Shuffle whole questions and split them ``fraction`` / ``1 − fraction``."""
    if not 0 < fraction < 1:
        raise ValueError(f"fraction must be in (0, 1), got {fraction!r}")
    items = list(trajectories)
    random.Random(seed).shuffle(items)
    cut = round(len(items) * fraction)
    return items[:cut], items[cut:]
