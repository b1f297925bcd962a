"""Phones in a real browser follow their room through the event's one address.

Two ``serve --event --proxy`` processes on PostgreSQL behind ``grace-arena proxy run``
(HAProxy); phones open the proxy's address and join room 1, served by process A. A is killed
mid-tossup (``kill -9``): the pages, reconnecting to the same address, reach B, which takes the
room over, and are back in play at the same word, on the address they were given.
"""

from __future__ import annotations

import pytest
from browser import PHONE
from event_helpers import code_of, make_event
from live import Client, clients, free_port
from playwright.sync_api import expect
from processes import wait_for
from test_proxy import HAPROXY, run_proxy, serve_behind

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(HAPROXY is None, reason="HAProxy is missing (Debian's haproxy package)"),
]


def test_phones_follow_their_room_through_the_proxy_in_a_browser(postgres_url, pages, tmp_path):
    plan = make_event(postgres_url)
    room1 = code_of(plan, "1")
    port = free_port()
    address = f"http://127.0.0.1:{port}"
    ws = f"ws://127.0.0.1:{port}/ws?code={room1}"
    a = serve_behind(postgres_url, address, "1")
    b = serve_behind(postgres_url, address, "2")
    proxy = None
    try:
        proxy = run_proxy(postgres_url, port, tmp_path / "proxy")
        phones = []
        for name in ("Alice", "Ann"):
            page = pages(PHONE, is_mobile=True, has_touch=True, timeout=20_000)
            page.goto(f"{address}/?code={room1}")
            page.get_by_label("Your name").fill(name)
            page.get_by_role("button", name="Red", exact=True).click()
            page.get_by_role("button", name="Join").click()
            expect(page.locator("#me")).to_have_text(f"{name} · Red")
            phones.append(page)
        wait_for(lambda: (a.health() or {}).get("connections") == 2, "the phones on A")
        mod = Client(ws)
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

        a.kill()
        wait_for(lambda: (b.health() or {}).get("connections") == 2, "the phones on B", 40)
        for page in phones:
            expect(page.locator("#status-title")).to_have_text("Ready")
            expect(page.locator("#conn")).to_be_hidden()
            expect(page.locator("#tossup-info")).to_contain_text("Tossup 1 of 2")
        assert all(page.url.startswith(address) for page in phones)  # the one address

        mod = Client(ws)
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
    finally:
        if proxy is not None:
            proxy.terminate()  # (it stops its HAProxy)
            proxy.wait(10)
        a.kill()
        b.kill()
