"""The replay of an event's tossup: refused while a room of the event has yet to read it (its
text and answer would reach that room before its moderator reads it), shown once every room
has; refused for a match the server does not speak of."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest
from event_helpers import code_of, event_server, make_event, room_moderator
from live import Client, clients

pytestmark = pytest.mark.slow


def replay(server, match_id: int, tossup: int, code: str | None = None) -> tuple[int, dict]:
    """``GET /api/replay`` of the match with its join code (``code``: another one)."""
    if code is None:
        code = server.arena.store.match_row(match_id).join_code
    try:
        with urllib.request.urlopen(
            f"{server.http_url}/api/replay?match={match_id}&tossup={tossup}&code={code}",
            timeout=30,
        ) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read())


def play_dead(mod: Client) -> None:
    """Read the next tossup to its end with nobody buzzing (the reading at 600 wpm)."""
    mod.send(type="start_tossup")
    mod.state(lambda s: s["match"]["phase"] == "reading")
    mod.send(type="throw_out")
    mod.state(lambda s: s["match"]["phase"] == "thrown_out")


def test_an_events_tossup_is_replayed_once_every_room_has_read_it(tmp_path):
    db_url = f"sqlite:///{tmp_path / 'record.db'}"
    # one round: a later round on the same packet would read the tossup again (and keep it
    # from replays until then)
    plan = make_event(
        db_url, rounds=1, defaults={"answer_time": None, "wpm": 600, "exhibition": True}
    )
    with event_server(db_url) as server:
        room1, room2 = code_of(plan, "1"), code_of(plan, "2")
        with clients(room_moderator(server, room1), room_moderator(server, room2)) as (m1, m2):
            match1 = server.events.live_in(room1).rm.id
            match2 = server.events.live_in(room2).rm.id
            assert server.events.live_in(room1).match.config.exhibition  # the event's setting
            play_dead(m1)
            status, body = replay(server, match1, 1)
            assert status == 409, body
            assert body["detail"] == (
                "tossup 1 is yet to be read in room 2 of this event: its replay opens once "
                "every room has read it"
            )
            play_dead(m2)
            status, body = replay(server, match1, 1)
            assert status == 200, body
            assert body["match_id"] == match1 and body["outcome"] == "thrown out by the moderator"
            assert [c["name"] for c in body["curves"]["curves"]] == ["Robo"]
            assert replay(server, match2, 1)[0] == 200
            # the next tossup, under way in room 1: not yet
            m1.send(type="start_tossup")
            m1.state(lambda s: s["match"]["phase"] == "reading")
            status, body = replay(server, match1, 2)
            assert status == 409 and "still being played" in body["detail"]
        # a match that is not this event's: nothing said of it
        status, body = replay(server, 4242, 1, code=room1)
        assert status == 404 and body["detail"] == "no match 4242 here with that join code"


def test_a_tossup_a_later_round_reads_again_waits_for_that_round(tmp_path):
    db_url = f"sqlite:///{tmp_path / 'record.db'}"
    plan = make_event(db_url, rounds=2)  # every round on the same tossups of one packet
    with event_server(db_url) as server:
        room1, room2 = code_of(plan, "1"), code_of(plan, "2")
        with clients(room_moderator(server, room1), room_moderator(server, room2)) as (m1, m2):
            match1 = server.events.live_in(room1).rm.id
            play_dead(m1)
            play_dead(m2)
            status, body = replay(server, match1, 1)
        assert status == 409 and "yet to be read in room 1" in body["detail"], body


def test_a_tossup_another_match_here_has_yet_to_read_waits_for_it(tmp_path):
    """Two matches of their own on one packet, played at once (two rooms of a club night
    without an event): the first's tossup waits until the second has read it too."""
    from live import LiveServer, moderator, two_teams

    from grace_arena.core.packet import SAMPLE_PACKET_PATH
    from grace_arena.server.app import Settings

    settings = Settings(
        db_url=f"sqlite:///{tmp_path / 'record.db'}", packets=[SAMPLE_PACKET_PATH], secret="x"
    )
    with LiveServer(settings) as server:
        ids = []
        for _ in range(2):
            request = urllib.request.Request(
                f"{server.http_url}/api/matches",
                data=two_teams().model_dump_json().encode(),
                headers={
                    "Content-Type": "application/json",
                    "Authorization": f"Bearer {server.events.tokens.server()}",
                },
                method="POST",
            )
            with urllib.request.urlopen(request, timeout=60) as reply:
                ids.append(json.loads(reply.read())["match_id"])
        first, second = ids
        with clients(moderator(server, first), moderator(server, second)) as (m1, m2):
            play_dead(m1)
            status, body = replay(server, first, 1)
            assert status == 409, body
            assert body["detail"] == (
                f"tossup 1 is yet to be read in another match played here (match {second}): "
                "its replay opens once that match has read it"
            )
            play_dead(m2)
            assert replay(server, first, 1)[0] == 200
            assert replay(server, second, 1)[0] == 200


