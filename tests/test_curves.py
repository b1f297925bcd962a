"""Human-vs-model curves, expected wins, SH_q and GRACE player scores."""

from __future__ import annotations

import doctest
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from grace_arena.analysis import curves as curves_module
from grace_arena.analysis.curves import (
    accuracy_by_fraction,
    buzz_given_correct,
    cumulative_buzz_rates,
    expected_wins,
    fit_human_curve,
    fraction_revealed,
    grace_player_score,
    quartiles,
    rank_players,
    sh,
    win_probability,
)

# ---------------------------------------------------------------------------------------
# Positions and cumulative buzz rates (figure 4)
# ---------------------------------------------------------------------------------------


def test_fraction_revealed_counts_the_buzzed_word_as_heard() -> None:
    assert fraction_revealed(0, 10) == 0.1  # one word heard of ten
    assert fraction_revealed(9, 10) == 1.0
    assert fraction_revealed(12, 10) == 1.0  # buzz after the last word
    # an unknown length (n_words < 1) gives NaN
    assert math.isnan(fraction_revealed(0, 0))
    with pytest.raises(ValueError, match="word_index = -1"):
        fraction_revealed(-1, 10)


# H1: correct at x = 0.5 (q1), wrong at 0.2 (q2), correct at 1.0 (q3); heard 4 questions.
H1 = {"fraction": [0.5, 0.2, 1.0], "correct": [1, 0, 1], "groups": ["q1", "q2", "q3"]}


def test_cumulative_buzz_rates_hand_worked() -> None:
    h1 = cumulative_buzz_rates(**H1, grid=[0.0, 0.25, 0.5, 0.75, 1.0], n_questions=4)
    assert h1.n_questions == 4
    assert h1.correct.tolist() == [0, 0, 0.25, 0.25, 0.5]
    assert h1.incorrect.tolist() == [0, 0.25, 0.25, 0.25, 0.25]
    # M1: wrong at 0.3, correct at 0.8
    m1 = cumulative_buzz_rates(
        [0.3, 0.8], [0, 1], groups=["q1", "q2"], grid=[0.0, 0.25, 0.5, 0.75, 1.0], n_questions=4
    )
    assert m1.correct.tolist() == [0, 0, 0, 0, 0.25]
    assert m1.incorrect.tolist() == [0, 0, 0.25, 0.25, 0.25]


def test_cumulative_buzz_rates_counts_a_question_once_at_its_earliest_buzz() -> None:
    rates = cumulative_buzz_rates([0.9, 0.4], [1, 1], groups=["q1", "q1"], grid=[0.4, 1.0],
                                  n_questions=2)  # fmt: skip
    assert rates.correct.tolist() == [0.5, 0.5]


def test_cumulative_buzz_rates_checks_its_arguments() -> None:
    with pytest.raises(ValueError, match="n_questions = 2"):
        cumulative_buzz_rates(**H1, grid=[1.0], n_questions=2)
    with pytest.raises(ValueError, match=r"grid\[0\] = 1\.5"):
        cumulative_buzz_rates(**H1, grid=[1.5], n_questions=4)


@given(
    buzzes=st.lists(
        st.tuples(st.integers(0, 5), st.integers(0, 30), st.booleans()), min_size=1, max_size=40
    )
)
def test_cumulative_rates_are_nondecreasing_and_end_at_the_buzz_share(buzzes) -> None:
    x = [fraction_revealed(w, 20) for _, w, _ in buzzes]
    curve = cumulative_buzz_rates(
        x, [int(ok) for *_, ok in buzzes], groups=[q for q, _, _ in buzzes],
        grid=np.linspace(0, 1, 21), n_questions=6,
    )  # fmt: skip
    for is_correct, values in ((True, curve.correct), (False, curve.incorrect)):
        assert np.all(np.diff(values) >= 0)
        assert values.min() >= 0 and values.max() <= 1
        # At x = 1 every buzz has happened: the share of questions with such a buzz.
        hit = {q for q, _, ok in buzzes if ok == is_correct}
        assert values[-1] == pytest.approx(len(hit) / 6)


# ---------------------------------------------------------------------------------------
# Accuracy against fraction revealed (figure 5) and P(buzz | correct) (figure 6)
# ---------------------------------------------------------------------------------------


def test_accuracy_by_fraction_hand_worked() -> None:
    # (word, words, correct): 2/10 = 0.2 → [0, 0.5); 5/10 = 0.5 → [0.5, 1] (edge goes up);
    # 1.0 → last bin, closed; 1/4 = 0.25 → [0, 0.5); 4/4 → [0.5, 1]
    x = fraction_revealed([1, 4, 9, 0, 3], [10, 10, 10, 4, 4])
    curve = accuracy_by_fraction(x, [0, 1, 1, 1, 0], bins=2)
    assert curve.count.tolist() == [2, 3]
    # [0, 0.5): one right of two; [0.5, 1]: two right of three
    assert curve.accuracy.tolist() == pytest.approx([0.5, 2 / 3])
    assert curve.lower.tolist() == [0.0, 0.5] and curve.upper.tolist() == [0.5, 1.0]


