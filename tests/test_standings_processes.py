"""Two server processes of one event: one computes the standings (it holds the event's
standings claim), once per ruling, and publishes them through the record; the other only
reads them. A ruling in a room of one reaches a client waiting on the other with one
computation in all; ``kill -9`` the computing process and the other takes the computing
over, the version still growing."""

from __future__ import annotations

import json
import threading
import time
import urllib.request

import pytest
from backends import on_both_backends
from event_helpers import code_of, make_event
from live import Client, clients, free_port
from processes import ServerProcess, wait_for

from grace_arena.record.db import make_engine
from grace_arena.record.schedule import standings_stamp

pytestmark = pytest.mark.slow


def _serve(db_url: str, room: str) -> ServerProcess:
    return ServerProcess(
        db_url, free_port(), "--event", "night", "--lease-ttl", "3", "--room", room
    )


def _standings(server: ServerProcess, after: int | None = None) -> dict:
    query = f"?after={after}" if after is not None else ""
    with urllib.request.urlopen(f"{server.url}/api/events/night/standings{query}", timeout=60) as r:
        return json.load(r)


def _computed(server: ServerProcess) -> int:
    return (server.health(5) or {})["standings_computations"]


def _settled(*servers: ServerProcess) -> list[int]:
    """Each server's computations, once they stayed the same over a few renewals of the
    leases (the computing process follows the record's version at each)."""
    last = None
    for _ in range(60):
        now = [_computed(s) for s in servers]
        if now == last:
            return now
        last = now
        time.sleep(1.0)
    raise TimeoutError(f"the standings were still being computed: {last}")


def _ask(server: ServerProcess, after: int) -> tuple[threading.Thread, list[dict]]:
    replies: list[dict] = []
    asking = threading.Thread(target=lambda: replies.append(_standings(server, after)))
    asking.start()
    return asking, replies


@on_both_backends
def test_one_process_computes_the_standings_and_the_other_reads_them(db_url) -> None:
    plan = make_event(db_url)
    room1, room2 = code_of(plan, "1"), code_of(plan, "2")
    engine = make_engine(db_url)
    # the first process takes the computing of the standings at its first renewal
    lead = _serve(db_url, "1")
    other = None
    try:
        wait_for(lambda: _computed(lead) >= 1, "the first process computing the standings")
        other = _serve(db_url, "2")
        # the other reads what the first published: once the first has folded what the
        # other's start wrote (opening its room's match moves the version)
        wait_for(
            lambda: _standings(other)["version"] == standings_stamp(engine, plan.id),
            "the other process reading the standings of the record's version",
        )
        first = _standings(other)
        assert first["version"] == standings_stamp(engine, plan.id)
        assert first["rows"] == _standings(lead)["rows"]

        mod = Client(lead.ws_url)
        alice = Client(lead.ws_url)
        with clients(mod, alice):
            mod.send(type="hello", role="moderator", join_code=room1, token=lead.tokens[room1])
            mod.wait("welcome")
            alice.send(type="hello", role="player", join_code=room1)
            alice.wait("welcome")
            alice.send(type="join", team="red", name="Alice")
            alice.wait("joined")
            mod.send(type="start_tossup")
            mod.state(lambda s: s["match"]["phase"] == "reading")
            mod.send(type="pause")
            mod.state(lambda s: s["match"]["paused"])
            for _ in range(3):
                mod.send(type="step", unit="word")
            mod.state(lambda s: s["tossup"]["position"] >= 2)
            alice.drain(0.05)
            alice.send(type="buzz")
            assert alice.wait("buzz_result")["outcome"] == "won"
            mod.state(lambda s: s["floor"] is not None)
            before = _settled(lead, other)
            assert before[1] == 0  # the other process never computed: it reads
            version = _standings(other)["version"]

            # a ruling in the first process's room reaches a client waiting on the other
            asking, replies = _ask(other, version)
            mod.send(type="rule", ruling="correct")
            mod.state(lambda s: s["match"]["phase"] == "answered")
            asking.join(60)
        assert replies and replies[0]["version"] > version
        red = next(r for r in replies[0]["rows"] if r["team"] == "red")
        assert red["points"] > 0
        # one computation in all, for the ruling
        assert _settled(lead, other) == [before[0] + 1, 0]
        # on PostgreSQL the other process was told of the standings published (and the
        # lead of the results committed), rather than finding them at its next read
        told = [(s.health(5) or {}).get("record_notices") for s in (lead, other)]
        if db_url.startswith("postgresql"):
            assert all(n and n > 0 for n in told), told
        else:
            assert told == [None, None]

        # the computing process dies: the other takes the computing over, and a change
        # (room 2's match ended there) reaches who waits, with a newer version
        lead.kill()
        wait_for(lambda: _computed(other) >= 1, "the other process computing the standings")
        taken = _standings(other)
        assert taken["version"] >= replies[0]["version"]
        assert taken["rows"] == replies[0]["rows"]
        asking, replies = _ask(other, taken["version"])
        mod = Client(other.ws_url)
        with clients(mod):
            mod.send(type="hello", role="moderator", join_code=room2, token=other.tokens[room2])
            mod.wait("welcome")
            mod.send(type="end_match")
            mod.wait(lambda m: m["type"] == "next_match" or (
                m["type"] == "state" and m["match"]["phase"] == "ended"))  # fmt: skip
            asking.join(60)
        assert replies and replies[0]["version"] > taken["version"]
        assert replies[0]["version"] == standings_stamp(engine, plan.id)
        assert sum(r["played"] for r in replies[0]["rows"]) > sum(
            r["played"] for r in taken["rows"]
        )
    finally:
        lead.kill()
        if other is not None:
            other.kill()
        engine.dispose()
