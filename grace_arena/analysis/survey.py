"""Human trajectories from the per-clue survey, side by side with the models' (GRACE §3.2.1,
§5.1 figures 5 and 6, appendix F.3).

A survey step is a participant's guess after one clue prefix, judged, and whether they would
have buzzed there: the human counterpart of a model step with its buzz policy. From them:

* **ranking** (appendix F.3): on a question, a participant scores ``20 − 20c`` at their first
  would-buzz step if its guess is correct, −5 if not, where ``c = (step + 1) / n_clues`` is the
  share of clues seen; 0 if they answered every clue without buzzing. Questions left part way
  without a buzz are not scored yet. Participants are ranked by mean score and split into
  quartiles (figure 5) and halves (figure 6) with :func:`~grace_arena.analysis.curves.quartiles`;
* **P(buzz | correct), P(buzz | incorrect)** (figure 6): per participant over their steps up
  to and including each first buzz (footnote 10), then averaged over the participants of a
  group (all, bottom half, top half), as the paper does; also per bin of fraction revealed;
* **accuracy by fraction revealed** (figure 5): every step's correctness, binned by
  ``(word_index + 1) / n_words`` as for the models, per group (all, Q1…Q4).

The same P(buzz | ·) by fraction is computed for every model whose steps carry
``would_buzz``, so the two sides are on one footing. Numbers only; plots are in ``report.py``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from grace_arena.analysis.curves import (
    accuracy_by_fraction,
    before_first_buzz,
    buzz_given_correct,
    fraction_revealed,
    quartiles,
    rank_players,
)
from grace_arena.analysis.frames import FileFormatError, column_values, read_table
from grace_arena.analysis.metrics import reliability_table

__all__ = [
    "SURVEY_COLUMNS",
    "SurveyStep",
    "analyze_survey",
    "crowd_reliability",
    "read_survey_csv",
    "survey_frame",
    "survey_scores",
    "survey_steps_from",
]

#: Required columns of a ``--survey`` file, in order (optional: ``name``, ``n_words``,
#: ``n_clues``, ``category``).
SURVEY_COLUMNS = (
    "participant",
    "question_id",
    "step",
    "word_index",
    "guess",
    "would_buzz",
    "correct",
)
ALL = "humans (all)"
HALVES = {1: "humans, bottom half", 2: "humans, top half"}


@dataclass(frozen=True, slots=True)
class SurveyStep:
    """One participant's answer after one clue prefix (``step`` = clue index, 0-based)."""

    participant: str
    question_id: str
    step: int
    word_index: int
    correct: bool
    would_buzz: bool
    guess: str = ""
    name: str | None = None
    n_words: int | None = None  # the question's length; inferred when None
    n_clues: int | None = None  # the question's clue count; inferred when None


def read_survey_csv(path: str | Path) -> list[SurveyStep]:
    """Read a survey file, CSV or Parquet (:data:`SURVEY_COLUMNS`, optional ``name``,
    ``n_words``, ``n_clues``). ``correct`` and ``would_buzz`` are 0/1 (a prompt is 0)."""
    path = Path(path)
    return survey_steps_from(read_table(path, SURVEY_COLUMNS), path=path)


def survey_steps_from(df: pd.DataFrame, *, path: Path | None = None) -> list[SurveyStep]:
    """Survey steps from a DataFrame with the :data:`SURVEY_COLUMNS` (checked; a bad cell
    raises :class:`~grace_arena.analysis.frames.FileFormatError` naming its line)."""
    values = {
        name: column_values(df, name, kind, path=path, name="survey", required=True)
        for name, kind in (
            ("step", "int"), ("word_index", "int"), ("correct", "bool"), ("would_buzz", "bool")
        )
    }  # fmt: skip
    optional = {
        name: column_values(df, name, "int", path=path, name="survey")
        for name in ("n_words", "n_clues")
    }
    rows = df.astype(object).where(df.notna(), None).to_dict("records")
    out = []
    for i, row in enumerate(rows):
        participant = str(row["participant"] or "").strip()
        question = str(row["question_id"] or "").strip()
        if not participant or not question:
            at = f"{path}, line {i + 2}" if path is not None else f"survey row {i}"
            raise FileFormatError(f"{at}: participant and question_id are needed")
        n_words, n_clues = optional["n_words"][i], optional["n_clues"][i]
        out.append(
            SurveyStep(
                participant=participant,
                question_id=question,
                step=int(values["step"][i]),
                word_index=int(values["word_index"][i]),
                correct=bool(values["correct"][i]),
                would_buzz=bool(values["would_buzz"][i]),
                guess=str(row.get("guess") or ""),
                name=str(row.get("name") or "").strip() or None,
                n_words=None if np.isnan(n_words) else int(n_words),
                n_clues=None if np.isnan(n_clues) else int(n_clues),
            )
        )
    return out


