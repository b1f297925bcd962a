"""FastAPI dependencies and the documented error responses shared by the HTTP routes."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import (
    Depends,
    Header,
    HTTPException,
    Request,
)

from grace_arena.protocol import (
    ApiError,
)
from grace_arena.server.arena import Arena

#: Error responses of the HTTP API, for its OpenAPI description.
UNAUTHORIZED: dict[int | str, dict[str, Any]] = {401: {"model": ApiError}}
NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"model": ApiError}}
#: A body that is not JSON (400) or not a valid request (422).
BAD_BODY: dict[int | str, dict[str, Any]] = {400: {"model": ApiError}, 422: {"model": ApiError}}

# ---------------------------------------------------------------------------------------------
# Dependencies (module level: the route annotations are resolved in this module's namespace).


def get_arena(request: Request) -> Arena:
    return request.app.state.arena


ArenaDep = Annotated[Arena, Depends(get_arena)]


def require_server_token(
    arena: ArenaDep, authorization: Annotated[str | None, Header()] = None
) -> None:
    given = authorization.removeprefix("Bearer ").strip() if authorization else None
    if not arena.tokens.check(given, arena.tokens.server()):
        raise HTTPException(status_code=401, detail="a valid server token is needed")


ServerAuth = Annotated[None, Depends(require_server_token)]
