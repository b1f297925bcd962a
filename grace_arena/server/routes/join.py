"""How a phone finds a live match by its join code (the match, its URL, its QR code) and the
websocket it then plays over."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request, WebSocket
from fastapi.responses import Response

from grace_arena.protocol import JoinInfo
from grace_arena.server.deps import (
    NOT_FOUND,
    THROTTLED,
    ArenaDep,
    LobbyDep,
    RoomsDep,
    guess,
    wrong_guess,
)
from grace_arena.server.ws import serve_websocket

__all__ = ["router"]

router = APIRouter()


@router.get("/api/join/{code}", responses=NOT_FOUND | THROTTLED)
def join_info(code: str, request: Request, arena: ArenaDep, rooms: RoomsDep) -> JoinInfo:
    address = guess(request, arena)
    room = rooms.live_in(code)
    if room is None:
        wrong_guess(address, arena)
        raise HTTPException(status_code=404, detail="no live match with that join code here")
    return JoinInfo(
        match_id=room.rm.id,
        title=room.match.config.title,
        join_code=room.join_code,
        join_url=arena.join_url(room.join_code),
    )


@router.get("/api/join/{code}/qr.svg", include_in_schema=False)
def join_qr(code: str, request: Request, arena: ArenaDep, rooms: RoomsDep) -> Response:
    import io

    import segno

    address = guess(request, arena)
    if rooms.live_in(code) is None:
        wrong_guess(address, arena)
        raise HTTPException(status_code=404, detail="no live match with that join code here")
    out = io.BytesIO()
    segno.make(arena.join_url(code.upper()), error="m").save(out, kind="svg", scale=8)
    return Response(out.getvalue(), media_type="image/svg+xml")


@router.websocket("/ws")
async def websocket(ws: WebSocket, lobby: LobbyDep) -> None:
    await serve_websocket(lobby, ws)
