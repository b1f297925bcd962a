"""The whole analysis of a set of steps and buzzes, as one JSON-ready dict.

:func:`analyze` is what ``grace-arena analyze`` computes, whatever the source (the record or
plain files):

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

Undefined values are ``None``.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np
from numpy.typing import NDArray

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
from grace_arena.analysis.metrics import (
    CONFIDENCE_KINDS,
    HEADLINE_METRICS,
    QUESTION_METRICS,
    UNCATEGORIZED,
    ConfidenceKind,
    check_h_definition,
    human_fraction,
    percentile_interval,
    question_sums,
    reliability_table,
    resample_counts,
    stats_from_sums,
    summarize,
)
from grace_arena.analysis.tables import BuzzTable, StepTable

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

__all__ = ["H_LABELS", "LEADERBOARD_METRICS", "analyze", "figure4", "natural_key"]

#: How each definition of h_t is named in reports.
H_LABELS = {
    "reference": "h_t as GRACE's reference code: human teams whose latest buzz up to t was "
    "correct, over all human buzzes on the question (every room)",
    "paper": "h_t as the GRACE paper's text: correct human buzzes up to t over all human "
    "buzzes up to t (every room)",
}

#: Leaderboard columns: metric key -> True when lower is better.
LEADERBOARD_METRICS: dict[str, bool] = {"calscore": True, "ece": True, "brier": True}
#: Points of the buzz-rate curves (figure 4).
GRID = np.linspace(0.0, 1.0, 101)


def _none(value: float | None) -> float | None:
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value


def _reliability(conf: np.ndarray, correct: np.ndarray) -> list[dict[str, Any]]:
    keep = ~np.isnan(conf)
    if not keep.any():
        return []
    return [b.as_dict() for b in reliability_table(conf[keep], correct[keep])]


def human_fraction_column(
    steps: StepTable, buzzes: BuzzTable, *, definition: str = "reference"
) -> FloatArray:
    """``h_t`` of every step row (:func:`~grace_arena.analysis.metrics.human_fraction`) from
    every human buzz on the step's question: the buzzes of every match (and every pooled
    buzzpoint) that heard it. Human teams are told apart by (match, team)."""
    human = buzzes.team_kind == "human"
    if not len(steps) or not human.any():
        return np.zeros(len(steps))
    return human_fraction(
        steps.word_index,
        buzzes.word_index[human],
        buzzes.correct[human],
        step_groups=steps.question_id,
        buzz_groups=buzzes.question_id[human],
        buzz_team=np.char.add(
            np.char.add(buzzes.match[human].astype(str), "\x1f"), buzzes.team[human].astype(str)
        ),
        definition=definition,
    )


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


def _codes(values: NDArray[Any]) -> tuple[NDArray[Any], IntArray]:
    """Unique values in first-seen order and each row's code into them."""
    (codes,), uniques = factorize(values)
    out = np.empty(len(uniques), dtype=object)
    out[:] = uniques
    return out, codes


def _summarize_rows(m: ModelRows, rows: IntArray, kind: ConfidenceKind) -> dict[str, Any]:
    """Every metric of one model and confidence kind on some of its rows."""
    conf, correct = m.conf[kind][rows], m.correct[rows]
    keep = ~np.isnan(conf)
    q = m.q[rows][keep]
    scored = np.unique(q)
    out: dict[str, Any] = {
        name: float(fn(conf[keep], correct[keep], human_frac=m.h[rows][keep], groups=q))
        if keep.any()
        else None
        for name, fn in QUESTION_METRICS.items()
    }
    out.update(summarize(conf, correct))
    out["n_questions"] = int(scored.size)
    out["n_questions_skipped"] = int(np.unique(m.q[rows]).size - scored.size)
    return out


def summarize_models(
    models: list[ModelRows], *, kinds: Sequence[ConfidenceKind] = CONFIDENCE_KINDS
) -> dict[str, dict[str, dict[str, Any]]]:
    """``{model: {kind: metrics}}``: every question metric and row metric over all steps, with
    ``final`` (each question's last step) and ``by_category`` (a question's category is the
    first one its steps carry, else ``"uncategorized"``)."""
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


