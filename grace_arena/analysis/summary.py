"""The whole analysis of a set of steps and buzzes, as one JSON-ready dict.

:func:`analyze` is what ``grace-arena analyze`` computes, whatever the source (the record or
plain files); :func:`grace_arena.analysis.analyze` wraps it in a result object whose tables are
DataFrames. The JSON holds:

* ``models``: ``{model: {"logit": METRICS, "verbal": METRICS}}`` where METRICS holds every
  question and row metric of :mod:`~grace_arena.analysis.metrics` (over all steps, ``final``
  steps and ``by_category``), bootstrap intervals ``ci`` of the headline metrics (CalScore,
  ECE, Brier; resampling questions), the reliability table, accuracy and SH (appendix H);
* ``leaderboard``: models ranked by CalScore, ECE and Brier for each confidence kind;
* ``teams`` and ``curves``: per-team buzz counts, cumulative buzz rates against fraction
  revealed (figure 4), model accuracy against fraction revealed (figure 5), P(buzz |
  correct) and P(buzz | incorrect) where the steps carry the buzz policy (figure 6);
* ``expected_wins``: the human curve fitted from the human buzzes, expected wins of every
  model team (from its buzzes) and of every model's policy (from its steps);
* ``players``: players ranked by GRACE's 20 − 20c score (appendix F.3), with quartiles.

Inputs are the DataFrames of :mod:`~grace_arena.analysis.frames`; names (models, questions,
teams, matches, players) become integer codes once, in sorted order of the names, and
everything after that runs on numpy arrays. Undefined values are ``None``.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from threadpoolctl import threadpool_limits

from grace_arena.analysis.curves import (
    accuracy_by_fraction,
    buzz_given_correct,
    cumulative_buzz_rates,
    expected_wins,
    fit_human_curve,
    fraction_revealed,
    quartiles,
    rank_players,
    sh,
)
from grace_arena.analysis.frames import (
    BUZZ_COLUMNS,
    STEP_COLUMNS,
    buzzes_frame,
    derive_heard,
    distinct_counts,
    heard_frame,
    roster_frame,
    step_policies,
    steps_frame,
)
from grace_arena.analysis.metrics import (
    CONFIDENCE_KINDS,
    HEADLINE_METRICS,
    SMOOTH_GRID,
    UNCATEGORIZED,
    ConfidenceKind,
    PreparedRows,
    check_h_definition,
    human_fraction,
    percentile_interval,
    question_sums,
    reliability_table,
    resample_counts,
    risk_coverage_curve,
    smooth_band_sums,
    smooth_bandwidth,
    smooth_reliability,
    stats_from_sums,
    summarize,
)
from grace_arena.analysis.recalibration import recalibration_report
from grace_arena.analysis.tasks import Result, Task, run_tasks

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

__all__ = [
    "H_LABELS",
    "LEADERBOARD_METRICS",
    "Buzzes",
    "Steps",
    "analyze",
    "code_buzzes",
    "code_steps",
    "figure4",
    "natural_key",
]

#: How each definition of h_t is named in reports.
H_LABELS = {
    "reference": "h_t as GRACE's reference code: human teams whose latest buzz up to t was "
    "correct, over all human buzzes on the question (every room)",
    "paper": "h_t as the GRACE paper's text: correct human buzzes up to t over all human "
    "buzzes up to t (every room)",
}

#: Leaderboard columns: metric key -> True when lower is better.
LEADERBOARD_METRICS: dict[str, bool] = {
    "calscore": True,
    "ece": True,
    "brier": True,
    "auroc": False,
}
#: Points of the buzz-rate curves (figure 4).
GRID = np.linspace(0.0, 1.0, 101)
#: Threads the analysis runs its independent parts on (:mod:`~grace_arena.analysis.tasks`).
WORKERS = min(4, os.cpu_count() or 1)


def _none(value: float | None) -> float | None:
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value


def _reliability(rows: PreparedRows | None) -> list[dict[str, Any]]:
    return [] if rows is None else [b.as_dict() for b in reliability_table(rows)]


# ---------------------------------------------------------------------------------------
# From DataFrames to integer codes
# ---------------------------------------------------------------------------------------


def _labels_and_codes(column: pd.Series) -> tuple[NDArray[Any], IntArray]:
    """A column's names (as text) and each row's code into them; a missing name reads as
    ``""``, so that every code is a name."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        labels = np.asarray(column.cat.categories.astype(str), dtype=object)
        codes = column.cat.codes.to_numpy().astype(np.int64)
    else:
        # pandas 2 turns a missing value into "None" or "nan" in astype(str); pandas 3 keeps
        # it missing: the missing ones are put back either way.
        factorized, names = pd.factorize(column.astype(str).where(column.notna()))
        labels, codes = np.asarray(names, dtype=object), factorized.astype(np.int64)
    if (codes < 0).any():
        labels = np.append(labels, "")
        codes = np.where(codes < 0, labels.size - 1, codes)
    return labels, codes


def shared_codes(*columns: pd.Series) -> tuple[list[IntArray], NDArray[Any]]:
    """Integer codes of several columns in one space, in sorted order of the names, and the
    names by code (categoricals cost nothing; other columns are factorized once)."""
    parts = [_labels_and_codes(c) for c in columns]
    text = np.array(sorted(set().union(*(labels.tolist() for labels, _ in parts))), dtype=object)
    index = pd.Index(text)
    maps: list[tuple[NDArray[Any], IntArray | None]] = [(text, None)]  # None: as they are
    codes = []
    for labels, c in parts:
        # columns with the same names (the heard rows derived from the buzzes, those of the
        # buzzes) share a map
        same = [m for seen, m in maps if seen.size == labels.size and np.array_equal(seen, labels)]
        if same:
            mapping = same[0]
        else:
            mapping = index.get_indexer(labels)
            maps.append((labels, mapping))
        codes.append(c if mapping is None or not c.size else mapping[c])
    return [np.asarray(c, dtype=np.int64) for c in codes], text


def _canonical(df: pd.DataFrame, columns: Sequence[str], names: Sequence[str]) -> bool:
    return all(c in df for c in columns) and all(
        isinstance(df[c].dtype, pd.CategoricalDtype) for c in names
    )


def _ints(column: pd.Series | None, n: int) -> IntArray:
    if column is None:
        return np.full(n, -1, dtype=np.int64)
    return column.astype("Float64").to_numpy(dtype=float, na_value=-1.0).astype(np.int64)


@dataclass(frozen=True)
class Steps:
    """Model steps as arrays; models and questions as codes (names by code alongside)."""

    model: IntArray
    models: NDArray[Any]
    q: IntArray  # question code (shared with the buzzes)
    step: IntArray
    word_index: IntArray
    correct: FloatArray
    conf: dict[str, FloatArray]  # kind -> confidences (NaN = missing)
    category: IntArray  # per row: code of its category (-1: none)
    categories: NDArray[Any]  # category by code
    n_words: IntArray  # -1 when unknown
    would_buzz: FloatArray

    def __len__(self) -> int:
        return int(self.step.size)


