"""Protests from a phone where the match takes them (``phone_protests``): a player's phone
(headless Chromium) protests a tossup their team played with the answer given and the reason;
it is the same ``protest_filed`` the moderator's screen makes (by the player), the TD sees it
with what upholding it would do, and the phone may not file another at once. Refused where the
match does not take them, and on a bonus part the team did not play."""

from __future__ import annotations

import pytest
from browser import PHONE
from live import moderator, new_match, player, two_teams
from playwright.sync_api import Page, expect
from test_protests_server import http

from grace_arena.core.match import Match
from grace_arena.core.packet import SAMPLE_PACKET_PATH, load_packet

IDS = [t.id for t in load_packet(SAMPLE_PACKET_PATH).tossups[:4]]
pytestmark = [
    pytest.mark.slow,
    pytest.mark.server(
        first_match=two_teams(format="acf", tossup_ids=IDS, wpm=30, phone_protests=True)
    ),
]


def _join(page: Page, url: str, code: str) -> None:
    page.goto(f"{url}/?code={code}")
    page.get_by_label("Your name").fill("Ann")
    page.get_by_role("button", name="Red", exact=True).click()
    page.get_by_role("button", name="Join").click()
    expect(page.locator("#me")).to_have_text("Ann · Red")


def _blue_wins_a_tossup(mod, blue) -> None:
    mod.send(type="start_tossup")
    mod.state(lambda s: s["match"]["phase"] == "reading")
    blue.send(type="buzz", client_time=0.0)
    mod.state(lambda s: s["match"]["phase"] == "buzzed")
    mod.send(type="rule", ruling="correct")
    mod.state(lambda s: s["match"]["phase"] in ("answered", "bonus"))


def _blue_wins_a_cycle(mod, blue) -> None:
    mod.send(type="start_tossup")
    mod.state(lambda s: s["match"]["phase"] == "reading")
    blue.send(type="buzz", client_time=0.0)
    mod.state(lambda s: s["match"]["phase"] == "buzzed")
    mod.send(type="rule", ruling="correct")
    mod.state(lambda s: s["match"]["phase"] == "bonus")
    for part in (1, 2):
        mod.send(type="rule", ruling="correct")
        mod.state(lambda s, p=part: s["bonus"] and s["bonus"]["part"] == p)
    mod.send(type="rule", ruling="incorrect")
    mod.state(lambda s: s["match"]["phase"] == "answered")


def test_a_phone_protests_a_tossup_and_the_td_sees_it(server, pages):
    room = server.room()
    phone = pages(PHONE, is_mobile=True, has_touch=True)
    _join(phone, server.http_url, room.join_code)
    mod = moderator(server)
    blue = player(server, "blue", "Bo")
    try:
        expect(phone.locator("#protest-box")).to_be_hidden()  # nothing played yet
        _blue_wins_a_cycle(mod, blue)
        box = phone.locator("#protest-box")
        expect(box).to_be_visible()
        box.locator("summary").click()
        expect(phone.get_by_label("Tossup")).to_have_value("1")
        phone.get_by_label("The answer given").fill("Huckleberry Finn")
        phone.get_by_label("Why it should be ruled otherwise").fill("Bo said only 'Finn'")
        phone.get_by_role("button", name="Send the protest").click()
        expect(phone.locator("#protest-said")).to_have_text(
            "Protest filed: the TD resolves it after the game."
        )
        # the moderator's screen has it, as one of its own would be, filed by the player
        seen = mod.state(lambda s: s["officiating"]["protests"])["officiating"]["protests"]
        assert [(p["team"], p["answer"], p["status"]) for p in seen] == [
            ("red", "Huckleberry Finn", "open")]  # fmt: skip
        # the TD sees it, with what upholding it would do
        status, listed = http(server, "GET", f"/api/matches/{room.rm.id}/protests",
                              server.events.tokens.td())  # fmt: skip
        assert status == 200 and listed[0]["number"] == seen[0]["number"]
        assert "by Red on tossup 1" in listed[0]["text"] and "upheld" in listed[0]["text"]
        # at once again: refused, in words on the phone
        phone.get_by_role("button", name="Send the protest").click()
        expect(phone.locator("#protest-said")).to_contain_text(
            "Not filed: one protest at a time: try again in"
        )
        # a part of a bonus Red did not play (Blue's): refused by the match
        ada = player(server, "red", "Ada")
        ada.send(type="protest", tossup="1", part=2, answer="Pap", reason="we knew it")
        error = ada.wait("error")
        assert error["message"] == "your team did not play part 2 of that bonus"
        # a protest the match refused counts for nothing: Ada files one at once
        ada.send(type="protest", tossup="1", answer="Finn", reason="it was on the line")
        ada.wait(lambda m: m["type"] == "state" and any(
            e["type"] == "protest_filed" for e in m["events"]))  # fmt: skip
        ada.close()
    finally:
        mod.close()
        blue.close()
    events = room.rm.store.events(room.rm.id)
    filed = [e for e in events if e.type == "protest_filed"]
    ids = {name: p for p, name in room.match.state.players["red"].items()}
    assert [(e.team, e.by, e.player, e.tossup_id, e.part) for e in filed] == [
        ("red", "player", ids["Ann"], IDS[0], None), ("red", "player", ids["Ada"], IDS[0], None)
    ]  # fmt: skip
    assert Match.replay(events).state == room.match.state


def test_a_phone_protest_is_refused_where_the_match_does_not_take_them(server):
    match_id, _ = new_match(server, format="acf", tossup_ids=IDS)
    mod = moderator(server, match_id)
    red, blue = player(server, "red", "Ann", match_id), player(server, "blue", "Bo", match_id)
    try:
        _blue_wins_a_tossup(mod, blue)
        red.send(type="protest", tossup="1", answer="Finn", reason="partial")
        error = red.wait("error")
        assert error["code"] == "illegal" and "from the moderator only" in error["message"]
        assert server.room(match_id).match.state.officiating.protests == {}
    finally:
        for client in (mod, red, blue):
            client.close()
