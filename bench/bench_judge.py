"""Benchmark: how many answers the judge rules on per second.

The answers and lines are the judge's regression table (tests/judge_regression.csv: thousands
of rows, most of them QANTA's real answer lines). Three ways, each ``--repeat`` times, medians
printed:

* **cold**: every cache emptied before every judgment (the parsed line, its compiled forms, the
  prepared answer, the stems): each answer is judged against a line never seen, with no word
  stemmed before. The data files stay loaded (they are read once per process; the first
  judgment of a process, data files included, is timed apart in a fresh interpreter).
* **cold per line**: the caches emptied once, then every row in table order: each line is
  parsed once and its other rows reuse it, as a match or a precompute does.
* **warm**: every row again with the caches full.

    .venv/bin/python bench/bench_judge.py [--repeat 5]

Not a timed test: it prints numbers (the machine is shared and noisy: read the medians).
"""

from __future__ import annotations

import argparse
import csv
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

from grace_arena.core.judge import forms, judge, lines, text

TABLE = Path(__file__).resolve().parents[1] / "tests" / "judge_regression.csv"
_CACHES = (
    lines._parse_cached,
    forms.compile_line,
    forms._person,
    forms._head_length,
    text.prepare,
    text.stem,
)


def clear_caches() -> None:
    for cached in _CACHES:
        cached.cache_clear()


def load_pairs() -> list[tuple[str, str]]:
    with TABLE.open(newline="", encoding="utf-8") as f:
        return [(row["given"], row["answer_line"]) for row in csv.DictReader(f)]


def per_second(pairs: list[tuple[str, str]], *, mode: str) -> tuple[float, float]:
    """Judgments per second of wall-clock time and of this process's CPU time (the second is
    less disturbed by other work on a shared machine)."""
    if mode != "warm":
        clear_caches()
    start, cpu = time.perf_counter(), time.process_time()
    for given, line in pairs:
        if mode == "cold":
            clear_caches()
        judge(given, line)
    wall, used = time.perf_counter() - start, time.process_time() - cpu
    return len(pairs) / wall, len(pairs) / max(used, 1e-9)


def first_judgment_seconds() -> float:
    """A fresh interpreter: import the judge and rule once (the data files are read)."""
    code = (
        "import time; t = time.perf_counter(); "
        "from grace_arena.core.judge import judge; judge('Atwood', 'Margaret Atwood'); "
        "print(time.perf_counter() - t)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    pairs = load_pairs()
    judge(*pairs[0])  # the data files, once
    print(f"python {platform.python_version()} on {platform.machine()}, {len(pairs)} judgments")
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    for mode in ("cold", "cold per line", "warm"):
        runs = [per_second(pairs, mode=mode) for _ in range(args.repeat)]
        wall, cpu = [r[0] for r in runs], [r[1] for r in runs]
        print(
            f"{mode:>14}: median {statistics.median(wall):>8,.0f} judgments/s "
            f"(min {min(wall):,.0f}, max {max(wall):,.0f}); per CPU second "
            f"{statistics.median(cpu):,.0f}; {args.repeat} runs"
        )
    firsts = [first_judgment_seconds() for _ in range(args.repeat)]
    print(
        f"first judgment in a fresh process (import and data files): median "
        f"{statistics.median(firsts) * 1000:.0f} ms"
    )


if __name__ == "__main__":
    main()