def test_a_malformed_replay_request_is_refused_saying_which_field(tmp_path):
    from live import LiveServer

    from grace_arena.core.packet import SAMPLE_PACKET_PATH
    from grace_arena.server.app import Settings

    settings = Settings(
        db_url=f"sqlite:///{tmp_path / 'record.db'}", packets=[SAMPLE_PACKET_PATH], secret="x"
    )
    with LiveServer(settings) as server:
        for query, field in (
            ("match=0&tossup=1&code=X", "match"),
            ("match=1&tossup=-1&code=X", "tossup"),
            ("match=abc&tossup=1&code=X", "match"),
            (f"match={2**40}&tossup=1&code=X", "match"),
            ("match=1&tossup=100000&code=X", "tossup"),
            ("tossup=1&code=X", "match"),
            ("match=1&tossup=1", "code"),
            (f"match=1&tossup=1&code={'X' * 33}", "code"),
        ):
            try:
                urllib.request.urlopen(f"{server.http_url}/api/replay?{query}", timeout=10)
            except urllib.error.HTTPError as refused:
                assert refused.code == 422, query
                detail = json.loads(refused.read())["detail"]
                assert detail[0]["loc"] == ["query", field], (query, detail)
            else:
                raise AssertionError(f"{query} was answered")


def test_a_replay_is_for_the_holders_of_the_matchs_code_and_wrong_codes_are_guesses(tmp_path):
    """Match ids are counted (1, 2, 3...): a stranger who tries them reads no tossup, no team
    and no player's name or answer without the match's join code, and its wrong codes are
    throttled as any others."""
    from live import LiveServer, moderator, two_teams

    from grace_arena.core.packet import SAMPLE_PACKET_PATH
    from grace_arena.server.app import Settings
    from grace_arena.server.guard import BURST

    settings = Settings(
        db_url=f"sqlite:///{tmp_path / 'record.db'}",
        packets=[SAMPLE_PACKET_PATH],
        secret="x",
        first_match=two_teams(),
    )
    with LiveServer(settings) as server:
        (match_id,) = list(server.arena.rooms)
        code = server.arena.rooms[match_id].join_code
        with clients(moderator(server, match_id)) as (mod,):
            play_dead(mod)
        # no code: refused, naming the field
        try:
            urllib.request.urlopen(
                f"{server.http_url}/api/replay?match={match_id}&tossup=1", timeout=10
            )
        except urllib.error.HTTPError as refused:
            assert refused.code == 422
            assert json.loads(refused.read())["detail"][0]["loc"] == ["query", "code"]
        else:
            raise AssertionError("a replay was given without a code")
        # a wrong code, or another match's: nothing said of the match
        wrong = "ZZZZZZ" if code != "ZZZZZZ" else "YYYYYY"
        status, body = replay(server, match_id, 1, code=wrong)
        assert status == 404, body
        assert body["detail"] == f"no match {match_id} here with that join code"
        assert "Red" not in json.dumps(body)
        # the right code, in any case: the replay
        status, body = replay(server, match_id, 1, code=code.lower())
        assert status == 200 and body["match_id"] == match_id, body
        # wrong codes are guesses: once the address has made its burst of them, even the
        # right code waits
        for _ in range(BURST):
            replay(server, match_id, 1, code=wrong)
        status, body = replay(server, match_id, 1, code=code)
        assert status == 429, body


def test_a_tossup_reopened_in_another_room_by_an_undo_waits_for_it_again(tmp_path):
    from event_helpers import room_player
    from live import win_first_word

    db_url = f"sqlite:///{tmp_path / 'record.db'}"
    plan = make_event(db_url, rounds=1, defaults={"answer_time": None, "wpm": 600})
    with event_server(db_url) as server:
        room1, room2 = code_of(plan, "1"), code_of(plan, "2")
        m1, m2 = room_moderator(server, room1), room_moderator(server, room2)
        bea = room_player(server, room2, "blue", "Bea")
        with clients(m1, m2, bea):
            match1 = server.events.live_in(room1).rm.id
            play_dead(m1)
            win_first_word(m2, bea, "an answer")  # room 2 reads it too...
            m2.state(lambda s: s["match"]["phase"] in ("answered", "bonus"))
            assert replay(server, match1, 1)[0] == 200
            m2.send(type="undo")  # ...and takes back the ruling that ended it
            m2.state(lambda s: s["floor"] is not None and s["floor"]["team"] == "blue")
            status, body = replay(server, match1, 1)
            assert status == 409 and "yet to be read in room 2" in body["detail"], body
