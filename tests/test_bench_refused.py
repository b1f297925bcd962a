"""``bench/bench_refused.py`` runs end to end, small, and its two records differ as they must:
every press a row and an event in one, each player's first refusal per holder in the other."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_refused_press_benchmark_stores_every_press_or_counts_the_repeats() -> None:
    run = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench_refused.py"), "--players", "6",
         "--rounds", "4"],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    rows = {
        line[:24].strip(): [int(x) for x in line[24:].split()[:4]]
        for line in run.stdout.splitlines()
        if line.startswith(("every press in full", "repeats counted"))
    }
    presses = 2 * 5 * 4  # two holders, five others pressing, four rounds
    assert rows["every press in full"] == [presses, presses, presses, 0]
    # a refusal in full per player and holder; the other three presses of each counted
    assert rows["repeats counted"] == [presses, 10, 10, presses - 10]
    assert "fewer bytes per refused press" in run.stdout
