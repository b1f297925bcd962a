"""Snapshots of the moderator's screens (pytest-textual-snapshot), cursor blink off.

The app runs offline (``autostart=False``): each screen is fed a fixed state, catalog or
summary built from the sample packet, so join codes, tokens and clocks cannot vary. Update
the SVGs after an intended change with ``pytest tests/test_tui_snapshots.py --snapshot-update``
and look at them before committing.
"""

from __future__ import annotations

import pytest

from grace_arena.core.packet import SAMPLE_PACKET_PATH, load_packet
from grace_arena.protocol import (
    BuzzRecord,
    EventView,
    FloorView,
    MatchCreatedReply,
    MatchSummary,
    MatchView,
    ModelGuessView,
    ReadingView,
    RoomStatus,
    StandingRow,
    StandingsView,
    State,
    TeamView,
    TossupView,
)
from moderator_tui import make_tui
from moderator_tui.end import EndScreen
from moderator_tui.event import StandingsScreen
from moderator_tui.live import LiveScreen
from moderator_tui.messages import CatalogLoaded
from moderator_tui.setup import LobbyScreen, SetupScreen

PACKET = load_packet(SAMPLE_PACKET_PATH)
FIRST = PACKET.tossups[0]
TOKENS = FIRST.tokens()
IDS = [t.id for t in PACKET.tossups[:8]]
URL = "http://192.168.1.20:8000"


def teams(*, locked: bool = False) -> list[TeamView]:
    return [
        TeamView(
            id="red",
            name="Red",
            kind="human",
            players={"p-1": "Ann", "p-3": "Cleo"},
            size=2,
            score=-5,
            locked_out=locked,
        ),
        TeamView(id="blue", name="Blue", kind="human", players={"p-2": "Bob"}, size=1, score=25),
        TeamView(
            id="model",
            name="Model (tfidf)",
            kind="model",
            players={"model:tfidf": "tfidf"},
            size=1,
            score=10,
        ),
    ]


def live_state() -> State:
    """Tossup 3 of 8: Red negged at word 19, Bob has the floor at word 41 (screen mode)."""
    events = [
        {"seq": 40, "t": 100.0, "type": "tossup_started", "tossup_id": FIRST.id, "index": 2},
        {
            "seq": 41,
            "t": 104.0,
            "type": "buzz_accepted",
            "buzz_id": 5,
            "team": "red",
            "player": "p-1",
            "kind": "human",
            "word_index": 18,
            "answer": "The Old Man and the Sea",
            "suggestion": "reject",
        },
        {
            "seq": 42,
            "t": 106.0,
            "type": "ruled",
            "buzz_id": 5,
            "team": "red",
            "player": "p-1",
            "ruling": "incorrect",
            "points": -5,
            "by": "moderator",
        },
        {
            "seq": 43,
            "t": 109.0,
            "type": "buzz_accepted",
            "buzz_id": 6,
            "team": "blue",
            "player": "p-2",
            "kind": "human",
            "word_index": 40,
            "answer": "moby dick",
            "suggestion": "accept",
        },
        {
            "seq": 44,
            "t": 109.1,
            "type": "buzz_refused",
            "buzz_id": 7,
            "team": "model",
            "player": "model:tfidf",
            "kind": "model",
            "word_index": 40,
            "reason": "lost_race",
            "margin": 0.08,
        },
    ]
    return State(
        role="moderator",
        match=MatchView(
            id=7,
            title="GRACE Arena Sample Packet",
            join_code="WTE69",
            phase="buzzed",
            paused=True,
            tossups_total=8,
            tossups_played=3,
            tossup_ids=IDS,
        ),
        teams=teams(locked=True),
        tossup=TossupView(
            id=FIRST.id,
            number=3,
            category=FIRST.category,
            n_words=len(TOKENS.words),
            clue_ends=list(TOKENS.clue_ends),
            power_index=TOKENS.power_index,
            position=40,
            words=[w.text for w in TOKENS.words],
            answer=FIRST.answer,
        ),
        floor=FloorView(
            buzz_id=6,
            team="blue",
            player="p-2",
            player_name="Bob",
            kind="human",
            word_index=40,
            clue_index=1,
            answer="moby dick",
            suggestion="accept",
        ),
        deadline=None,
        reading=ReadingView(mode="screen", wpm=180, running=False),
        models=[
            ModelGuessView(
                team="model",
                model="tfidf",
                buzz_word=113,
                guess="The Old Man and the Sea",
                confidence=0.31,
            )
        ],
        last_events=events,
        server_time=110.0,
    )


