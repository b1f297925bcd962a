"""The analysis past memory: the metrics that are sums over a question's steps, on Parquet
data sets larger than memory, through DuckDB.

``grace-arena analyze-large --steps 'DIR/steps/*.parquet' --buzzes 'DIR/buzzes/*.parquet'``
reads the same columns as ``analyze --steps/--buzzes`` (:mod:`~grace_arena.analysis.frames`)
and gives the same numbers for every metric it computes, without holding the rows: DuckDB
streams the files (spilling to a temporary folder past ``memory_limit``) and aggregates
them **per question** first, in three passes:

1. **h_t**, the fraction of human teams right by each word, from the human buzzes pooled over
   every room: each buzz is a change of a count at its word (the reference definition: +1
   when a team's latest buzz turns right, −1 when it turns wrong, teams told apart by
   (match, team); the paper's: +1 per right buzz over +1 per buzz), summed cumulatively per
   question, and joined to every step by an ``ASOF`` join on (question, word): the formula
   of :func:`~grace_arena.analysis.metrics.human_fraction`, written in SQL.
2. **Per (model, question)** (DuckDB sorts the steps by question, model and step, in ranges
   of questions of at most :data:`SORT_ROWS` steps), for each confidence kind over all
   steps and over each question's last step: the sums every sum-shaped metric needs (rows,
   right rows, ``Σ(1−h)g±c`` for CalScore, ``Σg±c`` for GRACE's MCE and their reference-code forms,
   squared errors, log likelihood, per equal-width bin the rows, confidences and right
   rows, and the rows above each over-confidence threshold). A question is a few hundred
   bytes however many steps it had.
3. In numpy, per model, from that table: each metric as the in-memory path computes it (the
   per-question CalScore and MCE through the same
   :func:`~grace_arena.analysis.metrics.normalized_sigmoid`, the means over questions, the
   row metrics from the sums), and the **bootstrap over questions** on the per-question
   sums of :func:`~grace_arena.analysis.metrics.question_sums`' layout, with the draws of
   :func:`~grace_arena.analysis.metrics.resample_counts` (same seed, same questions in the
   same order: the same intervals as ``analyze``).

With ``rank=True`` (``--rank``), a fourth pass gives ACE, AUROC, AURC and the accuracy at
80 % coverage exactly, from the rows counted per distinct (confidence, correctness)
(:func:`_rank_sql`). What it leaves out: the smoothed ECE and its band (a kernel over every
row), the recalibration (a model fitted on the rows), and the human side's curves
(``analyze`` on the buzzes alone needs no steps and stays small). ``n_missing``,
``n_questions`` and ``n_questions_skipped`` are kept, so a reader can tell what was scored.

With ``cache=FOLDER`` (``--cache``), the sums are kept by ranges of question names with the
files they came from (path, size, modification time), and the bootstrap's draws and
resampled totals with them: the next analysis reads again only the ranges of the questions
of new, changed or removed files, and moves the kept totals by the changed questions' sums
when every model kept its questions (docs/analysis.md, "Past memory").

On 1 M steps every metric it gives equals ``analyze``'s to 1e-12 (``tests/test_large_
analysis.py``); ``bench/bench_large_analysis.py`` generates GRACE-shaped data of any size
and prints time and peak memory.
"""

from __future__ import annotations

import glob
import itertools
import json
import math
import os
import re
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from grace_arena.analysis.metrics import (
    HEADLINE_METRICS,
    LOG_LOSS_EPS,
    UNCATEGORIZED,
    _uniform_bin_index,
    check_h_definition,
    normalized_sigmoid,
    percentile_interval,
    resample_counts,
    stats_from_sums,
)

__all__ = [
    "LARGE_METRICS",
    "LargeAnalysisError",
    "analyze_large",
    "parquet_files",
]

#: Confidence kinds and their columns (as in ``analyze``).
KINDS = {"logit": "confidence_logit", "verbal": "confidence_verbal"}
#: Equal-width bins of ECE, the maximum calibration error and the binned Brier parts.
N_BINS = 10
#: Thresholds of the over-confidence rates (``ocr_0.7`` …).
OCR_THRESHOLDS = (0.7, 0.8, 0.9)
#: What :func:`analyze_large` computes for each model, kind and (all, final) steps.
LARGE_METRICS = (
    "calscore",
    "calscore_ref",
    "mce_grace",
    "mce_grace_ref",
    "ece",
    "max_ce",
    "brier",
    "bss",
    "log_loss",
    *(f"ocr_{t}" for t in OCR_THRESHOLDS),
    "conf_right",
    "conf_wrong",
    "brier_reliability",
    "brier_resolution",
    "brier_uncertainty",
    "brier_binned",
    "accuracy",
)
#: The metrics of ``analyze`` left out (those of :data:`RANK_METRICS` only without ``rank``).
NOT_COMPUTED = ("ace", "smooth_ece", "auroc", "aurc", "acc_at_80", "recalibration")


class LargeAnalysisError(ValueError):
    """Input the analysis cannot read: no files, a missing column, a duplicate step."""


