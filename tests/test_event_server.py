"""An event's rooms served live: room codes, rounds, players who come back, standings."""

from __future__ import annotations

import json
import urllib.request

import pytest
from backends import on_both_backends
from event_helpers import (
    code_of,
    end_round_in,
    event_server,
    make_event,
    rehello,
    room_moderator,
    room_player,
)
from live import Client, clients, play_a_correct_buzz

from grace_arena.record.schedule import event_standings, load_plan


def end_match(mod: Client) -> None:
    mod.send(type="end_match")
    mod.wait("next_match")


@on_both_backends
def test_rooms_play_their_rounds_and_players_follow_their_team(db_url):
    plan = make_event(db_url)
    room1, room2 = code_of(plan, "1"), code_of(plan, "2")
    with event_server(db_url) as server:
        # round 1 (grace format): room 1 Red vs Robo, room 2 Blue vs Careful
        mod1 = room_moderator(server, room1)
        mod2 = room_moderator(server, room2)
        alice = room_player(server, room1, "red", "Alice")
        bob = room_player(server, room2, "blue", "Bob")
        with clients(mod1, mod2, alice, bob):
            assert [t["id"] for t in alice.welcome["teams"]] == ["red", "blue"]
            # the join page names what the code opened: the event, the room, the round
            assert alice.welcome["event"]["title"] == "Night"
            assert (alice.welcome["event"]["room"], alice.welcome["event"]["round"]) == ("1", 1)
            assert bob.welcome["event"]["room"] == "2"
            first = alice.state()
            assert first["event"] == {
                "name": "night",
                "title": "Night",
                "room": "1",
                "join_code": room1,
                "round": 1,
                "rounds": 3,
                "waiting": None,
            }
            assert [t["name"] for t in first["teams"]] == ["Red", "Robo"]
            bob.state()
            play_a_correct_buzz(mod1, alice)

            # room 1 ends its match; its next one, round 2's Red vs Blue, waits for Blue's
            # round-1 match in room 2: the moderator sees why, Alice waits
            mod1.send(type="end_match")
            ended = mod1.state(lambda s: s["event"]["waiting"] is not None)
            assert ended["match"]["phase"] == "ended"
            assert ended["event"]["waiting"] == (
                "Room 1's round 2 match, Red vs Blue, starts when round 1 in room 2 (Blue) is over."
            )
            # Alice is told the same, as her team's wait: against whom, once what is over
            assert alice.wait("waiting")["message"] == (
                "Red plays round 2 in room 1 against Blue, once round 1 in room 2 (Blue) is over."
            )

            # room 2 ends round 1: room 1 goes on to round 2, and Alice and Bob with it; room
            # 2's next match is round 3's (Blue vs Robo), after Blue's round 2: room 2 waits
            mod2.send(type="end_match")
            ended = mod2.state(lambda s: s["event"]["waiting"] is not None)
            assert ended["match"]["phase"] == "ended"
            assert ended["event"]["waiting"] == (
                "Room 2's round 3 match, Blue vs Robo, starts when round 2 in room 1 (Blue) "
                "is over."
            )
            for phone in (alice, bob):
                moved = phone.wait("next_match")
                assert moved["join_code"] == room1
                rehello(phone, room1)
            assert alice.wait("joined")["name"] == "Alice"
            second = alice.state()
            assert second["event"]["round"] == 2
            assert [t["name"] for t in second["teams"]] == ["Red", "Blue"]
            bob.wait("joined")
            assert bob.state()["match"]["id"] == second["match"]["id"]
            moved = mod1.wait("next_match")
            assert moved["join_code"] == room1
            # (a room may play several matches in a round: the next one is named by its teams)
            assert moved["message"] == "Room 1 moves on to its next match: round 2, Red vs Blue"
            rehello(
                mod1,
                room1,
                role="moderator",
                token=server.run(server.events.moderator_token(server.events.rooms[room1])),
            )
            mod1.wait("welcome")
            assert mod1.state()["match"]["id"] == second["match"]["id"]

            # standings after the rulings so far: Red 15 (a power: the buzz came on the first
            # words), a win over Robo
            standings = json.load(
                urllib.request.urlopen(f"{server.http_url}/api/events/night/standings")
            )
            rows = {r["team"]: r for r in standings["rows"]}
            assert (rows["red"]["points"], rows["red"]["correct"], rows["red"]["powers"]) == (
                15,
                1,
                1,
            )
            assert (rows["red"]["won"], rows["robo"]["lost"]) == (1, 1)
            # round 2 has begun no tossup: nothing under way; Blue and Careful ended level
            assert rows["red"]["live"] == 0 and rows["blue"]["tied"] == 1
            assert standings["rows"][0]["team"] == "red"
            assert {r["room"]: r["round"] for r in standings["rooms"]} == {"1": 2, "2": 3}
            assert standings["rooms"][1]["match_id"] is None  # waits: not started
            # round 2's lobby: no tossup yet
            assert standings["rooms"][0]["tossups_played"] == 0
            # the projector's schedule: this round's matches by room, and who is next
            assert [
                (m["round"], m["room"], m["teams"], m["status"]) for m in standings["schedule"]
            ] == [
                (2, "1", ["Red", "Blue"], "playing"),
                (3, "1", ["Red", "Careful"], "next"),
                (3, "2", ["Blue", "Robo"], "next"),
            ]

            # room 1's round 2 ends: both rooms go on to round 3, room 2's moderator too
            end_match(mod1)
            assert mod2.wait("next_match")["join_code"] == room2
            rehello(
                mod2,
                room2,
                role="moderator",
                token=server.run(server.events.moderator_token(server.events.rooms[room2])),
            )
            mod2.wait("welcome")
            third = mod2.state()
            assert third["event"]["round"] == 3 and third["event"]["waiting"] is None
            assert [t["name"] for t in third["teams"]] == ["Blue", "Robo"]

    # the record agrees with the server
    _, rows = event_standings(server.arena.engine, "night")
    assert {s.team: s.points for s in rows}["red"] == 15
    games = load_plan(server.arena.engine, "night").games
    # round 1 x2, round 2, round 3 x2
    assert sum(g.match_id is not None for g in games) == 5