def ended_state() -> State:
    state = live_state()
    return state.model_copy(
        update={
            "match": state.match.model_copy(
                update={"phase": "ended", "tossups_played": 8, "tossups_heard": 8}
            ),
            "teams": teams(),
            "tossup": None,
            "floor": None,
            "models": [],
            "last_events": [],
        }
    )


def summary() -> MatchSummary:
    def buzz(i, tossup, team, player, kind, word, ruling, points, **kw):
        return BuzzRecord(
            buzz_id=i,
            tossup_id=tossup,
            team=team,
            player=player,
            kind=kind,
            word_index=word,
            outcome=kw.pop("outcome", "won"),
            ruling=ruling,
            points=points,
            **kw,
        )

    return MatchSummary(
        match_id=7,
        title="GRACE Arena Sample Packet",
        ended=True,
        scores={"red": -5, "blue": 25, "model": 10},
        buzzes=[
            buzz(1, IDS[0], "blue", "p-2", "human", 60, "correct", 15),
            buzz(
                2,
                IDS[1],
                "model",
                "model:tfidf",
                "model",
                102,
                "correct",
                10,
                answer="Frankenstein",
                suggestion="accept",
                confidence=0.62,
            ),
            buzz(3, IDS[2], "red", "p-1", "human", 18, "incorrect", -5),
            buzz(4, IDS[2], "blue", "p-2", "human", 40, "correct", 10),
            buzz(5, IDS[2], "model", "model:tfidf", "model", 40, None, None, outcome="lost_race"),
            buzz(
                6,
                IDS[4],
                "model",
                "model:tfidf",
                "model",
                77,
                "incorrect",
                -5,
                answer="The Great Gatsby",
                suggestion="reject",
                confidence=0.55,
            ),
        ],
        record="sqlite:////home/moderator/.local/share/grace-arena/grace_arena.db",
    )


def offline_app(**kwargs):
    # the end screen's commands as the README writes them (not as this test runs)
    return make_tui(
        URL,
        token="server-token",
        autostart=False,
        cursor_blink=False,
        command=".venv/bin/grace-arena",
        **kwargs,
    )


def catalog() -> CatalogLoaded:
    packets = [
        {
            "id": PACKET.packet.id,
            "title": PACKET.packet.title,
            "tossups": [
                {"id": t.id, "category": t.category, "answer": t.answer} for t in PACKET.tossups
            ],
        }
    ]
    # a match left open by an earlier run: whose it is, how far it got
    left_open = MatchCreatedReply(
        match_id=4,
        join_code="K7QXM2",
        join_url=f"{URL}/?code=K7QXM2",
        moderator_token="m",
        title="GRACE Arena Sample Packet",
        teams=["Red", "Blue", "Model (tfidf)"],
        tossups_started=3,
    )
    return CatalogLoaded(packets, ["tfidf"], [left_open])


@pytest.mark.parametrize("size", [(100, 30), (160, 45)])
def test_setup_screen(snap_compare, size):
    app = offline_app(record="sqlite:///club.db")

    async def run_before(pilot):
        await app.push_screen(SetupScreen())
        app.screen.post_message(catalog())
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=run_before)


def test_lobby_screen(snap_compare):

    app = offline_app()
    state = live_state()
    lobby = state.model_copy(
        update={
            "match": state.match.model_copy(update={"phase": "idle", "tossups_played": 0}),
            "tossup": None,
            "floor": None,
        }
    )

    async def run_before(pilot):
        app.join = MatchCreatedReply(
            match_id=7, join_code="WTE69", join_url=f"{URL}/?code=WTE69", moderator_token="m"
        )
        app.connected = True
        await app.push_screen(LobbyScreen())
        app.state = lobby
        await pilot.pause()

    assert snap_compare(app, terminal_size=(100, 30), run_before=run_before)


@pytest.mark.parametrize("size", [(100, 30), (160, 45), (80, 24)])
def test_live_screen_with_a_buzz(snap_compare, size):
    app = offline_app()

    async def run_before(pilot):
        app.connected = True
        await app.push_screen(LiveScreen())
        app.state = live_state()
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=run_before)


def test_live_screen_marks_the_bench(snap_compare):
    """A format with lineups (ACF: four at a time): the scores panel lists each team's lineup,
    then its bench, dimmed and marked "(bench)"."""
    app = offline_app()
    state = live_state()
    red, blue, model = state.teams
    red = red.model_copy(
        update={
            "players": {"p-1": "Ann", "p-3": "Cleo", "p-4": "Dee", "p-5": "Eve", "p-6": "Fay"},
            "size": 5,
            "lineup": ["p-1", "p-4", "p-5", "p-6"],
        }
    )
    blue = blue.model_copy(update={"lineup": ["p-2"]})
    benched = state.model_copy(update={"teams": [red, blue, model]})

    async def run_before(pilot):
        app.connected = True
        await app.push_screen(LiveScreen())
        app.state = benched
        await pilot.pause()

    assert snap_compare(app, terminal_size=(100, 30), run_before=run_before)


