"""Which server process serves a match, when several share one record.

A process takes a match's lease (a ``match_lease`` row) when it opens the match, renews it
while it serves it, and renews it again in the transaction of every commit of the match's
events: a commit by a process that lost the lease fails (:class:`LeaseLost`) and stores
nothing, so two processes never both write one match. Another process asked to open a leased
match is told who holds it (:class:`LeaseHeld`); it takes the lease over once the holder is
known to be dead (a process of this host that no longer runs) or its lease has lapsed (not
renewed for ``ttl`` seconds: a process of another host, or one that hangs).

Times are each process's wall clock: processes on several hosts need clocks that agree to
well within ``ttl`` (NTP does).
"""

from __future__ import annotations

import os
import secrets
import socket
import time
from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import Table, bindparam, delete, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, select

from grace_arena.record.models import MatchLeaseRow
from grace_arena.record.store import RecordError

#: Seconds without renewal after which a lease has lapsed.
DEFAULT_TTL = 15.0


@dataclass(frozen=True)
class Holder:
    """A server process: ``id`` is unique to it (host, pid and a random part)."""

    id: str
    host: str
    pid: int
    url: str | None = None

    @classmethod
    def this_process(cls, url: str | None = None) -> Holder:
        host, pid = socket.gethostname(), os.getpid()
        return cls(f"{host}:{pid}:{secrets.token_hex(4)}", host, pid, url)

    def describe(self) -> str:
        where = f" at {self.url}" if self.url else ""
        return f"process {self.pid} on {self.host}{where}"


class LeaseHeld(RecordError):
    """The match is served by another live process."""

    def __init__(self, match_id: int, row: MatchLeaseRow, now: float) -> None:
        self.match_id = match_id
        self.holder = Holder(row.holder, row.host, row.pid, row.url)
        self.age = max(0.0, now - row.renewed_at)
        super().__init__(
            f"match {match_id} is served by {self.holder.describe()} "
            f"(its lease was renewed {self.age:.0f} s ago)"
        )


class LeaseLost(RecordError):
    """This process no longer holds the match's lease: another process took the match over."""


def _alive_here(row: MatchLeaseRow) -> bool:
    """Whether the lease's holder might still run: False only for a process of this host
    that is known to be gone."""
    if row.host != socket.gethostname():
        return True
    try:
        os.kill(row.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it runs, as another user
        return True
    return True


def acquire(engine: Engine, match_id: int, holder: Holder, *, ttl: float = DEFAULT_TTL) -> bool:
    """Take (or renew) ``match_id``'s lease for ``holder``. Returns True when it was taken
    over from a process that died or lapsed, False when it was free or already ours; raises
    :class:`LeaseHeld` when another live process holds it."""
    now = time.time()
    with Session(engine) as session:
        row = session.get(MatchLeaseRow, match_id)
        if row is None:
            session.add(MatchLeaseRow(match_id=match_id, **MatchLeaseRow.values_for(holder, now)))
            try:
                session.commit()
                return False
            except IntegrityError:  # another process took it at the same moment
                session.rollback()
                row = session.get(MatchLeaseRow, match_id)
                if row is None:
                    raise
        if row.holder == holder.id:
            row.renewed_at = now
            session.add(row)
            session.commit()
            return False
        lapsed = now - row.renewed_at > ttl
        if not lapsed and _alive_here(row):
            raise LeaseHeld(match_id, row, now)
        # take it over, unless someone else renewed or took it meanwhile
        taken = session.execute(
            update(MatchLeaseRow)
            .where(
                MatchLeaseRow.match_id == match_id,
                MatchLeaseRow.holder == row.holder,
                MatchLeaseRow.renewed_at == row.renewed_at,
            )
            .values(**MatchLeaseRow.values_for(holder, now))
        )
        if taken.rowcount != 1:  # type: ignore[attr-defined]
            session.rollback()
            fresh = session.get(MatchLeaseRow, match_id)
            assert fresh is not None
            session.refresh(fresh)
            raise LeaseHeld(match_id, fresh, now)
        session.commit()
        return True


#: The lease's renewal in a commit, built once (it runs in every commit of every room).
_LEASE: Table = MatchLeaseRow.__table__  # type: ignore[attr-defined]
_FENCE = (
    update(_LEASE)
    .where(
        _LEASE.c.match_id == bindparam("lease_match"), _LEASE.c.holder == bindparam("lease_holder")
    )
    .values(renewed_at=bindparam("lease_at"))
)


def fence(session: Session, match_id: int, holder: Holder) -> None:
    """In a commit's transaction: renew the lease, or raise :class:`LeaseLost` (the commit is
    then rolled back by the caller) when another process holds it."""
    renewed = session.connection().execute(
        _FENCE, {"lease_match": match_id, "lease_holder": holder.id, "lease_at": time.time()}
    )
    if renewed.rowcount != 1:  # type: ignore[attr-defined]
        raise LeaseLost(f"match {match_id}: another server process serves it now")


def renew(engine: Engine, holder: Holder, match_ids: Iterable[int]) -> set[int]:
    """Renew ``holder``'s leases on ``match_ids``; returns the ones it no longer holds."""
    ids = list(match_ids)
    if not ids:
        return set()
    with Session(engine) as session:
        session.execute(
            update(MatchLeaseRow)
            .where(MatchLeaseRow.holder == holder.id, MatchLeaseRow.match_id.in_(ids))  # type: ignore[attr-defined]
            .values(renewed_at=time.time())
        )
        held = set(
            session.exec(
                select(MatchLeaseRow.match_id).where(
                    MatchLeaseRow.holder == holder.id,
                    MatchLeaseRow.match_id.in_(ids),  # type: ignore[attr-defined]
                )
            ).all()
        )
        session.commit()
    return set(ids) - held


def release(engine: Engine, holder: Holder, match_ids: Iterable[int]) -> None:
    """Give up ``holder``'s leases (a server that stops cleanly): another process may take
    the matches at once."""
    ids = list(match_ids)
    if not ids:
        return
    with Session(engine) as session:
        session.execute(
            delete(MatchLeaseRow).where(
                MatchLeaseRow.holder == holder.id,
                MatchLeaseRow.match_id.in_(ids),  # type: ignore[attr-defined]
            )
        )
        session.commit()


def holder_of(engine: Engine, match_id: int) -> MatchLeaseRow | None:
    with Session(engine) as session:
        row = session.get(MatchLeaseRow, match_id)
        if row is not None:
            session.expunge(row)
        return row
