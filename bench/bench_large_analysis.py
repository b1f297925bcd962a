"""Benchmark: the analysis past memory (``grace-arena analyze-large``) on generated Parquet
data of GRACE's shape, and its agreement with the in-memory analysis.

    .venv/bin/python bench/bench_large_analysis.py --steps 100000000 --buzzes 10000000 \
        [--models 5] [--resamples 1000] [--memory-limit 4GB] [--threads 2] [--dir DIR]
        [--keep] [--reuse] [--compare] [--rank] [--cache] [--appended]

Writes the data in chunks (never whole in memory: questions of 8 clue steps shared by the
models, confidences rising with the step, 10 % of verbal confidences missing, human and
model buzzes over matches of 20 questions; the steps sorted by question, as a record's
export writes them), then runs the analysis once and prints its wall time (the writing is
timed apart), the CPU time of all its threads (on a shared machine, wall time follows the load),
where it went, the load average and the peak resident memory of the process
(``ru_maxrss``: DuckDB, numpy and the bootstrap together). ``--compare`` also runs
``analyze`` in memory on the same data (only for sizes that fit, e.g. 1 M steps) and prints
the largest difference of any metric both compute. Then, with ``--appended``, the first
analysis keeps a cache (``--cache``), one more match's buzzes (20 questions) are written as
a new file and the analysis is run again from the cache, without and with the bootstrap
(the time of a re-analysis after one more match); the match files are removed after.

Not a timed test: it prints numbers.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

CATEGORIES = np.array(
    ["Literature", "History", "Science", "Fine Arts", "Religion", "Mythology", "Philosophy",
     "Social Science", "Geography", "Current Events", "Pop Culture", "Other Academic"],
    dtype=object,
)  # fmt: skip
STEPS_PER_Q = 8
N_WORDS = 120
#: Questions written per chunk (× models × 8 steps rows).
CHUNK_Q = 250_000


def _qname(q: np.ndarray) -> np.ndarray:
    return np.char.add("p/q", np.char.zfill(q.astype(str), 9))


def write_steps(folder: Path, n_steps: int, n_models: int, seed: int) -> int:
    """Steps in files of ``CHUNK_Q`` questions; returns the number of questions."""
    folder.mkdir(parents=True, exist_ok=True)
    n_q = n_steps // (n_models * STEPS_PER_Q)
    rng = np.random.default_rng(seed)
    for part, start in enumerate(range(0, n_q, CHUNK_Q)):
        qs = np.arange(start, min(start + CHUNK_Q, n_q))
        # sorted by question, then model, then step
        q = np.repeat(qs, n_models * STEPS_PER_Q)
        model = np.tile(np.repeat(np.arange(n_models), STEPS_PER_Q), qs.size)
        step = np.tile(np.arange(STEPS_PER_Q), qs.size * n_models)
        base = (step + 1) / STEPS_PER_Q
        conf = np.clip(base * rng.uniform(0.6, 1.2, q.size), 0, 1)
        correct = (rng.random(q.size) < base * 0.9).astype(float)
        verbal = np.round(np.clip(conf + rng.normal(0, 0.1, q.size), 0, 1), 1)
        verbal[rng.random(q.size) < 0.1] = np.nan
        categories = CATEGORIES[q % CATEGORIES.size].astype(str)
        table = pa.table(
            {
                "model": pa.array(np.char.add("model-", model.astype(str))).dictionary_encode(),
                "question_id": pa.array(_qname(q)),
                "step": pa.array(step.astype(np.int64)),
                "word_index": pa.array(
                    ((step + 1) * (N_WORDS // STEPS_PER_Q) - 1).astype(np.int64)
                ),
                "correct": pa.array(correct),
                "confidence_logit": pa.array(conf),
                "confidence_verbal": pa.array(verbal, from_pandas=True),
                "category": pa.array(categories).dictionary_encode(),
            }
        )
        pq.write_table(table, folder / f"steps-{part:05d}.parquet", row_group_size=1_000_000)
    return n_q


def write_buzzes(folder: Path, n_buzzes: int, n_q: int, seed: int, name: str = "buzzes") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed + 1)
    chunk = 2_000_000
    for part, start in enumerate(range(0, n_buzzes, chunk)):
        k = min(chunk, n_buzzes - start)
        bq = np.sort(rng.integers(0, n_q, k))
        team_no = rng.integers(0, 40, k)
        human = team_no < 32
        table = pa.table(
            {
                "match": pa.array((bq // 20).astype(str)),
                "question_id": pa.array(_qname(bq)),
                "team": pa.array(np.char.add(np.where(human, "H", "M"), team_no.astype(str))),
                "team_kind": pa.array(np.where(human, "human", "model")),
                "word_index": pa.array(rng.integers(0, N_WORDS, k)),
                "correct": pa.array((rng.random(k) < 0.6).astype(float)),
            }
        )
        pq.write_table(table, folder / f"{name}-{part:05d}.parquet")


def write_match(folder: Path, n_q: int, seed: int, name: str = "zz-one-more-match") -> int:
    """One more match's buzzes as a new file: 20 consecutive questions, each buzzed by one to
    four of the match's eight teams; returns the number of buzzes."""
    rng = np.random.default_rng(seed + 2)
    first = int(rng.integers(0, max(n_q - 20, 1)))
    per_q = rng.integers(1, 5, 20)
    bq = np.repeat(np.arange(first, first + 20) % max(n_q, 1), per_q)
    team_no = np.concatenate([rng.choice(8, k, replace=False) for k in per_q])
    k = bq.size
    table = pa.table(
        {
            "match": pa.array(np.full(k, f"one-more-{seed}")),
            "question_id": pa.array(_qname(bq)),
            "team": pa.array(np.char.add("H", (1000 + team_no).astype(str))),
            "team_kind": pa.array(np.full(k, "human")),
            "word_index": pa.array(rng.integers(0, N_WORDS, k)),
            "correct": pa.array((rng.random(k) < 0.6).astype(float)),
        }
    )
    pq.write_table(table, folder / f"{name}.parquet")
    return k


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1_000_000)
    parser.add_argument("--buzzes", type=int, default=100_000)
    parser.add_argument("--models", type=int, default=5)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--memory-limit", default="4GB")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--dir", help="where to write the data (default: a temporary folder)")
    parser.add_argument("--keep", action="store_true", help="keep the data afterwards")
    parser.add_argument("--reuse", action="store_true", help="use data already in --dir")
    parser.add_argument("--appended", action="store_true",
                        help="then add one match's buzzes and analyse again (cached)")  # fmt: skip
    parser.add_argument("--cache", action="store_true",
                        help="analyse with a cache in DIR/cache, made anew")  # fmt: skip
    parser.add_argument("--compare", action="store_true", help="also run analyze in memory")
    parser.add_argument("--rank", action="store_true", help="also ACE, AUROC, AURC, acc_at_80")
    args = parser.parse_args()

    from grace_arena.analysis.large import analyze_large

    root = Path(args.dir or tempfile.mkdtemp(prefix="grace-large-bench-"))
    steps_dir, buzz_dir = root / "steps", root / "buzzes"
    print(f"machine: {platform.node()} {platform.machine()} {os.cpu_count()} cores, "
          f"Python {platform.python_version()}; data in {root}")  # fmt: skip
    t0 = time.perf_counter()
    if not args.reuse:
        n_q = write_steps(steps_dir, args.steps, args.models, args.seed)
        write_buzzes(buzz_dir, args.buzzes, n_q, args.seed)
    else:
        n_q = args.steps // (args.models * STEPS_PER_Q)
    size = sum(p.stat().st_size for p in root.rglob("*.parquet"))
    print(f"data: {args.steps:,} steps ({args.models} models x {n_q:,} questions), "
          f"{args.buzzes:,} buzzes; {size / 1e9:.2f} GB of Parquet "
          f"(written in {time.perf_counter() - t0:.1f} s)")  # fmt: skip
    cache = root / "cache" if args.cache or args.appended else None
    if cache is not None:
        shutil.rmtree(cache, ignore_errors=True)
    try:
        print(f"load average before the analysis: {_load()}")
        t0, c0 = time.perf_counter(), time.process_time()
        result = analyze_large(
            steps_dir, buzz_dir, n_resamples=args.resamples, seed=args.seed,
            memory_limit=args.memory_limit, threads=args.threads, cache=cache, rank=args.rank,
        )  # fmt: skip
        elapsed = time.perf_counter() - t0
        print(f"analyze-large: {elapsed:.1f} s ({elapsed / 60:.2f} min; CPU of every thread "
              f"{time.process_time() - c0:.1f} s), "
              f"peak resident memory {_rss_mb():,.0f} MB, "
              f"{args.resamples} bootstrap resamples, memory limit {args.memory_limit}, "
              f"{args.threads} threads, cache {'on' if cache else 'off'}; "
              f"load average after: {_load()}")  # fmt: skip
        print("  of which: " + ", ".join(f"{k} {v:.1f} s" for k, v in result["timings"].items()))
        m = result["models"]["model-0"]["logit"]
        print(f"model-0 logit: CalScore {m['calscore']:.6f} "
              f"[{m['ci']['calscore'][0]:.6f}, {m['ci']['calscore'][1]:.6f}], "
              f"ECE {m['ece']:.6f}, Brier {m['brier']:.6f}, n {m['n']:,}")  # fmt: skip
        if args.compare:
            import pandas as pd

            from grace_arena.analysis import analyze

            steps = pd.read_parquet(steps_dir)
            buzzes = pd.concat([pd.read_parquet(p) for p in sorted(buzz_dir.glob("*.parquet"))],
                               ignore_index=True)  # fmt: skip
            t0 = time.perf_counter()
            memory = analyze(steps, buzzes, n_resamples=args.resamples, seed=args.seed)
            print(f"analyze (in memory): {time.perf_counter() - t0:.1f} s")
            worst: dict[str, float] = {}
            for model, kinds in result["models"].items():
                for kind, s in kinds.items():
                    mem = memory["models"][model][kind]
                    pairs = [(s, mem), (s["final"], mem["final"])]
                    pairs += [(v, mem["by_category"][c]) for c, v in s["by_category"].items()]
                    for ours, theirs in pairs:
                        for name in result["metrics"]:
                            if ours.get(name) is not None and theirs.get(name) is not None:
                                gap = abs(ours[name] - theirs[name])
                                worst[name] = max(worst.get(name, 0.0), gap)
            print(f"largest difference of any metric from the in-memory analysis: "
                  f"{max(worst.values()):.2e}"
                  + "".join(f"; {n} {worst[n]:.2e}" for n in ("ace", "auroc", "aurc", "acc_at_80")
                            if n in worst))  # fmt: skip
        if args.appended:
            for i, resamples in enumerate((0, args.resamples)):
                k = write_match(buzz_dir, n_q, args.seed + 7 + i, name=f"zz-one-more-match-{i}")
                t0, c0 = time.perf_counter(), time.process_time()
                again = analyze_large(
                    steps_dir, buzz_dir, n_resamples=resamples, seed=args.seed,
                    memory_limit=args.memory_limit, threads=args.threads, cache=cache,
                )  # fmt: skip
                c = again["cache"]
                print(f"re-analysis after one more match ({k} buzzes on 20 questions), "
                      f"{resamples} resamples (bootstrap {again['bootstrap']}): "
                      f"{time.perf_counter() - t0:.1f} s, CPU {time.process_time() - c0:.1f} s "
                      f"(read {c['buckets_read']} of {c['buckets']} buckets; "
                      + ", ".join(f"{n} {v:.2f} s" for n, v in again["timings"].items())
                      + f"); load average {_load()}")  # fmt: skip
            for i in range(2):
                (buzz_dir / f"zz-one-more-match-{i}.parquet").unlink()
    finally:
        if not args.keep and not args.dir:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