@on_both_backends
def test_a_player_who_drops_between_rounds_comes_back_to_the_rooms_next_match(db_url):
    plan = make_event(db_url)
    room1 = code_of(plan, "1")
    with event_server(db_url) as server:
        mod = room_moderator(server, room1)
        alice = room_player(server, room1, "red", "Alice")
        token = alice.joined["token"]
        alice.state()
        alice.close()  # the phone drops ...
        mod2 = room_moderator(server, code_of(plan, "2"))
        with clients(mod, mod2):
            mod.send(type="end_match")  # ... while the round ends; round 2 waits for room 2
            mod.state(lambda s: s["event"]["waiting"] is not None)
            back = Client(server.ws_url)
            with clients(back):
                back.send(type="hello", role="player", join_code=room1, token=token)
                back.wait("welcome")
                assert back.wait("joined")["name"] == "Alice"
                assert back.wait("waiting")["message"].startswith(
                    "Red plays round 2 in room 1 against Blue, once"
                )
                mod2.send(type="end_match")  # room 1's round 2 opens: the phone is sent there
                assert back.wait("next_match")["join_code"] == room1
                back.send(type="hello", role="player", join_code=room1, token=token)
                back.wait("joined")
                state = back.state()
                assert state["event"]["round"] == 2
                roster = server.arena.rooms[state["match"]["id"]].match.state.players["red"]
                assert list(roster.values()) == ["Alice"]


def test_the_same_name_on_another_phone_is_the_same_player(db_url):
    from grace_arena.record.db import make_engine
    from grace_arena.record.roster import issue_codes

    plan = make_event(db_url, players=[("red", "Alice")])
    room1 = code_of(plan, "1")
    registered = next(p.id for p in plan.players if p.name == "Alice")
    (issued,) = issue_codes(make_engine(db_url), plan.id)
    with event_server(db_url) as server:
        # a name of the roster, with its claim code
        phone = room_player(server, room1, "red", "alice", claim=issued.code)
        with clients(phone):
            assert phone.joined["player"] == registered
            assert phone.joined["name"] == "Alice"


def test_a_player_whose_team_has_no_match_yet_waits_and_is_sent_on(db_url):
    plan = make_event(db_url)
    room1, room2 = code_of(plan, "1"), code_of(plan, "2")
    with event_server(db_url) as server:
        mod1 = room_moderator(server, room1)
        # Blue's first match is in room 2; Bob scans room 1's code by mistake
        bob = room_player(server, room1, "blue", "Bob")
        with clients(mod1, bob):
            sent = bob.wait(lambda m: m["type"] in ("next_match", "waiting", "state"))
            assert sent["type"] == "next_match" and sent["join_code"] == room2
            # back in room 1 after round 1 there: Blue's round-2 match is in room 1 but room 2
            # has not finished round 1, so Bob waits
            rehello(bob, room2)
            bob.wait("joined")
            bob.state()
            # room 2's next match (round 3) waits for round 2 (Blue): the room stays, Bob waits
            mod2 = room_moderator(server, room2)
            mod2.send(type="end_match")
            mod2.state(lambda s: s["event"]["waiting"] is not None)
            mod2.close()
            sent = bob.wait(lambda m: m["type"] in ("next_match", "waiting"))
            assert sent["type"] == "waiting"
            assert sent["message"] == (
                "Blue plays round 2 in room 1 against Red, after Red vs Robo there."
            )
            end_match(mod1)  # room 1 opens round 2: Bob is sent there
            sent = bob.wait("next_match")
            assert sent["join_code"] == room1
            rehello(bob, room1)
            bob.wait("joined")
            assert bob.state()["event"]["round"] == 2


