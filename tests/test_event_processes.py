"""Two server processes share one record, each serving rooms of one event: a player is the
same player on both; ``kill -9`` one and its rooms reopen on the other (by themselves, at the
word where they stopped, no accepted buzz lost); a process that froze and lost its room closes
that room's sockets and sends its clients to the process that serves it now."""

from __future__ import annotations

import time

import pytest
from backends import on_both_backends
from event_helpers import code_of, make_event
from live import Client, clients, free_port
from processes import ServerProcess, wait_for
from sqlmodel import Session, select

from grace_arena.record.db import make_engine
from grace_arena.record.models import EventPlayerRow
from grace_arena.record.store import MatchStore

pytestmark = pytest.mark.slow


def serve_rooms(db_url: str, *rooms: str, lease_ttl: float = 15.0) -> ServerProcess:
    """``grace-arena serve --event night --room ...`` on a free port."""
    args = [arg for room in rooms for arg in ("--room", room)]
    return ServerProcess(
        db_url, free_port(), "--event", "night", "--lease-ttl", str(lease_ttl), *args
    )


def _moderate(server: ServerProcess, code: str, token: str) -> Client:
    mod = Client(server.ws_url)
    mod.send(type="hello", role="moderator", join_code=code, token=token)
    mod.wait("welcome")
    return mod


def _join(server: ServerProcess, code: str, team: str, name: str) -> tuple[Client, dict]:
    phone = Client(server.ws_url)
    phone.send(type="hello", role="player", join_code=code)
    phone.wait("welcome")
    phone.send(type="join", team=team, name=name)
    return phone, phone.wait("joined")


@on_both_backends
def test_a_player_who_joined_on_one_process_is_the_same_player_on_the_other(db_url) -> None:
    """A process fills its memory of players when it opens the event: a player who joined
    on another process later is looked up in the record, not told to join again (which made
    a second player of the same name)."""
    plan = make_event(db_url)
    room1, room2 = code_of(plan, "1"), code_of(plan, "2")
    with serve_rooms(db_url, "1") as a, serve_rooms(db_url, "2") as b:
        alice, joined = _join(a, room1, "red", "Alice")
        with clients(alice):
            alice.state()
        # Alice's phone comes back on B (its token), and she joins on B by name (a new phone)
        back = Client(b.ws_url)
        with clients(back):
            back.send(type="hello", role="player", join_code=room2, token=joined["token"])
            back.wait("welcome")
            assert back.wait("joined")["player"] == joined["player"]
            # Red's match is open in room 1, on A: the phone is sent there
            moved = back.wait("next_match")
            assert moved["join_code"] == room1 and "Red plays round 1 in room 1" in moved["message"]
        again, rejoined = _join(b, room2, "red", "alice")
        with clients(again):
            assert rejoined["player"] == joined["player"]
    engine = make_engine(db_url)
    names = [p.name for p in MatchStore(engine).event_teams(plan.id)]  # (teams registered)
    assert names

    with Session(engine) as session:
        players = session.exec(select(EventPlayerRow).where(EventPlayerRow.kind == "human")).all()
    assert [(p.team_id, p.name) for p in players] == [("red", "Alice")]


