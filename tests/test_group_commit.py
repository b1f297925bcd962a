"""The server's group commit: rooms' changes handed in together are written in one
transaction; one room's failure is that room's only."""

from __future__ import annotations

import asyncio
from itertools import pairwise

import pytest
from backends import on_both_backends
from engine_helpers import config

from grace_arena.core.commands import Join, StartTossup
from grace_arena.record.lease import Holder, LeaseLost, acquire
from grace_arena.server.writer import GroupWriter


@on_both_backends
def test_changes_of_several_rooms_are_written_in_one_transaction(store):
    matches = [store.create(config(), now=0.0) for _ in range(5)]

    async def scenario() -> None:
        writer = GroupWriter(store)
        decided = []
        for i, rm in enumerate(matches):
            _, state, events = rm.decide_many([Join(team="red", player=f"p{i}", name="P")], now=1)
            decided.append((rm, state, events))
        await asyncio.gather(*(writer.write(rm.id, ev, None) for rm, _, ev in decided))
        assert (writer.transactions, writer.changes) == (1, 5)

    asyncio.run(scenario())
    for i, rm in enumerate(matches):
        assert f"p{i}" in store.open(rm.id).match.state.players["red"]


@on_both_backends
def test_one_rooms_failure_is_its_own(store):
    ours, theirs = Holder.this_process(), Holder("elsewhere:1:x", "elsewhere", 1)
    kept = store.create(config(), now=0.0, holder=ours)
    lost = store.create(config(), now=0.0, holder=theirs)  # another process serves this one

    async def scenario() -> None:
        writer = GroupWriter(store)
        _, _, good = kept.decide_many([StartTossup()], now=1)
        _, _, bad = lost.decide_many([StartTossup()], now=1)
        results = await asyncio.gather(
            writer.write(kept.id, good, ours), writer.write(lost.id, bad, ours),
            return_exceptions=True,
        )  # fmt: skip
        assert results[0] is None and isinstance(results[1], LeaseLost)

    asyncio.run(scenario())
    assert store.open(kept.id).match.state.tossups_started == 1
    assert store.open(lost.id).match.state.tossups_started == 0
    with pytest.raises(Exception, match="served by"):
        acquire(store.engine, lost.id, ours)


def test_a_slow_commit_delays_one_word_not_the_pace(store):
    """The reader keeps a schedule from the first word: with every commit taking 0.1 s at a
    pace of 4 words a second, the words still come 0.25 s apart on average (a reader that
    waited a word's time after each commit would take 0.35 s a word)."""
    from grace_arena.core.config import TeamSpec
    from grace_arena.core.packet import SAMPLE_PACKET_PATH, load_packet
    from grace_arena.core.specs import match_config
    from grace_arena.server.room import Room

    class SlowWriter(GroupWriter):
        async def write(self, match_id, events, holder):
            await asyncio.sleep(0.1)
            await super().write(match_id, events, holder)

    packet = load_packet(SAMPLE_PACKET_PATH)
    teams = [TeamSpec(id="red", name="Red")]
    rm = store.create(match_config(packet, teams, wpm=240), now=0.0)

    async def scenario() -> list[float]:
        room = Room(rm, join_code="SLOW", writer=SlowWriter(store))
        room.start()
        await room.command(StartTossup())
        await asyncio.sleep(2.6)
        await room.close()
        return [ev["t"] for ev in room.tossup_log if ev["type"] == "words_revealed"]

    times = asyncio.run(scenario())
    assert len(times) >= 8
    gaps = [b - a for a, b in pairwise(times)]
    assert sum(gaps) / len(gaps) < 0.29
