"""The moderator's terminal UI on an event's rooms, driven with keys (``App.run_test`` +
``Pilot``) against a real server: a room moderated from round 1 into round 2, the room
picker, the standings, a reconnection between rounds.

The event is the one of ``event_helpers.make_event`` (Red, Blue and two model teams, 3
rounds in 2 rooms, 2 tossups a round); it is built once per module and copied for each test.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from event_helpers import (
    code_of,
    copy_record,
    end_round_in,
    event_server,
    make_event,
    room_player,
)
from live import Client, LiveServer, clients
from test_tui import SIZE, phase, shown, text_of, until
from textual.widgets import OptionList

from grace_arena.core.commands import EndMatch
from grace_arena.record.schedule import EventPlan
from moderator_tui import make_tui
from moderator_tui.dialogs import InUseScreen
from moderator_tui.end import EndScreen
from moderator_tui.event import RoomPickerScreen, StandingsScreen
from moderator_tui.live import LiveScreen
from moderator_tui.setup import LobbyScreen
from moderator_tui.widgets import StatusLine

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture(scope="module")
def event_template(tmp_path_factory) -> tuple[Path, EventPlan]:
    path = tmp_path_factory.mktemp("event") / "record.db"
    plan = make_event(f"sqlite:///{path}")
    return path, plan


@pytest.fixture
def event(event_template, tmp_path) -> Iterator[tuple[LiveServer, EventPlan]]:
    """A live server on a fresh copy of the event: nothing played yet."""
    template, plan = event_template
    with event_server(copy_record(template, tmp_path)) as server:
        yield server, plan


def room_token(server: LiveServer, code: str) -> str:
    return server.run(server.events.moderator_token(server.events.rooms[code]))


async def test_a_room_is_moderated_from_round_1_into_round_2(event):
    server, plan = event
    room1 = code_of(plan, "1")
    app = make_tui(
        server.http_url, room=room1, moderator_token=room_token(server, room1), backoff=(0.1, 0.5)
    )
    alice = await asyncio.to_thread(room_player, server, room1, "red", "Alice")
    with clients(alice):
        async with app.run_test(size=SIZE) as pilot:
            lobby = await until(pilot, lambda: shown(app, LobbyScreen), "the lobby")
            first = app.state.match.id
            assert app.join.match_id == first and app.join.join_code == room1
            # the join URL is the server's (from /api/join), and the room and round show
            await until(pilot, lambda: "Alice" in text_of(lobby.query_one("#roster")), "Alice")
            assert f"?code={room1}" in text_of(lobby.query_one("#join-text"))
            status = text_of(lobby.query_one(StatusLine))
            assert "Room 1 · round 1/3" in status

            await pilot.press("s", "n")
            await until(pilot, lambda: phase(app) == "reading", "reading")
            await pilot.press("space")
            await until(pilot, lambda: not app.state.reading.running, "paused")
            alice.send(type="buzz", client_time=time.time())
            await until(pilot, lambda: phase(app) == "buzzed", "Alice's buzz")
            await pilot.press("c")
            await until(pilot, lambda: phase(app) == "answered", "the ruling")

            # the standings follow the ruling, on a screen of their own
            red = lambda: next(  # noqa: E731
                (r for r in app.standings.rows if r.team == "red"), None
            )
            await until(pilot, lambda: app.standings and red() and red().points > 0, "standings")
            await pilot.press("r")
            standings = await until(pilot, lambda: shown(app, StandingsScreen), "standings")
            listed = text_of(standings.query_one("#standings"))
            assert "Red" in listed and str(red().points) in listed and room1 in listed
            await pilot.press("escape")
            assert isinstance(app.screen, LiveScreen)

            # the match ends: the end screen says where the room goes, then the room moves on
            await pilot.press("E", "y")
            end = await until(pilot, lambda: shown(app, EndScreen), "the end")
            await until(pilot, lambda: end.summary is not None, "the summary (room token)")
            # round 2's match is Red vs Blue, and Blue still plays round 1 in room 2: it waits
            waits = "Room 1's round 2 match, Red vs Blue, starts when round 1 in room 2 (Blue)"
            await until(pilot, lambda: waits in text_of(end.query_one("#end-next")), "waiting")
            assert app.state.match.id == first
            await asyncio.to_thread(end_round_in, server, code_of(plan, "2"))
            await until(pilot, lambda: app.state.match.id != first, "the next match")
            going = await until(
                pilot, lambda: "round 2" in text_of(end.query_one("#end-next")), "where it goes"
            )
            assert going
            text = text_of(end.query_one("#end-next"))
            assert (
                "Room 1 moves on to its next match: round 2, Red vs Blue" in text
                and "enter" in text
            )
            assert "round 1 of 3 · Red vs Robo: match over" in text
            assert "Red" in text_of(end.query_one("#end-scores"))  # still round 1's match
            assert app.summary is None  # what belonged to the old match is gone
            await pilot.press("enter")
            lobby = await until(pilot, lambda: shown(app, LobbyScreen), "round 2")
            second = app.state.match.id
            assert app.join.match_id == second and app.join.join_code == room1
            assert app.state.event.round == 2 and app.state.last_events == []
            assert "Room 1 · round 2/3" in text_of(lobby.query_one(StatusLine))
            assert [t.name for t in app.state.teams] == ["Red", "Blue"]

            # and the new match is this screen's to run
            await pilot.press("s", "n")
            await until(pilot, lambda: phase(app) == "reading", "round 2 reading")
    assert server.arena.rooms[second].match.game.phase == "reading"
    ended = server.arena.store.events(first)
    assert ended[-1].type == "match_ended"


async def test_the_room_picker_moderates_the_room_chosen(event):
    server, plan = event
    app = make_tui(server.http_url, token=server.events.tokens.server(), event="night")
    async with app.run_test(size=SIZE) as pilot:
        picker = await until(pilot, lambda: shown(app, RoomPickerScreen), "the picker")
        await until(pilot, lambda: len(picker.rooms) == 2, "the rooms")
        rooms = picker.query_one("#rooms", OptionList)
        listed = [str(rooms.get_option_at_index(i).prompt) for i in range(rooms.option_count)]
        assert listed == [
            f"Room 1  join {code_of(plan, '1')}  round 1: Red vs Robo",
            f"Room 2  join {code_of(plan, '2')}  round 1: Blue vs Careful",
        ]
        await pilot.press("down", "enter")
        await until(pilot, lambda: shown(app, LobbyScreen), "the lobby")
        assert app.state.event.room == "2" and app.join.join_code == code_of(plan, "2")
        assert app.control == "own"


async def test_a_mistyped_event_is_told_the_name_it_comes_close_to(event):
    """With the server token, the picker of a mistyped event says which event the server
    serves by a name like it (without it, a stranger learns nothing: tests/test_strangers)."""
    server, _ = event
    app = make_tui(server.http_url, token=server.events.tokens.server(), event="nigth")
    async with app.run_test(size=SIZE) as pilot:
        picker = await until(pilot, lambda: shown(app, RoomPickerScreen), "the picker")
        rooms = picker.query_one("#rooms", OptionList)

        def said() -> str:
            return " ".join(
                str(rooms.get_option_at_index(i).prompt) for i in range(rooms.option_count)
            )

        await until(pilot, lambda: "served here" in said(), "the refusal")
        assert rooms.option_count == 1
        assert said() == "no event 'nigth' is served here (did you mean 'night'?)"


async def test_event_and_room_by_name_skip_the_picker(event):
    server, _ = event
    app = make_tui(server.http_url, token=server.events.tokens.server(), event="night", room="2")
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: shown(app, LobbyScreen), "the lobby")
        assert app.state.event.room == "2"


async def test_after_a_drop_between_rounds_the_screen_comes_back_to_the_rooms_next_match(event):
    server, plan = event
    room1 = code_of(plan, "1")
    token = room_token(server, room1)
    app = make_tui(server.http_url, room=room1, moderator_token=token, backoff=(2.0, 2.0))
    # Blue's round 1 in room 2 is over: room 1's round 2 (Red vs Blue) can start when its
    # round 1 ends
    await asyncio.to_thread(end_round_in, server, code_of(plan, "2"))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: shown(app, LobbyScreen), "the lobby")
        await pilot.press("s")
        await until(pilot, lambda: shown(app, LiveScreen), "live")
        first = app.state.match.id
        room = server.arena.rooms[first]
        loop = room.loop
        for conn in [c for c in room.connections if c.role == "moderator"]:
            asyncio.run_coroutine_threadsafe(conn.ws.close(), loop).result(5)
        # while the screen is away, the match ends (as another moderator of the room would)
        asyncio.run_coroutine_threadsafe(room.command(EndMatch()), loop).result(5)
        await until(pilot, lambda: not app.connected, "the drop")
        await until(pilot, lambda: app.connected and app.state.match.id != first, "round 2")
        if isinstance(app.screen, EndScreen):  # it came back just before the room moved on
            await pilot.press("enter")
        await until(pilot, lambda: shown(app, LobbyScreen), "round 2's lobby")
        assert app.state.event.round == 2 and app.control == "own"
        assert app.join.match_id == app.state.match.id


async def test_a_second_moderator_of_a_room_is_asked_and_takes_over_with_t(event):
    server, plan = event
    room1 = code_of(plan, "1")
    token = room_token(server, room1)
    first = Client(server.ws_url)  # the room's moderator, in control
    with clients(first):
        first.send(type="hello", role="moderator", join_code=room1, token=token)
        await asyncio.to_thread(first.wait, "welcome")
        app = make_tui(server.http_url, room=room1, moderator_token=token)
        async with app.run_test(size=SIZE) as pilot:
            dialog = await until(pilot, lambda: shown(app, InUseScreen), "the question")
            assert f"room {room1}" in text_of(dialog.query_one("#in-use-text"))
            await pilot.press("t")
            await until(
                pilot,
                lambda: app.connected and not app.watching and shown(app, LobbyScreen),
                "in control",
            )
            told = await asyncio.to_thread(first.wait, "control")
            assert told["controlled"] is True  # the first now watches


def test_a_room_with_two_matches_in_one_round_names_the_match_that_ended_and_the_next():
    from grace_arena.protocol import EventView, MatchView, ReadingView, State, TeamView
    from moderator_tui.end import next_text

    def state(match_id: int, teams: list[str], phase: str) -> State:
        return State(
            role="moderator",
            match=MatchView(
                id=match_id, title="t", join_code="ABCDEF", phase=phase, paused=False,
                tossups_total=2, tossups_played=2, tossup_ids=[],
            ),
            teams=[TeamView(id=n.lower(), name=n, kind="human") for n in teams],
            reading=ReadingView(mode="read_aloud", wpm=200, running=False),
            event=EventView(
                name="night", title="Night", room="1", join_code="ABCDEF", round=1, rounds=2
            ),
            server_time=0.0,
        )  # fmt: skip

    final = state(1, ["Red", "Blue"], "ended")
    text = next_text(final, state(2, ["Green", "Robo"], "idle"), None).plain
    assert "Room 1 · round 1 of 2 · Red vs Blue: match over" in text
    assert "Room 1 moves on to its next match: round 1, Green vs Robo." in text
    assert "is over" not in text and "on to round 1" not in text