def test_accuracy_by_fraction_with_explicit_edges_and_empty_bins() -> None:
    curve = accuracy_by_fraction([1.0, math.nan], [1, 0], bins=[0.0, 0.5, 0.9, 1.0])
    assert curve.count.tolist() == [0, 0, 1]  # the unknown (NaN) fraction is left out
    assert math.isnan(curve.accuracy[0]) and curve.accuracy[2] == 1.0


def test_buzz_given_correct_stops_at_the_first_buzz() -> None:
    # (question, correct, would buzz) in step order within each question
    rows = [
        ("q1", 0, 0),
        ("q1", 1, 0),
        ("q1", 1, 1),  # first buzz: later steps of q1 do not count
        ("q1", 1, 1),
        ("q2", 0, 0),
        ("q2", 0, 1),
    ]
    q, ok, b = zip(*rows, strict=True)
    rates = buzz_given_correct(ok, b, groups=q)
    # correct steps used: q1/2 (no buzz), q1/3 (buzz) → 1/2
    # incorrect steps used: q1/1 (no), q2/1 (no), q2/2 (buzz) → 1/3
    assert (rates.n_correct, rates.n_incorrect) == (2, 3)
    assert rates.p_buzz_given_correct == pytest.approx(1 / 2)
    assert rates.p_buzz_given_incorrect == pytest.approx(1 / 3)
    # Without the cut, q1/4 is counted too: correct 3 steps, 2 buzzes.
    everything = buzz_given_correct(ok, b, groups=q, until_first_buzz=False)
    assert everything.p_buzz_given_correct == pytest.approx(2 / 3)
    # interleaved questions give the same numbers: groups, not adjacency, tell them apart
    order = [4, 0, 1, 5, 2, 3]
    mixed = buzz_given_correct(np.take(ok, order), np.take(b, order), groups=np.take(q, order))
    assert mixed == rates


def test_buzz_given_correct_is_nan_without_rows_of_a_kind() -> None:
    rates = buzz_given_correct([1], [1])
    assert rates.p_buzz_given_correct == 1.0
    assert math.isnan(rates.p_buzz_given_incorrect)


# ---------------------------------------------------------------------------------------
# Expected wins
# ---------------------------------------------------------------------------------------


def test_fit_human_curve_recovers_a_linear_survival_curve() -> None:
    # 1,000 records all correct, evenly spread: F(x) ≈ x → w(x) ≈ 1 − x.
    w = fit_human_curve(np.linspace(0, 1, 1000), 1000)
    grid = np.linspace(0, 1, 11)
    assert win_probability(w, grid) == pytest.approx(1 - grid, abs=0.01)


def test_fit_human_curve_counts_records_without_a_correct_buzz() -> None:
    # Half the records never answer correctly: F(x) ≈ x/2 → w(x) ≈ 1 − x/2, w(1) ≈ 0.5.
    w = fit_human_curve(np.linspace(0, 1, 500), 1000)
    assert win_probability(w, 1.0) == pytest.approx(0.5, abs=0.01)
    assert win_probability(w, 0.0) == pytest.approx(1.0, abs=0.01)


@pytest.mark.parametrize(
    "shape",
    [
        lambda u: u,  # buzzes spread evenly: F(x) = x
        np.sqrt,  # late buzzes: F(x) = x²
        np.cbrt,  # very late buzzes: F(x) = x³
        # Shapes a cubic cannot follow (a kink, or F(x) = √x with its vertical tangent at 0)
        # are left out on purpose: the least-squares cubic bulges there, and only the
        # clipping to [0, 1] is guaranteed.
    ],
)
def test_fitted_curve_is_a_decreasing_probability_on_monotone_data(shape) -> None:
    fractions = shape(np.linspace(0, 1, 400))
    w = fit_human_curve(fractions, 500)  # 80% of records answer correctly in the end
    values = win_probability(w, np.linspace(0, 1, 201))
    assert values.min() >= 0 and values.max() <= 1
    # Non-increasing up to the fit's noise from the step-shaped empirical F.
    assert np.all(np.diff(values) <= 1e-4)
    assert values[0] == pytest.approx(1.0, abs=0.01)
    assert values[-1] == pytest.approx(0.2, abs=0.01)


