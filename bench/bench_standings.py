"""What one update of an event's standings costs after a ruling: the full computation from
every match against the fold of the one match that changed.

    .venv/bin/python bench/bench_standings.py [--rooms 100] [--rounds 10] [--tossups 2]
                                              [--runs 9] [--db URL]

An event of ``--rooms`` rooms and twice as many human teams, ``--rounds`` rounds: every room's
match of every round played in the record (``--tossups`` tossups each, a buzz ruled on each,
the match ended), so ``rooms × rounds`` matches, then one more match under way. Each run makes
one ruling in that match, then times, one after the other:

- **full**: the standings computed from the record as a process that knows nothing does it
  (``event_standings``: the plan, every match's results, bonuses replayed, ranked);
- **reader + full sum**: what a server did after each ruling before the fold
  (``StandingsReader.read_results``, which re-reads only the matches that changed, then
  ``standings`` over every result);
- **reader + fold**: what the computing process does now (the same read, then
  ``EventFold.update``: the one changed result folded in, the rows ranked);
- **sum alone / fold alone**: the in-memory part of the last two, on results already read.

Prints the median over ``--runs`` rulings of each, in milliseconds. SQLite in a temporary
folder unless ``--db`` names a database (an empty one: the bench makes its tables).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grace_arena.core import schedule as pairing  # noqa: E402
from grace_arena.core.commands import Buzz, EndMatch, Join, Reveal, Rule, StartTossup  # noqa: E402
from grace_arena.core.config import TeamSpec  # noqa: E402
from grace_arena.core.events import Ruling  # noqa: E402
from grace_arena.core.packet import SAMPLE_PACKET_PATH, load_packet  # noqa: E402
from grace_arena.core.specs import match_config  # noqa: E402
from grace_arena.core.standings import standings  # noqa: E402
from grace_arena.record.db import make_engine, upgrade  # noqa: E402
from grace_arena.record.schedule import (  # noqa: E402
    RoundPlan,
    StandingsReader,
    TeamEntry,
    create_event,
    event_standings,
    load_plan,
    set_schedule,
)
from grace_arena.record.standings_fold import EventFold  # noqa: E402
from grace_arena.record.store import MatchStore  # noqa: E402


def build(db_url: str, rooms: int, rounds: int, tossups: int):
    """The event, every match played; the engine, the event id and one match under way."""
    upgrade(db_url)
    engine = make_engine(db_url)
    packet = load_packet(SAMPLE_PACKET_PATH)
    MatchStore(engine).save_packet(packet, source=SAMPLE_PACKET_PATH)
    teams = [TeamEntry(f"t{i}", f"Team {i}") for i in range(2 * rooms)]
    create_event(engine, "bench", title="Bench", teams=teams, players=[])
    games = pairing.schedule(
        [t.id for t in teams], [], rounds=rounds + 1, rooms=[str(r) for r in range(rooms)]
    )
    ids = tuple(t.id for t in packet.tossups[:tossups])
    plan = set_schedule(
        engine, "bench", rooms=[str(r) for r in range(rooms)],
        rounds=[RoundPlan(r, packet.packet.id, ids) for r in range(1, rounds + 2)], games=games,
    )  # fmt: skip
    store = MatchStore(engine)
    started = time.perf_counter()
    under_way = None
    for game in plan.games:
        if game.bye:
            continue
        specs = [TeamSpec(id=t, name=t) for t in game.teams]
        last = game.round == rounds + 1  # (the match under way: every tossup of the packet)
        config = match_config(packet, specs, tossup_ids=None if last else ids)
        match = store.create(config, now=0.0, event="bench", game_id=game.id)
        for team in game.teams:
            match.handle(Join(team=team, player=f"{team}-p", name=f"{team} player"), now=1.0)
        if last:
            under_way = match
            break
        for i in range(tossups):
            match.handle(StartTossup(), now=2.0 + i)
            match.handle(Reveal(to=3 + i), now=2.1 + i)
            team = game.teams[(game.id + i) % 2]
            match.handle(Buzz(team=team, player=f"{team}-p"), now=2.2 + i)
            match.handle(Rule(ruling=Ruling.CORRECT), now=2.3 + i)
        match.handle(EndMatch(), now=10.0)
    print(f"record built: {rooms * rounds} matches played in {time.perf_counter() - started:.0f} s")
    assert under_way is not None
    return engine, plan.id, under_way


def timed(took: dict[str, float], key: str, work, *args):
    t = time.perf_counter()
    out = work(*args)
    took[key] = (time.perf_counter() - t) * 1e3
    return out


def summing(reader: StandingsReader):
    """A server's computation before the fold: the changed matches re-read, every result
    summed."""
    plan, results = reader.read_results()
    return standings(plan.team_infos(), results)


def folding(reader: StandingsReader, fold: EventFold):
    """The computing process's now: the changed matches re-read, the changed results folded."""
    plan, results = reader.read_results()
    fold.update(plan, results)
    return plan, results, fold.rows()


def refold(fold: EventFold, plan, results):
    fold.update(plan, results)
    return fold.rows()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rooms", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--tossups", type=int, default=2)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--db", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db_url = args.db or f"sqlite:///{tmp}/bench.db"
        engine, event_id, match = build(db_url, args.rooms, args.rounds, args.tossups)
        before, fold_reader = StandingsReader(engine, event_id), StandingsReader(engine, event_id)
        plan, results = fold_reader.read_results()
        fold = EventFold(plan)
        fold.update(plan, results)
        before.read_results()
        teams = load_plan(engine, event_id).team_infos()
        times: dict[str, list[float]] = {k: [] for k in ("full", "reader", "fold", "sum", "put")}
        for run in range(args.runs):
            # one ruling in the match under way
            match.handle(StartTossup(), now=20.0 + run)
            match.handle(Reveal(to=3), now=20.1 + run)
            team = match.match.config.teams[run % 2].id
            match.handle(Buzz(team=team, player=f"{team}-p"), now=20.2 + run)
            match.handle(Rule(ruling=Ruling.CORRECT), now=20.3 + run)

            took: dict[str, float] = {}
            _, full = timed(took, "full", event_standings, engine, event_id)
            # (one then the other, in turns: the second reads what the first brought into
            # the database's cache)
            if run % 2:
                summed = timed(took, "reader", summing, before)
                plan, results, folded = timed(took, "fold", folding, fold_reader, fold)
            else:
                plan, results, folded = timed(took, "fold", folding, fold_reader, fold)
                summed = timed(took, "reader", summing, before)
            assert folded == summed == full, "the fold differs from the full computation"
            timed(took, "sum", standings, teams, results)
            again = EventFold(plan)
            again.update(plan, [r for r in results if r.match_id != match.id])
            timed(took, "put", refold, again, plan, results)
            for key, value in took.items():
                times[key].append(value)
        print(f"{args.rooms} rooms, {args.rooms * args.rounds} matches played, "
              f"{2 * args.rooms} teams; median of {args.runs} rulings (ms):")  # fmt: skip
        for key, label in (
            ("full", "full computation from the record"),
            ("reader", "reader (changed matches re-read) + sum over every result"),
            ("fold", "reader (changed matches re-read) + fold of the changed result"),
            ("sum", "sum over every result alone (in memory)"),
            ("put", "fold of one changed result alone (in memory, rows ranked)"),
        ):
            print(f"  {label:<64} {statistics.median(times[key]):9.2f}")
        engine.dispose()


if __name__ == "__main__":
    main()
