"""The pages anyone can use, in a real browser (headless Chromium via Playwright).

axe-core (WCAG 2.2 A and AA) finds nothing on the phone's page, the room's display (also in
high contrast) and the replay, in each state of a match (waiting, reading, a buzz, a bonus,
the end); ``test_browser_projector_fit`` checks the event's projector and the stats page.
Buzzes and rulings are said to screen readers through a live region on the phone and on the
display (its text changes with each). The buzz is reachable by keyboard (Enter or the space bar
on the focused button) and by a single switch: in one-switch mode any key (but Tab), or a press
anywhere on the page, buzzes; out of it, another key does not. The phone of a player who
powered a tossup keeps "+15 power — you" up through the bonus it earned, and the display's
buzz list says "correct" (not "prompt") of a prompted buzz ruled correct, through the bonus.

The match is NAQT's (powers and bonuses), read on the screen, its moderator a websocket client.
"""

from __future__ import annotations

import re

import pytest
from a11y import assert_accessible
from browser import SCREENSHOTS, phone
from live import Client, LiveServer, clients, display_url, moderator, new_match, two_teams
from playwright.sync_api import Page, expect

from grace_arena.protocol import TeamSetup

pytestmark = [
    pytest.mark.slow,
    pytest.mark.server(
        per_module=True,
        secret="a11y-tests",
        first_match=two_teams(format="naqt", reading_mode="screen", wpm=30, bonus_answer_time=None),
    ),
]
DISPLAY = {"width": 1280, "height": 720}
SWITCH = "One-switch mode: any key or a press anywhere buzzes"
LONG = "The Extraordinarily Persistent Herons of Upper Wensleydale"


def join(page: Page, server: LiveServer, code: str, team: str, name: str, query: str = "") -> None:
    page.goto(f"{server.http_url}/?code={code}{query}")
    page.get_by_label("Your name").fill(name)
    page.get_by_role("button", name=team, exact=True).click()
    page.get_by_role("button", name="Join").click()
    expect(page.locator("#me")).to_have_text(f"{name} · {team}")


def read_one_clue(mod: Client) -> None:
    mod.send(type="start_tossup")
    mod.state(lambda s: s["match"]["phase"] == "reading")
    mod.send(type="pause")
    mod.state(lambda s: s["match"]["paused"])
    mod.send(type="step", unit="clue")
    mod.state(lambda s: s["tossup"]["position"] >= 0)


def floor_of(mod: Client, name: str) -> dict:
    return mod.state(lambda s: s["floor"] is not None and s["floor"]["player_name"] == name)


def test_every_state_of_a_match_passes_axe_on_the_phone_the_display_and_the_replay(server, pages):
    code = server.room().join_code
    match_id = server.room().rm.id
    # the join pages: the code to type, then the team and the name
    first = phone(pages)
    first.goto(server.http_url + "/")
    assert_accessible(first, "the phone's code page")
    ann = phone(pages)
    ann.goto(f"{server.http_url}/?code={code}")
    expect(ann.get_by_role("button", name="Red", exact=True)).to_be_visible()
    assert_accessible(ann, "the phone's join page")
    join(ann, server, code, "Red", "Ann")
    display = pages(DISPLAY)
    display.goto(display_url(server, code))
    contrast = pages(DISPLAY)
    contrast.goto(display_url(server, code, "&contrast=high"))
    expect(contrast.locator("html")).to_have_class("high-contrast")

    def check(state: str) -> None:
        for page, what in ((ann, "phone"), (display, "display"), (contrast, "high contrast")):
            page.wait_for_timeout(150)
            page.screenshot(path=str(SCREENSHOTS / f"a11y-{what.replace(' ', '-')}-{state}.png"))
            assert_accessible(page, f"the {what}, {state}")

    with clients(moderator(server)) as (mod,):
        expect(display.locator("#tossup-info")).to_contain_text("waiting for the first tossup")
        check("waiting")
        read_one_clue(mod)
        expect(ann.locator("#status-title")).to_have_text("Ready")
        check("reading")
        # the buzz by keyboard: Enter on the focused button
        ann.locator("#buzz").focus()
        ann.keyboard.press("Enter")
        floor_of(mod, "Ann")
        expect(ann.locator("#status-title")).to_have_text("You have the floor!")
        expect(display.locator("#banner")).to_contain_text("Ann buzzed")
        check("buzzed")
        # a prompt, then correct: the display's list says so, the phone keeps its power up
        answer = ann.get_by_label("Your answer")
        answer.fill("something vague")
        answer.press("Enter")
        mod.state(lambda s: s["floor"] and s["floor"]["answer"] == "something vague")
        mod.send(type="rule", ruling="prompt")
        mod.state(lambda s: s["match"]["phase"] == "prompted")
        prompted = re.compile(r"^\? Red · Ann @\d+ “something vague” prompt$")
        expect(display.locator("#log li")).to_have_text(prompted)
        answer.fill("the answer")
        answer.press("Enter")
        mod.state(lambda s: s["floor"] and s["floor"]["answer"] == "the answer")
        mod.send(type="rule", ruling="correct")
        state = mod.state(lambda s: s["match"]["phase"] == "bonus")
        assert state["bonus"]["team"] == "red"
        expect(ann.locator("#status-title")).to_have_text("Bonus — your team's turn")
        expect(ann.locator("#points")).to_have_text("+15 power — you")
        right = re.compile(r"^✓ Red · Ann @\d+ “the answer” correct \+15$")
        expect(display.locator("#log li")).to_have_text(right)
        expect(display.locator("#log li")).to_have_class("correct")
        check("bonus")
        for part in range(3):
            answer.fill(f"part {part + 1}")
            answer.press("Enter")
            mod.state(lambda s: s["bonus"] is not None and s["bonus"]["answer"] is not None)
            mod.send(type="rule", ruling="correct" if part != 1 else "incorrect")
            if part < 2:
                mod.state(lambda s, p=part: s["bonus"]["part"] == p + 1)
        mod.state(lambda s: s["match"]["phase"] == "answered" and s["bonus"]["done"])
        expect(ann.locator("#status-title")).to_have_text("Bonus over")
        expect(ann.locator("#points")).to_have_text("+15 power — you")
        check("bonus-over")
        mod.send(type="end_match")
        mod.state(lambda s: s["match"]["phase"] == "ended")
        expect(display.locator("#banner")).to_contain_text("Red won")
        check("end")
    replay = pages(DISPLAY)
    replay.goto(f"{server.http_url}/replay?match={match_id}&tossup=1&code={code}")
    expect(replay.locator("#rulings li")).to_have_count(1)  # (one buzz: prompted, then right)
    replay.screenshot(path=str(SCREENSHOTS / "a11y-replay-1280.png"))
    assert_accessible(replay, "the replay")
    expect(replay.locator("#legend")).to_contain_text("the power part")  # (NAQT: powers)


