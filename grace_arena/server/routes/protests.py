"""The TD's routes: the protests of a match this server serves, with what upholding each
would do to the result, and their resolution (upheld or denied, by whom and why), with the
TD's token (``grace-arena serve`` prints it). A match no server serves is resolved from the
record (``grace-arena protest``)."""

from __future__ import annotations

from typing import Annotated, Literal

import fastapi
from fastapi import APIRouter, Depends, HTTPException
from pydantic import BaseModel, ConfigDict, Field

from grace_arena.core.commands import ResolveProtest
from grace_arena.core.errors import IllegalCommand
from grace_arena.protocol import MAX_MATCH_ID, ProtestView, Text
from grace_arena.server.arena import Arena
from grace_arena.server.deps import (
    BAD_BODY,
    CONFLICT,
    NOT_FOUND,
    THROTTLED,
    UNAUTHORIZED,
    ArenaDep,
    require_token,
)
from grace_arena.server.pipeline import RoomClosed
from grace_arena.server.protests import officiating_view
from grace_arena.server.room import Room

__all__ = ["router"]

router = APIRouter()


class Resolution(BaseModel):
    """A TD's decision on a protest."""

    model_config = ConfigDict(extra="forbid")
    decision: Literal["upheld", "denied"]
    by: Text = Field(min_length=1, max_length=100)  # who decides (the TD's name)
    reason: Text = Field(default="", max_length=500)


TDAuth = Annotated[
    None, Depends(require_token(lambda rooms: rooms.tokens.td(), "the TD's token is needed"))
]
MatchId = Annotated[int, fastapi.Path(ge=1, le=MAX_MATCH_ID)]


def served(arena: Arena, match_id: int) -> Room:
    room = arena.rooms.get(match_id)
    if room is None:
        raise HTTPException(
            status_code=404,
            detail=f"match {match_id} is not served here: resolve its protests from the "
            "record (grace-arena protest)",
        )
    return room


@router.get("/api/matches/{match_id}/protests", responses=UNAUTHORIZED | NOT_FOUND | THROTTLED)
def protests(match_id: MatchId, arena: ArenaDep, _: TDAuth) -> list[ProtestView]:
    """The match's protests, open and resolved, with what upholding each open one would do."""
    return officiating_view(served(arena, match_id).match).protests


@router.post(
    "/api/matches/{match_id}/protests/{protest}",
    responses=UNAUTHORIZED | NOT_FOUND | CONFLICT | BAD_BODY | THROTTLED,
)
async def resolve(
    match_id: MatchId,
    protest: Annotated[int, fastapi.Path(ge=1)],
    resolution: Resolution,
    arena: ArenaDep,
    _: TDAuth,
) -> ProtestView:
    """Resolve a protest: upheld reverses the ruling protested (every screen, the standings
    and the exports follow), denied keeps it; 409 says why it cannot be (already resolved, a
    tossup being played)."""
    room = served(arena, match_id)
    command = ResolveProtest(protest=protest, decision=resolution.decision, by=resolution.by,
                             reason=resolution.reason)  # fmt: skip
    try:
        await room.submit(command)
    except IllegalCommand as exc:
        raise HTTPException(status_code=409, detail=str(exc)) from None
    except RoomClosed as exc:  # the match stopped being served meanwhile
        raise HTTPException(status_code=404, detail=f"not taken: {exc}") from None
    view = officiating_view(room.match)
    return next(p for p in view.protests if p.number == protest)
