"""Building an event in a test record: teams, a schedule on the sample packet, a live server."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from live import Client, LiveServer, clients

from grace_arena.core import schedule as pairing
from grace_arena.core.packet import SAMPLE_PACKET_PATH, load_packet
from grace_arena.record.db import make_engine, upgrade
from grace_arena.record.schedule import (
    EventPlan,
    RoundPlan,
    TeamEntry,
    create_event,
    set_schedule,
)
from grace_arena.record.store import MatchStore
from grace_arena.server.app import Settings

HUMANS = [TeamEntry("red", "Red"), TeamEntry("blue", "Blue")]
MODELS = [
    TeamEntry("robo", "Robo", "model", "tfidf", 0.5),
    TeamEntry("careful", "Careful", "model", "tfidf", 0.99),
]


def make_event(
    db_url: str,
    *,
    name: str = "night",
    teams: list[TeamEntry] | None = None,
    rounds: int = 3,
    rooms: tuple[str, ...] = ("1", "2"),
    fmt: pairing.Format = "grace",
    tossups: int = 2,
    players: list[tuple[str, str]] = (),  # type: ignore[assignment]
    defaults: dict[str, Any] | None = None,
) -> EventPlan:
    """An event on the sample packet (its first ``tossups`` tossups each round), with the
    offline model's guesses precomputed."""
    from grace_arena.model.precompute import ensure_precomputed

    upgrade(db_url)
    engine = make_engine(db_url)
    try:
        packet = load_packet(SAMPLE_PACKET_PATH)
        MatchStore(engine).save_packet(packet, source=SAMPLE_PACKET_PATH)
        teams = teams if teams is not None else [*HUMANS, *MODELS]
        if any(t.kind == "model" for t in teams):
            ensure_precomputed(db_url, packet, "tfidf")
        create_event(
            engine,
            name,
            title=name.title(),
            teams=teams,
            players=list(players),
            defaults=defaults or {"answer_time": None, "wpm": 600},
        )
        games = pairing.schedule(
            [t.id for t in teams if t.kind == "human"],
            [t.id for t in teams if t.kind == "model"],
            rounds=rounds,
            rooms=list(rooms),
            format=fmt,
        )
        ids = tuple(t.id for t in packet.tossups[:tossups])
        return set_schedule(
            engine,
            name,
            rooms=list(rooms),
            rounds=[RoundPlan(r, packet.packet.id, ids) for r in range(1, rounds + 1)],
            games=games,
        )
    finally:
        engine.dispose()


def event_server(db_url: str, event: str = "night", **settings: Any) -> LiveServer:
    return LiveServer(
        Settings(
            db_url=db_url,
            packets=[SAMPLE_PACKET_PATH],
            secret="s3cret",
            event=event,
            **settings,
        )
    )


def room_moderator(server: LiveServer, code: str, **hello: Any) -> Client:
    """A moderator of the event room with join code ``code``."""
    er = server.events.rooms[code]
    client = Client(server.ws_url)
    client.send(
        type="hello",
        role="moderator",
        join_code=code,
        token=server.run(server.events.moderator_token(er)),
        **hello,
    )
    client.wait("welcome")
    client.state()
    return client


def room_player(
    server: LiveServer, code: str, team: str, name: str, claim: str | None = None
) -> Client:
    """A new player in the event room with join code ``code`` (``claim``: the claim code of a
    name of the roster); ``client.joined`` has the token. The next message after ``joined`` is
    a state, ``waiting`` or ``next_match``."""
    client = Client(server.ws_url)
    client.send(type="hello", role="player", join_code=code)
    client.welcome = client.wait("welcome")  # type: ignore[attr-defined]
    client.send(type="join", team=team, name=name, **({"code": claim} if claim else {}))
    client.joined = client.wait("joined")  # type: ignore[attr-defined]
    return client


def end_round_in(server: LiveServer, code: str) -> None:
    """End the live match of the room with join code ``code`` as its moderator does: another
    room's round, so that the teams of the next round are free (a room's match starts only
    once its teams have played their earlier rounds)."""
    with clients(room_moderator(server, code)) as (mod,):
        mod.send(type="end_match")
        mod.wait(
            lambda m: (
                m["type"] == "next_match"
                or (m["type"] == "state" and m["match"]["phase"] == "ended")
            )
        )


def rehello(client: Client, code: str, role: str = "player", **hello: Any) -> None:
    """Say hello again on the same connection (after ``next_match``), as the pages do."""
    token = client.joined["token"] if role == "player" else hello.pop("token")  # type: ignore[attr-defined]
    client.send(type="hello", role=role, join_code=code, token=token, **hello)


def code_of(plan: EventPlan, room: str) -> str:
    found = plan.room(room)
    assert found is not None
    return found.join_code


def copy_record(template: Path, folder: Path) -> str:
    """A copy of a SQLite record (an event made once per module by ``make_event``) in
    ``folder``, as a database URL: each test plays the event from the start."""
    for suffix in ("", "-wal", "-shm"):
        if Path(f"{template}{suffix}").exists():
            shutil.copy(f"{template}{suffix}", folder / f"{template.name}{suffix}")
    return f"sqlite:///{folder / template.name}"
