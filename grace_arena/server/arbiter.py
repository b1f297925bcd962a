"""Who pressed first: the clock estimate of a connection, how late the server read a message,
and the arbitration of a race.

Pure: no sockets, no clock of its own (times are passed in), so that every rule is tested
directly. The room (``room.py``) holds a race open for a short window in compensated mode and
asks :func:`race_order` who pressed first; the match engine then gives the floor to the first
buzz it is handed.

Compensated mode trusts a phone's own press time, corrected by the clock offset its pongs
gave, to make up for the time its buzz spent on the network. That credit is bounded by what
an honest phone of the same room could need: never more than the connection's *shortest*
round trip (a message cannot take longer one way than the quickest there-and-back measured),
never more than the room's round trip (:func:`room_round_trip`: the median of its phones'
shortest, plus :data:`ROOM_SLACK`), and never more than a fixed cap
(:data:`DEFAULT_MAX_CREDIT`). A phone that holds back its pongs makes its own round trips
long, but not the room's: it gains at most the slack over an honest phone of the room.

The network is not the only delay between a press and its receipt: a server whose loop is
busy (a broadcast to hundreds, a garbage collection) reads a buzz that arrived meanwhile only
once it is free. :class:`LoopLag` measures that delay apart (``BuzzTiming.read_delay``: how
long the loop had not been seen free when the buzz was read), and the credit of a connection
as quick as the room's phones covers it as well. A connection slower than the room gets none
of it: its clock is known only to half its round trip, so the server gives it no benefit of
that doubt, and a phone that holds back its pongs gains nothing from a busy loop.
The credit given and its bounds are recorded with the buzz (``BuzzTiming.credit``,
``read_delay``, ``room_rtt``).
"""

from __future__ import annotations

import math
import statistics
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from grace_arena.core.events import BuzzTiming

#: Compensated mode trusts a client's press time only with this many clock samples...
MIN_CLOCK_SAMPLES = 3
#: ...whose offsets agree within this (seconds)...
MAX_OFFSET_SPREAD = 0.25
#: ...and only if the corrected press falls within the connection's shortest round trip
#: before receipt, give or take this.
PRESS_SLACK = 0.05
#: A round trip longer than this is no sample of the clock (a phone on a bad network still
#: answers within a second).
MAX_RTT = 1.0
#: The most a press may be credited before its arrival (seconds), whatever the connection's
#: round trips: a slow Wi-Fi round trip. ``Settings.max_press_credit`` changes it.
DEFAULT_MAX_CREDIT = 0.1
#: What a press may be credited beyond the room's round trip (seconds): the spread of honest
#: phones' round trips on one network, and so the most a phone that holds back its pongs gains
#: over the room's median phone.
ROOM_SLACK = 0.005
#: The loop watcher (:class:`LoopLag`) runs every this many seconds...
LOOP_TICK = 0.005
#: ...and the loop counts as busy when it wakes it later than this past its time.
LOOP_LATE = 0.002


