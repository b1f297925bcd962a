"""Strangers kept out: a server serves only the events it was started for, enumerates nothing
without a token, throttles guessed codes and tokens per address, and holds its player limits
under joins that arrive together."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import time
import types
import urllib.error
import urllib.request

import pytest
from event_helpers import code_of, event_server, make_event
from live import Client, LiveServer, clients, two_teams
from sqlmodel import Session, func, select
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from grace_arena.core.packet import SAMPLE_PACKET_PATH
from grace_arena.record.db import make_engine
from grace_arena.record.models import EventGameRow, EventPlayerRow, MatchRow
from grace_arena.record.schedule import set_schedule
from grace_arena.server.app import Settings
from grace_arena.server.guard import ADDRESS_BURST, ADDRESS_RATE, BURST, RATE, SLOTS


def _counts(db_url: str) -> tuple[int, int, int]:
    """Matches, scheduled matches linked to a match, and registered players in the record."""
    engine = make_engine(db_url)
    try:
        with Session(engine) as session:
            return (
                session.exec(select(func.count()).select_from(MatchRow)).one(),
                session.exec(
                    select(func.count())
                    .select_from(EventGameRow)
                    .where(EventGameRow.match_id.is_not(None))  # type: ignore[union-attr]
                ).one(),
                session.exec(select(func.count()).select_from(EventPlayerRow)).one(),
            )
    finally:
        engine.dispose()


def test_a_hello_to_another_events_room_opens_nothing_and_stores_nothing(db_url):
    """Two events in one record, a server started for the first: a phone's or a moderator's
    hello with the second's codes is refused, and the second can still be scheduled and
    served by its own server."""
    make_event(db_url, name="ev1")
    other = make_event(db_url, name="ev2")
    with event_server(db_url, event="ev1") as server:
        before = _counts(db_url)
        stranger = Client(server.ws_url)
        with clients(stranger):
            for room in ("1", "2"):
                stranger.send(type="hello", role="player", join_code=code_of(other, room))
                assert stranger.wait("error")["code"] == "not_found"
                stranger.send(
                    type="hello", role="moderator", join_code=code_of(other, room), token="x" * 32
                )
                assert stranger.wait("error")["code"] == "not_found"
        assert _counts(db_url) == before
        # its standings and rooms are not this server's to show
        for path in ("/api/events/ev2/standings", f"/api/events/{other.id}/standings"):
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(server.http_url + path)
            assert refused.value.code == 404
            assert "ev1" not in refused.value.read().decode()
    # the other event was left as it was: its schedule may still change
    engine = make_engine(db_url)
    set_schedule(engine, "ev2", rooms=["1", "2"], rounds=[r for r in other.rounds], games=[])
    engine.dispose()


def test_guessed_codes_are_throttled_per_connection_and_a_right_one_waits_too(db_url):
    settings = Settings(
        db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="x", first_match=two_teams()
    )
    with LiveServer(settings) as server:
        code = server.room().join_code
        guesser = Client(server.ws_url)
        with clients(guesser):
            for i in range(BURST):
                guesser.send(type="hello", role="player", join_code=f"ZZZZ{i:02d}")
                assert guesser.wait("error")["code"] == "not_found"
            guesser.send(type="hello", role="player", join_code="ZZZZZZ")
            held = guesser.wait("error")
            assert held["code"] == "rate_limited" and "try again in" in held["message"]
            # while held, even the right code is not looked at: a guess cannot be tested
            guesser.send(type="hello", role="player", join_code=code)
            assert guesser.wait("error")["code"] == "rate_limited"
        # the connection is held, not its address: the same address's next phone is heard
        neighbour = Client(server.ws_url)
        with clients(neighbour):
            neighbour.send(type="hello", role="player", join_code=code)
            assert neighbour.wait("welcome")["needs_join"]
        with urllib.request.urlopen(f"{server.http_url}/api/join/{code}") as found:
            assert found.status == 200
        # the address's HTTP requests are held as one connection: 429 with Retry-After
        for i in range(BURST):
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(f"{server.http_url}/api/join/ZZZY{i:02d}")
            assert refused.value.code == 404
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"{server.http_url}/api/join/{code}")
        assert refused.value.code == 429 and int(refused.value.headers["Retry-After"]) >= 1
        assert server.arena.guard.refused >= 3


def test_guesses_sent_together_are_all_charged(db_url, monkeypatch):
    """Many sockets of one address each send a wrong code at once: they are looked at a few
    at a time (guard.SLOTS), those in flight when the bucket ran out are charged all the same,
    and a second wave 2.5 s later is refused unread, but for what the address's bucket refilled
    meanwhile and one turn's (waves used to be looked at whole: ~38 guesses a second)."""
    settings = Settings(
        db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="x", first_match=two_teams()
    )

    async def wave(url: str, n: int, start: int) -> list[str]:
        sockets = [await connect(url) for _ in range(n)]
        try:
            await asyncio.gather(*(
                ws.send(json.dumps({"type": "hello", "role": "player",
                                    "join_code": f"Z{start + i:05d}"}))
                for i, ws in enumerate(sockets)
            ))  # fmt: skip
            codes = []
            for ws in sockets:
                while (reply := json.loads(await ws.recv()))["type"] != "error":
                    pass
                codes.append(reply["code"])
            return codes
        finally:
            for ws in sockets:
                await ws.close()

    # The guard's clock is the test's: it stands still while a wave is sent, and 2.5 s pass
    # between the waves, however long the machine takes to send them.
    from grace_arena.server import guard

    now = [1000.0]
    monkeypatch.setattr(guard, "time", types.SimpleNamespace(monotonic=lambda: now[0]))
    with LiveServer(settings) as server:
        first = server.run(wave(server.ws_url, ADDRESS_BURST + 20, 0))
        now[0] += 2.5
        second = server.run(wave(server.ws_url, ADDRESS_BURST + 20, 1000))
    # (the address's bucket refills ADDRESS_RATE a second between the waves: once it holds a
    # guess, the SLOTS looked at together all pass the check before any is charged)
    refilled = ADDRESS_RATE * 2.5
    looked_at = first.count("not_found") + second.count("not_found")
    assert ADDRESS_BURST <= looked_at <= ADDRESS_BURST + SLOTS + refilled, (first, second)
    assert second.count("rate_limited") >= ADDRESS_BURST + 20 - SLOTS - refilled, second


