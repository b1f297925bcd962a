"""The schedules a room plays (``rooms.py``): an event's room the games the event's schedule
gives it, a match of its own one game (:class:`OneGame`). Each says how its plan is read from
the record, what its clients are told of it, and where its moderator tokens are kept; the
rooms layer asks it rather than testing which kind of room it is. Also the words a room and
its players are told of the schedule (who plays where, what a match waits for)."""

from __future__ import annotations

import asyncio
from collections.abc import Container
from dataclasses import dataclass, field, replace
from typing import Any

from sqlalchemy.engine import Engine
from sqlmodel import Session

from grace_arena.protocol import EventView, ScheduledMatch
from grace_arena.record.models import MatchRow
from grace_arena.record.schedule import (
    EventPlan,
    GamePlan,
    RoomPlan,
    add_room_moderator_token,
    load_plan,
    room_moderator_hashes,
)
from grace_arena.record.store import MatchStore

__all__ = [
    "EventSchedule",
    "OneGame",
    "Schedule",
    "ScheduledRoom",
    "moves_on_text",
    "room_name",
    "schedule_of",
    "starts_when",
    "waiting_text_of",
]


class EventSchedule:
    """The games an event's schedule gives one of its rooms (the record's ``event_game``)."""

    def __init__(self, event_id: int, room_id: str) -> None:
        self.event_id = event_id
        self.room_id = room_id
        #: What its players are of, in words ("this event is full").
        self.noun = "event"
        #: Its games are an event's scheduled matches (those of a match of its own are not).
        self.scheduled = True
        #: Its standings change with every ruling (a match of its own has none).
        self.standings = True

    def read(self, engine: Engine, served: Container[int]) -> EventPlan:
        return load_plan(engine, self.event_id)

    def view(self, plan: EventPlan, room: ScheduledRoom, game: GamePlan) -> EventView | None:
        """What the room's clients are told of the event it plays in."""
        return EventView(
            name=plan.name,
            title=plan.title,
            room=room.name,
            join_code=room.join_code,
            round=game.round,
            rounds=len(plan.rounds),
        )

    def moderator_hashes(self, engine: Engine) -> list[str]:
        return room_moderator_hashes(engine, self.event_id, self.room_id)

    def add_moderator_token(self, engine: Engine, digest: str) -> list[str]:
        return add_room_moderator_token(engine, self.event_id, self.room_id, digest)


class OneGame:
    """The schedule of a match of its own: one game, in a room of its own (its join code), of
    the event the record made for it. Its game lasts for as long as the match is served here:
    its phones see it end, and nothing comes after it."""

    ROOM = "match"

    def __init__(self, event_id: int, match_id: int, join_code: str) -> None:
        self.event_id = event_id
        self.match_id = match_id
        self.join_code = join_code
        self.room_id = self.ROOM
        self.noun = "match"
        self.scheduled = False
        self.standings = False

    def read(self, engine: Engine, served: Container[int]) -> EventPlan:
        plan = load_plan(engine, self.event_id)
        with Session(engine) as session:
            row = session.get(MatchRow, self.match_id)
        ended = row is not None and row.ended_at is not None and self.match_id not in served
        game = GamePlan(
            id=-self.match_id,
            round=1,
            room_id=self.ROOM,
            slot=0,
            teams=tuple(t.id for t in plan.teams),
            match_id=self.match_id,
            ended=ended,
        )
        room = RoomPlan(self.ROOM, f"match {self.match_id}", self.join_code, 0)
        return replace(plan, rooms=(room,), rounds=(), games=(game,))

    def view(self, plan: EventPlan, room: ScheduledRoom, game: GamePlan) -> EventView | None:
        return None  # its clients are told of no event

    def moderator_hashes(self, engine: Engine) -> list[str]:
        return []  # the match's own, which the arena reads when it opens the match

    def add_moderator_token(self, engine: Engine, digest: str) -> list[str]:
        return MatchStore(engine).add_moderator_token(self.match_id, digest)


Schedule = EventSchedule | OneGame