@given(
    fractions=st.lists(st.floats(0, 1), min_size=1, max_size=50),
    extra=st.integers(0, 50),
    x=st.lists(st.floats(-0.5, 1.5), min_size=1, max_size=10),
)
def test_clipped_curve_is_always_a_probability(fractions, extra, x) -> None:
    w = fit_human_curve(fractions, len(fractions) + extra)
    values = win_probability(w, np.array(x))
    assert np.all((values >= 0) & (values <= 1))


def test_fit_human_curve_checks_its_arguments() -> None:
    with pytest.raises(ValueError, match="n_human_records = 1"):
        fit_human_curve([0.2, 0.5], 1)
    with pytest.raises(ValueError, match=r"human_buzz_fractions_correct\[0\] = 1\.2"):
        fit_human_curve([1.2], 5)
    with pytest.raises(ValueError, match="at least 4 grid points"):
        fit_human_curve([0.5], 5, grid=[0.0, 0.5, 1.0])


def test_expected_wins_hand_worked() -> None:
    w = np.poly1d([-1.0, 1.0])  # w(x) = 1 − x
    # right at 0.25 → 0.75; wrong at 0.5 → 0; never buzzed (NaN, wrong) → 0; right at 0.9 → 0.1
    value = expected_wins([0.25, 0.5, math.nan, 0.9], [1, 0, 0, 1], w)
    assert value == pytest.approx((0.75 + 0 + 0 + 0.1) / 4)
    # w above 1 or below 0 is clipped: w(x) = 2 − 4x → w(0) = 2 → 1, w(1) = −2 → 0
    assert expected_wins([0.0, 1.0], [1, 1], np.poly1d([-4.0, 2.0])) == pytest.approx(0.5)


def test_expected_wins_checks_its_arguments() -> None:
    w = np.poly1d([1.0])
    with pytest.raises(ValueError, match=r"buzz_fraction\[0\] = nan"):
        expected_wins([math.nan], [1], w)  # a correct buzz needs a position
    with pytest.raises(ValueError, match="same length"):
        expected_wins([0.5], [1, 0], w)
    with pytest.raises(ValueError, match=r"correct\[0\] = 3\.0"):
        expected_wins([0.5], [3], w)


# ---------------------------------------------------------------------------------------
# GRACE appendix H: SH_q
# ---------------------------------------------------------------------------------------


def sh_by_loops(c: list[float], g: list[int], h: list[float]) -> float:
    """Appendix H transcribed term by term, as an oracle for the vectorized version."""
    b = [c[t] * math.prod(1 - c[i] for i in range(t)) for t in range(len(c))]
    k = [h[t] * sum(b[e] * g[e] for e in range(t + 1)) for t in range(len(c))]
    return sum(k) + (1 - sum(h)) * sum(b[t] * g[t] for t in range(len(c)))


def test_sh_hand_worked() -> None:
    # c = [0.5, 0.5, 1.0], g = [0, 1, 1], h = [0, 0.25, 0.5]
    # b = [0.5, 0.5·0.5, 1·0.5·0.5] = [0.5, 0.25, 0.25]; b·g = [0, 0.25, 0.25]
    # K = [0·0, 0.25·0.25, 0.5·0.5] = [0, 0.0625, 0.25]  → Σ K = 0.3125
    # (1 − Σ h) Σ b·g = (1 − 0.75) · 0.5 = 0.125          → SH = 0.4375
    assert sh([0.5, 0.5, 1.0], [0, 1, 1], [0.0, 0.25, 0.5]) == pytest.approx(0.4375)


def test_sh_anchors() -> None:
    # Sure and right at the first step, no human answers: SH = b_0 g_0 = 1.
    assert sh([1.0, 1.0], [1, 1], [0.0, 0.0]) == pytest.approx(1.0)
    # Sure and wrong at the first step: all buzz mass on a wrong answer → 0.
    assert sh([1.0, 1.0], [0, 1], [0.0, 0.0]) == pytest.approx(0.0)
    # Never confident: no buzz mass anywhere → 0, unless the final buzz is assumed.
    assert sh([0.0, 0.0], [1, 1], [0.0, 0.0]) == 0.0
    assert sh([0.0, 0.0], [1, 1], [0.0, 0.0], assume_final_buzz=True) == 1.0