def test_an_address_gets_no_more_guesses_than_its_burst_and_rate_whatever_its_waves():
    """Guesses looked at SLOTS at a time, all past the check before any is charged, whenever
    the address may guess, for 10 minutes: at most the burst, the rate's worth, and one
    turn's; and a club's phones that all came back with a stale code wait seconds."""
    from grace_arena.server.guard import Guard

    class Socket:  # (a connection, as the guard keeps it: weakly)
        pass

    for connection in (None, Socket()):  # new sockets, or one socket
        guard, now, looked_at = Guard(), 0.0, 0
        while now < 600:
            if guard.wait("a", now, connection=connection) == 0:
                looked_at += SLOTS
                for _ in range(SLOTS):
                    guard.failed("a", now, connection=connection)
            now += 0.25
        if connection is None:
            assert looked_at <= ADDRESS_BURST + ADDRESS_RATE * 600 + SLOTS
        else:
            assert looked_at <= BURST + RATE * 600 + SLOTS
    club = Guard()
    for _ in range(ADDRESS_BURST + 40):
        club.failed("nat", 0.0)
    assert club.wait("nat", 0.0) <= 12.0


def test_wrong_tokens_count_as_guesses(db_url):
    settings = Settings(
        db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="x", first_match=two_teams()
    )
    with LiveServer(settings) as server:
        room = server.room()
        request = urllib.request.Request(
            f"{server.http_url}/api/matches", headers={"Authorization": "Bearer nope"}
        )
        for _ in range(BURST):
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(request)
            assert refused.value.code == 401
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request)
        assert refused.value.code == 429
        mod = Client(server.ws_url)
        with clients(mod):  # one socket's wrong tokens hold it
            for _ in range(BURST):
                mod.send(type="hello", role="moderator", match_id=room.rm.id, token="y" * 32)
                assert mod.wait("error")["code"] == "unauthorized"
            mod.send(type="hello", role="moderator", match_id=room.rm.id, token="y" * 32)
            assert mod.wait("error")["code"] == "rate_limited"