@dataclass
class ClockEstimate:
    """Offset (server - client) and round-trip time from server-initiated pings.

    The offset comes from the sample with the smallest round trip (the least queueing, so
    the tightest bound); the round trip reported is the median of the recent samples, and
    :attr:`min_rtt` the shortest. A pong counts only if it echoes a ping this server sent on
    this connection and has not been answered yet, within :data:`MAX_RTT`; others are
    ignored (and counted).
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
        offset = (sent + received) / 2 - client_time
        if sent not in self.pending or not 0 <= rtt <= MAX_RTT or not math.isfinite(offset):
            self.ignored += 1
            return False
        self.pending.remove(sent)
        self.samples.append((rtt, offset))
        return True

    @property
    def offset(self) -> float | None:
        return min(self.samples)[1] if self.samples else None

    @property
    def rtt(self) -> float | None:
        return statistics.median(r for r, _ in self.samples) if self.samples else None

    @property
    def min_rtt(self) -> float | None:
        return min(r for r, _ in self.samples) if self.samples else None

    @property
    def spread(self) -> float | None:
        """Max - min of the offsets the samples gave: a steady clock on a steady network
        gives a few milliseconds; a client whose answers do not agree with each other is no
        clock to trust."""
        if not self.samples:
            return None
        offsets = [o for _, o in self.samples]
        return max(offsets) - min(offsets)

    def timing(
        self, client_press: float | None, wall: float, mono: float, read_delay: float = 0.0
    ) -> BuzzTiming:
        """A buzz's timing: when it was read (``wall``/``mono``), how long it may have waited
        for the server's loop before (``read_delay``), and this clock's estimate."""
        return BuzzTiming(
            received_wall=wall,
            received_mono=mono,
            read_delay=read_delay,
            client_press=client_press,
            clock_offset=self.offset,
            rtt=self.rtt,
            min_rtt=self.min_rtt,
            clock_samples=len(self.samples),
            clock_spread=self.spread,
        )


@dataclass
class LoopLag:
    """How long a message that the server's event loop reads may have waited for it, arrived.

    A watcher task runs every :data:`LOOP_TICK` seconds and says when (:meth:`woke`); the loop
    runs it more than :data:`LOOP_LATE` past its time when it was busy meanwhile (a long
    callback, a garbage collection). A message read while the watcher is overdue may have
    arrived at any moment since the watcher last ran; one read after a late run of the
    watcher and before its next run, at any moment since the run before the late one (the
    loop runs the callbacks it has in the order they came: a message it got in the stall is
    handled before the watcher's next run). :meth:`read_delay` is that longest wait. It looks
    back no further than the last late run, so that a loop late at every tick (overloaded)
    gives a delay of about one of its late intervals, not their sum. Monotonic times, passed
    in.
    """

    tick: float = LOOP_TICK
    late: float = LOOP_LATE
    #: When the watcher last ran.
    woke_at: float | None = None
    #: Its last late run: (when it ran before, when it ran late).
    late_run: tuple[float, float] | None = None

    def _overdue(self, now: float) -> bool:
        return self.woke_at is not None and now - self.woke_at > self.tick + self.late

    def woke(self, now: float) -> None:
        """The watcher ran at ``now`` (it had gone to sleep for a tick when it last ran)."""
        if self.woke_at is not None and self._overdue(now):  # (woke_at: for the type checker)
            self.late_run = (self.woke_at, now)
        self.woke_at = now

    def read_delay(self, now: float) -> float:
        """The longest a message read at ``now`` may have waited for the loop (0 if the loop
        was free)."""
        if self.late_run is not None and self.late_run[1] == self.woke_at:
            return now - self.late_run[0]  # in the wake of a stall
        if self.woke_at is not None and self._overdue(now):
            return now - self.woke_at  # in a stall
        return 0.0


def room_round_trip(min_rtts: Iterable[float | None]) -> float | None:
    """The round trip of a room's phones: the median of their shortest (the lower of the two
    middle ones for an even count, so that one phone that holds back its pongs cannot raise
    the round trip of a room of two); None before any was measured.

    >>> room_round_trip([0.004, 0.9, None, 0.003])
    0.004
    """
    known = sorted(r for r in min_rtts if r is not None)
    return statistics.median_low(known) if known else None


def compensate(
    timing: BuzzTiming,
    *,
    max_credit: float = DEFAULT_MAX_CREDIT,
    room_rtt: float | None = None,
) -> BuzzTiming:
    """``timing`` with its server-clock press time (``estimated_press``) and the credit that
    gives it (``credit``: seconds before its receipt).

    The client's press time, corrected by the clock offset, counts if the estimate is
    plausible: enough samples that agree, and a press no later than its receipt and no
    earlier than the shortest round trip before its arrival (give or take
    :data:`PRESS_SLACK`). Its credit before arrival is then at most the connection's shortest
    round trip, ``room_rtt`` + :data:`ROOM_SLACK` (``room_rtt``: the room's, see
    :func:`room_round_trip`; None: no room bound) and ``max_credit``; the arrival is the
    receipt less ``timing.read_delay`` (the time the buzz may have waited for the server's
    loop) for a connection whose shortest round trip is within the room's bound, the receipt
    itself otherwise. That is::

        network = min(min_rtt, room_rtt + ROOM_SLACK, max_credit)
        waited = read_delay if min_rtt <= room_rtt + ROOM_SLACK else 0
        credit = min(received - press, waited + network)

    Otherwise the buzz counts as pressed when it was received, marked ``arrival_fallback``
    with the reason."""
    received = timing.received_wall if timing.received_wall is not None else 0.0
    shortest = timing.min_rtt if timing.min_rtt is not None else timing.rtt
    why = None
    if timing.client_press is None:
        why = "the client sent no press time"
    elif timing.clock_offset is None or shortest is None:
        why = "no ping of the server was answered in time"
    elif (timing.clock_samples or 0) < MIN_CLOCK_SAMPLES:
        why = f"{timing.clock_samples} clock samples (fewer than {MIN_CLOCK_SAMPLES})"
    elif (timing.clock_spread or 0.0) > MAX_OFFSET_SPREAD:
        why = f"clock offsets spread over {timing.clock_spread:.3f} s"
    else:
        room = math.inf if room_rtt is None else room_rtt + ROOM_SLACK
        network = min(shortest, room, max(max_credit, 0.0))
        waited = max(timing.read_delay or 0.0, 0.0) if shortest <= room else 0.0
        arrival = received - waited
        press = timing.client_press + timing.clock_offset
        if not arrival - shortest - PRESS_SLACK <= press <= received + PRESS_SLACK:
            why = f"press {received - press:+.3f} s before receipt, round trip {shortest:.3f} s"
            if waited:
                why += f", read {waited:.3f} s late"
        else:
            credit = min(max(received - press, 0.0), waited + network)
            return timing.model_copy(
                update={
                    "estimated_press": received - credit,
                    "credit": credit,
                    "arbitration": "compensated",
                    "room_rtt": room_rtt,
                }
            )
    return timing.model_copy(
        update={
            "estimated_press": received,
            "credit": 0.0,
            "arbitration": "arrival_fallback",
            "fallback": why,
            "room_rtt": room_rtt,
        }
    )


T = TypeVar("T")


def race_order(
    entries: Iterable[tuple[T, BuzzTiming]],
    *,
    max_credit: float = DEFAULT_MAX_CREDIT,
    room_rtt: float | None = None,
) -> list[tuple[T, BuzzTiming]]:
    """The buzzes of one race, each compensated (``room_rtt``: the room's round trip, see
    :func:`compensate`), earliest estimated press first (arrival order among equals)."""
    timed = [
        (who, compensate(timing, max_credit=max_credit, room_rtt=room_rtt))
        for who, timing in entries
    ]
    timed.sort(key=lambda item: item[1].estimated_press or 0.0)
    return timed


def position_at(reveal_times: Sequence[tuple[float, int]], t: float) -> int:
    """The last word revealed at time ``t`` (``reveal_times``: (time, position) in order)."""
    position = -1
    for when, pos in reveal_times:
        if when <= t:
            position = pos
    return max(position, 0)
