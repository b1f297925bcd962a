"""A whole ACF match of 20 tossup–bonus cycles as a club plays it: the moderator's terminal UI
(driven by keys) and two phones in headless Chromium (the buzzer page, driven by taps and
typing). The scores on the phones, the moderator's and the record's replay agree."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from browser import CHROMIUM, CHROMIUM_ARGS, PHONE  # (skips without Chromium outside CI)
from live import LiveServer, two_teams

from grace_arena.core.match import Match
from grace_arena.core.packet import SAMPLE_PACKET_PATH
from grace_arena.server.app import Settings
from moderator_tui import make_tui
from moderator_tui.live import LiveScreen
from moderator_tui.setup import LobbyScreen

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


class Phones:
    """Two phones in Chromium, driven from one thread of their own (Playwright's sync API
    belongs to the thread that started it; the TUI runs on the test's event loop)."""

    def __init__(self) -> None:
        self.pool = ThreadPoolExecutor(max_workers=1)
        self.pages: dict[str, Any] = {}

    async def run(self, work: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self.pool, work, *args)

    def start(self, url: str) -> None:
        from playwright.sync_api import expect, sync_playwright

        self.pw = sync_playwright().start()
        self.browser = self.pw.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        for team, name in (("Red", "Ann"), ("Blue", "Bo")):
            page = self.browser.new_context(
                viewport=PHONE, is_mobile=True, has_touch=True
            ).new_page()
            page.set_default_timeout(15_000)
            page.goto(url)
            page.get_by_label("Your name").fill(name)
            page.get_by_role("button", name=team, exact=True).click()
            page.get_by_role("button", name="Join").click()
            expect(page.locator("#me")).to_have_text(f"{name} · {team}")
            self.pages[team.lower()] = page

    def buzz(self, team: str) -> None:
        self.pages[team].get_by_role("button", name="Buzz", exact=True).tap()

    def answer(self, team: str, text: str, title: str | None = None) -> None:
        from playwright.sync_api import expect

        page = self.pages[team]
        if title is not None:
            expect(page.locator("#status-title")).to_have_text(title)
        box = page.get_by_label("Your answer")
        expect(box).to_be_visible()
        box.fill(text)
        box.press("Enter")

    def expect_scores(self, team: str, shown: list[str]) -> None:
        from playwright.sync_api import expect

        expect(self.pages[team].locator("#scores li .score")).to_have_text(shown)

    def stop(self) -> None:
        self.browser.close()
        self.pw.stop()


async def until(pilot, check: Callable[[], object], what: str, timeout: float = 20.0):
    deadline = time.monotonic() + timeout
    while not (value := check()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.05)
    return value


async def test_a_whole_acf_match_with_the_tui_and_two_phones(tmp_path):
    setup = two_teams(format="acf", reading_mode="screen", wpm=600, bonus_answer_time=None)
    settings = Settings(
        db_url=f"sqlite:///{tmp_path / 'record.db'}", packets=[SAMPLE_PACKET_PATH], secret="s",
        first_match=setup, rate_per_second=1000.0, rate_burst=1000,
    )  # fmt: skip
    phones = Phones()
    with LiveServer(settings) as server:
        room = server.room()
        token = server.run(server.events.match_moderator_token(room.rm.id))
        app = make_tui(server.http_url, match_id=room.rm.id, moderator_token=token,
                       backoff=(0.05, 0.5))  # fmt: skip
        await phones.run(phones.start, f"{server.http_url}/?code={room.join_code}")
        try:
            async with app.run_test(size=(120, 40)) as pilot:
                await until(pilot, lambda: isinstance(app.screen, LobbyScreen | LiveScreen),
                            "the lobby")  # fmt: skip
                if isinstance(app.screen, LobbyScreen):
                    await pilot.press("s")
                await until(pilot, lambda: isinstance(app.screen, LiveScreen), "live")
                state = lambda: app.state  # noqa: E731
                for cycle in range(20):
                    team = "red" if cycle % 2 == 0 else "blue"
                    other = "blue" if team == "red" else "red"
                    await pilot.press("n")
                    await until(
                        pilot,
                        lambda c=cycle: (
                            state().match.tossups_played == c + 1
                            and state().match.phase == "reading"
                        ),
                        f"tossup {cycle + 1}",
                    )
                    await phones.run(phones.buzz, team)
                    await until(pilot, lambda: state().match.phase == "buzzed", "the buzz")
                    dead = cycle % 5 == 4
                    await phones.run(phones.answer, team, "no idea" if dead else "the answer")
                    await until(pilot, lambda: state().floor.answer is not None, "its answer")
                    if dead:  # a neg, then the other team's wrong answer: no bonus
                        await pilot.press("i")
                        await until(pilot, lambda: state().match.phase in ("reading", "awaiting"),
                                    "the reading again")  # fmt: skip
                        await phones.run(phones.buzz, other)
                        await until(pilot, lambda: state().match.phase == "buzzed", "a rebuzz")
                        await phones.run(phones.answer, other, "no idea either")
                        await until(pilot, lambda: state().floor.answer is not None, "answer")
                        await pilot.press("i")
                        await until(pilot, lambda: state().match.phase == "dead", "dead")
                        continue
                    await pilot.press("c")
                    await until(pilot, lambda: state().match.phase == "bonus", "the bonus")
                    for part in range(3):
                        await phones.run(phones.answer, team, f"part {part + 1}",
                                         "Bonus — your team's turn")  # fmt: skip
                        await until(pilot, lambda: state().bonus.answer is not None, "part")
                        await pilot.press("c" if (cycle + part) % 3 else "i")
                        if part < 2:
                            await until(pilot, lambda p=part: state().bonus.part == p + 1,
                                        "the next part")  # fmt: skip
                    await until(pilot, lambda: state().match.phase == "answered", "cycle's end")
                scores = {t.id: t.score for t in state().teams}
                # every phone shows the moderator's scores
                shown = [str(scores["red"]), str(scores["blue"])]
                for team in ("red", "blue"):
                    await phones.run(phones.expect_scores, team, shown)
        finally:
            await phones.run(phones.stop)
            phones.pool.shutdown()
        events = server.arena.store.events(room.rm.id)
    replayed = Match.replay(events)
    assert replayed.scores == scores == _added_up(events)
    assert len(replayed.state.game.bonuses_used) == 16  # 20 cycles, 4 dead
    assert [e.type for e in events].count("bonus_part_ruled") == 48


def _added_up(events) -> dict[str, int]:
    """The scores as a stats program adds them from the record's rulings."""
    totals: dict[str, int] = {}
    for e in events:
        if e.type in ("ruled", "bonus_part_ruled"):
            totals[e.team] = totals.get(e.team, 0) + e.points
    return totals
