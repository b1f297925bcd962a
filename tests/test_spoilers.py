"""Who may see what a room reads: one rule for every role and every door. In an event every
room of a round reads the same packet; while room 2 has yet to read a tossup, nothing that
room 1's code opens shows its words or its answer to anyone but room 1's own moderator, its
players, and a display that holds the room's or the organiser's grant."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable

import pytest
from event_helpers import code_of, event_server, make_event, room_moderator
from live import Client, clients

from grace_arena.core.packet import SAMPLE_PACKET_PATH, load_packet

pytestmark = pytest.mark.slow


def _spoiler_words() -> tuple[str, str]:
    """A stretch of tossup 1's first words and its answer line, as the packet gives them."""
    first = load_packet(SAMPLE_PACKET_PATH).tossups[0]
    return " ".join(first.text.split()[:3]), first.answer


def _http(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as reply:
            return reply.status, reply.read().decode()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read().decode()


def _ws(server, **hello) -> tuple[str, str]:
    """Say ``hello`` on a new connection, then every message a client may send; what came
    back (as text) and the first reply's kind (``state`` or the error's code)."""
    client = Client(server.ws_url)
    with clients(client):
        client.send(type="hello", **hello)
        first = client.wait(
            lambda m: m["type"] in ("state", "error", "next_match", "waiting", "welcome")
        )
        for kind in ("buzz", "step", "start_tossup", "reveal", "answer", "ping"):
            client.send(type=kind, sent=0.0, text="x", unit="word")
        client.drain(0.5)
        seen = json.dumps(client.received)
    return seen, first.get("code", first["type"])


def _words_in(seen: str) -> bool:
    words, answer = _spoiler_words()
    shown = seen.replace('", "', " ").replace('","', " ")  # a list of words, as text
    return words in shown or answer in seen


def test_a_room_reads_to_no_door_of_another_room_before_that_room_reads_it(tmp_path):
    db_url = f"sqlite:///{tmp_path / 'record.db'}"
    plan = make_event(db_url, rounds=1, defaults={"answer_time": None, "wpm": 600})
    with event_server(db_url) as server:
        room1, room2 = code_of(plan, "1"), code_of(plan, "2")
        events = server.events
        er1, er2 = events.rooms[room1], events.rooms[room2]
        match1 = events.live_in(room1).rm.id
        with clients(room_moderator(server, room1)) as (m1,):
            # room 1 reads tossup 1 to its end (room 2 has not started it), then reads on
            m1.send(type="start_tossup")
            m1.state(lambda s: s["match"]["phase"] == "reading")
            m1.state(lambda s: s["tossup"]["position"] >= 5)
            assert _words_in(json.dumps(m1.received))  # (what the doors must not show)
            m1.send(type="throw_out")
            m1.state(lambda s: s["match"]["phase"] == "thrown_out")
            base = server.http_url
            room1_grant = events.tokens.display(er1.event_id, er1.room_id)
            room2_grant = events.tokens.display(er2.event_id, er2.room_id)
            event_grant = events.tokens.display(er1.event_id)
            # (door, what it shows: True when room 1's words reach it)
            ws_doors: list[tuple[str, dict, bool]] = [
                ("display, no grant", {"role": "display", "join_code": room1}, False),
                (
                    "display, a wrong grant",
                    {"role": "display", "join_code": room1, "token": "x" * 32},
                    False,
                ),
                (
                    "display, room 2's grant",
                    {"role": "display", "join_code": room1, "token": room2_grant},
                    False,
                ),
                (
                    "display, a player's token",
                    {"role": "display", "join_code": room1, "token": "p-1.abc"},
                    False,
                ),
                (
                    "moderator, no token",
                    {"role": "moderator", "join_code": room1, "match_id": match1},
                    False,
                ),
                ("player, no token", {"role": "player", "join_code": room1}, False),
                (
                    "display, room 1's grant",
                    {"role": "display", "join_code": room1, "token": room1_grant},
                    True,
                ),
                (
                    "display, the event's grant",
                    {"role": "display", "join_code": room1, "token": event_grant},
                    True,
                ),
                (
                    "display, the server token",
                    {"role": "display", "join_code": room1, "token": events.tokens.server()},
                    True,
                ),
            ]
            http_doors: list[tuple[str, str, Callable[[int], bool]]] = [
                ("replay", f"/api/replay?match={match1}&tossup=1&code={room1}", lambda s: s == 409),
                ("join info", f"/api/join/{room1}", lambda s: s == 200),
                ("standings", "/api/events/night/standings", lambda s: s == 200),
                ("scoresheet", f"/scoresheet?match={match1}&code={room1}", lambda s: s == 200),
                ("summary", f"/api/matches/{match1}/summary", lambda s: s == 401),
                ("matches", "/api/matches", lambda s: s == 401),
                ("rooms", "/api/events/night/rooms", lambda s: s == 401),
                ("protests", f"/api/matches/{match1}/protests", lambda s: s == 401),
                ("display page", f"/display?code={room1}", lambda s: s == 200),
            ]
            outcome = {}
            for door, hello, shows in ws_doors:
                seen, first = _ws(server, **hello)
                outcome[door] = (_words_in(seen), first)
                assert _words_in(seen) is shows, (door, first, seen[:400])
            for door, path, status_ok in http_doors:
                status, body = _http(base + path)
                assert status_ok(status), (door, status, body[:300])
                assert not _words_in(body), (door, body[:400])
            # the refused display is told why, and what grants it
            assert outcome["display, no grant"][1] == "unauthorized"
            # the organiser's list of rooms gives each projector's link, with its grant
            request = urllib.request.Request(
                f"{base}/api/events/night/rooms",
                headers={"Authorization": f"Bearer {events.tokens.server()}"},
            )
            with urllib.request.urlopen(request, timeout=30) as reply:
                listed = {r["join_code"]: r["display_url"] for r in json.loads(reply.read())}
            assert listed[room1].endswith(f"/display?code={room1}&token={room1_grant}")
            # room 2's own display is refused too: room 1 has tossup 2 yet to read
            seen, first = _ws(server, role="display", join_code=room2)
            assert first == "unauthorized" and "room 1" in seen
            # once room 2 has read it all, room 1's display needs no grant
            with clients(room_moderator(server, room2)) as (m2,):
                m2.send(type="end_match")
                m2.wait(lambda m: m["type"] == "state" and m["match"]["phase"] == "ended")
            m1.send(type="start_tossup")
            m1.state(lambda s: s["match"]["phase"] == "reading")
            seen, first = _ws(server, role="display", join_code=room1)
            assert first == "welcome" and '"type": "state"' in seen, seen[:400]


def test_a_match_of_its_own_shows_its_display_to_its_code(server):
    """One room reads its packet alone: its display needs no grant (the projector of a club's
    practice opens with the code)."""
    room = server.room()
    client = Client(server.ws_url)
    with clients(client):
        client.send(type="hello", role="display", join_code=room.join_code)
        client.state()
