"""The event's projector (/display?event=NAME) with a full evening on it, in a real browser:
four human teams and two model teams in two rooms over two rounds (three matches a room in
round 1, six rows of schedule), each room's live curve on its card. At 1280x720 and
1920x1080 nothing is cut: every standings row, both room cards with their curves, and the
schedule (with "… and N more" when it is longer than the room it has). At the end, the final
standings with the leader named; an unknown event shows only its error.
"""

from __future__ import annotations

import re

import pytest
from browser import SCREENSHOTS
from event_helpers import code_of, room_player
from event_helpers import room_moderator as moderator
from live import clients, projector_url
from playwright.sync_api import expect
from test_browser_results import LARGE, SMALL, assert_fits, end_the_match_in

from grace_arena.record.schedule import TeamEntry

TEAMS = [
    TeamEntry("red", "Red"),
    TeamEntry("blue", "Blue"),
    TeamEntry("green", "Green"),
    TeamEntry("gold", "Gold"),
    TeamEntry("robo", "Robo", "model", "tfidf", 0.5),
    TeamEntry("careful", "Careful", "model", "tfidf", 0.9),
]
PARTS = (
    "#event-title", "#event-info", "#standings tbody tr", "#rooms li", ".room-match",
    ".room-code", ".room-url", ".room-qr", ".room-curves svg", ".trajectory-compact-line",
    "#schedule li",
)  # fmt: skip

pytestmark = [
    pytest.mark.slow,
    # the ``event`` fixture's: the six teams over two rounds, read fast, curves live
    pytest.mark.event(
        teams=TEAMS, rounds=2, defaults={"answer_time": None, "wpm": 600, "exhibition": True}
    ),
]


def test_a_full_evening_fits_the_projector_and_ends_on_its_leader(event, pages):
    server, plan = event
    room1, room2 = code_of(plan, "1"), code_of(plan, "2")
    projector = pages(SMALL)
    projector.goto(projector_url(server, "night"))
    rooms = projector.locator("#rooms li")
    expect(rooms).to_have_count(2)
    with clients(moderator(server, room1), moderator(server, room2)) as (mod1, mod2):
        for mod in (mod1, mod2):  # both rooms read their first tossup: two live curves
            mod.send(type="start_tossup")
            mod.state(lambda s: s["match"]["phase"] == "reading")
            mod.send(type="pause")
            mod.state(lambda s: s["match"]["paused"])
            for clue in range(3):
                mod.send(type="step", unit="clue")
                mod.state(lambda s, c=clue: s["tossup"]["position"] >= c)
        expect(projector.locator(".room-curves svg")).to_have_count(2, timeout=8000)
        for size in (SMALL, LARGE):
            projector.set_viewport_size(size)
            projector.wait_for_timeout(300)
            projector.screenshot(path=str(SCREENSHOTS / f"grace-arena-club-{size['width']}.png"))
            assert_fits(projector, *PARTS, what=f"the projector at {size}")
            # the whole schedule, or as much as fits and how many more
            rows = projector.locator("#schedule li").count()
            more = projector.locator("#schedule-more")
            if more.is_visible():
                assert rows >= 2 and more.inner_text().startswith("… and ")
            else:
                assert rows == len(plan.games) >= 6, rows
            assert projector.locator("#standings tbody tr").count() == 6
        # Red takes room 1's tossup; room 2's is thrown out
        with clients(room_player(server, room1, "red", "Ann")) as (ann,):
            ann.state()
            ann.send(type="buzz")
            mod1.state(lambda s: s["floor"] is not None)
            mod1.send(type="rule", ruling="correct")
            mod1.state(lambda s: s["match"]["phase"] == "answered")
        mod2.send(type="throw_out")
        mod2.state(lambda s: s["match"]["phase"] == "thrown_out")
    # every match played: the final standings and who leads them, no rooms to join
    assert len(plan.games) == 6
    for code in (room1, room2) * 3:
        end_the_match_in(server, code)
    expect(projector.locator("#event-info")).to_have_text(
        "Every match played · final standings", timeout=8000
    )
    expect(projector.locator("#rooms-title")).to_be_hidden()
    expect(projector.locator("#leader")).to_be_visible()
    expect(projector.locator("#leader")).to_have_text(
        re.compile(r"^Red leads the final standings: \d+–\u2060\d+(–\u2060\d+)?, \d+\u00a0points$")
    )
    for size in (SMALL, LARGE):
        projector.set_viewport_size(size)
        projector.wait_for_timeout(100)
        projector.screenshot(path=str(SCREENSHOTS / f"grace-arena-club-final-{size['width']}.png"))
        assert_fits(projector, "#standings tbody tr", "#leader", what=f"the final at {size}")


def test_an_unknown_event_shows_only_its_error(event, pages):
    server, _ = event
    projector = pages(SMALL)
    projector.goto(f"{server.http_url}/display?event=event-nite")
    expect(projector.locator("#event-conn")).to_contain_text("No event called “event-nite”")
    expect(projector.locator("#standings")).to_be_hidden()
    expect(projector.locator(".event-stage")).to_be_hidden()
