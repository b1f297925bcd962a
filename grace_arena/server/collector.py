"""The garbage collector of a server process: what it holds the event loop for, and how often.

CPython's cyclic collector stops the whole process while it runs. A full (oldest generation)
pass traverses every object the process holds, and a server process of an event holds some
half a million: its packets, the model player's steps, 700 sockets' coroutines and buffers.
In the national bench (100 rooms on 2 processes) such a pass came every 3 to 6 seconds and
took 70 to 270 ms, with every room of the process waiting: a lock-out, a word or a commit
caught behind it was that much late, which was most of their p99.

:func:`settle` is called once a server process has started (``Settings.freeze_gc``): what is
loaded then is frozen (``gc.freeze``: left out of every pass), and the young generations are
collected less often (:data:`THRESHOLDS`), so that objects that live a moment (a state sent,
a commit's rows, a socket's frames) are freed by their reference counts before a pass
promotes them, and full passes, triggered by promotions, come seldom. :class:`Pauses` times
every pass (``/api/health``).
"""

from __future__ import annotations

import gc
import time
from collections import deque
from typing import Any

__all__ = ["THRESHOLDS", "Pauses", "pauses", "settle"]

#: ``gc.set_threshold`` of a server process: the youngest generation is collected after
#: 50,000 allocations (CPython's default: 700), the middle one after every 20 of those.
THRESHOLDS = (50_000, 20, 10)


class Pauses:
    """The time each collection held the process, per generation (the last ``keep``)."""

    def __init__(self, keep: int = 1_000) -> None:
        self.seconds: dict[int, deque[float]] = {g: deque(maxlen=keep) for g in range(3)}
        self.counts = [0, 0, 0]
        self._started: float | None = None

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        elif self._started is not None:
            generation = info.get("generation", 2)
            self.seconds[generation].append(time.perf_counter() - self._started)
            self.counts[generation] += 1
            self._started = None

    @property
    def installed(self) -> bool:
        return self in gc.callbacks

    def install(self) -> None:
        if not self.installed:
            gc.callbacks.append(self)

    def remove(self) -> None:
        if self.installed:
            gc.callbacks.remove(self)


#: The process's timer of collections (installed by :func:`settle`).
pauses = Pauses()


def settle(thresholds: tuple[int, int, int] = THRESHOLDS) -> None:
    """A server process has loaded what it serves: collect once, freeze what is left (it lives
    as long as the process), collect the young generations less often, and time every pass."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*thresholds)
    pauses.install()
