"""The server's group commit: rooms' changes handed in together are written in one
transaction; one room's failure is that room's only."""

from __future__ import annotations

import asyncio

import pytest
from engine_helpers import config

from grace_arena.core.commands import Join, StartTossup
from grace_arena.record.lease import Holder, LeaseLost, acquire
from grace_arena.server.writer import GroupWriter


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
