"""The replay of one tossup of a match once it has ended: the page and its data, from the
record (read-only)."""

from __future__ import annotations

import asyncio
from typing import Annotated

import fastapi
from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import FileResponse

from grace_arena.protocol import MAX_MATCH_ID, ReplayView
from grace_arena.record.store import RecordError
from grace_arena.server import replays
from grace_arena.server.arena import CLIENT_DIR
from grace_arena.server.deps import (
    CONFLICT,
    NOT_FOUND,
    THROTTLED,
    ArenaDep,
    RoomsDep,
    guess,
    wrong_guess,
)
from grace_arena.server.views import ReplayRefused

__all__ = ["router"]

router = APIRouter()


@router.get("/replay", include_in_schema=False)
def replay_page() -> FileResponse:
    return FileResponse(CLIENT_DIR / "replay.html")


@router.get("/api/replay", responses=NOT_FOUND | CONFLICT | THROTTLED)
async def replay(
    request: Request,
    arena: ArenaDep,
    rooms: RoomsDep,
    match: Annotated[int, fastapi.Query(ge=1, le=MAX_MATCH_ID)],
    tossup: Annotated[int, fastapi.Query(ge=1, le=1000)],
    code: Annotated[str, fastapi.Query(min_length=1, max_length=32)],
) -> ReplayView:
    """One tossup of a match once it has ended, from the record (read-only): its text
    with every buzz, each model player's trajectory against its threshold, the rulings.
    ``code`` is the match's join code (what its room holds: match ids are counted, not
    secret). 409 while it is still being played (or, in an event, a room has yet to read
    it)."""
    address = guess(request, arena)
    try:
        return await asyncio.to_thread(replays.replay, rooms, match, tossup, code)
    except ReplayRefused as exc:
        if exc.wrong_code:
            wrong_guess(address, arena)  # a match and its code are guessed like codes
        raise HTTPException(status_code=exc.status, detail=str(exc)) from exc
    except RecordError as exc:
        raise HTTPException(status_code=404, detail=str(exc)) from exc
