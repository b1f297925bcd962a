"""Results where people look, in a real browser (headless Chromium via Playwright): the points
of each ruling on the phones of the team that buzzed, the result of a match on the room's
display (kept up until the room's next match starts) and on the phones with the team's place
in the event, a phone told which room its next match is in before it goes there, the join
page naming the event and the room, and the event's projector with its schedule.

Each page is checked at the sizes it is seen at (a phone, 390x844; a projector, 1280x720 and
1920x1080): nothing wider than the screen, the key elements inside it, their text not cut,
and the text that matters present. The event is ``event_helpers.make_event``'s (round 1: room
1 Red vs Robo, room 2 Blue vs Careful; round 2: room 1 Red vs Blue; round 3: room 1 Red vs
Careful, room 2 Blue vs Robo), built once per module and copied for each test. The moderators
are websocket clients.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest
from browser import SCREENSHOTS, phone
from event_helpers import code_of
from event_helpers import room_moderator as moderator
from live import Client, LiveServer, clients, display_url, projector_url
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.slow

SMALL = {"width": 1280, "height": 720}
LARGE = {"width": 1920, "height": 1080}
#: Where the README's screenshots are written when GRACE_ARENA_README_IMAGES is set.
README_IMAGES = Path(__file__).resolve().parent.parent / "docs" / "img"


def assert_fits(page: Page, *selectors: str, what: str) -> None:
    """Nothing wider than the viewport; each visible element of ``selectors`` inside it, its
    text not cut (more content than its box, or its box not inside an ancestor that clips).
    Measured in one go in the page (a redraw between two measures cannot fool it)."""
    wide, width = page.evaluate("[document.documentElement.scrollWidth, innerWidth]")
    assert wide <= width, f"{what}: the page is {wide} px wide in {width}"
    faults = page.evaluate(FITS, list(selectors))
    assert not faults, f"{what}: {faults}"


#: Why an element's text is cut: more content than its box, or its box not wholly inside an
#: ancestor that clips (overflow other than visible); null when it is not.
CUT = """e => {
  if (e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1) return "itself";
  const r = e.getBoundingClientRect();
  for (let a = e.parentElement; a; a = a.parentElement) {
    const s = getComputedStyle(a);
    if (s.overflowX === "visible" && s.overflowY === "visible") continue;
    const b = a.getBoundingClientRect();
    if (r.top < b.top - 1 || r.bottom > b.bottom + 1 || r.left < b.left - 1
        || r.right > b.right + 1) return a.id || a.className || a.tagName;
  }
  return null;
}"""
#: The visible elements of some selectors that are outside the viewport, or cut.
FITS = (
    """selectors => {
  const cut = """
    + CUT
    + """;
  const faults = [];
  for (const selector of selectors) {
    for (const e of document.querySelectorAll(selector)) {
      if (!e.checkVisibility()) continue;
      const r = e.getBoundingClientRect();
      if (r.left < -0.5 || r.top < -0.5 || r.right > innerWidth + 0.5
          || r.bottom > innerHeight + 0.5) faults.push([selector, "off the screen", e.innerText]);
      const by = cut(e);
      if (by) faults.push([selector, "cut by " + by, e.innerText]);
    }
  }
  return faults;
}"""
)


def one_line(element) -> bool:
    """Whether an element's text takes one line (it does not wrap)."""
    return element.evaluate(
        "e => { const r = e.getClientRects(); const h = parseFloat(getComputedStyle(e).lineHeight)"
        " || parseFloat(getComputedStyle(e).fontSize) * 1.3;"
        " return e.getBoundingClientRect().height < h * 1.5; }"
    )


def shoot(page: Page, name: str, readme: str | None = None) -> None:
    page.screenshot(path=str(SCREENSHOTS / f"grace-arena-{name}.png"))
    if readme and os.environ.get("GRACE_ARENA_README_IMAGES"):
        page.screenshot(path=str(README_IMAGES / readme))