def _join_all(url: str, code: str, names: list[tuple[str, str]]) -> list[dict]:
    """Each (team, name) joins on a connection of its own, all at once; the replies. Every
    connection stays open until all have replied (one that closed after its reply would leave
    its name free for the next: a phone that left, not two at once)."""

    async def one(team: str, name: str, replied: list[int], everyone: asyncio.Event) -> dict:
        async with connect(url, open_timeout=20, ping_interval=None) as ws:
            await ws.send(json.dumps({"type": "hello", "role": "player", "join_code": code}))
            while json.loads(await ws.recv())["type"] != "welcome":
                pass
            await ws.send(json.dumps({"type": "join", "team": team, "name": name}))
            result = None
            while result is None:
                reply = json.loads(await ws.recv())
                if reply["type"] == "error":
                    result = reply
                elif reply["type"] == "joined":  # a seat too, or the reason there is none
                    while result is None:
                        after = json.loads(await ws.recv())
                        if after["type"] in ("state", "waiting", "next_match", "error"):
                            result = {**reply, "then": after}
            replied.append(1)
            if len(replied) == len(names):
                everyone.set()
            await everyone.wait()
            return result

    async def run() -> list[dict]:
        replied: list[int] = []
        everyone = asyncio.Event()
        return await asyncio.gather(*(one(t, n, replied, everyone) for t, n in names))

    return asyncio.run(run())


def test_a_match_takes_its_limit_of_players_under_joins_that_arrive_together(db_url):
    settings = Settings(
        db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="x", first_match=two_teams(),
        max_players_per_match=20, new_names_per_address=100,
    )  # fmt: skip
    with LiveServer(settings) as server:
        room = server.room()
        replies = _join_all(
            server.ws_url,
            room.join_code,
            [("red" if i % 2 else "blue", f"P{i}") for i in range(45)],
        )
        joined = [r for r in replies if r["type"] == "joined"]
        refused = [r for r in replies if r["type"] == "error"]
        assert len(joined) == 20 and len(refused) == 25
        assert all("full (20 players)" in r["message"] for r in refused)
        assert sum(len(p) for p in room.match.state.players.values()) == 20


def test_an_event_registers_no_more_players_than_its_rooms_take(db_url):
    """1,000 joins to an event's room registered 1,000 players for good: now an event takes
    as many as its rooms seat (``max_players_per_match`` each), whatever the joins' order."""
    make_event(db_url)
    with event_server(db_url, max_players_per_match=15, new_names_per_address=100) as server:
        code = code_of(server.events.plans[next(iter(server.events.plans))], "1")
        names = [("red" if i % 2 else "blue", f"Player {i}") for i in range(60)]
        replies = _join_all(server.ws_url, code, names)
        refused = [r for r in replies if r["type"] == "error"]
        registered = [r for r in replies if r["type"] == "joined"]
        assert len(registered) == 30 and len(refused) == 30  # 2 rooms of 15
        assert all("this event is full (30 players)" in r["message"] for r in refused)
        # the players who got in and whose team plays here are seated, up to the match's limit
        live = server.events.live(server.events.rooms[code])
        humans = [t.id for t in live.match.config.teams if t.kind.value == "human"]
        assert sum(len(live.match.state.players[t]) for t in humans) <= 15
    engine = make_engine(db_url)
    with Session(engine) as session:
        humans = session.exec(
            select(func.count()).select_from(EventPlayerRow).where(EventPlayerRow.kind == "human")
        ).one()
    engine.dispose()
    assert humans == 30


