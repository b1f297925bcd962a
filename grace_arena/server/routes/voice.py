"""The reader's voice: a tossup's audio, for the room's displays of a match read by the voice
(``grace_arena.server.voice``). Its URL holds the room's secret, which only the room's
displays are told (in their cues): the audio says the whole question before it is shown."""

from __future__ import annotations

import asyncio
import secrets
from typing import Annotated

import fastapi
from fastapi import APIRouter, HTTPException, Response

from grace_arena.protocol import MAX_MATCH_ID
from grace_arena.server import voice
from grace_arena.server.deps import NOT_FOUND, ArenaDep

__all__ = ["router"]

router = APIRouter()


@router.get("/voice/{match_id}/{key}/{index}.wav", responses=NOT_FOUND, include_in_schema=False)
async def tossup_audio(
    arena: ArenaDep,
    match_id: Annotated[int, fastapi.Path(ge=1, le=MAX_MATCH_ID)],
    key: Annotated[str, fastapi.Path(min_length=1, max_length=64)],
    index: Annotated[int, fastapi.Path(ge=0, le=1000)],
) -> Response:
    """The audio of the match's tossup ``index`` (WAV), as its displays' cues name it."""
    room = arena.rooms.get(match_id)
    if room is None or not secrets.compare_digest(key, room.voice_key):
        raise HTTPException(status_code=404, detail="no such voice here")
    tossups = room.match.config.tossups
    if index >= len(tossups):
        raise HTTPException(status_code=404, detail=f"the match has {len(tossups)} tossups")
    try:
        speech = await voice.speech_of(room, tossups[index].id)
    except OSError as exc:
        raise HTTPException(status_code=404, detail=str(exc)) from exc
    return Response(speech.wav, media_type="audio/wav", headers={"Cache-Control": "no-store"})


@router.get(
    "/voice/{match_id}/{key}/bonus/{index}/{part}.wav", responses=NOT_FOUND, include_in_schema=False
)
async def bonus_part_audio(
    arena: ArenaDep,
    match_id: Annotated[int, fastapi.Path(ge=1, le=MAX_MATCH_ID)],
    key: Annotated[str, fastapi.Path(min_length=1, max_length=64)],
    index: Annotated[int, fastapi.Path(ge=0, le=1000)],
    part: Annotated[int, fastapi.Path(ge=0, le=100)],
) -> Response:
    """The audio of part ``part`` of the match's bonus ``index`` (its lead-in first, for the
    first part), as its displays' cues name it."""
    room = arena.rooms.get(match_id)
    if room is None or not secrets.compare_digest(key, room.voice_key):
        raise HTTPException(status_code=404, detail="no such voice here")
    bonuses = room.match.config.bonuses
    if index >= len(bonuses) or part >= len(bonuses[index].parts):
        raise HTTPException(status_code=404, detail="no such bonus part in the match")
    words, guides = voice.bonus_part_words(bonuses[index], part)
    try:
        speech = await asyncio.to_thread(voice.speak, words, guides)
    except OSError as exc:
        raise HTTPException(status_code=404, detail=str(exc)) from exc
    return Response(speech.wav, media_type="audio/wav", headers={"Cache-Control": "no-store"})
