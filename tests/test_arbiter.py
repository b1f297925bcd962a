"""Who pressed first: the arbiter's rules, as pure functions (no server, no clock)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grace_arena.core.events import BuzzTiming
from grace_arena.server.arbiter import (
    DEFAULT_MAX_CREDIT,
    MAX_RTT,
    ROOM_SLACK,
    ClockEstimate,
    LoopLag,
    compensate,
    position_at,
    race_order,
    room_round_trip,
)

HONEST = BuzzTiming(
    received_wall=100.0, client_press=49.95, clock_offset=50.0, rtt=0.1, min_rtt=0.09,
    clock_samples=8, clock_spread=0.004,
)  # fmt: skip


def test_a_plausible_press_is_credited_its_travel_time():
    timed = compensate(HONEST)
    assert timed.arbitration == "compensated"
    assert timed.estimated_press == pytest.approx(99.95)
    assert timed.credit == pytest.approx(0.05)


def test_an_implausible_clock_estimate_falls_back_to_arrival_and_says_why():
    cases = {
        "the client sent no press time": {"client_press": None},
        "2 clock samples (fewer than 3)": {"clock_samples": 2},
        "clock offsets spread over 0.900 s": {"clock_spread": 0.9},
        "press +0.550 s before receipt, round trip 0.090 s": {"client_press": 49.45},
        "press -0.300 s before receipt, round trip 0.090 s": {"client_press": 50.3},
        "no ping of the server was answered in time": {"clock_offset": None},
    }
    for why, change in cases.items():
        timed = compensate(HONEST.model_copy(update=change))
        assert (timed.arbitration, timed.fallback, timed.estimated_press, timed.credit) == (
            "arrival_fallback", why, 100.0, 0.0,
        )  # fmt: skip


def test_the_credit_is_capped_by_the_shortest_round_trip_and_by_the_server():
    # a press 0.12 s before receipt on a link whose quickest round trip is 0.09 s: 0.09
    timed = compensate(HONEST.model_copy(update={"client_press": 49.88}))
    assert timed.credit == pytest.approx(0.09)
    # the server's cap binds a slow link
    slow = HONEST.model_copy(update={"rtt": 0.5, "min_rtt": 0.4, "client_press": 49.7})
    assert compensate(slow).credit == pytest.approx(DEFAULT_MAX_CREDIT)
    assert compensate(slow, max_credit=0.02).credit == pytest.approx(0.02)
    assert compensate(slow, max_credit=0.0).credit == 0.0


def test_pongs_held_back_buy_no_more_than_the_cap():
    """A phone that answers every ping 0.9 s late, with a forged client time so that every
    sample agrees (spread 0), and claims its press 0.9 s before its buzz arrived: it is
    credited the cap, not 0.9 s."""
    clock = ClockEstimate()
    for i in range(6):
        sent = 10.0 + i
        clock.sent(sent)
        # its clock reads server time - 50 s at the midpoint of each (held) round trip
        assert clock.add(sent, sent + 0.45 - 50.0, sent + 0.9)
    assert clock.spread == pytest.approx(0.0) and clock.min_rtt == pytest.approx(0.9)
    cheat = clock.timing(client_press=100.0 - 0.9 - 50.0, wall=100.0, mono=7.0)
    timed = compensate(cheat)
    assert timed.arbitration == "compensated"
    assert timed.credit == pytest.approx(DEFAULT_MAX_CREDIT)
    # an honest phone 30 ms from the server that pressed 40 ms after the cheat's claimed
    # press but 140 ms before the cheat's buzz arrived wins the race
    honest = BuzzTiming(
        received_wall=99.88, client_press=99.86 - 50.0, clock_offset=50.0, rtt=0.03,
        min_rtt=0.03, clock_samples=8, clock_spread=0.001,
    )  # fmt: skip
    order = race_order([("cheat", cheat), ("honest", honest)])
    assert [who for who, _ in order] == ["honest", "cheat"]


@given(
    press_before=st.floats(-1.0, 2.0),
    min_rtt=st.floats(0.001, MAX_RTT),
    cap=st.floats(0.0, 0.5),
)
def test_no_press_is_ever_credited_more_than_the_cap_or_its_round_trip(press_before, min_rtt, cap):
    timing = HONEST.model_copy(
        update={"client_press": 50.0 - press_before, "rtt": min_rtt, "min_rtt": min_rtt}
    )
    timed = compensate(timing, max_credit=cap)
    assert 0.0 <= timed.credit <= min(cap, min_rtt) + 1e-12
    assert timed.estimated_press == pytest.approx(100.0 - timed.credit)


def test_a_pong_counts_only_once_and_within_the_longest_round_trip():
    clock = ClockEstimate()
    clock.sent(100.0)
    assert not clock.add(99.0, 0.0, 100.1)  # never sent
    assert clock.add(100.0, 50.0, 100.1)
    assert not clock.add(100.0, 50.0, 100.1)  # answered already
    clock.sent(101.0)
    assert not clock.add(101.0, 0.0, 101.0 + MAX_RTT + 0.5)  # held back too long
    assert clock.ignored == 3 and clock.min_rtt == pytest.approx(0.1)


def test_a_race_is_ordered_by_estimated_press_and_arrival_among_equals():
    def timing(received: float, press: float | None) -> BuzzTiming:
        return HONEST.model_copy(
            update={
                "received_wall": received,
                "client_press": None if press is None else press - 50.0,
            }
        )

    entries = [("a", timing(10.05, 10.02)), ("b", timing(10.04, None)), ("c", timing(10.06, 10.0))]
    assert [who for who, _ in race_order(entries)] == ["c", "a", "b"]


def test_a_press_is_placed_at_the_word_revealed_when_it_happened():
    reveals = [(1.0, -1), (1.25, 0), (1.5, 1), (1.75, 2)]
    assert position_at(reveals, 0.5) == 0
    assert position_at(reveals, 1.3) == 0
    assert position_at(reveals, 1.5) == 1
    assert position_at(reveals, 9.0) == 2


# -- the room's round trip and the server's read delay ------------------------------------------

#: An honest phone on a LAN (3 ms round trips) whose clock reads server time - 50 s.
LAN = BuzzTiming(
    client_press=None, clock_offset=50.0, rtt=0.004, min_rtt=0.003, clock_samples=12,
    clock_spread=0.001,
)  # fmt: skip


def _cheat_clock() -> ClockEstimate:
    """A phone that answers every ping 0.9 s late, stamping its pongs so that they agree."""
    clock = ClockEstimate()
    for i in range(6):
        sent = 10.0 + i
        clock.sent(sent)
        assert clock.add(sent, sent + 0.45 - 50.0, sent + 0.9)
    return clock


def test_the_room_round_trip_is_the_median_of_its_phones_shortest():
    assert room_round_trip([]) is None and room_round_trip([None]) is None
    assert room_round_trip([0.004, 0.9, None, 0.003]) == 0.004
    # a room of two: the quicker one, so that a cheat cannot pull the room up to half its own
    assert room_round_trip([0.9, 0.003]) == 0.003


def test_pongs_held_back_buy_no_more_than_the_rooms_round_trip_and_its_slack():
    """The cheat claims its press 0.9 s before its buzz arrived, its round trips 0.9 s long:
    it gets what the room's phones need (3 ms) plus the slack, not the server's cap."""
    cheat = _cheat_clock().timing(client_press=100.0 - 0.9 - 50.0, wall=100.0, mono=7.0)
    timed = compensate(cheat, room_rtt=0.003)
    assert timed.arbitration == "compensated" and timed.room_rtt == 0.003
    assert timed.credit == pytest.approx(0.003 + ROOM_SLACK)
    # an honest LAN phone that pressed 10 ms before the cheat (whose buzz took 1.5 ms to
    # arrive) wins; credited the cap as before, the cheat won it by 90 ms
    honest = LAN.model_copy(update={"received_wall": 99.9915, "client_press": 99.99 - 50.0})
    assert compensate(honest, room_rtt=0.003).credit == pytest.approx(0.0015)
    order = race_order([("cheat", cheat), ("honest", honest)], room_rtt=0.003)
    assert [who for who, _ in order] == ["honest", "cheat"]
    assert [who for who, _ in race_order([("cheat", cheat), ("honest", honest)])] == [
        "cheat",
        "honest",
    ]


def test_a_press_read_late_by_a_busy_loop_keeps_its_credit():
    """The honest phone pressed at 99.99; its buzz arrived 1.5 ms later while the server's
    loop was stalled, and was read at 100.12 (``read_delay``: the loop had not been seen free
    since 99.991, 0.129 s before). It is credited its press, not pushed back to its reading."""
    honest = LAN.model_copy(
        update={"received_wall": 100.12, "read_delay": 0.129, "client_press": 99.99 - 50.0}
    )
    timed = compensate(honest, room_rtt=0.003)
    assert timed.arbitration == "compensated"
    assert timed.estimated_press == pytest.approx(99.99)
    assert timed.credit == pytest.approx(0.13)
    # without the read delay the press looks earlier than its round trip allows
    assert compensate(honest.model_copy(update={"read_delay": 0.0})).arbitration == (
        "arrival_fallback"
    )
    # the read delay covers the wait for the loop, not a press claimed earlier still
    early = honest.model_copy(update={"client_press": 99.97 - 50.0})
    assert compensate(early, room_rtt=0.003).estimated_press == pytest.approx(
        100.12 - 0.129 - 0.003
    )


def test_a_phone_that_holds_back_its_pongs_gains_nothing_from_a_busy_loop():
    """Read in the same stall, 20 ms after the honest press arrived, the cheat claims its
    press 0.9 s before its reading: slower than the room, it gets no read delay, and the
    honest press wins."""
    honest = LAN.model_copy(
        update={"received_wall": 100.12, "read_delay": 0.129, "client_press": 99.99 - 50.0}
    )
    cheat = _cheat_clock().timing(
        client_press=100.12 - 0.9 - 50.0, wall=100.12, mono=7.0, read_delay=0.129
    )
    timed = compensate(cheat, room_rtt=0.003)
    assert timed.credit == pytest.approx(0.003 + ROOM_SLACK)
    order = race_order([("cheat", cheat), ("honest", honest)], room_rtt=0.003)
    assert [who for who, _ in order] == ["honest", "cheat"]


@given(
    press_before=st.floats(-1.0, 2.0),
    min_rtt=st.floats(0.001, MAX_RTT),
    room=st.one_of(st.none(), st.floats(0.0, MAX_RTT)),
    read_delay=st.floats(0.0, 1.0),
    cap=st.floats(0.0, 0.5),
)
def test_no_press_is_credited_more_than_its_wait_for_the_loop_and_the_rooms_round_trip(
    press_before, min_rtt, room, read_delay, cap
):
    timing = HONEST.model_copy(
        update={
            "client_press": 50.0 - press_before,
            "rtt": min_rtt,
            "min_rtt": min_rtt,
            "read_delay": read_delay,
        }
    )
    timed = compensate(timing, max_credit=cap, room_rtt=room)
    bound = min(cap, min_rtt, math.inf if room is None else room + ROOM_SLACK)
    waited = read_delay if room is None or min_rtt <= room + ROOM_SLACK else 0.0
    assert 0.0 <= timed.credit <= waited + bound + 1e-12
    assert timed.estimated_press == pytest.approx(100.0 - timed.credit)


def test_the_loop_counts_as_busy_from_when_it_was_last_seen_free():
    lag = LoopLag(tick=0.005, late=0.002)
    assert lag.read_delay(1.0) == 0.0  # not watched yet
    lag.woke(1.000)
    lag.woke(1.005)
    assert lag.read_delay(1.008) == 0.0  # free: the watcher is not late
    # the loop stalls from just after 1.005: a message read at 1.125, before the watcher
    # ran again, may have waited since 1.005
    assert lag.read_delay(1.125) == pytest.approx(0.12)
    lag.woke(1.125)  # the watcher, late: it saw the stall end
    assert lag.late_run == pytest.approx((1.005, 1.125))
    # read in its wake (handled after the watcher, though it came in the stall)
    assert lag.read_delay(1.127) == pytest.approx(0.122)
    assert lag.read_delay(1.140) == pytest.approx(0.135)  # the loop busy again, overdue
    # late at every tick (an overloaded loop): a delay of its last interval, not their sum
    for at in (1.140, 1.150, 1.160, 1.170):
        lag.woke(at)
    assert lag.read_delay(1.171) == pytest.approx(0.011)
    lag.woke(1.175)
    assert lag.read_delay(1.178) == 0.0  # free again
