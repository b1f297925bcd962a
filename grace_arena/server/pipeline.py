"""A room's commit pipeline: commands in, decided in order, committed, then told.

Every change of a live match goes through :meth:`CommitPipeline.submit`. Commands queued while
a batch is being committed are decided and committed together in the next one (one
transaction, one state to each client), so a storm of buzzes costs a few commits and the
moderator or the answer timer waits for one batch at most. Nothing takes effect, and nobody is
told, before its events are stored.

**A record that blinks.** A commit that fails for an operational reason (SQLite locked by
another process past its busy timeout, a PostgreSQL server restarting, a dropped connection) is
tried again with backoff, with the same commands decided afresh: the room holds where it was
(nothing is shown that is not stored), the room is told the record's health (the moderator's
screen and the displays say "record unavailable — retrying" and why), and it goes on by itself
as soon as a commit succeeds again. A commit that takes longer than :data:`STALL_AFTER` counts
as the same kind of outage. Time the match was held that way is not the players': the first
batch after it resumes a running answer clock or buzz window with what it had left
(:class:`~grace_arena.core.commands.ResumeClock`).

**Its life cycle.** ``open`` until :meth:`close`; then ``closing`` while the batch being
committed finishes (it is not cancelled mid-commit), and ``closed``: every command queued, and
every command submitted later, fails at once with the :class:`RoomClosed` that closed it, so
no caller waits forever and nothing is decided or committed after the close. A commit refused
because another process took the match over (:class:`~grace_arena.record.lease.LeaseLost`)
stores nothing; the pipeline reports it (``on_lease_lost``) and its owner closes it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from grace_arena.core.commands import Command, ResumeClock
from grace_arena.core.errors import IllegalCommand
from grace_arena.core.events import Event
from grace_arena.record.lease import LeaseLost
from grace_arena.record.store import RecordedMatch, is_transient
from grace_arena.server.writer import GroupWriter

log = logging.getLogger(__name__)

#: A commit still running after this many seconds makes the room hold and say so.
STALL_AFTER = 1.0
#: Waits between the attempts of a commit that failed: the last one repeats (so reading goes
#: on within about that long of the record coming back).
BACKOFF = (0.05, 0.1, 0.2, 0.4, 0.5)


class Lifecycle(StrEnum):
    OPEN = "open"
    CLOSING = "closing"
    CLOSED = "closed"


class RoomClosed(Exception):
    """The match is no longer served by this room: it ended and the room moved on, another
    server process serves it now (``url``), or this server is stopping."""

    def __init__(self, message: str, *, url: str | None = None, code: str = "elsewhere") -> None:
        super().__init__(message)
        self.url = url
        self.code = code

    @classmethod
    def stopping(cls) -> RoomClosed:
        """This server process is stopping: reconnect (here once it is back, or elsewhere)."""
        return cls("this server process is stopping: reconnect", code="stopping")


@dataclass(frozen=True)
class RecordHealth:
    """Whether the room's commits are going through; when not, since when and why."""

    ok: bool = True
    since: float | None = None  # wall clock
    reason: str | None = None
    attempts: int = 0

    @property
    def message(self) -> str | None:
        if self.ok:
            return None
        why = f" ({self.reason})" if self.reason else ""
        if self.attempts == 0:
            return f"waiting for the record{why}"
        return f"record unavailable — retrying{why}"


def short_reason(exc: BaseException) -> str:
    """The first line of what the database said, without SQLAlchemy's wrapping."""
    inner = getattr(exc, "orig", None) or exc
    text = str(inner).strip().splitlines()
    return (text[0] if text else type(inner).__name__)[:160]


Result = list[Event] | IllegalCommand
#: Changes that may be committed without a disk sync of their own (writer.py): a power cut
#: may lose the last of them, never a buzz, a ruling or any other change.
_UNSYNCED = frozenset({"words_revealed", "buzz_repeated"})


def _retrieve(future: asyncio.Future) -> None:
    if not future.cancelled():
        future.exception()  # a room closed meanwhile: nothing to give back to