@dataclass(frozen=True)
class Buzzes:
    """Ruled buzzes and who heard what, as arrays; names as codes."""

    q: IntArray
    team: IntArray
    match: IntArray
    player: IntArray
    word_index: IntArray
    correct: FloatArray
    n_words: IntArray
    clue_index: IntArray
    n_clues: IntArray
    teams: NDArray[Any]
    team_kind: dict[str, str]  # team name -> human | model
    matches: NDArray[Any]
    players: NDArray[Any]
    heard_match: IntArray
    heard_team: IntArray
    heard_q: IntArray
    #: team name -> its model and threshold, for the model teams whose data says them
    team_model: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Who played in each match for each team, beyond the players of the buzzes (a player
    #: whose presses all lost races): codes of match, team and player, as above.
    roster_match: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    roster_team: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    roster_player: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    def __len__(self) -> int:
        return int(self.q.size)

    @property
    def fraction(self) -> FloatArray:
        """Fraction revealed at each buzz (NaN when the question's length is unknown)."""
        return fraction_revealed(self.word_index, self.n_words)


def code_steps(steps: pd.DataFrame, q: IntArray) -> Steps:
    """``steps`` (checked by :func:`~grace_arena.analysis.frames.steps_frame` unless already
    in its dtypes) as arrays, with question codes ``q``."""
    n = len(steps)
    (model,), models = shared_codes(steps["model"])
    category = steps["category"] if "category" in steps else pd.Series([None] * n)
    cat_codes, categories = pd.factorize(category)  # no category: -1
    for kind in CONFIDENCE_KINDS:
        vals = steps[f"confidence_{kind}"].to_numpy(dtype=float)
        bad = ~np.isnan(vals) & ((vals < 0.0) | (vals > 1.0))
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"confidence_{kind} must lie in [0, 1], got {float(vals[i])!r}")
    return Steps(
        model=model,
        models=models,
        q=q,
        step=steps["step"].to_numpy(dtype=np.int64),
        word_index=steps["word_index"].to_numpy(dtype=np.int64),
        correct=steps["correct"].to_numpy(dtype=float),
        conf={kind: steps[f"confidence_{kind}"].to_numpy(dtype=float) for kind in CONFIDENCE_KINDS},
        category=cat_codes.astype(np.int64),
        categories=np.asarray(categories, dtype=object),
        n_words=_ints(steps.get("n_words"), n),
        would_buzz=steps["would_buzz"].to_numpy(dtype=float)
        if "would_buzz" in steps
        else np.full(n, np.nan),
    )


def code_buzzes(
    buzzes: pd.DataFrame,
    heard: pd.DataFrame,
    q: IntArray,
    hq: IntArray,
    roster: pd.DataFrame | None = None,
) -> Buzzes:
    """``buzzes``, ``heard`` and ``roster`` (who played; optional) as arrays, with question
    codes ``q`` and ``hq``."""
    n = len(buzzes)
    (team, h_team), teams = shared_codes(buzzes["team"], heard["team"])
    (match, h_match), matches = shared_codes(buzzes["match"], heard["match"])
    roster = roster_frame(roster) if roster is not None else roster_frame()
    (player, r_player), players = shared_codes(buzzes["player"], roster["player"])
    # the roster's teams and matches as the heard rows code them (others did not play here)
    r_team = pd.Index(teams).get_indexer(roster["team"].astype(str))
    r_match = pd.Index(matches).get_indexer(roster["match"].astype(str))
    in_play = (r_team >= 0) & (r_match >= 0)
    _, last = np.unique(team[::-1], return_index=True)  # each team's last row names its kind
    last = n - 1 - last
    kind_of = dict(
        zip(
            teams[team[last]].tolist(),
            buzzes["team_kind"].to_numpy()[last].astype(str).tolist(),
            strict=True,
        )
    )
    if "team_kind" in heard.columns:  # teams that heard questions but never buzzed
        known = heard[["team", "team_kind"]].drop_duplicates("team")
        for name, kind in zip(known["team"].astype(str), known["team_kind"], strict=True):
            if pd.notna(kind):
                kind_of.setdefault(name, str(kind))
    return Buzzes(
        team_model=team_models(heard),
        roster_match=r_match[in_play].astype(np.int64),
        roster_team=r_team[in_play].astype(np.int64),
        roster_player=r_player[in_play],
        q=q,
        team=team,
        match=match,
        player=player,
        word_index=buzzes["word_index"].to_numpy(dtype=np.int64),
        correct=buzzes["correct"].to_numpy(dtype=float),
        n_words=_ints(buzzes.get("n_words"), n),
        clue_index=_ints(buzzes.get("clue_index"), n),
        n_clues=_ints(buzzes.get("n_clues"), n),
        teams=teams,
        team_kind=kind_of,
        matches=matches,
        players=players,
        heard_match=h_match,
        heard_team=h_team,
        heard_q=hq,
    )


