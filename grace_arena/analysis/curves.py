"""Human-vs-model curves and buzz-timing scores (GRACE figures 4–6, appendices F.3 and H).

Positions: a buzz at 0-based word index ``i`` of an ``n``-word question has heard
``i + 1`` words (QBJ: a partly heard word counts as whole), so its *fraction revealed* is
``(i + 1) / n``, capped at 1 for buzzes after the last word (:func:`fraction_revealed`).

Everything here computes numbers; plotting lives elsewhere.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import NamedTuple, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

from grace_arena.analysis.metrics import QuestionId, Step

__all__ = [
    "AccuracyCurve",
    "BuzzRateCurve",
    "BuzzRates",
    "BuzzRecord",
    "PlayerRank",
    "PolicyStep",
    "accuracy_by_fraction",
    "buzz_given_correct",
    "cumulative_buzz_rates",
    "expected_wins",
    "fit_human_curve",
    "fraction_revealed",
    "grace_player_score",
    "quartiles",
    "rank_players",
    "sh_question",
    "win_probability",
]

FloatArray = NDArray[np.float64]


class BuzzRecord(NamedTuple):
    """One buzz by a team (human or model) on a question."""

    team: str
    team_kind: str
    question_id: QuestionId
    word_index: int
    n_words: int
    correct: bool


class PolicyStep(NamedTuple):
    """One model step with the buzz policy's decision (any object with these fields works)."""

    model: str
    question_id: QuestionId
    step: int
    correct: bool
    would_buzz: bool


@dataclass(frozen=True, slots=True)
class BuzzRateCurve:
    """Cumulative correct / incorrect buzz rates of one team on ``grid``."""

    team: str
    team_kind: str
    n_questions: int
    grid: FloatArray
    correct: FloatArray
    incorrect: FloatArray


@dataclass(frozen=True, slots=True)
class AccuracyCurve:
    """Accuracy of one model's guesses per bin of fraction revealed."""

    model: str
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


def _as_1d(name: str, values: ArrayLike) -> FloatArray:
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric: {exc}") from None
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array, got shape {arr.shape}")
    return arr


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


def fraction_revealed(word_index: int, n_words: int) -> float:
    """``(word_index + 1) / n_words`` capped at 1: the share of words heard at a buzz.

    >>> fraction_revealed(0, 4), fraction_revealed(3, 4), fraction_revealed(7, 4)
    (0.25, 1.0, 1.0)
    """
    if n_words < 1:
        raise ValueError(f"n_words must be at least 1, got n_words = {n_words!r}")
    if word_index < 0:
        raise ValueError(f"word_index must be >= 0, got word_index = {word_index!r}")
    return min((word_index + 1) / n_words, 1.0)


# ---------------------------------------------------------------------------------------
# Figure 4: cumulative buzz rates per team
# ---------------------------------------------------------------------------------------


def cumulative_buzz_rates(
    buzzes: Iterable[BuzzRecord],
    *,
    grid: ArrayLike,
    questions_played: Mapping[str, int] | None = None,
) -> dict[str, BuzzRateCurve]:
    """Per team, the share of its questions with a correct (incorrect) buzz by each ``x``.

    ``correct(x) = #{questions with a correct buzz at fraction revealed ≤ x} / n_q`` and the
    same for incorrect buzzes, where ``n_q`` is the number of questions the team played
    (GRACE normalises by matches played; per question is the same thing at a finer grain).
    A question counts once per team, at the team's earliest buzz of that kind.

    ``questions_played`` maps team → questions heard. Without it every team is taken to
    have heard every question that appears in ``buzzes``; questions on which nobody buzzed
    are then missing from the denominator, so pass it when the match record is at hand.

    Example: team A buzzes correctly at word 4 of 10 on q1 (x = 0.5) and wrongly at word 1
    of 4 on q2 (x = 0.5) and played 4 questions: on grid [0.25, 0.5, 1.0] its correct rate
    is [0, 1/4, 1/4] and its incorrect rate [0, 1/4, 1/4].

    >>> buzzes = [BuzzRecord("A", "human", "q1", 4, 10, True),
    ...           BuzzRecord("A", "human", "q2", 1, 4, False)]
    >>> rates = cumulative_buzz_rates(buzzes, grid=[0.25, 0.5, 1.0], questions_played={"A": 4})
    >>> rates["A"].correct.tolist(), rates["A"].incorrect.tolist()
    ([0.0, 0.25, 0.25], [0.0, 0.25, 0.25])
    """
    grid_arr = _as_1d("grid", grid)
    _check_in_unit_interval("grid", grid_arr)
    first: dict[tuple[str, QuestionId, bool], float] = {}
    kinds: dict[str, str] = {}
    all_questions: set[QuestionId] = set()
    for b in buzzes:
        x = fraction_revealed(b.word_index, b.n_words)
        key = (b.team, b.question_id, bool(b.correct))
        first[key] = min(first.get(key, math.inf), x)
        kinds.setdefault(b.team, b.team_kind)
        all_questions.add(b.question_id)

    curves: dict[str, BuzzRateCurve] = {}
    for team in sorted(kinds):
        if questions_played is not None:
            if team not in questions_played:
                raise ValueError(f"questions_played has no entry for team = {team!r}")
            n_q = int(questions_played[team])
        else:
            n_q = len(all_questions)
        n_team_questions = len({q for (t, q, _) in first if t == team})
        if n_q < n_team_questions:
            raise ValueError(
                f"team {team!r} buzzed on {n_team_questions} questions but questions_played = {n_q}"
            )

        def rate(is_correct: bool, team: str = team, n_q: int = n_q) -> FloatArray:
            xs = np.array([x for (t, _, c), x in first.items() if t == team and c == is_correct])
            return (xs[:, None] <= grid_arr[None, :]).sum(axis=0) / n_q

        curves[team] = BuzzRateCurve(
            team=team,
            team_kind=kinds[team],
            n_questions=n_q,
            grid=grid_arr,
            correct=rate(True),
            incorrect=rate(False),
        )
    return curves


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


