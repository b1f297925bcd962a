"""A hybrid team's phone and the projector in a real browser (QANTA 2026): the phone shows
its semi AI's key and the captain's mute, pressing the key buzzes for the AI (scored by its
weight class), the mute asks first and takes the AI off; the projector names each AI with its
weight class and mode."""

from __future__ import annotations

import time

import pytest
from live import LiveServer, moderator
from playwright.sync_api import Page, expect
from test_hybrid import _config

from grace_arena.core.match import Match
from grace_arena.core.packet import SAMPLE_PACKET_PATH
from grace_arena.record.db import make_engine, upgrade
from grace_arena.record.store import MatchStore
from grace_arena.server.app import Settings

pytestmark = pytest.mark.slow


def _join(page: Page, server: LiveServer, team: str, name: str) -> None:
    page.goto(f"{server.http_url}/?code=HYBRD")
    page.get_by_label("Your name").fill(name)
    page.get_by_role("button", name=team, exact=True).click()
    page.get_by_role("button", name="Join").click()
    expect(page.locator("#me")).to_have_text(f"{name} · {team}")


def test_a_phone_buzzes_for_its_semi_ai_and_mutes_the_other(tmp_path, pages):
    db_url = f"sqlite:///{tmp_path / 'record.db'}"
    upgrade(db_url)
    engine = make_engine(db_url)
    config = _config(lw={"t0": 2}).model_copy(update={"reading_mode": "screen", "wpm": 30})
    rm = MatchStore(engine).create(config, now=time.time(), join_code="HYBRD")
    settings = Settings(db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="s")
    with LiveServer(settings) as server:
        server.run(server.events.room_by_code("HYBRD"))
        phone, projector = pages(), pages(viewport={"width": 1280, "height": 720})
        _join(phone, server, "Red", "Ann")
        projector.goto(f"{server.http_url}/display?code=HYBRD")
        expect(projector.locator("#scores")).to_contain_text("Lw (LW, auto K=1)")
        mod = moderator(server)
        mod.send(type="ai_modes", team="red", modes={"lw": "semi"})
        expect(projector.locator("#scores")).to_contain_text("Lw (LW, semi)")
        press = phone.get_by_role("button", name="Buzz for Lw")
        expect(press).to_be_disabled()  # no tossup is being read
        mod.send(type="start_tossup")
        mod.send(type="pause")
        for _ in range(3):
            mod.send(type="step", unit="word")
        mod.state(lambda s: s["tossup"] and s["tossup"]["position"] >= 2)
        expect(press).to_be_enabled()
        press.click()
        floor = mod.state(lambda s: s["floor"] is not None)["floor"]
        assert (floor["player"], floor["answer"]) == ("lw", "Carver")
        mod.send(type="rule", ruling="correct")
        mod.state(lambda s: s["match"]["phase"] == "bonus")
        phone.once("dialog", lambda d: d.accept())
        phone.get_by_role("button", name="Mute Mw").click()
        expect(projector.locator("#scores")).to_contain_text("Mw (MW, muted)")
        expect(phone.get_by_role("button", name="Mute Mw")).to_have_count(0)
        phone.screenshot(path=str(tmp_path / "hybrid-phone.png"))
        mod.close()
    events = MatchStore(engine).events(rm.id)
    engine.dispose()
    assert Match.replay(events).scores["red"] == 10
    assert [e.type for e in events if e.type.startswith("ai_")] == [
        "ai_modes_set", "ai_buzzed", "ai_muted",
    ]  # fmt: skip
