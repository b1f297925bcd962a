"""An asyncio event loop on a clock the test controls, for tests of what happens when.

The loop's clock (``loop.time()``, which ``asyncio.sleep``, ``call_later`` and timeouts go by)
stands still while callbacks run and, when the loop would wait for its next timer with nothing
else to do, jumps to that timer instead of waiting. A test then asserts exact times, whatever
the machine's load: 0.25 s of the loop's clock is 0.25 s however long the work between took.

Only the loop's clock is virtual: code that reads ``time.time()`` gets the wall clock, and work
in other threads (``asyncio.to_thread``) runs in real time while the virtual clock may jump
past it, so a scenario on this loop does its work on the loop (see ``OnTheLoop`` writers in the
tests).
"""

from __future__ import annotations

import asyncio
import selectors
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class VirtualClockLoop(asyncio.SelectorEventLoop):
    def __init__(self, start: float = 1000.0) -> None:
        super().__init__(selectors.DefaultSelector())
        self._now = start
        # The loop waits for its next timer in its selector's select(timeout): look without
        # waiting, and if nothing is ready, move the clock on by that timeout instead.
        select = self._selector.select

        def select_without_waiting(timeout: float | None = None) -> list[Any]:
            if timeout is None or timeout <= 0:
                return select(timeout)
            ready = select(0)
            if not ready:
                self._now += timeout
            return ready

        self._selector.select = select_without_waiting  # type: ignore[method-assign]

    def time(self) -> float:
        return self._now


def run(work: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(work)`` on a :class:`VirtualClockLoop`."""
    with asyncio.Runner(loop_factory=VirtualClockLoop) as runner:
        return runner.run(work)
