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

**A commit that may have landed.** A connection that drops at COMMIT leaves the outcome
unknown: the server may have stored the events before the way back broke. So before trying
again the pipeline asks the record how far the match got (the events after the live state's
``seq``): what is stored is the truth, applied to the live match and told, and the commands
whose events it holds are done (their callers get those events); only the others are decided
afresh. A commit refused for a ``seq`` the record holds already (a live match behind its
record) is answered the same way, so no room is wedged by a duplicate ``seq``.

**Its life cycle.** ``open`` until :meth:`close`; then ``closing`` while the batch being
committed finishes (within the close's time limit: a commit still running then is given up),
and ``closed``: every command queued, and every command submitted later, fails at once with
the :class:`RoomClosed` that closed it, so no caller waits forever and nothing is decided or
committed after the close. What a close leaves uncommitted is said in the log, in one line per
match. A close that is itself cancelled (a server whose stopping ran out of time) does the
same at once, and is cancelled. A commit refused
because another process took the match over (:class:`~grace_arena.record.lease.LeaseLost`)
stores nothing; the pipeline reports it (``on_lease_lost``) and its owner closes it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from sqlalchemy.exc import IntegrityError

from grace_arena.core.commands import Command, ResumeClock
from grace_arena.core.errors import IllegalCommand
from grace_arena.core.events import BuzzRepeated, Event, event_to_dict
from grace_arena.core.match import MatchState
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


def _stored(events: Sequence[Event]) -> list[Event]:
    """The events of ``events`` that have a row of their own in the record."""
    return [ev for ev in events if not isinstance(ev, BuzzRepeated)]


@dataclass(frozen=True)
class _Decision:
    """Commands decided on the live match, handed to the record: per entry (a held clock
    resumed first, ``None``, then each command by its index) its events or refusal, the state
    they lead to, and all their events in order."""

    commands: list[Command]
    entries: list[tuple[int | None, Result]]
    state: MatchState
    events: list[Event]
    now: float

    def results(self) -> list[Result]:
        """Per command its result: a ``ResumeClock`` gets the resumption's (if any)."""
        resumed = self.entries[0][1] if self.entries and self.entries[0][0] is None else []
        by_index = {i: r for i, r in self.entries if i is not None}
        return [by_index.get(i, resumed) for i in range(len(self.commands))]

    def result_of(self, command: Command) -> Result | None:
        for c, result in zip(self.commands, self.results(), strict=True):
            if c is command:
                return result
        return None


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
        #: The batch being decided and committed, and its decision whose commit is running or
        #: whose outcome is unknown (the connection dropped at COMMIT): asked of the record
        #: before anything else is decided.
        self._batch: list[tuple[Command, asyncio.Future]] = []
        self._pending: _Decision | None = None
        #: What the close left uncommitted, said in one line once it is closed.
        self._lost: list[str] = []
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
        """Stop: the batch being committed may finish within ``timeout`` seconds (after that
        its commit is given up); every other command, queued or to come, fails with
        ``error``. What was not committed is said in the log. If the close is cancelled it
        gives up at once in the same way, and is cancelled."""
        if self.state is Lifecycle.OPEN:
            self.state = Lifecycle.CLOSING
            self._closed_by = error
            self._wake.set()  # a drainer waiting to try again gives up at once
        drainer = self._drainer
        try:
            if drainer is not None and not drainer.done():
                with contextlib.suppress(Exception):  # TimeoutError: given up below
                    await asyncio.wait_for(asyncio.shield(drainer), timeout)
        finally:  # also when cancelled: nothing here waits
            if drainer is not None and not drainer.done():
                drainer.cancel()
                self._fail_queued(self._batch)
            self._fail_queued()
            self.state = Lifecycle.CLOSED
            self._say_lost()

    def _fail_queued(self, batch: list[tuple[Command, asyncio.Future]] | None = None) -> None:
        error = self._closed_by
        assert error is not None
        for command, future in [*(batch or []), *self._queue]:
            if not future.done():
                future.set_exception(error)
                self._lost.append(self._describe(command))
        self._queue = []

    def _describe(self, command: Command) -> str:
        """A command left uncommitted, and its events if it was decided and their commit
        did not finish (the record may hold them: whoever opens the match next replays what
        it holds)."""
        result = self._pending.result_of(command) if self._pending is not None else None
        if not isinstance(result, list) or not _stored(result):
            return command.kind
        events = _stored(result)
        seqs = f"{events[0].seq}" if len(events) == 1 else f"{events[0].seq}-{events[-1].seq}"
        types = ", ".join(ev.type for ev in events)
        return f"{command.kind} (events {seqs}: {types}; commit unfinished, may be stored)"

    def _say_lost(self) -> None:
        if not self._lost:
            return
        n = len(self._lost)
        log.warning(
            "match %d: closed (%s) with %d command%s not committed: %s",
            self.rm.id, self._closed_by, n, "" if n == 1 else "s", "; ".join(self._lost),
        )  # fmt: skip
        self._lost = []

    # -- the work --------------------------------------------------------------------------------

    async def _drain(self) -> None:
        while self._queue and self.state is Lifecycle.OPEN:
            batch, self._queue = self._queue, []
            self._batch = batch
            self._committed = False
            if not await self._run(batch):
                return
            self._batch = []
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
            results, events = await self._commit_batch(batch)
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
        if events:
            try:
                self._on_committed(events)
            except Exception:  # what was committed stays committed; tell the callers
                log.exception("match %d: telling a change failed", self.rm.id)
        for (_, future), result in zip(batch, results, strict=True):
            if future.done() or result is None:  # its caller went away; not committed
                continue
            if isinstance(result, IllegalCommand):
                future.set_exception(result)
            else:
                future.set_result(result)
        if any(result is None for result in results):  # closed meanwhile
            self._fail_queued(batch)
            return False
        return True

    async def _commit_batch(
        self, batch: list[tuple[Command, asyncio.Future]]
    ) -> tuple[list[Result | None], list[Event]]:
        """Decide and commit ``batch``, trying again while the record is unavailable: per
        command its result (``None``: not committed, the pipeline closed first), and the
        events that took effect (to be told)."""
        commands = [c for c, _ in batch]
        results: list[Result | None] = [None] * len(commands)
        told: list[Event] = []
        attempt = 0
        refused: IntegrityError | None = None  # a duplicate seq, maybe: the record is ahead
        while self.state is Lifecycle.OPEN:
            started = time.time()
            stall = asyncio.get_running_loop().call_later(STALL_AFTER, self._stalled, started)
            try:
                if self._pending is not None:
                    found = await self._catch_up(commands, results, told)
                    if refused is not None and not found:
                        raise refused  # not a seq the record holds: a refusal of its own
                    refused = None
                todo = [i for i, result in enumerate(results) if result is None]
                if todo:
                    decision = self._decide([commands[i] for i in todo], now=time.time())
                    self._pending = decision
                    await self._write(decision)
                    self._pending = None
                    self._take_effect(decision)
                    for i, result in zip(todo, decision.results(), strict=True):
                        results[i] = result
                    told.extend(decision.events)
            except LeaseLost as exc:
                # Nothing more is decided or committed here: every command queued or to come
                # fails at once, and the owner hears of the loss once (and closes the room).
                self._pending = None
                self._closed_by = self._closed_by or RoomClosed(str(exc))
                lost_now = self.state is Lifecycle.OPEN
                self.state = Lifecycle.CLOSING
                if lost_now:
                    self._on_lease_lost(exc)
                return results, told
            except IntegrityError as exc:
                if self._pending is None or refused is not None:
                    self._pending = None
                    raise
                refused = exc  # asked of the record at once, without counting as an outage
                continue
            except Exception as exc:
                if not is_transient(exc):
                    self._pending = None
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
                isinstance(c, ResumeClock) for c in commands
            ):
                self.hold(started, "record")
            if not self.health.ok:
                self._set_health(RecordHealth())
            return results, told
        return results, told

    async def _catch_up(
        self, commands: list[Command], results: list[Result | None], told: list[Event]
    ) -> bool:
        """After a commit whose outcome is unknown (or refused for a ``seq`` the record
        holds): take what the record holds after the live state, and settle the commands
        whose events it holds. Whether it held anything."""
        decision = self._pending
        assert decision is not None
        stored = await asyncio.to_thread(self.rm.store.events, self.rm.id, after=self.rm.seq)
        self._pending = None
        if not stored:
            return False  # nothing landed: what is left is decided afresh
        written = _stored(decision.events)
        same = 0
        for ours, theirs in zip(written, stored, strict=False):
            if event_to_dict(ours) != event_to_dict(theirs):
                break
            same += 1
        batch_index = {id(c): i for i, c in enumerate(commands)}

        def settle(i: int, result: Result) -> None:
            results[batch_index[id(decision.commands[i])]] = result

        if same == len(written) == len(stored):  # the commit landed: as if it had said so
            self._take_effect(decision)
            for i, result in enumerate(decision.results()):
                settle(i, result)
            told.extend(decision.events)
            resumed = True
        else:
            # Only part of it, or not ours: the record's events are the truth. The commands
            # whose events it holds are done; the rest are decided again on what it holds.
            self.rm.match.apply(stored)
            self.commits += 1
            self._committed = True
            told.extend(stored)
            count, resumed = 0, False
            for i, result in decision.entries:
                mine = _stored(result) if isinstance(result, list) else []
                if not mine or count + len(mine) > same:
                    break
                count += len(mine)
                if i is None:
                    resumed = True
                    for j, c in enumerate(decision.commands):
                        if isinstance(c, ResumeClock):
                            settle(j, result)
                else:
                    settle(i, result)
        if resumed:
            # a running clock went on from the decision's moment; the room has been held
            # since then (nothing was shown), and gets that time back next
            self._held_since, self._held_reason = decision.now, "record"
        log.warning(
            "match %d: the record held %d events the room had not taken (a commit whose "
            "outcome was lost); taken, not written again",
            self.rm.id, len(stored),
        )  # fmt: skip
        return True

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

    def _decide(self, commands: list[Command], *, now: float) -> _Decision:
        """Decide ``commands`` (after resuming a clock that was held, if any) on the match as
        it is; the live match is unchanged."""
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
        rest = [i for i, c in enumerate(commands) if not isinstance(c, ResumeClock)]
        decided, state, events = self.rm.decide_many(
            [*prefix, *(commands[i] for i in rest)], now=now
        )
        entries: list[tuple[int | None, Result]] = [(None, decided[0])] if prefix else []
        entries += zip(rest, decided[len(prefix) :], strict=True)
        return _Decision(list(commands), entries, state, events, now)

    async def _write(self, decision: _Decision) -> None:
        """Commit the decision's events (with the other rooms' changes of the moment, through
        the server's group writer)."""
        events = decision.events
        if not events:
            return
        # words revealed (or presses counted) and nothing else: stored before they are
        # shown, without a disk sync of their own (writer.py)
        synced = not all(ev.type in _UNSYNCED for ev in events)
        if self.writer is not None:
            await self.writer.write(self.rm.id, events, self.rm.fence, synced=synced)
        else:
            await asyncio.to_thread(
                self.rm.store.append, self.rm.id, events, holder=self.rm.fence, synced=synced
            )

    def _take_effect(self, decision: _Decision) -> None:
        """The decision's events are stored: they take effect."""
        if decision.events:
            self.rm.match.state = decision.state
        self.commits += 1
        self._committed = True
        self._held_since = None  # a clock held, if any, has resumed