def test_a_waiting_player_is_told_again_what_the_team_waits_for_when_it_changes(db_url):
    from grace_arena.record.schedule import TeamEntry

    # round 1 in room 1: Red vs Robo, then Green vs Robo; in room 2: Blue vs Careful, then
    # Gold vs Careful. Round 2 in room 1: Red vs Gold.
    teams = [TeamEntry(t.lower(), t) for t in ("Red", "Blue", "Green", "Gold")]
    models = [
        TeamEntry("robo", "Robo", "model", "tfidf", 0.5),
        TeamEntry("careful", "Careful", "model", "tfidf", 0.9),
    ]
    plan = make_event(db_url, teams=[*teams, *models], rounds=2)
    room1 = code_of(plan, "1")
    with event_server(db_url) as server:
        mod1 = room_moderator(server, room1)
        alice = room_player(server, room1, "red", "Alice")
        with clients(mod1, alice):
            alice.state()
            end_match(mod1)  # Red's round 1 is over; room 1 goes on to Green vs Robo
            alice.wait("next_match")
            rehello(alice, room1)
            alice.wait("joined")
            assert alice.wait("waiting")["message"] == (
                "Red plays round 2 in room 1 against Gold, after Green vs Robo there, "
                "once round 1 in room 2 (Gold) is over."
            )
            # Green vs Robo ends: room 1 now waits for Gold's match in room 2, and Alice is
            # told so, as the room's moderator is
            mod_token = server.run(server.events.moderator_token(server.events.rooms[room1]))
            rehello(mod1, room1, role="moderator", token=mod_token)
            mod1.wait("welcome")
            mod1.state()
            mod1.send(type="end_match")
            ended = mod1.state(lambda s: s["event"]["waiting"] is not None)
            assert ended["event"]["waiting"] == (
                "Room 1's round 2 match, Red vs Gold, starts when round 1 in room 2 (Gold) is over."
            )
            assert alice.wait("waiting")["message"] == (
                "Red plays round 2 in room 1 against Gold, once round 1 in room 2 (Gold) is over."
            )


def test_a_rooms_join_code_has_its_join_url_qr_code_and_summaries_for_its_moderator(db_url):
    plan = make_event(db_url)
    room1 = code_of(plan, "1")
    with event_server(db_url) as server:
        base = server.http_url
        info = json.load(urllib.request.urlopen(f"{base}/api/join/{room1.lower()}"))
        assert info["join_code"] == room1 and info["join_url"] == f"{base}/?code={room1}"
        with urllib.request.urlopen(f"{base}/api/join/{room1}/qr.svg") as reply:
            assert reply.headers["Content-Type"] == "image/svg+xml"
        standings = json.load(urllib.request.urlopen(f"{base}/api/events/night/standings"))
        assert {r["join_code"]: r["join_url"] for r in standings["rooms"]} == {
            r.join_code: f"{base}/?code={r.join_code}" for r in plan.rooms
        }
        # the room's moderator token opens the summary of a match the room has moved on from
        mod = room_moderator(server, room1)
        with clients(mod):
            first = mod.received[-1]["match"]["id"]
            end_round_in(server, code_of(plan, "2"))  # Blue's round 1, before its round 2
            end_match(mod)
        token = server.run(server.events.moderator_token(server.events.rooms[room1]))
        request = urllib.request.Request(
            f"{base}/api/matches/{first}/summary", headers={"Authorization": f"Bearer {token}"}
        )
        assert json.load(urllib.request.urlopen(request))["ended"] is True
        assert server.events.live(server.events.rooms[room1]).rm.id != first


def test_standings_asked_by_any_name_keep_one_reader_per_event(db_url):
    """The standings' URL is public: they are given by the event's name only (not its id: a
    stranger counting 1, 2, 3 learns nothing), a refusal names no event, and asking by any
    name keeps one reader for the event and nothing for the rest."""
    import urllib.error

    plan = make_event(db_url)
    with event_server(db_url) as server:

        def standings(key: str) -> dict:
            with urllib.request.urlopen(f"{server.http_url}/api/events/{key}/standings") as r:
                return json.load(r)

        assert standings("night")["event"] == "night"
        # by its name only: a number would enumerate the record's events
        for unknown in (str(plan.id), f"000{plan.id}", "nope", "nope2", "99999"):
            with pytest.raises(urllib.error.HTTPError) as refused:
                standings(unknown)
            assert refused.value.code == 404
            assert "night" not in refused.value.read().decode()  # nor names them
        assert list(server.events._readers) == [plan.id]
