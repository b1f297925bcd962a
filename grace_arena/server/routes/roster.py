"""The roster of an event served here, for its organiser (the server's token) and its TD (the
TD's token): its players, a new claim code for one of them (how the organiser lets a player
take a name of the roster on a phone: the code is shown to the organiser, who hands it over),
and the removal of a player (its phones here closed, its token void, its name free)."""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Depends, Header, HTTPException, Request
from pydantic import BaseModel
from sqlmodel import Session, select

from grace_arena.record.models import EventPlayerRow
from grace_arena.record.roster import ORGANISER, issue_codes
from grace_arena.record.store import RecordError
from grace_arena.server.deps import (
    NOT_FOUND,
    THROTTLED,
    UNAUTHORIZED,
    ArenaDep,
    RoomsDep,
    guess,
    wrong_guess,
)
from grace_arena.server.routes.events import served_event

__all__ = ["router"]

router = APIRouter()


def organiser_or_td(
    request: Request,
    arena: ArenaDep,
    rooms: RoomsDep,
    authorization: Annotated[str | None, Header()] = None,
) -> None:
    """The server's token (the organiser's) or the TD's; 401 otherwise, counted as a wrong
    guess."""
    address = guess(request, arena)
    given = authorization.removeprefix("Bearer ").strip() if authorization else None
    tokens = rooms.tokens
    if not (tokens.check(given, tokens.server()) or tokens.check(given, tokens.td())):
        wrong_guess(address, arena)
        raise HTTPException(
            status_code=401, detail="the organiser's (server) token or the TD's is needed"
        )


OrganiserAuth = Annotated[None, Depends(organiser_or_td)]


class RosterPlayer(BaseModel):
    """A player of an event: on the roster (``registered``) or a walk-in, removed or not."""

    id: str
    team: str
    name: str
    registered: bool
    has_code: bool
    removed: bool


class ClaimCode(BaseModel):
    """A new claim code for a player of the roster: the old one no longer takes the name."""

    id: str
    team: str
    name: str
    code: str


@router.get("/api/events/{name}/players", responses=UNAUTHORIZED | NOT_FOUND | THROTTLED)
async def players(
    name: str, request: Request, arena: ArenaDep, rooms: RoomsDep, _: OrganiserAuth
) -> list[RosterPlayer]:
    """The event's human players, the removed ones too."""
    event_id = served_event(rooms, arena, name, guess(request, arena), trusted=True)

    def read() -> list[EventPlayerRow]:
        with Session(arena.engine) as session:
            return list(
                session.exec(
                    select(EventPlayerRow).where(
                        EventPlayerRow.event_id == event_id, EventPlayerRow.kind == "human"
                    )
                )
            )

    rows = await asyncio.to_thread(read)
    return [
        RosterPlayer(
            id=r.player_id, team=r.team_id, name=r.name,
            registered=r.registered_by == ORGANISER, has_code=r.claim_sha256 is not None,
            removed=r.removed_at is not None,
        )
        for r in sorted(rows, key=lambda r: (r.team_id, r.name_key))
    ]  # fmt: skip


@router.post(
    "/api/events/{name}/players/{player_id}/code", responses=UNAUTHORIZED | NOT_FOUND | THROTTLED
)
async def new_code(
    name: str, player_id: str, request: Request, arena: ArenaDep, rooms: RoomsDep,
    _: OrganiserAuth,
) -> ClaimCode:  # fmt: skip
    """A new claim code for the player (a walk-in is taken on the roster with it): the
    organiser's or the TD's approval of who may take that name, handed over in person."""
    event_id = served_event(rooms, arena, name, guess(request, arena), trusted=True)
    try:
        (issued,) = await asyncio.to_thread(issue_codes, arena.engine, event_id, [player_id])
    except RecordError as exc:
        raise HTTPException(status_code=404, detail=str(exc)) from exc
    plan = await rooms._read(event_id)
    rooms._remember(plan)
    return ClaimCode(id=issued.player_id, team=issued.team, name=issued.name, code=issued.code)


@router.delete(
    "/api/events/{name}/players/{player_id}", responses=UNAUTHORIZED | NOT_FOUND | THROTTLED
)
async def remove(
    name: str, player_id: str, request: Request, arena: ArenaDep, rooms: RoomsDep,
    _: OrganiserAuth,
) -> RosterPlayer:  # fmt: skip
    """Remove the player from the event: its phones here are closed, its token opens nothing,
    its name is free again; the matches it played keep it."""
    event_id = served_event(rooms, arena, name, guess(request, arena), trusted=True)
    try:
        row = await rooms.remove_player(event_id, player_id)
    except RecordError as exc:
        raise HTTPException(status_code=404, detail=str(exc)) from exc
    return RosterPlayer(
        id=row.player_id, team=row.team_id, name=row.name,
        registered=row.registered_by == ORGANISER, has_code=False, removed=True,
    )  # fmt: skip
