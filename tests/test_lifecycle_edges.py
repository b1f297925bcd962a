"""The live room's life cycle at its edges: a take-over whose opening fails once, a lease
lost while commands keep coming, a server stopping while a match's end is being committed,
two processes registering one name at once."""

from __future__ import annotations

import asyncio
import contextlib
import time

import pytest
from backends import on_both_backends
from engine_helpers import config
from event_helpers import HUMANS, make_event
from sqlalchemy import update
from sqlalchemy.exc import OperationalError
from sqlmodel import Session, select

from grace_arena.core.commands import Buzz, EndMatch, Join, SetPace, StartTossup
from grace_arena.core.packet import SAMPLE_PACKET_PATH
from grace_arena.record import lease
from grace_arena.record import store as store_module
from grace_arena.record.db import make_engine, upgrade
from grace_arena.record.models import MatchLeaseRow
from grace_arena.record.store import MatchStore
from grace_arena.server.arena import Arena, Settings
from grace_arena.server.pipeline import CommitPipeline, RoomClosed
from grace_arena.server.rooms import Rooms

_LEASES = MatchLeaseRow.__table__


def _buzzed_when_its_server_died(tmp_path):
    """A match whose player buzzed 20 s ago, with 10 s to answer, its server dead 1 s after
    the buzz (9 s were left): the record's URL and the match."""
    db_url = f"sqlite:///{tmp_path / 'record.db'}"
    upgrade(db_url)
    engine = make_engine(db_url)
    dead = lease.Holder("a:1:x", "a", 1, "http://a:1", None)
    t0 = time.time() - 20.0
    rm = MatchStore(engine).create(config(), now=t0, holder=dead, join_code="ABCDEF")
    rm.handle(Join(team="red", player="r1", name="R"), now=t0)
    rm.handle(StartTossup(), now=t0)
    rm.handle(Buzz(team="red", player="r1"), now=t0)
    assert rm.match.game.deadline == t0 + 10.0
    with engine.begin() as conn:
        conn.execute(update(_LEASES).values(served_until=t0 + 1.0, renewed_at=t0 + 1.0))  # type: ignore[arg-type]
    engine.dispose()
    return db_url, rm


async def _served_a_moment(arena: Arena, match_id: int) -> tuple[str, float]:
    """``arena`` reopens and serves the match for half a second, then closes: the match's
    phase then, and the seconds its answer clock had left."""
    room = await arena.reopen(match_id, "ABCDEF")
    arena.serve(room)
    await asyncio.sleep(0.5)
    game = room.match.game
    left = (game.deadline or 0.0) - time.time()
    await arena.close()
    return game.phase.value, left


@pytest.mark.parametrize("fails_once", [False, True], ids=["opens", "fails-once-then-opens"])
def test_a_running_answer_clock_survives_a_take_over_tried_twice(tmp_path, fails_once):
    """A buzz taken 20 s ago with 10 s to answer, its server dead 1 s after it: the process
    that takes the match over gives the player the 9 s left, even when its first opening
    failed after the lease was taken (the phone's next hello opens it again)."""
    db_url, rm = _buzzed_when_its_server_died(tmp_path)

    async def scenario() -> tuple[str, float]:
        arena = Arena(Settings(db_url=db_url, lease_ttl=15.0))
        opened = arena.store.open
        calls = []

        def flaky(*args, **kwargs):
            calls.append(1)
            if fails_once and len(calls) == 1:
                raise OperationalError("SELECT", {}, Exception("database is locked"))
            return opened(*args, **kwargs)

        arena.store.open = flaky  # type: ignore[method-assign]
        if fails_once:
            with pytest.raises(OperationalError):
                await arena.reopen(rm.id, "ABCDEF")
        return await _served_a_moment(arena, rm.id)

    phase, left = asyncio.run(scenario())
    assert phase == "buzzed" and 8.0 < left < 9.1


@on_both_backends
def test_a_lost_lease_is_reported_once_and_nothing_more_goes_to_the_record(store):
    """The first commit refused because another process took the match over closes the
    pipeline: commands that keep coming meanwhile (the reader, a storm) fail at once, without
    a round trip to the record, and the owner hears of the loss once."""
    me = lease.Holder.this_process()
    rm = store.create(config(), now=time.time(), holder=me)
    with store.engine.begin() as conn:  # another process took it over
        conn.execute(update(_LEASES).values(holder="other:1:x", generation=2))  # type: ignore[arg-type]
    appended = []
    append = store.append

    def counted(match_id, events, **options):
        appended.append(len(events))
        return append(match_id, events, **options)

    store.append = counted

    async def scenario() -> tuple[int, CommitPipeline]:
        lost = []
        pipeline = CommitPipeline(rm, None, on_committed=lambda events: None,
                                  on_lease_lost=lost.append)  # fmt: skip
        for wpm in (200, 210, 220):
            with pytest.raises(RoomClosed):
                await pipeline.submit(SetPace(wpm=wpm))
        await pipeline.close(RoomClosed("closed by its owner"))
        return len(lost), pipeline

    reports, pipeline = asyncio.run(scenario())
    assert (len(appended), reports) == (1, 1)
    assert pipeline.state.value == "closed"