def survey_frame(steps: Sequence[SurveyStep]) -> pd.DataFrame:
    """Survey steps as a DataFrame (one row per answer; the :data:`SURVEY_COLUMNS` first)."""
    columns = [*SURVEY_COLUMNS, "name", "n_words", "n_clues"]
    frame = pd.DataFrame([{c: getattr(s, c) for c in columns} for s in steps], columns=columns)
    return frame.astype({"n_words": "Int64", "n_clues": "Int64"})


def _sizes(steps: Sequence[SurveyStep]) -> tuple[dict[str, int], dict[str, int]]:
    """Each question's words and clues: as given, else the largest seen (the last clue ends
    at the last word, so one participant who finished the question is enough)."""
    n_words: dict[str, int] = {}
    n_clues: dict[str, int] = {}
    for s in steps:
        if s.n_words:
            n_words[s.question_id] = max(n_words.get(s.question_id, 0), s.n_words)
        if s.n_clues:
            n_clues[s.question_id] = max(n_clues.get(s.question_id, 0), s.n_clues)
    for s in steps:
        q = s.question_id
        if s.n_words is None:
            n_words[q] = max(n_words.get(q, 0), s.word_index + 1)
        if s.n_clues is None:
            n_clues[q] = max(n_clues.get(q, 0), s.step + 1)
    return n_words, n_clues


def _check(steps: Sequence[SurveyStep]) -> None:
    seen: set[tuple[str, str, int]] = set()
    for s in steps:
        key = (s.participant, s.question_id, s.step)
        if key in seen:
            raise ValueError(
                f"duplicate survey step: participant={s.participant!r} "
                f"question={s.question_id!r} step={s.step!r}"
            )
        seen.add(key)
        if s.step < 0 or s.word_index < 0:
            raise ValueError(f"step and word_index must be >= 0, got {s!r}")


def survey_scores(
    steps: Sequence[SurveyStep], n_clues: Mapping[str, int]
) -> list[tuple[str, float | None, bool]]:
    """Appendix F.3 records ``(participant, c, correct)`` per scored question, for
    :func:`~grace_arena.analysis.curves.rank_players` (``c = None``: no buzz, scores 0).

    Example: buzzing right at clue 3 of 4 gives c = 0.75 (5 points); answering all 4 clues
    without a buzz gives ``(p, None, False)`` (0 points); a buzz on clue 1 that was wrong
    gives ``(p, 0.25, False)`` (−5).
    """
    by_question: dict[tuple[str, str], list[SurveyStep]] = {}
    for s in steps:
        by_question.setdefault((s.participant, s.question_id), []).append(s)
    records: list[tuple[str, float | None, bool]] = []
    for (participant, question), rows in sorted(by_question.items()):
        rows.sort(key=lambda s: s.step)
        buzz = next((s for s in rows if s.would_buzz), None)
        total = n_clues[question]
        if buzz is not None:
            records.append((participant, min((buzz.step + 1) / total, 1.0), buzz.correct))
        elif len(rows) >= total:
            records.append((participant, None, False))
    return records


def _mean(values: Iterable[float]) -> float | None:
    kept = [v for v in values if not math.isnan(v)]
    return float(np.mean(kept)) if kept else None