def bootstrap_model(
    m: ModelRows,
    combos: Sequence[tuple[ConfidenceKind, bool]],
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    n_bins: int = 10,
) -> dict[tuple[str, bool], dict[str, tuple[float, float]]]:
    """Percentile intervals of CalScore, ECE and Brier over question resamples for each
    ``(kind, final)`` of ``combos``: what :func:`~grace_arena.analysis.metrics.bootstrap_ci`
    gives for each, computed at once. The draws depend only on the seed and the number of
    questions, so they are made once and shared by every combination: one matrix product
    of per-question sums (:func:`~grace_arena.analysis.metrics.question_sums`) per chunk of
    resamples."""
    blocks = [
        question_sums(
            m.conf[kind][rows], m.correct[rows], m.h[rows], m.q[rows], m.n_questions,
            n_bins=n_bins,
        )
        for kind, final in combos
        for rows in [m.final if final else np.arange(m.q.size)]
    ]  # fmt: skip
    width = blocks[0].shape[1]
    # (columns x questions): OpenBLAS is far faster with this orientation than the other
    matrix_t = np.ascontiguousarray(np.hstack(blocks).T)
    totals = np.vstack(
        [
            (matrix_t @ counts.T).T
            for counts in resample_counts(m.n_questions, n_resamples=n_resamples, seed=seed)
        ]
    )
    out: dict[tuple[str, bool], dict[str, tuple[float, float]]] = {}
    for i, combo in enumerate(combos):
        stats = stats_from_sums(totals[:, i * width : (i + 1) * width], n_bins=n_bins)
        out[combo] = {
            name: percentile_interval(stats[name], level=level) for name in HEADLINE_METRICS
        }
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


def _model_section(
    steps: StepTable,
    buzzes: BuzzTable,
    n_resamples: int,
    seed: int,
    level: float,
    h_definition: str = "reference",
) -> tuple[dict[str, Any], list[Any]]:
    h = human_fraction_column(steps, buzzes, definition=h_definition)
    models = model_rows(steps, h)
    summary = summarize_models(models)
    combos = [(kind, final) for kind in CONFIDENCE_KINDS for final in (False, True)]
    for m in models:
        cis = (
            bootstrap_model(m, combos, n_resamples=n_resamples, seed=seed, level=level)
            if n_resamples > 0 and m.n_questions
            else {}
        )
        for kind in CONFIDENCE_KINDS:
            metrics = summary[m.model][kind]
            for final in (False, True):
                target = metrics["final"] if final else metrics
                ci = cis.get((kind, final), {})
                target["ci"] = {
                    name: [_none(ci[name][0]), _none(ci[name][1])] if name in ci else [None, None]
                    for name in HEADLINE_METRICS
                }
            rows = m.final
            metrics["accuracy"] = _none(float(m.correct.mean())) if m.q.size else None
            metrics["final"]["accuracy"] = (
                _none(float(m.correct[rows].mean())) if rows.size else None
            )
            metrics["reliability"] = _reliability(m.conf[kind], m.correct)
            metrics["final"]["reliability"] = _reliability(m.conf[kind][rows], m.correct[rows])
            sh_mean, n_sh = sh_by_model(m, kind)
            metrics["sh"] = _none(sh_mean)
            metrics["n_questions_sh"] = n_sh
    return summary, models


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


def normalisation(buzzes: BuzzTable) -> str:
    """How buzz rates are normalised: per match played (the paper) when every buzz comes
    from a known match, else per tossup heard (pooled data, or files without matches)."""
    hm = buzzes.heard_columns[0]
    if hm.size and not (hm == "").any():
        return "matches played"
    return "tossups heard"


def matches_played(buzzes: BuzzTable) -> dict[str, int]:
    """How many known matches each team heard questions in (teams of pooled data: none)."""
    hm, ht, _ = buzzes.heard_columns
    matches: dict[str, set[str]] = {}
    for m, t in zip(hm.tolist(), ht.tolist(), strict=True):
        if m:
            matches.setdefault(t, set()).add(m)
    return {t: len(ms) for t, ms in matches.items()}


