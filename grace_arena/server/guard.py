"""Throttling guesses: join codes, match ids and tokens that an address gets wrong.

Each address has a bucket of wrong guesses: :data:`BURST` at once, then one more every
``1 / RATE`` seconds. A phone that mistypes a code, a moderator who pastes a stale token, never
notice; a script that guesses codes is held to :data:`RATE` guesses a second — with six-
character codes of 32 symbols (about 1.07e9), 34 years on average for one live code (see
``grace_arena.record.schedule.JOIN_CODE_LENGTH``). While an address is held, every code or
token it gives is refused unread (``rate_limited``), right or wrong, so a guess cannot be
tested by its answer.

Guesses are charged when their answer is known, after the record was read. So that guesses
sent together (many sockets of one address) cannot all pass the check before any is charged,
an address's guesses are looked at :data:`SLOTS` at a time (:meth:`Guard.turn`: the others
wait their turn, they are not refused), and those in flight when the bucket ran out are
charged all the same (the bucket goes into debt, at most :data:`MAX_DEBT`). Over any stretch
of time an address gets at most ``BURST + RATE * seconds + SLOTS`` guesses, and a club behind
one address whose phones all come back with a stale code waits seconds, not minutes.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

#: Wrong guesses an address may make at once...
BURST = 20
#: ...and per second after that.
RATE = 0.5
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


class Guard:
    """Wrong guesses per address (see the module docstring)."""

    def __init__(
        self, *, burst: int = BURST, rate: float = RATE, max_addresses: int = MAX_ADDRESSES
    ) -> None:
        self.burst = burst
        self.rate = rate
        self.max_addresses = max_addresses
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()
        #: Guesses refused because their address was held (for tests and the log).
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

    def _bucket(self, address: str, now: float) -> _Bucket | None:
        bucket = self._buckets.get(address)
        if bucket is None:
            return None
        bucket.tokens = min(self.burst, bucket.tokens + (now - bucket.last) * self.rate)
        bucket.last = now
        if bucket.tokens >= self.burst:  # back to full: nothing to remember
            del self._buckets[address]
            return None
        return bucket

    def wait(self, address: str, now: float | None = None) -> float:
        """Seconds before ``address`` may guess again (0: now)."""
        now = time.monotonic() if now is None else now
        bucket = self._bucket(address, now)
        if bucket is None or bucket.tokens >= 1:
            return 0.0
        self.refused += 1
        return (1 - bucket.tokens) / self.rate

    def failed(self, address: str, now: float | None = None) -> None:
        """``address`` gave a code or token that opens nothing."""
        now = time.monotonic() if now is None else now
        bucket = self._bucket(address, now)
        if bucket is None:
            bucket = self._buckets[address] = _Bucket(float(self.burst), now)
            while len(self._buckets) > self.max_addresses:
                self._buckets.popitem(last=False)
        self._buckets.move_to_end(address)
        bucket.tokens = max(-MAX_DEBT, bucket.tokens - 1)

    def message(self, wait: float) -> str:
        return f"too many wrong codes or tokens from your address: try again in {wait:.0f} s"
