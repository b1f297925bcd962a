"""FastAPI dependencies and the documented error responses shared by the HTTP routes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import (
    Depends,
    Header,
    HTTPException,
    Request,
)
from fastapi.requests import HTTPConnection

from grace_arena.protocol import (
    ApiError,
)
from grace_arena.server.arena import Arena
from grace_arena.server.guard import http_connection
from grace_arena.server.rooms import Rooms
from grace_arena.server.sessions import Lobby

#: Error responses of the HTTP API, for its OpenAPI description.
UNAUTHORIZED: dict[int | str, dict[str, Any]] = {401: {"model": ApiError}}
NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"model": ApiError}}
#: Not yet: what is asked for is not over (409).
CONFLICT: dict[int | str, dict[str, Any]] = {409: {"model": ApiError}}
#: A body that is not JSON (400) or not a valid request (422).
BAD_BODY: dict[int | str, dict[str, Any]] = {400: {"model": ApiError}, 422: {"model": ApiError}}
#: Too many wrong codes or tokens from the address (grace_arena.server.guard).
THROTTLED: dict[int | str, dict[str, Any]] = {429: {"model": ApiError}}

# ---------------------------------------------------------------------------------------------
# Dependencies (module level: the route annotations are resolved in this module's namespace).


# What create_app puts in ``app.state``: the arena (live matches, the record, packets, tokens),
# the rooms (join codes, schedules, players) and the lobby (a websocket's way to its seat).


def get_arena(request: Request) -> Arena:
    return request.app.state.arena


def get_rooms(request: Request) -> Rooms:
    return request.app.state.rooms


def get_lobby(connection: HTTPConnection) -> Lobby:
    return connection.app.state.lobby


ArenaDep = Annotated[Arena, Depends(get_arena)]
RoomsDep = Annotated[Rooms, Depends(get_rooms)]
LobbyDep = Annotated[Lobby, Depends(get_lobby)]


def guess(request: Request, arena: Arena) -> str:
    """The address of a request that tries a code or a token; 429 while that address is held
    for guessing (its code or token is not even looked at)."""
    address = request.client.host if request.client else "?"
    wait = arena.guard.wait(address, connection=http_connection(address))
    if wait:
        raise HTTPException(
            status_code=429,
            detail=arena.guard.message(wait),
            headers={"Retry-After": str(max(1, round(wait)))},
        )
    return address


def wrong_guess(address: str, arena: Arena) -> None:
    """The code or token ``address`` gave opens nothing."""
    arena.guard.failed(address, connection=http_connection(address))


def require_token(
    which: Callable[[Rooms], str], needed: str
) -> Callable[[Request, Arena, Rooms, str | None], None]:
    """A dependency that lets a request through with the token ``which`` gives (the
    server's, the TD's); 401 saying ``needed`` otherwise, counted as a wrong guess."""

    def check(
        request: Request,
        arena: ArenaDep,
        rooms: RoomsDep,
        authorization: Annotated[str | None, Header()] = None,
    ) -> None:
        address = guess(request, arena)
        given = authorization.removeprefix("Bearer ").strip() if authorization else None
        if not rooms.tokens.check(given, which(rooms)):
            wrong_guess(address, arena)
            raise HTTPException(status_code=401, detail=needed)

    return check


require_server_token = require_token(
    lambda rooms: rooms.tokens.server(), "a valid server token is needed"
)


ServerAuth = Annotated[None, Depends(require_server_token)]
