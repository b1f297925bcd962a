"""What phones and the projector (headless Chromium) show of officiating: a team's timeout
with its seconds, a bonus part's conferral clock once the moderator has read the part, and a
tie at the end of regulation proposed for overtime. The moderator is a websocket client."""

from __future__ import annotations

import re

import pytest
from browser import PHONE, SCREENSHOTS
from live import display_url, moderator, player, two_teams
from playwright.sync_api import Page, expect

from grace_arena.core.packet import SAMPLE_PACKET_PATH, load_packet

IDS = [t.id for t in load_packet(SAMPLE_PACKET_PATH).tossups[:3]]
pytestmark = [
    pytest.mark.slow,
    pytest.mark.server(
        first_match=two_teams(format="acf", regulation_tossups=1, tossup_ids=IDS, wpm=30)
    ),
]


def _join(page: Page, url: str, code: str) -> None:
    page.goto(f"{url}/?code={code}")
    page.get_by_label("Your name").fill("Ann")
    page.get_by_role("button", name="Red", exact=True).click()
    page.get_by_role("button", name="Join").click()
    expect(page.locator("#me")).to_have_text("Ann · Red")


def test_phones_and_the_projector_show_a_timeout_the_conferral_clock_and_overtime(server, pages):
    code = server.room().join_code
    phone = pages(PHONE, is_mobile=True, has_touch=True)
    _join(phone, server.http_url, code)
    display = pages({"width": 1280, "height": 720})
    display.goto(display_url(server, code))
    mod = moderator(server)
    blue = player(server, "blue", "Bo")
    try:
        mod.send(type="timeout", team="blue")
        mod.state(lambda s: s["timeout"] is not None)
        for page in (phone, display):
            expect(page.locator("#officiating")).to_have_text(
                re.compile(r"^Timeout: Blue · (30|29|28|27) s$")
            )
        display.screenshot(path=str(SCREENSHOTS / "grace-arena-display-timeout.png"))

        mod.send(type="start_tossup")
        mod.state(lambda s: s["match"]["phase"] == "reading")
        for page in (phone, display):  # a tossup started: the timeout is over
            expect(page.locator("#officiating")).to_be_hidden()
            # of regulation's one tossup (the packet's other two are extras)
            expect(page.locator("#tossup-info")).to_contain_text("Tossup 1 of 1")
        mod.send(type="pause")
        mod.state(lambda s: s["match"]["paused"])
        mod.send(type="step")
        mod.state(lambda s: s["tossup"]["position"] >= 0)
        blue.send(type="buzz", client_time=0.0)
        mod.state(lambda s: s["floor"] is not None)
        mod.send(type="rule", ruling="correct")
        mod.state(lambda s: s["match"]["phase"] == "bonus")
        mod.send(type="read_part")
        mod.state(lambda s: s["conferral"] is not None)
        mod.send(type="pause")  # the clock stands still: the screens show what is left
        mod.state(lambda s: s["conferral_held"] is not None)
        for page in (phone, display):
            expect(page.locator("#officiating")).to_have_text(re.compile(r"^Confer: [2-5] s$"))
        phone.screenshot(path=str(SCREENSHOTS / "grace-arena-phone-conferral.png"))
        mod.send(type="resume")
        for page in (phone, display):  # it runs out: the moderator asks for the answer
            expect(page.locator("#officiating")).to_have_text("Answer now", timeout=10_000)
        for part in (1, 2, 3):
            mod.send(type="rule", ruling="incorrect", part=part)
            state = mod.state(
                lambda s, p=part: s["match"]["phase"] == "answered" or s["bonus"]["part"] == p
            )
        assert state["match"]["phase"] == "answered" and state["conferral"] is None
        assert state["match"]["stage"] == "decided"  # Blue 10–0 after regulation's tossup
        for page in (phone, display):
            expect(page.locator("#officiating")).to_have_text("The match is decided")
    finally:
        mod.close()
        blue.close()
