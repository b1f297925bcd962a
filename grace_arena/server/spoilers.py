"""Who may see what a room reads: the one rule for every role and every door. What a match
reads (its tossups' text and answers) reaches nobody but the match's own room while another
room of its event, or another match played here, has it yet to read. A replay of a tossup
(``replays.py``) and a room's display without the room's or the organiser's grant
(``Rooms.admit``) both ask :func:`yet_to_read`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from grace_arena.core.phases import Phase
from grace_arena.record.models import EventGameRow, EventRoomRow, EventRoundRow, EventRow, MatchRow

__all__ = ["yet_to_read"]


def yet_to_read(
    engine: Engine,
    live: Iterable[Any],
    event_id: int | None,
    match_id: int,
    packet_id: str | None,
    tossup_ids: Iterable[str],
) -> str | None:
    """Where one of ``tossup_ids`` of ``packet_id`` is yet to be read by another match than
    ``match_id``, in words ("room 2 of this event", "another match played here (match 7)"), or
    None when no other room has any of them to read: a room of event ``event_id`` whose match
    reads it and has not ended it (as the record holds it), or another match served here now
    (``live``: the arena's rooms) that reads it and has not ended it (a worker thread's
    work)."""
    wanted = set(tossup_ids)
    room = _room_yet_to_read(engine, event_id, match_id, packet_id, wanted)
    if room is not None:
        return f"{room} of this event"
    for other in list(live):
        game = other.match.game
        if (
            other.rm.id != match_id
            and other.match.config.packet_id == packet_id
            and game.phase is not Phase.ENDED
            and any(
                other.match.config.tossup(t) is not None and t not in game.outcomes for t in wanted
            )
        ):
            return f"another match played here (match {other.rm.id})"
    return None


def _room_yet_to_read(
    engine: Engine, event_id: int | None, match_id: int, packet_id: str | None, wanted: set[str]
) -> str | None:
    """The name of a room of the event whose match (not ``match_id``) reads one of the
    ``wanted`` tossups of that packet and has not ended it yet, or None."""
    if event_id is None or not wanted:
        return None
    with Session(engine) as session:
        rounds = {
            r.number: r
            for r in session.exec(
                select(EventRoundRow).where(EventRoundRow.event_id == event_id)
            ).all()
        }
        rooms = {
            r.room_id: r.name
            for r in session.exec(
                select(EventRoomRow).where(EventRoomRow.event_id == event_id)
            ).all()
        }
        games = session.exec(select(EventGameRow).where(EventGameRow.event_id == event_id))
        others = [g for g in games.all() if g.match_id != match_id]
        ended = {
            m.id
            for m in session.exec(
                select(MatchRow).where(
                    MatchRow.event_id == event_id,
                    MatchRow.ended_at.is_not(None),  # type: ignore[union-attr]
                )
            ).all()
        }
    for other in others:
        rnd = rounds.get(other.round)
        if other.room_id is None or rnd is None or rnd.packet_id != packet_id:
            continue
        reads = wanted if rnd.tossup_ids is None else wanted & set(rnd.tossup_ids)
        if not reads:
            continue
        if other.match_id is not None and (
            other.match_id in ended or reads <= _ended_tossups(engine, other.match_id)
        ):
            continue
        name = rooms.get(other.room_id, other.room_id)
        return f"room {name}" if name.isdigit() else name
    return None


def _ended_tossups(engine: Engine, match_id: int) -> set[str]:
    """The tossups match ``match_id`` has ended, as the record holds it: read from its endings
    and undone rulings only (a match's whole log is thousands of events), the last of them for
    a tossup saying (undoing the ruling that ended it reopens it)."""
    with Session(engine) as session:
        rows = session.exec(
            select(EventRow.type, EventRow.payload)
            .where(
                EventRow.match_id == match_id,
                EventRow.type.in_(("tossup_ended", "ruling_undone")),  # type: ignore[attr-defined]
            )
            .order_by(EventRow.seq)  # type: ignore[arg-type]
        ).all()
    ended: set[str] = set()
    for kind, payload in rows:
        tossup = payload.get("tossup_id")
        if tossup is None:
            continue
        if kind == "tossup_ended":
            ended.add(tossup)
        else:
            ended.discard(tossup)
    return ended
