"""A packet played without the question it lost (``--skip-broken-questions``): the projector
and the phones say how many tossups the match has, before it starts and at its end."""

from __future__ import annotations

from pathlib import Path

import pytest
from browser import PHONE
from live import clients, display_url, moderator, two_teams
from playwright.sync_api import expect
from test_packet_broken import _packet

pytestmark = [
    pytest.mark.slow,
    pytest.mark.server(
        packets=lambda folder: [_packet(Path(folder) / "club.docx", missing_answer=5)],
        first_match=two_teams(packet_id="club", wpm=30),
        skip_broken_questions=True,
    ),
]


def test_the_projector_and_the_phones_count_the_tossups_the_match_has(server, pages) -> None:
    room = server.room(None)
    display = pages({"width": 1280, "height": 720})
    display.goto(display_url(server, room.join_code))
    expect(display.locator("#tossup-info")).to_have_text(
        "19 tossups · waiting for the first tossup"
    )
    phone = pages(PHONE, has_touch=True, is_mobile=True)
    phone.goto(f"{server.http_url}/?code={room.join_code}")
    phone.get_by_label("Your name").fill("Ann")
    phone.get_by_role("button", name="Red", exact=True).click()
    phone.get_by_role("button", name="Join").click()
    expect(phone.locator("#status-detail")).to_have_text("19 tossups · get ready to buzz.")
    with clients(moderator(server)) as (mod,):
        mod.send(type="start_tossup")
        mod.state(lambda s: s["match"]["phase"] == "reading")
        expect(display.locator("#tossup-info")).to_contain_text("Tossup 1 of 19")
        mod.send(type="throw_out", reason="a test")
        mod.state(lambda s: s["match"]["phase"] == "thrown_out")
        mod.send(type="end_match")
        mod.state(lambda s: s["match"]["phase"] == "ended")
    expect(phone.locator("#status-detail")).to_have_text(
        "Match over · 1 tossup read · thanks for playing!"
    )
    expect(display.locator("#banner")).to_contain_text("1 tossup read")
