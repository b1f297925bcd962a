"""How many times an event's standings are computed per ruling when two server processes
serve its rooms.

    .venv/bin/python bench/bench_standings_processes.py [--rulings 6] [--db URL]

Two servers of one event (room 1 on one, room 2 on the other) share a record; a moderator and
a player in room 1 play a tossup (the match begins), then ``--rulings`` tossups, each buzzed
and ruled correct. After each
ruling, once both servers show the record's version of the standings, the bench waits for
their computations to stay the same over two seconds, then counts them. Prints the
computations per ruling of each server and in all. SQLite in a temporary folder unless
``--db`` names a database.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from event_helpers import code_of, event_server, make_event, room_moderator, room_player  # noqa: E402
from live import clients  # noqa: E402

from grace_arena.record.db import make_engine  # noqa: E402
from grace_arena.record.schedule import standings_stamp  # noqa: E402


def computations(server) -> int:
    """The standings computations the server made (the computing process's count where
    one process computes; every publication where each process computed its own)."""
    rooms = server.events
    made = getattr(rooms, "standings_computed", None)
    return made if made is not None else rooms.feed.computations


def version(server) -> int:
    url = f"{server.http_url}/api/events/night/standings"
    with urllib.request.urlopen(url, timeout=30) as reply:
        return json.load(reply)["version"]


def settle(servers, stamp: int) -> list[int]:
    deadline = time.time() + 60
    while any(version(s) != stamp for s in servers):
        if time.time() > deadline:
            raise TimeoutError("the servers never showed the ruling")
        time.sleep(0.1)
    last = None
    while True:
        now = [computations(s) for s in servers]
        if now == last:
            return now
        last = now
        time.sleep(2.0)


def rule(mod, alice) -> None:
    """A tossup started, buzzed and ruled correct."""
    mod.send(type="start_tossup")
    mod.state(lambda s: s["match"]["phase"] == "reading")
    alice.drain(0.3)
    alice.send(type="buzz")
    alice.wait("buzz_result")
    mod.state(lambda s: s["floor"] is not None)
    mod.send(type="rule", ruling="correct")
    mod.state(lambda s: s["match"]["phase"] in ("answered", "awaiting"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rulings", type=int, default=6)
    parser.add_argument("--db", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db_url = args.db or f"sqlite:///{tmp}/bench.db"
        plan = make_event(db_url, tossups=args.rulings + 2)
        engine = make_engine(db_url)
        room1 = code_of(plan, "1")
        with (
            event_server(db_url, event_rooms=["1"]) as a,
            event_server(db_url, event_rooms=["2"]) as b,
        ):
            servers = [a, b]
            mod = room_moderator(a, room1)
            alice = room_player(a, room1, "red", "Alice")
            with clients(mod, alice):
                rule(mod, alice)  # (the first: the match begins, a change of its own)
                settle(servers, standings_stamp(engine, plan.id))
                before = [computations(s) for s in servers]
                for _ in range(args.rulings):
                    rule(mod, alice)
                    settle(servers, standings_stamp(engine, plan.id))
                after = [computations(s) for s in servers]
        made = [x - y for x, y in zip(after, before, strict=True)]
        print(f"{args.rulings} rulings in room 1 (server A), room 2 on server B:")
        print(f"  computations per ruling: A {made[0] / args.rulings:.2f}, "
              f"B {made[1] / args.rulings:.2f}, in all {sum(made) / args.rulings:.2f}")  # fmt: skip
        engine.dispose()


if __name__ == "__main__":
    main()
