"""An event's standings as a versioned snapshot, published once per change and read by every
client that shows them (the event's projector, a phone showing its team's place) without
recomputing anything.

One process of the event computes the standings once after each change of the event (a ruling
in one of its rooms, or in another process's, seen in the record) and publishes the result
here and in the record; every other process reads it from the record and publishes it here
(``Rooms.follow_standings``). A client asks ``GET /api/events/NAME/standings?after=VERSION``:
the latest snapshot at once if it is newer than ``VERSION``, else as soon as a newer one is
published (or the same one after ``wait`` seconds): a long poll, so a ruling reaches every
screen as soon as it is computed, and no request computes.

The version is the record's, not this process's
(:func:`grace_arena.record.schedule.standings_stamp`: it grows with every event stored in a
match of the event that may change its result, such as a ruling or a bonus part ruled, undone
or corrected, a protest resolved, a match opened or ended, and with every game decided without
a match; not with the words revealed), so
every process sharing the record gives the same standings the same version, and a client behind
a proxy may ask any of them.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from grace_arena.protocol import StandingsView

__all__ = ["Snapshot", "StandingsFeed"]


@dataclass
class Snapshot:
    """One published computation of the standings."""

    version: int
    view: StandingsView
    #: The standings of each phase (its id) and of each pool of it (``PHASE/POOL``, by ids),
    #: of the same version: a phase's view is read from here, never computed for a request.
    scoped: dict[str, StandingsView] = field(default_factory=dict)
    #: The event's phases and each one's pools (``{"id", "name", "kind", "pools": [{"id",
    #: "name"}]}``), as of the same computation: what a phase or pool asked by name is.
    phases: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class StandingsFeed:
    """The latest snapshot of each event's standings, and the clients waiting for a newer
    one. Lives on the server's event loop."""

    #: Computations published (one per change of an event, whatever the clients).
    computations: int = 0
    _latest: dict[int, Snapshot] = field(default_factory=dict)
    _changed: dict[int, asyncio.Event] = field(default_factory=dict)
    _waiting: int = 0

    @property
    def waiting(self) -> int:
        """Clients waiting for newer standings now."""
        return self._waiting

    def latest(self, event_id: int) -> Snapshot | None:
        return self._latest.get(event_id)

    def publish(
        self,
        event_id: int,
        version: int,
        view: StandingsView,
        scoped: dict[str, StandingsView] | None = None,
        *,
        phases: list[dict[str, Any]] | None = None,
    ) -> Snapshot:
        """A new computation of the event's standings: kept, and every waiting client told.
        An older version than the one kept (two computations that crossed) is dropped."""
        self.computations += 1
        kept = self._latest.get(event_id)
        if kept is not None and version < kept.version:
            return kept
        snapshot = Snapshot(
            version,
            view.model_copy(update={"version": version}),
            {k: v.model_copy(update={"version": version}) for k, v in (scoped or {}).items()},
            list(phases or []),
        )
        self._latest[event_id] = snapshot
        changed = self._changed.pop(event_id, None)
        if changed is not None:
            changed.set()
        return snapshot

    async def newer(self, event_id: int, after: int, wait: float) -> Snapshot | None:
        """The latest snapshot once its version is above ``after``, waiting at most ``wait``
        seconds for one (then the latest, whatever its version; None: none yet)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait
        while True:
            kept = self._latest.get(event_id)
            if kept is not None and kept.version > after:
                return kept
            left = deadline - loop.time()
            if left <= 0:
                return kept
            changed = self._changed.setdefault(event_id, asyncio.Event())
            self._waiting += 1
            try:
                async with asyncio.timeout(left):
                    await changed.wait()
            except TimeoutError:
                return self._latest.get(event_id)
            finally:
                self._waiting -= 1
