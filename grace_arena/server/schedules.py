"""The schedule a room plays (``rooms.py``): the games the record's schedule gives it, one
after another; an event's room the games of its rounds, a match of its own's room one game
(:class:`Schedule`: one kind of room, read one way). Also the words a room and its players are
told of the schedule (who plays where, what a match waits for)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from grace_arena.protocol import EventView, ScheduledMatch
from grace_arena.record.models import EventGameRow, EventRoomRow, MatchRow
from grace_arena.record.schedule import (
    EventPlan,
    GamePlan,
    add_room_moderator_token,
    load_plan,
    room_moderator_hashes,
)

__all__ = [
    "Schedule",
    "ScheduledRoom",
    "event_view",
    "match_moderator_hashes",
    "moves_on_text",
    "room_name",
    "schedule_of",
    "starts_when",
    "waiting_text_of",
]


class Schedule:
    """The games the record's schedule (``event_game``) gives one room of an event: an
    event's room the games of its rounds, a match of its own's room one game, the match (its
    event's room and game, written when it was created). How its plan is read, and where its
    moderator tokens are kept (the room's, valid in every match it plays)."""

    def __init__(self, event_id: int, room_id: str) -> None:
        self.event_id = event_id
        self.room_id = room_id

    def read(self, engine: Engine) -> EventPlan:
        return load_plan(engine, self.event_id)

    def moderator_hashes(self, engine: Engine) -> list[str]:
        return room_moderator_hashes(engine, self.event_id, self.room_id)

    def add_moderator_token(self, engine: Engine, digest: str) -> list[str]:
        return add_room_moderator_token(engine, self.event_id, self.room_id, digest)


def event_view(plan: EventPlan, room: ScheduledRoom, game: GamePlan) -> EventView | None:
    """What a room's clients are told of the event it plays in: its round of how many; none
    for a schedule of no rounds (a match of its own: one game, nothing before or after it)."""
    if not plan.rounds:
        return None
    return EventView(
        name=plan.name,
        title=plan.title,
        room=room.name,
        join_code=room.join_code,
        round=game.round,
        rounds=len(plan.rounds),
    )


def match_moderator_hashes(engine: Engine, match_id: int) -> list[str]:
    """The hashes of the moderator tokens valid for match ``match_id``: those of the room that
    played it, and any the record kept on the match itself (a match of its own of an older
    record, whose tokens were issued before it had a room)."""
    with Session(engine) as session:
        row = session.get(MatchRow, match_id)
        game = session.exec(select(EventGameRow).where(EventGameRow.match_id == match_id))
        found = game.first()
        room = (
            session.get(EventRoomRow, (found.event_id, found.room_id))
            if found is not None and found.room_id is not None
            else None
        )
    return [
        *(room.moderator_tokens or [] if room is not None else []),
        *(row.moderator_tokens or [] if row is not None else []),
    ]


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
    #: The title of that match (what a hello to the room is welcomed with).
    title: str = ""
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
