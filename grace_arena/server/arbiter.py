"""Who pressed first: the clock estimate of a connection and the arbitration of a race.

Pure: no sockets, no clock of its own (times are passed in), so that every rule is tested
directly. The room (``room.py``) holds a race open for a short window in compensated mode and
asks :func:`race_order` who pressed first; the match engine then gives the floor to the first
buzz it is handed.

Compensated mode trusts a phone's own press time, corrected by the clock offset its pongs
gave, to make up for the time its buzz spent on the network. That credit is bounded: never
more than the connection's *shortest* round trip (a message cannot take longer one way than
the quickest there-and-back measured), and never more than a fixed cap of the order of a LAN
round trip (:data:`DEFAULT_MAX_CREDIT`). A phone that holds back its pongs makes every round
trip long and could otherwise claim any press it likes; with the cap it gains at most the cap.
The credit given is recorded with the buzz (``BuzzTiming.credit``).
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

    def timing(self, client_press: float | None, wall: float, mono: float) -> BuzzTiming:
        """A buzz's timing: when it arrived (``wall``/``mono``) and this clock's estimate."""
        return BuzzTiming(
            received_wall=wall,
            received_mono=mono,
            client_press=client_press,
            clock_offset=self.offset,
            rtt=self.rtt,
            min_rtt=self.min_rtt,
            clock_samples=len(self.samples),
            clock_spread=self.spread,
        )


def compensate(timing: BuzzTiming, *, max_credit: float = DEFAULT_MAX_CREDIT) -> BuzzTiming:
    """``timing`` with its server-clock press time (``estimated_press``) and the credit that
    gives it (``credit``: seconds before its arrival).

    The client's press time, corrected by the clock offset, counts if the estimate is
    plausible: enough samples that agree, and a press no later than its receipt and no
    earlier than the shortest round trip before it (give or take :data:`PRESS_SLACK`). Its
    credit is then capped by that round trip and by ``max_credit``. Otherwise the buzz counts
    as pressed when it arrived, marked ``arrival_fallback`` with the reason."""
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
        press = timing.client_press + timing.clock_offset
        if not received - shortest - PRESS_SLACK <= press <= received + PRESS_SLACK:
            why = f"press {received - press:+.3f} s before receipt, round trip {shortest:.3f} s"
        else:
            credit = min(max(received - press, 0.0), shortest, max(max_credit, 0.0))
            return timing.model_copy(
                update={
                    "estimated_press": received - credit,
                    "credit": credit,
                    "arbitration": "compensated",
                }
            )
    return timing.model_copy(
        update={
            "estimated_press": received,
            "credit": 0.0,
            "arbitration": "arrival_fallback",
            "fallback": why,
        }
    )


T = TypeVar("T")


def race_order(
    entries: Iterable[tuple[T, BuzzTiming]], *, max_credit: float = DEFAULT_MAX_CREDIT
) -> list[tuple[T, BuzzTiming]]:
    """The buzzes of one race, each compensated, earliest estimated press first (arrival
    order among equals)."""
    timed = [(who, compensate(timing, max_credit=max_credit)) for who, timing in entries]
    timed.sort(key=lambda item: item[1].estimated_press or 0.0)
    return timed


def position_at(reveal_times: Sequence[tuple[float, int]], t: float) -> int:
    """The last word revealed at time ``t`` (``reveal_times``: (time, position) in order)."""
    position = -1
    for when, pos in reveal_times:
        if when <= t:
            position = pos
    return max(position, 0)
