"""An event served here: its standings (for the projector) and its rooms (for the moderator's
terminal), by the event's name."""

from __future__ import annotations

import asyncio
import contextlib
import difflib
from typing import Annotated

from fastapi import APIRouter, HTTPException, Query, Request, Response

from grace_arena.protocol import EventRoomInfo, StandingsView
from grace_arena.record.lease import LeaseHeld
from grace_arena.record.schedule import NoSuchPhase, load_plan
from grace_arena.record.store import RecordError
from grace_arena.server.arena import Arena
from grace_arena.server.deps import (
    NOT_FOUND,
    THROTTLED,
    UNAUTHORIZED,
    ArenaDep,
    RoomsDep,
    ServerAuth,
    guess,
    wrong_guess,
)
from grace_arena.server.rooms import Rooms

__all__ = ["router"]

router = APIRouter()


def served_event(
    events: Rooms, arena: Arena, name: str, address: str, *, trusted: bool = False
) -> int:
    """The id of the event served here with this name; 404 otherwise, saying nothing of
    the record's other events (a public URL must not enumerate them). ``trusted``: the caller
    holds the server token, and is told the names served here that come close."""
    event_id = events.served_event(name)
    if event_id is None:
        wrong_guess(address, arena)
        detail = "no such event is served here"
        if trusted:
            names = sorted(p.name for i, p in events.plans.items() if i in events.served)
            close = difflib.get_close_matches(name, names, n=2, cutoff=0.6)
            detail = f"no event {name!r} is served here" + (
                f" (did you mean {' or '.join(repr(c) for c in close)}?)"
                if close
                else f" (served: {', '.join(names)})"
                if names
                else ""
            )
        raise HTTPException(status_code=404, detail=detail)
    return event_id


#: The longest a request for newer standings waits for them (then it gets the latest).
STANDINGS_WAIT = 25.0


#: Seconds an encoded reply of an event's standings serves every request for the same
#: version (what each room plays now, in it, is that old at most): when a new version is
#: published, the hundreds of phones and projectors waiting for it get one encoding.
STANDINGS_REPLY_FRESH = 0.5


@router.get(
    "/api/events/{name}/standings",
    response_model=StandingsView,
    responses=NOT_FOUND | THROTTLED,
)
async def event_standings(
    name: str,
    request: Request,
    arena: ArenaDep,
    events: RoomsDep,
    after: Annotated[int | None, Query(ge=0, le=2**53)] = None,
    wait: Annotated[float, Query(ge=0, le=STANDINGS_WAIT)] = STANDINGS_WAIT,
    phase: Annotated[str | None, Query(max_length=200)] = None,
    pool: Annotated[str | None, Query(max_length=200)] = None,
) -> Response:
    """The event's standings after every ruling so far, and what each room plays now
    (nothing secret: the projector shows it), as last computed: a request computes nothing.
    ``after``: the version the client shows; the reply waits (up to ``wait`` seconds, 25 at
    most) for newer standings. What each room plays now is as this process knows it at the
    reply (its live rooms, from memory). With ``phase`` (and ``pool``), that phase's
    standings, pool by pool, from the same snapshot (computed with it, once). Only for an
    event this server serves, by its name."""
    event_id = served_event(events, arena, name, guess(request, arena))
    try:
        snapshot = await events.standings_snapshot(event_id, after=after, wait=wait)
        key = (event_id, snapshot.version, phase, pool)
        now = asyncio.get_running_loop().time()
        kept = events.standings_replies.get(key)
        if kept is not None and now - kept[0] < STANDINGS_REPLY_FRESH:
            return Response(content=kept[1], media_type="application/json")
        view = snapshot.view
        if phase is not None or pool is not None:
            view = events.scoped_standings(event_id, snapshot, phase, pool)
    except NoSuchPhase as exc:  # (the event's phases are no secret: the projector shows them)
        raise HTTPException(status_code=404, detail=str(exc)) from exc
    except RecordError as exc:
        raise HTTPException(status_code=404, detail="no such event is served here") from exc
    # (what each room plays now as this process knows it: the plan its standings were
    # computed with here, or, where another process computes them, its own latest read)
    plan = events.standings_plans.get(event_id) or events.plans.get(event_id)
    rooms = [
        r.model_copy(
            update={
                "join_url": arena.join_url(r.join_code),
                "waiting": events.waiting_text(r.join_code),
            }
        )
        for r in (events.room_status(plan) if plan is not None else view.rooms)
    ]
    data = view.model_copy(update={"rooms": rooms}).model_dump_json().encode()
    replies = events.standings_replies
    for old in [k for k in replies if k[0] == event_id and k[1] != snapshot.version]:
        del replies[old]  # (an older version's: nobody is given it again)
    if len(replies) >= 256:  # (phases and pools of many events: the oldest go)
        del replies[next(iter(replies))]
    replies[key] = (now, data)
    return Response(content=data, media_type="application/json")


@router.get("/api/events/{name}/rooms", responses=UNAUTHORIZED | NOT_FOUND | THROTTLED)
async def event_rooms(
    name: str, request: Request, arena: ArenaDep, events: RoomsDep, _: ServerAuth
) -> list[EventRoomInfo]:
    """The event's rooms with their join codes and moderator tokens (server token): what
    the moderator's terminal offers to pick from. A room no process serves now is opened
    here."""
    event_id = served_event(events, arena, name, guess(request, arena), trusted=True)
    try:
        plan = await asyncio.to_thread(load_plan, arena.engine, event_id)
    except RecordError as exc:
        raise HTTPException(status_code=404, detail="no such event is served here") from exc
    out = []
    names = {t.id: t.name for t in plan.teams}
    for r in plan.rooms:
        with contextlib.suppress(LeaseHeld):
            await events.room_by_code(r.join_code)
        sr = events.rooms.get(r.join_code)
        live = events.live(sr) if sr is not None else None
        game = plan.current_game(r.id)
        out.append(
            EventRoomInfo(
                room=r.name,
                join_code=r.join_code,
                join_url=arena.join_url(r.join_code),
                moderator_token=await events.moderator_token(sr) if sr is not None else "",
                round=game.round if game else None,
                match_id=live.rm.id if live is not None else game.match_id if game else None,
                teams=[names.get(t, t) for t in game.teams] if game else [],
                served_here=live is not None,
                display_url=(
                    f"{arena.settings.public_url.rstrip('/')}/display?code={r.join_code}"
                    f"&token={events.tokens.display(event_id, r.id)}"
                ),
            )
        )
    return out
