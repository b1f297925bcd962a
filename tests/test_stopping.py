"""Stopping honours its time limit whatever the rooms are doing: a room whose commit does not
come back (a record that hangs) is given up when the limit is reached, or at once when the
close is cancelled, and what it could not commit is said in the log, one line per match."""

from __future__ import annotations

import asyncio
import threading

import pytest
from engine_helpers import config
from live import two_teams

from grace_arena.core.commands import Join, StartTossup
from grace_arena.core.packet import SAMPLE_PACKET_PATH
from grace_arena.server.arena import Arena, Settings
from grace_arena.server.pipeline import CommitPipeline, Lifecycle, RoomClosed
from grace_arena.server.writer import GroupWriter


class Hang:
    """Makes ``store.append_many`` (every commit of the group writer) hang until released."""

    def __init__(self, store) -> None:
        self.released = threading.Event()
        self.entered = threading.Event()
        self._append_many = store.append_many
        store.append_many = self

    def __call__(self, batch, *, synced=True):
        self.entered.set()
        self.released.wait()
        return self._append_many(batch, synced=synced)

    async def stuck(self) -> None:
        while not self.entered.is_set():
            await asyncio.sleep(0.01)


def _lost_lines(caplog, match_id: int) -> list[str]:
    """The log's lines saying what the room of ``match_id`` could not commit."""
    lines = [r.getMessage() for r in caplog.records]
    return [x for x in lines if x.startswith(f"match {match_id}: closed") and "not committed" in x]


def test_a_close_cancelled_while_a_commit_hangs_is_cancelled_and_says_what_was_lost(store, caplog):
    """The close of a room stuck in a commit is cancelled (a server whose stopping ran out of
    time): it is cancelled, every caller is told at once, and the log says what was lost."""
    rm = store.create(config(), now=0.0)
    hang = Hang(store)

    async def scenario() -> None:
        pipeline = CommitPipeline(rm, GroupWriter(store), on_committed=lambda events: None)
        joined = pipeline.submit(Join(team="red", player="r1", name="R"))
        await hang.stuck()
        started = pipeline.submit(StartTossup())  # queued behind the commit
        closing = asyncio.create_task(pipeline.close(RoomClosed.stopping(), timeout=3600))
        await asyncio.sleep(0)  # waiting for the commit
        closing.cancel()
        try:
            with pytest.raises(asyncio.CancelledError):
                await closing
            assert pipeline.state is Lifecycle.CLOSED
            assert isinstance(joined.exception(), RoomClosed)
            assert isinstance(started.exception(), RoomClosed)
        finally:
            hang.released.set()

    asyncio.run(scenario())
    (line,) = _lost_lines(caplog, rm.id)
    assert "join (events 2: player_joined; commit unfinished, may be stored)" in line
    assert line.endswith("; start_tossup")


def test_a_close_gives_a_hanging_commit_up_at_its_limit_and_says_what_was_lost(store, caplog):
    rm = store.create(config(), now=0.0)
    hang = Hang(store)

    async def scenario() -> None:
        pipeline = CommitPipeline(rm, GroupWriter(store), on_committed=lambda events: None)
        joined = pipeline.submit(Join(team="red", player="r1", name="R"))
        await hang.stuck()
        try:
            await pipeline.close(RoomClosed.stopping(), timeout=0.05)
            assert pipeline.state is Lifecycle.CLOSED
            assert joined.done() and isinstance(joined.exception(), RoomClosed)
        finally:
            hang.released.set()

    asyncio.run(scenario())
    (line,) = _lost_lines(caplog, rm.id)
    assert "this server process is stopping" in line and "join (events 2" in line


def test_stopping_with_several_rooms_stuck_in_a_commit_ends_at_its_limit(tmp_path, caplog):
    """Three rooms are stuck in a commit that never comes back; the server stops with a time
    limit of 0.2 s: it stops (every room closed, its callers told), the log names what each
    room could not commit, and the commits are still hanging (they were not waited for)."""
    settings = Settings(
        db_url=f"sqlite:///{tmp_path / 'record.db'}",
        packets=[SAMPLE_PACKET_PATH],
        secret="s",
        stop_timeout=0.2,
    )

    async def scenario() -> list[int]:
        arena = Arena(settings)
        arena.load_packets(settings.packets)
        rooms = [await arena.create(two_teams(), join_code=f"STUCK{i}") for i in range(3)]
        for room in rooms:
            arena.serve(room)
        hang = Hang(arena.store)
        try:
            joins = [
                room.submit(Join(team="red", player=f"r{i}", name=f"R{i}"))
                for i, room in enumerate(rooms)
            ]
            await hang.stuck()
            async with asyncio.timeout(20):  # against a hang only: the limit is 0.2 s
                await arena.stop_serving()
            assert not hang.released.is_set()
            assert arena.rooms == {}
            assert all(room.state is Lifecycle.CLOSED for room in rooms)
            assert all(isinstance(join.exception(), RoomClosed) for join in joins)
        finally:
            hang.released.set()
        await arena.close()
        return [room.rm.id for room in rooms]

    for match_id in asyncio.run(scenario()):
        (line,) = _lost_lines(caplog, match_id)
        assert "join" in line
