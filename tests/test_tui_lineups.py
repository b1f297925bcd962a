"""A substitution from the moderator's terminal UI, driven with keys against a real server:
``S`` lists the players of the lineups and the benches; ``i`` picks the one coming in, ``o``
the one going out; the record holds the substitution and the phones' lineups follow."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from live import LiveServer, player, two_teams
from test_tui import SIZE, shown, text_of, until

from grace_arena.core.events import PlayerSubstituted
from grace_arena.core.packet import SAMPLE_PACKET_PATH
from grace_arena.server.app import Settings
from moderator_tui import make_tui
from moderator_tui.lineups import SubstituteScreen
from moderator_tui.live import LiveScreen

pytestmark = [pytest.mark.anyio]


@pytest.fixture
def acf_match(db_url) -> Iterator[tuple[LiveServer, int, str]]:
    """A server whose first match is an ACF one (four players a team)."""
    setup = two_teams(format="acf", regulation_tossups=4, halftime_after=2, bonuses=False)
    settings = Settings(db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="s", first_match=setup)
    with LiveServer(settings) as server:
        match_id = server.room().rm.id
        yield server, match_id, server.run(server.events.match_moderator_token(match_id))


async def test_the_moderator_substitutes_with_keys(acf_match):
    server, match_id, token = acf_match
    app = make_tui(server.http_url, match_id=match_id, moderator_token=token)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.connected and app.state is not None, "connected")
        reds = [
            await asyncio.to_thread(player, server, "red", f"Red {i}", match_id)
            for i in range(1, 6)
        ]
        ids = [p.joined["player"] for p in reds]
        await pilot.press("s")
        live = await until(pilot, lambda: shown(app, LiveScreen), "live")
        red = lambda: next(t for t in app.state.teams if t.id == "red")  # noqa: E731
        await until(pilot, lambda: len(red().players) == 5, "five players")
        assert red().lineup == ids[:4]
        # the scores panel: the lineup, then the bench, dimmed and marked
        scores = lambda: text_of(live.query_one("#scores"))  # noqa: E731
        await until(pilot, lambda: "Red 5 (bench)" in scores(), "the bench on the scores")
        assert "Red 1, Red 2, Red 3, Red 4, Red 5 (bench)" in " ".join(scores().split())
        assert [str(span.style) for span in bench_spans(live, "Red 5 (bench)")] == ["dim"]
        assert live.check_action("substitute", ()) is True  # before play: the initial lineup
        await pilot.press("S")
        await until(pilot, lambda: shown(app, SubstituteScreen), "the substitution form")
        await pilot.press("o")  # nobody picked to come in yet: the form says so
        assert "First pick the player coming in" in str(app.screen.query_one("#sub-error").render())
        for _ in range(4):  # the rows: the lineup's four, then the bench (Red 5)
            await pilot.press("down")
        await pilot.press("i")
        await pilot.press("up")  # Red 4 goes out
        await pilot.press("o")
        await until(pilot, lambda: shown(app, LiveScreen), "back to the match")
        await until(pilot, lambda: ids[4] in red().lineup, "the substitution")
        assert red().lineup == [*ids[:3], ids[4]]
        await until(pilot, lambda: "Red 4 (bench)" in scores(), "the bench follows")
        assert "Red 1, Red 2, Red 3, Red 5, Red 4 (bench)" in " ".join(scores().split())
        # once a tossup is under way the key is not offered
        await pilot.press("n")
        await until(pilot, lambda: app.state.match.phase == "reading", "reading")
        assert live.check_action("substitute", ()) is False
    for phone in reds:
        phone.close()
    events = server.room().rm.store.events(match_id)
    (sub,) = [e for e in events if isinstance(e, PlayerSubstituted)]
    assert (sub.player_in, sub.player_out, sub.reason) == (ids[4], ids[3], "initial")


def bench_spans(live, text: str) -> list:
    """The styled spans of the scores panel's team cells that cover ``text``."""
    from moderator_tui.widgets import Scoreboard

    table = live.query_one(Scoreboard).render()
    cells = [c for c in table.columns[0]._cells if hasattr(c, "spans")]
    found = []
    for cell in cells:
        at = cell.plain.find(text)
        if at >= 0:
            found += [s for s in cell.spans if s.start <= at and s.end >= at + len(text)]
    return found


def test_the_log_names_who_came_in_and_who_went_out():
    from grace_arena.protocol import TeamView
    from moderator_tui.widgets import describe_event

    teams = [TeamView(id="red", name="Red", kind="human", players={"p1": "Ada", "p2": "Dee"})]
    ev = {"type": "player_substituted", "team": "red", "player_in": "p2", "player_out": "p1",
          "reason": "halftime"}  # fmt: skip
    assert describe_event(ev, teams).plain == "Red: Dee in for Ada (halftime)"
    late = {**ev, "player_out": None, "reason": "own_timeout"}
    assert describe_event(late, teams).plain == "Red: Dee in to a free place (own timeout)"