def test_a_match_ending_while_the_server_stops_opens_no_match_after_it(db_url):
    """The server stops while the commit of a match's end is in flight: the commit finishes,
    but the stopping process opens and leases no next match (the next process does)."""
    make_event(db_url, teams=HUMANS, rounds=2, rooms=("1",), fmt="round_robin")

    async def scenario() -> tuple[list[int], set[int]]:
        arena = Arena(
            Settings(db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="s", event="night")
        )
        events = Rooms(arena)
        await events.open_event("night")
        (room,) = arena.rooms.values()
        append_many = arena.store.append_many

        def slowly(batch, *, synced=True):
            if any(ev.type == "match_ended" for _, evs, _ in batch for ev in evs):
                time.sleep(0.3)  # a commit that takes a moment
            return append_many(batch, synced=synced)

        arena.store.append_many = slowly  # type: ignore[method-assign]
        ending = room.submit(EndMatch())
        await asyncio.sleep(0.05)  # in flight: the server stops (as app.run's shutdown does)
        await events.close()
        await arena.stop_serving()
        await asyncio.sleep(1.0)
        with contextlib.suppress(RoomClosed):
            await ending
        served = sorted(arena.rooms)
        with Session(arena.engine) as session:
            held = {
                row.match_id
                for row in session.exec(
                    __import__("sqlmodel")
                    .select(MatchLeaseRow)
                    .where(MatchLeaseRow.holder == arena.holder.id, ~MatchLeaseRow.released)
                )
            }
        await arena.close()
        return served, held

    served, held = asyncio.run(scenario())
    assert served == [] and held == set()


@on_both_backends
def test_a_name_registered_by_another_process_meanwhile_is_that_player(db_url, monkeypatch):
    """Another process registers Alice of Red between this one's read and its write: this
    one's join finds her (on SQLite its write fails and it tries again)."""
    make_event(db_url, teams=HUMANS, rounds=1, rooms=("1",), fmt="round_robin")
    other = make_engine(db_url)  # the other server process
    find = store_module.find_player
    register = store_module.register_player
    reads = []

    def find_then_race(session, event_id, team, name):
        found = find(session, event_id, team, name)
        reads.append(found)
        if len(reads) == 2:  # the last read before the write: the other process commits
            with Session(other) as theirs:
                register(theirs, event_id, player_id="p-other", team_id=team, name=name,
                         kind="human")  # fmt: skip
                theirs.commit()
        return found

    monkeypatch.setattr(store_module, "find_player", find_then_race)

    async def scenario():
        arena = Arena(
            Settings(db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="s", event="night")
        )
        events = Rooms(arena)
        await events.open_event("night")
        er = next(iter(events.rooms.values()))
        try:
            return await events.register_player(er.event_id, "red", "Alice")
        finally:
            await events.close()
            await arena.close()

    player = asyncio.run(scenario())
    other.dispose()
    assert player.id == "p-other" and player.name == "Alice"


def test_a_take_over_given_up_while_stopping_keeps_the_time_left(tmp_path):
    """Buzz 20 s ago, 10 s to answer, its server dead 1 s after it (9 s left). Process A takes
    the match over just as it begins to stop, and gives the lease back; process B takes it:
    the player still has the 9 s (A never served it)."""
    db_url, rm = _buzzed_when_its_server_died(tmp_path)

    async def stopping_a() -> None:
        a = Arena(Settings(db_url=db_url, lease_ttl=15.0))
        opened = a.store.open

        def open_as_it_stops(*args, **kwargs):
            a.stopping = True  # stop_serving began while the take-over was in its thread
            return opened(*args, **kwargs)

        a.store.open = open_as_it_stops  # type: ignore[method-assign]
        with pytest.raises(RoomClosed):
            await a.reopen(rm.id, "ABCDEF")
        await a.close()

    async def taking_b() -> tuple[str, float]:
        return await _served_a_moment(Arena(Settings(db_url=db_url, lease_ttl=15.0)), rm.id)

    asyncio.run(stopping_a())
    phase, left = asyncio.run(taking_b())
    assert phase == "buzzed" and 8.0 < left < 9.1


def test_an_event_room_opened_as_the_server_stops_holds_no_lease(db_url, monkeypatch):
    """The server begins to stop while a room's match is being opened: nothing of it is
    served, and no lease of this process is left to lapse."""
    from grace_arena.server import schedules

    make_event(db_url, teams=HUMANS, rounds=1, rooms=("1",), fmt="round_robin")

    async def scenario() -> list[tuple[int, bool]]:
        arena = Arena(
            Settings(db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="s", event="night")
        )
        events = Rooms(arena)
        hashes = schedules.room_moderator_hashes

        def hashes_as_it_stops(*args):
            arena.stopping = True  # stop_serving began meanwhile
            return hashes(*args)

        monkeypatch.setattr(schedules, "room_moderator_hashes", hashes_as_it_stops)
        with pytest.raises(RoomClosed):
            await events.open_event("night")
        served = list(arena.rooms)
        await events.close()
        await arena.close()
        assert served == []
        engine = make_engine(db_url)
        with Session(engine) as session:
            rows = session.exec(select(MatchLeaseRow)).all()
        engine.dispose()
        return [(r.match_id, r.released) for r in rows if r.holder == arena.holder.id]

    assert all(released for _, released in asyncio.run(scenario()))


def test_a_hello_while_the_server_stops_is_told_stopping(db_url, caplog):
    """The web server still takes connections while the rooms are retired: a hello then is
    told the server is stopping (it used to be closed 1011 with a traceback in the log)."""
    import logging

    from live import Client, LiveServer, clients, two_teams

    settings = Settings(
        db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="x", first_match=two_teams()
    )
    with LiveServer(settings) as server:
        room = server.room()

        async def begin_stopping():
            await server.arena.retire(room, RoomClosed("stopping", code="stopping"))
            server.arena.stopping = True

        server.run(begin_stopping())
        phone = Client(server.ws_url)
        with clients(phone), caplog.at_level(logging.ERROR):
            phone.send(type="hello", role="player", join_code=room.join_code)
            assert phone.wait("error")["code"] == "stopping"
    assert "a websocket session failed" not in caplog.text
