"""A match of its own is a room with one game: its event's room and game are in the record from
its creation, its moderator token is its room's, and it is opened, joined, moderated and
summed up as every room is. A match of an older record, stored before it had a room, is
served all the same: its room is written when it is opened, with the match's tokens."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest
from backends import on_both_backends
from live import Client, LiveServer, clients, new_match, two_teams
from sqlmodel import Session, delete, select

from grace_arena.core.packet import SAMPLE_PACKET_PATH
from grace_arena.record.db import open_engine
from grace_arena.record.models import EventGameRow, EventRoomRow, MatchRow
from grace_arena.record.schedule import load_plan
from grace_arena.record.store import MatchStore
from grace_arena.server.app import Settings, token_sha256
from grace_arena.server.schedules import match_moderator_hashes


def _settings(db_url: str, first=None) -> Settings:
    return Settings(db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="s", first_match=first)


def _summary(server: LiveServer, match_id: int, token: str) -> dict:
    request = urllib.request.Request(
        f"{server.http_url}/api/matches/{match_id}/summary",
        headers={"Authorization": f"Bearer {token}"},
    )
    with urllib.request.urlopen(request, timeout=10) as reply:
        return json.load(reply)


def _as_an_older_record(db_url: str, match_id: int, token: str) -> None:
    """Make the record what an older server left: the match's event has no room and no game,
    and its moderator token's hash is kept on the match."""
    engine = open_engine(db_url)
    try:
        with Session(engine) as session:
            row = session.get(MatchRow, match_id)
            assert row is not None
            session.exec(delete(EventGameRow).where(EventGameRow.event_id == row.event_id))  # type: ignore[call-overload]
            session.exec(delete(EventRoomRow).where(EventRoomRow.event_id == row.event_id))  # type: ignore[call-overload]
            session.commit()
        MatchStore(engine).add_moderator_token(match_id, token_sha256(token))
    finally:
        engine.dispose()


@on_both_backends
def test_a_match_of_its_own_is_a_room_with_one_game_in_the_record(db_url):
    with LiveServer(_settings(db_url)) as server:
        match_id, code = new_match(server)
        token = server.run(server.events.match_moderator_token(match_id))
        row = server.arena.store.match_row(match_id)
        plan = load_plan(server.arena.engine, row.event_id)
        (room,) = plan.rooms
        (game,) = plan.games
        assert room.join_code == code and game.room_id == room.id
        assert game.match_id == match_id and set(game.teams) == {"red", "blue"}
        # one token scope: the room's, none kept on the match
        assert match_moderator_hashes(server.arena.engine, match_id) == [token_sha256(token)]
        assert server.arena.store.moderator_tokens(match_id) == []
        # one moderator check: a moderator of the room is the match's
        mod = Client(server.ws_url)
        with clients(mod):
            mod.send(type="hello", role="moderator", join_code=code, token=token)
            assert mod.wait("welcome")["match_id"] == match_id
        assert _summary(server, match_id, token)["match_id"] == match_id


@on_both_backends
def test_a_match_of_an_older_record_without_its_room_is_still_served(db_url):
    old_token = "a moderator token issued by an older server"
    with LiveServer(_settings(db_url, first=two_teams())) as server:
        match_id = server.room().rm.id
        code = server.room().join_code
    _as_an_older_record(db_url, match_id, old_token)
    engine = open_engine(db_url)
    try:
        with Session(engine) as session:  # (what the older record holds)
            assert session.exec(select(EventGameRow)).all() == []

        with LiveServer(_settings(db_url)) as server:
            assert list(server.arena.rooms) == [match_id]  # reopened on start-up
            # its room was written as it was opened, with the match's token
            plan = load_plan(engine, server.arena.store.match_row(match_id).event_id)
            assert [g.match_id for g in plan.games] == [match_id]
            assert plan.rooms[0].join_code == code
            mod, red = Client(server.ws_url), Client(server.ws_url)
            with clients(mod, red):
                mod.send(type="hello", role="moderator", match_id=match_id, token=old_token)
                assert mod.wait("welcome")["match_id"] == match_id
                red.send(type="hello", role="player", join_code=code)
                red.wait("welcome")
                red.send(type="join", team="red", name="Alice")
                assert red.wait("joined")["team"] == "red"
                red.state()
            assert _summary(server, match_id, old_token)["match_id"] == match_id
            with pytest.raises(urllib.error.HTTPError) as err:
                _summary(server, match_id, "not a token")
            assert err.value.code == 401
    finally:
        engine.dispose()


@on_both_backends
def test_an_ended_match_of_an_older_record_is_summed_up_for_its_moderator(db_url):
    """A match of an older record that ended before it had a room: no room is written for
    it, and its moderator's token (kept on the match) still opens its summary."""
    old_token = "the token of an ended match"
    with LiveServer(_settings(db_url, first=two_teams())) as server:
        match_id = server.room().rm.id
        mod = Client(server.ws_url)
        with clients(mod):
            token = server.run(server.events.match_moderator_token(match_id))
            mod.send(type="hello", role="moderator", match_id=match_id, token=token)
            mod.wait("welcome")
            mod.send(type="end_match")
            mod.state(lambda s: s["match"]["phase"] == "ended")
    _as_an_older_record(db_url, match_id, old_token)
    with LiveServer(_settings(db_url)) as server:
        assert server.arena.rooms == {}
        assert _summary(server, match_id, old_token)["ended"] is True
        with Session(server.arena.engine) as session:
            assert session.exec(select(EventRoomRow)).all() == []
