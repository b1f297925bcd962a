"""How fast the record commits commands and rebuilds a match.

    .venv/bin/python bench/bench_record.py [--commands 2000] [--repeats 5]

Prints the median over repeats of: engine-only commands per second (decide+apply, no I/O),
recorded commands per second (each committed to SQLite with WAL and synchronous=FULL before it
takes effect), and replay time for the whole record. The ratio recorded/engine shows what the
durability costs on this machine; the machines are shared and noisy, so compare ratios.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from engine_helpers import config

from grace_arena.core.commands import Buzz, Join, Reveal, Rule, StartTossup, TimeUp
from grace_arena.core.errors import IllegalCommand
from grace_arena.core.events import Ruling
from grace_arena.core.match import Match
from grace_arena.record.db import make_engine, upgrade
from grace_arena.record.store import MatchStore


def commands(n: int, seed: int):
    rng = random.Random(seed)
    for _ in range(n):
        yield rng.choice(
            [
                StartTossup(),
                Reveal(),
                Reveal(),
                Reveal(),
                Reveal(),
                Buzz(team=rng.choice(["red", "blue"]), player="p"),
                Rule(ruling=rng.choice(list(Ruling))),
                TimeUp(),
            ]
        )


def drive(handle, n: int, seed: int) -> int:
    now, done = 0.0, 0
    for cmd in commands(n, seed):
        if isinstance(cmd, Buzz):
            cmd = cmd.model_copy(update={"player": f"{cmd.team}-p"})
        now += 11.0 if isinstance(cmd, TimeUp) else 0.1
        try:
            handle(cmd, now)
            done += 1
        except IllegalCommand:
            pass
    return done


def one_run(n: int, seed: int, folder: Path) -> tuple[float, float, float, int]:
    cfg = config(n_tossups=400)
    match, _ = Match.create(cfg, now=0.0)
    for team in ("red", "blue"):
        match.handle(Join(team=team, player=f"{team}-p", name=team), now=0.0)
    t0 = time.perf_counter()
    done = drive(lambda c, now: match.handle(c, now=now), n, seed)
    engine_rate = done / (time.perf_counter() - t0)

    url = f"sqlite:///{folder / f'bench-{seed}.db'}"
    upgrade(url)
    store = MatchStore(make_engine(url))
    rm = store.create(cfg, now=0.0)
    for team in ("red", "blue"):
        rm.handle(Join(team=team, player=f"{team}-p", name=team), now=0.0)
    t0 = time.perf_counter()
    done = drive(lambda c, now: rm.handle(c, now=now), n, seed)
    recorded_rate = done / (time.perf_counter() - t0)

    t0 = time.perf_counter()
    reopened = store.open(rm.id)
    replay_s = time.perf_counter() - t0
    assert reopened.match.state == rm.match.state
    return engine_rate, recorded_rate, replay_s, rm.seq


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commands", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(args.repeats):
            results.append(one_run(args.commands, seed, Path(tmp)))
    engine = statistics.median(r[0] for r in results)
    recorded = statistics.median(r[1] for r in results)
    replay = statistics.median(r[2] for r in results)
    events = statistics.median(r[3] for r in results)
    print(f"commands tried per run: {args.commands}, repeats: {args.repeats}")
    print(f"engine only      : {engine:10.0f} accepted commands/s (median)")
    print(f"recorded (FULL)  : {recorded:10.0f} accepted commands/s (median)")
    print(f"ratio            : {engine / recorded:10.1f}x slower with durable commits")
    print(f"replay           : {replay * 1000:10.1f} ms for {events:.0f} events (median)")


if __name__ == "__main__":
    main()
