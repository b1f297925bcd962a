"""A lock-out's fan-out: one encoding per role, the same frame to every socket of a role, and
no client that stops reading holding up the others."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import socket
import time
from typing import Any

from live import LiveServer, clients, moderator, player, two_teams

from grace_arena.core.packet import SAMPLE_PACKET_PATH
from grace_arena.server.app import Settings
from grace_arena.server.frames import DIRECT_WRITE_LIMIT


def _paused_at_a_word(mod) -> None:
    mod.send(type="start_tossup")
    mod.state(lambda s: s["match"]["phase"] == "reading")
    mod.send(type="pause")
    mod.state(lambda s: s["match"]["paused"])
    mod.send(type="step", unit="word")
    mod.state(lambda s: (s["tossup"] or {}).get("position", -1) >= 0)


def test_a_lockout_is_encoded_once_per_role_and_every_player_gets_the_same_frame(server):
    mod = moderator(server)
    phones = [player(server, "red" if i % 2 else "blue", f"P{i}") for i in range(5)]
    with clients(mod, *phones):
        _paused_at_a_word(mod)
        for phone in phones:
            phone.state(lambda s: (s["tossup"] or {}).get("position", -1) >= 0)
        room = server.room()
        built: list[str] = []
        frames: dict[Any, list[bytes]] = {}

        async def spy() -> None:  # on the server's loop: what the room builds and writes
            state_for = room.state_for

            def counted(role, events=None):
                built.append(role)
                return state_for(role, events)

            room.state_for = counted
            for conn in room.connections:
                write_now = conn.write_now

                def written(data, frame=None, conn=conn, write_now=write_now):
                    if frame is not None:  # a broadcast's (a ping or a reply has none)
                        frames.setdefault(conn, []).append(frame)
                    return write_now(data, frame)

                conn.write_now = written

        server.run(spy())
        phones[0].send(type="buzz")
        locked = [p.state(lambda s: s["floor"] is not None) for p in phones]
        mod.state(lambda s: s["floor"] is not None)
        # every player got the same lock-out, built once for all of them and once for the
        # moderator, and written to every player's socket as the one same frame
        assert all(s == locked[0] for s in locked) and locked[0]["role"] == "player"
        assert sorted(built) == ["moderator", "player"]
        players = [c for c in room.connections if c.role == "player"]
        (mod_conn,) = [c for c in room.connections if c.role == "moderator"]
        assert len(players) == 5 and all(len(frames[c]) == 1 for c in [*players, mod_conn])
        frame = frames[players[0]][0]
        assert all(frames[c][0] is frame for c in players)
        assert frames[mod_conn][0] != frame  # the moderator's own state


def _silent_player(server: LiveServer, join_code: str) -> socket.socket:
    """A player's websocket by hand, with a small receive buffer, that says hello, joins and
    then never reads again (a phone whose page froze)."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", server.port))
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(
        (
            f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    assert b" 101 " in sock.recv(1024)
    for message in (
        {"type": "hello", "role": "player", "join_code": join_code},
        {"type": "join", "team": "red", "name": "Frozen"},
    ):
        payload, mask = json.dumps(message).encode(), os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        sock.sendall(bytes([0x81, 0x80 | len(payload)]) + mask + masked)
    return sock


def test_a_player_that_stops_reading_does_not_hold_up_the_others_lockout(db_url):
    settings = Settings(
        db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="x", first_match=two_teams(),
        max_queue_bytes=64 << 20, rate_per_second=1000.0, rate_burst=1000,
    )  # fmt: skip
    with LiveServer(settings) as server:
        room = server.room()
        mod = moderator(server)
        phones = [player(server, "red" if i % 2 else "blue", f"P{i}") for i in range(3)]
        frozen = _silent_player(server, room.join_code)
        with clients(mod, *phones), contextlib.closing(frozen):
            names = room.match.state.players
            deadline = time.time() + 10
            while not (stuck := [c for c in room.connections if c.role == "player"
                                 and names.get(c.team, {}).get(c.player) == "Frozen"]):  # fmt: skip
                assert time.time() < deadline, "the frozen phone did not join"
                time.sleep(0.05)
                names = room.match.state.players
            (stuck,) = stuck
            _paused_at_a_word(mod)

            async def backlog() -> tuple[bool, int]:
                return stuck._writing, stuck.queue.qsize()

            # states to everyone until the frozen phone's socket takes no more: its writer
            # waits for the socket to drain, and what comes next waits in its own queue
            for _ in range(400):
                for _ in range(50):
                    server.loop.call_soon_threadsafe(room.broadcast_state)
                mod.drain(0.01)
                for phone in phones:
                    phone.drain(0.01)
                writing, queued = server.run(backlog())
                if writing and queued:
                    break
            assert writing and queued, "the frozen phone's socket never filled"
            buffered = stuck._write_now.__self__.transport.get_write_buffer_size()
            assert buffered > DIRECT_WRITE_LIMIT

            phones[0].send(type="buzz")
            for phone in [mod, *phones]:  # everyone who reads has the lock-out...
                phone.state(lambda s: s["floor"] is not None, timeout=30)

            async def still_waiting() -> list[str]:
                return [text for text in list(stuck.queue._queue) if text is not None]

            # ...while the frozen phone's is still in its queue, behind what it did not read
            waiting = server.run(still_waiting())
            lockouts = [i for i, text in enumerate(waiting) if '"floor":{' in text]
            assert lockouts and any('"floor":null' in text for text in waiting[: lockouts[0]])
            assert not stuck.dropped_for_lag and stuck._writing