def parquet_files(pattern: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> list[str]:
    """The Parquet files of a folder, a glob or a list of them, sorted (their rows are read
    in this order: it breaks ties between buzzes on one word, as the order of a buzz file's
    rows does for ``analyze``)."""
    items = [pattern] if isinstance(pattern, str | os.PathLike) else list(pattern)
    files: list[str] = []
    for item in items:
        path = Path(item)
        if path.is_dir():
            found = sorted(str(p) for p in path.rglob("*.parquet"))
        else:
            found = sorted(glob.glob(str(item), recursive=True))
        if not found:
            raise LargeAnalysisError(f"no Parquet file matches {str(item)!r}")
        files += found
    return files


def _sql_list(files: Iterable[str]) -> str:
    return "[" + ", ".join("'" + f.replace("'", "''") + "'" for f in files) + "]"


def _columns(con: Any, files: list[str]) -> dict[str, str]:
    rows = con.execute(
        f"DESCRIBE SELECT * FROM read_parquet({_sql_list(files)}, union_by_name = true)"
    ).fetchall()
    return {name: kind for name, kind, *_ in rows}


def _require(columns: dict[str, str], needed: Sequence[str], what: str, files: list[str]) -> None:
    missing = [c for c in needed if c not in columns]
    if missing:
        raise LargeAnalysisError(
            f"{what} ({files[0]}{' …' if len(files) > 1 else ''}) lack column(s) "
            f"{', '.join(missing)}; they have {', '.join(columns)}"
        )


@dataclass(frozen=True)
class _Inputs:
    steps: list[str]
    buzzes: list[str]
    has_category: bool
    buzz_columns: dict[str, str]


def _h_sql(inputs: _Inputs, definition: str, extra_filter: str = "") -> str:
    """The cumulative human counts per (question, word) and each question's total: the
    table the steps are ``ASOF``-joined to."""
    cols = inputs.buzz_columns
    filters = ["correct IS NOT NULL"]
    if "team_kind" in cols:
        filters.append("coalesce(CAST(team_kind AS VARCHAR), 'human') = 'human'")
    if "outcome" in cols:  # an export's rows: only those that took the floor
        filters.append("(outcome IS NULL OR CAST(outcome AS VARCHAR) = 'won')")
    if "thrown_out" in cols:
        filters.append("NOT coalesce(CAST(thrown_out AS BOOLEAN), false)")
    match = "coalesce(CAST(match AS VARCHAR), '')" if "match" in cols else "''"
    files = _sql_list(inputs.buzzes)
    if definition == "paper":
        change = "ok"
    else:  # a team's latest buzz: +1 when it turns right, −1 when it turns wrong
        change = (
            "ok - coalesce(lag(ok) OVER (PARTITION BY question_id, team_key "
            "ORDER BY word, file_order, row_index), 0)"
        )
    return f"""
        WITH files AS (
            SELECT unnest({files}) AS filename, generate_subscripts({files}, 1) AS file_order
        ),
        raw AS (
            SELECT question_id, {match} || chr(31) || CAST(team AS VARCHAR) AS team_key,
                   CAST(word_index AS BIGINT) AS word,
                   CASE WHEN CAST(correct AS DOUBLE) > 0 THEN 1.0 ELSE 0.0 END AS ok,
                   files.file_order, b.file_row_number AS row_index
            FROM read_parquet({files}, union_by_name = true, filename = true,
                              file_row_number = true) AS b
            JOIN files ON b.filename = files.filename
            WHERE {" AND ".join(filters)} {extra_filter}
        ),
        changes AS (SELECT question_id, word, {change} AS num, 1.0 AS den FROM raw),
        per_word AS (
            SELECT question_id, word, sum(num) AS num, sum(den) AS den
            FROM changes GROUP BY question_id, word
        )
        SELECT question_id, word,
               sum(num) OVER w AS cum_num, sum(den) OVER w AS cum_den,
               sum(den) OVER (PARTITION BY question_id) AS total
        FROM per_word
        WINDOW w AS (PARTITION BY question_id ORDER BY word ROWS UNBOUNDED PRECEDING)
    """


#: The bootstrap's combinations, in ``analyze``'s order: each kind over all steps, then over
#: each question's last step.
TAGS: tuple[tuple[str, bool], ...] = tuple((k, f) for k in KINDS for f in (False, True))
#: Columns of a question's bootstrap sums (:func:`~grace_arena.analysis.metrics.question_sums`).
WIDTH = 4 + N_BINS
#: The question metrics: name, the per-row term's column, whether signed (g = ±1) and
#: normalised by :func:`~grace_arena.analysis.metrics.normalized_sigmoid`.
QUESTION = (("calscore", "cal", True), ("calscore_ref", "cal_ref", False),
            ("mce_grace", "mce", True), ("mce_grace_ref", "mce_ref", False))  # fmt: skip
#: The sums kept per (model, category, tag): linear in the rows or in the questions.
LINEAR = (
    "n", "missing", "hits", "sse", "ll", "sumc", "sumgc",
    *(f"{w}{t}" for t in OCR_THRESHOLDS for w in ("above", "abovehit")),
    *(f"{w}{b}" for w in ("bn", "bc", "bg") for b in range(N_BINS)),
    "q_scored", "q_seen", *(f"q_{name}" for name, *_ in QUESTION),
)  # fmt: skip
COL = {name: i for i, name in enumerate(LINEAR)}
#: Rows read from DuckDB at a time.
BATCH_ROWS = 1_000_000
#: Steps sorted at a time (a range of questions): 12.5 M rows of 64 bytes, 800 MB.
SORT_ROWS = 12_500_000


def _none(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else float(value)


class _Accumulator:
    """The one pass over the steps, in order of (question, model, step): per (model,
    category, tag) the sums of :data:`LINEAR`, and per batch of whole questions their
    bootstrap sums, kept in files of ``folder`` until the bootstrap reads them."""

    def __init__(
        self, n_models: int, n_categories: int, n_buckets: int, folder: Path, bootstrap: bool
    ) -> None:
        self.M, self.C = n_models, n_categories + 1  # category code 0: uncategorized
        self.B = n_buckets
        self.bucket_of = np.zeros(0, dtype=np.int64)  # each question's bucket, by its code
        # one cell per (bucket, model, category)
        self.sums = np.zeros((self.B * self.M * self.C, len(TAGS), len(LINEAR)))
        self.folder, self.bootstrap = folder, bootstrap
        self.blocks: list[Path] = []
        self.duplicate: tuple[int, int, int] | None = None

    def add(self, cols: dict[str, NDArray[Any]]) -> None:
        """Rows of whole questions, sorted by (question, model, step)."""
        q, m = cols["q"], cols["m"]
        if not q.size:
            return
        key = (q - q[0]) * self.M + m
        new = np.ones(q.size, dtype=bool)
        new[1:] = key[1:] != key[:-1]
        step = cols["step"]
        dup = ~new[1:] & (step[1:] == step[:-1])
        if dup.any() and self.duplicate is None:
            i = int(np.argmax(dup))
            self.duplicate = (int(m[i]), int(q[i]), int(step[i]))
        gid = np.cumsum(new) - 1
        starts = np.flatnonzero(new)
        G = starts.size
        final = np.zeros(q.size, dtype=bool)
        final[np.r_[starts[1:] - 1, q.size - 1]] = True
        gm, gq = m[starts], q[starts]
        # a question's category: the first one its steps carry, in step order
        cat = cols["cat"]
        gcat = np.zeros(G, dtype=np.int64)
        has = np.flatnonzero(cat >= 0)
        if has.size:
            first_g, pos = np.unique(gid[has], return_index=True)
            gcat[first_g] = cat[has[pos]] + 1
        cell_g = (self.bucket_of[gq] * self.M + gm) * self.C + gcat
        cell = cell_g[gid]
        size = self.B * self.M * self.C
        g, h = cols["g"], cols["h"]
        block = np.zeros((G, len(TAGS) * WIDTH), dtype=np.float32) if self.bootstrap else None
        for t, (kind, fin) in enumerate(TAGS):
            c_all = cols[kind]
            present = ~np.isnan(c_all)
            chosen = present & final if fin else present
            missing = ~present & final if fin else ~present
            rows = np.flatnonzero(chosen)
            gs, c, gg, hs, cr = gid[rows], c_all[rows], g[rows], h[rows], cell[rows]
            out = self.sums[:, t]

            def add(name: str, weights: Any = None, at: Any = cr, into: Any = out) -> None:
                into[:, COL[name]] += np.bincount(at, weights=weights, minlength=size)

            signed = (2.0 * gg - 1.0) * c
            add("n")
            out[:, COL["missing"]] += np.bincount(cell[missing], minlength=size)
            add("hits", gg)
            add("sse", (c - gg) ** 2)
            p = np.clip(c, LOG_LOSS_EPS, 1.0 - LOG_LOSS_EPS)
            add("ll", np.log(np.where(gg == 1.0, p, 1.0 - p)))
            add("sumc", c)
            add("sumgc", gg * c)
            for th in OCR_THRESHOLDS:
                above = c > th
                add(f"above{th}", None, cr[above])
                add(f"abovehit{th}", gg[above], cr[above])
            bins = _uniform_bin_index(c, N_BINS)
            for name, weights in (("bn", None), ("bc", c), ("bg", gg)):
                per = np.bincount(cr * N_BINS + bins, weights=weights, minlength=size * N_BINS)
                out[:, COL[f"{name}0"] : COL[f"{name}0"] + N_BINS] += per.reshape(size, N_BINS)
            # per question (group): its metrics, once, into the (model, category) sums
            n_g = np.bincount(gs, minlength=G).astype(float)
            scored = n_g > 0
            terms = {"cal": (1.0 - hs) * signed, "cal_ref": (1.0 - hs) * gg * c,
                     "mce": signed, "mce_ref": gg * c}  # fmt: skip
            add("q_seen", None, cell_g)
            add("q_scored", scored.astype(float), cell_g)
            per_q: dict[str, NDArray[np.float64]] = {}
            for name, term, is_signed in QUESTION:
                mean = np.bincount(gs, weights=terms[term], minlength=G)[scored] / n_g[scored]
                value = np.zeros(G)
                value[scored] = 1.0 - (normalized_sigmoid(mean) if is_signed else mean)
                per_q[name] = value
                add(f"q_{name}", value, cell_g)
            if block is not None:
                gaps = np.bincount(gs * N_BINS + _uniform_bin_index(c, N_BINS), weights=gg - c,
                                   minlength=G * N_BINS).reshape(G, N_BINS)  # fmt: skip
                sse = np.bincount(gs, weights=(c - gg) ** 2, minlength=G)
                part = np.column_stack([per_q["calscore"], scored, n_g, sse, gaps])
                block[:, t * WIDTH : (t + 1) * WIDTH] = part
        if block is not None:
            path = self.folder / f"block-{len(self.blocks):06d}.npz"
            np.savez(path, m=gm.astype(np.int32), q=gq, sums=block)
            self.blocks.append(path)

    def model_sums(self) -> dict[int, tuple[NDArray[np.int64], NDArray[np.float32]]]:
        """Per model, its questions' codes and their bootstrap sums, ``(len(TAGS) * WIDTH,
        questions)``, in the questions' order, read back from the blocks one at a time."""
        counts = np.zeros(self.M, dtype=np.int64)
        for path in self.blocks:
            with np.load(path) as block:
                counts += np.bincount(block["m"], minlength=self.M)
        out = {
            m: (np.empty(n, dtype=np.int64), np.empty((len(TAGS) * WIDTH, n), np.float32))
            for m, n in enumerate(counts.tolist())
        }
        at = np.zeros(self.M, dtype=np.int64)
        for path in self.blocks:
            with np.load(path) as block:
                bm, bq, sums = block["m"], block["q"], block["sums"]
                for m in np.unique(bm).tolist():
                    mine = bm == m
                    k = int(mine.sum())
                    out[m][0][at[m] : at[m] + k] = bq[mine]
                    out[m][1][:, at[m] : at[m] + k] = sums[mine].T
                    at[m] += k
        return out


def _metrics(v: NDArray[np.float64]) -> dict[str, Any]:
    """One (model[, category], tag)'s metrics from its :data:`LINEAR` sums: the formulas of
    :mod:`~grace_arena.analysis.metrics` written on sums."""
    n, hits, sse = v[COL["n"]], v[COL["hits"]], v[COL["sse"]]
    scored = v[COL["q_scored"]]
    out: dict[str, Any] = {
        name: v[COL[f"q_{name}"]] / scored if scored > 0 else None for name, *_ in QUESTION
    }
    bn, bc, bg = (v[COL[f"{w}0"] : COL[f"{w}0"] + N_BINS] for w in ("bn", "bc", "bg"))
    defined = n > 0
    out["ece"] = float(np.abs(bg - bc).sum() / n) if defined else None
    with np.errstate(invalid="ignore", divide="ignore"):
        gaps = np.where(bn > 0, np.abs(bg - bc) / np.maximum(bn, 1), -np.inf)
    out["max_ce"] = float(gaps.max()) if defined else None
    out["brier"] = sse / n if defined else None
    base = hits / n if defined else math.nan
    reference = base * (1.0 - base)
    out["bss"] = 1.0 - (sse / n) / reference if defined and reference > 0 else None
    out["log_loss"] = -v[COL["ll"]] / n if defined else None
    for th in OCR_THRESHOLDS:
        above = v[COL[f"above{th}"]]
        out[f"ocr_{th}"] = 1.0 - v[COL[f"abovehit{th}"]] / above if above > 0 else None
    right_c = v[COL["sumgc"]]
    out["conf_right"] = right_c / hits if hits > 0 else None
    out["conf_wrong"] = (v[COL["sumc"]] - right_c) / (n - hits) if n - hits > 0 else None
    if defined:  # Murphy's decomposition on the equal-width bins (brier_decomposition)
        full = bn > 0
        with np.errstate(invalid="ignore", divide="ignore"):
            c_bar, o_bar, weight = bc / bn, bg / bn, bn / n
        out["brier_reliability"] = float(np.where(full, weight * (c_bar - o_bar) ** 2, 0).sum())
        out["brier_resolution"] = float(np.where(full, weight * (o_bar - base) ** 2, 0).sum())
        out["brier_uncertainty"] = base * (1.0 - base)
        out["brier_binned"] = (
            out["brier_reliability"] - out["brier_resolution"] + out["brier_uncertainty"]
        )
    else:
        for part in ("reliability", "resolution", "uncertainty", "binned"):
            out[f"brier_{part}"] = None
    out["accuracy"] = hits / n if defined else None
    out["n"] = int(n)
    out["n_missing"] = int(v[COL["missing"]])
    out["n_questions"] = int(scored)
    out["n_questions_skipped"] = int(v[COL["q_seen"]] - scored)
    return {k: _none(x) if isinstance(x, float | np.floating) else x for k, x in out.items()}


def _boot_totals(
    matrices: list[NDArray[np.float32]],
    n_resamples: int,
    seed: int,
    draws_file: Path | None = None,
) -> list[NDArray[np.float64]]:
    """Per model (``matrices``: each model's bootstrap sums, ``(tags * WIDTH, questions)``,
    as many questions each), the resampled totals, ``(resamples, tags * WIDTH)``:
    ``analyze``'s draws (the same seed and number of questions) and arithmetic
    (single-precision sums, one matrix product per chunk of resamples). The draws are made
    once for all the models, in chunks of at most 25 M counts (200 MB), and written to
    ``draws_file`` (one byte a count) when given, for a later analysis to update the totals
    with."""
    from threadpoolctl import threadpool_limits

    n_questions = matrices[0].shape[1]
    totals = [np.empty((n_resamples, m.shape[0])) for m in matrices]
    done = 0
    chunk = max(1, min(100, 25_000_000 // max(n_questions, 1)))
    draws = resample_counts(
        n_questions, n_resamples=n_resamples, seed=seed, chunk=chunk, dtype=np.float32
    )
    kept = (
        np.lib.format.open_memmap(draws_file, "w+", np.uint8, (n_resamples, n_questions))
        if draws_file is not None
        else None
    )
    with threadpool_limits(limits=1, user_api="blas"):
        for counts in draws:
            for matrix, total in zip(matrices, totals, strict=True):
                total[done : done + counts.shape[0]] = (matrix @ counts.T).T
            if kept is not None:
                if counts.size and counts.max() > 255:
                    raise AssertionError("a question drawn more than 255 times in a resample")
                kept[done : done + counts.shape[0]] = counts
            done += counts.shape[0]
    if kept is not None:
        kept.flush()
        del kept
    return totals


def _cis(total: NDArray[np.float64], level: float) -> list[dict[str, list[float | None]]]:
    """Per tag, percentile intervals of CalScore, ECE and Brier from resampled totals."""
    per_tag = []
    for t in range(len(TAGS)):
        by_metric = stats_from_sums(total[:, t * WIDTH : (t + 1) * WIDTH], n_bins=N_BINS)
        per_tag.append({
            name: [_none(x) for x in percentile_interval(by_metric[name], level=level)]
            for name in HEADLINE_METRICS
        })  # fmt: skip
    return per_tag


def _stream_sql(inputs: _Inputs, definition: str, part: str = "") -> str:
    """The steps in order of (question, model, step) with h_t; ``part``: a filter on the
    steps (a range of question names)."""
    if inputs.buzzes:
        ratio = "hc.cum_num / hc.total" if definition == "reference" else "hc.cum_num / hc.cum_den"
        guard = "hc.total" if definition == "reference" else "hc.cum_den"
        h_expr = f"CASE WHEN {guard} > 0 THEN {ratio} ELSE 0.0 END"
        join = (
            "ASOF LEFT JOIN human AS hc ON CAST(s.question_id AS VARCHAR) = hc.question_id "
            "AND s.word_index >= hc.word"
        )
    else:
        h_expr, join = "0.0", ""
    category = (
        "LEFT JOIN cats ON CAST(s.category AS VARCHAR) = cats.category" if inputs.has_category
        else ""
    )  # fmt: skip
    cat_code = "coalesce(cats.c, -1)" if inputs.has_category else "-1"
    return f"""
        SELECT CAST(qu.q AS BIGINT) AS q, CAST(mo.m AS BIGINT) AS m,
               CAST(coalesce(s.step, -1) AS BIGINT) AS step,
               CAST(CASE WHEN s.g > 0 THEN 1.0 ELSE 0.0 END AS DOUBLE) AS g,
               coalesce(CAST(s.confidence_logit AS DOUBLE), CAST('NaN' AS DOUBLE)) AS logit,
               coalesce(CAST(s.confidence_verbal AS DOUBLE), CAST('NaN' AS DOUBLE)) AS verbal,
               CAST({h_expr} AS DOUBLE) AS h, CAST({cat_code} AS BIGINT) AS cat
        FROM (
            SELECT CAST(model AS VARCHAR) AS model, question_id, CAST(step AS BIGINT) AS step,
                   CAST(word_index AS BIGINT) AS word_index, CAST(correct AS DOUBLE) AS g,
                   confidence_logit, confidence_verbal,
                   {"category" if inputs.has_category else "NULL AS category"}
            FROM steps_in {f"WHERE {part}" if part else ""}
        ) AS s
        JOIN models AS mo ON s.model = mo.model
        JOIN questions AS qu ON s.question_id = qu.question_id
        {category}
        {join}
        ORDER BY qu.q, mo.m, s.step
    """


def _columns_of(batch: Any) -> dict[str, NDArray[Any]]:
    """A batch's columns as numpy arrays: the SQL gives them without nulls (a missing
    confidence is NaN) in the types used, so that they are read in place, not copied."""
    out = {}
    for name in ("q", "m", "step", "cat"):
        out[name] = np.asarray(batch.column(name).to_numpy(zero_copy_only=False), np.int64)
    for name in ("g", "h", "logit", "verbal"):
        out[name] = np.asarray(batch.column(name).to_numpy(zero_copy_only=False), np.float64)
    return out


#: The metrics that rank the rows by confidence, computed exactly from the counts of rows and
#: right rows per distinct (confidence, correctness) when ``rank=True``.
RANK_METRICS = ("ace", "auroc", "aurc", "acc_at_80")
#: Coverage of ``acc_at_80`` (selective accuracy) and the slack of its comparison.
COVERAGE = 0.8


def _rank_sql(has_category: bool) -> str:
    """Per (model, category, kind, tag), ACE, AUROC, AURC and the accuracy at 80 % coverage,
    from the rows counted per distinct (confidence, correctness): every row of such a block
    is alike, so the equal-mass bins of ACE (the rows by confidence, ties wrong first, split
    as ``np.array_split`` splits them) take a block's rows whole or in part exactly, and the
    ranking metrics need only the counts at or above each confidence. ``cat`` is NULL for
    the rows of all categories."""
    category = "CAST(category AS VARCHAR)" if has_category else "CAST(NULL AS VARCHAR)"
    kinds = " UNION ALL ".join(
        f"SELECT model, cat, '{k}' AS kind, fin, {col} AS c, g FROM r "
        f"WHERE {col} IS NOT NULL AND NOT isnan({col})"
        for k, col in (("logit", "logit"), ("verbal", "verbal"))
    )
    bins = " + ".join(
        f"abs(sum((g - c) * greatest(0, least(pend, {b + 1} * (nn // {N_BINS}) + "
        f"least({b + 1}, nn % {N_BINS})) - greatest(pend - n, {b} * (nn // {N_BINS}) + "
        f"least({b}, nn % {N_BINS})))))"
        for b in range(N_BINS)
    )
    return f"""
        WITH s AS (
            SELECT CAST(model AS VARCHAR) AS model, question_id, CAST(step AS BIGINT) AS step,
                   CASE WHEN CAST(correct AS DOUBLE) > 0 THEN 1.0 ELSE 0.0 END AS g,
                   CAST(confidence_logit AS DOUBLE) AS logit,
                   CAST(confidence_verbal AS DOUBLE) AS verbal, {category} AS category
            FROM steps_all
        ),
        q AS (
            SELECT model, question_id, max(step) AS last,
                   arg_min(category, step) FILTER (WHERE category IS NOT NULL) AS cat
            FROM s GROUP BY model, question_id
        ),
        r AS (
            SELECT s.model, q.cat, s.step = q.last AS fin, s.g, s.logit, s.verbal
            FROM s JOIN q ON s.model = q.model AND s.question_id = q.question_id
        ),
        cg AS (
            SELECT model, cat, kind, fin, c, g, count(*) AS n FROM ({kinds}) AS k
            GROUP BY ALL
        ),
        tagged AS (
            SELECT model, cat, kind, false AS final, c, g, n FROM cg
            UNION ALL SELECT model, cat, kind, true AS final, c, g, n FROM cg WHERE fin
        ),
        blocks AS (  -- per category, and over all of them (cat NULL, all = true)
            SELECT model, cat, false AS everything, kind, final, c, g, sum(n) AS n
            FROM tagged GROUP BY ALL
            UNION ALL
            SELECT model, NULL, true, kind, final, c, g, sum(n) FROM tagged GROUP BY ALL
        ),
        positioned AS (
            SELECT *, sum(n) OVER (PARTITION BY model, cat, everything, kind, final
                                   ORDER BY c, g ROWS UNBOUNDED PRECEDING) AS pend,
                   sum(n) OVER (PARTITION BY model, cat, everything, kind, final) AS nn
            FROM blocks
        ),
        ace AS (
            SELECT model, cat, everything, kind, final, ({bins}) / nn AS ace
            FROM positioned GROUP BY model, cat, everything, kind, final, nn
        ),
        per_c AS (
            SELECT model, cat, everything, kind, final, c, sum(n) AS n, sum(n * g) AS hits
            FROM blocks GROUP BY ALL
        ),
        kept AS (
            SELECT *,
                   sum(n) OVER w AS kept, sum(hits) OVER w AS hits_kept,
                   sum(n) OVER p AS nn, sum(hits) OVER p AS hh
            FROM per_c
            WINDOW p AS (PARTITION BY model, cat, everything, kind, final),
                   w AS (PARTITION BY model, cat, everything, kind, final
                         ORDER BY c DESC ROWS UNBOUNDED PRECEDING)
        ),
        ranked AS (
            SELECT model, cat, everything, kind, final,
                   CASE WHEN hh * (nn - hh) > 0 THEN
                       sum(hits * ((nn - kept) - (hh - hits_kept) + 0.5 * (n - hits)))
                       / (hh * (nn - hh)) END AS auroc,
                   sum(n * (1.0 - hits_kept / kept)) / nn AS aurc,
                   arg_max(hits_kept / kept, c)
                       FILTER (WHERE kept / nn >= {COVERAGE} - 1e-12) AS acc_at_80
            FROM kept GROUP BY model, cat, everything, kind, final, nn, hh
        )
        SELECT ranked.model, ranked.cat, ranked.everything, ranked.kind, ranked.final,
               ace.ace, ranked.auroc, ranked.aurc, ranked.acc_at_80
        FROM ranked JOIN ace ON ranked.model = ace.model AND ranked.kind = ace.kind
            AND ranked.everything = ace.everything AND ranked.final = ace.final
            AND ranked.cat IS NOT DISTINCT FROM ace.cat
    """


@dataclass
class _Bucket:
    """The sums of one range of question names (what the cache keeps of it): per (model,
    category) the sums of :data:`LINEAR` for each tag, and per model its questions (names,
    sorted) and their bootstrap sums."""

    models: list[str]
    categories: list[str]  # category code c + 1; code 0 is uncategorized
    totals: NDArray[np.float64]  # (models, categories + 1, tags, LINEAR)
    questions: dict[str, NDArray[Any]]
    boot: dict[str, NDArray[np.float32]]  # model -> (tags * WIDTH, questions)


@dataclass
class _State:
    """What the metrics and the bootstrap are computed from: the buckets put together."""

    models: list[str]
    categories: list[str]
    totals: NDArray[np.float64]  # (models, categories + 1, tags, LINEAR)
    boot: dict[str, NDArray[np.float32]]  # model -> (tags * WIDTH, its questions, sorted)


def _combine(buckets: list[_Bucket]) -> _State:
    """The buckets (in order of their ranges, so that each model's questions stay sorted)
    summed in that order; their bootstrap sums are taken out of them as they are joined."""
    models = sorted({m for b in buckets for m in b.models})
    categories = sorted({c for b in buckets for c in b.categories})
    totals = np.zeros((len(models), len(categories) + 1, len(TAGS), len(LINEAR)))
    for b in buckets:
        mi = [models.index(m) for m in b.models]
        ci = [0, *(categories.index(c) + 1 for c in b.categories)]
        totals[np.ix_(mi, ci)] += b.totals
    boot = {}
    for model in models:
        parts = [b.boot.pop(model) for b in buckets if model in b.boot]
        if not parts:  # not read (no bootstrap asked for)
            boot[model] = np.zeros((len(TAGS) * WIDTH, 0), np.float32)
        else:
            boot[model] = parts[0] if len(parts) == 1 else np.concatenate(parts, axis=1)
        del parts
    return _State(models, categories, totals, boot)


#: Buckets of questions of the cache: ranges of question names, cut at the first analysis
#: into ranges of as many questions (fewer with many models and categories, so that the
#: sums of every range stay within 64 MB); one more match redoes the ranges of its questions.
BUCKETS = 512
#: Bumped when what the cache holds changes meaning.
CACHE_VERSION = 3
#: The names of the files the cache writes (and may remove).
CACHE_FILE = re.compile(
    r"(bucket-\d+\.[0-9a-f]+\.npz|(bounds|totals-\d+|draws-\d+)\.[0-9a-f]+\.npy"
    r"|manifest\.[0-9a-f]+\.json)"
)


def _stat(files: list[str]) -> dict[str, list[int]]:
    """What tells a file's version: its size and times, and its inode, so that a file
    replaced by one of the same size with its time kept (``cp -p``, ``rsync -t``, a restore)
    is read again (its change time and inode are new; a rename too reads it again)."""
    out = {}
    for f in files:
        st = os.stat(f)
        out[os.path.abspath(f)] = [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]
    return out


def _file_buckets(con: Any, files: list[str], bounds: NDArray[Any]) -> dict[str, list[int]]:
    """The buckets each file's questions fall in."""
    if not files:
        return {}
    rows = con.execute(f"""
        SELECT filename, list(DISTINCT CAST(question_id AS VARCHAR))
        FROM read_parquet({_sql_list(files)}, union_by_name = true, filename = true)
        GROUP BY filename""").fetchall()
    found = {
        os.path.abspath(f): np.unique(np.searchsorted(bounds, np.asarray(q, dtype=str), "right"))
        for f, q in rows
    }
    return {
        os.path.abspath(f): found.get(os.path.abspath(f), np.zeros(0, np.int64)).tolist()
        for f in files
    }


def _literal(value: str) -> str:
    return "'" + str(value).replace("'", "''") + "'"


def _range_filter(column: str, bounds: NDArray[Any], only: NDArray[np.int64]) -> str:
    """SQL true for the names in the buckets ``only`` (runs of adjacent buckets as one
    range; the names compared as text, byte by byte, the order numpy sorts them in)."""
    runs: list[tuple[int, int]] = []
    for b in only.tolist():
        if runs and runs[-1][1] == b - 1:
            runs[-1] = (runs[-1][0], b)
        else:
            runs.append((b, b))

    def lit(value: str) -> str:
        return "'" + value.replace("'", "''") + "'"

    name = f"CAST({column} AS VARCHAR)"
    terms = []
    for lo, hi in runs:
        parts = []
        if lo > 0:
            parts.append(f"{name} >= {lit(str(bounds[lo - 1]))}")
        if hi < bounds.size:
            parts.append(f"{name} < {lit(str(bounds[hi]))}")
        terms.append("(" + (" AND ".join(parts) or "true") + ")")
    return "(" + (" OR ".join(terms) or "false") + ")"


def _bounds(names: NDArray[Any], n_buckets: int) -> NDArray[Any]:
    """Where to cut the sorted ``names`` into ``n_buckets`` ranges of as many names."""
    names = np.unique(names)
    if n_buckets <= 1 or names.size < 2:
        return names[:0]
    cuts = (np.arange(1, n_buckets) * names.size) // n_buckets
    return np.unique(names[cuts[cuts > 0]])


def _run(
    con: Any,
    inputs: _Inputs,
    definition: str,
    bounds: NDArray[Any] | None,
    only: NDArray[np.int64] | None,
    folder: Path,
) -> tuple[NDArray[Any], _Pass]:
    """One pass over the data (of the buckets ``only``, or all), its questions cut at
    ``bounds`` (None: made from the questions, in :data:`BUCKETS` ranges; empty: one
    bucket); the bounds and what the pass leaves (:func:`_buckets` reads it)."""
    steps_from = f"read_parquet({_sql_list(inputs.steps)}, union_by_name = true)"
    where = ""
    if only is not None and bounds is not None:
        where = f"WHERE {_range_filter('question_id', bounds, only)}"
    # a few buckets: read once; all of them: streamed
    made = "TABLE" if where else "VIEW"
    con.execute(f"CREATE OR REPLACE TEMP {made} steps_in AS SELECT * FROM {steps_from} {where}")
    con.execute("""CREATE OR REPLACE TEMP TABLE models AS SELECT model,
        CAST(row_number() OVER (ORDER BY model) - 1 AS BIGINT) AS m
        FROM (SELECT DISTINCT CAST(model AS VARCHAR) AS model FROM steps_in)""")
    con.execute("""CREATE OR REPLACE TEMP TABLE questions AS SELECT question_id,
        CAST(row_number() OVER (ORDER BY question_id) - 1 AS BIGINT) AS q
        FROM (SELECT DISTINCT question_id FROM steps_in)""")
    categories: list[str] = []
    if inputs.has_category:
        con.execute("""CREATE OR REPLACE TEMP TABLE cats AS SELECT category,
            CAST(row_number() OVER (ORDER BY category) - 1 AS BIGINT) AS c
            FROM (SELECT DISTINCT CAST(category AS VARCHAR) AS category FROM steps_in
                  WHERE category IS NOT NULL)""")
        categories = [r[0] for r in con.execute("SELECT category FROM cats ORDER BY c").fetchall()]
    models = [r[0] for r in con.execute("SELECT model FROM models ORDER BY m").fetchall()]
    ((names,),) = con.execute(
        "SELECT list(CAST(question_id AS VARCHAR) ORDER BY q) FROM questions"
    ).fetchall()
    names = np.asarray(names or [], dtype=str)
    if bounds is None:  # as many ranges as keep the sums of every range within 64 MB
        cell = len(models) * (len(categories) + 1) * len(TAGS) * len(LINEAR) * 8
        bounds = _bounds(names, min(BUCKETS, max(16, 64_000_000 // max(cell, 1))))
    bucket_of = np.searchsorted(bounds, names, "right").astype(np.int64)
    n_buckets = bounds.size + 1
    if inputs.buzzes:
        extra = f"AND {_range_filter('question_id', bounds, only)}" if only is not None else ""
        con.execute(f"CREATE OR REPLACE TEMP TABLE human AS {_h_sql(inputs, definition, extra)}")
    acc = _Accumulator(len(models), len(categories), n_buckets, folder, True)
    acc.bucket_of = bucket_of
    # the sort in parts of at most SORT_ROWS steps (ranges of question names; DuckDB skips
    # the row groups of sorted files outside them): each part is sorted in memory, not
    # spilled to disk, as one sort of every step would be
    ((n_rows,),) = con.execute("SELECT count(*) FROM steps_in").fetchall()
    n_parts = max(1, min(names.size, -(-int(n_rows) // SORT_ROWS)))
    cuts = names[(np.arange(1, n_parts) * names.size) // n_parts] if n_parts > 1 else names[:0]
    edges = [None, *np.unique(cuts).tolist(), None]
    for lo, hi in itertools.pairwise(edges):
        name = "CAST(question_id AS VARCHAR)"
        part = " AND ".join(
            ([f"{name} >= {_literal(lo)}"] if lo is not None else [])
            + ([f"{name} < {_literal(hi)}"] if hi is not None else [])
        )
        rel = con.sql(_stream_sql(inputs, definition, part))
        # to_arrow_reader from DuckDB 1.4 on (fetch_arrow_reader before, deprecated since)
        reader = getattr(rel, "to_arrow_reader", rel.fetch_arrow_reader)(BATCH_ROWS)
        pending: dict[str, NDArray[Any]] | None = None
        for batch in reader:
            cols = _columns_of(batch)
            if pending is not None:
                cols = {k: np.concatenate([pending[k], v]) for k, v in cols.items()}
            if not cols["q"].size:
                continue
            cut = int(np.searchsorted(cols["q"], cols["q"][-1], "left"))
            acc.add({k: v[:cut] for k, v in cols.items()})
            pending = {k: v[cut:] for k, v in cols.items()}
        if pending is not None:
            acc.add(pending)
    if acc.duplicate is not None:
        m, q, step = acc.duplicate
        raise LargeAnalysisError(
            f"duplicate step: model={models[m]!r} question={str(names[q])!r} step={step!r}"
        )
    return bounds, _Pass(acc, models, categories, names, bucket_of)


@dataclass
class _Pass:
    """What one pass leaves: its sums, and its bootstrap sums in files of blocks."""

    acc: _Accumulator
    models: list[str]
    categories: list[str]
    names: NDArray[Any]
    bucket_of: NDArray[np.int64]


def _buckets(done: _Pass) -> dict[int, _Bucket]:
    """A pass's buckets (read after DuckDB is closed, so that its memory and the bootstrap
    sums are not held at once)."""
    acc, models, categories = done.acc, done.models, done.categories
    names, bucket_of = done.names, done.bucket_of
    n_buckets = acc.B
    totals = acc.sums.reshape(n_buckets, acc.M, acc.C, len(TAGS), len(LINEAR))
    per_model = acc.model_sums()
    out: dict[int, _Bucket] = {}
    for i, model in enumerate(models):
        codes, sums = per_model.pop(i)
        order = np.lexsort((names[codes], bucket_of[codes]))  # by bucket, then name
        codes, sums = codes[order], np.ascontiguousarray(sums[:, order])
        starts = np.searchsorted(bucket_of[codes], np.arange(n_buckets + 1))
        for b in np.flatnonzero(np.diff(starts)).tolist():
            if b not in out:
                out[b] = _Bucket(models, categories, totals[b], {}, {})
            lo, hi = starts[b], starts[b + 1]
            out[b].questions[model] = names[codes[lo:hi]]
            out[b].boot[model] = sums[:, lo:hi]
    return out


def _save(
    folder: Path, buckets: dict[int, _Bucket], kept: dict[str, Any], manifest: dict[str, Any]
) -> None:
    """Into ``folder``: each bucket of ``buckets`` in a file of its own, then the manifest
    naming them and the files ``kept`` of the previous one (last, so that a cache cut short
    by a crash keeps the previous manifest, whose files are still there)."""
    folder.mkdir(parents=True, exist_ok=True)
    stamp = manifest["stamp"]
    listing = dict(kept)
    for b, bucket in buckets.items():
        name = f"bucket-{b:05d}.{stamp}.npz"
        arrays = {"totals": bucket.totals}
        for i, model in enumerate(bucket.models):
            if model in bucket.questions:
                arrays[f"questions-{i}"] = bucket.questions[model]
                arrays[f"boot-{i}"] = bucket.boot[model]
        np.savez(folder / name, **arrays)
        listing[str(b)] = {
            "file": name, "models": bucket.models, "categories": bucket.categories,
            "counts": {m: int(q.size) for m, q in bucket.questions.items()},
        }  # fmt: skip
    _write_manifest(folder, {**manifest, "buckets": listing})


def _write_manifest(folder: Path, manifest: dict[str, Any]) -> None:
    new = folder / f"manifest.{time.time_ns():x}.json"
    new.write_text(json.dumps(manifest))
    os.replace(new, folder / "manifest.json")


def _tidy(folder: Path, manifest: dict[str, Any]) -> None:
    """Remove the cache's files the manifest does not name."""
    named = {v["file"] for v in manifest["buckets"].values()} | {manifest["bounds_file"]}
    boot = manifest.get("bootstrap") or {}
    named |= set(boot.get("totals", {}).values()) | set(boot.get("draws", {}).values())
    for old in folder.iterdir():  # only the cache's own files: the folder may hold others
        if CACHE_FILE.fullmatch(old.name) and old.name not in named:
            old.unlink()


def _load_bucket(folder: Path, entry: dict[str, Any], boot: bool) -> _Bucket:
    with np.load(folder / entry["file"], allow_pickle=False) as data:
        models = entry["models"]
        have = [i for i in range(len(models)) if f"questions-{i}" in data.files]
        return _Bucket(
            models, entry["categories"], data["totals"],
            {models[i]: data[f"questions-{i}"] for i in have} if boot else {},
            {models[i]: data[f"boot-{i}"] for i in have} if boot else {},
        )  # fmt: skip


def analyze_large(
    steps: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    buzzes: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None = None,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    h_definition: str = "reference",
    memory_limit: str = "3GB",
    threads: int | None = None,
    temp_directory: str | os.PathLike[str] | None = None,
    cache: str | os.PathLike[str] | None = None,
    rank: bool = False,
) -> dict[str, Any]:
    """Every metric of :data:`LARGE_METRICS` per model and confidence kind (over all steps,
    ``final`` steps, and ``by_category``), with bootstrap intervals of CalScore, ECE and
    Brier (``n_resamples=0``: none), from Parquet files of steps and of buzzes.

    DuckDB holds at most ``memory_limit`` and spills past it to ``temp_directory`` (default:
    a temporary folder, removed after); ``threads`` defaults to the machine's cores.

    ``cache``: a folder (made if new) where the per-question sums are kept, by buckets of
    questions, with the files they came from (path, size, modification time). The next
    analysis with the same cache reads again only the buckets of questions that a new,
    changed or removed file holds (or held), and gives the numbers a fresh analysis gives.

    ``rank``: also ACE, AUROC, AURC and the accuracy at 80 % coverage (:data:`RANK_METRICS`),
    exactly, from the rows counted per distinct (confidence, correctness): one more pass
    over every step, sorted by confidence in DuckDB, that the cache does not shorten.
    """
    import duckdb

    check_h_definition(h_definition)
    step_files = parquet_files(steps)
    buzz_files = parquet_files(buzzes) if buzzes is not None else []
    cache_dir = Path(cache) if cache is not None else None
    timings: dict[str, float] = {}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="grace-large-", dir=temp_directory) as tmp:
        con = duckdb.connect(str(Path(tmp) / "analysis.duckdb"))
        try:
            con.execute(f"SET memory_limit = '{memory_limit}'")
            con.execute(f"SET temp_directory = '{Path(tmp) / 'spill'}'")
            if threads:
                con.execute(f"SET threads = {int(threads)}")
            step_cols = _columns(con, step_files)
            needed = ("model", "question_id", "step", "word_index", "correct", *KINDS.values())
            _require(step_cols, needed, "the steps", step_files)
            buzz_cols = _columns(con, buzz_files) if buzz_files else {}
            if buzz_files:
                needed = ("question_id", "team", "word_index", "correct")
                _require(buzz_cols, needed, "the buzzes", buzz_files)
            inputs = _Inputs(step_files, buzz_files, "category" in step_cols, buzz_cols)
            key = {
                "version": CACHE_VERSION,
                "engine": duckdb.__version__,
                "h_definition": h_definition,
                "n_bins": N_BINS,
                "columns": {"steps": step_cols, "buzzes": buzz_cols},
            }
            files = {"steps": _stat(step_files), "buzzes": _stat(buzz_files)}
            manifest = _manifest(cache_dir)
            redone: NDArray[np.int64] | None = None
            kept: dict[str, Any] = {}
            done: _Pass | None = None
            if manifest is not None and manifest.get("key") == key:
                bounds = np.load(cache_dir / manifest["bounds_file"], allow_pickle=False)
                changed: set[int] = set()
                fresh: dict[str, list[str]] = {}
                for what in ("steps", "buzzes"):
                    before = manifest["files"][what]
                    # each file: its _stat, then the buckets it held
                    for path, (*stat, held) in before.items():
                        if files[what].get(path) != stat:
                            changed.update(held)  # changed or removed: what it held
                    fresh[what] = [
                        p for p, stat in files[what].items()
                        if before.get(p, [None])[:-1] != stat
                    ]  # fmt: skip
                held = {}
                for what in ("steps", "buzzes"):
                    held[what] = {p: v[-1] for p, v in manifest["files"][what].items()}
                    held[what].update(_file_buckets(con, fresh[what], bounds))
                    for path in fresh[what]:
                        changed.update(held[what][path])
                redone = np.array(sorted(changed), dtype=np.int64)
                if redone.size:
                    _, done = _run(con, inputs, h_definition, bounds, redone, Path(tmp))
                kept = {b: v for b, v in manifest["buckets"].items() if int(b) not in changed}
            else:
                bounds, done = _run(
                    con, inputs, h_definition, None if cache_dir else np.zeros(0, str), None,
                    Path(tmp),
                )  # fmt: skip
                held = (
                    {w: _file_buckets(con, f, bounds) for w, f in
                     (("steps", step_files), ("buzzes", buzz_files))}
                    if cache_dir is not None else {}
                )  # fmt: skip
            timings["aggregation"] = time.perf_counter() - started
            ranked: dict[tuple[str, str | None, bool, str, bool], dict[str, Any]] = {}
            if rank:
                started = time.perf_counter()
                every_step = f"read_parquet({_sql_list(step_files)}, union_by_name = true)"
                con.execute(f"CREATE OR REPLACE TEMP VIEW steps_all AS SELECT * FROM {every_step}")
                for model, cat, everything, kind, final, *values in con.execute(
                    _rank_sql(inputs.has_category)
                ).fetchall():
                    ranked[(model, cat, everything, kind, final)] = {
                        name: _none(v) if v is not None else None
                        for name, v in zip(RANK_METRICS, values, strict=True)
                    }
                timings["rank"] = time.perf_counter() - started
        finally:
            con.close()
        started = time.perf_counter()
        parts = _buckets(done) if done is not None else {}
        updated: dict[str, NDArray[np.float64]] | None = None
        # the kept totals are moved even when no interval is asked for, to stay of use
        entry = (manifest or {}).get("bootstrap") or {}
        if n_resamples > 0:
            keep_seed, keep_n = seed, n_resamples
        else:
            keep_seed, keep_n = entry.get("seed", seed), entry.get("n_resamples", 0)
        if redone is not None and keep_n > 0:
            was = {
                b: _load_bucket(cache_dir, manifest["buckets"][str(b)], True)
                for b in redone.tolist()
                if str(b) in manifest["buckets"]
            }
            updated = _updated_totals(cache_dir, manifest, was, parts, redone, keep_n, keep_seed)
            del was
        buckets = dict(parts)
        if redone is not None:
            for b, v in kept.items():
                buckets[int(b)] = _load_bucket(cache_dir, v, n_resamples > 0 and updated is None)
        timings["aggregation"] += time.perf_counter() - started
        stamp = f"{time.time_ns():x}"
        if cache_dir is not None:
            started = time.perf_counter()
            listing = {
                what: {p: [*stat, held[what].get(p, [])] for p, stat in files[what].items()}
                for what in ("steps", "buzzes")
            }
            bounds_file = (manifest or {}).get("bounds_file") if redone is not None else None
            if bounds_file is None:
                bounds_file = f"bounds.{stamp}.npy"
                cache_dir.mkdir(parents=True, exist_ok=True)
                np.save(cache_dir / bounds_file, bounds, allow_pickle=False)
            saved = {"key": key, "files": listing, "bounds_file": bounds_file, "stamp": stamp}
            _save(cache_dir, parts, kept, saved)  # no "bootstrap" yet: its totals are stale
            saved["buckets"] = json.loads((cache_dir / "manifest.json").read_text())["buckets"]
            timings["cache"] = time.perf_counter() - started
    started = time.perf_counter()
    state = _combine([buckets[b] for b in sorted(buckets)])
    del buckets, parts
    if updated is not None:
        totals, draws = updated, manifest["bootstrap"]["draws"]
    else:
        totals, draws = _result(state, n_resamples, seed, cache_dir, stamp)
    cis = {m: _cis(total, level) for m, total in totals.items()} if n_resamples > 0 else {}
    if cache_dir is not None:
        if totals:
            names = {}
            for i, model in enumerate(state.models):
                if model in totals:
                    names[model] = f"totals-{i}.{stamp}.npy"
                    np.save(cache_dir / names[model], totals[model], allow_pickle=False)
            saved["bootstrap"] = {"seed": keep_seed, "n_resamples": keep_n,
                                  "totals": names, "draws": draws}  # fmt: skip
            _write_manifest(cache_dir, saved)
        _tidy(cache_dir, saved)
    timings["bootstrap"] = time.perf_counter() - started
    result = cis
    n_buckets = bounds.size + 1
    return {
        "engine": f"duckdb {duckdb.__version__}",
        "settings": {
            "n_bins": N_BINS,
            "n_resamples": n_resamples,
            "seed": seed,
            "level": level,
            "h_definition": h_definition,
            "memory_limit": memory_limit,
        },
        "source": {"steps": step_files, "buzzes": buzz_files},
        "cache": None
        if cache_dir is None
        else {
            "folder": str(cache_dir),
            "buckets": n_buckets,
            "buckets_read": n_buckets if redone is None else int(redone.size),
        },
        "timings": {k: round(v, 3) for k, v in timings.items()},
        "metrics": [*LARGE_METRICS, *(RANK_METRICS if rank else ())],
        "not_computed": [m for m in NOT_COMPUTED if not (rank and m in RANK_METRICS)],
        "models": _result_models(state, result, ranked),
        "bootstrap": None if n_resamples <= 0 else "updated" if updated is not None else "made",
    }


def _manifest(folder: Path | None) -> dict[str, Any] | None:
    """The cache's manifest; None when there is none or it cannot be read (the cache is
    then made again)."""
    if folder is None:
        return None
    try:
        manifest = json.loads((folder / "manifest.json").read_text())
        if not (folder / manifest["bounds_file"]).is_file() or not all(
            (folder / v["file"]).is_file() for v in manifest["buckets"].values()
        ):
            return None
        boot = manifest.get("bootstrap")
        if boot and not all(
            (folder / f).is_file() for f in [*boot["totals"].values(), *boot["draws"].values()]
        ):
            del manifest["bootstrap"]  # the intervals are made again
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return manifest if isinstance(manifest, dict) else None


def _result(
    state: _State, n_resamples: int, seed: int, folder: Path | None, stamp: str
) -> tuple[dict[str, NDArray[np.float64]], dict[str, str]]:
    """Per model, the resampled totals (none without resamples or questions), and the
    draws' files written in ``folder`` (by number of questions). Models with as many
    questions share the draws (the draws depend only on that number and the seed)."""
    out: dict[str, NDArray[np.float64]] = {}
    draws: dict[str, str] = {}
    if n_resamples <= 0:
        return out, draws
    by_size: dict[int, list[str]] = {}
    for model in state.models:
        if state.boot[model].shape[1]:
            by_size.setdefault(state.boot[model].shape[1], []).append(model)
    for size, group in by_size.items():
        path = None
        if folder is not None:
            draws[str(size)] = f"draws-{size}.{stamp}.npy"
            path = folder / draws[str(size)]
        totals = _boot_totals([state.boot[m] for m in group], n_resamples, seed, path)
        out.update(zip(group, totals, strict=True))
    return out, draws


def _updated_totals(
    folder: Path,
    manifest: dict[str, Any],
    old: dict[int, _Bucket],
    new: dict[int, _Bucket],
    redone: NDArray[np.int64],
    n_resamples: int,
    seed: int,
) -> dict[str, NDArray[np.float64]] | None:
    """The resampled totals of the cache moved by the change of the buckets ``redone``
    (``old``: as they were, ``new``: as they are), when every model kept the same questions:
    then the draws are those kept, and a total moves by the change of its questions' sums
    times the counts of those questions. None when the totals must be made again."""
    boot = manifest.get("bootstrap")
    if not boot or boot.get("seed") != seed or boot.get("n_resamples") != n_resamples:
        return None
    models = sorted(boot["totals"])
    counts = {b: v.get("counts", {}) for b, v in manifest["buckets"].items()}
    for b in redone.tolist():
        was, now = old.get(b), new.get(b)
        for model in models:
            q_was = was.questions.get(model) if was is not None else None
            q_now = now.questions.get(model) if now is not None else None
            if (q_was is None) != (q_now is None):
                return None
            if q_was is not None and not np.array_equal(q_was, q_now):
                return None
        if now is not None and set(now.boot) - set(models):
            return None
    out = {}
    for model in models:
        total = np.load(folder / boot["totals"][model], allow_pickle=False)
        n_questions = sum(c.get(model, 0) for c in counts.values())
        draws = np.load(folder / boot["draws"][str(n_questions)], mmap_mode="r")
        offset = 0
        for b in sorted(int(k) for k in counts):
            k = counts[str(b)].get(model, 0)
            if b in redone and k and b in new:
                delta = new[b].boot[model] - old[b].boot[model]
                chunk = np.asarray(draws[:, offset : offset + k], dtype=np.float32)
                total += (delta @ chunk.T).T
            offset += k
        out[model] = total
    return out


def _result_models(
    state: _State,
    cis: dict[str, list[dict[str, Any]]],
    ranked: dict[tuple[str, str | None, bool, str, bool], dict[str, Any]],
) -> dict[str, Any]:
    names = [UNCATEGORIZED, *state.categories]
    none = dict.fromkeys(RANK_METRICS)

    def rank_of(model: str, cat: str | None, everything: bool, kind: str, final: bool) -> Any:
        if not ranked:
            return {}
        return ranked.get((model, cat, everything, kind, final), none)

    totals = state.totals  # (models, categories + 1, tags, LINEAR)
    result: dict[str, Any] = {}
    for i, model in enumerate(state.models):
        cells = totals[i]
        result[model] = {}
        for t, (kind, fin) in enumerate(TAGS):
            summary = _metrics(cells[:, t].sum(axis=0))
            summary.update(rank_of(model, None, True, kind, fin))
            found = cis.get(model) or []
            summary["ci"] = found[t] if found else {m: [None, None] for m in HEADLINE_METRICS}
            if fin:
                result[model][kind]["final"] = summary
                continue
            seen = cells[:, t, COL["q_seen"]] > 0
            summary["by_category"] = {
                names[c]: {
                    **_metrics(cells[c, t]),
                    **rank_of(model, state.categories[c - 1] if c else None, False, kind, fin),
                }
                for c in sorted(np.flatnonzero(seen), key=lambda c: names[c])
            }
            result[model][kind] = summary
    return result
