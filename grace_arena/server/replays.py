"""The replay of one tossup of a match once it has ended, read from the record for whoever
holds the match's join code: what the server speaks of is the rooms layer's one policy
(:meth:`Rooms.serves_match`), and a tossup is replayed only once no room has it yet to
read (:func:`grace_arena.server.spoilers.yet_to_read`, the rule a room's display follows
too)."""

from __future__ import annotations

from sqlmodel import Session

from grace_arena.core.config import MatchConfig
from grace_arena.protocol import ReplayView
from grace_arena.record.models import MatchRow
from grace_arena.server.rooms import Rooms
from grace_arena.server.spoilers import yet_to_read
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
    where = yet_to_read(
        rooms.engine,
        rooms.arena.rooms.values(),
        row.event_id,
        match_id,
        config.packet_id,
        [tossup_id],
    )
    if where is not None:
        raise ReplayRefused(
            409,
            f"tossup {number} is yet to be read in {where}: its replay opens once "
            + (
                "that match has read it"
                if where.startswith("another")
                else "every room has read it"
            ),
        )
    return view
