"""An event's pages in a real browser (headless Chromium via Playwright): phones that follow
their room from round to round, a phone that waits for its team's match and is sent on, a
room's display that follows the room, and the event's projector view at 1280x720.

The event is ``event_helpers.make_event``'s (Red, Blue and two model teams; 3 rounds in 2
rooms; in round 1 room 1 plays Red vs Robo and room 2 Blue vs Careful, in round 2 room 1
plays Red vs Blue); it is built once per module and copied for each test. The moderators are
websocket clients.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from browser import SCREENSHOTS, phone
from event_helpers import (
    code_of,
    end_round_in,
    event_server,
    make_event,
    room_moderator,
    room_player,
)
from live import Client, LiveServer, clients, display_url, play_a_correct_buzz, projector_url
from playwright.sync_api import Page, expect

from grace_arena.record.schedule import EventPlan

pytestmark = pytest.mark.slow


def join(page: Page, server: LiveServer, code: str, team: str, name: str) -> None:
    page.goto(f"{server.http_url}/?code={code}")
    page.get_by_label("Your name").fill(name)
    page.get_by_role("button", name=team, exact=True).click()
    page.get_by_role("button", name="Join").click()
    expect(page.locator("#me")).to_have_text(f"{name} · {team}")


def token(page: Page, code: str) -> str | None:
    return page.evaluate(f"localStorage.getItem('grace-arena:token:{code}')")


def buzz_and_rule_correct(mod: Client, page: Page) -> None:
    mod.send(type="start_tossup")
    mod.state(lambda s: s["match"]["phase"] == "reading")
    mod.send(type="pause")
    mod.state(lambda s: s["match"]["paused"])
    button = page.get_by_role("button", name="Buzz", exact=True)
    expect(button).to_be_enabled()
    button.tap()
    mod.state(lambda s: s["floor"] is not None)
    mod.send(type="rule", ruling="correct")
    mod.state(lambda s: s["match"]["phase"] == "answered")


def test_a_phone_and_the_rooms_display_go_from_round_1_to_round_2(event, pages):
    server, plan = event
    room1 = code_of(plan, "1")
    mod = room_moderator(server, room1)
    alice = phone(pages)
    display = pages({"width": 1280, "height": 720})
    with clients(mod):
        join(alice, server, room1, "Red", "Alice")
        expect(alice.locator("#event-info")).to_have_text("Round 1 of 3 · Room 1")
        expect(alice.locator("#scores")).to_contain_text("Robo")
        display.goto(display_url(server, room1))
        expect(display.locator("#title")).to_contain_text("Round 1 of 3 · Room 1")
        expect(display.locator("#join-url")).to_have_text(
            re.compile(rf"^127\.0\.0\.1:\d+/\?code={room1}$")
        )
        player = token(alice, room1).rpartition(".")[0]

        buzz_and_rule_correct(mod, alice)
        expect(alice.locator("#status-title")).to_have_text("You got it!")
        end_round_in(server, code_of(plan, "2"))  # Blue's round 1, before its round 2 here
        mod.send(type="end_match")
        mod.wait("next_match")

        # the phone says hello again on its connection: round 2, Red vs Blue, the same Alice
        expect(alice.locator("#event-info")).to_have_text("Round 2 of 3 · Room 1")
        expect(alice.locator("#scores")).to_contain_text("Blue")
        expect(alice.locator("#me")).to_have_text("Alice · Red")
        expect(alice.locator("#status-title")).to_have_text("Waiting for the first tossup")
        expect(alice.locator("#result")).to_contain_text("Round 1: Red won")
        expect(display.locator("#title")).to_contain_text("Round 2 of 3 · Room 1")
        expect(display.locator("#tossup-info")).to_contain_text("Red vs Blue")
        alice.screenshot(path=str(SCREENSHOTS / "grace-arena-event-phone-round-2.png"))
        second = server.events.live(server.events.rooms[room1])
        assert second.event.round == 2
        assert second.match.state.players["red"] == {player: "Alice"}

        # and it plays on there
        mod.send(type="hello", role="moderator", join_code=room1, token=mod_token(server, room1))
        mod.wait("welcome")
        buzz_and_rule_correct(mod, alice)
        expect(alice.locator("#status-title")).to_have_text("You got it!")


def test_a_phone_keeps_its_teams_place_in_the_standings_up_to_date(event, pages):
    import json
    import urllib.request

    server, plan = event
    room1, room2 = code_of(plan, "1"), code_of(plan, "2")
    mod1, mod2 = room_moderator(server, room1), room_moderator(server, room2)
    alice = phone(pages)
    with clients(mod1, mod2):
        join(alice, server, room1, "Red", "Alice")
        buzz_and_rule_correct(mod1, alice)
        mod1.send(type="end_match")  # Red won round 1; it waits for Blue's round 1
        expect(alice.locator("#result")).to_contain_text("Red: 1st of 4 in the standings (1–0")
        before = alice.locator("#result").inner_text()
        # Blue wins its round 1 in room 2 with two tossups: Red's place changes, and room 1
        # goes on to round 2, where Alice waits in the lobby with the result
        with clients(room_player(server, room2, "blue", "Bob")) as (bob,):
            bob.state()
            for _ in range(2):
                play_a_correct_buzz(mod2, bob)
            mod2.send(type="end_match")
            mod2.state(lambda s: s["match"]["phase"] == "ended")
        expect(alice.locator("#event-info")).to_have_text("Round 2 of 3 · Room 1")
        url = f"{server.http_url}/api/events/night/standings"
        rows = {r["team"]: r for r in json.load(urllib.request.urlopen(url))["rows"]}
        red = rows["red"]
        tied = (
            "tied " if any(r["rank"] == red["rank"] for t, r in rows.items() if t != "red") else ""
        )
        place = {1: "1st", 2: "2nd", 3: "3rd"}.get(red["rank"], f"{red['rank']}th")
        now = f"Red: {tied}{place} of 4 in the standings"
        assert now not in before
        expect(alice.locator("#result")).to_contain_text(now, timeout=10_000)
        expect(alice.locator("#result")).to_contain_text("Round 1: Red won")


@pytest.fixture
def six_teams(tmp_path) -> Iterator[tuple[LiveServer, EventPlan]]:
    """Four human teams and two models, two rounds in two rooms. Round 1: room 1 Red vs Robo
    then Green vs Robo, room 2 Blue vs Careful then Gold vs Careful; round 2: room 1 Red vs
    Gold, room 2 Blue vs Green."""
    from grace_arena.record.schedule import TeamEntry

    url = f"sqlite:///{tmp_path / 'six.db'}"
    humans = [TeamEntry(t.lower(), t) for t in ("Red", "Blue", "Green", "Gold")]
    models = [
        TeamEntry("robo", "Robo", "model", "tfidf", 0.5),
        TeamEntry("careful", "Careful", "model", "tfidf", 0.9),
    ]
    plan = make_event(url, teams=[*humans, *models], rounds=2)
    with event_server(url) as server:
        yield server, plan


def test_a_phone_moved_to_another_room_between_rounds_says_so_first(six_teams, pages):
    server, plan = six_teams
    room1, room2 = code_of(plan, "1"), code_of(plan, "2")
    mod1, mod2 = room_moderator(server, room1), room_moderator(server, room2)
    green = phone(pages)
    with clients(mod1, mod2):
        join(green, server, room1, "Green", "Gil")  # Green plays after Red vs Robo here
        expect(green.locator("#wait-message")).to_contain_text("Green plays round 1 in room 1")
        mod1.send(type="end_match")
        mod1.wait("next_match")
        expect(green.locator("#event-info")).to_have_text("Round 1 of 2 · Room 1")
        rehello_mod(mod1, server, room1)
        mod1.send(type="end_match")  # Green's round 1 is over; its round 2 is in room 2
        expect(green.locator("#wait-message")).to_contain_text("Green plays round 2 in room 2")
        for _ in range(2):  # room 2 plays Blue vs Careful, then Gold vs Careful
            mod2.send(type="end_match")
            mod2.wait("next_match")
            rehello_mod(mod2, server, room2)
        expect(green.get_by_text("Your next match is in Room 2 — moving you there")).to_be_visible()
        expect(green.locator("#event-info")).to_have_text("Round 2 of 2 · Room 2")
        # and, there, until the match starts
        expect(green.locator("#status-detail")).to_have_text(
            "Your match is in Room 2 now · get ready to buzz."
        )
        mod2.send(type="start_tossup")
        expect(green.locator("#status-detail")).not_to_contain_text("Your match is in Room 2")


def rehello_mod(mod: Client, server: LiveServer, code: str) -> None:
    mod.send(type="hello", role="moderator", join_code=code, token=mod_token(server, code))
    mod.wait("welcome")
    mod.state()


def mod_token(server: LiveServer, code: str) -> str:
    return server.run(server.events.moderator_token(server.events.rooms[code]))


def test_a_phone_that_waits_for_its_team_is_sent_on(event, pages):
    server, plan = event
    room1, room2 = code_of(plan, "1"), code_of(plan, "2")
    mod1, mod2 = room_moderator(server, room1), room_moderator(server, room2)
    bob = phone(pages)
    with clients(mod1, mod2):
        # Blue plays round 1 in room 2; Bob scans room 1's code: the page is sent on
        join(bob, server, room1, "Blue", "Bob")
        expect(bob.locator("#event-info")).to_have_text("Round 1 of 3 · Room 2")
        assert re.search(rf"code={room2}", bob.url)
        assert token(bob, room2) == token(bob, room1)  # one token for the whole event

        # room 2 ends round 1; Blue's round 2 is in room 1, still playing round 1: Bob waits
        # (room 2's own next match, round 3's, waits for Blue's round 2: its screens say so)
        mod2.send(type="end_match")
        waits = mod2.state(lambda s: s["event"]["waiting"] is not None)["event"]["waiting"]
        assert waits.startswith("Room 2's round 3 match, Blue vs Robo, starts when")
        expect(bob.locator("#wait-view")).to_be_visible()
        expect(bob.locator("#wait-message")).to_have_text(
            "Blue plays round 2 in room 1 against Red, after Red vs Robo there."
        )
        expect(bob.locator("#me")).to_have_text("Bob · Blue")
        bob.screenshot(path=str(SCREENSHOTS / "grace-arena-event-phone-waiting.png"))
        # the event's projector view says so too
        projector = pages({"width": 1280, "height": 720})
        projector.goto(projector_url(server, "night"))
        waiting_room = projector.locator("#rooms li").nth(1)
        expect(waiting_room.locator(".room-phase")).to_have_text(f"Waiting: {waits}")
        projector.screenshot(path=str(SCREENSHOTS / "grace-arena-event-projector-waiting.png"))

        # room 1 ends round 1 and opens round 2, Red vs Blue: the waiting page goes there
        mod1.send(type="end_match")
        mod1.wait("next_match")
        expect(bob.locator("#event-info")).to_have_text("Round 2 of 3 · Room 1")
        expect(bob.locator("#wait-view")).to_be_hidden()
        expect(bob.locator("#status-title")).to_have_text("Waiting for the first tossup")
        live = server.events.live(server.events.rooms[room1])
        assert [t.id for t in live.match.config.teams] == ["red", "blue"]
        assert list(live.match.state.players["blue"].values()) == ["Bob"]


def test_the_event_projector_view_shows_standings_and_join_codes(event, pages):
    server, plan = event
    room1, room2 = code_of(plan, "1"), code_of(plan, "2")
    mod = room_moderator(server, room1)
    alice = phone(pages)
    projector = pages({"width": 1280, "height": 720})
    with clients(mod):
        projector.goto(projector_url(server, "night"))
        rows = projector.locator("#standings tbody tr")
        expect(rows).to_have_count(4)
        expect(projector.locator("#standings")).to_contain_text("Careful")
        rooms = projector.locator("#rooms li")
        expect(rooms).to_have_count(2)
        expect(rooms.nth(0)).to_contain_text("Room 1 · Round 1")
        expect(rooms.nth(0).locator(".room-match")).to_have_text("Red 0 – 0 Robo")
        for i, code in enumerate((room1, room2)):
            expect(rooms.nth(i).locator(".room-code")).to_have_text(f"Code {code}")
            expect(rooms.nth(i).locator(".room-url")).to_have_text(
                re.compile(rf"^127\.0\.0\.1:\d+/\?code={code}$")
            )

        # a ruling in room 1: the standings follow (the page polls every 2 s)
        join(alice, server, room1, "Red", "Alice")
        buzz_and_rule_correct(mod, alice)
        red = projector.locator("#standings tbody tr").first
        expect(red).to_contain_text("Red", timeout=8000)
        expect(red.locator("td.pts")).to_have_text(re.compile(r"^1[05]$"), timeout=8000)
        room1_match = rooms.nth(0).locator(".room-match")
        expect(room1_match).to_have_text(re.compile(r"^Red 1[05]\s–\s0 Robo$"))  # (no-break spaces)

        # readable from the back of the room: everything inside the 1280x720 screen, big type
        for element in (
            *[rows.nth(i) for i in range(4)],
            *[rooms.nth(i).locator(".room-url") for i in range(2)],
        ):
            box = element.bounding_box()
            assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= 720, box
            assert box["x"] >= 0 and box["x"] + box["width"] <= 1280, box
        size = projector.evaluate(
            "parseFloat(getComputedStyle(document.querySelector('#standings td.team')).fontSize)"
        )
        assert size >= 28
        projector.screenshot(path=str(SCREENSHOTS / "grace-arena-event-projector.png"))
        # a page that re-renders only on change: the same rows stay the same nodes
        projector.evaluate("window.__firstRow = document.querySelector('#standings tbody tr')")
        projector.wait_for_timeout(2500)
        assert projector.evaluate(
            "window.__firstRow === document.querySelector('#standings tbody tr')"
        )