def figure4(
    buzzes: BuzzTable, curves: dict[str, dict[str, Any]], *, n_groups: int = 4
) -> dict[str, Any]:
    """GRACE figure 4: human teams grouped into quartiles Q1–Q4 by total correct buzzes
    (Q1 the most), each group's mean cumulative correct and incorrect buzz rates against
    the fraction of the question revealed, and each model team's own; normalised by the
    matches each team played, or by the tossups it heard where matches are unknown."""
    by = normalisation(buzzes)
    matches = matches_played(buzzes)
    correct_totals = Counter(buzzes.team[buzzes.correct == 1.0].tolist())

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
    """Per team, cumulative correct / incorrect buzz rates on ``grid`` (GRACE figure 4,
    :func:`~grace_arena.analysis.curves.cumulative_buzz_rates`), over the questions each team
    heard; a question is a (match, question) pair."""
    kinds = buzzes.team_kinds()
    _, ht, _ = _heard_arrays(buzzes)
    teams_heard, n_heard = np.unique(ht.astype(str), return_counts=True) if ht.size else ([], [])
    heard = dict(zip(list(teams_heard), [int(n) for n in n_heard], strict=True))
    x = _fractions(buzzes)
    known = ~np.isnan(x)
    key, _ = _keys((buzzes.match, buzzes.match[:0]), (buzzes.question_id, buzzes.question_id[:0]))
    team = buzzes.team.astype(str)
    out: dict[str, dict[str, Any]] = {}
    for t in sorted(set(kinds) | set(heard)):
        mine = known & (team == t)
        curve = cumulative_buzz_rates(
            x[mine],
            buzzes.correct[mine],
            groups=key[mine],
            grid=grid,
            n_questions=max(heard.get(t, 0), 1),
        )
        out[t] = {
            "kind": kinds.get(t, "human"),
            "n_questions": curve.n_questions,
            "grid": grid.tolist(),
            "correct": curve.correct.tolist(),
            "incorrect": curve.incorrect.tolist(),
        }
    return out


