"""A match's printable scoresheet (:mod:`grace_arena.io.scoresheet`), from the record, for
whoever holds the match's join code: blank before its first tossup, filled in as it is
played, final once it has ended. The page is laid out for the browser's print."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any, Literal

import fastapi
from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, Response

from grace_arena.core.formats import describe
from grace_arena.io.scoresheet import Scoresheet, render_html, render_pdf, scoresheet
from grace_arena.protocol import MAX_MATCH_ID
from grace_arena.server.arena import Arena
from grace_arena.server.deps import ArenaDep, RoomsDep, guess, wrong_guess
from grace_arena.server.replays import opened_by_code
from grace_arena.server.rooms import Rooms

__all__ = ["router"]

router = APIRouter()

#: The page's refusals are JSON, as every route's (documented as such: a route's own media
#: type, HTML here, would otherwise be given to them too).
_REFUSALS: dict[int | str, dict[str, Any]] = {
    code: {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ApiError"}}},
    }
    for code, description in (
        (404, "No match here with that join code"),
        (429, "Too many wrong codes or tokens from the address"),
    )
}


class _Unknown(LookupError):
    """No match here with that join code."""


def _sheet(rooms: Rooms, match_id: int, code: str) -> Scoresheet:
    if opened_by_code(rooms, match_id, code) is None:
        raise _Unknown(f"no match {match_id} here with that join code")
    events = rooms.arena.store.events(match_id)
    try:
        return scoresheet(match_id, events, describe_rules=lambda c: describe(c.rules))
    except ValueError as exc:
        raise _Unknown(str(exc)) from exc


async def _served_sheet(
    request: Request, arena: Arena, rooms: Rooms, match: int, code: str
) -> Scoresheet:
    """The sheet of the match ``code`` opens; 404 otherwise, counted as a wrong guess."""
    address = guess(request, arena)
    try:
        return await asyncio.to_thread(_sheet, rooms, match, code)
    except _Unknown as exc:
        wrong_guess(address, arena)
        raise HTTPException(status_code=404, detail=str(exc)) from exc


@router.get("/scoresheet", response_class=HTMLResponse, responses=_REFUSALS)
async def scoresheet_page(
    request: Request,
    arena: ArenaDep,
    rooms: RoomsDep,
    match: Annotated[int, fastapi.Query(ge=1, le=MAX_MATCH_ID)],
    code: Annotated[str, fastapi.Query(min_length=1, max_length=32)],
) -> HTMLResponse:
    """The match's scoresheet as a page to print (cycles as rows, players as columns, bonus
    parts, running totals, what the record notes of each cycle). ``code`` is the match's
    join code (match ids are counted, not secret)."""
    sheet = await _served_sheet(request, arena, rooms, match, code)
    return HTMLResponse(render_html(sheet))


@router.get(
    "/scoresheet.pdf",
    response_class=Response,
    responses=_REFUSALS | {200: {"content": {"application/pdf": {}}}},
)
async def scoresheet_pdf(
    request: Request,
    arena: ArenaDep,
    rooms: RoomsDep,
    match: Annotated[int, fastapi.Query(ge=1, le=MAX_MATCH_ID)],
    code: Annotated[str, fastapi.Query(min_length=1, max_length=32)],
    paper: Annotated[Literal["A4", "Letter"], fastapi.Query()] = "A4",
) -> Response:
    """The match's scoresheet as a PDF of A4 or Letter (made on the server, no browser)."""
    sheet = await _served_sheet(request, arena, rooms, match, code)
    data = await asyncio.to_thread(render_pdf, sheet, paper=paper)
    headers = {"Content-Disposition": f'inline; filename="scoresheet-match-{match}.pdf"'}
    return Response(data, media_type="application/pdf", headers=headers)
