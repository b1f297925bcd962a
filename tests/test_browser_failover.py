"""Phones follow their match from server process to server process, in a real browser.

Two ``serve --event`` processes on PostgreSQL share the event; phones joined room 1 on
process A. A is killed mid-tossup (``kill -9``): the pages cannot reach it, turn to the other
server A told them of, which has taken the room over, and are back in play at the same word —
without a reload, and without anybody reading them a URL.
"""

from __future__ import annotations

import pytest
from browser import PHONE
from event_helpers import code_of, make_event
from live import Client, clients, free_port
from playwright.sync_api import expect
from processes import ServerProcess, wait_for

# (alone: in a process after the group-commit tests it waited in vain for its phones on B, 2
# runs in 3; by itself it passes: what those tests leave behind is not yet found)
pytestmark = [pytest.mark.slow, pytest.mark.alone]


def _serve(db_url: str, room: str) -> ServerProcess:
    return ServerProcess(db_url, free_port(), "--event", "night", "--room", room)


def test_phones_of_a_killed_server_are_back_in_play_on_the_other(postgres_url, pages):
    plan = make_event(postgres_url)
    room1 = code_of(plan, "1")
    a, b = _serve(postgres_url, "1"), _serve(postgres_url, "2")
    try:
        phones = []
        for name in ("Alice", "Ann", "Abe"):
            page = pages(PHONE, is_mobile=True, has_touch=True, timeout=15_000)
            page.goto(f"{a.url}/?code={room1}")
            page.get_by_label("Your name").fill(name)
            page.get_by_role("button", name="Red", exact=True).click()
            page.get_by_role("button", name="Join").click()
            expect(page.locator("#me")).to_have_text(f"{name} · Red")
            phones.append(page)
        mod = Client(a.ws_url)
        with clients(mod):
            mod.send(type="hello", role="moderator", join_code=room1, token=a.tokens[room1])
            mod.wait("welcome")
            mod.send(type="start_tossup")
            mod.state(lambda s: s["match"]["phase"] == "reading")
            mod.send(type="pause")
            mod.state(lambda s: s["match"]["paused"])
            for _ in range(4):
                mod.send(type="step", unit="word")
            before = mod.state(lambda s: s["tossup"]["position"] >= 3)
        for page in phones:
            expect(page.locator("#status-title")).to_have_text("Ready")
        # the pages have heard of B from A (it is where they turn if A cannot be reached)
        wait_for(lambda: (a.health() or {}).get("connections") == 3, "the phones on A")

        a.kill()
        wait_for(lambda: (b.health() or {}).get("connections") == 3, "the phones on B", 30)
        for page in phones:
            expect(page.locator("#status-title")).to_have_text("Ready")
            expect(page.locator("#conn")).to_be_hidden()
            expect(page.locator("#tossup-info")).to_contain_text("Tossup 1 of 2")
        assert all(page.url.startswith(a.url) for page in phones)  # no reload, no new address

        # the match goes on on B: same word, and a phone's buzz takes the floor
        mod = Client(b.ws_url)
        with clients(mod):
            mod.send(type="hello", role="moderator", join_code=room1, token=a.tokens[room1])
            mod.wait("welcome")
            after = mod.state()
            assert after["match"]["id"] == before["match"]["id"]
            assert after["tossup"]["position"] == before["tossup"]["position"]
            phones[1].get_by_role("button", name="Buzz", exact=True).tap()
            floor = mod.state(lambda s: s["floor"] is not None)
            assert floor["floor"]["player_name"] == "Ann"
            expect(phones[1].locator("#status-title")).to_have_text("You have the floor!")
            expect(phones[0].locator("#status-title")).to_have_text("Your teammate has the floor")
    finally:
        a.kill()
        b.kill()
