"""The server processes that share the record, while they run (``server_process`` rows).

Each server process says where it serves and which events when it starts, renews its row
with its leases, and deletes it when it stops cleanly; a row not renewed for ``ttl`` seconds
(by the database's clock, as leases) is a process that died. A server tells its clients the
others that serve their event, so that a phone whose server crashed says ``hello`` to one of
them, which takes the match over.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Table, delete, select, update
from sqlalchemy.engine import Engine

from grace_arena.record.lease import db_now, dialect_insert
from grace_arena.record.models import ServerProcessRow

_SERVERS: Table = ServerProcessRow.__table__  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Peer:
    holder: str
    url: str
    events: tuple[int, ...]


def register(engine: Engine, holder: str, url: str | None, events: Sequence[int]) -> None:
    """This process serves at ``url`` (the rooms of ``events``, if any)."""
    with engine.begin() as conn:
        now = db_now(conn.dialect.name)
        values = {"url": url, "events": list(events), "renewed_at": now}
        conn.execute(
            dialect_insert(conn.dialect.name)(_SERVERS)
            .values(holder=holder, started_at=now, **values)
            .on_conflict_do_update(index_elements=["holder"], set_=values)
        )


def heartbeat(engine: Engine, holder: str, *, ttl: float) -> list[Peer]:
    """Renew this process's row; the other live processes, oldest first."""
    with engine.begin() as conn:
        now = db_now(conn.dialect.name)
        conn.execute(update(_SERVERS).where(_SERVERS.c.holder == holder).values(renewed_at=now))
        rows = conn.execute(
            select(_SERVERS.c.holder, _SERVERS.c.url, _SERVERS.c.events)
            .where(
                _SERVERS.c.holder != holder,
                _SERVERS.c.url.is_not(None),
                _SERVERS.c.renewed_at >= now - ttl,
            )
            .order_by(_SERVERS.c.started_at, _SERVERS.c.holder)
        ).all()
    return [Peer(h, u, tuple(int(e) for e in (events or []))) for h, u, events in rows]


def unregister(engine: Engine, holder: str) -> None:
    with engine.begin() as conn:
        conn.execute(delete(_SERVERS).where(_SERVERS.c.holder == holder))


@dataclass(frozen=True)
class Routes:
    """Where each room of the record is served now, as a reverse proxy in front of the
    processes routes it: the live processes (holder -> the address it serves at), and each
    room's join code -> the live process whose lease serves the room's current match. A room
    whose match no live process holds (not opened yet, or its process died) is in neither:
    the proxy sends it to any live process, which opens it or takes it over."""

    servers: dict[str, str]
    rooms: dict[str, str]


def routes(engine: Engine, *, ttl: float, events: Sequence[int] = ()) -> Routes:
    """The record's :class:`Routes` now (``ttl``: the leases' time to live, after which a
    process not renewed is dead); only the processes serving one of ``events``, if given."""
    from grace_arena.record.models import MatchLeaseRow, MatchRow

    leases: Table = MatchLeaseRow.__table__  # type: ignore[attr-defined]
    matches: Table = MatchRow.__table__  # type: ignore[attr-defined]
    with engine.begin() as conn:
        now = db_now(conn.dialect.name)
        live = conn.execute(
            select(_SERVERS.c.holder, _SERVERS.c.url, _SERVERS.c.events)
            .where(_SERVERS.c.url.is_not(None), _SERVERS.c.renewed_at >= now - ttl)
            .order_by(_SERVERS.c.started_at, _SERVERS.c.holder)
        ).all()
        held = conn.execute(
            select(matches.c.join_code, leases.c.holder)
            .join(leases, leases.c.match_id == matches.c.id)
            .where(
                leases.c.released.is_(False),
                matches.c.ended_at.is_(None),
                matches.c.join_code.is_not(None),
            )
            .order_by(matches.c.id)
        ).all()
    wanted = set(events)
    servers = {
        holder: url
        for holder, url, served in live
        if not wanted or wanted & {int(e) for e in (served or [])}
    }
    # (a room's later match wins over an earlier one not closed: the order is the matches')
    rooms = {code.upper(): holder for code, holder in held if holder in servers}
    return Routes(servers, rooms)
