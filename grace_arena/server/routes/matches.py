"""The server's health, what it offers for a match's set-up (packets, models) and its matches:
open one, list them, and a match's summary for the moderator's end-of-match screen."""

from __future__ import annotations

import asyncio
from typing import Annotated

import fastapi
from fastapi import APIRouter, Header, HTTPException, Request
from sqlmodel import Session, select

from grace_arena.protocol import (
    MAX_MATCH_ID,
    BuzzRecord,
    Health,
    MatchCreatedReply,
    MatchSetup,
    MatchSummary,
    PacketInfo,
    TossupInfo,
)
from grace_arena.record.models import MatchRow
from grace_arena.server import collector
from grace_arena.server.deps import (
    BAD_BODY,
    NOT_FOUND,
    THROTTLED,
    UNAUTHORIZED,
    ArenaDep,
    RoomsDep,
    ServerAuth,
    guess,
    wrong_guess,
)

__all__ = ["router"]

router = APIRouter()


@router.get("/api/health")
def health(arena: ArenaDep, events: RoomsDep) -> Health:
    took = sorted(arena.writer.synced_seconds)
    in_record = sorted(arena.writer.record_seconds)
    folds = sorted(events.standings_seconds)
    return Health(
        ok=True,
        matches=len(arena.rooms),
        connections=sum(arena.connections_from.values()),
        synced_commits=len(took),
        commit_p50_ms=_ms(took, 0.5),
        commit_p99_ms=_ms(took, 0.99),
        commit_record_p50_ms=_ms(in_record, 0.5),
        commit_record_p99_ms=_ms(in_record, 0.99),
        standings_computations=events.standings_computed,
        standings_p50_ms=_ms(folds, 0.5),
        standings_p99_ms=_ms(folds, 0.99),
        record_notices=events.listener.received if events.listener is not None else None,
        **_collector(),
    )


def _collector() -> dict[str, float | int | None]:
    """The collector's passes (``Health.gc_*``), where this process was set for serving."""
    if not collector.pauses.installed:
        return {}
    # (each deque copied in one call: a pass in another thread may append to it meanwhile,
    # and a Python-level walk over it would then fail)
    held = sorted(s for copy in map(list, collector.pauses.seconds.values()) for s in copy)
    return {
        "gc_full_passes": collector.pauses.counts[2],
        "gc_pause_p99_ms": _ms(held, 0.99) or 0.0,
        "gc_pause_max_ms": round(held[-1] * 1e3, 3) if held else 0.0,
    }


def _ms(took: list[float], q: float) -> float | None:
    """The ``q`` quantile of sorted seconds, in milliseconds (None: none)."""
    return round(took[min(len(took) - 1, round(q * (len(took) - 1)))] * 1e3, 3) if took else None


@router.get("/api/packets")
def packets(arena: ArenaDep) -> list[PacketInfo]:
    # Anyone on the network can ask: ids and categories for the set-up, never answers.
    return [
        PacketInfo(
            id=p.packet.id,
            title=p.packet.title,
            tossups=[TossupInfo(id=t.id, category=t.category) for t in p.tossups],
            file=p.path.name if p.path is not None else None,
        )
        for p in arena.packets.values()
    ]


@router.get("/api/models")
def models(arena: ArenaDep) -> list[str]:

    from grace_arena.record.models import ModelStepRow

    with Session(arena.engine) as session:
        return sorted(session.exec(select(ModelStepRow.model).distinct()).all())


@router.post(
    "/api/matches", status_code=201, responses=UNAUTHORIZED | NOT_FOUND | BAD_BODY | THROTTLED
)
async def create_match(
    setup: MatchSetup, arena: ArenaDep, rooms: RoomsDep, _: ServerAuth
) -> MatchCreatedReply:
    if rooms.served:
        raise HTTPException(
            status_code=404,
            detail=f"this server serves the rooms of event {arena.settings.event!r} only",
        )
    try:
        room = await rooms.open_match(setup)
    except LookupError as exc:  # no such packet loaded
        raise HTTPException(status_code=404, detail=str(exc)) from exc
    except ValueError as exc:
        raise HTTPException(status_code=422, detail=str(exc)) from exc
    reply = arena.created_reply(room, await rooms.match_moderator_token(room.rm.id))
    # a model team that would (almost) never buzz: the set-up says so, with what to do
    from grace_arena.model.readiness import match_warnings

    found = await asyncio.to_thread(match_warnings, arena.engine, room.rm.match.state.config)
    return reply.model_copy(update={"warnings": found})


@router.get("/api/matches", responses=UNAUTHORIZED | THROTTLED)
async def list_matches(arena: ArenaDep, rooms: RoomsDep, _: ServerAuth) -> list[MatchCreatedReply]:
    """The matches served here, each with its room's moderator token."""
    replies = []
    for room in list(arena.rooms.values()):
        try:
            token = await rooms.match_moderator_token(room.rm.id)
        except LookupError:  # its room moved on to its next match a moment ago
            continue
        reply = arena.created_reply(room, token)
        row = await asyncio.to_thread(arena.store.match_row, room.rm.id)
        replies.append(reply.model_copy(update={"created_at": row and row.created_at}))
    return replies


@router.get("/api/matches/{match_id}/summary", responses=UNAUTHORIZED | NOT_FOUND | THROTTLED)
async def match_summary(
    match_id: Annotated[int, fastapi.Path(ge=1, le=MAX_MATCH_ID)],
    request: Request,
    arena: ArenaDep,
    rooms: RoomsDep,
    authorization: Annotated[str | None, Header()] = None,
) -> MatchSummary:
    """Scores and every buzz from the record (for the moderator's end-of-match screen)."""
    address = guess(request, arena)
    given = authorization.removeprefix("Bearer ").strip() if authorization else None
    if not (
        rooms.tokens.check(given, rooms.tokens.server())
        or await rooms.is_moderator(match_id, given)
    ):
        wrong_guess(address, arena)
        raise HTTPException(status_code=401, detail="a server or moderator token is needed")

    def read() -> tuple[MatchRow | None, dict[str, int], list[BuzzRecord]]:
        with Session(arena.engine) as session:
            row = session.get(MatchRow, match_id)
            if row is not None and not rooms.serves_match(session, row):
                row = None  # (nothing is said of a match it does not speak of)
        if row is None:
            return None, {}, []
        room = arena.rooms.get(match_id)
        scores = (room.rm if room is not None else arena.store.open(match_id)).match.scores
        buzzes = [
            BuzzRecord(
                buzz_id=b.buzz_id,
                tossup_id=b.tossup_id,
                team=b.team_id,
                player=b.player_id,
                kind="model" if b.player_kind == "model" else "human",
                word_index=b.word_index,
                clue_index=b.clue_index,
                outcome=b.outcome,
                answer=b.answer,
                suggestion=b.suggestion,
                confidence=b.model_confidence,
                ruling=b.ruling,
                points=b.points,
                thrown_out=b.thrown_out,
                credit=b.credit,
            )
            for b in arena.store.buzzes(match_id)
        ]
        return row, dict(scores), buzzes

    row, scores, buzzes = await asyncio.to_thread(read)
    if row is None:
        raise HTTPException(status_code=404, detail=f"no match {match_id}")
    return MatchSummary(
        match_id=match_id,
        title=row.title,
        ended=row.ended_at is not None,
        scores=scores,
        buzzes=buzzes,
        record=arena.engine.url.render_as_string(hide_password=True),
    )