def join(page: Page, server: LiveServer, code: str, team: str, name: str) -> None:
    page.goto(f"{server.http_url}/?code={code}")
    page.get_by_label("Your name").fill(name)
    page.get_by_role("button", name=team, exact=True).click()
    page.get_by_role("button", name="Join").click()
    expect(page.locator("#me")).to_have_text(f"{name} · {team}")


def words_in_sight(display: Page, size: dict) -> None:
    """Every word read so far in sight on the room's display: below the banner, none hidden
    under it or scrolled out of the text's box."""
    display.wait_for_timeout(50)
    words = display.locator("#text .w")
    under = display.locator("#banner").bounding_box()
    for word in (words.first, words.last):
        assert under["y"] + under["height"] <= word.bounding_box()["y"], size
        assert not word.evaluate(CUT), (size, word.evaluate(CUT))


def end_the_match_in(server: LiveServer, code: str) -> None:
    """End the room's current match, once the room has opened it (a room moves on a moment
    after its last match ended)."""
    deadline = time.monotonic() + 10
    while True:
        with clients(moderator(server, code)) as (mod,):
            if mod.received[-1]["match"]["phase"] != "ended":
                mod.send(type="end_match")
                mod.state(lambda s: s["match"]["phase"] == "ended")
                return
        assert time.monotonic() < deadline, f"room {code} opened no match to end"
        time.sleep(0.1)


def read(mod: Client, clues: int = 0, words: int = 0) -> dict:
    """Start the next tossup, paused; reveal its first word, then ``clues`` clues and
    ``words`` words more."""
    mod.send(type="start_tossup")
    mod.state(lambda s: s["match"]["phase"] == "reading")
    mod.send(type="pause")
    mod.state(lambda s: s["match"]["paused"])
    mod.send(type="step", unit="word")
    state = mod.state(lambda s: s["tossup"]["position"] >= 0)
    for _ in range(clues):
        at = state["tossup"]["position"]
        mod.send(type="step", unit="clue")
        state = mod.state(lambda s, at=at: s["tossup"]["position"] > at or s["floor"] is not None)
    for _ in range(words):
        at = state["tossup"]["position"]
        time.sleep(0.05)  # (within the server's rate limit: 20 messages a second)
        mod.send(type="step", unit="word")
        state = mod.state(lambda s, at=at: s["tossup"]["position"] > at or s["floor"] is not None)
    return state


def buzz(mod: Client, page: Page) -> None:
    button = page.get_by_role("button", name="Buzz", exact=True)
    expect(button).to_be_enabled()
    button.tap()
    mod.state(lambda s: s["floor"] is not None)


# (a phone scrolls down to the scores and the text: only what is on top must be in sight)
PHONE_PARTS = ("#event-info", "#status", "#status-title", "#status-detail", "#points", "#result")
DISPLAY_PARTS = ("#banner", "#scores li", "#join-code", "#qr", "#join-url", "#title")


