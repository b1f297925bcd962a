"""One websocket as the server keeps it: who is on it, its outgoing queue, its clock estimate,
its rate limit, and its life cycle.

A connection is ``open`` until the server closes it (its room closed, the server stops) or
the client goes away; then ``closing`` while what was queued before the close is written and
the close frame sent, then ``closed``. As websockets' own protocol keeps one ``State`` that
every send checks, every send here checks the connection's: nothing is sent once it closes,
and its pings stop with it. The close frame carries a code and a reason the pages and the
moderator's terminal understand (:data:`CLOSE_MOVED`: say ``hello`` to the URL the ``error``
before it named; :data:`CLOSE_STOPPING`: the server is going away, reconnect).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from starlette.websockets import WebSocket

from grace_arena.protocol import ErrorMsg, JoinTeam, Ping, Pong, Role
from grace_arena.server.arbiter import ClockEstimate, LoopLag, room_round_trip
from grace_arena.server.frames import abort_of, write_now_of

log = logging.getLogger(__name__)

#: Close codes (4000-4999 are the application's): the match is served by another server
#: process now (the ``error`` ``elsewhere`` sent before it says where)...
CLOSE_MOVED = 4001
#: ...this server process is stopping (1001 "going away"): reconnect, here or elsewhere...
CLOSE_STOPPING = 1001
#: ...the client is too far behind to catch up (1013 "try again later")...
CLOSE_LAGGING = 1013
#: ...its player joined on another device while this one had stopped answering.
CLOSE_REPLACED = 4002
#: What the server's log says of a client dropped for lagging (benchmarks count it).
LAG_DROP = "too far behind"
#: How long a closing connection may take to write what it had queued and its close frame
#: before its socket is dropped.
CLOSE_TIMEOUT = 2.0


class ConnState(StrEnum):
    OPEN = "open"
    CLOSING = "closing"
    CLOSED = "closed"


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

    def wait(self, now: float) -> float:
        """Seconds until one more message would be allowed (nothing is taken)."""
        if self.tokens < 0:
            return 0.0
        tokens = min(self.burst, self.tokens + (now - self.last) * self.rate)
        return 0.0 if tokens >= 1 else (1 - tokens) / self.rate


class LoopWatch:
    """Watches the server's event loop for the time it is too busy to read (one per server
    process): a task that wakes every :data:`~grace_arena.server.arbiter.LOOP_TICK` and tells
    :class:`~grace_arena.server.arbiter.LoopLag` when it did. A message's read delay
    (:meth:`read_delay`) is measured apart from its time on the network, so that a buzz read
    late by a stalled loop keeps the credit of its network (``arbiter.compensate``). It runs
    while the process has connections (its wake-ups cost about 2 % of a core)."""

    def __init__(self) -> None:
        self.lag = LoopLag()
        self._task: asyncio.Task | None = None

    def start(self) -> None:
        """Start watching the running loop, afresh (nothing happens if it is watched)."""
        if self._task is None or self._task.done():
            self.lag = LoopLag()  # (a loop not watched for a while was not busy all along)
            self._task = asyncio.get_running_loop().create_task(self._watch())

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None

    def read_delay(self, mono: float) -> float:
        """How long a message read at ``mono`` (monotonic) may have waited for the loop."""
        return self.lag.read_delay(mono)

    async def _watch(self) -> None:
        while True:
            self.lag.woke(time.monotonic())
            await asyncio.sleep(self.lag.tick)


async def next_join(
    conn: Connection, receive: Callable[[float | None], Awaitable[Any]], by: float
) -> JoinTeam | None:
    """The next ``join`` a new player's connection sends (pings answered, anything else
    refused) before ``by`` (monotonic; ``TimeoutError`` after it); None when it closed.
    ``receive`` is the transport's: the next message read, or None after an error reply."""
    while not conn.closed:
        received = await receive(max(0.0, by - time.monotonic()))
        if received is None:
            continue
        msg = received.message
        if isinstance(msg, Ping):
            conn.send_model(Pong(sent=msg.sent, time=time.time()))
        elif isinstance(msg, JoinTeam):
            return msg
        else:
            message = "choose a team and a name first (join)"
            conn.send_model(ErrorMsg(code="not_allowed", message=message, in_reply_to=msg.type))
    return None