@dataclass(eq=False)
class ScheduledRoom:
    """One room, as this process serves it: its join code and its schedule."""

    schedule: Schedule
    event_id: int
    event_name: str
    event_title: str
    rounds: int
    room_id: str
    name: str
    join_code: str
    #: The match it plays now, while this process serves it (the arena's ``rooms`` holds it).
    match_id: int | None = None
    game: GamePlan | None = None
    done: bool = False  # every match of its schedule has ended
    #: Its next match cannot start yet (a team of it plays an earlier round elsewhere): why.
    waiting: str | None = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


def schedule_of(plan: EventPlan) -> list[ScheduledMatch]:
    """The matches of the event's current round (the earliest with a match not over) and of
    the next, by round and room, each with where it stands: ``played``, ``playing`` (opened),
    ``next`` (the first of its room not opened yet), ``later``. Byes are left out."""
    games = [g for g in plan.games if not g.bye]
    left = [g.round for g in games if not g.ended]
    if not left:
        return []
    shown = {min(left), min(left) + 1}
    names = {t.id: t.name for t in plan.teams}
    order = {r.id: r.position for r in plan.rooms}
    rooms = {r.id: r.name for r in plan.rooms}
    nexts = set()
    for room in plan.rooms:
        waiting = [
            g for g in plan.games_in(room.id) if not g.bye and g.match_id is None and not g.ended
        ]  # (a game forfeited or entered by its score is over without a match)
        if waiting:
            nexts.add(waiting[0].id)
    out = []
    for g in sorted(games, key=lambda g: (g.round, order.get(g.room_id or "", 0), g.slot)):
        if g.round not in shown:
            continue
        status = (
            "played"
            if g.ended
            else "playing"
            if g.match_id is not None
            else "next"
            if g.id in nexts
            else "later"
        )
        out.append(
            ScheduledMatch(
                round=g.round,
                room=rooms.get(g.room_id or "", ""),
                teams=[names.get(t, t) for t in g.teams],
                status=status,
            )
        )
    return out


def moves_on_text(plan: EventPlan | None, sr: ScheduledRoom) -> str:
    """``Room 1 moves on to its next match: round 1, Green vs Robo`` (a room may play
    several matches in one round)."""
    room = room_name(sr)
    game = sr.game
    if game is None:
        return f"{room[0].upper()}{room[1:]} moves on to its next match"
    names = {t.id: t.name for t in plan.teams} if plan is not None else {}
    teams = " vs ".join(names.get(t, t) for t in game.teams)
    return f"{room[0].upper()}{room[1:]} moves on to its next match: round {game.round}, {teams}"


def waiting_text_of(
    plan: EventPlan, sr: ScheduledRoom, game: GamePlan, blockers: list[GamePlan]
) -> str:
    """``Room 2's round 3 match, Blue vs Robo, starts when round 2 in Room 1 (Blue) is over.``"""
    names = {t.id: t.name for t in plan.teams}
    teams = " vs ".join(names.get(t, t) for t in game.teams)
    text = f"{room_name(sr)}'s round {game.round} match, {teams}, starts when "
    text += f"{starts_when(plan, blockers, game)}."
    return text[0].upper() + text[1:]


def starts_when(plan: EventPlan, blockers: list[GamePlan], game: GamePlan) -> str:
    """What ``game`` waits for, said the same way to its room and to each waiting player:
    ``round 2 in room 1 (Blue) is over`` (each earlier match not over that shares a team
    with it, and the teams it shares)."""
    names = {t.id: t.name for t in plan.teams}
    held = []
    for g in blockers:
        room = plan.room(g.room_id or "")
        who = ", ".join(names.get(t, t) for t in g.teams if t in game.teams)
        held.append(f"round {g.round} in {room_name(room)} ({who})")
    return f"{' and '.join(held)} {'is' if len(held) == 1 else 'are'} over"


def room_name(room: Any) -> str:
    if room is None:
        return "no room"
    name = room.name
    return name if not name.isdigit() else f"room {name}"
