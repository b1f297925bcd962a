"""Who pressed first: the arbiter's rules, as pure functions (no server, no clock)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grace_arena.core.events import BuzzTiming
from grace_arena.server.arbiter import (
    DEFAULT_MAX_CREDIT,
    MAX_RTT,
    ClockEstimate,
    compensate,
    position_at,
    race_order,
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