def room_rtt_of(connections: Iterable[Connection]) -> float | None:
    """The round trip of a room (``arbiter.room_round_trip``) from the shortest round trip of
    each of its connections that plays or moderates: a display, which anyone with the join
    code may open, has no say in it."""
    return room_round_trip(
        conn.clock.min_rtt for conn in connections if conn.role in ("player", "moderator")
    )


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
        self.state = ConnState.OPEN
        self.role: Role | None = None
        #: A moderator who follows the match but may not act (another one controls it).
        self.watching = False
        self.player: str | None = None
        self.team: str | None = None
        #: The live match (a ``grace_arena.server.room.Room``: the room knows its connections,
        #: a connection knows nothing of rooms) this connection follows (None before its
        #: hello, or while a player waits for the team's next match in an event).
        self.room: Any = None
        #: The room moved on to its next match (``next_match`` was sent): the client's next
        #: ``hello`` is a new handshake on this connection.
        self.moved = False
        #: A player of an event whose team has no match here yet.
        self.waiting_event: int | None = None
        #: Where the client connected from (its address), for limits and throttling.
        client = getattr(ws, "client", None)
        self.address = client.host if client else "?"
        #: New player names this connection registered (``Rooms`` limits them).
        self.new_names = 0
        #: The client takes words revealed as ``reveal`` messages (its hello said so), and
        #: the tossup and position of the last state (or reveal) it was sent.
        self.reveals = False
        self.shown: tuple[str, int] | None = None
        self.clock = ClockEstimate()
        #: When the client was last heard from (monotonic): any message, a pong included.
        self.heard_at = time.monotonic()
        #: The client closed the connection itself (a close frame, normal or going away),
        #: rather than its network dropping or the server ending it.
        self.left = False
        self.queue: asyncio.Queue[str | None] = asyncio.Queue()
        #: The close frame to send once the queue is written (code, reason).
        self._close_with: tuple[int, str] | None = None
        self._write_now = write_now_of(ws.scope)
        self._abort = abort_of(ws.scope)
        self._writing = False  # the writer task is sending a message
        self._pinger: asyncio.Task | None = None

    @property
    def closed(self) -> bool:
        """Nothing more is sent on it (closing or closed)."""
        return self.state is not ConnState.OPEN

    # -- sending -------------------------------------------------------------------------------

    def send(self, text: str) -> None:
        if self.closed:
            return
        self.queued_bytes += len(text.encode())
        if self.queued_bytes > self.max_queue_bytes:
            self._drop_for_lag()
            return
        self.queue.put_nowait(text)

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
        if self.closed:
            return
        text = message.model_dump_json()
        if not self.write_now(text.encode()):
            self.send(text)

    async def writer(self) -> None:
        """Write what is queued, in order; after :meth:`close`, the close frame."""
        try:
            while (text := await self.queue.get()) is not None:
                self._writing = True
                await self.ws.send_text(text)
                self._writing = False
                self.queued_bytes = max(0, self.queued_bytes - len(text.encode()))
            if self._close_with is not None:
                code, reason = self._close_with
                await self.ws.close(code=code, reason=reason)
        except Exception:  # the socket is gone; the reader side cleans up
            pass
        finally:
            self.state = ConnState.CLOSED

    # -- closing ---------------------------------------------------------------------------------

    def close(self, code: int, reason: str) -> None:
        """Close the connection from the server's side: what was sent before is written, then
        the close frame (``code``, ``reason``); nothing after. A client that does not take it
        within :data:`CLOSE_TIMEOUT` is dropped."""
        if self.closed:
            return
        self.state = ConnState.CLOSING
        self._close_with = (code, reason[:120])
        self.stop_pinging()
        self.queue.put_nowait(None)
        with contextlib.suppress(RuntimeError):  # no running loop: nothing to wait for
            asyncio.get_running_loop().call_later(CLOSE_TIMEOUT, self._drop_if_open)

    def end(self) -> None:
        """The client went away: stop the writer after what is queued, and the pings."""
        if self.state is ConnState.OPEN:
            self.state = ConnState.CLOSING
            self.queue.put_nowait(None)
        self.stop_pinging()

    def _drop_if_open(self) -> None:
        if self.state is not ConnState.CLOSED and self._abort is not None:
            self._abort()

    def _drop_for_lag(self) -> None:
        # Said in the server's log: from the client's side a drop is a connection closed
        # without a close frame (code 1006), which a network failure looks like too.
        log.warning(
            "dropped a %s connection from %s: %s (%d bytes waiting to be sent, over the "
            "limit of %d)",
            self.role or "new", self.address, LAG_DROP, self.queued_bytes, self.max_queue_bytes,
        )  # fmt: skip
        self.state = ConnState.CLOSING
        self.dropped_for_lag = True
        while not self.queue.empty():  # free what was waiting
            self.queue.get_nowait()
        self.queued_bytes = 0
        self.queue.put_nowait(None)  # ends the writer
        self.stop_pinging()
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
                self.ws.close(code=CLOSE_LAGGING, reason="too far behind: reconnect"), timeout=5.0
            )

    # -- pings -----------------------------------------------------------------------------------

    def start_pinging(self, interval: float = 2.0) -> None:
        if self._pinger is None and not self.closed:
            self._pinger = asyncio.get_running_loop().create_task(self._ping(interval))

    def stop_pinging(self) -> None:
        if self._pinger is not None:
            self._pinger.cancel()
            self._pinger = None

    async def _ping(self, interval: float) -> None:
        """Pings for the clock estimate: a quick burst at first, then every ``interval`` at a
        phase of the connection's own (drawn at random), so that connections that came
        together (a room of phones joining at once, or coming back after a restart) are not
        all pinged, and do not all answer, in the same instant of every ``interval``: a
        lock-out or a word falling due then would wait behind hundreds of pings and pongs."""
        delays = [random.uniform(0.05, interval), *[0.05] * 5]  # (taken from the end)
        while not self.closed:
            now = time.time()
            self.clock.sent(now)
            self.send_model(Ping(sent=now))
            await asyncio.sleep(delays.pop() if delays else interval)