def test_a_player_whose_phone_dropped_keeps_a_place_a_while_in_a_full_event(db_url, monkeypatch):
    """A player whose connection ended without their leaving (turned away: the match is full;
    the network dropped) keeps a place for a while: a stranger's new name does not take it
    meanwhile, and the player comes back to it. Once it lapses, or once the player's phone
    closes its connection itself, the place is free."""
    make_event(db_url)
    with event_server(db_url, max_players_per_event=2, new_names_per_address=100) as server:
        code = code_of(server.events.plans[next(iter(server.events.plans))], "1")

        def join(name: str) -> tuple[Client, dict]:
            client = Client(server.ws_url)
            client.send(type="hello", role="player", join_code=code)
            client.wait("welcome")
            client.send(type="join", team="red", name=name)
            return client, client.wait(lambda m: m["type"] in ("joined", "error"))

        def gone(player: str) -> None:
            """Wait until no connection of the server plays as ``player`` (it saw it go)."""
            deadline = time.time() + 10
            while any(p == player for _, p in list(server.events._claimed.values())):
                assert time.time() < deadline, f"{player} still connected"
                time.sleep(0.02)

        def drop(client: Client, player: str) -> None:
            """The phone's network drops: no close frame, the socket just ends."""
            client.ws.socket.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(Exception):
                client.close()
            gone(player)

        alice, said = join("Alice")
        bob, said_too = join("Bob")
        assert said["type"] == said_too["type"] == "joined"
        drop(alice, said["player"])
        carol, refused = join("Carol")
        assert refused["type"] == "error" and "full (2 players)" in refused["message"]
        carol.close()
        alice, again = join("Alice")  # Alice's place was kept for her
        assert again["type"] == "joined" and again["player"] == said["player"]
        alice.close()  # she leaves: her place is free at once
        gone(said["player"])
        carol, taken = join("Carol")
        assert taken["type"] == "joined"
        drop(carol, taken["player"])
        monkeypatch.setattr("grace_arena.server.rooms.PLACE_KEPT", 0.0)  # (it lapsed)
        dave, also = join("Dave")
        assert also["type"] == "joined"
        for client in (bob, dave):
            client.close()


def test_two_joins_of_one_name_at_once_are_one_player(db_url):
    """In an event and in a match of its own: joins of one name that arrive together make one
    player; each is that player, or told the name is in use on another device."""
    make_event(db_url)
    with event_server(db_url) as server:
        code = code_of(server.events.plans[next(iter(server.events.plans))], "1")
        replies = _join_all(
            server.ws_url, code, [("red", "Alice"), ("red", "ALICE "), ("red", "alice")]
        )
        joined = [r for r in replies if r["type"] == "joined"]
        assert len(joined) == 1  # the others: in use (the first took the player at once)
        assert all(r["code"] == "in_use" for r in replies if r["type"] == "error")
    settings = Settings(
        db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="x", first_match=two_teams()
    )
    with LiveServer(settings) as server:
        room = server.room()
        names = ["Sam", "SAM", "sam", "Sam ", "\uff33\uff41\uff4d"]  # the last full-width
        replies = _join_all(server.ws_url, room.join_code, [("red", n) for n in names])
        joined = [r for r in replies if r["type"] == "joined"]
        assert joined and len({r["player"] for r in joined}) == 1
        assert all(r["code"] == "in_use" for r in replies if r["type"] == "error")
        # the spelling of whichever join arrived first (the threads race)
        (stored,) = room.match.state.players["red"].values()
        assert stored in {"Sam", "SAM", "sam"}


def test_the_name_of_a_player_who_is_playing_is_not_anyone_elses(db_url):
    """A stranger with the room's code who joins with the name of a player on the floor (the
    displays show it) is refused: it used to become that player, token and all. Once that
    player's phone is gone, the name comes back to whoever joins with it (a phone that died)."""
    settings = Settings(
        db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="x", first_match=two_teams()
    )
    with LiveServer(settings) as server:
        room = server.room()
        dana, stranger = Client(server.ws_url), Client(server.ws_url)
        with clients(dana, stranger):
            for c in (dana, stranger):
                c.send(type="hello", role="player", join_code=room.join_code)
                c.wait("welcome")
            dana.send(type="join", team="red", name="Dana Whitfield")
            joined = dana.wait("joined")
            stranger.send(type="join", team="red", name="DANA WHITFIELD")
            refused = stranger.wait("error")
            assert refused["code"] == "in_use" and "Dana Whitfield" in refused["message"]
            dana.close()
            deadline = time.time() + 10
            while any(not c.closed for c in room.connections if c.player == joined["player"]):
                assert time.time() < deadline
                time.sleep(0.05)
            stranger.send(type="join", team="red", name="Dana Whitfield")
            assert stranger.wait("joined")["player"] == joined["player"]
        assert list(room.match.state.players["red"].values()) == ["Dana Whitfield"]


