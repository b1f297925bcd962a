"""Throttling guesses: join codes, match ids and tokens that a connection, and its address, get
wrong.

Each connection has a bucket of wrong guesses: :data:`BURST` at once, then one more every
``1 / RATE`` seconds. A phone that mistypes a code, a moderator who pastes a stale token, never
notice; a socket that guesses codes is held to :data:`RATE` guesses a second. While a
connection is held, every code or token it gives is refused unread (``rate_limited``), right
or wrong, so a guess cannot be tested by its answer.

An address has a bucket too, larger (:data:`ADDRESS_BURST`, then :data:`ADDRESS_RATE` a
second): the ceiling of every connection of the address together (its HTTP requests count as
one connection, :func:`http_connection`). A club's phones share one address behind its
router: one phone that sends a wrong code every second holds its own connection, not the
address (its guesses, one every 2 s once it is held, stay below the address's rate), so its
neighbours' right codes are looked at. A script that opens a socket per guess, or guesses
from many sockets, is held at the address's ceiling: then every code from the address is
refused unread. With six-character codes of 32 symbols (about 1.07e9), 8.5 years on average for one
live code at the ceiling (see ``grace_arena.record.schedule.JOIN_CODE_LENGTH``).

Guesses are charged when their answer is known, after the record was read. So that guesses
sent together (many sockets of one address) cannot all pass the check before any is charged,
an address's guesses are looked at :data:`SLOTS` at a time (:meth:`Guard.turn`: the others
wait their turn, they are not refused), and those in flight when a bucket ran out are charged
all the same (the bucket goes into debt, at most :data:`MAX_DEBT`). Over any stretch of time
an address gets at most ``ADDRESS_BURST + ADDRESS_RATE * seconds + SLOTS`` guesses, a
connection ``BURST + RATE * seconds + SLOTS``, and a club behind one address whose phones all
come back with a stale code waits seconds, not minutes.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections import OrderedDict
from collections.abc import AsyncIterator, MutableMapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

#: Wrong guesses a connection may make at once...
BURST = 20
#: ...and per second after that.
RATE = 0.5
#: Wrong guesses of every connection (and HTTP request) of an address together, at once...
ADDRESS_BURST = 100
#: ...and per second after that.
ADDRESS_RATE = 2.0
#: Codes or tokens of one address looked at at once...
SLOTS = 4
#: ...so that it never owes more than these (charged after the bucket ran out).
MAX_DEBT = SLOTS
#: Addresses remembered at most (the oldest are forgotten first: a flood of addresses cannot
#: grow the server's memory).
MAX_ADDRESSES = 10_000


@dataclass
class _Bucket:
    tokens: float
    last: float


def http_connection(address: str) -> str:
    """The one connection the HTTP requests of ``address`` make together: an HTTP request
    is held as one socket is (:data:`BURST`, :data:`RATE`), while the address's websockets
    are each held on their own."""
    return f"http:{address}"


class Guard:
    """Wrong guesses per connection and per address (see the module docstring)."""

    def __init__(
        self,
        *,
        burst: int = BURST,
        rate: float = RATE,
        address_burst: int = ADDRESS_BURST,
        address_rate: float = ADDRESS_RATE,
        max_addresses: int = MAX_ADDRESSES,
    ) -> None:
        self.burst = burst
        self.rate = rate
        self.address_burst = address_burst
        self.address_rate = address_rate
        self.max_addresses = max_addresses
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()
        #: Each connection's bucket, forgotten with the connection.
        self._connections: weakref.WeakKeyDictionary[object, _Bucket] = weakref.WeakKeyDictionary()
        #: The HTTP requests of each address, as one connection (:func:`http_connection`).
        self._http: OrderedDict[str, _Bucket] = OrderedDict()
        #: Guesses refused because their connection or address was held (for tests and the
        #: log).
        self.refused = 0
        #: Each address with hellos in flight: its turns, and how many hold or wait for one.
        self._turns: dict[str, tuple[asyncio.Semaphore, int]] = {}

    @asynccontextmanager
    async def turn(self, address: str) -> AsyncIterator[None]:
        """One of the address's :data:`SLOTS` turns to have a code or token looked at."""
        turns, users = self._turns.get(address, (None, 0))
        if turns is None:
            turns = asyncio.Semaphore(SLOTS)
        self._turns[address] = (turns, users + 1)
        try:
            async with turns:
                yield
        finally:
            turns, users = self._turns[address]
            if users <= 1:
                del self._turns[address]
            else:
                self._turns[address] = (turns, users - 1)

    def _refill(self, bucket: _Bucket | None, now: float, burst: int, rate: float) -> bool:
        """Refill ``bucket`` to ``now``; whether it is back to full (nothing to remember)."""
        if bucket is None:
            return True
        bucket.tokens = min(burst, bucket.tokens + (now - bucket.last) * rate)
        bucket.last = now
        return bucket.tokens >= burst

    def _address(self, address: str, now: float) -> _Bucket | None:
        bucket = self._buckets.get(address)
        if self._refill(bucket, now, self.address_burst, self.address_rate):
            self._buckets.pop(address, None)
            return None
        return bucket

    def _store(self, connection: object) -> MutableMapping[Any, _Bucket]:
        return self._http if isinstance(connection, str) else self._connections

    def _connection(self, connection: object | None, now: float) -> _Bucket | None:
        if connection is None:
            return None
        store = self._store(connection)
        bucket = store.get(connection)
        if self._refill(bucket, now, self.burst, self.rate):
            store.pop(connection, None)
            return None
        return bucket

    def wait(
        self, address: str, now: float | None = None, *, connection: object | None = None
    ) -> float:
        """Seconds before ``connection`` of ``address`` may guess again (0: now); None: the
        address's ceiling only."""
        now = time.monotonic() if now is None else now
        waits = [0.0]
        for bucket, rate in (
            (self._address(address, now), self.address_rate),
            (self._connection(connection, now), self.rate),
        ):
            if bucket is not None and bucket.tokens < 1:
                waits.append((1 - bucket.tokens) / rate)
        if max(waits):
            self.refused += 1
        return max(waits)

    def failed(
        self, address: str, now: float | None = None, *, connection: object | None = None
    ) -> None:
        """``connection`` of ``address`` (None: the address alone) gave a code or token that
        opens nothing."""
        now = time.monotonic() if now is None else now
        bucket = self._address(address, now)
        if bucket is None:
            bucket = self._buckets[address] = _Bucket(float(self.address_burst), now)
            while len(self._buckets) > self.max_addresses:
                self._buckets.popitem(last=False)
        self._buckets.move_to_end(address)
        bucket.tokens = max(-MAX_DEBT, bucket.tokens - 1)
        if connection is not None:
            own = self._connection(connection, now)
            if own is None:
                own = self._store(connection)[connection] = _Bucket(float(self.burst), now)
                while len(self._http) > self.max_addresses:
                    self._http.popitem(last=False)
            own.tokens = max(-MAX_DEBT, own.tokens - 1)

    def message(self, wait: float) -> str:
        return f"too many wrong codes or tokens: try again in {wait:.0f} s"
