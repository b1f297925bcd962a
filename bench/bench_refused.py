"""What a flood of refused presses costs the record (SQLite), stored in full or counted.

    .venv/bin/python bench/bench_refused.py [--players 50] [--rounds 60]

``--players`` players of two teams; one of them takes the floor, and the others press ``--rounds``
times each while it holds it (each round one batch, as the server commits the presses that
arrive while the last batch was being written). Then that buzz is ruled incorrect, a player of
the other team takes the floor, and everyone presses again: the first team's players locked
out, the second's losing the race to the new holder. Every press carries a full timing (both
server clocks, client press, clock offset, round trip, clock samples).

The flood runs twice, each in a record of its own: with every refused press stored in full (a
``buzz_refused`` event and a ``buzz`` row each, as the record did before repeats were
counted: the engine is made to forget the refusals it knows before every press), and as the
engine decides it now (a player's first press per reason and holder of the floor in full, the
rest counted on that row). Prints, for each: the presses, events and buzz rows stored, the
repeats counted, the growth of the database file (checkpointed) and the bytes per refused
press, and how many presses a second the record committed.
"""

from __future__ import annotations

import argparse
import sqlite3
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from sqlalchemy import func
from sqlmodel import Session, select

from grace_arena.core.commands import Buzz, Join, Reveal, Rule, StartTossup
from grace_arena.core.config import TeamSpec
from grace_arena.core.events import BuzzTiming, Event, Ruling
from grace_arena.core.match import Match
from grace_arena.core.packet import SAMPLE_PACKET_PATH, load_packet
from grace_arena.core.specs import match_config
from grace_arena.record.db import open_engine
from grace_arena.record.models import BuzzRow, EventRow
from grace_arena.record.store import MatchStore, RecordedMatch

TEAMS = ("red", "blue")


def _team(i: int) -> str:
    return TEAMS[i % 2]


def _press(i: int) -> Buzz:
    wall = time.time()
    timing = BuzzTiming(
        received_wall=wall,
        received_mono=time.monotonic(),
        client_press=wall - 0.03,
        clock_offset=0.012,
        rtt=0.021,
        clock_samples=8,
        clock_spread=0.004,
    )
    return Buzz(team=_team(i), player=f"p-{i:08x}", timing=timing)


def _commit(rm: RecordedMatch, commands: list[Buzz], *, every_press: bool) -> None:
    """One batch, decided in order and committed in one transaction."""
    if not every_press:
        rm.handle_many(commands, now=time.time())
        return
    scratch, events = Match(rm.match.state), []
    for command in commands:
        scratch.state = replace(scratch.state, refused={})  # as if no refusal were known
        decided: list[Event] = scratch.decide(command, now=time.time())
        scratch.apply(decided)
        events += decided
    rm.store.append(rm.id, events)
    rm.match.state = scratch.state


def _size(path: Path) -> int:
    with sqlite3.connect(path) as con:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path.stat().st_size


def _counts(store: MatchStore, match_id: int) -> tuple[int, int, int]:
    with Session(store.engine) as session:
        events = session.exec(
            select(func.count()).select_from(EventRow).where(EventRow.match_id == match_id)
        ).one()
        rows, repeats = session.exec(
            select(func.count(), func.coalesce(func.sum(BuzzRow.repeats), 0)).where(
                BuzzRow.match_id == match_id
            )
        ).one()
    return events, rows, int(repeats)


def flood(folder: Path, players: int, rounds: int, *, every_press: bool) -> dict[str, float]:
    """Play the flood into a new record; what its presses added to it."""
    path = folder / ("every-press.db" if every_press else "counted.db")
    store = MatchStore(open_engine(f"sqlite:///{path}"))
    packet = load_packet(SAMPLE_PACKET_PATH)
    store.save_packet(packet)
    config = match_config(packet, [TeamSpec(id=t, name=t.title()) for t in TEAMS])
    rm = store.create(config, now=time.time())
    for i in range(players):
        rm.handle(Join(team=_team(i), player=f"p-{i:08x}", name=f"Player {i}"), now=time.time())
    rm.handle(StartTossup(), now=time.time())
    rm.handle(Reveal(), now=time.time())
    added = {"presses": 0, "events": 0, "rows": 0, "repeats": 0, "bytes": 0, "seconds": 0.0}
    for holder in (1, 0):  # red's second player, then blue's first
        if holder == 0:
            rm.handle(Rule(ruling=Ruling.INCORRECT), now=time.time())  # red locked out
        rm.handle(_press(holder), now=time.time())  # takes the floor
        size, counts = _size(path), _counts(store, rm.id)
        for _ in range(rounds):
            batch = [_press(i) for i in range(players) if i != holder]
            t0 = time.perf_counter()
            _commit(rm, batch, every_press=every_press)
            added["seconds"] += time.perf_counter() - t0
            added["presses"] += len(batch)
        added["bytes"] += _size(path) - size
        for key, before, after in zip(
            ("events", "rows", "repeats"), counts, _counts(store, rm.id), strict=True
        ):
            added[key] += after - before
    if not every_press:  # (the other forgot what it knew: its replay knows more)
        assert store.open(rm.id).match.state == rm.match.state  # the record is the match
    store.engine.dispose()
    return added


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=60)
    args = parser.parse_args()
    print(f"{args.players} players, {args.rounds} presses each while one holds the floor, then "
          f"{args.rounds} each while locked out or behind the new holder")  # fmt: skip
    print(f"{'record':<24}{'presses':>8}{'events':>8}{'rows':>8}{'repeats':>9}"
          f"{'bytes':>11}{'bytes/press':>13}{'presses/s':>11}")  # fmt: skip
    per_press = {}
    with tempfile.TemporaryDirectory() as tmp:
        for every_press in (True, False):
            r = flood(Path(tmp), args.players, args.rounds, every_press=every_press)
            label = "every press in full" if every_press else "repeats counted"
            per_press[every_press] = r["bytes"] / r["presses"]
            per_row = r["bytes"] / r["rows"]
            print(f"{label:<24}{r['presses']:>8}{r['events']:>8}{r['rows']:>8}"
                  f"{r['repeats']:>9}{r['bytes']:>11}{per_press[every_press]:>13.1f}"
                  f"{r['presses'] / r['seconds']:>11.0f}")  # fmt: skip
    print(f"ratio: {per_press[True] / per_press[False]:.1f}x fewer bytes per refused press")
    print(f"each refusal stored in full: {per_row:.0f} bytes, and "
          f"{r['repeats'] / r['rows']:.0f} presses counted on it")  # fmt: skip


if __name__ == "__main__":
    main()