def test_a_server_token_is_its_events_only(db_url):
    """Two events served from one record with one secret: the server token of one is not the
    other's (it used to list the other's rooms and moderator tokens), and a server of an event
    tells nothing of another event's match."""
    make_event(db_url, name="ev1")
    make_event(db_url, name="ev2")
    with event_server(db_url, event="ev1") as one, event_server(db_url, event="ev2") as two:
        token = one.events.tokens.server()
        assert token != two.events.tokens.server()

        def get(server, path: str, token: str) -> int:
            request = urllib.request.Request(
                server.http_url + path, headers={"Authorization": f"Bearer {token}"}
            )
            try:
                with urllib.request.urlopen(request) as reply:
                    return reply.status
            except urllib.error.HTTPError as refused:
                return refused.code

        assert get(one, "/api/events/ev1/rooms", token) == 200
        assert get(two, "/api/events/ev2/rooms", token) == 401
        theirs = next(iter(two.arena.rooms))
        assert get(one, f"/api/matches/{theirs}/summary", token) == 404
        ours = next(iter(one.arena.rooms))
        assert get(one, f"/api/matches/{ours}/summary", token) == 200
        # a server of matches of its own on the record (the same secret), and a survey's
        own = Settings(db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="s3cret",
                       first_match=two_teams())  # fmt: skip
        survey = Settings(db_url=db_url, secret="s3cret", token_scope="survey")
        with LiveServer(own) as plain, LiveServer(survey) as surveys:
            tokens = {one.events.tokens.server(), two.events.tokens.server(),
                      plain.events.tokens.server(), surveys.events.tokens.server()}  # fmt: skip
            assert len(tokens) == 4
            own_token = plain.events.tokens.server()
            assert get(plain, f"/api/matches/{ours}/summary", own_token) == 404
            mine = next(iter(plain.arena.rooms))
            assert get(plain, f"/api/matches/{mine}/summary", own_token) == 200
            assert (
                get(surveys, f"/api/matches/{ours}/summary", surveys.events.tokens.server()) == 404
            )


def test_a_phone_that_stopped_answering_gives_its_name_to_the_next(db_url):
    """A phone whose Wi-Fi dropped (its socket not known to be closed, its pings unanswered)
    plays no more: the player's next phone, its token lost, joins by name as that player (it
    used to be refused for the ~40 s the web server takes to notice); the silent socket is
    closed. A phone that answers keeps its name."""
    settings = Settings(
        db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="x", first_match=two_teams(),
        ping_interval=0.3,
    )  # fmt: skip
    with LiveServer(settings) as server:
        room = server.room()
        old, new = Client(server.ws_url), Client(server.ws_url)
        with clients(old, new):
            for c in (old, new):
                c.send(type="hello", role="player", join_code=room.join_code)
                c.wait("welcome")
            old.send(type="join", team="red", name="Ivy")
            joined = old.wait("joined")
            _read_for(old, 1.0)  # it answers pings: it plays
            new.send(type="join", team="red", name="Ivy")
            assert new.wait("error")["code"] == "in_use"
            time.sleep(1.5)  # now it answers nothing (it is not read)
            new.send(type="join", team="red", name="Ivy")
            assert new.wait("joined")["player"] == joined["player"]
            with pytest.raises(ConnectionClosed):
                _read_for(old, 3.0)
            assert old.ws.close_code == 4002


def _read_for(client: Client, seconds: float) -> None:
    """Read (answering pings) for ``seconds``."""
    end = time.time() + seconds
    while time.time() < end:
        with contextlib.suppress(TimeoutError):
            client._next(0.05)


def test_the_server_token_of_an_event_is_one_however_the_event_was_named(db_url):
    plan = make_event(db_url, name="ev1")
    with (
        event_server(db_url, event="ev1") as by_name,
        event_server(db_url, event=str(plan.id)) as by_id,
    ):
        assert by_name.events.tokens.server() == by_id.events.tokens.server()


