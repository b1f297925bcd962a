"""An event's standings as one server process computed them, kept in the record for every
other process of the event to read: one computation per change, whatever the number of
processes.

**Who computes.** The process that holds the event's standings claim: a ``player_claim``
row of the event under the reserved key :data:`LEAD` (no player id has it: a player's id is
made by :func:`grace_arena.record.store.register_player` from letters and digits), taken,
renewed and lost as a player's claim is (:mod:`grace_arena.record.claims`): renewed with the
leases; free once not renewed for ``ttl`` seconds or its holder known dead, then taken by
the next process that asks.

**What is kept.** The last snapshot published, under ``standings`` in the event's ``meta``
(``arena_event``): ``{"version": V, "views": {...}, "phases": [...]}``, written by one
``UPDATE`` that sets only that key (``json_set``; PostgreSQL's ``jsonb_set``), and only over a
snapshot of a version not above it: an organiser's change to the event's other settings is
never undone by it, and an older computation never replaces a newer one. The version is the
record's (:func:`grace_arena.record.schedule.standings_stamp`), so it keeps growing when
another process takes the computing over.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import Engine

from grace_arena.record import claims
from grace_arena.record.lease import Holder
from grace_arena.record.notices import notify

__all__ = ["KEY", "LEAD", "lead", "publish", "read", "read_version"]

#: The standings claim's key among the event's player claims.
LEAD = "~standings"
#: The key of the event's ``meta`` that holds the snapshot.
KEY = "standings"


def lead(engine: Engine, event_id: int, holder: Holder, *, ttl: float) -> bool:
    """Take (or keep) the computing of the event's standings for ``holder``: True when it
    is ``holder``'s now."""
    return claims.claim(engine, event_id, LEAD, holder, ttl=ttl) is None


def publish(engine: Engine, event_id: int, version: int, snapshot: dict[str, Any]) -> bool:
    """Keep ``snapshot`` (of ``version``) as the event's standings, unless one of a newer
    version is kept; True when it was kept."""
    doc = json.dumps({**snapshot, "version": version}, separators=(",", ":"))
    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            stmt = text(
                "UPDATE arena_event SET meta = jsonb_set(meta::jsonb, '{standings}', "
                "CAST(:doc AS jsonb))::json WHERE id = :id AND "
                "COALESCE((meta::jsonb -> 'standings' ->> 'version')::bigint, -1) <= :version"
            )
        else:
            stmt = text(
                "UPDATE arena_event SET meta = json_set(meta, '$.standings', json(:doc)) "
                "WHERE id = :id AND "
                "COALESCE(json_extract(meta, '$.standings.version'), -1) <= :version"
            )
        kept = conn.execute(stmt, {"doc": doc, "id": event_id, "version": version}).rowcount > 0
        if kept:  # the other processes of the event read it at once
            notify(conn, f"standings {event_id} {version}")
        return kept


def read_version(engine: Engine, event_id: int) -> int | None:
    """The version of the snapshot kept (None: none yet): one small read."""
    with engine.connect() as conn:
        if conn.dialect.name == "postgresql":
            stmt = text(
                "SELECT (meta::jsonb -> 'standings' ->> 'version')::bigint "
                "FROM arena_event WHERE id = :id"
            )
        else:
            stmt = text("SELECT json_extract(meta, '$.standings.version') FROM arena_event "
                        "WHERE id = :id")  # fmt: skip
        value = conn.execute(stmt, {"id": event_id}).scalar()
    return int(value) if value is not None else None


def read(engine: Engine, event_id: int) -> dict[str, Any] | None:
    """The snapshot kept (its ``version`` in it), or None."""
    with engine.connect() as conn:
        if conn.dialect.name == "postgresql":
            stmt = text("SELECT (meta::jsonb -> 'standings')::text FROM arena_event WHERE id = :id")
        else:
            stmt = text("SELECT json_extract(meta, '$.standings') FROM arena_event WHERE id = :id")
        value = conn.execute(stmt, {"id": event_id}).scalar()
    if value is None:
        return None
    return json.loads(value) if isinstance(value, str) else value
