"""Group commit: the rooms a server serves write their events together.

Each room commits its changes before telling anyone (the record's rule). Committing each room's
change in a transaction of its own costs a disk sync each: 16 rooms reading 4 words a second
ask for 64 a second, which SQLite serialises, and a room's next word then waits behind the
others' syncs. Here, the changes that rooms hand in while a transaction is being written are
written together in the next one (:meth:`MatchStore.append_many`): one sync for all of them,
each still durable before its room tells anyone. If a batch fails, each change of it is tried
alone, so that one room's failure (a lease lost to another process) is that room's only.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from grace_arena.core.events import Event
from grace_arena.record.lease import Holder
from grace_arena.record.store import MatchStore


class GroupWriter:
    def __init__(self, store: MatchStore) -> None:
        self.store = store
        self._queue: list[tuple[int, Sequence[Event], Holder | None, asyncio.Future[None]]] = []
        self._task: asyncio.Task | None = None
        #: Transactions written, and changes written in them (for benchmarks and tests).
        self.transactions = 0
        self.changes = 0

    async def write(self, match_id: int, events: Sequence[Event], holder: Holder | None) -> None:
        """Return once ``events`` are committed (raise what the record raised, if not)."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queue.append((match_id, events, holder, future))
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._run())
        await future

    async def _run(self) -> None:
        while self._queue:
            batch, self._queue = self._queue, []
            try:
                await asyncio.to_thread(
                    self.store.append_many, [(m, events, h) for m, events, h, _ in batch]
                )
                self.transactions += 1
                self.changes += len(batch)
                outcomes: list[BaseException | None] = [None] * len(batch)
            except Exception:
                outcomes = await asyncio.to_thread(self._one_by_one, batch)
            for (_, _, _, future), outcome in zip(batch, outcomes, strict=True):
                if future.done():  # its room went away
                    continue
                if outcome is None:
                    future.set_result(None)
                else:
                    future.set_exception(outcome)

    def _one_by_one(self, batch) -> list[BaseException | None]:
        outcomes: list[BaseException | None] = []
        for match_id, events, holder, _ in batch:
            try:
                self.store.append(match_id, events, holder=holder)
                self.transactions += 1
                self.changes += 1
                outcomes.append(None)
            except Exception as exc:
                outcomes.append(exc)
        return outcomes