def accuracy_by_fraction(
    steps: Iterable[Step],
    n_words_by_question: Mapping[QuestionId, int],
    *,
    bins: int | ArrayLike = 10,
) -> dict[str, AccuracyCurve]:
    """Per model, the accuracy of its guesses binned by fraction of the question revealed.

    A step's fraction is ``fraction_revealed(step.word_index, n_words)``. Bins follow the
    ECE convention: ``[a, b)`` with the last closed; ``bins`` is a count of equal-width
    bins on [0, 1] or explicit edges (fractions outside the edges are dropped). Empty bins
    have NaN accuracy and count 0.

    Example: steps at fractions 0.25 (wrong), 0.5 (wrong), 1.0 (right) with ``bins=2``:
    [0, 0.5) holds one wrong guess → 0.0; [0.5, 1] holds one wrong and one right → 0.5.

    >>> steps = [Step("m", "q", t, w, ok, None, None) for t, w, ok in
    ...          [(1, 0, False), (2, 1, False), (3, 3, True)]]
    >>> accuracy_by_fraction(steps, {"q": 4}, bins=2)["m"].accuracy.tolist()
    [0.0, 0.5]
    """
    edges = _bin_edges(bins)
    n_bins = edges.size - 1
    by_model: dict[str, tuple[list[float], list[float]]] = {}
    for s in steps:
        if s.question_id not in n_words_by_question:
            raise ValueError(f"n_words_by_question has no entry for question {s.question_id!r}")
        xs, ys = by_model.setdefault(s.model, ([], []))
        xs.append(fraction_revealed(s.word_index, n_words_by_question[s.question_id]))
        ys.append(1.0 if s.correct else 0.0)
    curves: dict[str, AccuracyCurve] = {}
    for model in sorted(by_model):
        x = np.asarray(by_model[model][0])
        y = np.asarray(by_model[model][1])
        inside = (x >= edges[0]) & (x <= edges[-1])
        idx = np.minimum(np.searchsorted(edges, x[inside], side="right") - 1, n_bins - 1)
        count = np.bincount(idx, minlength=n_bins)
        hits = np.bincount(idx, weights=y[inside], minlength=n_bins)
        with np.errstate(invalid="ignore", divide="ignore"):
            accuracy = hits / count
        curves[model] = AccuracyCurve(
            model=model, lower=edges[:-1], upper=edges[1:], accuracy=accuracy, count=count
        )
    return curves


# ---------------------------------------------------------------------------------------
# Figure 6: P(buzz | correct), P(buzz | incorrect)
# ---------------------------------------------------------------------------------------