@on_both_backends
def test_a_killed_process_rooms_reopen_on_the_other_with_nothing_lost(db_url) -> None:
    plan = make_event(db_url)
    room1, room2 = code_of(plan, "1"), code_of(plan, "2")
    a, b = serve_rooms(db_url, "1"), serve_rooms(db_url, "2")
    try:
        assert set(a.tokens) == {room1} and set(b.tokens) == {room2}
        mod = _moderate(a, room1, a.tokens[room1])
        alice, joined = _join(a, room1, "red", "Alice")
        with clients(mod, alice):
            assert mod.wait("servers")["urls"] == [b.url]  # where to turn if A goes
            mod.send(type="start_tossup")
            mod.state(lambda s: s["match"]["phase"] == "reading")
            mod.send(type="pause")
            mod.state(lambda s: s["match"]["paused"])
            for _ in range(3):
                mod.send(type="step", unit="word")
            mod.state(lambda s: s["tossup"]["position"] >= 2)
            alice.drain(0.05)
            alice.send(type="buzz")
            result = alice.wait("buzz_result")
            assert result["outcome"] == "won"
            before = mod.state(lambda s: s["floor"] is not None)
        match_id = before["match"]["id"]

        # while A lives, B says who serves room 1, and where, rather than open it
        other = Client(b.ws_url)
        with clients(other):
            other.send(type="hello", role="player", join_code=room1)
            refused = other.wait("error")
            assert refused["code"] == "elsewhere" and refused["url"] == a.url
            assert f"127.0.0.1:{a.port}" in refused["message"]

        a.kill()
        store = MatchStore(make_engine(db_url))
        assert [(b.buzz_id, b.outcome) for b in store.buzzes(match_id)] == [
            (result["buzz_id"], "won")
        ]
        # B takes room 1 over by itself (its process is known dead): nobody had to ask
        wait_for(lambda: (b.health() or {}).get("matches") == 2, "B serving both rooms", 10)

        # the same match, buzz and word; the same people
        mod, alice = Client(b.ws_url), Client(b.ws_url)
        with clients(mod, alice):
            mod.send(type="hello", role="moderator", join_code=room1, token=a.tokens[room1])
            mod.wait("welcome")
            after = mod.state()
            assert after["match"]["id"] == match_id
            assert after["match"]["phase"] == "buzzed"
            assert after["floor"]["buzz_id"] == result["buzz_id"]
            assert after["tossup"]["position"] == before["tossup"]["position"]
            alice.send(type="hello", role="player", join_code=room1, token=joined["token"])
            alice.wait("welcome")
            assert alice.wait("joined")["player"] == joined["player"]
            mod.send(type="rule", ruling="correct")
            mod.state(lambda s: s["match"]["phase"] == "answered")
        assert store.buzzes(match_id)[0].ruling == "correct"
    finally:
        a.kill()
        b.kill()


@on_both_backends
def test_a_process_that_froze_and_lost_its_room_closes_its_sockets(db_url) -> None:
    """A freezes (a hung process, a suspended laptop) past its lease; B takes the room over.
    When A wakes, its next renewal finds the match lost: it tells each client of the room
    where the match is served now (an ``elsewhere`` with B's address) and closes its socket,
    so that no phone stays connected to a room that no longer plays, and nothing more is
    committed or sent there."""
    plan = make_event(db_url)
    room1 = code_of(plan, "1")
    a = serve_rooms(db_url, "1", lease_ttl=2.0)
    b = serve_rooms(db_url, "2", lease_ttl=2.0)
    try:
        mod = _moderate(a, room1, a.tokens[room1])
        phones = [_join(a, room1, "red", f"Red {i}")[0] for i in range(3)]
        with clients(mod, *phones):
            mod.state()
            mod.send(type="start_tossup")
            mod.state(lambda s: s["match"]["phase"] == "reading")
            # (paused: on SQLite, a process frozen in the middle of a commit would keep every
            # other process from writing until it wakes; PostgreSQL ends such a transaction)
            mod.send(type="pause")
            mod.state(lambda s: s["match"]["paused"])
            wait_for(lambda: (a.health() or {}).get("connections") == 4, "4 sockets on A")
            # SQLite has one writer: A frozen in the middle of a write (a lease renewal, its
            # heartbeat) keeps B from writing until it wakes (the README says so; PostgreSQL
            # ends such a transaction). Frozen there, A is woken for a moment and frozen again.
            # (B cannot take a lease younger than its time to live: test_lease.py)
            for attempt in range(3):
                a.freeze()
                try:
                    wait_for(lambda: (b.health() or {}).get("matches") == 2, "B takes room 1", 12)
                    break
                except TimeoutError:
                    if attempt == 2 or not db_url.startswith("sqlite"):
                        raise
                    a.thaw()
                    time.sleep(0.2)
            a.thaw()
            for client in (mod, *phones):
                moved = client.wait(lambda m: m["type"] == "error" and m["code"] == "elsewhere")
                assert moved["url"] == b.url
            wait_for(lambda: (a.health() or {}).get("connections") == 0, "A's sockets closed")
        # and on B the phones are back in the room, reading
        back = Client(b.ws_url)
        with clients(back):
            back.send(type="hello", role="moderator", join_code=room1, token=a.tokens[room1])
            back.wait("welcome")
            assert back.state()["match"]["phase"] in ("reading", "awaiting")
    finally:
        a.thaw()
        a.kill()
        b.kill()
