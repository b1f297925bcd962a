"""Protests and corrections from the moderator's terminal UI, driven with keys against a real
server: ``P`` files a protest through its form while the match goes on, ``C`` picks a ruling
of an earlier cycle and corrects it (a ruling, then who buzzed); the record holds both."""

from __future__ import annotations

import asyncio
import time

import pytest
from live import player
from test_tui import SIZE, open_match, phase, shown, text_of, until  # noqa: F401 (a fixture)
from textual.widgets import DataTable, Input, RadioSet

from grace_arena.core import protests
from grace_arena.core.match import Match
from moderator_tui import make_tui
from moderator_tui.end import EndScreen
from moderator_tui.live import LiveScreen
from moderator_tui.protests import CorrectScreen, ProtestScreen

pytestmark = [pytest.mark.anyio, pytest.mark.server(first_match=None, secret="tui-test")]


async def test_a_protest_and_a_correction_two_cycles_back_with_keys(open_match):  # noqa: F811
    server, match_id, token = open_match
    app = make_tui(server.http_url, match_id=match_id, moderator_token=token)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.connected and app.state is not None, "connected")
        ann = await asyncio.to_thread(player, server, "red", "Ann", match_id)
        amy = await asyncio.to_thread(player, server, "red", "Amy", match_id)
        bob = await asyncio.to_thread(player, server, "blue", "Bob", match_id)
        await pilot.press("s")
        live = await until(pilot, lambda: shown(app, LiveScreen), "live")
        assert live.check_action("correct_cycle", ()) is False  # no cycle played yet
        for number, phone in enumerate((ann, bob, bob), start=1):
            await pilot.press("n")
            await until(pilot, lambda n=number: app.state.match.tossups_played == n, "a tossup")
            await until(pilot, lambda: phase(app) == "reading", "reading")
            phone.send(type="buzz", client_time=time.time())
            await until(pilot, lambda: phase(app) == "buzzed", "the buzz")
            await pilot.press("c")
            await until(pilot, lambda: phase(app) == "answered", "correct")
        before = {t.id: t.score for t in app.state.teams}

        # P: Blue protests the first tossup; the form is filled with keys
        await pilot.press("P")
        form = await until(pilot, lambda: shown(app, ProtestScreen), "the protest form")
        form.query_one(RadioSet).focus()
        await pilot.press("right")  # Blue
        await pilot.press("enter")
        tossup = form.query_one("#protest-tossup", Input)
        tossup.value = ""
        tossup.focus()
        await pilot.press("1")
        form.query_one("#protest-answer", Input).focus()
        await pilot.press(*"Carver")
        form.query_one("#protest-reason", Input).focus()
        await pilot.press(*"late buzz")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: shown(app, LiveScreen), "back to the match")
        await until(pilot, lambda: app.state.officiating.protests, "the protest")
        [protest] = app.state.officiating.protests
        assert (protest.team, protest.question, protest.answer, protest.reason) == (
            "blue", "tossup 1 (lit-american-1)", "Carver", "late buzz",
        )  # fmt: skip
        assert phase(app) == "answered"

        # C: the first cycle's ruling, two tossups back: incorrect
        await pilot.press("C")
        picker = await until(pilot, lambda: shown(app, CorrectScreen), "the cycles")
        table = picker.query_one(DataTable)
        assert table.row_count == 3
        table.move_cursor(row=0)
        await pilot.press("i")
        await pilot.press(*"misheard", "enter")
        await until(pilot, lambda: shown(app, LiveScreen), "back to the match")
        first = await until(
            pilot,
            lambda: (
                app.state.officiating.cycles[0].rulings[0].corrected
                and app.state.officiating.cycles[0].rulings[0]
            ),
            "the correction",
        )
        assert first.ruling == "incorrect"
        assert app.state.teams[0].score == before["red"] - 15 + first.points

        # C, w: the second cycle was Bob's... credited to Amy instead
        await pilot.press("C")
        picker = await until(pilot, lambda: shown(app, CorrectScreen), "the cycles")
        picker.query_one(DataTable).move_cursor(row=1)
        await pilot.press("w")
        await pilot.press(*"nobody", "enter", "enter")  # who, then the reason (none)
        assert "the players are" in str(picker.query_one("#correct-error").content)
        picker.query_one("#correct-player", Input).value = "Amy"
        await pilot.press("enter", "enter")
        await until(
            pilot,
            lambda: app.state.officiating.cycles[1].rulings[0].player_name == "Amy",
            "Amy credited",
        )
        # the match over, the end screen takes a protest too (the form's defaults: the first
        # team, the last tossup)
        await pilot.press("E", "y")
        end = await until(pilot, lambda: shown(app, EndScreen), "the end screen")
        await until(pilot, lambda: end.check_action("protest", ()), "P on the end screen")
        await until(pilot, lambda: end.summary is not None, "the record's summary")
        # buzzes, correct, incorrect, refused by team, as the rulings in force count them:
        # Ann's tossup corrected to incorrect, the second credited to Amy (Red), not Bob
        assert counts(end) == {"Red": ["2", "1", "1", "0"], "Blue": ["1", "1", "0", "0"]}
        # a correction on the end screen: the counts follow it
        await pilot.press("C")
        picker = await until(pilot, lambda: shown(app, CorrectScreen), "the cycles")
        picker.query_one(DataTable).move_cursor(row=2)
        await pilot.press("i")
        await pilot.press(*"late", "enter")
        end = await until(pilot, lambda: shown(app, EndScreen), "back to the end screen")
        await until(
            pilot,
            lambda: counts(end)["Blue"] == ["1", "0", "1", "0"],
            "Bob's tossup counted incorrect",
        )
        assert counts(end)["Red"] == ["2", "1", "1", "0"]
        await pilot.press("P")
        form = await until(pilot, lambda: shown(app, ProtestScreen), "the protest form")
        # the team has the focus: a stray enter or letter files nothing
        assert form.query_one(RadioSet).has_focus
        form.query_one("#protest-answer", Input).focus()
        await pilot.press(*"Dickens", "enter")  # enter: on to the next field
        assert form.query_one("#protest-reason", Input).has_focus
        await pilot.press("ctrl+s")  # no reason: not filed, and said why
        assert shown(app, ProtestScreen)
        assert "reason" in str(form.query_one("#protest-error").render())
        assert len(app.state.officiating.protests) == 1
        await pilot.press(*"read past the pause", "enter")
        await until(pilot, lambda: len(app.state.officiating.protests) == 2, "the second protest")
        assert app.state.officiating.protests[1].question == "tossup 3 (lit-european-1)"
        for phone in (ann, amy, bob):
            phone.close()

    room = server.room(match_id)
    state = Match.replay(server.arena.store.events(match_id)).state
    assert state == room.match.state
    cycles = protests.cycles(state)
    assert [(r.team, r.ruling, r.corrected) for c in cycles for r in c.rulings] == [
        ("red", "incorrect", True), ("red", "correct", True), ("blue", "incorrect", True),
    ]  # fmt: skip
    first, last = protests.protests(state)
    assert (first.team, first.tossup_id, first.answer, first.reason) == (
        "blue", cycles[0].tossup_id, "Carver", "late buzz",
    )  # fmt: skip
    assert (last.team, last.tossup_id, last.answer) == ("red", cycles[2].tossup_id, "Dickens")


def counts(end: EndScreen) -> dict[str, list[str]]:
    """The end screen's scores table: each team's buzzes, correct, incorrect, refused."""
    rows = {}
    for line in text_of(end.query_one("#end-scores")).splitlines():
        words = line.split()
        if words and words[0] in ("Red", "Blue"):
            rows[words[0]] = words[2:6]
    return rows


def test_ending_a_match_counts_the_tossups_left_of_its_regulation():
    from grace_arena.protocol import MatchView
    from moderator_tui.live import tossups_left

    def view(**kw):
        base = dict(id=1, title="t", join_code="ABCDEF", phase="answered", paused=False,
                    tossups_total=26, tossups_played=11, tossup_ids=[])  # fmt: skip
        return MatchView(**{**base, **kw})

    # ACF: 20 tossups heard in regulation, 11 played of which 1 thrown out: 10 heard, 10 left
    assert tossups_left(view(regulation_tossups=20, tossups_heard=10)) == 10
    # in overtime, or in a format without regulation: the packet's tossups not yet played
    assert tossups_left(view(regulation_tossups=20, tossups_heard=20, overtime=True)) == 15
    assert tossups_left(view()) == 15
    assert tossups_left(view(regulation_tossups=20, tossups_heard=22)) == 0
