"""Compensated races on a real server under a cheat and under load: a phone that holds its
pongs back gains no more than the room's slack, and an honest press that the server's busy
loop reads late keeps its credit. Phones on a loopback port that read all the time
(``race_phones.py``), a moderator that opens the floor, and the record that says who won."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from live import LiveServer, clients, two_teams
from race_phones import Phone, moderator_phone, open_floor, stalled, wait_for_clocks

from grace_arena.server.arbiter import ROOM_SLACK
from grace_arena.server.connection import LoopWatch

#: The cheat's pongs come back this late (its round trips look this long)...
HOLD = 0.5
#: ...and it claims every press this long before it buzzes: more than the server's cap, and
#: within its round trip even when the server reads it 0.1 s late.
CLAIM = 0.15


pytestmark = pytest.mark.server(first_match=two_teams(compensated=True), race_window=0.5)


def _room_of_three(server: LiveServer) -> tuple[Phone, Phone, Phone]:
    """A listening moderator, an honest phone (red) and a cheat that holds its pongs back
    (blue), every clock trusted by the server."""
    code = server.room().join_code
    mod = moderator_phone(server).listen()
    honest = Phone(server.ws_url).join(code, "red", "Honest").listen()
    cheat = Phone(server.ws_url, hold=HOLD).join(code, "blue", "Cheat").listen()
    wait_for_clocks(server, 3)
    return mod, honest, cheat


def _race(server: LiveServer) -> tuple[Any, Any]:
    """The winning and the losing buzz of the race just run, from the record."""
    deadline = time.time() + 10
    while time.time() < deadline:
        events = server.arena.store.events(server.room().rm.id)
        won = [e for e in events if e.type == "buzz_accepted"]
        lost = [e for e in events if e.type == "buzz_refused"]
        if won and lost:
            return won[-1], lost[-1]
        time.sleep(0.05)
    raise TimeoutError("the race was not decided")


def test_a_phone_that_holds_its_pongs_back_loses_to_an_honest_press_20_ms_earlier(server):
    """Credited the server's cap (0.1 s) as before, the cheat won this race by 80 ms; now it
    is credited the room's round trip and a few ms of slack."""
    mod, honest, cheat = _room_of_three(server)
    with clients(mod, honest, cheat):
        open_floor(mod)
        honest.press()
        time.sleep(0.02)
        cheat.press(earlier=CLAIM)
        won, lost = _race(server)
    assert (won.team, lost.team) == ("red", "blue"), (won.timing, lost.timing)
    assert lost.timing.arbitration == "compensated"  # every check passed...
    assert lost.timing.min_rtt >= HOLD
    room = lost.timing.room_rtt
    assert room is not None and room < HOLD
    assert lost.timing.credit == pytest.approx(room + ROOM_SLACK)  # ...but the room's bound held


def test_an_honest_press_read_late_by_a_stalled_loop_keeps_its_credit(server):
    """The server's loop is blocked from before the honest press until more than 0.12 s
    after it; the cheat presses 20 ms after the honest phone, in the same stall. Before, the
    honest press looked earlier than its round trip allowed and counted as read, and the
    cheat, credited the cap, won."""
    mod, honest, cheat = _room_of_three(server)
    with clients(mod, honest, cheat):
        open_floor(mod)
        with stalled(server):
            pressed = honest.press()
            time.sleep(0.02)
            cheat.press(earlier=CLAIM)
            time.sleep(0.1)
        won, lost = _race(server)
    assert (won.team, lost.team) == ("red", "blue"), (won.timing, lost.timing)
    assert won.timing.arbitration == "compensated", won.timing.fallback
    # read at least 0.12 s after its press, and credited all of it: counted as pressed
    assert won.timing.received_wall - pressed >= 0.12
    assert won.timing.read_delay >= 0.12
    assert won.timing.estimated_press == pytest.approx(pressed, abs=0.01)
    # the cheat, slower than the room, gets nothing for the stall
    assert lost.timing.credit <= lost.timing.room_rtt + ROOM_SLACK + 1e-9


def test_two_honest_presses_read_in_one_stall_are_ordered_as_pressed(server):
    """Both buzzes wait for the stalled loop, and the later press may well be read first:
    the earlier press wins."""
    code = server.room().join_code
    mod = moderator_phone(server).listen()
    first = Phone(server.ws_url).join(code, "blue", "First").listen()
    second = Phone(server.ws_url).join(code, "red", "Second").listen()
    wait_for_clocks(server, 3)
    with clients(mod, first, second):
        open_floor(mod)
        with stalled(server):
            first.press()
            time.sleep(0.02)
            second.press()
            time.sleep(0.1)
        won, lost = _race(server)
    assert (won.team, lost.team) == ("blue", "red"), (won.timing, lost.timing)
    assert won.timing.arbitration == lost.timing.arbitration == "compensated"


def test_the_loop_watch_sees_a_blocking_call_as_time_a_message_may_have_waited():
    """A message read right after the loop was blocked for 0.12 s may have waited all of it
    (the watch cannot tell when in the block it arrived, only that the loop was not free)."""

    async def block_and_read() -> tuple[float, float]:
        watch = LoopWatch()
        watch.start()
        await asyncio.sleep(0.05)  # watched
        started = time.monotonic()
        time.sleep(0.12)  # a call that holds the loop (a broadcast, a garbage collection)
        now = time.monotonic()
        delay = watch.read_delay(now)
        watch.stop()
        return delay, now - started

    delay, blocked = asyncio.run(block_and_read())
    assert delay >= blocked >= 0.12
