"""``bench/bench_event.py`` runs end to end, small: both phases play, and it prints its rows
and ratios (the benchmark's numbers themselves are for a quiet machine, not for a test)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_the_event_benchmark_plays_both_phases_and_prints_its_figures() -> None:
    run = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench_event.py"), "--rooms", "2",
         "--players", "2", "--seconds", "4", "--alone-seconds", "4", "--client-procs", "1"],
        capture_output=True, text=True, timeout=240, cwd=ROOT,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    out = run.stdout
    for label in ("1 room alone", "2 rooms at once"):
        row = next(line for line in out.splitlines() if line.startswith(label))
        gaps, states = re.search(r"\((\d+) gaps between words, (\d+) word states", row).groups()
        assert int(gaps) > 0 and int(states) > 0, row
        locked, buzzes = re.search(r"(\d+) of (\d+) buzzes locked out", row).groups()
        assert locked == buzzes and int(buzzes) > 0, row
    ratios = out.split("goal <= 1.5:")[1]
    for key in ("reveal late p99", "reveal p99 after 1 s", "lock-out p99"):
        assert re.search(rf"{re.escape(key)}\s+\d+\.\d\d", ratios), ratios
