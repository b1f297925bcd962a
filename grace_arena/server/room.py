"""One match being played live: its connections, its reader, its timers and its races.

Every change goes through ``Room.command``: under the room's lock, the recorded match commits
the events (in a worker thread, so the event loop keeps serving) and only then are they sent to
each connection, in order. A state broadcast is written straight to each socket whose connection
has nothing queued and whose send buffer is short (one frame write per client, the cost of a
plain websockets broadcast); anything else goes on the connection's outgoing queue, which its
own writer task drains, so a slow client never holds up the others or the lock.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import statistics
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.websockets import WebSocket

from grace_arena.core.commands import Buzz, Command, Pause, Resume, Reveal, TimeUp
from grace_arena.core.errors import IllegalCommand
from grace_arena.core.events import (
    BuzzAccepted,
    BuzzRefused,
    BuzzRepeated,
    BuzzTiming,
    Event,
    TossupStarted,
    event_to_dict,
)
from grace_arena.core.phases import HAS_FLOOR, Phase
from grace_arena.protocol import (
    BuzzResult,
    ErrorMsg,
    EventView,
    Ping,
    Role,
    State,
)
from grace_arena.record.store import RecordedMatch
from grace_arena.server import views
from grace_arena.server.frames import abort_of, text_frame, write_now_of
from grace_arena.server.views import ModelTrajectory
from grace_arena.server.writer import GroupWriter

log = logging.getLogger(__name__)

#: Events that change nothing a player's screen shows.
_QUIET_EVENTS = frozenset({"buzz_refused", "buzz_repeated"})


#: Compensated mode trusts a client's press time only with this many clock samples...
MIN_CLOCK_SAMPLES = 3
#: ...whose offsets agree within this (seconds)...
MAX_OFFSET_SPREAD = 0.25
#: ...and only if the corrected press falls within the buzz's round trip, give or take this.
PRESS_SLACK = 0.05

#: A round trip longer than this is no sample of the clock (a phone on a bad network
#: still answers within a second); a client could otherwise hold its pongs back to claim
#: an early press in compensated races.
MAX_RTT = 1.0


@dataclass
class ClockEstimate:
    """Offset (server - client) and round-trip time from server-initiated pings.

    The offset comes from the sample with the smallest round trip (the least queueing, so
    the tightest bound); the round trip reported is the median of the recent samples. A pong
    counts only if it echoes a ping this server sent on this connection and has not been
    answered yet, within :data:`MAX_RTT`; others are ignored (and counted).
    """

    samples: deque[tuple[float, float]] = field(default_factory=lambda: deque(maxlen=16))
    pending: deque[float] = field(default_factory=lambda: deque(maxlen=32))
    ignored: int = 0

    def sent(self, at: float) -> None:
        """A ping went out with ``sent = at``."""
        self.pending.append(at)

    def add(self, sent: float, client_time: float, received: float) -> bool:
        """Take a pong; False when it does not count."""
        rtt = received - sent
        if sent not in self.pending or not 0 <= rtt <= MAX_RTT:
            self.ignored += 1
            return False
        self.pending.remove(sent)
        self.samples.append((rtt, (sent + received) / 2 - client_time))
        return True

    @property
    def offset(self) -> float | None:
        return min(self.samples)[1] if self.samples else None

    @property
    def rtt(self) -> float | None:
        return statistics.median(r for r, _ in self.samples) if self.samples else None

    @property
    def spread(self) -> float | None:
        """Max - min of the offsets the samples gave: a steady clock on a steady network
        gives a few milliseconds; a client whose answers do not agree with each other is no
        clock to trust."""
        if not self.samples:
            return None
        offsets = [o for _, o in self.samples]
        return max(offsets) - min(offsets)


@dataclass
class RateLimit:
    """A token bucket: ``rate`` messages per second on average, bursts up to ``burst``."""

    rate: float
    burst: int
    tokens: float = -1.0
    last: float = 0.0

    def allow(self, now: float) -> bool:
        if self.tokens < 0:
            self.tokens, self.last = float(self.burst), now
        self.tokens = min(self.burst, self.tokens + (now - self.last) * self.rate)
        self.last = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


class Connection:
    """One websocket: its role, identity, clock estimate, rate limit and outgoing queue."""

    def __init__(
        self, ws: WebSocket, rate: RateLimit | None = None, max_queue_bytes: int = 1 << 20
    ) -> None:
        self.ws = ws
        self.rate = rate or RateLimit(20.0, 40)
        #: Bytes waiting to be sent; past ``max_queue_bytes`` the client is too far behind
        #: (it stopped reading, or its network cannot keep up): its connection is dropped and
        #: what was waiting is freed, so that one client cannot grow the server's memory.
        self.max_queue_bytes = max_queue_bytes
        self.queued_bytes = 0
        self.dropped_for_lag = False
        self.role: Role | None = None
        #: A moderator who follows the match but may not act (another one controls it).
        self.watching = False
        self.player: str | None = None
        self.team: str | None = None
        #: The live match this connection follows (None before its hello, or while a player
        #: waits for the team's next match in an event).
        self.room: Room | None = None
        #: The room moved on to its next match (``next_match`` was sent): the client's next
        #: ``hello`` is a new handshake on this connection.
        self.moved = False
        #: A player of an event whose team has no match here yet.
        self.waiting_event: int | None = None
        self.clock = ClockEstimate()
        self.queue: asyncio.Queue[str | None] = asyncio.Queue()
        self.closed = False
        self._write_now = write_now_of(ws.scope)
        self._abort = abort_of(ws.scope)
        self._writing = False  # the writer task is sending a message

    def send(self, text: str) -> None:
        if self.closed:
            return
        self.queued_bytes += len(text.encode())
        if self.queued_bytes > self.max_queue_bytes:
            self._drop_for_lag()
            return
        self.queue.put_nowait(text)

    def _drop_for_lag(self) -> None:
        self.closed = self.dropped_for_lag = True
        while not self.queue.empty():  # free what was waiting
            self.queue.get_nowait()
        self.queued_bytes = 0
        self.queue.put_nowait(None)  # ends the writer
        with contextlib.suppress(RuntimeError):  # no running loop: nothing to close
            asyncio.get_running_loop().create_task(self._close_lagging())

    async def _close_lagging(self) -> None:
        # A client that does not read will not take a close frame either: drop the socket
        # (the reader side then sees the disconnect and cleans up); without the extension,
        # try the closing handshake.
        if self._abort is not None:
            self._abort()
            return
        with contextlib.suppress(Exception):
            await asyncio.wait_for(
                self.ws.close(code=1013, reason="too far behind: reconnect"), timeout=5.0
            )

    def end(self) -> None:
        """Stop the writer after what is queued (the server is shutting down)."""
        self.queue.put_nowait(None)

    def write_now(self, data: bytes, frame: bytes | None = None) -> bool:
        """Write one text frame (UTF-8 ``data``; ``frame``: the frame already built) straight
        to the socket if nothing is queued or being sent before it and the socket keeps up
        (:mod:`grace_arena.server.frames`); ``False`` if it must be queued instead. Messages
        keep their order either way.
        """
        if self._write_now is None or self.closed or self._writing or not self.queue.empty():
            return False
        return bool(self._write_now(data, frame))

    def send_model(self, message: Any) -> None:
        """Send one message: straight to the socket when nothing is waiting before it (a
        storm's hundreds of buzz results then cost no writer-task wake-up each), else queued."""
        text = message.model_dump_json()
        if not self.write_now(text.encode()):
            self.send(text)

    async def writer(self) -> None:
        try:
            while (text := await self.queue.get()) is not None:
                self._writing = True
                await self.ws.send_text(text)
                self._writing = False
                self.queued_bytes = max(0, self.queued_bytes - len(text.encode()))
        except Exception:  # the socket is gone; the reader side cleans up
            self.closed = True

    async def pinger(self, interval: float = 2.0) -> None:
        """Pings for the clock estimate: a quick burst at first, then every ``interval``."""
        delays = [0.05] * 5
        while not self.closed:
            now = time.time()
            self.clock.sent(now)
            self.send_model(Ping(sent=now))
            await asyncio.sleep(delays.pop() if delays else interval)


class Room:
    """A live match."""

    def __init__(
        self,
        rm: RecordedMatch,
        *,
        join_code: str,
        compensated: bool = False,
        race_window: float = 0.15,
        trajectories: dict[str, dict[str, ModelTrajectory]] | None = None,
        words: dict[str, list[str]] | None = None,
        writer: GroupWriter | None = None,
        guides: dict[str, dict[int, str]] | None = None,
    ) -> None:
        self.rm = rm
        #: Commits this room's changes with the other rooms' (None: a transaction each).
        self.writer = writer
        self.join_code = join_code
        self.compensated = compensated
        self.race_window = race_window
        self.trajectories = trajectories or {}
        self.words = words or {}  # tossup id -> its words as written
        self.guides = guides or {}  # tossup id -> word index -> pronunciation guide after it
        self.connections: set[Connection] = set()
        #: The moderator's connection that controls the match (one at a time).
        self.controller: Connection | None = None
        #: SHA-256 of the match's valid moderator tokens.
        self.moderator_hashes: frozenset[str] = frozenset()
        self.lock = asyncio.Lock()
        self.running = False  # the reader advances the reveal position
        #: Set at every change the room takes (the reader waits on it while not reading).
        self._changed = asyncio.Event()
        self.reveal_times: list[tuple[float, int]] = []  # (wall time, position) this tossup
        self.tossup_log: list[dict[str, Any]] = []
        self._tasks: list[asyncio.Task] = []
        self._timer: asyncio.Task | None = None
        self._timer_deadline: float | None = None
        self._pending: list[tuple[Connection, BuzzTiming]] = []
        self._pending_task: asyncio.Task | None = None
        self._queue: list[tuple[Command, asyncio.Future[list[Event]]]] = []
        self._drainer: asyncio.Task | None = None
        #: For a match of an event's schedule: the event, room and round (in every state).
        self.event: EventView | None = None
        #: Called with the events of every committed change, after everyone was told
        #: (the event's rooms follow rulings and the end of the match this way).
        self.on_events: Callable[[Room, list[Event]], None] | None = None

    # -- life cycle ----------------------------------------------------------------------------

    @property
    def match(self):
        return self.rm.match

    @property
    def wpm(self) -> int:
        """The reading pace, as the record has it (``set_pace`` events)."""
        return self.rm.match.state.pace

    def start(self) -> None:
        self._tasks.append(asyncio.create_task(self._reader()))
        self._schedule_deadline()

    async def stop(self) -> None:
        """Stop the reader and timers (the match is no longer served here); the connections
        are the caller's."""
        for task in [*self._tasks, self._timer, self._pending_task, self._drainer]:
            if task is not None:
                task.cancel()

    async def close(self, reason: str | None = None) -> None:
        """Stop, and end every connection (after an ``elsewhere`` error saying ``reason``,
        when given: another process serves the match now)."""
        await self.stop()
        for conn in list(self.connections):
            if reason:
                conn.send_model(ErrorMsg(code="elsewhere", message=reason))
            conn.end()

    # -- commands ------------------------------------------------------------------------------

    async def command(self, command: Command) -> list[Event]:
        """Commit ``command``'s events, then tell everyone. Raises ``IllegalCommand``."""
        return await self.submit(command)

    def submit(self, command: Command) -> asyncio.Future[list[Event]]:
        """Queue ``command``; the future gets its events once they are committed and sent
        (or the ``IllegalCommand`` that refused it).

        Commands queued while a batch is being committed are decided and committed together
        in the next one (one transaction, one state to each client), so a storm of buzzes
        costs a few commits, and a moderator's command or the answer timer waits for one
        batch at most. The queue keeps the order commands arrived in.
        """
        future: asyncio.Future[list[Event]] = asyncio.get_running_loop().create_future()
        self._queue.append((command, future))
        if self._drainer is None or self._drainer.done():
            self._drainer = asyncio.create_task(self._drain())
        return future

    async def _drain(self) -> None:
        while self._queue:
            batch, self._queue = self._queue, []
            async with self.lock:
                try:
                    results = await self._commit([c for c, _ in batch])
                except Exception as exc:  # the record failed: nothing took effect
                    log.exception("committing %d commands failed", len(batch))
                    for _, future in batch:
                        if not future.done():
                            future.set_exception(exc)
                    continue
                events = [ev for r in results if isinstance(r, list) for ev in r]
                try:
                    if events:
                        self._after(events)
                finally:
                    for (_, future), result in zip(batch, results, strict=True):
                        if future.done():  # its caller went away
                            continue
                        if isinstance(result, IllegalCommand):
                            future.set_exception(result)
                        else:
                            future.set_result(result)

    async def _commit(self, commands: list[Command]) -> list[list[Event] | IllegalCommand]:
        """Decide ``commands`` and commit their events (with the other rooms' changes of the
        moment, through the server's group writer), then let them take effect."""
        if self.writer is None:
            return await asyncio.to_thread(self.rm.handle_many, commands, now=time.time())
        results, state, events = self.rm.decide_many(commands, now=time.time())
        if events:
            # words revealed and nothing else: stored before they are shown, without a disk
            # sync of their own (writer.py)
            words_only = all(ev.type == "words_revealed" for ev in events)
            await self.writer.write(self.rm.id, events, self.rm.holder, synced=not words_only)
            self.rm.match.state = state
        return results

    def _after(self, events: list[Event]) -> None:
        if all(isinstance(ev, BuzzRepeated) for ev in events):
            # presses counted on refusals already told: each player hears of its own press
            # from its result, and nobody else of any
            return
        for ev in events:
            if isinstance(ev, BuzzRepeated):
                continue
            if isinstance(ev, TossupStarted):
                self.reveal_times = [(ev.t, -1)]
                self.tossup_log = []
                self.running = True
            elif ev.type == "words_revealed":
                self.reveal_times.append((ev.t, ev.position))  # type: ignore[union-attr]
            self.tossup_log.append(event_to_dict(ev))
        # Refused buzzes change nothing a player sees: the buzzer hears of its own buzz from
        # its result, and only the moderator and the displays (which list lost races) get
        # the new state, not every phone in the room.
        quiet = all(ev.type in _QUIET_EVENTS for ev in events)
        self.broadcast_state(
            self._events_for(events), roles=("moderator", "display") if quiet else None
        )
        self._schedule_deadline()
        self._changed.set()
        if self.on_events is not None and not quiet:
            try:
                self.on_events(self, events)
            except Exception:  # a follower's failure must not undo what was committed
                log.exception("match %d: following its events failed", self.rm.id)

    def _events_for(self, events: list[Event]) -> dict[str, list[dict[str, Any]]]:
        """The events of one change as each role may see them."""
        return views.events_for(self.match, events, self.tossup_log)

    def public_tossup_id(self, tossup_id: str | None) -> str | None:
        return views.public_tossup_id(self.match, tossup_id)

    # -- views ---------------------------------------------------------------------------------

    def state_for(self, role: Role, events: list[dict[str, Any]] | None = None) -> State:
        """What ``role`` may see of the match now (:func:`views.state_view`)."""
        facts = views.RoomFacts(
            match_id=self.rm.id,
            join_code=self.join_code,
            words=self.words,
            guides=self.guides,
            wpm=self.wpm,
            running=self.running,
            trajectories=self.trajectories,
            tossup_log=self.tossup_log,
            event=self.event,
        )
        return views.state_view(self.match, facts, role, events, now=time.time())

    def broadcast_state(
        self,
        events: dict[str, list[dict[str, Any]]] | None = None,
        *,
        roles: tuple[Role, ...] | None = None,
    ) -> None:
        """Send every client (of ``roles``, if given) its role's state, encoded once per role,
        with the change's events in it."""
        encoded: dict[str, tuple[str, bytes, bytes]] = {}
        for conn in self.connections:
            if conn.role is None or (roles is not None and conn.role not in roles):
                continue
            if conn.role not in encoded:
                role_events = (events or {}).get(conn.role)
                text = self.state_for(conn.role, role_events).model_dump_json()
                data = text.encode()
                encoded[conn.role] = (text, data, text_frame(data))
            text, data, frame = encoded[conn.role]
            if not conn.write_now(data, frame):
                conn.send(text)

    # -- reading -------------------------------------------------------------------------------

    def _reading(self) -> bool:
        game = self.match.game
        return self.running and game.phase is Phase.READING and not game.paused

    async def _reader(self) -> None:
        """Reveal the next word every 60/wpm seconds while the room reads. The words keep a
        schedule from the first one: a slow commit makes one word late, not every word after
        it (a room among many others on one server keeps its pace). When the reading stops (a
        buzz, a pause), the schedule starts again a word after it resumes; a reader that fell
        more than a word behind skips the backlog rather than reveal a burst of words."""
        loop = asyncio.get_running_loop()
        next_at: float | None = None
        while True:
            spacing = 60.0 / self.wpm
            if not self._reading():
                # Until the reading starts again, the first word a word's time after that:
                # each room keeps the pace of its own start, not a grid the rooms of a
                # server share (several rooms' words falling due at once wait for each other).
                next_at = None
                self._changed.clear()
                await self._changed.wait()
                continue
            now = loop.time()
            if next_at is None:
                next_at = now + spacing
            elif next_at < now - spacing:
                next_at = now
            await asyncio.sleep(max(0.0, next_at - now))
            if self._reading():
                with contextlib.suppress(IllegalCommand):
                    await self.command(Reveal())
            next_at += spacing

    async def step(self, unit: str) -> list[Event]:
        game = self.match.game
        spec = self.match.current_tossup
        if unit == "clue" and spec is not None:
            nxt = min(game.position + 1, spec.n_words - 1)
            return await self.command(Reveal(to=spec.clue_ends[spec.clue_of(nxt)]))
        return await self.command(Reveal())

    async def pause(self) -> list[Event]:
        self.running = False
        events: list[Event] = []
        if not self.match.game.paused:
            events = await self.command(Pause())
        else:
            self.broadcast_state()
        return events

    async def resume(self) -> list[Event]:
        self.running = True
        self._changed.set()  # (not paused: no event follows, only the flag changed)
        if self.match.game.paused:
            return await self.command(Resume())
        self.broadcast_state()
        return []

    # -- deadlines -----------------------------------------------------------------------------

    def _schedule_deadline(self) -> None:
        game = self.match.game
        deadline = game.deadline if game.phase in (*HAS_FLOOR, Phase.AWAITING) else None
        if game.paused:
            deadline = None
        if deadline == self._timer_deadline:
            return
        if self._timer is not None:
            self._timer.cancel()
        self._timer_deadline = deadline
        self._timer = asyncio.create_task(self._fire(deadline)) if deadline is not None else None

    async def _fire(self, deadline: float) -> None:
        await asyncio.sleep(max(0.0, deadline - time.time()) + 0.01)
        with contextlib.suppress(IllegalCommand):
            if self.match.game.deadline == deadline:
                self._timer_deadline = None
                await self.command(TimeUp())

    # -- buzzing -------------------------------------------------------------------------------

    def timing_for(
        self, conn: Connection, client_time: float | None, wall: float, mono: float
    ) -> BuzzTiming:
        """A buzz's timing: when it arrived (``wall``/``mono``) and the client's clock."""
        return BuzzTiming(
            received_wall=wall,
            received_mono=mono,
            client_press=client_time,
            clock_offset=conn.clock.offset,
            rtt=conn.clock.rtt,
            clock_samples=len(conn.clock.samples),
            clock_spread=conn.clock.spread,
        )

    def buzz(self, conn: Connection, timing: BuzzTiming) -> None:
        """First come, first served; or, in compensated mode, hold the race for a window.

        Returns at once: the buzz is queued (:meth:`submit`) and its player gets a
        ``buzz_result`` once it is committed, so the player's socket keeps being read (and
        rate-limited) while a storm is decided.
        """
        game = self.match.game
        open_race = game.phase in (Phase.READING, Phase.AWAITING) and game.floor is None
        if self.compensated and (open_race or self._pending_task is not None):
            self._pending.append((conn, timing))
            if self._pending_task is None:
                self._pending_task = asyncio.create_task(self._settle_race())
            return
        self._apply_buzz(conn, timing, None)

    def compensate(self, timing: BuzzTiming) -> BuzzTiming:
        """The buzz's timing with its server-clock press time: the client's press time
        corrected by the clock offset, if the estimate is plausible (enough samples that
        agree, and a press within the round trip before receipt); else its arrival, marked
        ``arrival_fallback`` with the reason."""
        received = timing.received_wall or time.time()
        why = None
        if timing.client_press is None:
            why = "the client sent no press time"
        elif timing.clock_offset is None or timing.rtt is None:
            why = "no ping of the server was answered in time"
        elif (timing.clock_samples or 0) < MIN_CLOCK_SAMPLES:
            why = f"{timing.clock_samples} clock samples (fewer than {MIN_CLOCK_SAMPLES})"
        elif (timing.clock_spread or 0.0) > MAX_OFFSET_SPREAD:
            why = f"clock offsets spread over {timing.clock_spread:.3f} s"
        else:
            press = timing.client_press + timing.clock_offset
            if not received - timing.rtt - PRESS_SLACK <= press <= received + PRESS_SLACK:
                why = (
                    f"press {received - press:+.3f} s before receipt, round trip {timing.rtt:.3f} s"
                )
            else:
                return timing.model_copy(
                    update={
                        "estimated_press": min(received, max(received - timing.rtt, press)),
                        "arbitration": "compensated",
                    }
                )
        return timing.model_copy(
            update={"estimated_press": received, "arbitration": "arrival_fallback", "fallback": why}
        )

    def position_at(self, t: float) -> int:
        position = -1
        for when, pos in self.reveal_times:
            if when <= t:
                position = pos
        return max(position, 0)

    async def _settle_race(self) -> None:
        await asyncio.sleep(self.race_window)
        pending, self._pending = self._pending, []
        self._pending_task = None
        timed = [(conn, self.compensate(timing)) for conn, timing in pending]
        timed.sort(key=lambda item: item[1].estimated_press or 0.0)
        for conn, timing in timed:  # queued together: decided in one batch, in this order
            assert timing.estimated_press is not None
            self._apply_buzz(conn, timing, self.position_at(timing.estimated_press))

    def _apply_buzz(self, conn: Connection, timing: BuzzTiming, word: int | None) -> None:
        assert conn.team is not None and conn.player is not None
        future = self.submit(
            Buzz(team=conn.team, player=conn.player, timing=timing, word_index=word)
        )
        future.add_done_callback(lambda done: _tell_buzzer(conn, done))


def _tell_buzzer(conn: Connection, done: asyncio.Future[list[Event]]) -> None:
    """Send a buzz's player its outcome (or why it could not be taken)."""
    if done.cancelled():
        return
    exc = done.exception()
    if isinstance(exc, IllegalCommand):
        conn.send_model(ErrorMsg(code="illegal", message=str(exc), in_reply_to="buzz"))
        return
    if exc is not None:
        conn.send_model(
            ErrorMsg(
                code="server_error",
                message="the buzz could not be recorded: buzz again",
                in_reply_to="buzz",
            )
        )
        return
    for ev in done.result():
        if isinstance(ev, BuzzRepeated):  # refused as its first refusal was
            conn.send_model(
                BuzzResult(buzz_id=ev.buzz_id, outcome=ev.reason.value, word_index=ev.word_index)
            )
            return
        if isinstance(ev, BuzzAccepted | BuzzRefused):
            outcome = "won" if isinstance(ev, BuzzAccepted) else ev.reason.value
            margin = ev.margin if isinstance(ev, BuzzRefused) else None
            conn.send_model(
                BuzzResult(
                    buzz_id=ev.buzz_id, outcome=outcome, word_index=ev.word_index, margin=margin
                )
            )
            return