def test_live_screen_offline_shows_the_reconnection(snap_compare):
    app = offline_app()

    async def run_before(pilot):
        app.connected = False
        app.link_detail = "the server is not answering; reconnecting in 2.0 s"
        await app.push_screen(LiveScreen())
        app.state = live_state()
        await pilot.pause()

    assert snap_compare(app, terminal_size=(100, 30), run_before=run_before)


def test_end_screen(snap_compare):
    app = offline_app(record="sqlite:////home/moderator/.local/share/grace-arena/grace_arena.db")

    async def run_before(pilot):
        app.connected = True
        app.summary = summary()
        app.state = ended_state()
        await app.push_screen(EndScreen(ended_state()))
        await pilot.pause()

    assert snap_compare(app, terminal_size=(100, 30), run_before=run_before)


def test_help_screen(snap_compare):
    app = offline_app()

    async def run_before(pilot):
        app.connected = True
        await app.push_screen(LiveScreen())
        app.state = live_state()
        await pilot.pause()

    assert snap_compare(app, terminal_size=(100, 30), run_before=run_before, press=["?"])


def event_state(round_: int = 1, *, phase: str = "ended", teams_: tuple[str, ...] = ()) -> State:
    """A match of an event's room 1, as the moderator sees it."""
    state = ended_state() if phase == "ended" else live_state()
    event = EventView(
        name="club-night", title="Club Night", room="1", join_code="K7QXM", round=round_, rounds=3
    )
    update: dict = {"event": event}
    if teams_:
        update["teams"] = [t for t in teams() if t.id in teams_]
        update["match"] = state.match.model_copy(
            update={"id": 8, "phase": "idle", "tossups_played": 0, "join_code": "K7QXM"}
        )
    return state.model_copy(update=update)


def standings() -> StandingsView:
    def row(rank, team, name, kind, won, lost, points, heard, correct, powers, negs, live=0):
        return StandingRow(
            rank=rank, team=team, name=name, kind=kind, played=won + lost, won=won, lost=lost,
            tied=0, live=live, points=points, points_against=0, tossups_heard=heard,
            points_per_tossup=points / heard if heard else None, correct=correct, powers=powers,
            incorrect=negs, negs=negs, points_per_game=points / (won + lost + live),
            points_per_20_tuh=points / heard * 20 if heard else None,
        )  # fmt: skip

    return StandingsView(
        event="club-night",
        title="Club Night",
        rounds=3,
        rows=[
            row(1, "blue", "Blue", "human", 1, 0, 25, 8, 2, 1, 0, live=1),
            row(2, "model", "Model (tfidf)", "model", 1, 0, 10, 8, 1, 0, 1, live=1),
            row(3, "red", "Red", "human", 0, 1, -5, 8, 0, 0, 1),
            row(4, "gold", "Gold", "human", 0, 1, 0, 8, 0, 0, 0),
        ],
        rooms=[
            RoomStatus(
                room="1", join_code="K7QXM", round=2, match_id=8, teams=["Blue", "Model (tfidf)"],
                scores={"Blue": 25, "Model (tfidf)": 10}, phase="buzzed",
            ),
            RoomStatus(room="2", join_code="RPRM9", round=2, match_id=9, teams=["Red", "Gold"]),
        ],
    )  # fmt: skip


def test_standings_screen(snap_compare):
    app = offline_app()

    async def run_before(pilot):
        app.connected = True
        await app.push_screen(LiveScreen())
        app.state = event_state(2, phase="buzzed")
        app.standings = standings()
        await app.push_screen(StandingsScreen())
        await pilot.pause()

    assert snap_compare(app, terminal_size=(100, 30), run_before=run_before)


def test_end_screen_of_an_events_match_once_the_room_moved_on(snap_compare):
    app = offline_app(record="sqlite:////home/moderator/.local/share/grace-arena/grace_arena.db")

    async def run_before(pilot):
        app.connected = True
        app.summary = summary()
        final = event_state(1)
        app.state = final
        await app.push_screen(EndScreen(final))
        app.state = event_state(2, teams_=("red", "blue"))  # the room's next match
        await pilot.pause()

    assert snap_compare(app, terminal_size=(100, 30), run_before=run_before)