def test_sh_is_not_confined_to_the_unit_interval_with_cumulative_h() -> None:
    # As printed: Σ h = 1.8 > 1 makes the second term negative.
    # b = [0.5, 0.5], g = [1, 0]: K = [0.9·0.5, 0.9·0.5] = 0.9; (1 − 1.8)·0.5 = −0.4 → 0.5
    assert sh([0.5, 1.0], [1, 0], [0.9, 0.9]) == pytest.approx(0.5)
    # g = [0, 1]: K = [0, 0.9·0.5]; (1 − 1.8)·0.5 = −0.4 → 0.05
    assert sh([0.5, 1.0], [0, 1], [0.9, 0.9]) == pytest.approx(0.05)
    # Buzz mass only on the last step (right there), humans right early and often:
    # b·g = [0, 0, 1], K = [0, 0, 1·1], Σ h = 2.4 → 1 + (1 − 2.4)·1 = −0.4 < 0.
    assert sh([0.0, 0.0, 1.0], [0, 0, 1], [0.6, 0.8, 1.0]) == pytest.approx(-0.4)


@given(
    data=st.lists(
        st.tuples(st.floats(0, 1), st.booleans(), st.floats(0, 1)), min_size=1, max_size=12
    )
)
def test_sh_matches_the_appendix_term_by_term(data) -> None:
    c = [v for v, _, _ in data]
    g = [int(ok) for _, ok, _ in data]
    h = [v for _, _, v in data]
    assert sh(c, g, h) == pytest.approx(sh_by_loops(c, g, h), abs=1e-9)


def test_sh_checks_its_arguments() -> None:
    with pytest.raises(ValueError, match="same length"):
        sh([0.5], [1, 1], [0.0])
    with pytest.raises(ValueError, match=r"conf\[0\] = 2\.0"):
        sh([2.0], [1], [0.0])
    with pytest.raises(ValueError, match="at least one step"):
        sh([], [], [])


# ---------------------------------------------------------------------------------------
# GRACE appendix F.3: player scores, ranking, quartiles
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fraction", "correct", "expected"),
    [
        (0.0, True, 20.0),
        (0.5, True, 10.0),
        (1.0, True, 0.0),
        (0.0, False, -5.0),
        (1.0, False, -5.0),
    ],
)
def test_grace_player_score_anchors(fraction: float, correct: bool, expected: float) -> None:
    assert grace_player_score(fraction, correct) == expected


def test_grace_player_score_is_vectorized_and_checked() -> None:
    scores = grace_player_score(np.array([0.25, 0.75]), np.array([True, False]))
    assert scores.tolist() == [15.0, -5.0]
    with pytest.raises(ValueError, match=r"clue_fraction\[0\] = 1\.5"):
        grace_player_score(1.5, True)


def test_rank_players_by_mean_score() -> None:
    records = [
        ("ann", 0.5, True),  # 10
        ("ann", None, False),  # no buzz: 0 → mean 5
        ("bob", 0.75, True),  # 5 → mean 5, ties with ann: by name
        ("cy", 0.1, False),  # −5
        ("cy", 0.0, True),  # 20 → mean 7.5
    ]
    ranks = rank_players(
        [p for p, _, _ in records],
        [math.nan if x is None else x for _, x, _ in records],
        [ok for _, _, ok in records],
    )
    assert [(r.player, r.mean_score, r.n) for r in ranks] == [
        ("cy", 7.5, 2),
        ("ann", 5.0, 2),
        ("bob", 5.0, 1),
    ]


def test_quartiles_split_players_bottom_to_top() -> None:
    scores = {f"p{i}": float(i) for i in range(1, 9)}
    # cut points: 25th = 2.75, 50th = 4.5, 75th = 6.25
    assert list(quartiles(scores).values()) == [1, 1, 2, 2, 3, 3, 4, 4]
    # halves: cut at the median 4.5
    assert list(quartiles(scores, n_groups=2).values()) == [1, 1, 1, 1, 2, 2, 2, 2]


def test_quartiles_put_a_score_on_the_cut_in_the_lower_group() -> None:
    # 1, 2, 3, 4, 5: cut points 2, 3, 4 → 2 goes to Q1, 3 to Q2, 4 to Q3
    scores = {"a": 1.0, "b": 2.0, "c": 3.0, "d": 4.0, "e": 5.0}
    assert quartiles(scores) == {"a": 1, "b": 1, "c": 2, "d": 3, "e": 4}
    assert quartiles({}) == {}


def test_docstring_examples_hold() -> None:
    result = doctest.testmod(curves_module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 10
    assert result.failed == 0


def test_sh_per_question_with_groups_hand_worked() -> None:
    # q1 is the appendix example (0.25); q2 = [1.0] right with h = 0: b·g = [1], SH = 1.
    # Rows of the two questions interleaved: each question keeps its own step order.
    values = sh(
        [0.5, 1.0, 0.5], [0, 1, 1], [0.0, 0.0, 0.5], groups=["q1", "q2", "q1"], per_question=True
    )
    assert values.tolist() == pytest.approx([0.25, 1.0])
    assert sh([0.5, 1.0, 0.5], [0, 1, 1], [0.0, 0.0, 0.5], groups=["q1", "q2", "q1"]) == 0.625