def test_one_phone_guessing_behind_a_nat_holds_its_socket_not_its_neighbours(db_url, monkeypatch):
    """A club's phones share one address. One of them sends a wrong code every second for a
    minute (the guard's clock is the test's) while its neighbours' right-code hellos arrive,
    one a second, the moderator's take-over among them: every right code is looked at (52 of
    58 used to be refused, the whole address held). A script that opens a socket per guess,
    ten a second, is held at the address's ceiling all the same: then even a right code waits.
    """
    from grace_arena.server import guard

    now = [1000.0]
    monkeypatch.setattr(guard, "time", types.SimpleNamespace(monotonic=lambda: now[0]))
    settings = Settings(
        db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="x", first_match=two_teams()
    )
    with LiveServer(settings) as server:
        room = server.room()
        code, token = room.join_code, server.run(server.events.match_moderator_token(room.rm.id))
        hostile, refused, held = Client(server.ws_url), [], []
        with clients(hostile, moderator := Client(server.ws_url)):
            moderator.send(type="hello", role="moderator", match_id=room.rm.id, token=token)
            moderator.wait("welcome")
            for second in range(58):
                hostile.send(type="hello", role="player", join_code=f"ZZZ{second:03d}")
                held.append(hostile.wait("error")["code"])
                if second == 30:  # the moderator's laptop reconnects and takes over
                    again = Client(server.ws_url)
                    with clients(again):
                        again.send(type="hello", role="moderator", match_id=room.rm.id,
                                   token=token, take_over=True)  # fmt: skip
                        reply = again.wait(lambda m: m["type"] in ("welcome", "error"))
                else:
                    neighbour = Client(server.ws_url)
                    with clients(neighbour):
                        neighbour.send(type="hello", role="player", join_code=code)
                        reply = neighbour.wait(lambda m: m["type"] in ("welcome", "error"))
                if reply["type"] != "welcome":
                    refused.append((second, reply))
                now[0] += 1.0
        assert refused == []
        # the guessing socket itself is held: its burst, then one guess every 2 s
        assert held[:BURST] == ["not_found"] * BURST and "rate_limited" in held[BURST:]
        assert held.count("not_found") <= BURST + RATE * 58 + SLOTS

        async def socket_per_guess(n: int, start: int) -> list[str]:
            codes = []
            for i in range(n):
                async with connect(server.ws_url) as ws:
                    hello = {"type": "hello", "role": "player", "join_code": f"Y{start + i:05d}"}
                    await ws.send(json.dumps(hello))
                    while (reply := json.loads(await ws.recv()))["type"] != "error":
                        pass
                    codes.append(reply["code"])
            return codes

        script = []
        for second in range(30):
            now[0] += 1.0
            script += server.run(socket_per_guess(10, second * 10))
        looked_at = script.count("not_found")
        # the hostile socket's guesses counted too; the ceiling's burst and rate hold the rest
        assert looked_at <= ADDRESS_BURST + ADDRESS_RATE * 30 + SLOTS, looked_at
        assert script[-10:].count("rate_limited") >= 10 - ADDRESS_RATE - SLOTS, script[-10:]
        late = Client(server.ws_url)
        with clients(late):
            late.send(type="hello", role="player", join_code=code)
            assert late.wait("error")["code"] == "rate_limited"


def test_a_kept_token_does_not_play_beside_its_player(db_url):
    """A token kept from a phone (a shared tablet, a copied link) says hello while its player
    plays: refused ``in_use`` (it used to play as them, on a second device, the check skipped
    for token hellos). Once the player's phone stops answering, the token takes its seat back
    and the silent socket is closed."""
    settings = Settings(
        db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="x", first_match=two_teams(),
        ping_interval=0.3,
    )  # fmt: skip
    with LiveServer(settings) as server:
        room = server.room()
        alice, kept = Client(server.ws_url), Client(server.ws_url)
        with clients(alice, kept):
            alice.send(type="hello", role="player", join_code=room.join_code)
            alice.wait("welcome")
            alice.send(type="join", team="red", name="Alice")
            token = alice.wait("joined")["token"]
            _read_for(alice, 1.0)  # she answers pings: she plays
            kept.send(type="hello", role="player", join_code=room.join_code, token=token)
            refused = kept.wait(lambda m: m["type"] in ("error", "joined"))
            assert refused["type"] == "error" and refused["code"] == "in_use", refused
            assert "Alice" in refused["message"]
            _read_for(alice, 0.5)  # still hers
            time.sleep(1.5)  # now her phone answers nothing (it is not read)
            kept.send(type="hello", role="player", join_code=room.join_code, token=token)
            assert kept.wait("joined")["name"] == "Alice"
            with pytest.raises(ConnectionClosed):
                _read_for(alice, 3.0)
            assert alice.ws.close_code == 4002
