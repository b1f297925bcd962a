"""The join page of an event with a roster, in a real browser (headless Chromium): the team's
registered players to pick from, the claim code asked for a name of the roster, no name of
one's own where the event takes no walk-ins."""

from __future__ import annotations

import pytest
from browser import phone
from event_helpers import code_of, event_server, make_event
from playwright.sync_api import expect

from grace_arena.record.db import make_engine
from grace_arena.record.roster import issue_codes

pytestmark = pytest.mark.slow


def test_a_phone_picks_its_name_from_the_roster_and_gives_its_code(tmp_path, pages):
    url = f"sqlite:///{tmp_path / 'roster.db'}"
    plan = make_event(url, players=[("red", "Alice"), ("red", "Ann"), ("blue", "Bob")])
    engine = make_engine(url)
    codes = {i.name: i.code for i in issue_codes(engine, plan.id)}
    engine.dispose()
    room1 = code_of(plan, "1")
    with event_server(url) as server:
        page = phone(pages)
        page.goto(f"{server.http_url}/?code={room1}")
        # no walk-ins: no name to type, the team's roster to pick from
        expect(page.get_by_role("button", name="Red", exact=True)).to_be_visible()
        expect(page.get_by_label("Your name")).to_be_hidden()
        page.get_by_role("button", name="Red", exact=True).click()
        expect(page.locator("#roster-choices button")).to_have_text(["Alice", "Ann"])
        page.get_by_role("button", name="Alice", exact=True).click()
        claim = page.get_by_label("Your claim code (from the organiser)")
        expect(claim).to_be_visible()
        claim.fill("WRNG-CODE")
        page.get_by_role("button", name="Join").click()
        expect(page.locator("#join-error")).to_contain_text("that is not Alice's claim code")
        claim.fill(codes["Alice"])
        page.get_by_role("button", name="Join").click()
        expect(page.locator("#me")).to_have_text("Alice · Red")
