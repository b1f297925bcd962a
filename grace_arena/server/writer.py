"""Group commit: the rooms a server serves write their events together.

Each room stores its changes before telling anyone (the record's rule). Committing each room's
change in a transaction of its own costs a disk sync each: 16 rooms reading 4 words a second
ask for 64 a second, which SQLite serialises, and a room's next word then waits behind the
others' syncs. Here, the changes that rooms hand in while a transaction is being written are
written together in the next one (:meth:`MatchStore.append_many`): one transaction for all of
them, each still stored before its room tells anyone. If a batch is refused, each change of it
is tried alone, so that one room's failure (a lease lost to another process) is that room's
only; if it failed for want of the record (locked, unreachable), every change of it fails at
once with that error (each room tries again: grace_arena.server.pipeline), rather than each
waiting out the record's timeout again on its own.

A change that only reveals words is handed in with ``synced=False``; a batch of such changes
alone is committed, on a SQLite record, without a disk sync of its own
(:func:`~grace_arena.record.store.unsynced_session`). The words are stored before anyone sees
them and a crash of the server loses none; a power cut could lose the last ones, never a buzz,
a ruling or any other change, whose synced commit makes every word before it durable too. A
batch that holds anything else syncs, and so does every batch on PostgreSQL.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Sequence

from grace_arena.core.events import Event
from grace_arena.record.lease import Holder
from grace_arena.record.store import MatchStore, is_transient


class GroupWriter:
    def __init__(self, store: MatchStore) -> None:
        self.store = store
        self._queue: list[
            tuple[int, Sequence[Event], Holder | None, bool, asyncio.Future[None]]
        ] = []
        self._task: asyncio.Task | None = None
        #: Seconds each of the last synced (durable) transactions took, from the call to the
        #: record to its return (``/api/health`` gives their p50 and p99).
        self.synced_seconds: deque[float] = deque(maxlen=10_000)
        #: The same transactions' seconds in the record alone: from the worker thread's call
        #: to its return, leaving out the waits for a thread and for the loop to resume the
        #: room (what a busy process adds to them).
        self.record_seconds: deque[float] = deque(maxlen=10_000)
        #: Transactions written, and changes written in them (for benchmarks and tests).
        self.transactions = 0
        self.changes = 0

    async def write(
        self,
        match_id: int,
        events: Sequence[Event],
        holder: Holder | None,
        *,
        synced: bool = True,
    ) -> None:
        """Return once ``events`` are committed (raise what the record raised, if not);
        ``synced=False`` for words revealed (see the module docstring)."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queue.append((match_id, events, holder, synced, future))
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._run())
        await future

    async def _run(self) -> None:
        while self._queue:
            # a change whose room gave up waiting (it closed) is not written after all
            batch = [change for change in self._queue if not change[-1].done()]
            self._queue = []
            if not batch:
                continue
            try:
                synced = any(synced for _, _, _, synced, _ in batch)
                began = time.perf_counter()
                took = await asyncio.to_thread(
                    self._append, [(m, events, h) for m, events, h, _, _ in batch], synced
                )
                if synced:
                    self.synced_seconds.append(time.perf_counter() - began)
                    self.record_seconds.append(took)
                self.transactions += 1
                self.changes += len(batch)
                outcomes: list[BaseException | None] = [None] * len(batch)
            except Exception as exc:
                if is_transient(exc):
                    outcomes = [exc] * len(batch)
                else:
                    outcomes = await asyncio.to_thread(self._one_by_one, batch)
            for (_, _, _, _, future), outcome in zip(batch, outcomes, strict=True):
                if future.done():  # its room went away
                    continue
                if outcome is None:
                    future.set_result(None)
                else:
                    future.set_exception(outcome)

    def _append(self, batch: list, synced: bool) -> float:
        """Commit ``batch`` (a worker thread's work): the seconds it took."""
        began = time.perf_counter()
        self.store.append_many(batch, synced=synced)
        return time.perf_counter() - began

    def _one_by_one(self, batch) -> list[BaseException | None]:
        outcomes: list[BaseException | None] = []
        for match_id, events, holder, synced, _ in batch:
            try:
                self.store.append(match_id, events, holder=holder, synced=synced)
                self.transactions += 1
                self.changes += 1
                outcomes.append(None)
            except Exception as exc:
                outcomes.append(exc)
        return outcomes
