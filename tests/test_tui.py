"""The moderator's terminal UI driven with keys (``App.run_test`` + ``Pilot``) against a real
game server on a free loopback port; the assertions are on the server's record.

The websocket players are the test's own clients (``live.Client``): the test only sends with
them, so nothing blocks the event loop the app runs on.
"""

from __future__ import annotations

import asyncio
import io
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from live import Client, LiveServer, free_port, moderator, player, two_teams
from textual.widgets import DataTable, Input, RadioButton, RadioSet, Static
from textual.widgets._footer import FooterKey

from grace_arena.core.packet import SAMPLE_PACKET_PATH
from grace_arena.protocol import RuleMsg, TeamSetup, TeamView
from grace_arena.server.app import Settings
from moderator_tui import api, make_tui
from moderator_tui.dialogs import ConfirmScreen, HelpScreen, InUseScreen
from moderator_tui.end import EndScreen
from moderator_tui.event import RoomPickerScreen, StandingsScreen
from moderator_tui.live import LiveScreen
from moderator_tui.screens import ConnectingScreen
from moderator_tui.setup import LobbyScreen, SetupScreen, parse_tossups, team_id
from moderator_tui.widgets import (
    BuzzBanner,
    ControlBanner,
    StatusLine,
    TossupPane,
    answer_markup,
    buzz_marks,
    describe_event,
    qr_text,
)

SIZE = (120, 40)
pytestmark = [pytest.mark.anyio, pytest.mark.server(first_match=None, secret="tui-test")]


@pytest.fixture
def open_match(db_url) -> Iterator[tuple[LiveServer, str, str]]:
    """A server whose first match (two human teams) is open: the server, the match's id and its
    moderator token."""
    settings = Settings(
        db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="s", first_match=two_teams()
    )
    with LiveServer(settings) as server:
        match_id = server.room().rm.id
        yield server, match_id, server.run(server.events.match_moderator_token(match_id))