def player_scores(buzzes: BuzzTable) -> list[Any]:
    """GRACE appendix F.3 per player (:func:`~grace_arena.analysis.curves.rank_players`),
    best first, with each player's team.

    Every player who buzzed in a match is credited with every question their team heard
    there: their first buzz scores at clue fraction c (``(clue + 1) / n_clues``, or the
    fraction of words when the clues are unknown); a question without a buzz scores 0.
    """
    if not len(buzzes):
        return []
    hm, ht, _hq = _heard_arrays(buzzes)
    heard_per_team: dict[tuple[str, str], int] = {}
    for mt in zip(hm.tolist(), ht.tolist(), strict=True):
        heard_per_team[mt] = heard_per_team.get(mt, 0) + 1
    roster = set(
        zip(buzzes.match.tolist(), buzzes.team.tolist(), buzzes.player.tolist(), strict=True)
    )
    n_records: dict[str, int] = {}
    team_of: dict[str, str] = {}
    for m, t, p in sorted(roster):
        n_records[p] = n_records.get(p, 0) + heard_per_team.get((m, t), 0)
        team_of.setdefault(p, t)
    clue = np.where(
        (buzzes.clue_index >= 0) & (buzzes.n_clues > 0),
        fraction_revealed(np.maximum(buzzes.clue_index, 0), buzzes.n_clues),
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
    buzzed = dict(zip(*np.unique(buzzes.player[rows].astype(str), return_counts=True), strict=True))
    silent = [p for p, n in n_records.items() for _ in range(max(n - buzzed.get(p, 0), 0))]
    ranked = rank_players(
        np.concatenate([buzzes.player[rows].astype(str), np.array(silent, dtype=str)]),
        np.concatenate([clue[rows], np.full(len(silent), np.nan)]),
        np.concatenate([buzzes.correct[rows], np.zeros(len(silent))]),
    )
    return [(r.player, team_of[r.player], r.mean_score, r.n) for r in ranked if r.n > 0]


def _team_section(buzzes: BuzzTable) -> tuple[dict[str, Any], dict[str, Any]]:
    """Per-team counts and the figure-4 curves."""
    kinds = buzzes.team_kinds()
    curves = buzz_rate_curves(buzzes, GRID)
    curves = {t: curves[t] for t in sorted(curves, key=natural_key)}
    heard = Counter(buzzes.heard_columns[1].tolist())
    played = matches_played(buzzes)
    fractions = np.where(
        buzzes.n_words > 0,
        np.minimum((buzzes.word_index + 1) / np.maximum(buzzes.n_words, 1), 1.0),
        np.nan,
    )
    teams: dict[str, Any] = {}
    for team, curve in curves.items():
        rows = buzzes.team == team
        correct = buzzes.correct[rows]
        fr = fractions[rows][(correct == 1) & ~np.isnan(fractions[rows])]
        teams[team] = {
            "kind": kinds.get(team, curve["kind"]),
            "questions_heard": heard.get(team, 0),
            "matches_played": played.get(team) or None,
            "buzzes": int(rows.sum()),
            "correct": int((correct == 1).sum()),
            "incorrect": int((correct == 0).sum()),
            "mean_fraction_correct": _none(float(fr.mean())) if fr.size else None,
        }
    return teams, curves


def _expected_wins(buzzes: BuzzTable, models: list[Any]) -> dict[str, Any]:
    kinds = buzzes.team_kinds()
    first = first_buzzes(buzzes)
    (team_codes,), teams_seen = factorize(first.team)
    model_team = np.array([kinds.get(t) == "model" for t in teams_seen], dtype=bool)
    is_model = model_team[team_codes] if team_codes.size else np.zeros(0, dtype=bool)
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
    for team in sorted({t for t, k in kinds.items() if k == "model"}):
        rows = is_model & usable & (first.team == team)
        if rows.any():
            value = expected_wins(first.fraction[rows], first.correct[rows], w)
            teams[team] = {"expected_wins": value, "n_questions": int(rows.sum())}
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


def _players(buzzes: BuzzTable) -> list[dict[str, Any]]:
    """GRACE appendix F.3: players ranked by mean 20 − 20c score, with quartiles."""
    kinds = buzzes.team_kinds()
    ranked = player_scores(buzzes)
    groups = quartiles({p: score for p, _, score, _ in ranked}) if ranked else {}
    return [
        {
            "rank": i,
            "player": player,
            "team": team,
            "kind": kinds.get(team, "human"),
            "mean_score": score,
            "n_questions": n,
            "quartile": groups.get(player),
        }
        for i, (player, team, score, n) in enumerate(ranked, start=1)
    ]


def analyze(
    steps: StepTable,
    buzzes: BuzzTable,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    source: dict[str, Any] | None = None,
    h_definition: str = "reference",
) -> dict[str, Any]:
    """Every metric, curve and ranking of GRACE Arena's analysis (see the module docstring).

    ``h_definition`` picks h_t's definition behind CalScore (``"reference"``: GRACE's code,
    the default; ``"paper"``: the paper's text; see
    :func:`~grace_arena.analysis.metrics.human_fraction`).
    """
    check_h_definition(h_definition)
    models, rows = _model_section(steps, buzzes, n_resamples, seed, level, h_definition)
    teams, rate_curves = _team_section(buzzes)
    policy = buzz_given_correct_table(rows)
    notes = []
    if len(buzzes) and not len(steps):
        notes.append(
            f"no model steps: {NEEDS_MODEL_STEPS} need a model's confidence at every clue "
            "(grace-arena precompute --packet FILE; a GRACE file works)"
        )
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
            "buzz_rates_normalised_by": normalisation(buzzes),
        },
        "counts": {
            "steps": len(steps),
            "models": len(models),
            "questions": len(set(steps.question_id.tolist()) | set(buzzes.question_id.tolist())),
            "buzzes": len(buzzes),
            "teams": len(teams),
        },
        "models": models,
        "leaderboard": _leaderboard(models),
        "teams": teams,
        "curves": {
            "buzz_rates": rate_curves,
            "figure4": figure4(buzzes, rate_curves),
            "accuracy": accuracy_curves(rows),
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
        "expected_wins": _expected_wins(buzzes, rows),
        "players": _players(buzzes),
    }


def comparable(result: dict[str, Any]) -> dict[str, Any]:
    """``result`` without what differs between two runs on the same data (time, source)."""
    return {k: v for k, v in result.items() if k not in ("generated_at", "source")}
