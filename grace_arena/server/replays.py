"""The replay of one tossup of a match once it has ended, read from the record for whoever
holds the match's join code: what the server speaks of is the rooms layer's one policy
(:meth:`Rooms.serves_match`), and a tossup is replayed only once no room has it yet to
read."""

from __future__ import annotations

from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from grace_arena.core.config import MatchConfig
from grace_arena.core.phases import Phase
from grace_arena.protocol import ReplayView
from grace_arena.record.models import EventGameRow, EventRow, MatchRow
from grace_arena.server.rooms import Rooms
from grace_arena.server.tokens import same_secret
from grace_arena.server.views import ReplayRefused, replay_view

__all__ = ["opened_by_code", "replay"]


def opened_by_code(rooms: Rooms, match_id: int, code: str) -> MatchRow | None:
    """Match ``match_id``'s row when ``code`` is its join code and this server speaks of it
    (:meth:`Rooms.serves_match`), else None: what opens its replay and its scoresheet (a
    worker thread's work)."""
    with Session(rooms.engine) as session:
        row = session.get(MatchRow, match_id)
        spoken = row is not None and rooms.serves_match(session, row)
    if (
        row is None
        or not spoken
        or row.join_code is None
        or not same_secret(row.join_code.upper(), code.strip().upper())
    ):
        return None
    return row


def replay(rooms: Rooms, match_id: int, number: int, code: str) -> ReplayView:
    """Tossup ``number`` of match ``match_id`` as the record holds it (a worker thread's
    work), for the holder of the match's join ``code``. Refused (:class:`ReplayRefused`)
    for a wrong code, a match this server does not speak of (:meth:`Rooms.serves_match`),
    a tossup that is not over, and a tossup that a room of the match's event, or another
    match played here, has yet to read (its text and answer would reach the room before its
    moderator reads it)."""
    unknown = ReplayRefused(404, f"no match {match_id} here with that join code", wrong_code=True)
    row = opened_by_code(rooms, match_id, code)
    if row is None:
        raise unknown
    events = rooms.arena.store.events(match_id)
    created = next((ev for ev in events if ev.type == "match_created"), None)
    if created is None:
        raise unknown
    config: MatchConfig = created.config  # type: ignore[attr-defined]
    tossups = rooms.arena.tokenized(config.packet_id)
    words = {tid: [w.text for w in t.words] for tid, t in tossups.items()}
    view = replay_view(match_id, events, number, words, rooms.arena.trajectories(config))
    started = [ev for ev in events if ev.type == "tossup_started"]
    tossup_id = started[number - 1].tossup_id  # type: ignore[attr-defined]
    room = _yet_to_read(rooms.engine, row.event_id, match_id, config.packet_id, tossup_id)
    if room is not None:
        raise ReplayRefused(
            409,
            f"tossup {number} is yet to be read in {room} of this event: its replay "
            "opens once every room has read it",
        )
    for other in list(rooms.arena.rooms.values()):
        # another match played here now on the same packet, that has not read it
        game_ = other.match.game
        if (
            other.rm.id != match_id
            and other.match.config.packet_id == config.packet_id
            and other.match.config.tossup(tossup_id) is not None
            and tossup_id not in game_.outcomes
            and game_.phase is not Phase.ENDED
        ):
            raise ReplayRefused(
                409,
                f"tossup {number} is yet to be read in another match played here (match "
                f"{other.rm.id}): its replay opens once that match has read it",
            )
    return view


def _yet_to_read(
    engine: Engine, event_id: int | None, match_id: int, packet_id: str | None, tossup_id: str
) -> str | None:
    """The name of a room of the event whose match (not ``match_id``) reads that tossup of
    that packet and has not ended it yet, or None."""
    from grace_arena.record.models import EventRoomRow, EventRoundRow

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
        if rnd.tossup_ids is not None and tossup_id not in rnd.tossup_ids:
            continue
        if other.match_id is not None and (
            other.match_id in ended or _has_ended(engine, other.match_id, tossup_id)
        ):
            continue
        name = rooms.get(other.room_id, other.room_id)
        return f"room {name}" if name.isdigit() else name
    return None


def _has_ended(engine: Engine, match_id: int, tossup_id: str) -> bool:
    """Whether match ``match_id`` has ended that tossup, as the record holds it: read from
    its endings and undone rulings only (a match's whole log is thousands of events), the
    last of them for the tossup saying (undoing the ruling that ended it reopens it)."""
    with Session(engine) as session:
        rows = session.exec(
            select(EventRow.type, EventRow.payload)
            .where(
                EventRow.match_id == match_id,
                EventRow.type.in_(("tossup_ended", "ruling_undone")),  # type: ignore[attr-defined]
            )
            .order_by(EventRow.seq)  # type: ignore[arg-type]
        ).all()
    ended = False
    for kind, payload in rows:
        if payload.get("tossup_id") == tossup_id:
            ended = kind == "tossup_ended"
    return ended