async def until(pilot, check: Callable[[], object], what: str, timeout: float = 15.0):
    """Let the app run until ``check()`` is truthy (the server is in another thread)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.05)


def shown(app, kind: type) -> object:
    """The app's screen if it is a ``kind`` whose widgets are up (a screen is on the stack
    before they are), else None: for ``until``."""
    screen = app.screen
    return screen if isinstance(screen, kind) and screen.is_mounted else None


def phase(app) -> str | None:
    return app.state.match.phase if app.state is not None else None


def text_of(widget) -> str:
    """What a widget shows, as plain text (its Rich renderable printed without colours)."""
    from rich.console import Console
    from textual.widgets import Static

    shown = widget.content if isinstance(widget, Static) else widget.render()
    if isinstance(shown, str):
        return shown
    console = Console(width=200, file=io.StringIO(), record=True, color_system=None)
    console.print(shown)
    return console.export_text()


# ---------------------------------------------------------------------------------------------
# The whole match, from the set-up screen to the end, with keys


async def test_a_whole_match_with_keys_is_in_the_record(server):
    app = make_tui(server.http_url, token=server.events.tokens.server(), backoff=(0.05, 0.5))
    async with app.run_test(size=SIZE) as pilot:
        setup = await until(pilot, lambda: shown(app, SetupScreen), "set-up")
        await until(pilot, lambda: setup.packets, "the packets")
        # Two tossups, human teams only (the model team of the defaults is removed).
        tossups = setup.query_one("#tossups", Input)
        tossups.value = "1-2"
        table = setup.query_one("#teams", DataTable)
        table.move_cursor(row=2)
        await pilot.click("#remove-team")
        assert [t.id for t in setup.teams] == ["red", "blue"]
        setup.query_one("#team-name", Input).value = "Green Giants"
        await pilot.click("#add-team")
        assert setup.teams[-1].id == "green-giants"
        await pilot.press("ctrl+s")

        lobby = await until(pilot, lambda: shown(app, LobbyScreen), "the lobby")
        match_id = app.join.match_id
        room = server.room(match_id)
        assert room.match.config.tossups[1].id == "lit-british-1"
        assert len(room.match.config.tossups) == 2
        assert app.join.join_url.endswith(f"?code={room.join_code}")
        ann = await asyncio.to_thread(player, server, "red", "Ann", match_id)
        bob = await asyncio.to_thread(player, server, "blue", "Bob", match_id)
        # Who joined which team shows up live.
        await until(pilot, lambda: "Bob" in text_of(lobby.query_one("#roster")), "roster")
        assert room.join_code in text_of(lobby.query_one("#join-text"))

        await pilot.press("s")
        live = await until(pilot, lambda: shown(app, LiveScreen), "live")
        await pilot.press("n")
        await until(pilot, lambda: phase(app) == "reading", "reading")
        await pilot.press("space")  # pause: the test steps by hand
        await until(pilot, lambda: not app.state.reading.running, "paused")
        start = app.state.tossup.position
        await pilot.press("w", "w", "w")
        await until(pilot, lambda: app.state.tossup.position == start + 3, "three words")
        await pilot.press("e")  # the rest of the first clue
        clue_end = app.state.tossup.clue_ends[0]
        await until(pilot, lambda: app.state.tossup.position == clue_end, "the clue")

        ann.send(type="buzz", client_time=time.time())
        await until(pilot, lambda: phase(app) == "buzzed", "Ann's buzz")
        banner = text_of(live.query_one(BuzzBanner))
        assert "Ann" in banner and "Red" in banner and f"word {clue_end + 1}/" in banner
        await pilot.press("i")  # a neg: Red is locked out, reading goes on
        await until(pilot, lambda: app.state.teams[0].locked_out, "the neg")
        await until(pilot, lambda: phase(app) == "reading", "reading again")

        bob.send(type="buzz", client_time=time.time())
        await until(pilot, lambda: phase(app) == "buzzed", "Bob's buzz")
        await pilot.press("c")
        await until(pilot, lambda: phase(app) == "answered", "correct")
        await pilot.press("u")  # undo: Bob has the floor again
        await until(pilot, lambda: phase(app) == "buzzed", "the undo")
        await pilot.press("p")  # prompt, then correct
        await until(pilot, lambda: phase(app) == "prompted", "the prompt")
        await pilot.press("c")
        await until(pilot, lambda: phase(app) == "answered", "correct again")

        # The second tossup is thrown out (asks first), then the match ends (asks first).
        await pilot.press("n")
        await until(pilot, lambda: app.state.match.tossups_played == 2, "tossup 2")
        await pilot.press("t")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await until(pilot, lambda: phase(app) == "thrown_out", "the throw-out")
        await pilot.press("E")
        await pilot.press("y")
        end = await until(pilot, lambda: shown(app, EndScreen), "end")
        await until(pilot, lambda: app.summary is not None, "the summary")
        await pilot.pause()
        scores = text_of(end.query_one("#end-scores"))
        assert "Blue" in scores and "Red" in scores
        title = text_of(end.query_one("#end-title"))
        assert "2 of 2 tossups read (1 thrown out)" in title  # one heard, as the match counts
        record = text_of(end.query_one("#end-record"))
        assert f"--match {match_id}" in record
        # the match's scoresheet, to print, on the server the moderator's screen talks to
        assert f"{server.http_url}/scoresheet?match={match_id}&code=" in record
        for c in (ann, bob):
            c.close()

    # The summary behind the end screen needs the server's or this match's moderator token.
    token = server.run(server.events.match_moderator_token(match_id))
    summary = api.summary(server.http_url, token, match_id)
    assert summary.ended and summary.scores == {"red": -5, "blue": 15, "green-giants": 0}
    with pytest.raises(api.ApiError, match="refused the token"):
        api.summary(server.http_url, "not-a-token", match_id)

    store = server.arena.store
    buzzes = store.buzzes(match_id)
    won = [(b.team_id, b.ruling, b.points) for b in buzzes if b.outcome == "won"]
    assert won == [("red", "incorrect", -5), ("blue", "correct", 15)]  # power: before (*)
    rulings = [(r.ruling, r.undone_seq is not None, r.by) for r in store.rulings(match_id)]
    assert rulings == [
        ("incorrect", False, "moderator"),
        ("correct", True, "moderator"),
        ("prompt", False, "moderator"),
        ("correct", False, "moderator"),
    ]
    kinds = [e.type for e in store.events(match_id)]
    assert kinds.count("ruling_undone") == 1
    assert kinds[-1] == "match_ended"
    ended = [e for e in store.events(match_id) if e.type == "tossup_ended"]
    assert [e.outcome for e in ended] == ["answered", "answered", "thrown_out"]  # undo between
    assert store.events(match_id)[-1].scores == {"red": -5, "blue": 15, "green-giants": 0}


# ---------------------------------------------------------------------------------------------
# Resilience


def _drop_connections(server: LiveServer, match_id: int) -> None:
    """Close the moderator's websocket from the server's side (a network drop)."""
    room = server.room(match_id)
    loop = room.loop
    for conn in list(room.connections):
        if conn.role == "moderator":
            asyncio.run_coroutine_threadsafe(conn.ws.close(), loop).result(5)


async def test_the_set_up_screen_says_what_is_wrong_with_a_name_or_a_setting(server):
    """A team name that is not well-formed, or a setting out of its range, is a notification
    saying what to fix; nothing is sent and no match is made."""
    app = make_tui(server.http_url, token=server.events.tokens.server(), backoff=(0.05, 0.5))
    async with app.run_test(size=SIZE) as pilot:
        setup = await until(pilot, lambda: shown(app, SetupScreen), "set-up")
        await until(pilot, lambda: setup.packets, "the packets")
        teams = [t.name for t in setup.teams]

        async def notified() -> str:
            await until(pilot, lambda: app._notifications, "a notification")
            note = list(app._notifications)[-1]
            app.clear_notifications()
            return note.message

        for name, said in (
            ("\u202eNAJ", "a bidirectional control (U+202E)"),
            ("\u200b\u200b", "a name needs a visible character"),
            ("Re\u0301d", ""),  # added: "Réd"
            ("R\u00e9d", "There is already a team called R\u00e9d"),  # the same name (NFC)
        ):
            field = setup.query_one("#team-name", Input)
            field.value = name
            field.focus()
            await pilot.press("enter")  # (a toast may cover the button)
            if said:
                assert said in await notified(), name
        assert [t.name for t in setup.teams] == [*teams, "R\u00e9d"]

        for widget, value, said in (
            ("correct", "-100000", "correct_points must be from 1 to 100 points, not -100000"),
            ("power", "0", "power_points must be from 1 to 100 points or none (no powers), not 0"),
            ("neg", "7", "neg_points must be from -100 to 0 points, not 7"),
            ("answer-time", "0", "answer_time must be from 1 to 120 seconds"),
            ("answer-time", "99999", "answer_time must be from 1 to 120 seconds"),
            ("wpm", "5", "wpm must be from 30 to 1200 words a minute, not 5"),
            ("correct", "-", "correct: '-' is not a number"),
        ):
            field = setup.query_one(f"#{widget}", Input)
            before = field.value
            field.value = value
            await pilot.press("ctrl+s")
            assert said in await notified(), (widget, value)
            assert not setup.creating and shown(app, SetupScreen)
            field.value = before
        assert len(server.arena.store.matches()) == 0
        await pilot.press("ctrl+s")  # all put right: the match is made
        await until(pilot, lambda: shown(app, LobbyScreen), "the lobby")
    assert len(server.arena.store.matches()) == 1


async def test_reconnects_and_shows_what_happened_meanwhile(db_url):
    settings = Settings(
        db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="s", first_match=two_teams()
    )
    with LiveServer(settings) as server:
        room = server.room()
        match_id = room.rm.id
        token = server.run(server.events.match_moderator_token(match_id))
        app = make_tui(
            server.http_url, match_id=match_id, moderator_token=token, backoff=(0.3, 0.5)
        )
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.connected and app.state is not None, "connected")
            await until(pilot, lambda: shown(app, LobbyScreen), "the lobby")
            _drop_connections(server, match_id)
            await until(pilot, lambda: not app.connected, "the drop")
            assert "reconnecting" in app.link_detail
            # While the TUI is away, another moderator starts the tossup and pauses it.
            other: Client = await asyncio.to_thread(moderator, server, match_id)
            other.send(type="start_tossup")
            other.send(type="pause")
            await until(pilot, lambda: app.connected, "the reconnection")
            await until(pilot, lambda: phase(app) == "reading", "the re-sync")
            assert app.state.match.paused and isinstance(app.screen, LobbyScreen)
            other.close()


async def test_a_silent_link_is_dropped_and_reconnected(db_url, monkeypatch):
    # A dead network often closes nothing: the app gives up on a link that says nothing.
    monkeypatch.setattr("moderator_tui.app.SILENCE_LIMIT", 0.8)
    settings = Settings(
        db_url=db_url,
        packets=[SAMPLE_PACKET_PATH],
        secret="s",
        first_match=two_teams(),
        ping_interval=60.0,  # after the first burst the server stays silent
    )
    with LiveServer(settings) as server:
        match_id = server.room().rm.id
        token = server.run(server.events.match_moderator_token(match_id))
        app = make_tui(
            server.http_url, match_id=match_id, moderator_token=token, backoff=(0.1, 0.2)
        )
        details: list[str] = []
        async with app.run_test(size=SIZE) as pilot:
            app.watch(app, "link_detail", lambda d: details.append(d))
            await until(pilot, lambda: any("no word" in d for d in details), "the drop")
            await until(pilot, lambda: app.connected, "the reconnection")


async def test_closing_and_reopening_the_tui_mid_match_loses_nothing(db_url):
    settings = Settings(
        db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="s", first_match=two_teams()
    )
    with LiveServer(settings) as server:
        match_id = server.room().rm.id
        server_token = server.events.tokens.server()
        ann = await asyncio.to_thread(player, server, "red", "Ann", match_id)
        first = make_tui(server.http_url, token=server_token, match_id=match_id)
        async with first.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: isinstance(first.screen, LobbyScreen), "the lobby")
            await pilot.press("s", "n")
            await until(pilot, lambda: phase(first) == "reading", "reading")
            ann.send(type="buzz", client_time=time.time())
            await until(pilot, lambda: phase(first) == "buzzed", "the buzz")
            await pilot.press("q")  # the TUI is closed while Ann has the floor
        assert server.room(match_id).match.game.phase == "buzzed"

        again = make_tui(server.http_url, token=server_token, match_id=match_id)
        async with again.run_test(size=SIZE) as pilot:
            live = await until(
                pilot, lambda: isinstance(again.screen, LiveScreen) and again.screen, "live"
            )
            await until(pilot, lambda: "Ann" in text_of(live.query_one(BuzzBanner)), "banner")
            await pilot.press("c")
            await until(pilot, lambda: phase(again) == "answered", "the ruling")
        ann.close()
        (buzz,) = [b for b in server.arena.store.buzzes(match_id) if b.outcome == "won"]
        assert buzz.ruling == "correct" and buzz.player_id == ann.joined["player"]


async def test_after_a_server_restart_the_tossup_log_and_undo_are_back(db_url):
    settings = dict(db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="same")
    with LiveServer(Settings(**settings, first_match=two_teams())) as first:
        match_id = first.room().rm.id
        mod = await asyncio.to_thread(moderator, first, match_id)
        ann = await asyncio.to_thread(player, first, "red", "Ann", match_id)
        mod.send(type="start_tossup")
        await asyncio.to_thread(mod.state, lambda s: s["match"]["phase"] == "reading")
        ann.send(type="buzz", client_time=time.time())
        await asyncio.to_thread(mod.state, lambda s: s["match"]["phase"] == "buzzed")
        mod.send(type="rule", ruling="incorrect")
        await asyncio.to_thread(mod.state, lambda s: s["teams"][0]["locked_out"])
        for c in (mod, ann):
            c.close()
    with LiveServer(Settings(**settings)) as again:  # the same record, a new process
        app = make_tui(again.http_url, token=again.events.tokens.server(), match_id=match_id)
        async with app.run_test(size=SIZE) as pilot:
            live = await until(pilot, lambda: shown(app, LiveScreen), "live")
            kinds = [ev["type"] for ev in app.state.last_events]
            assert kinds[0] == "tossup_started" and "ruled" in kinds
            assert live.check_action("undo", ()) is True
            await pilot.press("u")
            await until(pilot, lambda: phase(app) == "buzzed", "the undo after the restart")
    (ruling,) = again.arena.store.rulings(match_id)
    assert ruling.undone_seq is not None


async def test_errors_from_the_server_are_notifications(open_match):
    server, match_id, token = open_match
    app = make_tui(server.http_url, match_id=match_id, moderator_token=token)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.connected and app.state is not None, "connected")
        await pilot.press("s")
        await until(pilot, lambda: shown(app, LiveScreen), "live")
        # ``c`` is hidden while nobody has the floor; the command itself is refused too.
        assert app.screen.check_action("correct", ()) is False
        app.send_command(RuleMsg(ruling="correct"))
        await until(pilot, lambda: app._notifications, "a notification")
        (note,) = list(app._notifications)
        assert "cannot rule" in note.message and note.severity == "warning"
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        help_text = text_of(app.screen.query_one("#help-keys"))
        assert "Correct" in help_text and "not now" in help_text
        notes = " ".join(text_of(n) for n in app.screen.query(".hint"))
        assert "Words count from 1 on screen" in notes and "word_index counts from 0" in notes
        await pilot.press("escape")
        assert isinstance(app.screen, LiveScreen)


# ---------------------------------------------------------------------------------------------
# One moderator controls a match at a time


def footer_keys(screen) -> dict[str, bool]:
    """The keys the footer shows (key -> usable now)."""
    return {b.binding.key: b.enabled for b in screen.active_bindings.values() if b.binding.show}


async def test_a_second_moderator_is_asked_to_take_over_watch_or_quit(open_match):
    server, match_id, token = open_match
    first: Client = await asyncio.to_thread(moderator, server, match_id)

    # q quits the question
    app = make_tui(server.http_url, match_id=match_id, moderator_token=token)
    async with app.run_test(size=SIZE) as pilot:
        dialog = await until(pilot, lambda: shown(app, InUseScreen), "the question")
        said = text_of(dialog.query_one("#in-use-text"))
        assert "Another moderator controls this match" in said and "--take-over" in said
        assert {"t", "w", "q"} <= set(footer_keys(dialog))
        await pilot.press("q")
    assert app.return_code == 0

    # t takes over: the other moderator then watches
    app = make_tui(server.http_url, match_id=match_id, moderator_token=token)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: shown(app, InUseScreen), "the question")
        await pilot.press("t")
        await until(
            pilot,
            lambda: app.connected and shown(app, LobbyScreen),
            "in control",
        )
        assert not app.watching
        assert not app.screen.query_one(ControlBanner).display
        told = await asyncio.to_thread(first.wait, "error")
        assert told["code"] == "taken_over"
        await pilot.press("s", "n")
        await until(pilot, lambda: phase(app) == "reading", "the tossup it started")
    first.close()


async def test_a_moderator_who_watches_sees_so_and_takes_control_with_a_key(open_match):
    server, match_id, token = open_match
    first: Client = await asyncio.to_thread(moderator, server, match_id)
    app = make_tui(server.http_url, match_id=match_id, moderator_token=token)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: shown(app, InUseScreen), "the question")
        await pilot.press("w")
        lobby = await until(pilot, lambda: shown(app, LobbyScreen), "the lobby")
        assert app.watching
        banner = lobby.query_one(ControlBanner)
        assert banner.display and "another moderator controls" in text_of(banner)
        assert footer_keys(lobby).get("T") is True  # take control

        first.send(type="start_tossup")  # the one in control acts; this screen follows
        await pilot.press("s")
        live = await until(pilot, lambda: shown(app, LiveScreen), "live")
        await until(pilot, lambda: phase(app) == "reading", "the other's tossup")
        assert live.query_one(ControlBanner).display
        # the moderator's keys are shown, but as unusable
        assert live.check_action("pause", ()) is None
        assert footer_keys(live)["space"] is False and footer_keys(live)["T"] is True
        await pilot.press("question_mark")
        helping = await until(pilot, lambda: shown(app, HelpScreen), "the help")
        help_text = text_of(helping.query_one("#help-keys"))
        assert "Take control" in help_text and "watching" in help_text
        await pilot.press("escape")

        await pilot.press("T")
        await until(pilot, lambda: app.connected and not app.watching, "control")
        told = await asyncio.to_thread(first.wait, "error")
        assert told["code"] == "taken_over"
        assert not live.query_one(ControlBanner).display
        assert live.check_action("pause", ()) is True and "T" not in footer_keys(live)
        await pilot.press("space")
        await until(pilot, lambda: app.state.match.paused, "its pause")
    first.close()


async def test_a_moderator_taken_over_is_told_at_once_and_takes_control_back(open_match):
    server, match_id, token = open_match
    app = make_tui(server.http_url, match_id=match_id, moderator_token=token)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.connected, "connected")
        await pilot.press("s")
        live = await until(pilot, lambda: shown(app, LiveScreen), "live")
        assert not live.query_one(ControlBanner).display

        other = Client(server.ws_url)
        hello = {"role": "moderator", "match_id": match_id, "token": token}
        other.send(type="hello", **hello, take_over=True)
        await asyncio.to_thread(other.wait, "welcome")
        await until(pilot, lambda: app.watching, "told it was taken over")
        banner = live.query_one(ControlBanner)
        assert banner.display and "another moderator controls" in text_of(banner)
        assert any("took over" in n.message for n in app._notifications)
        assert live.check_action("next_tossup", ()) is None
        assert footer_keys(live)["n"] is False

        # the other moderator quits: this one learns that nobody controls the match
        other.close()
        await until(pilot, lambda: "no moderator controls" in text_of(banner), "nobody in control")
        await pilot.press("T")
        await until(pilot, lambda: app.connected and not app.watching, "control back")
        assert not banner.display
        await pilot.press("n")
        await until(pilot, lambda: phase(app) == "reading", "its tossup")


# ---------------------------------------------------------------------------------------------
# Pure helpers


def test_parse_tossups():
    assert parse_tossups("all", 5) == [0, 1, 2, 3, 4]
    assert parse_tossups("1-3, 5", 5) == [0, 1, 2, 4]
    assert parse_tossups("3,1,3", 5) == [0, 2]
    for bad in ("0", "2-9", "x", "3-1"):
        with pytest.raises(ValueError):
            parse_tossups(bad, 5)


def test_team_ids_are_unique_and_valid():
    assert team_id("Red Team!", set()) == "red-team"
    assert team_id("Red", {"red"}) == "red-2"
    assert team_id("???", set()) == "team"


def test_answer_line_marks():
    text = answer_markup("<b><u>Moby-Dick</u></b> [or The Whale; prompt on <i>whale</i>]")
    assert text.plain == "Moby-Dick [or The Whale; prompt on whale]"
    assert any("bold" in str(span.style) for span in text.spans)


def test_buzz_marks_follow_rulings_and_undos():
    events = [
        {"type": "buzz_accepted", "buzz_id": 1, "team": "red", "word_index": 4, "seq": 1},
        {"type": "ruled", "buzz_id": 1, "ruling": "correct", "seq": 2},
        {"type": "ruling_undone", "buzz_id": 1, "ruled_seq": 2, "seq": 3},
    ]
    assert buzz_marks(events[:2])[0].ruling == "correct"
    assert buzz_marks(events)[0].ruling is None


def test_the_log_counts_words_from_1_as_they_are_read():
    teams = [TeamView(id="red", name="Red", kind="human", players={"p-1": "Ann"}, size=1)]
    ev = {"type": "buzz_accepted", "team": "red", "player": "p-1", "word_index": 11}
    line = describe_event(ev, teams)
    assert line is not None and line.plain == "BUZZ Red/Ann @ word 12"


def test_qr_code_is_dark_on_light_half_blocks():
    import segno

    url = "http://192.168.1.20:8000/?code=WTE69"
    text = qr_text(url)
    lines = text.plain.split("\n")
    size = segno.make(url, error="m").symbol_size(scale=1, border=2)[0]
    assert len(lines) == (size + 1) // 2 and {len(line) for line in lines} == {size}
    assert set(text.plain) <= set(" ▀▄█\n")
    assert "#000000 on #ffffff" in str(text.style)


def test_moderate_needs_a_token():
    from typer.testing import CliRunner

    from grace_arena.cli import app as cli

    result = CliRunner().invoke(
        cli, ["moderate", "--server", "127.0.0.1:9"], env={"GRACE_ARENA_TOKEN": ""}
    )
    assert result.exit_code == 2 and "--token" in result.output


def test_the_app_keeps_the_whole_tossup_log_when_the_server_window_slides():
    from test_tui_snapshots import live_state

    app = make_tui("http://127.0.0.1:9", autostart=False)
    base = live_state()
    words = [
        {"seq": 45 + i, "t": 111.0 + i, "type": "words_revealed", "tossup_id": "x", "position": i}
        for i in range(60)
    ]
    first = app._with_whole_log(base)
    assert [e["seq"] for e in first.last_events] == [40, 41, 42, 43, 44]
    # The server sends only its last events: the buzzes have left its window.
    later = app._with_whole_log(base.model_copy(update={"last_events": words[-50:]}))
    seqs = [e["seq"] for e in later.last_events]
    assert seqs[:5] == [40, 41, 42, 43, 44] and seqs[-1] == 104
    assert len(buzz_marks(later.last_events)) == 2
    # A new tossup starts a new log.
    nxt = base.model_copy(
        update={
            "tossup": base.tossup.model_copy(update={"id": "lit-british-1"}),
            "last_events": [{"seq": 200, "t": 300.0, "type": "tossup_started", "index": 3}],
        }
    )
    assert [e["seq"] for e in app._with_whole_log(nxt).last_events] == [200]


# ---------------------------------------------------------------------------------------------
# What the moderator reads aloud


async def test_the_moderator_sees_pronunciation_guides_and_the_punctuation_after_them(db_url):
    # The sample packet's lit-european-1: 'Raskolnikov ("ras-KOHL-nee-kuff"), uses an axe'
    settings = Settings(
        db_url=db_url,
        packets=[SAMPLE_PACKET_PATH],
        secret="s",
        first_match=two_teams(tossup_ids=["lit-european-1"]),
    )
    with LiveServer(settings) as server:
        match_id = server.room().rm.id
        token = server.run(server.events.match_moderator_token(match_id))
        ann = await asyncio.to_thread(player, server, "red", "Ann", match_id)
        app = make_tui(server.http_url, match_id=match_id, moderator_token=token)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: shown(app, LobbyScreen), "the lobby")
            await pilot.press("s", "n")
            await until(pilot, lambda: phase(app) == "reading", "reading")
            await pilot.press("space")
            await until(pilot, lambda: not app.state.reading.running, "paused")
            live = app.screen
            text = " ".join(text_of(live.query_one(TossupPane)).split())
            assert 'Raskolnikov ("ras-KOHL-nee-kuff"), uses an axe' in text
            assert 'Dostoevsky ("duss-tuh-YEF-skee").' in text
            # positions are still the canonical words': a buzz on "uses" is at "uses"
            words = app.state.tossup.words
            uses = words.index("uses")
            assert words[uses - 1] == "Raskolnikov"
            await pilot.press(*["w"] * (uses - app.state.tossup.position))
            await until(pilot, lambda: app.state.tossup.position == uses, "the word 'uses'")
            ann.send(type="buzz", client_time=time.time())
            await until(pilot, lambda: phase(app) == "buzzed", "the buzz")
            assert "(“uses”)" in text_of(live.query_one(BuzzBanner))
        ann.close()
    (buzz,) = server.arena.store.buzzes(match_id)
    assert buzz.word_index == uses


@pytest.mark.slow
async def test_the_end_screens_commands_run_as_printed_from_where_the_user_is(
    tmp_path, monkeypatch
):
    import shlex
    import subprocess

    from test_tui_snapshots import ended_state

    for where in (Path.cwd(), tmp_path):
        monkeypatch.chdir(where)
        app = make_tui("http://127.0.0.1:9", autostart=False, cursor_blink=False)
        async with app.run_test(size=SIZE) as pilot:
            app.state = ended_state()
            await app.push_screen(EndScreen(ended_state()))
            await pilot.pause()
            shown = text_of(app.screen.query_one("#end-record"))
        line = next(line.strip() for line in shown.splitlines() if " export --format csv" in line)
        argv = shlex.split(line)
        program = argv[: argv.index("export")]
        done = subprocess.run(
            [*program, "export", "--help"], cwd=where, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0 and "--format" in done.stdout, (line, done.stderr)


@pytest.mark.parametrize("screen", ["lobby", "live", "end", "standings", "set-up", "rooms"])
async def test_quitting_while_a_screen_is_being_put_up_raises_nothing(open_match, screen):
    # The screen is on the stack before its widgets are: quitting then (or a screen replaced at
    # once) prunes the widgets its first drawing looks for.
    server, match_id, token = open_match
    app = make_tui(server.http_url, match_id=match_id, moderator_token=token)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: shown(app, LobbyScreen), "the lobby")
        new = {
            "lobby": LobbyScreen,
            "live": LiveScreen,
            "end": lambda: EndScreen(app.state),
            "standings": StandingsScreen,
            "set-up": SetupScreen,
            "rooms": lambda: RoomPickerScreen("night"),
        }[screen]
        if screen in ("lobby", "live", "end"):
            app._switch(new())  # replaced at once by the next one
            app._switch(new())
        else:
            app.push_screen(new())
    # (run_test raises what the app raised)
    assert app.return_code in (0, None)


async def test_the_moderators_screen_follows_its_match_to_the_process_that_took_it_over(db_url):
    """Two server processes share the record; the one serving the match loses it to the other
    (its lease lapsed: a hang). It tells the moderator's screen where the match is now: the
    screen says hello there by itself, and goes on moderating it."""
    from grace_arena.record import lease

    first = Settings(
        db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="s", first_match=two_teams(),
        renew_interval=0.2,
    )  # fmt: skip
    other = Settings(db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="s")
    with LiveServer(first) as a, LiveServer(other) as b:
        match_id = a.room().rm.id
        token = a.run(a.events.match_moderator_token(match_id))
        app = make_tui(a.http_url, moderator_token=token, match_id=match_id, backoff=(0.05, 0.5))
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.state is not None and app.connected, "the match on A")
            await asyncio.to_thread(
                lease.acquire, b.arena.engine, match_id, b.arena.holder, ttl=-1.0
            )
            await until(pilot, lambda: app.target.url == b.http_url, "the move to B")
            await until(pilot, lambda: app.connected and match_id in b.arena.rooms, "B serves it")
            assert match_id not in a.arena.rooms
            await until(pilot, lambda: b.arena.rooms[match_id].controller is not None, "control")


async def test_an_acf_match_s_bonus_is_ruled_part_by_part_with_the_same_keys(server):
    """The set-up's format ACF; a tossup answered correctly: the banner shows the bonus, its
    current part and answer line, what the team typed and the judge; c/i/p rule the part, u
    undoes it, b throws the bonus out (asks first)."""
    from textual.widgets import Select

    app = make_tui(server.http_url, token=server.events.tokens.server(), backoff=(0.05, 0.5))
    async with app.run_test(size=SIZE) as pilot:
        setup = await until(pilot, lambda: shown(app, SetupScreen), "set-up")
        await until(pilot, lambda: setup.packets, "the packets")
        setup.query_one("#tossups", Input).value = "1-2"
        setup.query_one("#teams", DataTable).move_cursor(row=2)
        await pilot.click("#remove-team")
        setup.query_one("#format", Select).value = "acf"
        await until(pilot, lambda: setup.query_one("#power", Input).value == "", "ACF's points")
        setup.query_one("#mode", RadioSet).query_one("#screen", RadioButton).value = True
        await pilot.press("ctrl+s")
        await until(pilot, lambda: shown(app, LobbyScreen), "the lobby")
        match_id = app.join.match_id
        rules = server.room(match_id).match.config.rules
        assert (rules.format, rules.bonuses, rules.power_points) == ("acf", True, None)
        ann = await asyncio.to_thread(player, server, "red", "Ann", match_id)
        await pilot.press("s")
        live = await until(pilot, lambda: shown(app, LiveScreen), "live")
        await pilot.press("n")
        await until(pilot, lambda: phase(app) == "reading", "reading")
        ann.send(type="buzz", client_time=time.time())
        await until(pilot, lambda: phase(app) == "buzzed", "Ann's buzz")
        await pilot.press("c")
        await until(pilot, lambda: phase(app) == "bonus", "the bonus")
        banner = text_of(live.query_one(BuzzBanner))
        assert "BONUS" in banner and "Red" in banner and "part 1/3 [10e]" in banner
        assert "ANSWER: Mark Twain" in banner and "This author's narrator" in banner
        assert "BONUS" in text_of(live.query_one(StatusLine))
        ann.send(type="answer", text="twain", part=1, bounceback=False)
        await until(pilot, lambda: app.state.bonus.answer == "twain", "Ann's answer")
        banner = text_of(live.query_one(BuzzBanner))
        assert "“twain” (Ann)" in banner and "judge suggests: ACCEPT" in banner
        await pilot.press("c")
        await until(pilot, lambda: app.state.bonus.part == 1, "part 2")
        assert " undo" in text_of(live.query_one(BuzzBanner))
        await pilot.press("i")
        await until(pilot, lambda: app.state.bonus.part == 2, "part 3")
        await pilot.press("u")
        await until(pilot, lambda: app.state.bonus.part == 1, "the undo")
        await pilot.press("b")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await until(pilot, lambda: app.state.bonus.id == "b-lit-british-1", "the next bonus")
        assert " undo" not in text_of(live.query_one(BuzzBanner))  # nothing after a throw-out
        await pilot.press("c", "c")
        await until(pilot, lambda: app.state.bonus.part == 2, "its part 3")
        await pilot.press("c")
        await until(pilot, lambda: phase(app) == "answered", "the cycle's end")
        assert "Bonus 2: Red 30 (10/10/10)" in text_of(live.query_one(BuzzBanner))
        assert app.state.teams[0].score == 10 + 30  # ACF: no powers; the thrown-out 10 is gone
        ann.close()
    kinds = [e.type for e in server.arena.store.events(match_id)]
    assert kinds.count("bonus_part_ruled") == 5 and kinds.count("bonus_part_undone") == 1


async def test_the_lobby_e_mid_tossup_and_the_hint_after_a_throw_out_say_what_is_true(open_match):
    server, match_id, token = open_match
    app = make_tui(server.http_url, match_id=match_id, moderator_token=token)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.connected and app.state is not None, "connected")
        lobby = await until(pilot, lambda: shown(app, LobbyScreen), "the lobby")
        # no tossup has been read: not "between tossups"
        status = text_of(lobby.query_one(StatusLine))
        assert "before the first tossup" in status and "between tossups" not in status
        await pilot.press("s")
        live = await until(pilot, lambda: shown(app, LiveScreen), "live")
        assert "before the first tossup" in text_of(live.query_one(StatusLine))
        await pilot.press("n")
        await until(pilot, lambda: phase(app) == "reading", "reading")
        # E while reading: the match ends only between tossups, and the screen says so
        await pilot.press("E")
        note = await until(pilot, lambda: list(app._notifications), "a notification")
        assert "ends between tossups" in note[-1].message and "t throws it out" in note[-1].message
        assert not isinstance(app.screen, ConfirmScreen)
        assert phase(app) == "reading"
        # a throw-out cannot be undone: the hint does not offer u
        await pilot.press("t")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
        await pilot.press("y")
        await until(pilot, lambda: phase(app) == "thrown_out", "thrown out")
        await pilot.pause(0.1)
        hint = text_of(live.query_one(BuzzBanner))
        assert "n next tossup" in hint and "undo" not in hint
        assert "between tossups" not in text_of(live.query_one(StatusLine))
        # and the next tossup goes on
        await pilot.press("n")
        await until(pilot, lambda: phase(app) == "reading", "reading")
    assert server.room().match.game.phase == "reading"


async def test_a_model_teams_buzz_offers_no_prompt_and_a_prompt_sent_is_refused(db_url):
    setup = two_teams(
        teams=[
            TeamSetup(id="red", name="Red"),
            TeamSetup(id="bot", name="Bot", kind="model", model="tfidf", threshold=0.0),
        ]
    )
    settings = Settings(db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="s", first_match=setup)
    with LiveServer(settings) as server:
        match_id = server.room().rm.id
        token = server.run(server.events.match_moderator_token(match_id))
        app = make_tui(server.http_url, match_id=match_id, moderator_token=token)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.connected and app.state is not None, "connected")
            await pilot.press("s", "n")
            await until(pilot, lambda: phase(app) == "buzzed", "the model's buzz")
            assert app.state.floor.kind == "model"
            screen = app.screen
            assert screen.check_action("prompt", ()) is False
            assert "p" not in footer_keys(screen)
            banner = text_of(screen.query_one(BuzzBanner))
            assert "correct" in banner and "prompt" not in banner
            await pilot.press("p")  # nothing: the key is off
            app.send_command(RuleMsg(ruling="prompt"))  # the match refuses it too
            await until(pilot, lambda: app._notifications, "a notification")
            (note,) = list(app._notifications)
            assert "model team" in note.message and "cannot say more" in note.message
            assert phase(app) == "buzzed"
            await pilot.press("i")
            await until(pilot, lambda: phase(app) != "buzzed", "the ruling")
        (ruling,) = server.arena.store.rulings(match_id)
        assert ruling.ruling == "incorrect"


# ---------------------------------------------------------------------------------------------
# Until the server lets the moderator in


def connecting_text(app) -> str:
    return text_of(app.screen.query_one("#connecting"))


async def test_a_server_not_there_is_said_on_screen_while_retrying_and_on_quitting():
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    app = make_tui(url, room="d8qagq", moderator_token="x", backoff=(0.1, 0.2))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: shown(app, ConnectingScreen), "the connecting screen")
        await until(pilot, lambda: "reconnecting in" in connecting_text(app), "a retry")
        said = connecting_text(app)
        assert f"Connecting to {url} (room D8QAGQ)…" in said and "connection refused" in said
        await pilot.pause(0.5)  # it goes on retrying, and the screen goes on saying why
        assert isinstance(app.screen, ConnectingScreen)
        assert "connection refused" in connecting_text(app)
        await pilot.press("q")
        (last,) = app._exit_renderables  # printed once the terminal is back
    assert str(last).startswith(f"Not connected to {url}: connection refused")
    assert "\n" not in str(last)


async def test_a_wrong_moderator_token_is_said_once_and_not_retried(open_match):
    server, match_id, _ = open_match
    app = make_tui(
        server.http_url, match_id=match_id, moderator_token="wrongtoken", backoff=(0.1, 0.2)
    )
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: shown(app, ConnectingScreen), "the connecting screen")
        await until(pilot, lambda: "not retrying" in connecting_text(app), "the refusal")
        said = connecting_text(app)
        assert "wrong moderator token" in said and "'moderator token:' line" in said
        await pilot.pause(1.0)  # ten retries' worth of time: still the same words, no retry
        assert connecting_text(app) == said and not app.connected
        assert all(w.is_finished for w in app.workers if w.group == "link")
        await pilot.press("ctrl+q")
        (last,) = app._exit_renderables
    assert str(last) == f"Not connected to {server.http_url}: wrong moderator token"


async def test_a_room_the_server_does_not_have_is_said_once_and_not_retried(server):
    """A mistyped join code is never served by retrying: the screen says so and stops."""
    app = make_tui(server.http_url, room="ZZZZZZ", moderator_token="x", backoff=(0.1, 0.2))
    async with app.run_test(size=SIZE) as pilot:
        await until(
            pilot,
            lambda: shown(app, ConnectingScreen) and "not retrying" in connecting_text(app),
            "the refusal",
        )
        said = connecting_text(app)
        assert "no live match" in said and "check the join code" in said
        assert "reconnecting in" not in said
        await pilot.pause(1.0)  # ten retries' worth of time: still the same words, no retry
        assert connecting_text(app) == said and not app.connected
        assert all(w.is_finished for w in app.workers if w.group == "link")
        await pilot.press("q")
        (last,) = app._exit_renderables
    assert "no live match" in str(last)


async def test_the_live_screen_fits_80_by_24_with_every_key_of_a_prompt(open_match):
    server, match_id, token = open_match
    ann = await asyncio.to_thread(player, server, "red", "Ann", match_id)
    app = make_tui(server.http_url, match_id=match_id, moderator_token=token)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.connected and app.state is not None, "connected")
        await pilot.press("s")
        live = await until(pilot, lambda: shown(app, LiveScreen), "live")
        await pilot.press("n")
        await until(pilot, lambda: phase(app) == "reading", "reading")
        ann.send(type="buzz", client_time=time.time())
        await until(pilot, lambda: phase(app) == "buzzed", "Ann's buzz")
        await pilot.press("p")  # the most keys at once: c, i, p, u, pace, t, j, ?, q
        await until(pilot, lambda: phase(app) == "prompted" and app.state.match.can_undo, "p")
        await pilot.pause(0.1)
        keys = {k.key: k.region for k in live.query(FooterKey)}
        assert {"c", "i", "p", "u", "plus", "minus", "t", "j", "question_mark", "q"} <= set(keys)
        assert all(r.width > 0 and r.right <= 80 for r in keys.values()), keys
        for title in live.query("#live-side .section").results(Static):
            said = str(title.content)
            assert title.content_region.width >= len(said), said
    ann.close()
