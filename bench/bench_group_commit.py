"""What one group commit costs the server process: the words of N rooms written together.

    .venv/bin/python bench/bench_group_commit.py [--rooms 10 50] [--commits 150] [--postgres URL]

Each commit is what a server's writer hands the record when N rooms each reveal a word at
once: every room's lease fenced and its word's event row written, in one synced transaction
(``MatchStore.append_many``). Prints, per N, the median wall time of a commit and the median
CPU time this process spent on it (the interpreter's time: what a busy server's event loop
loses to the writer thread). PostgreSQL by default ($GRACE_ARENA_TEST_POSTGRES, a database of
its own, dropped after), else a SQLite file.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from bench_national import record
from engine_helpers import config

from grace_arena.core.commands import Reveal, StartTossup
from grace_arena.record import lease
from grace_arena.record.db import make_engine, upgrade
from grace_arena.record.store import MatchStore


def measure(url: str, rooms: int, commits: int) -> tuple[float, float]:
    """Median wall and CPU seconds of a group commit of ``rooms`` rooms' words."""
    engine = make_engine(url)
    try:
        store = MatchStore(engine)
        holder = lease.Holder.this_process()
        matches = [store.create(config(), now=0.0, holder=holder) for _ in range(rooms)]
        for rm in matches:
            rm.handle(StartTossup(), now=1.0)
        walls, cpus = [], []
        for i in range(commits):
            batch = []
            for rm in matches:
                _, _, events = rm.decide_many([Reveal()], now=2.0 + i)
                batch.append((rm.id, events, rm.fence))
            wall, cpu = time.perf_counter(), time.process_time()
            store.append_many(batch)
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
            for (_, events, _), rm in zip(batch, matches, strict=True):
                rm.match.apply(events)
        return statistics.median(walls), statistics.median(cpus)
    finally:
        engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rooms", type=int, nargs="+", default=[10, 50])
    parser.add_argument("--commits", type=int, default=150)
    parser.add_argument("--postgres", default=os.environ.get("GRACE_ARENA_TEST_POSTGRES"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        for rooms in args.rooms:
            with record(args.postgres, Path(folder)) as url:
                upgrade(url)
                wall, cpu = measure(url, rooms, args.commits)
                kind = "PostgreSQL" if args.postgres else "SQLite"
                print(
                    f"{kind}, {rooms} rooms' words in one commit: wall {wall * 1e3:.2f} ms, "
                    f"CPU {cpu * 1e3:.2f} ms (medians of {args.commits})"
                )


if __name__ == "__main__":
    main()
