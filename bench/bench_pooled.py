"""Benchmark: pooled buzzpoints ten times GRACE's size, imported and analysed.

GRACE's public data is 12 packets of 20 tossups with 1,749 buzzpoints pooled over every room
(17 human teams, 3 models). This writes 120 such packets (2,400 tossups, 17,490 buzzpoints:
up to a dozen per tossup, several on the last word) as GRACE JSON files and measures:

* ``import grace`` of all of them into a fresh SQLite record (one transaction);
* the analysis of the event: loading the pooled buzzes and ``analyze`` with 1,000 bootstrap
  resamples, on the buzzpoints alone and with three models' steps on every clue of every
  tossup (so that the pooled h_t, CalScore and the bootstrap have work to do).

Each is run ``--repeat`` times (a fresh record for each import); medians are printed.

    .venv/bin/python bench/bench_pooled.py [--packets 120] [--repeat 3] [--resamples 1000]

Not a timed test: it prints numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from sqlalchemy import insert
from sqlmodel import Session, select

from grace_arena.analysis.summary import analyze
from grace_arena.io.imports import import_grace
from grace_arena.io.record_io import load_record_data
from grace_arena.record.db import make_engine, upgrade
from grace_arena.record.models import ModelStepRow, TossupRow

WORDS = (
    "this author wrote a novel in which a character travels across the sea and meets a "
    "stranger who tells of an island where the king was once crowned under a red moon"
)


def _question(rng: np.random.Generator, n_words: int) -> str:
    words = rng.choice(WORDS.split(), size=n_words).tolist()
    words[int(n_words * 0.4)] += " (*)"  # a power mark: a token that is not a word
    words[5] += ' ("pro-NUN-see-AY-shun")'  # a pronunciation guide
    for i in range(14, n_words - 10, 15):
        words[i] += "."
    return " ".join(words[:-4]) + ". For 10 points, name this."


def write_packets(folder: Path, n_packets: int, n_buzzpoints: int, seed: int = 0) -> list[Path]:
    """``n_packets`` GRACE files of 20 tossups with ``n_buzzpoints`` pooled buzzpoints."""
    rng = np.random.default_rng(seed)
    n_tossups = n_packets * 20
    per_tossup = np.full(n_tossups, n_buzzpoints // n_tossups)
    per_tossup[: n_buzzpoints - per_tossup.sum()] += 1
    rng.shuffle(per_tossup)
    paths = []
    for p in range(n_packets):
        entries = []
        for i in range(20):
            t = p * 20 + i
            question = _question(rng, int(rng.integers(90, 120)))
            n_tokens = len(question.split())
            teams = rng.permutation([f"H{k}" for k in range(1, 18)] + ["M1", "M2", "M3"])
            position = []
            for code in teams[: per_tossup[t]]:
                late = rng.random() < 0.35  # many buzzes on the very last word
                word = n_tokens - 1 if late else int(rng.integers(10, n_tokens))
                mark = "+" if rng.random() < 0.72 else "-"
                position.append({str(word): f"[{code}, {mark}]"})
            entries.append(
                {
                    "tossup_index": t,
                    "category": ["Euro Lit", "Physics", "Euro Hist", "Other Fine Arts"][t % 4],
                    "question": question,
                    "answer": f"answer {t} [accept alt {t}]",
                    "question_buzzpoints": question,
                    "position": position,
                }
            )
        path = folder / f"bench_packet{p + 1:03d}.json"
        path.write_text(json.dumps(entries))
        paths.append(path)
    return paths


def add_model_steps(engine, n_models: int, seed: int = 1) -> int:
    """Steps of ``n_models`` models on every clue prefix of every stored tossup."""
    rng = np.random.default_rng(seed)
    with Session(engine) as session:
        tossups = session.exec(select(TossupRow)).all()
        rows = []
        for m in range(n_models):
            for t in tossups:
                n = len(t.clue_ends)
                for step, end in enumerate(t.clue_ends):
                    base = (step + 1) / n
                    conf = float(np.clip(base * rng.uniform(0.6, 1.2), 0, 1))
                    rows.append(
                        {
                            "model": f"model-{m}",
                            "packet_id": t.packet_id,
                            "tossup_id": t.tossup_id,
                            "step": step,
                            "word_index": end,
                            "guess": "x",
                            "confidence_logit": conf,
                            "confidence_verbal": round(conf, 1),
                            "correct": bool(rng.random() < base * 0.9),
                            "exemplars": [],
                            "extra": {},
                        }
                    )
        session.execute(insert(ModelStepRow), rows)
        session.commit()
    return len(rows)


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packets", type=int, default=120)
    parser.add_argument("--buzzpoints", type=int, default=17_490)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--resamples", type=int, default=1000)
    args = parser.parse_args()
    print(f"python {platform.python_version()}, {os.cpu_count()} cores, {platform.machine()}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        t0 = time.perf_counter()
        files = write_packets(folder, args.packets, args.buzzpoints)
        print(
            f"wrote {len(files)} GRACE files ({args.packets * 20:,} tossups, "
            f"{args.buzzpoints:,} buzzpoints) in {time.perf_counter() - t0:.2f} s"
        )
        imports, url = [], ""
        for r in range(args.repeat):
            url = f"sqlite:///{folder / f'record{r}.db'}"
            upgrade(url)
            engine = make_engine(url)
            t0 = time.perf_counter()
            result = import_grace(engine, files, event="bench")
            imports.append(time.perf_counter() - t0)
            assert result.buzzes == args.buzzpoints, result.buzzes
            engine.dispose()
        print(
            f"import grace: median {statistics.median(imports):.2f} s "
            f"(runs {', '.join(f'{x:.2f}' for x in imports)}), {result.buzzes:,} buzz rows"
        )
        engine = make_engine(url)

        def analysis(label: str) -> None:
            loads, runs = [], []
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                data = load_record_data(engine, events=["bench"])
                t1 = time.perf_counter()
                analyze(data, n_resamples=args.resamples)
                t2 = time.perf_counter()
                loads.append(t1 - t0)
                runs.append(t2 - t1)
            total = [a + b for a, b in zip(loads, runs, strict=True)]
            print(
                f"analyze ({label}; {len(data.steps):,} steps, {len(data.buzzes):,} buzzes, "
                f"{args.resamples} resamples): median {statistics.median(total):.2f} s = "
                f"load {statistics.median(loads):.2f} s + analyze {statistics.median(runs):.2f} s"
                f" (runs {', '.join(f'{x:.2f}' for x in total)})"
            )

        analysis("buzzpoints only")
        n_steps = add_model_steps(engine, 3)
        print(f"added {n_steps:,} model steps (3 models, every clue of every tossup)")
        analysis("with model steps")
        print(f"peak memory {_peak_mb():.0f} MB")


if __name__ == "__main__":
    main()
