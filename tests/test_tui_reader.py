"""A moderator who reads aloud keeps the screens in step: with f the words follow the
moderator's keys alone (w a word, e a clue), so the projector shows no word the reader has not
reached; every reveal and every buzz in the record says how its word was known."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from live import LiveServer, player, two_teams
from test_tui import SIZE, phase, shown, text_of, until

from grace_arena.core.events import BuzzAccepted, WordsRevealed
from grace_arena.core.packet import SAMPLE_PACKET_PATH
from grace_arena.server.app import Settings
from moderator_tui import make_tui
from moderator_tui.live import LiveScreen
from moderator_tui.widgets import BuzzBanner, StatusLine

pytestmark = pytest.mark.anyio


@pytest.fixture
def open_match(db_url) -> Iterator[tuple[LiveServer, int, str]]:
    settings = Settings(
        db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="s", first_match=two_teams(wpm=600)
    )
    with LiveServer(settings) as server:
        match_id = server.room().rm.id
        yield server, match_id, server.run(server.events.match_moderator_token(match_id))


def _reveals(server: LiveServer, match_id: int) -> list[tuple[int, str | None]]:
    events = server.arena.store.events(match_id)
    return [(e.position, e.source) for e in events if isinstance(e, WordsRevealed)]


async def test_the_words_follow_the_moderator_s_keys_and_the_record_says_so(open_match):
    server, match_id, token = open_match
    red = await asyncio.to_thread(player, server, "red", "Ann", match_id)
    app = make_tui(server.http_url, match_id=match_id, moderator_token=token)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.state is not None, "the lobby")
        await pilot.press("s")
        live = await until(pilot, lambda: shown(app, LiveScreen), "live")
        await pilot.press("f")
        await until(pilot, lambda: app.state.reading.by_key, "the keys to lead")
        await pilot.press("n")
        await until(pilot, lambda: phase(app) == "reading", "the tossup")
        assert "by your keys" in text_of(live.query_one(StatusLine))
        assert "Reading by your keys" in text_of(live.query_one(BuzzBanner))
        await pilot.press("w", "w", "e")
        await until(pilot, lambda: app.state.tossup.position > 1, "the clue")
        position = app.state.tossup.position
        # 600 words a minute would have read on by now: the pace stands by
        await asyncio.to_thread(red.drain, 0.5)
        assert app.state.tossup.position == position
        assert {source for _, source in _reveals(server, match_id)} == {"key"}
        red.send(type="buzz")
        await asyncio.to_thread(red.wait, "buzz_result")
        buzz = next(e for e in server.arena.store.events(match_id) if isinstance(e, BuzzAccepted))
        assert (buzz.word_index, buzz.word_source) == (position, "key")
        await pilot.press("i")
        await until(pilot, lambda: app.state.floor is None, "the ruling")
        # f again: the pace reads on from there
        await pilot.press("f")
        await until(pilot, lambda: app.state.tossup.position > position + 2, "the pace")
        assert "pace" in {source for _, source in _reveals(server, match_id)}
    red.close()
