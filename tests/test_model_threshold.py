"""Threshold selection on synthetic trajectories whose answers are known."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom

from grace_arena.model.threshold import (
    DEFAULT_GRID,
    Trajectory,
    buzz_outcomes,
    split_by_question,
    threshold_expected_wins,
    threshold_ltt,
)


def _traj(qid, conf, correct, words, n_words=10) -> Trajectory:
    return Trajectory(qid, np.array(conf, float), np.array(correct, bool), np.array(words), n_words)


def synthetic(n: int, rng: np.random.Generator, *, steps: int = 6) -> list[Trajectory]:
    """Confidence rises along the question; P(correct | c) = c**2 (an overconfident model)."""
    conf = np.sort(rng.uniform(0, 1, size=(n, steps)), axis=1)
    correct = rng.uniform(size=(n, steps)) < conf**2
    words = np.arange(steps) * 10 + 9
    return [_traj(f"q{i}", conf[i], correct[i], words, steps * 10) for i in range(n)]


def test_buzz_outcomes_by_hand():
    tr = [_traj("a", [0.2, np.nan, 0.8], [0, 1, 1], [2, 5, 9])]
    buzzed, correct, frac = buzz_outcomes(tr, [0.1, 0.5, 0.9], not_before_word=0)
    assert buzzed[:, 0].tolist() == [True, True, False]
    assert correct[:, 0].tolist() == [False, True, False]  # NaN (missing) never buzzes
    assert frac[0, 0] == pytest.approx(0.3) and frac[1, 0] == pytest.approx(1.0)
    gated, _, _ = buzz_outcomes(tr, [0.1], not_before_word=3)
    assert gated[0, 0]  # the first step is skipped; the third passes


def test_expected_wins_picks_the_known_best_threshold():
    w = np.poly1d([-1.0, 1.0])  # a human has answered by x with probability x
    q1 = _traj("q1", [0.3, 0.6, 0.9], [0, 1, 1], [3, 6, 9])
    q2 = _traj("q2", [0.7, 0.8, 0.95], [0, 0, 1], [3, 6, 9])
    # By hand: λ ≤ 0.3 both buzz wrong at once; 0.3 < λ ≤ 0.6 q1 is right at 70 % (EW 0.3/2);
    # above 0.6 every correct buzz is at the end (w = 0). Ties go to the highest threshold.
    result = threshold_expected_wins([q1, q2], w)
    assert result.threshold == pytest.approx(0.6)
    assert result.expected_wins == pytest.approx(0.15)
    row = dict((t, ew) for t, ew, _, _ in result.table)
    assert row[0.3] == 0.0 and row[0.31] == pytest.approx(0.15) and row[0.61] == 0.0


def test_ltt_p_values_by_hand():
    # 20 questions all right at the first step with confidence 0.9: p = 0.8**20 at α = 0.2.
    tr = [_traj(f"q{i}", [0.9], [1], [9]) for i in range(20)]
    result = threshold_ltt(tr, alpha=0.2, delta=0.05, grid=[0.95, 0.9, 0.5])
    assert result.tested[0] == (0.9, 20, 0, pytest.approx(0.8**20))
    assert result.threshold == 0.5
    # Too few questions for the guarantee: 0.8**10 = 0.107 > 0.05.
    assert threshold_ltt(tr[:10], alpha=0.2, delta=0.05).threshold is None


def test_ltt_stops_at_the_first_failure():
    good = [_traj(f"g{i}", [0.9], [1], [9]) for i in range(30)]
    bad = [_traj(f"b{i}", [0.6], [0], [9]) for i in range(30)]
    result = threshold_ltt(good + bad, alpha=0.1, delta=0.1, grid=[0.9, 0.7, 0.6, 0.1])
    assert result.threshold == 0.7
    lam, n, k, p = result.tested[-1]
    assert (lam, n, k) == (0.6, 60, 30) and p == pytest.approx(binom.cdf(30, 60, 0.1))


def test_ltt_controls_the_incorrect_buzz_share_on_held_out_questions():
    alpha, delta, n_cal, draws = 0.2, 0.1, 300, 150
    rng = np.random.default_rng(7)
    population = synthetic(40_000, rng)
    grid = np.array(DEFAULT_GRID)
    buzzed, correct, _ = buzz_outcomes(population, grid)
    n_buzz = buzzed.sum(axis=1)
    wrong_share = np.divide(
        (buzzed & ~correct).sum(1), n_buzz, out=np.zeros(grid.size), where=n_buzz > 0
    )
    true_risk = dict(zip(grid.tolist(), wrong_share, strict=True))
    violations = naive_violations = 0
    buzz_shares = []
    for _ in range(draws):
        cal = synthetic(n_cal, rng)
        result = threshold_ltt(cal, alpha=alpha, delta=delta)
        if result.threshold is not None:
            violations += true_risk[result.threshold] > alpha
            buzz_shares.append(n_buzz[np.searchsorted(grid, result.threshold)] / len(population))
        # The naive rule: the lowest threshold whose calibration error share is <= α.
        b, c, _ = buzz_outcomes(cal, grid)
        emp = np.where(b.sum(1) > 0, (b & ~c).sum(1) / np.maximum(b.sum(1), 1), 0.0)
        naive = grid[np.argmax(emp <= alpha)] if (emp <= alpha).any() else None
        naive_violations += naive is not None and true_risk[float(naive)] > alpha
    assert violations / draws <= delta, violations
    assert naive_violations / draws > 2 * max(violations, 1) / draws  # the naive rule fails more
    assert len(buzz_shares) >= 0.9 * draws and np.mean(buzz_shares) > 0.5  # not a trivial answer


def test_ltt_question_risk_bounds_wrong_buzzes_per_question():
    rng = np.random.default_rng(3)
    cal = synthetic(400, rng)
    result = threshold_ltt(cal, alpha=0.1, delta=0.1, risk="question")
    assert result.threshold is not None and result.risk == "question"
    assert all(n == 400 for _, n, _, _ in result.tested)


def test_bad_arguments_are_named():
    tr = [_traj("a", [0.5], [1], [0])]
    with pytest.raises(ValueError, match="alpha"):
        threshold_ltt(tr, alpha=1.5)
    with pytest.raises(ValueError, match="delta"):
        threshold_ltt(tr, alpha=0.1, delta=0)
    with pytest.raises(ValueError, match="risk"):
        threshold_ltt(tr, alpha=0.1, risk="everything")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no trajectories"):
        threshold_ltt([], alpha=0.1)
    with pytest.raises(ValueError, match="lengths"):
        _traj("b", [0.5, 0.6], [1], [0])


def test_split_by_question_keeps_questions_whole():
    tr = [_traj(f"q{i}", [0.1, 0.9], [0, 1], [1, 2]) for i in range(10)]
    a, b = split_by_question(tr, 0.3, seed=1)
    assert len(a) == 3 and len(b) == 7
    assert {t.question_id for t in a}.isdisjoint({t.question_id for t in b})
    assert all(len(t.confidence) == 2 for t in a + b)