def test_points_results_and_moves_reach_the_phones_and_the_rooms_display(event, pages):
    server, plan = event
    room1, room2 = code_of(plan, "1"), code_of(plan, "2")
    mod1, mod2 = moderator(server, room1), moderator(server, room2)
    alice, bob = phone(pages), phone(pages)
    display = pages(SMALL)
    with clients(mod1, mod2):
        # the join page names the event and the room of the code
        alice.goto(f"{server.http_url}/?code={room1}")
        expect(alice.locator("#join-where")).to_have_text("Night · Room 1 · round 1 of 3")
        assert_fits(alice, "#join-where", "#team-choices button", what="the join page")
        join(alice, server, room1, "Red", "Alice")

        # Bob's team, Blue, plays in room 2: his phone says so before it goes there
        join(bob, server, room1, "Blue", "Bob")
        expect(bob.get_by_text("Your next match is in Room 2 — moving you there")).to_be_visible()
        assert f"code={room1}" in bob.url  # not moved yet
        expect(bob.locator("#event-info")).to_have_text("Round 1 of 3 · Room 2")
        assert f"code={room2}" in bob.url

        display.goto(display_url(server, room1))
        expect(display.locator("#title")).to_contain_text("Round 1 of 3 · Room 1")

        # a buzz: the banner over the text covers none of it
        read(mod1, clues=3, words=33)  # (105 words of 136; the model buzzes at the 114th)
        buzz(mod1, alice)
        banner, words = display.locator("#banner"), display.locator("#text .w")
        expect(banner).to_contain_text("Alice buzzed")
        expect(words).to_have_count(105)
        for size in (SMALL, LARGE):
            display.set_viewport_size(size)
            words_in_sight(display, size)
            assert_fits(display, *DISPLAY_PARTS, what=f"the display in play at {size}")

        # the ruling: the points, on the phone of the team that buzzed
        mod1.send(type="rule", ruling="correct")
        mod1.state(lambda s: s["match"]["phase"] == "answered")
        expect(alice.locator("#status-title")).to_have_text("You got it!")
        expect(alice.locator("#points")).to_have_text(re.compile(r"^\+1[05]( power)? — you$"))
        assert_fits(alice, *PHONE_PARTS, what="the phone after a ruling")
        shoot(alice, "phone-points", readme="phone.png")
        expect(banner).to_contain_text("correct")
        expect(display.locator("#answer")).to_be_visible()
        for size in (LARGE, SMALL):  # (the banner, the text and the answer line)
            display.set_viewport_size(size)
            words_in_sight(display, size)
            assert_fits(display, *DISPLAY_PARTS, "#answer", what=f"the display's ruling at {size}")
        shoot(display, "display-in-play", readme="display.png")
        # a neg: its points too
        read(mod1)
        buzz(mod1, alice)
        mod1.send(type="rule", ruling="incorrect")
        mod1.state(lambda s: s["match"]["phase"] in ("reading", "awaiting"))
        expect(alice.locator("#points")).to_have_text("−5 — you")
        expect(display.locator("#text .w.neg")).to_have_count(1)

        # the match ends: the display names the winner and the final score, not the last buzz
        mod1.send(type="end_match")  # (not mid-tossup)
        assert mod1.wait("error")["in_reply_to"] == "end_match"
        mod1.send(type="throw_out")
        mod1.state(lambda s: s["match"]["phase"] == "thrown_out")
        mod1.send(type="end_match")
        ended = mod1.state(lambda s: s["match"]["phase"] == "ended")
        red = next(t["score"] for t in ended["teams"] if t["id"] == "red")
        final = f"Red won {red}–0"
        expect(banner).to_contain_text(final)
        expect(banner).not_to_contain_text("incorrect")
        expect(display.locator(".final-scores li.winner")).to_contain_text("Red")
        for size in (SMALL, LARGE):
            display.set_viewport_size(size)
            assert_fits(display, *DISPLAY_PARTS, ".final-scores li", what=f"the end at {size}")
        shoot(display, "display-end")
        # ... and the phone the result, and Red's place in the event (Red waits for Blue)
        expect(alice.locator("#result")).to_contain_text(f"Round 1: {final}")
        expect(alice.locator("#result")).to_contain_text("Red: 1st of 4 in the standings (1–0")
        assert_fits(alice, "#result", "#wait-message", what="the phone at the end")
        shoot(alice, "phone-end")

        # room 2's match ends: room 1 moves on to round 2 (Red vs Blue); the display keeps
        # the result up, saying what is next, until the moderator starts the next match
        mod2.send(type="end_match")
        mod2.state(lambda s: s["match"]["phase"] == "ended")
        # Bob, in room 2, goes to room 1 for round 2 (he waits for it a moment), told first
        expect(bob.get_by_text("Your next match is in Room 1 — moving you there")).to_be_visible()
        expect(display.locator("#title")).to_contain_text("Round 2 of 3 · Room 1")
        expect(display.locator("#tossup-info")).to_have_text(
            "Next here: Red vs Blue — when the moderator starts it"
        )
        expect(banner).to_contain_text(final)
        expect(alice.locator("#event-info")).to_have_text("Round 2 of 3 · Room 1")
        expect(alice.locator("#result")).to_contain_text(final)  # still, in the lobby
        expect(bob.locator("#event-info")).to_have_text("Round 2 of 3 · Room 1")

    with clients(moderator(server, room1)) as (mod,):
        mod.send(type="start_tossup")
        mod.state(lambda s: s["match"]["phase"] == "reading")
        expect(banner).not_to_contain_text(final)
        expect(display.locator("#tossup-info")).to_contain_text("Tossup 1 of 2")
        expect(alice.locator("#result")).to_be_hidden()


