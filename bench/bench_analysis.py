"""Benchmark: the whole analysis on 1,000,000 model steps and 100,000 buzzes.

Prints wall time and peak memory of ``grace_arena.analysis.summary.analyze`` (every metric for
both confidences, over all steps, final steps and per category, with 1,000 bootstrap
resamples, recalibration with 5-fold cross-validation, selective prediction, smooth ECE with
its bootstrap band, the Brier decomposition, plus the human-vs-model curves, expected wins,
SH and player ranks), and, for scale, the time of scikit-learn's ``brier_score_loss`` +
``calibration_curve`` on the same rows in the same run (the two take turns; medians).

    .venv/bin/python bench/bench_analysis.py [--steps 1000000] [--buzzes 100000]
        [--models 5] [--resamples 1000] [--seed 0] [--repeat 3] [--no-tracemalloc]
        [--json FILE]

``--json`` writes the result of the last timed run without what differs between runs (its
time), keys sorted: two versions of the analysis that compute the same numbers write the
same bytes (with ``--resamples 0`` the bootstrap, computed in single precision, is left out).

Not a timed test: it prints numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import time
import tracemalloc

import numpy as np
import pandas as pd

from grace_arena.analysis.summary import analyze, comparable

CATEGORIES = np.array(
    ["Literature", "History", "Science", "Fine Arts", "Religion", "Mythology", "Philosophy",
     "Social Science", "Geography", "Current Events", "Pop Culture", "Other Academic"],
    dtype=object,
)  # fmt: skip


def synthetic(
    n_steps: int, n_buzzes: int, n_models: int, seed: int
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Questions of 8 steps each (clue prefixes of a 120-word tossup), shared by the models;
    confidences rise with the step, correctness follows them; 10% of verbal ones missing.
    Buzzes: human and model teams over matches of 20 questions each. DataFrames in the
    dtypes ``grace_arena.analysis.load`` gives (names as categoricals)."""
    rng = np.random.default_rng(seed)
    steps_per_q = 8
    n_q = n_steps // (n_models * steps_per_q)
    n_words = 120
    model = np.repeat(np.arange(n_models), n_q * steps_per_q)
    q = np.tile(np.repeat(np.arange(n_q), steps_per_q), n_models)
    step = np.tile(np.arange(steps_per_q), n_models * n_q)
    word_index = (step + 1) * (n_words // steps_per_q) - 1
    base = (step + 1) / steps_per_q
    conf = np.clip(base * rng.uniform(0.6, 1.2, q.size), 0, 1)
    correct = (rng.random(q.size) < base * 0.9).astype(float)
    verbal = np.round(np.clip(conf + rng.normal(0, 0.1, q.size), 0, 1), 1)
    verbal[rng.random(q.size) < 0.1] = np.nan
    qnames = np.char.add("p/q", np.arange(n_q).astype(str))
    steps = pd.DataFrame(
        {
            "model": pd.Categorical.from_codes(model, [f"model-{i}" for i in range(n_models)]),
            "question_id": pd.Categorical(qnames[q]),
            "step": step.astype(np.int64),
            "word_index": word_index.astype(np.int64),
            "correct": correct,
            "confidence_logit": conf,
            "confidence_verbal": verbal,
            "category": pd.Categorical(CATEGORIES[q % CATEGORIES.size]),
            "n_words": pd.array(np.full(q.size, n_words), dtype="Int64"),
            "would_buzz": (conf > 0.8).astype(float),
        }
    )
    bq = rng.integers(0, n_q, n_buzzes)
    team_no = rng.integers(0, 40, n_buzzes)
    human = team_no < 32
    team = np.char.add(np.where(human, "H", "M"), team_no.astype(str))
    buzzes = pd.DataFrame(
        {
            "match": pd.Categorical((bq // 20).astype(str)),
            "question_id": pd.Categorical(qnames[bq]),
            "team": pd.Categorical(team),
            "team_kind": pd.Categorical(
                np.where(human, "human", "model"), categories=["human", "model"]
            ),
            "player": pd.Categorical(team),
            "word_index": rng.integers(0, n_words, n_buzzes),
            "correct": (rng.random(n_buzzes) < 0.6).astype(float),
            "n_words": pd.array(np.full(n_buzzes, n_words), dtype="Int64"),
            "clue_index": pd.array(rng.integers(0, steps_per_q, n_buzzes), dtype="Int64"),
            "n_clues": pd.array(np.full(n_buzzes, steps_per_q), dtype="Int64"),
        }
    )
    return steps, buzzes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1_000_000)
    parser.add_argument("--buzzes", type=int, default=100_000)
    parser.add_argument("--models", type=int, default=5)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3, help="timed runs (median reported)")
    parser.add_argument("--no-tracemalloc", action="store_true", help="skip the traced run")
    parser.add_argument("--json", metavar="FILE", help="write the last run's result here")
    args = parser.parse_args()

    t0 = time.perf_counter()
    steps, buzzes = synthetic(args.steps, args.buzzes, args.models, args.seed)
    t_gen = time.perf_counter() - t0
    n_q = steps.question_id.nunique()
    print(f"machine: {platform.node()} {platform.machine()} {os.cpu_count()} cores, "
          f"Python {platform.python_version()}, numpy {np.__version__}")  # fmt: skip
    print(f"data: {len(steps):,} steps ({args.models} models x {n_q:,} questions), "
          f"{len(buzzes):,} buzzes "
          f"(generated in {t_gen:.1f} s)")  # fmt: skip

    # import everything the analysis uses (scikit-learn, scipy) before timing it
    t0 = time.perf_counter()
    analyze(*synthetic(4000, 400, 2, args.seed), n_resamples=10, seed=args.seed)
    print(f"warm-up (imports) on small data: {time.perf_counter() - t0:.2f} s")

    from sklearn.calibration import calibration_curve
    from sklearn.metrics import brier_score_loss

    conf, y = steps.confidence_logit.to_numpy(), steps.correct.to_numpy()

    def sklearn_once() -> tuple[float, float]:
        t0 = time.perf_counter()
        brier = brier_score_loss(y, conf)
        calibration_curve(y, conf, n_bins=10)
        return time.perf_counter() - t0, brier

    # analyze and scikit-learn take turns, so that both meet the same load on a shared
    # machine; medians of --repeat runs, and the ratio of the medians
    walls, cpus, sk_times = [], [], []
    for _ in range(args.repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        result = analyze(steps, buzzes, n_resamples=args.resamples, seed=args.seed)
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
        sk_times += [sklearn_once()[0] for _ in range(3)]
    wall, cpu, t_sk = statistics.median(walls), statistics.median(cpus), statistics.median(sk_times)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    load = os.getloadavg()[0]
    print(f"analyze: {wall:.2f} s wall, {cpu:.2f} s CPU (all threads), process peak RSS "
          f"{rss:,.0f} MiB ({args.resamples} bootstrap resamples; median of {args.repeat} "
          f"runs: {', '.join(f'{w:.2f}' for w in walls)} s wall, "
          f"{', '.join(f'{c:.2f}' for c in cpus)} s CPU; load average {load:.1f})")  # fmt: skip
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(comparable(result), out, sort_keys=True)
        print(f"wrote {args.json}")
    brier = sklearn_once()[1]
    print(f"scikit-learn brier_score_loss + calibration_curve on the same {conf.size:,} rows "
          f"(one confidence, no grouping): {t_sk:.2f} s (median of {len(sk_times)}: "
          f"{', '.join(f'{t:.3f}' for t in sk_times)})")  # fmt: skip
    print(f"ratio: analyze / scikit-learn = {wall / t_sk:.1f}x (medians, same run)")

    if not args.no_tracemalloc:
        tracemalloc.start()
        t0 = time.perf_counter()
        analyze(steps, buzzes, n_resamples=args.resamples, seed=args.seed)
        traced_wall = time.perf_counter() - t0
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(f"analyze under tracemalloc: {traced_wall:.2f} s, peak traced memory "
              f"{peak / 2**20:,.0f} MiB")  # fmt: skip

    first = next(iter(result["models"]))
    print(f"check: {first} logit Brier {result['models'][first]['logit']['brier']:.4f}; "
          f"scikit-learn Brier over all models {brier:.4f}")  # fmt: skip


if __name__ == "__main__":
    main()