def team_models(heard: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """Each model team's model and buzz threshold (None: not known), from ``heard``'s
    ``model`` and ``threshold`` columns: a team is keyed by its name, never by its model."""
    if "model" not in heard.columns:
        return {}
    cols = ["team", "model", *(["threshold"] if "threshold" in heard.columns else [])]
    known = heard[cols].dropna(subset=["model"]).drop_duplicates("team")
    return {
        str(row["team"]): {
            "model": str(row["model"]),
            "threshold": None if pd.isna(row.get("threshold")) else float(row["threshold"]),
        }
        for row in known.to_dict("records")
    }


def _as_inputs(
    steps: pd.DataFrame | None,
    buzzes: pd.DataFrame | None,
    heard: pd.DataFrame | None,
    roster: pd.DataFrame | None = None,
) -> tuple[Steps, Buzzes, NDArray[Any]]:
    if steps is None or not len(steps.columns):
        steps = steps_frame()
    elif not _canonical(steps, STEP_COLUMNS, ("model", "question_id")):
        steps = steps_frame(steps)
    if buzzes is None or not len(buzzes.columns):
        buzzes = buzzes_frame()
    elif not _canonical(buzzes, (*BUZZ_COLUMNS, "match", "player"), ("team", "question_id")):
        buzzes = buzzes_frame(buzzes)
    heard = derive_heard(buzzes) if heard is None else heard_frame(heard)
    (sq, bq, hq), questions = shared_codes(
        steps["question_id"], buzzes["question_id"], heard["question_id"]
    )
    return code_steps(steps, sq), code_buzzes(buzzes, heard, bq, hq, roster), questions


# ---------------------------------------------------------------------------------------
# Model steps
# ---------------------------------------------------------------------------------------


def human_fraction_column(
    steps: Steps | pd.DataFrame,
    buzzes: Buzzes | pd.DataFrame,
    *,
    definition: str = "reference",
) -> FloatArray:
    """``h_t`` of every step row (:func:`~grace_arena.analysis.metrics.human_fraction`) from
    every human buzz on the step's question: the buzzes of every match (and every pooled
    buzzpoint) that heard it. Human teams are told apart by (match, team)."""
    if isinstance(steps, pd.DataFrame) or isinstance(buzzes, pd.DataFrame):
        steps, buzzes, _ = _as_inputs(
            steps if isinstance(steps, pd.DataFrame) else None,
            buzzes if isinstance(buzzes, pd.DataFrame) else None,
            None,
        )
    kinds = np.array([buzzes.team_kind.get(t, "human") for t in buzzes.teams], dtype=object)
    human = kinds[buzzes.team] == "human" if len(buzzes) else np.zeros(0, dtype=bool)
    if not len(steps) or not human.any():
        return np.zeros(len(steps))
    return human_fraction(
        steps.word_index,
        buzzes.word_index[human],
        buzzes.correct[human],
        step_groups=steps.q,
        buzz_groups=buzzes.q[human],
        buzz_team=buzzes.match[human] * max(buzzes.teams.size, 1) + buzzes.team[human],
        definition=definition,
    )


@dataclass(frozen=True)
class ModelRows:
    """One model's steps sorted by (question, step); its questions coded 0..n-1 in sorted
    order of their names."""

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


def _step_order(steps: Steps) -> IntArray:
    """The rows by (model, question, step). Where the three fit in one key of a few times
    as many values as rows, a counting sort (every (model, question, step) once, as it must
    be); otherwise, and with a duplicate, a stable lexicographic sort."""
    n = len(steps)
    if n and steps.step.min() >= 0:
        n_steps = int(steps.step.max()) + 1
        n_q = int(steps.q.max()) + 1
        span = (int(steps.model.max()) + 1) * n_q * n_steps
        if span <= 4 * n + 1024:
            key = (steps.model * n_q + steps.q) * n_steps + steps.step
            count = np.bincount(key, minlength=span)
            if count.max() == 1:
                slot = np.cumsum(count) - 1  # the rank of each key present
                order = np.empty(n, dtype=np.int64)
                order[slot[key]] = np.arange(n)
                return order
    return np.lexsort((steps.step, steps.q, steps.model))


def model_rows(
    steps: Steps, questions: NDArray[Any], h: FloatArray | None = None
) -> list[ModelRows]:
    """Split ``steps`` by model (sorted by name); ``h`` defaults to all zeros.

    Raises ``ValueError`` on a duplicate (model, question, step).
    """
    return _with_h(_split_by_model(steps, questions), h, len(steps))


def _models_present(steps: Steps) -> int:
    """How many models have steps: the entries of :func:`model_rows`."""
    return int(np.count_nonzero(np.bincount(steps.model, minlength=steps.models.size)))


def _split_by_model(steps: Steps, questions: NDArray[Any]) -> list[tuple[IntArray, dict[str, Any]]]:
    """:func:`model_rows` but ``h``: each model's rows of ``steps`` and its fields."""
    parts = []
    order = _step_order(steps)
    model_sorted = steps.model[order]
    bounds = np.searchsorted(model_sorted, np.arange(steps.models.size + 1))
    for code, model in enumerate(steps.models):
        idx = order[bounds[code] : bounds[code + 1]]
        if not idx.size:
            continue
        qg = steps.q[idx]
        step = steps.step[idx]
        new_q = np.ones(idx.size, dtype=bool)
        new_q[1:] = qg[1:] != qg[:-1]
        q = np.cumsum(new_q) - 1
        qids = questions[qg[new_q]]
        dup = ~new_q[1:] & (step[1:] == step[:-1])
        if dup.any():
            i = int(np.argmax(dup))
            raise ValueError(
                f"duplicate step: model={model!r} question={qids[q[i]]!r} step={int(step[i])!r}"
            )
        n_q = qids.size
        last = np.ones(idx.size, dtype=bool)
        last[:-1] = new_q[1:]
        # a question's category: the first one its steps carry, in step order
        cats = steps.category[idx]
        has = cats >= 0
        category = np.full(n_q, UNCATEGORIZED, dtype=object)
        if has.any():  # rows are in step order within a question: its first category
            q_has = q[has]
            first = np.flatnonzero(np.r_[True, q_has[1:] != q_has[:-1]])
            category[q_has[first]] = steps.categories[cats[has][first]]
        n_words = np.full(n_q, -1, dtype=np.int64)
        nw = steps.n_words[idx]
        known = nw >= 0
        n_words[q[known]] = nw[known]
        parts.append(
            (
                idx,
                dict(
                    model=str(model),
                    question_ids=qids,
                    q=q,
                    step=step,
                    word_index=steps.word_index[idx],
                    correct=steps.correct[idx],
                    conf={kind: steps.conf[kind][idx] for kind in CONFIDENCE_KINDS},
                    category=category,
                    n_words=n_words,
                    would_buzz=steps.would_buzz[idx],
                    final=np.flatnonzero(last),
                ),
            )
        )
    return parts


def _with_h(
    parts: list[tuple[IntArray, dict[str, Any]]], h: FloatArray | None, n_steps: int
) -> list[ModelRows]:
    """The models' rows of :func:`_split_by_model`, with ``h`` of every step row."""
    if h is None:
        h = np.zeros(n_steps)
    return [ModelRows(h=h[idx], **fields) for idx, fields in parts]


def summarize_models(
    models: list[ModelRows], *, kinds: Sequence[ConfidenceKind] = CONFIDENCE_KINDS
) -> dict[str, dict[str, dict[str, Any]]]:
    """``{model: {kind: metrics}}``: every question metric and row metric over all steps, with
    ``final`` (each question's last step) and ``by_category`` (a question's category is the
    first one its steps carry, else ``"uncategorized"``; all steps and every category in
    one :func:`~grace_arena.analysis.metrics.summarize` call)."""
    return {m.model: {kind: _summary_of(m, kind) for kind in kinds} for m in models}


def _summary_of(
    m: ModelRows,
    kind: ConfidenceKind,
    rows: PreparedRows | None = None,
    final_rows: PreparedRows | None = None,
) -> dict[str, Any]:
    """:func:`summarize_models` of one model and kind. ``rows`` and ``final_rows``: its rows
    and final rows that have a confidence, prepared by a caller that scores them with
    other metrics too (``summarize``'s ``prepared``)."""
    cat_codes, cats = pd.factorize(m.category)
    row_cat = cat_codes[m.q]
    f = m.final
    conf = m.conf[kind]
    metrics, by_cat = summarize(
        conf, m.correct, groups=m.q, human_frac=m.h, by=row_cat, total=True, prepared=rows
    )
    metrics["final"] = summarize(
        conf[f], m.correct[f], groups=m.q[f], human_frac=m.h[f], prepared=final_rows
    )
    metrics["by_category"] = {cats[i]: by_cat[i] for i in np.argsort(cats)}
    return metrics


#: Grid cells where the smoothed reliability curve gets its bootstrap band (t ≈ 0, 0.1, … 1).
BAND_POINTS = np.minimum(np.arange(11) * SMOOTH_GRID // 10, SMOOTH_GRID - 1)


@dataclass(frozen=True)
class Bootstrapped:
    """What :func:`bootstrap_models` gives for one model: the intervals per ``(kind,
    final)`` and the band of the smoothed reliability curve per kind (low, high at
    :data:`BAND_POINTS`)."""

    intervals: dict[tuple[str, bool], dict[str, tuple[float, float]]]
    bands: dict[str, tuple[FloatArray, FloatArray]]


def bootstrap_models(
    models: Sequence[ModelRows],
    combos: Sequence[tuple[ConfidenceKind, bool]],
    *,
    bandwidths: dict[tuple[str, str], float] | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    n_bins: int = 10,
) -> dict[str, Bootstrapped]:
    """Per model, percentile intervals of CalScore, ECE and Brier over question resamples for
    each ``(kind, final)`` of ``combos`` (what :func:`~grace_arena.analysis.metrics.
    bootstrap_ci` gives for each), and for each ``(model, kind)`` of ``bandwidths`` the
    pointwise band of the smoothed reliability curve at that bandwidth, all at once.

    The draws depend only on the seed and the number of questions, so they are made once
    per number of questions and shared by every model and combination: the per-question
    sums of all those models (:func:`~grace_arena.analysis.metrics.question_sums`,
    :func:`~grace_arena.analysis.metrics.smooth_band_sums`) stand in one matrix, and each
    chunk of resamples is one matrix product with it."""
    bandwidths = bandwidths or {}
    out: dict[str, Bootstrapped] = {}
    by_size: dict[int, list[ModelRows]] = {}
    for m in models:
        if m.n_questions:
            by_size.setdefault(m.n_questions, []).append(m)
    points = BAND_POINTS.size
    width = 4 + n_bins
    for n_questions, group in by_size.items():
        layout = [[k for k in CONFIDENCE_KINDS if (m.model, k) in bandwidths] for m in group]
        # all the models' sums in one matrix (columns x questions: OpenBLAS is far faster
        # with this orientation, and one product per chunk packs the counts once, which
        # saves more than the page faults of one large matrix cost). Single
        # precision halves the memory traffic of the products (and more than halves their
        # time on a busy machine); the counts are exact in it, and the sums move the
        # intervals by less than 1e-6 (a test compares them with bootstrap_ci's)
        size = sum(len(combos) * width + len(kinds) * 2 * points for kinds in layout)
        matrix = np.empty((size, n_questions), dtype=np.float32)
        start = 0
        for m, kinds in zip(group, layout, strict=True):
            blocks = [
                question_sums(
                    m.conf[kind][rows], m.correct[rows], m.h[rows], m.q[rows], n_questions,
                    n_bins=n_bins,
                )
                for kind, final in combos
                for rows in [m.final if final else slice(None)]
            ]  # fmt: skip
            blocks += [
                smooth_band_sums(
                    m.conf[k], m.correct, m.q, n_questions,
                    bandwidth=bandwidths[(m.model, k)], points=BAND_POINTS,
                )
                for k in kinds
            ]  # fmt: skip
            for block in blocks:
                matrix[start : start + block.shape[1]] = block.T
                start += block.shape[1]
        if start != size:
            raise AssertionError(f"bootstrap sums: {start} columns filled of {size}")
        totals = np.empty((n_resamples, matrix.shape[0]))
        done = 0
        draws = resample_counts(n_questions, n_resamples=n_resamples, seed=seed, dtype=np.float32)
        # BLAS on one thread: the products are many and short, and OpenBLAS's threads spin
        # between them, which on a machine whose cores are busy with other work costs
        # several times what they save (docs/analysis.md, "Speed")
        with threadpool_limits(limits=1, user_api="blas"):
            for counts in draws:  # BLAS reads the transpose as is
                totals[done : done + counts.shape[0]] = (matrix @ counts.T).T
                done += counts.shape[0]
        start = 0
        for m, kinds in zip(group, layout, strict=True):
            stats = []
            for _ in combos:
                by_metric = stats_from_sums(totals[:, start : start + width], n_bins=n_bins)
                stats += [by_metric[name] for name in HEADLINE_METRICS]
                start += width
            for _ in kinds:
                hits = totals[:, start : start + points]
                mass = totals[:, start + points : start + 2 * points]
                with np.errstate(invalid="ignore", divide="ignore"):
                    stats += list((hits / mass).T)
                start += 2 * points
            low, high = percentile_interval(np.column_stack(stats), level=level)
            ends = iter(zip(low.tolist(), high.tolist(), strict=True))
            intervals = {combo: {name: next(ends) for name in HEADLINE_METRICS} for combo in combos}
            bands = {}
            for kind in kinds:
                band = np.array([next(ends) for _ in range(points)])
                bands[kind] = (band[:, 0], band[:, 1])
            out[m.model] = Bootstrapped(intervals, bands)
    return out


def accuracy_curves(models: list[ModelRows], *, bins: int = 10) -> dict[str, dict[str, Any]]:
    """Accuracy per bin of fraction revealed, per model (GRACE figure 5); steps of questions
    whose length is unknown are left out."""
    out: dict[str, dict[str, Any]] = {}
    for m in models:
        curve = accuracy_by_fraction(
            fraction_revealed(m.word_index, m.n_words[m.q]), m.correct, bins=bins
        )
        out[m.model] = {
            "lower": curve.lower.tolist(),
            "upper": curve.upper.tolist(),
            "accuracy": [None if math.isnan(a) else float(a) for a in curve.accuracy],
            "count": curve.count.astype(int).tolist(),
        }
    return out


def buzz_given_correct_table(models: list[ModelRows]) -> dict[str, Any]:
    """P(buzz | correct) and P(buzz | incorrect) per model, up to each first buzz (figure 6);
    only steps whose ``would_buzz`` is known count, and models with none are left out."""
    out = {}
    for m in models:
        known = ~np.isnan(m.would_buzz)
        if known.any():
            out[m.model] = buzz_given_correct(
                m.correct[known], m.would_buzz[known], groups=m.q[known]
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
    x[qs[known_len]] = fraction_revealed(m.word_index[first_rows][known_len], nw[known_len])
    ok[qs[known_len]] = m.correct[first_rows][known_len]
    has_len = m.n_words > 0
    return x[has_len], ok[has_len]


def sh_by_model(m: ModelRows, kind: ConfidenceKind) -> tuple[float | None, int]:
    """Mean over questions of GRACE appendix H's SH_q (:func:`~grace_arena.analysis.curves.sh`)
    with missing confidences left out; returns (mean, questions scored)."""
    conf = m.conf[kind]
    keep = ~np.isnan(conf)
    if not keep.any():
        return None, 0
    per_q = sh(conf[keep], m.correct[keep], m.h[keep], groups=m.q[keep], per_question=True)
    return float(per_q.mean()), int(per_q.size)


def _listed(values: FloatArray) -> list[float | None]:
    return [None if math.isnan(v) else float(v) for v in values]


def _risk_coverage(rows: PreparedRows, points: int = 101) -> dict[str, Any]:
    """The risk–coverage curve, at most ``points`` of its points (for the plot)."""
    curve = risk_coverage_curve(rows)
    keep = np.arange(curve.coverage.size)
    if keep.size > points:
        keep = np.unique(
            np.searchsorted(curve.coverage, np.linspace(0, 1, points) - 1e-12).clip(
                0, keep.size - 1
            )
        )
    return {
        "coverage": curve.coverage[keep].tolist(),
        "risk": curve.risk[keep].tolist(),
        "threshold": curve.threshold[keep].tolist(),
    }


def _smooth_section(rows: PreparedRows) -> dict[str, Any]:
    curve = smooth_reliability(rows)
    return {
        "bandwidth": curve.bandwidth,
        "smooth_ece": curve.smooth_ece,
        "t": curve.t.tolist(),
        "accuracy": _listed(curve.accuracy),
        "density": curve.density.tolist(),
        "band": None,
    }


def _analyse_model(m: ModelRows, kind: ConfidenceKind) -> tuple[dict[str, Any], dict[str, Any]]:
    """Everything of one model's confidence ``kind`` but the bootstrap: the summary (with
    the curves of all steps that need more than one number), and what the JSON lists after
    the intervals (accuracy, reliability tables, SH)."""
    final = m.final
    conf = m.conf[kind]
    keep = ~np.isnan(conf)
    keep_final = keep[final]
    # the rows that have a confidence (all steps, final steps), checked, sorted and binned
    # once for the summary, the curves, the recalibration's scores and the reliability tables
    rows = PreparedRows.of(conf[keep], m.correct[keep]) if keep.any() else None
    final_rows = (
        PreparedRows.of(conf[final][keep_final], m.correct[final][keep_final])
        if keep_final.any()
        else None
    )
    metrics = _summary_of(m, kind, rows, final_rows)
    # _model_summary adds the bootstrap's band to the curve
    metrics["smooth_reliability"] = _smooth_section(rows) if rows is not None else None
    metrics["risk_coverage"] = _risk_coverage(rows) if rows is not None else None
    metrics["recalibration"] = recalibration_report(conf, m.correct, groups=m.q, prepared=rows)
    sh_mean, n_sh = sh_by_model(m, kind)
    after = {
        # over the rows the other metrics of this confidence kind score (``n``)
        "accuracy": _none(float(rows.correct.mean())) if rows is not None else None,
        "final_accuracy": _none(float(final_rows.correct.mean()))
        if final_rows is not None
        else None,
        "reliability": _reliability(rows),
        "final_reliability": _reliability(final_rows),
        "sh": _none(sh_mean),
        "n_questions_sh": n_sh,
    }
    return metrics, after


def _bootstrap_with_bands(
    models: Sequence[ModelRows], combos: Sequence[tuple[ConfidenceKind, bool]], **options: Any
) -> dict[str, Bootstrapped]:
    """:func:`bootstrap_models` with the band of each model's smoothed reliability curves
    at the bandwidth those curves pick (:func:`~grace_arena.analysis.metrics.
    smooth_bandwidth` of the same rows)."""
    bandwidths = {}
    for m in models:
        for kind in CONFIDENCE_KINDS:
            keep = ~np.isnan(m.conf[kind])
            if keep.any():
                bandwidths[(m.model, kind)] = smooth_bandwidth(m.conf[kind][keep], m.correct[keep])
    return bootstrap_models(models, combos, bandwidths=bandwidths, **options)


#: Every confidence kind of all steps and of final steps: the bootstrap's combinations.
COMBOS = [(kind, final) for kind in CONFIDENCE_KINDS for final in (False, True)]


def _model_tasks(
    steps: Steps, questions: NDArray[Any], n_resamples: int, seed: int, level: float
) -> list[Task]:
    """The tasks of the models' side: the models' rows (``"rows"``: split by model while
    h_t, the task ``"h"``, is computed), the bootstrap (the longest task, so it comes
    first), then one analysis per model and confidence kind (``("model", i, kind)``:
    short tasks that keep the other cores busy until the bootstrap ends)."""
    tasks = [
        Task("split", _split_by_model, (steps, questions)),
        Task("rows", _with_h, (Result("split"), Result("h"), len(steps))),
    ]
    if n_resamples > 0:
        options = {"n_resamples": n_resamples, "seed": seed, "level": level}
        tasks.append(Task("bootstrap", _bootstrap_with_bands, (Result("rows"), COMBOS), options))
    tasks += [
        Task(("model", i, kind), _analyse_model, (Result("rows", i), kind))
        for i in range(_models_present(steps))
        for kind in CONFIDENCE_KINDS
    ]
    return tasks


def _model_summary(results: dict[Any, Any], level: float) -> dict[str, Any]:
    """Every model's metrics, curves and intervals, from the results of
    :func:`_model_tasks`."""
    models: list[ModelRows] = results["rows"]
    boot = results.get("bootstrap") or {}
    summary: dict[str, Any] = {}
    for i, m in enumerate(models):
        summary[m.model] = {}
        done = boot.get(m.model)
        cis = done.intervals if done else {}
        for kind in CONFIDENCE_KINDS:
            metrics, late = results[("model", i, kind)]
            summary[m.model][kind] = metrics
            for final in (False, True):
                target = metrics["final"] if final else metrics
                ci = cis.get((kind, final), {})
                target["ci"] = {
                    name: [_none(ci[name][0]), _none(ci[name][1])] if name in ci else [None, None]
                    for name in HEADLINE_METRICS
                }
            if done and kind in done.bands and metrics["smooth_reliability"]:
                low, high = done.bands[kind]
                metrics["smooth_reliability"]["band"] = {
                    "t": ((BAND_POINTS + 0.5) / SMOOTH_GRID).tolist(),
                    "low": _listed(low),
                    "high": _listed(high),
                    "level": level,
                }
            metrics["accuracy"] = late["accuracy"]
            metrics["final"]["accuracy"] = late["final_accuracy"]
            metrics["reliability"] = late["reliability"]
            metrics["final"]["reliability"] = late["final_reliability"]
            metrics["sh"] = late["sh"]
            metrics["n_questions_sh"] = late["n_questions_sh"]
    return summary


def _leaderboard(models: dict[str, Any]) -> dict[str, dict[str, list[dict[str, Any]]]]:
    board: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for kind in CONFIDENCE_KINDS:
        board[kind] = {}
        for metric, lower_better in LEADERBOARD_METRICS.items():
            entries = [
                {"model": name, "value": kinds[kind][metric]}
                for name, kinds in models.items()
                if kinds[kind].get(metric) is not None
            ]
            entries.sort(key=lambda e: (e["value"] if lower_better else -e["value"], e["model"]))
            for rank, entry in enumerate(entries, start=1):
                entry["rank"] = rank
            board[kind][f"by_{metric}"] = entries
    return board


def natural_key(text: str) -> tuple[Any, ...]:
    """Sort key that puts numbers in order: H2 before H10.

    >>> sorted(["H10", "H2", "M1", "H1"], key=natural_key)
    ['H1', 'H2', 'H10', 'M1']
    """
    return tuple(
        (0, int(part), "") if part.isdigit() else (1, 0, part.lower())
        for part in re.split(r"(\d+)", str(text))
        if part
    )


#: The metrics that need a model's confidence at every clue, which buzzes alone lack.
NEEDS_MODEL_STEPS = "CalScore, MCE, ECE, Brier, reliability and figures 5-6"


# ---------------------------------------------------------------------------------------
# Buzzes: teams, figure 4, expected wins, players
# ---------------------------------------------------------------------------------------

#: The metrics that need a model's confidence at every clue, which buzzes alone lack.
NEEDS_MODEL_STEPS = "CalScore, MCE, ECE, Brier, reliability and figures 5-6"


def _no_match(b: Buzzes) -> int:
    """The code of the empty match name (a buzz or record without a known match), or -1."""
    hits = np.flatnonzero(b.matches == "")
    return int(hits[0]) if hits.size else -1


def normalisation(buzzes: Buzzes | pd.DataFrame) -> str:
    """How buzz rates are normalised: per match played (the paper) when every question heard
    was heard in a known match, else per tossup heard (pooled data, or files without
    matches). ``buzzes`` is the coded buzzes or a ``heard`` DataFrame."""
    if isinstance(buzzes, pd.DataFrame):
        matches = buzzes["match"].astype(str).to_numpy()
        known = matches != ""
    else:
        known = buzzes.heard_match != _no_match(buzzes)
    return "matches played" if known.size and known.all() else "tossups heard"


def matches_played(buzzes: Buzzes) -> dict[str, int]:
    """How many known matches each team heard questions in (teams of pooled data: none)."""
    n_teams = max(buzzes.teams.size, 1)
    known = buzzes.heard_match != _no_match(buzzes)
    pair = buzzes.heard_match[known] * n_teams + buzzes.heard_team[known]
    pairs = np.flatnonzero(np.bincount(pair)) if pair.size else pair
    counts = np.bincount(pairs % n_teams, minlength=buzzes.teams.size)
    return {str(buzzes.teams[t]): int(c) for t, c in enumerate(counts) if c}


def _correct_totals(buzzes: Buzzes) -> dict[str, int]:
    counts = np.bincount(buzzes.team[buzzes.correct == 1.0], minlength=buzzes.teams.size)
    return {str(buzzes.teams[t]): int(c) for t, c in enumerate(counts) if c}


def figure4(
    buzzes: Buzzes, curves: dict[str, dict[str, Any]], *, n_groups: int = 4
) -> dict[str, Any]:
    """GRACE figure 4: human teams grouped into quartiles Q1–Q4 by total correct buzzes
    (Q1 the most), each group's mean cumulative correct and incorrect buzz rates against
    the fraction of the question revealed, and each model team's own; normalised by the
    matches each team played, or by the tossups it heard where matches are unknown."""
    by = normalisation(buzzes)
    matches = matches_played(buzzes)
    correct_totals = _correct_totals(buzzes)

    def scaled(team: str, key: str) -> np.ndarray:
        c = curves[team]
        values = np.asarray(c[key], dtype=float)
        if by == "matches played":  # rate per tossup heard → buzzes per match
            values = values * c["n_questions"] / max(matches.get(team, 0), 1)
        return values

    humans = sorted(
        (t for t, c in curves.items() if c["kind"] == "human"),
        key=lambda t: (-correct_totals.get(t, 0), natural_key(t)),
    )
    groups: dict[str, Any] = {}
    if humans:
        n = min(n_groups, len(humans))
        for i, members in enumerate(np.array_split(np.array(humans, dtype=object), n), start=1):
            names = sorted(members.tolist(), key=natural_key)
            groups[f"Q{i}"] = {
                "kind": "human",
                "teams": names,
                "correct_buzzes": [int(correct_totals.get(t, 0)) for t in names],
                "correct": np.mean([scaled(t, "correct") for t in names], axis=0).tolist(),
                "incorrect": np.mean([scaled(t, "incorrect") for t in names], axis=0).tolist(),
            }
    for team in sorted((t for t, c in curves.items() if c["kind"] == "model"), key=natural_key):
        groups[team] = {
            "kind": "model",
            "teams": [team],
            "correct_buzzes": [int(correct_totals.get(team, 0))],
            "correct": scaled(team, "correct").tolist(),
            "incorrect": scaled(team, "incorrect").tolist(),
        }
    return {
        "normalised_by": by,
        "grouping": "human teams ranked by total correct buzzes, split into "
        f"{min(n_groups, len(humans)) if humans else 0} groups of nearly equal size "
        "(Q1: the most); model teams on their own",
        "grid": GRID.tolist(),
        "groups": groups,
    }


@dataclass(frozen=True)
class FirstBuzzes:
    """The first ruled buzz of each (match, team, question) heard, aligned with the heard
    rows (codes as in :class:`Buzzes`)."""

    team: IntArray
    fraction: FloatArray  # NaN: no buzz, or question length unknown
    correct: NDArray[np.bool_]  # False when there was no buzz


def _first_rows(keys: IntArray, word_index: IntArray) -> tuple[IntArray, IntArray]:
    """Each key once, in increasing order, and the row of its earliest buzz (lowest word
    index; the first row on a tie)."""
    n = keys.size
    span = int(word_index.max()) + 1 if n else 1
    if n and keys.min() >= 0 and word_index.min() >= 0 and (int(keys.max()) + 1) * span * n < 2**63:
        # one sort of (key, word, row) packed in an integer
        packed = np.sort((keys * span + word_index) * n + np.arange(n))
        order = packed % n
    else:
        order = np.lexsort((word_index, keys))  # stable: rows in order on a tie
    sorted_keys = keys[order]
    first = np.ones(order.size, dtype=bool)
    np.not_equal(sorted_keys[1:], sorted_keys[:-1], out=first[1:])
    return sorted_keys[first], order[first]


def _lookup(sorted_keys: IntArray, keys: IntArray) -> IntArray:
    """The index of each of ``keys`` in the increasing, distinct ``sorted_keys`` (−1 where
    it is not there)."""
    at = np.searchsorted(sorted_keys, keys)
    at[at == sorted_keys.size] = 0
    return np.where(sorted_keys[at] == keys, at, -1) if sorted_keys.size else np.full_like(at, -1)


def first_buzzes(buzzes: Buzzes, n_questions: int) -> FirstBuzzes:
    """Each heard (match, team, question) with the team's earliest ruled buzz on it (the
    one at the lowest word index, the first in the table on a tie)."""
    n = buzzes.heard_team.size
    fraction = np.full(n, np.nan)
    correct = np.zeros(n, dtype=bool)
    if len(buzzes) and n:
        n_teams = max(buzzes.teams.size, 1)
        bkey = (buzzes.match * n_teams + buzzes.team) * n_questions + buzzes.q
        hkey = (buzzes.heard_match * n_teams + buzzes.heard_team) * n_questions + buzzes.heard_q
        first_keys, first_rows = _first_rows(bkey, buzzes.word_index)
        where = _lookup(first_keys, hkey)
        found = where >= 0
        rows = first_rows[where[found]]
        fraction[found] = buzzes.fraction[rows]
        correct[found] = buzzes.correct[rows] == 1.0
    return FirstBuzzes(buzzes.heard_team, fraction, correct)


def _rows_by_team(
    team: IntArray, keep: NDArray[np.bool_], n_teams: int
) -> tuple[IntArray, IntArray]:
    """The rows ``keep`` selects, by team (in their order within a team), and where each
    team's run starts: team t's rows are ``rows[bounds[t] : bounds[t + 1]]``."""
    rows = np.flatnonzero(keep)
    rows = rows[np.argsort(team[rows], kind="stable")]
    return rows, np.searchsorted(team[rows], np.arange(n_teams + 1))


def _teams_present(buzzes: Buzzes) -> list[int]:
    size = buzzes.teams.size
    seen = np.bincount(buzzes.team, minlength=size) + np.bincount(buzzes.heard_team, minlength=size)
    return np.flatnonzero(seen).tolist()


def buzz_rate_curves(
    buzzes: Buzzes, grid: FloatArray, n_questions: int
) -> dict[str, dict[str, Any]]:
    """Per team, cumulative correct / incorrect buzz rates on ``grid`` (GRACE figure 4,
    :func:`~grace_arena.analysis.curves.cumulative_buzz_rates`), over the questions each team
    heard; a question is a (match, question) pair."""
    heard = np.bincount(buzzes.heard_team, minlength=buzzes.teams.size)
    x = buzzes.fraction
    known = ~np.isnan(x)
    key = buzzes.match * max(n_questions, 1) + buzzes.q
    placed, bounds = _rows_by_team(buzzes.team, known, buzzes.teams.size)
    out: dict[str, dict[str, Any]] = {}
    for t in _teams_present(buzzes):
        name = str(buzzes.teams[t])
        mine = placed[bounds[t] : bounds[t + 1]]
        curve = cumulative_buzz_rates(
            x[mine],
            buzzes.correct[mine],
            groups=key[mine],
            grid=grid,
            n_questions=max(int(heard[t]), 1),
        )
        out[name] = {
            "kind": buzzes.team_kind.get(name, "human"),
            "n_questions": curve.n_questions,
            "grid": grid.tolist(),
            "correct": curve.correct.tolist(),
            "incorrect": curve.incorrect.tolist(),
        }
    return out


def player_scores(buzzes: Buzzes, n_questions: int) -> list[Any]:
    """GRACE appendix F.3 per player (:func:`~grace_arena.analysis.curves.rank_players`),
    best first, with each player's team.

    Every player who buzzed in a match is credited with every question their team heard
    there: their first buzz scores at clue fraction c (``(clue + 1) / n_clues``, or the
    fraction of words when the clues are unknown); a question without a buzz scores 0.
    """
    if not len(buzzes) and not buzzes.roster_player.size:
        return []
    n_teams = max(buzzes.teams.size, 1)
    # a player is a name in a team: two teams' players of one name (a model's, say, in two
    # model teams of that model) are two players; codes in sorted order of (name, team)
    n = len(buzzes)
    # the players of the buzzes, then those of the roster (who played, took the floor or not)
    all_player = np.concatenate([buzzes.player, buzzes.roster_player])
    all_team = np.concatenate([buzzes.team, buzzes.roster_team])
    all_match = np.concatenate([buzzes.match, buzzes.roster_match])
    present, every = np.unique(all_player * n_teams + all_team, return_inverse=True)
    every = every.astype(np.int64)
    who = every[:n]
    names = [f"{i:09d}" for i in range(present.size)]  # ties ranked by name, then team
    n_who = max(present.size, 1)
    # questions heard per (match, team)
    pairs, heard = distinct_counts(buzzes.heard_match * n_teams + buzzes.heard_team)
    # (match, team, player) once each
    roster = np.unique((all_match * n_teams + all_team) * n_who + every)
    pair, player = roster // n_who, roster % n_who
    at = _lookup(pairs, pair)
    heard_by_pair = np.zeros(pair.size)
    heard_by_pair[at >= 0] = heard[at[at >= 0]]
    records = np.bincount(player, weights=heard_by_pair, minlength=present.size)
    records = records.astype(np.int64)
    clue = np.where(
        (buzzes.clue_index >= 0) & (buzzes.n_clues > 0),
        fraction_revealed(np.maximum(buzzes.clue_index, 0), buzzes.n_clues),
        buzzes.fraction,
    )
    usable = np.flatnonzero(~np.isnan(clue))
    key = (buzzes.match[usable] * n_who + who[usable]) * n_questions + buzzes.q[usable]
    rows = usable[_first_rows(key, buzzes.word_index[usable])[1]]
    buzzed = np.bincount(who[rows], minlength=present.size)
    silent = np.repeat(np.arange(present.size), np.maximum(records - buzzed, 0))
    ranked = rank_players(
        np.concatenate([who[rows], silent]),
        np.concatenate([clue[rows], np.full(silent.size, np.nan)]),
        np.concatenate([buzzes.correct[rows], np.zeros(silent.size)]),
        names=names,
    )
    player_name = buzzes.players[present // n_teams]
    return [
        (str(player_name[i]), str(buzzes.teams[present[i] % n_teams]), r.mean_score, r.n)
        for r in ranked
        if r.n > 0
        for i in [int(r.player)]
    ]


def _team_section(buzzes: Buzzes, n_questions: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """Per-team counts and the figure-4 curves."""
    curves = buzz_rate_curves(buzzes, GRID, n_questions)
    curves = {t: curves[t] for t in sorted(curves, key=natural_key)}
    size = buzzes.teams.size
    heard = np.bincount(buzzes.heard_team, minlength=size)
    played = matches_played(buzzes)
    n_buzzes = np.bincount(buzzes.team, minlength=size)
    right = buzzes.correct == 1.0
    n_right = np.bincount(buzzes.team[right], minlength=size)
    x = buzzes.fraction
    placed = right & ~np.isnan(x)
    n_placed = np.bincount(buzzes.team[placed], minlength=size)
    sum_x = np.bincount(buzzes.team[placed], weights=x[placed], minlength=size)
    code = {str(name): i for i, name in enumerate(buzzes.teams)}
    teams: dict[str, Any] = {}
    for team, curve in curves.items():
        t = code[team]
        teams[team] = {
            "kind": buzzes.team_kind.get(team, curve["kind"]),
            **buzzes.team_model.get(team, {"model": None, "threshold": None}),
            "questions_heard": int(heard[t]),
            "matches_played": played.get(team) or None,
            "buzzes": int(n_buzzes[t]),
            "correct": int(n_right[t]),
            "incorrect": int(n_buzzes[t] - n_right[t]),
            "mean_fraction_correct": _none(sum_x[t] / n_placed[t]) if n_placed[t] else None,
        }
    return teams, curves


def _expected_wins(buzzes: Buzzes, models: list[Any], n_questions: int) -> dict[str, Any]:
    model_team = np.array(
        [buzzes.team_kind.get(str(t), "human") == "model" for t in buzzes.teams], dtype=bool
    )
    first = first_buzzes(buzzes, n_questions)
    is_model = model_team[first.team] if first.team.size else np.zeros(0, dtype=bool)
    # a buzz whose position is unknown (no question length) cannot be placed on the curve
    usable = ~(first.correct & np.isnan(first.fraction))
    human = ~is_model & usable
    n_human = int(human.sum())
    out: dict[str, Any] = {"human_curve": None, "n_human_records": n_human}
    if not n_human or np.isnan(first.fraction).all():
        out["teams"], out["models"] = {}, {}
        return out
    hit = human & first.correct & ~np.isnan(first.fraction)
    w = fit_human_curve(first.fraction[hit], n_human)
    out["human_curve"] = [float(c) for c in w.coefficients]
    teams: dict[str, Any] = {}
    placed, bounds = _rows_by_team(first.team, is_model & usable, buzzes.teams.size)
    for t in sorted(np.flatnonzero(model_team), key=lambda t: str(buzzes.teams[t])):
        rows = placed[bounds[t] : bounds[t + 1]]
        if rows.size:
            value = expected_wins(first.fraction[rows], first.correct[rows], w)
            teams[str(buzzes.teams[t])] = {
                "expected_wins": value,
                "n_questions": int(rows.size),
            }
    out["teams"] = teams
    policy: dict[str, Any] = {}
    for m in models:
        if np.isnan(m.would_buzz).all():
            continue
        x, ok = first_policy_buzz(m)
        if x.size:
            policy[m.model] = {"expected_wins": expected_wins(x, ok, w), "n_questions": int(x.size)}
    out["models"] = policy
    return out


def _players(buzzes: Buzzes, n_questions: int) -> list[dict[str, Any]]:
    """GRACE appendix F.3: players ranked by mean 20 − 20c score, with quartiles."""
    ranked = player_scores(buzzes, n_questions)
    # keyed by rank: one name in two teams is two players
    groups = quartiles({str(i): score for i, (_, _, score, _) in enumerate(ranked)})
    return [
        {
            "rank": i + 1,
            "player": player,
            "team": team,
            "kind": buzzes.team_kind.get(team, "human"),
            "mean_score": score,
            "n_questions": n,
            "quartile": groups.get(str(i)),
        }
        for i, (player, team, score, n) in enumerate(ranked)
    ]


def analyze(
    steps: pd.DataFrame | Any | None = None,
    buzzes: pd.DataFrame | None = None,
    *,
    heard: pd.DataFrame | None = None,
    roster: pd.DataFrame | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    source: dict[str, Any] | None = None,
    h_definition: str = "reference",
) -> dict[str, Any]:
    """Every metric, curve and ranking of GRACE Arena's analysis (see the module docstring),
    as the JSON-ready dict ``grace-arena analyze --json`` writes.

    ``steps`` and ``buzzes`` are DataFrames of :mod:`~grace_arena.analysis.frames` (any
    frame with their columns is checked and converted), or ``steps`` is a loaded data set
    (anything with ``steps``, ``buzzes`` and ``heard``). ``heard`` lists who heard which
    question (default: every team seen in a match heard every question seen in it);
    ``roster`` who played for which team in which match beyond the buzzes' players (a
    data set's ``roster`` when it has one; :func:`~grace_arena.analysis.frames.roster_frame`).
    ``h_definition`` picks h_t's definition behind CalScore (``"reference"``: GRACE's code,
    the default; ``"paper"``: the paper's text; see
    :func:`~grace_arena.analysis.metrics.human_fraction`).
    """
    check_h_definition(h_definition)
    if steps is not None and not isinstance(steps, pd.DataFrame):
        data = steps
        steps, buzzes, heard = data.steps, data.buzzes, data.heard
        roster = getattr(data, "roster", None) if roster is None else roster
    step_arrays, buzz_arrays, questions = _as_inputs(steps, buzzes, heard, roster)
    n_q = max(questions.size, 1)
    # the analysis' parts, each a function of the data alone, in the order they should
    # start (tasks.run_tasks runs them side by side, each once what it needs is done)
    plan = [
        Task("h", human_fraction_column, (step_arrays, buzz_arrays), {"definition": h_definition}),
        *_model_tasks(step_arrays, questions, n_resamples, seed, level),
        Task("teams", _team_section, (buzz_arrays, n_q)),
        Task("players", _players, (buzz_arrays, n_q)),
        Task("wins", _expected_wins, (buzz_arrays, Result("rows"), n_q)),
        Task("policy", buzz_given_correct_table, (Result("rows"),)),
        Task("accuracy", accuracy_curves, (Result("rows"),)),
    ]
    done = run_tasks(plan, workers=WORKERS)
    models = _model_summary(done, level)
    wins, policy, accuracy = done["wins"], done["policy"], done["accuracy"]
    teams, rate_curves = done["teams"]
    players = done["players"]
    notes = []
    if len(buzz_arrays) and not len(step_arrays):
        notes.append(
            f"no model steps: {NEEDS_MODEL_STEPS} need a model's confidence at every clue "
            "(grace-arena precompute --packet FILE; a GRACE file works)"
        )
    used = np.flatnonzero(np.bincount(np.concatenate([step_arrays.q, buzz_arrays.q])))
    return {
        "notes": notes,
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "source": source or {},
        "settings": {
            "n_bins": 10,
            "bootstrap": {"n_resamples": n_resamples, "seed": seed, "level": level},
            "confidence_kinds": list(CONFIDENCE_KINDS),
            "h_definition": h_definition,
            "h_definition_label": H_LABELS[h_definition],
            "buzz_rates_normalised_by": normalisation(buzz_arrays),
        },
        "counts": {
            "steps": len(step_arrays),
            "models": len(models),
            "questions": int(used.size),
            "buzzes": len(buzz_arrays),
            "teams": len(teams),
            # the teams with a ruled buzz (a team may play and never buzz)
            "teams_buzzing": sum(1 for t in teams.values() if t["buzzes"]),
        },
        "models": models,
        "leaderboard": _leaderboard(models),
        "teams": teams,
        "curves": {
            "buzz_rates": rate_curves,
            "figure4": figure4(buzz_arrays, rate_curves),
            "accuracy": accuracy,
            "buzz_given_correct": {
                model: {
                    "p_buzz_given_correct": _none(r.p_buzz_given_correct),
                    "p_buzz_given_incorrect": _none(r.p_buzz_given_incorrect),
                    "n_correct": r.n_correct,
                    "n_incorrect": r.n_incorrect,
                }
                for model, r in policy.items()
            },
        },
        "expected_wins": wins,
        "players": players,
        # the policies behind figure 6 and the models' expected wins (from their steps)
        "buzz_policies": step_policies(steps),
    }


def comparable(result: dict[str, Any]) -> dict[str, Any]:
    """``result`` without what differs between two runs on the same data (time, source)."""
    return {k: v for k, v in result.items() if k not in ("generated_at", "source")}