def test_the_event_projector_shows_the_schedule_and_fits_its_cards(event, pages):
    server, plan = event
    room1, room2 = code_of(plan, "1"), code_of(plan, "2")
    projector = pages(SMALL)
    projector.goto(projector_url(server, "night"))
    schedule = projector.locator("#schedule")
    expect(schedule.locator(".scheduled")).to_have_count(3)
    # this round's matches by room, and who is next
    playing = schedule.locator(".scheduled.playing")
    expect(playing.nth(0)).to_have_text(re.compile(r"Round 1 · Room 1\s*Red vs Robo\s*playing now"))
    expect(playing.nth(1)).to_have_text(
        re.compile(r"Round 1 · Room 2\s*Blue vs Careful\s*playing now")
    )
    expect(schedule.locator(".scheduled.next")).to_have_text(
        re.compile(r"Round 2 · Room 1\s*Red vs Blue\s*next up")
    )
    # a room's lobby is not "between tossups"; nothing is under way: no "playing now" legend
    rooms = projector.locator("#rooms li")
    expect(rooms.nth(0).locator(".room-phase")).to_have_text("before the first tossup")
    expect(projector.locator("#live-legend")).to_be_hidden()
    for size in (SMALL, LARGE):
        projector.set_viewport_size(size)
        projector.wait_for_timeout(100)
        shoot(projector, f"projector-{size['width']}")
        for i in range(2):
            card = rooms.nth(i)
            assert one_line(card.locator(".room-match")), (size, card.inner_text())
            assert card.locator(".room-qr").bounding_box()["width"] >= size["height"] * 0.2
        assert_fits(
            projector, "#standings tbody tr", "#rooms li", ".room-match", ".room-url",
            ".room-qr", "#schedule li", what=f"the projector at {size}",
        )  # fmt: skip

    # every match played: the final standings, with no "playing now" anywhere
    for code in (room1, room2, room1, room1, room2):
        end_the_match_in(server, code)
    expect(projector.locator("#event-info")).to_have_text(
        "Every match played · final standings", timeout=8000
    )
    expect(projector.locator("#live-legend")).to_be_hidden()
    expect(projector.locator("#schedule-section")).to_be_hidden()
    assert "playing now" not in projector.locator("#event-screen").inner_text()


def test_the_event_projector_names_each_phase_of_a_room_in_words(event, pages):
    """A room card says "buzz" while a player has the floor, not the protocol's name of it."""
    from event_helpers import room_player

    server, plan = event
    room1 = code_of(plan, "1")
    projector = pages(SMALL)
    projector.goto(projector_url(server, "night"))
    phase = projector.locator("#rooms li").nth(0).locator(".room-phase")
    expect(phase).to_have_text("before the first tossup")
    mod, red = moderator(server, room1), room_player(server, room1, "red", "Ann")
    with clients(mod, red):
        read(mod)
        expect(phase).to_have_text("reading", timeout=8000)
        red.send(type="buzz")
        mod.state(lambda s: s["floor"] is not None)
        expect(phase).to_have_text("buzz", timeout=8000)
