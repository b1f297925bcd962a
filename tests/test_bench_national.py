"""``bench/bench_national.py`` runs end to end, small: rooms behind HAProxy on two server
processes, every client through the proxy (displays with their grant, more phones from
one address than its default limit of new names), and it prints its
table (the numbers themselves are for a quiet machine, not for a test)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HAPROXY = shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin")


@pytest.mark.slow
@pytest.mark.skipif(HAPROXY is None, reason="HAProxy is missing (.ci/run installs it)")
def test_the_national_benchmark_plays_its_rooms_behind_the_proxy_and_prints_its_table() -> None:
    run = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench_national.py"), "--rooms", "2",
         "--players", "21", "--seconds", "6", "--watchers", "1", "--client-procs", "1"],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )  # fmt: skip
    assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]
    out = run.stdout
    assert "2 rooms routed by join code" in out
    # 42 phones from one address: more new names than an address may add by default
    assert "2 rooms, 42 phones, 2 displays, 2 moderators" in out
    row = next(line for line in out.splitlines() if line.startswith("reveal delivery"))
    assert int(re.search(r"(\d+) word states", row).group(1)) > 0, row
    for process in ("server 1", "server 2", "HAProxy"):
        assert any(line.startswith(process) for line in out.splitlines()), out