def _rates_by_fraction(
    rows: Iterable[tuple[str, str, int, float, bool, bool]], edges: np.ndarray
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per player, P(b | g=1) and P(b | g=0) per bin of fraction revealed (NaN: no step),
    over each question's steps up to and including the first buzz
    (:func:`~grace_arena.analysis.curves.before_first_buzz`).

    ``rows``: (player, question, step, fraction, correct, would_buzz).
    """
    items = sorted(rows, key=lambda r: (r[0], r[1], r[2]))
    if not items:
        return {}
    player = np.array([r[0] for r in items], dtype=str)
    question = np.array([f"{r[0]}\x1f{r[1]}" for r in items], dtype=str)
    x = np.array([r[3] for r in items], dtype=float)
    ok = np.array([r[4] for r in items], dtype=bool)
    buzz = np.array([r[5] for r in items], dtype=float)
    use = before_first_buzz(buzz, groups=question)
    n_bins = edges.size - 1
    idx = np.minimum(np.searchsorted(edges, x, side="right") - 1, n_bins - 1)
    out = {}
    with np.errstate(invalid="ignore", divide="ignore"):
        for p in np.unique(player):
            counts = []
            for kind in (True, False):
                mine = use & (player == p) & (ok == kind)
                n = np.bincount(idx[mine], minlength=n_bins)
                hits = np.bincount(idx[mine], weights=buzz[mine], minlength=n_bins)
                counts.append(hits / n)
            out[str(p)] = (counts[0], counts[1])
    return out


def _listed(values: np.ndarray) -> list[float | None]:
    return [None if math.isnan(v) else float(v) for v in values]


def analyze_survey(
    steps: Sequence[SurveyStep],
    *,
    model_steps: pd.DataFrame | None = None,
    accuracy_bins: int = 10,
    buzz_bins: int = 4,
) -> dict[str, Any]:
    """The survey's human trajectories as a JSON-ready dict (see the module docstring):
    ``participants`` (ranked), ``groups`` (P(buzz | ·) per group), ``accuracy`` (curves per
    group, same bins as the models'), ``buzz_by_fraction`` (per group and per model with a
    buzz policy) and ``counts``. Undefined values are ``None``.
    """
    steps = list(steps)
    _check(steps)
    n_words, n_clues = _sizes(steps)
    names = {s.participant: s.name or s.participant for s in steps}

    records = survey_scores(steps, n_clues)
    ranked = rank_players(
        [p for p, _, _ in records],
        [math.nan if c is None else c for _, c, _ in records],
        [ok for _, _, ok in records],
    )
    scores = {r.player: r.mean_score for r in ranked}
    quartile = quartiles(scores, n_groups=4)
    half = quartiles(scores, n_groups=2)

    per_player = {}
    for p in sorted(names):
        mine = sorted(
            (s for s in steps if s.participant == p), key=lambda s: (s.question_id, s.step)
        )
        per_player[p] = buzz_given_correct(
            [s.correct for s in mine],
            [s.would_buzz for s in mine],
            groups=[s.question_id for s in mine],
        )

    edges = np.arange(buzz_bins + 1) / buzz_bins
    by_fraction = _rates_by_fraction(
        (
            (
                s.participant,
                s.question_id,
                s.step,
                fraction_revealed(s.word_index, n_words[s.question_id]),
                s.correct,
                s.would_buzz,
            )
            for s in steps
        ),
        edges,
    )

    def entry(player: str, rank: int | None, score: float | None, n: int) -> dict[str, Any]:
        mine = [s for s in steps if s.participant == player]
        rates = per_player.get(player)
        return {
            "rank": rank,
            "participant": player,
            "name": names[player],
            "mean_score": score,
            "n_questions": n,
            "quartile": quartile.get(player),
            "half": half.get(player),
            "n_steps": len(mine),
            "accuracy": float(np.mean([s.correct for s in mine])),
            "p_buzz_given_correct": _none(rates.p_buzz_given_correct) if rates else None,
            "p_buzz_given_incorrect": _none(rates.p_buzz_given_incorrect) if rates else None,
        }

    participants = [entry(r.player, i, r.mean_score, r.n) for i, r in enumerate(ranked, start=1)]
    # participants with steps but no question scored yet: listed, unranked
    participants += [entry(p, None, None, 0) for p in sorted(set(names) - set(scores))]

    members: dict[str, list[str]] = {ALL: sorted(names)}
    for p, h in half.items():
        members.setdefault(HALVES[h], []).append(p)
    groups: dict[str, Any] = {}
    buzz_curves: dict[str, Any] = {}
    for group in (ALL, *HALVES.values()):
        if group not in members:
            continue
        people = sorted(members[group])
        groups[group] = {
            "kind": "human",
            "n_participants": len(people),
            "p_buzz_given_correct": _mean(
                per_player[p].p_buzz_given_correct for p in people if p in per_player
            ),
            "p_buzz_given_incorrect": _mean(
                per_player[p].p_buzz_given_incorrect for p in people if p in per_player
            ),
        }
        buzz_curves[group] = _group_curve(edges, [by_fraction[p] for p in people], "human")

    if model_steps is not None and len(model_steps):
        ms = model_steps
        n_words_col = (
            ms["n_words"].astype("Float64").to_numpy(dtype=float, na_value=-1.0)
            if "n_words" in ms
            else np.full(len(ms), -1.0)
        )
        would = ms["would_buzz"].to_numpy(dtype=float) if "would_buzz" in ms else None
        if would is not None:
            known = np.flatnonzero(~np.isnan(would) & (n_words_col > 0))
            fractions = fraction_revealed(ms["word_index"].to_numpy()[known], n_words_col[known])
            rows = list(
                zip(
                    ms["model"].astype(str).to_numpy()[known].tolist(),
                    ms["question_id"].astype(str).to_numpy()[known].tolist(),
                    ms["step"].to_numpy()[known].tolist(),
                    fractions.tolist(),
                    (ms["correct"].to_numpy()[known] == 1).tolist(),
                    (would[known] == 1).tolist(),
                    strict=True,
                )
            )
            for model, curve in sorted(_rates_by_fraction(rows, edges).items()):
                buzz_curves[model] = _group_curve(edges, [curve], "model")

    labels = sorted({ALL, *(f"humans Q{k}" for k in quartile.values())})
    accuracy = {}
    for label in labels:
        mine = [
            s for s in steps if label == ALL or f"humans Q{quartile.get(s.participant)}" == label
        ]
        c = accuracy_by_fraction(
            [fraction_revealed(s.word_index, n_words[s.question_id]) for s in mine],
            [s.correct for s in mine],
            bins=accuracy_bins,
        )
        accuracy[label] = {
            "lower": c.lower.tolist(),
            "upper": c.upper.tolist(),
            "accuracy": _listed(c.accuracy),
            "count": c.count.astype(int).tolist(),
        }
    return {
        "counts": {
            "steps": len(steps),
            "participants": len(names),
            "questions": len(n_words),
            "scored_records": sum(r.n for r in ranked),
        },
        "settings": {"accuracy_bins": accuracy_bins, "buzz_bins": buzz_bins},
        "participants": participants,
        "groups": groups,
        "accuracy": accuracy,
        "buzz_by_fraction": buzz_curves,
        "reliability": {ALL: crowd_reliability(steps)} if steps else {},
    }


def crowd_reliability(steps: Sequence[SurveyStep], *, n_bins: int = 10) -> list[dict[str, Any]]:
    """The humans' reliability table, to lay beside the models'.

    A participant states no probability; the crowd does: at each clue of each question, the
    share of the participants answering there who would buzz is the humans' confidence at
    that clue, and each participant's answer there is a row with that confidence and its
    correctness (:func:`~grace_arena.analysis.metrics.reliability_table`, the models' bins).
    A calibrated crowd is right in 70 % of the answers given where 70 % would buzz."""
    frame = pd.DataFrame(
        {
            "question": [s.question_id for s in steps],
            "step": [s.step for s in steps],
            "buzz": [float(s.would_buzz) for s in steps],
            "correct": [float(s.correct) for s in steps],
        }
    )
    share = frame.groupby(["question", "step"])["buzz"].transform("mean").to_numpy()
    table = reliability_table(share, frame["correct"].to_numpy(), n_bins=n_bins)
    return [b.as_dict() for b in table]


def _none(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else float(value)


def _group_curve(
    edges: np.ndarray, curves: list[tuple[np.ndarray, np.ndarray]], kind: str
) -> dict[str, Any]:
    """The mean over players (ignoring players with no step in a bin) of per-bin rates."""
    n_bins = edges.size - 1
    if curves:
        right = np.vstack([c[0] for c in curves])
        wrong = np.vstack([c[1] for c in curves])
    else:
        right = wrong = np.full((1, n_bins), np.nan)
    with warnings.catch_warnings():  # a bin no player reached: NaN, said once here
        warnings.simplefilter("ignore", RuntimeWarning)
        mean_right = np.nanmean(right, axis=0)
        mean_wrong = np.nanmean(wrong, axis=0)
    return {
        "kind": kind,
        "lower": edges[:-1].tolist(),
        "upper": edges[1:].tolist(),
        "p_buzz_given_correct": _listed(mean_right),
        "p_buzz_given_incorrect": _listed(mean_wrong),
    }