def test_buzzes_and_rulings_are_announced_and_the_buzz_takes_one_key_or_one_switch(server, pages):
    match_id, code = new_match(
        server, teams=[TeamSetup(id="red", name="Red"), TeamSetup(id="blue", name="Blue")]
    )
    ann, bo = phone(pages), phone(pages)
    join(ann, server, code, "Red", "Ann")
    join(bo, server, code, "Blue", "Bo", "&switch=1")  # one-switch mode from the link
    expect(bo.get_by_label(SWITCH)).to_be_checked()
    expect(ann.get_by_label(SWITCH)).not_to_be_checked()
    expect(bo.locator("#buzz-hint")).to_have_text("or press any key")
    display = pages(DISPLAY)
    display.goto(display_url(server, code))
    with clients(moderator(server, match_id)) as (mod,):
        read_one_clue(mod)
        expect(bo.locator("#status-title")).to_have_text("Ready")
        expect(ann.locator("#status-title")).to_have_text("Ready")
        # a letter on Ann's phone buzzes nothing (not in one-switch mode); on Bo's it does:
        # the floor is Bo's, though Ann pressed first
        ann.keyboard.press("b")
        bo.keyboard.press("b")
        floor_of(mod, "Bo")
        floors = [m["floor"] for m in mod.received if m["type"] == "state" and m["floor"]]
        assert floors[0]["player_name"] == "Bo", floors[0]
        # said to screen readers: on the phone that buzzed and on the display
        expect(bo.locator("#announce")).to_have_text("You have the floor")
        expect(ann.locator("#announce")).to_have_text("Blue, Bo buzzed")
        expect(display.locator("#announce")).to_have_text("Blue, Bo buzzed")
        mod.send(type="rule", ruling="incorrect")
        mod.state(lambda s: s["floor"] is None and s["match"]["phase"] in ("reading", "awaiting"))
        expect(bo.locator("#announce")).to_have_text("You: incorrect minus 5")
        expect(ann.locator("#announce")).to_have_text("Blue, Bo: incorrect minus 5")
        expect(display.locator("#announce")).to_have_text("Blue, Bo: incorrect minus 5")
        # the space bar, no button focused, on Ann's phone
        ann.evaluate("document.activeElement && document.activeElement.blur()")
        ann.keyboard.press("Space")
        floor_of(mod, "Ann")
        expect(display.locator("#announce")).to_have_text("Red, Ann buzzed")
        mod.send(type="rule", ruling="correct")
        mod.state(lambda s: s["match"]["phase"] == "answered")
        expect(ann.locator("#announce")).to_contain_text("You: correct plus")
        expect(display.locator("#announce")).to_contain_text("Red, Ann: correct plus")
        # one switch as a press: anywhere on Bo's page but on a control
        read_one_clue(mod)
        expect(bo.locator("#status-title")).to_have_text("Ready")
        box = bo.locator("#scores-title").bounding_box()
        assert box is not None
        bo.mouse.click(box["x"] + 5, box["y"] + 5)
        floor_of(mod, "Bo")
        expect(bo.locator("#status-title")).to_have_text("You have the floor!")
        # turned off on the page: the key no longer buzzes, and stays off on reload
        mod.send(type="rule", ruling="incorrect")
        mod.state(lambda s: s["floor"] is None)
        bo.get_by_label(SWITCH).uncheck()
        bo.goto(f"{server.http_url}/?code={code}")
        expect(bo.get_by_label(SWITCH)).not_to_be_checked()
        expect(bo.locator("#buzz-hint")).to_have_text("or press the space bar")