class CommitPipeline:
    """Decides and commits one match's commands in order (see the module docstring)."""

    def __init__(
        self,
        rm: RecordedMatch,
        writer: GroupWriter | None = None,
        *,
        on_committed: Callable[[list[Event]], None],
        on_health: Callable[[RecordHealth], None] = lambda health: None,
        on_lease_lost: Callable[[LeaseLost], None] = lambda exc: None,
        held_since: float | None = None,
        held_reason: str = "restart",
    ) -> None:
        self.rm = rm
        self.writer = writer
        self.state = Lifecycle.OPEN
        self.health = RecordHealth()
        self._on_committed = on_committed
        self._on_health = on_health
        self._on_lease_lost = on_lease_lost
        self._queue: list[tuple[Command, asyncio.Future[list[Event]]]] = []
        self._drainer: asyncio.Task | None = None
        self._closed_by: RoomClosed | None = None
        self._wake = asyncio.Event()
        #: Since when (on the running clock's clock) the match has been held: the next batch
        #: resumes a running clock first.
        self._held_since = held_since
        self._held_reason = held_reason
        self._committed = False  # the last batch run wrote something
        #: Commits written, and how many attempts failed (for tests and benchmarks).
        self.commits = 0
        self.failures = 0

    # -- submitting ------------------------------------------------------------------------------

    def submit(self, command: Command) -> asyncio.Future[list[Event]]:
        """Queue ``command``; the future gets its events once they are committed and told (or
        the ``IllegalCommand`` that refused it, or the ``RoomClosed`` that ended the room)."""
        future: asyncio.Future[list[Event]] = asyncio.get_running_loop().create_future()
        if self.state is not Lifecycle.OPEN:
            assert self._closed_by is not None
            future.set_exception(self._closed_by)
            return future
        self._queue.append((command, future))
        if self._drainer is None or self._drainer.done():
            self._drainer = asyncio.get_running_loop().create_task(self._drain())
        return future

    def hold(self, since: float, reason: str) -> None:
        """The match was held (not served) from ``since``: the next batch resumes a running
        clock with what it had left then. Submits nothing by itself (see :meth:`resume`)."""
        if self._held_since is None:
            self._held_since, self._held_reason = since, reason

    def resume(self) -> asyncio.Future[list[Event]] | None:
        """Commit the resumption of a running clock now (a reopened match), if it was held."""
        if self._held_since is None:
            return None
        return self.submit(ResumeClock(down_since=self._held_since, reason=self._held_reason))

    # -- closing ---------------------------------------------------------------------------------

    async def close(self, error: RoomClosed, *, timeout: float = 10.0) -> None:
        """Stop: the batch being committed may finish (within ``timeout``); every other command,
        queued or to come, fails with ``error``."""
        if self.state is Lifecycle.OPEN:
            self.state = Lifecycle.CLOSING
            self._closed_by = error
            self._wake.set()  # a drainer waiting to try again gives up at once
        drainer = self._drainer
        if drainer is not None and not drainer.done():
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(drainer), timeout)
            if not drainer.done():
                drainer.cancel()
        self._fail_queued()
        self.state = Lifecycle.CLOSED

    def _fail_queued(self, batch: list[tuple[Command, asyncio.Future]] | None = None) -> None:
        error = self._closed_by
        assert error is not None
        for _, future in [*(batch or []), *self._queue]:
            if not future.done():
                future.set_exception(error)
        self._queue = []

    # -- the work --------------------------------------------------------------------------------

    async def _drain(self) -> None:
        while self._queue and self.state is Lifecycle.OPEN:
            batch, self._queue = self._queue, []
            self._committed = False
            if not await self._run(batch):
                return
            # a clock held by a slow commit gets its time back now; not after a failure (a
            # resumption that fails is not tried again and again: the next batch carries it)
            if self._committed and self._held_since is not None and not self._queue:
                self.resume().add_done_callback(_retrieve)  # type: ignore[union-attr]
        if self.state is not Lifecycle.OPEN and self._closed_by is not None:
            self._fail_queued()

    async def _run(self, batch: list[tuple[Command, asyncio.Future]], alone: bool = False) -> bool:
        """Commit ``batch`` and settle its futures; False once the pipeline closed. A batch
        that fails for another reason than the record's availability (a bug, a value the
        record refuses) is committed again command by command, so that one command's
        failure is its own, not that of the buzzes and rulings decided with it."""
        try:
            outcome = await self._commit_batch(batch)
        except asyncio.CancelledError:
            if self._closed_by is not None:
                self._fail_queued(batch)
            raise
        except Exception as exc:
            if len(batch) > 1 and not alone:
                log.warning(
                    "match %d: committing %d commands together failed (%s); each alone",
                    self.rm.id, len(batch), short_reason(exc),
                )  # fmt: skip
                for i, item in enumerate(batch):
                    try:
                        still_open = await self._run([item], alone=True)
                    except asyncio.CancelledError:
                        if self._closed_by is not None:
                            self._fail_queued(batch[i + 1 :])
                        raise
                    if not still_open:
                        self._fail_queued(batch[i + 1 :])
                        return False
                return True
            log.exception("match %d: committing %d commands failed", self.rm.id, len(batch))
            for _, future in batch:
                if not future.done():
                    future.set_exception(exc)
            return True
        if outcome is None:  # closed meanwhile
            self._fail_queued(batch)
            return False
        results, events = outcome
        if events:
            try:
                self._on_committed(events)
            except Exception:  # what was committed stays committed; tell the callers
                log.exception("match %d: telling a change failed", self.rm.id)
        for (_, future), result in zip(batch, results, strict=True):
            if future.done():  # its caller went away
                continue
            if isinstance(result, IllegalCommand):
                future.set_exception(result)
            else:
                future.set_result(result)
        return True

    async def _commit_batch(
        self, batch: list[tuple[Command, asyncio.Future]]
    ) -> tuple[list[Result], list[Event]] | None:
        """Decide and commit ``batch``, trying again while the record is unavailable; None
        when the pipeline closed before it could be committed."""
        attempt = 0
        while self.state is Lifecycle.OPEN:
            started = time.time()
            stall = asyncio.get_running_loop().call_later(STALL_AFTER, self._stalled, started)
            try:
                outcome = await self._commit([c for c, _ in batch])
            except LeaseLost as exc:
                # Nothing more is decided or committed here: every command queued or to come
                # fails at once, and the owner hears of the loss once (and closes the room).
                self._closed_by = self._closed_by or RoomClosed(str(exc))
                lost_now = self.state is Lifecycle.OPEN
                self.state = Lifecycle.CLOSING
                if lost_now:
                    self._on_lease_lost(exc)
                return None
            except Exception as exc:
                if not is_transient(exc):
                    raise
                self.failures += 1
                attempt += 1
                self.hold(started, "record")
                self._set_health(
                    RecordHealth(
                        ok=False,
                        since=self.health.since or started,
                        reason=short_reason(exc),
                        attempts=attempt,
                    )
                )
                log.warning(
                    "match %d: the record refused a commit (%s); trying again (attempt %d)",
                    self.rm.id, short_reason(exc), attempt,
                )  # fmt: skip
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(BACKOFF[min(attempt, len(BACKOFF)) - 1]):
                        await self._wake.wait()
                continue
            finally:
                stall.cancel()
            # The room was held as long as the commit took: a running clock gets that time
            # back at once (by the commit that follows), not whenever a batch next comes (the
            # timer's, a whole clock later). The commit that gives it back is not given back.
            if time.time() - started > STALL_AFTER and not all(
                isinstance(c, ResumeClock) for c, _ in batch
            ):
                self.hold(started, "record")
            if not self.health.ok:
                self._set_health(RecordHealth())
            return outcome
        return None

    def _stalled(self, started: float) -> None:
        if self.health.ok:
            reason = f"no answer for {STALL_AFTER:g} s"
            self._set_health(RecordHealth(ok=False, since=started, reason=reason))

    def _set_health(self, health: RecordHealth) -> None:
        self.health = health
        try:
            self._on_health(health)
        except Exception:
            log.exception("match %d: telling the record's health failed", self.rm.id)

    async def _commit(self, commands: list[Command]) -> tuple[list[Result], list[Event]]:
        """Decide ``commands`` (after resuming a clock that was held, if any) on the match as
        it is, commit their events (with the other rooms' changes of the moment, through the
        server's group writer), then let them take effect."""
        # One resumption of the clock at most, first: from the moment the match stopped being
        # served (a reopened match's :meth:`resume`), or else the record's outage began. Time
        # lost after that (a commit that failed again) is given back too: the new deadline is
        # this decision's ``now`` plus what was left then.
        resumes = [c for c in commands if isinstance(c, ResumeClock)]
        held = resumes[0] if resumes else None
        if held is None and self._held_since is not None:
            held = ResumeClock(down_since=self._held_since, reason=self._held_reason)
        prefix: list[Command] = (
            [held] if held is not None and self.rm.match.game.deadline is not None else []
        )
        rest = [c for c in commands if not isinstance(c, ResumeClock)]
        decided, state, events = self.rm.decide_many([*prefix, *rest], now=time.time())
        if events:
            # words revealed (or presses counted) and nothing else: stored before they are
            # shown, without a disk sync of their own (writer.py)
            synced = not all(ev.type in _UNSYNCED for ev in events)
            if self.writer is not None:
                await self.writer.write(self.rm.id, events, self.rm.fence, synced=synced)
            else:
                await asyncio.to_thread(
                    self.rm.store.append, self.rm.id, events, holder=self.rm.fence, synced=synced
                )
            self.rm.match.state = state
        self.commits += 1
        self._committed = True
        self._held_since = None  # a clock held, if any, has resumed
        resumed = decided[0] if prefix else []
        answers = iter(decided[len(prefix) :])
        results = [resumed if isinstance(c, ResumeClock) else next(answers) for c in commands]
        return results, events
