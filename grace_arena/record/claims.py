"""Which server process has a player of an event in play: a token or a name is one device's
at a time, on every process that shares the record (``player_claim`` rows).

A process claims a player when a connection of its takes them (a token's hello, a join),
renews the claims of the players it has in play with its leases, and lets a claim go when the
player's last connection there closes. Another process's claim holds while it is renewed
within ``ttl`` seconds (by the database's clock, as leases are) and its holder is not known to
be dead (:func:`grace_arena.record.lease.known_dead`); then it is free to take. Taking is one
statement (an insert, or an update of a claim that is ours or free), so two processes taking
one player at once cannot both have it.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import Table, and_, delete, or_, select, tuple_, update
from sqlalchemy.engine import Engine

from grace_arena.record.lease import Holder, db_now, dialect_insert, known_dead
from grace_arena.record.models import PlayerClaimRow

__all__ = ["claim", "release", "renew"]

_CLAIMS: Table = PlayerClaimRow.__table__  # type: ignore[attr-defined]


def claim(
    engine: Engine, event_id: int, player_id: str, holder: Holder, *, ttl: float
) -> str | None:
    """Take the player for ``holder``; None when it is ours now, else the URL (or the
    description) of the live process that has them in play."""
    values = {"holder": holder.id, "url": holder.url, "proc": holder.proc}
    with engine.begin() as conn:
        now = db_now(conn.dialect.name)
        stmt = dialect_insert(conn.dialect.name)(_CLAIMS).values(
            event_id=event_id, player_id=player_id, renewed_at=now, **values
        )
        excluded = stmt.excluded
        conn.execute(
            stmt.on_conflict_do_update(
                index_elements=["event_id", "player_id"],
                set_={**values, "renewed_at": excluded.renewed_at},
                where=or_(
                    _CLAIMS.c.holder == holder.id, _CLAIMS.c.renewed_at < excluded.renewed_at - ttl
                ),
            )
        )
        row = conn.execute(
            select(_CLAIMS.c.holder, _CLAIMS.c.url, _CLAIMS.c.proc).where(
                _CLAIMS.c.event_id == event_id, _CLAIMS.c.player_id == player_id
            )
        ).one()
        if row.holder == holder.id:
            return None
        if known_dead(row.proc):  # its holder died on this machine: the player is free now
            conn.execute(
                update(_CLAIMS)
                .where(
                    _CLAIMS.c.event_id == event_id,
                    _CLAIMS.c.player_id == player_id,
                    _CLAIMS.c.holder == row.holder,
                )
                .values(renewed_at=now, **values)
            )
            return None
        return row.url or "another server process"


def renew(engine: Engine, holder: Holder, players: Iterable[tuple[int, str]]) -> None:
    """``holder`` still has these players (event id, player id) in play."""
    keys = sorted(set(players))
    if not keys:
        return
    with engine.begin() as conn:
        conn.execute(
            update(_CLAIMS)
            .where(
                _CLAIMS.c.holder == holder.id,
                tuple_(_CLAIMS.c.event_id, _CLAIMS.c.player_id).in_(keys),
            )
            .values(renewed_at=db_now(conn.dialect.name))
        )


def release(
    engine: Engine, holder: Holder, players: Iterable[tuple[int, str]] | None = None
) -> None:
    """``holder`` has these players (None: every one) in play no more."""
    keys = sorted(set(players)) if players is not None else None
    if keys == []:
        return
    where = _CLAIMS.c.holder == holder.id
    if keys is not None:
        where = and_(where, tuple_(_CLAIMS.c.event_id, _CLAIMS.c.player_id).in_(keys))
    with engine.begin() as conn:
        conn.execute(delete(_CLAIMS).where(where))