def buzz_given_correct(
    steps_with_buzz: Iterable[PolicyStep], *, until_first_buzz: bool = True
) -> dict[str, BuzzRates]:
    """Per model, P(buzz | guess correct) and P(buzz | guess incorrect) over steps.

    ``P(b | g=1) = #{steps correct and would buzz} / #{steps correct}``, likewise for
    g = 0. With ``until_first_buzz`` (GRACE footnote 10: later guesses do not count in a
    real game) only the steps of each question up to and including the first step whose
    ``would_buzz`` is true are used.

    Example: one question, steps (correct, would_buzz) = (0, 0), (1, 0), (1, 1), (1, 1):
    up to the first buzz there are 2 correct steps, 1 with a buzz → 0.5, and 1 incorrect
    step without a buzz → 0.0.

    >>> rows = [PolicyStep("m", "q", t, c, b) for t, c, b in
    ...         [(1, False, False), (2, True, False), (3, True, True), (4, True, True)]]
    >>> r = buzz_given_correct(rows)["m"]
    >>> r.p_buzz_given_correct, r.p_buzz_given_incorrect
    (0.5, 0.0)
    """
    by_question: dict[tuple[str, QuestionId], list[PolicyStep]] = {}
    for s in steps_with_buzz:
        by_question.setdefault((s.model, s.question_id), []).append(s)
    counts: dict[str, list[int]] = {}  # model -> [n_correct, buzz_correct, n_wrong, buzz_wrong]
    for (model, _), rows in by_question.items():
        c = counts.setdefault(model, [0, 0, 0, 0])
        for s in sorted(rows, key=lambda s: s.step):
            offset = 0 if s.correct else 2
            c[offset] += 1
            c[offset + 1] += 1 if s.would_buzz else 0
            if s.would_buzz and until_first_buzz:
                break
    return {
        model: BuzzRates(
            p_buzz_given_correct=c[1] / c[0] if c[0] else math.nan,
            p_buzz_given_incorrect=c[3] / c[2] if c[2] else math.nan,
            n_correct=c[0],
            n_incorrect=c[2],
        )
        for model, c in sorted(counts.items())
    }


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


def sh_question(
    conf: ArrayLike,
    correct: ArrayLike,
    human_frac: ArrayLike,
    *,
    assume_final_buzz: bool = False,
) -> float:
    """GRACE appendix H's human-adjusted calibration score ``SH_q`` of one question.

    With steps t = 0..T, confidence ``c_t``, correctness ``g_t ∈ {0, 1}`` and ``h_t`` the
    proportion of humans answering correctly by step t (appendix H, as printed):

    * buzz confidence ``b_t = c_t ∏_{i<t} (1 − c_i)``;
    * ``K_t = h_t Σ_{e≤t} b_e g_e``;
    * ``SH_q = Σ_t K_t + (1 − Σ_t h_t) Σ_t b_t g_t``.

    Higher is better. Implemented exactly as printed (and as in the reference code's
    ``compute_human_adjusted_score``). Two consequences worth knowing: with a cumulative
    ``h_t``, ``Σ_t h_t`` can exceed 1 and the second term turns negative, so SH_q is not
    confined to [0, 1] (pass per-step increments ``np.diff(h, prepend=0)`` for the
    probability reading); and the appendix assumes ``Σ_t b_t = 1`` ("the system must
    reach full confidence at some point"), which holds only if some ``c_t = 1``. The
    assumption is not imposed unless ``assume_final_buzz=True``, which sets ``c_T = 1``.

    Example: c = [0.5, 0.5], g = [0, 1], h = [0, 0.5]: b = [0.5, 0.25], b·g = [0, 0.25],
    K = [0, 0.5 · 0.25] = [0, 0.125], SH = 0.125 + (1 − 0.5) · 0.25 = 0.25.

    >>> sh_question([0.5, 0.5], [0, 1], [0.0, 0.5])
    0.25
    """
    c = _as_1d("conf", conf)
    g = _check_bool_array("correct", correct).astype(np.float64)
    h = _as_1d("human_frac", human_frac)
    if not (c.shape == g.shape == h.shape):
        raise ValueError(
            f"conf, correct and human_frac must have the same length, got "
            f"{c.size}, {g.size} and {h.size}"
        )
    if c.size == 0:
        raise ValueError("a question needs at least one step")
    _check_in_unit_interval("conf", c)
    _check_in_unit_interval("human_frac", h)
    if assume_final_buzz:
        c = c.copy()
        c[-1] = 1.0
    not_yet = np.concatenate(([1.0], np.cumprod(1.0 - c)[:-1]))
    bg = c * not_yet * g
    k = h * np.cumsum(bg)
    return float(k.sum() + (1.0 - h.sum()) * bg.sum())


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


def rank_players(records: Iterable[tuple[str, float | None, bool]]) -> list[PlayerRank]:
    """Rank players by mean :func:`grace_player_score` per question, best first.

    Each record is ``(player, clue_fraction, correct)`` for one question the player saw;
    ``clue_fraction=None`` means no buzz and scores 0. Ties are broken by name.

    >>> [(r.player, r.mean_score) for r in rank_players(
    ...     [("ann", 0.5, True), ("ann", None, False), ("bob", 0.1, False), ("bob", 0.0, True)])]
    [('bob', 7.5), ('ann', 5.0)]
    """
    totals: dict[str, list[float]] = {}
    for player, fraction, is_correct in records:
        score = 0.0 if fraction is None else grace_player_score(float(fraction), bool(is_correct))
        totals.setdefault(player, []).append(score)
    ranks = [PlayerRank(p, float(np.mean(s)), len(s)) for p, s in totals.items()]
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
