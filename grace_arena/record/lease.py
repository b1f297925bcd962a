"""Which server process serves a match, when several share one record.

A process takes a match's lease (a ``match_lease`` row) when it opens the match, renews it
while it serves it, and renews it again in the transaction of every commit of the match's
events (:func:`fence`): a commit by a process that lost the lease fails (:class:`LeaseLost`)
and stores nothing, so two processes never both write one match. Another process asked to open
a leased match is told who holds it (:class:`LeaseHeld`); it takes the lease over once the
holder released it (it stopped cleanly), its lease lapsed (not renewed for ``ttl`` seconds:
a process that died on another host, or one that hangs), or the holder is known to be dead.

**One clock.** Renewals and lapses are measured by the database's clock (PostgreSQL's
``clock_timestamp()``; SQLite's ``julianday('now')``, the clock of the one host whose
processes share the file), never by comparing two hosts' wall clocks: a process whose clock
runs 30 s ahead, or a clock stepped back by NTP, takes nothing that is alive.

**Fencing.** Each take-over increments the lease's ``generation``; a holder renews and commits
only under the generation it took (:class:`LeaseClaim`), so a process that lost a match and
took it back later cannot commit under its old claim. Lease rows are locked in ascending
match order by everything that locks several (renewals, group commits), and a take-over
waits at most :data:`LOCK_TIMEOUT` for a row another transaction holds (PostgreSQL).

**Known dead.** A holder is declared dead before its lease lapses only where that is certain:
it ran on this very boot of this machine in this very PID namespace (two containers may share
a host name but not their processes), and no process with its PID *and its start time* runs
now. Elsewhere (another host, another container, a system without ``/proc``) only the lapse
counts; no signal is ever sent to probe a process.

**Time not served.** Each renewal and commit also records the holder's own wall clock
(``served_until``): the last moment the match was known to be served, on the clock its
deadlines were set with. A process that takes a match over hands that moment to the match
(``ResumeClock``), so that a running answer clock resumes with what it had left.
"""

from __future__ import annotations

import os
import secrets
import socket
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import (
    Float,
    Integer,
    String,
    Table,
    and_,
    bindparam,
    cast,
    func,
    insert,
    select,
    text,
    update,
)
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.sql.elements import ColumnElement
from sqlmodel import Session

from grace_arena.record.errors import RecordError
from grace_arena.record.models import MatchLeaseRow

#: Seconds without renewal after which a lease has lapsed.
DEFAULT_TTL = 15.0
#: The longest a take-over waits for a lease row that another transaction has locked.
LOCK_TIMEOUT = "2s"

_LEASE: Table = MatchLeaseRow.__table__  # type: ignore[attr-defined]


# --------------------------------------------------------------------------------------------
# Who holds it


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def _start_time(pid: int | str) -> str | None:
    """The start time of process ``pid`` in clock ticks since boot (Linux), or None."""
    stat = _read(f"/proc/{pid}/stat")
    if stat is None:
        return None
    # the command name (2nd field) may hold spaces and parentheses: split after its end
    fields = stat[stat.rfind(")") + 2 :].split()
    return fields[19] if len(fields) > 19 else None


def _this_system() -> str | None:
    """This boot of this machine and this PID namespace (``boot:namespace``), or None where
    it cannot be told (no ``/proc``)."""
    boot = _read("/proc/sys/kernel/random/boot_id")
    try:
        namespace = os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return None
    return f"{boot}:{namespace}" if boot else None


def process_key(pid: int | None = None) -> str | None:
    """What identifies a running process for certain on this system (``boot:namespace:pid:
    start``), or None where it cannot be told."""
    pid = os.getpid() if pid is None else pid
    system, start = _this_system(), _start_time(pid)
    return f"{system}:{pid}:{start}" if system and start else None


@dataclass(frozen=True)
class Holder:
    """A server process: ``id`` is unique to it (host, pid and a random part); ``proc``
    identifies it for certain on its own system (:func:`process_key`), where that can be
    told."""

    id: str
    host: str
    pid: int
    url: str | None = None
    proc: str | None = None

    @classmethod
    def this_process(cls, url: str | None = None) -> Holder:
        host, pid = socket.gethostname(), os.getpid()
        return cls(f"{host}:{pid}:{secrets.token_hex(4)}", host, pid, url, process_key())

    def describe(self) -> str:
        where = f" at {self.url}" if self.url else ""
        return f"process {self.pid} on {self.host}{where}"


@dataclass(frozen=True)
class LeaseClaim:
    """A holder's claim on one match: the generation of the lease it took. Renewals and
    commits under an older generation fail."""

    holder: Holder
    generation: int


@dataclass(frozen=True)
class Lease:
    """A lease taken by :func:`acquire`."""

    match_id: int
    claim: LeaseClaim
    #: It was taken from another process (one that died, lapsed or released it).
    took_over: bool
    #: The last moment the match was known to be served before (on that server's clock), if
    #: it was served before: a running clock resumes with what it had left then.
    served_until: float | None


class LeaseHeld(RecordError):
    """The match is served by another live process."""

    def __init__(self, match_id: int, row: Mapping, age: float) -> None:
        self.match_id = match_id
        self.holder = Holder(row["holder"], row["host"], row["pid"], row["url"], row["proc"])
        self.age = max(0.0, age)
        super().__init__(
            f"match {match_id} is served by {self.holder.describe()} "
            f"(its lease was renewed {self.age:.0f} s ago)"
        )


class LeaseLost(RecordError):
    """This process no longer holds the match's lease: another process took the match over."""


def known_dead(proc: str | None) -> bool:
    """Whether the process ``proc`` (:func:`process_key`) is certainly gone: it ran on this
    system (this boot, this PID namespace), and no process with its PID and start time runs
    now. False wherever that cannot be told."""
    if not proc or os.name != "posix":
        return False
    system = _this_system()
    if system is None or not proc.startswith(system + ":"):
        return False
    pid, _, start = proc[len(system) + 1 :].partition(":")
    if not pid.isdigit():
        return False
    return _start_time(pid) != start


# --------------------------------------------------------------------------------------------
# The database's clock


def db_now(dialect: str) -> ColumnElement[float]:
    """The database's clock, in seconds since the epoch, as an SQL expression."""
    if dialect == "postgresql":
        return cast(func.extract("epoch", func.clock_timestamp()), Float)
    # SQLite: the clock of the host whose processes share the file (milliseconds)
    return cast((func.julianday("now") - 2440587.5) * 86400.0, Float)


def _begin(conn: Connection) -> None:
    """Start a take-over's transaction: on PostgreSQL, wait at most :data:`LOCK_TIMEOUT` for
    a row another transaction holds."""
    if conn.dialect.name == "postgresql":
        conn.exec_driver_sql(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'")


def _lock_in_order(conn: Connection, match_ids: list[int]) -> None:
    """Lock the lease rows of ``match_ids`` in ascending order (PostgreSQL; SQLite has one
    writer at a time), so that two transactions locking several never wait for each other
    in a circle."""
    if conn.dialect.name == "postgresql" and match_ids:
        conn.execute(
            select(_LEASE.c.match_id)
            .where(_LEASE.c.match_id.in_(sorted(match_ids)))
            .order_by(_LEASE.c.match_id)
            .with_for_update()
        ).all()


def _holder_values(holder: Holder) -> dict:
    return {"holder": holder.id, "host": holder.host, "pid": holder.pid, "url": holder.url,
            "proc": holder.proc}  # fmt: skip


# --------------------------------------------------------------------------------------------
# Taking, renewing, fencing, releasing


def acquire(engine: Engine, match_id: int, holder: Holder, *, ttl: float = DEFAULT_TTL) -> Lease:
    """Take (or renew) ``match_id``'s lease for ``holder``; raises :class:`LeaseHeld` when
    another live process holds it."""
    with engine.begin() as conn:
        _begin(conn)
        dialect = conn.dialect.name
        now = db_now(dialect)
        # a new lease (the match was never leased); nothing if a row is there
        new = (
            dialect_insert(dialect)(_LEASE)
            .values(_new_lease(match_id, holder, dialect))
            .on_conflict_do_nothing(index_elements=["match_id"])
        )
        if conn.execute(new).rowcount == 1:  # type: ignore[attr-defined]
            return Lease(match_id, LeaseClaim(holder, 1), took_over=False, served_until=None)
        row = (
            conn.execute(
                select(_LEASE, (now - _LEASE.c.renewed_at).label("age"))
                .where(_LEASE.c.match_id == match_id)
                .with_for_update()
            )
            .mappings()
            .one()
        )
        if row["holder"] == holder.id and not row["released"]:
            # this process holds it already: taken over (or made) by it, and perhaps not
            # served yet (an opening that failed, tried again). When it was last served is
            # left as it was (renewals and commits of the room that serves it move it on).
            conn.execute(update(_LEASE).where(_LEASE.c.match_id == match_id).values(renewed_at=now))
            return Lease(
                match_id, LeaseClaim(holder, row["generation"]), False, row["served_until"]
            )
        dead = known_dead(row["proc"])
        if not (row["released"] or row["age"] > ttl or dead):
            raise LeaseHeld(match_id, row, row["age"])
        # take it over, unless it was renewed or taken meanwhile (checked again in the update:
        # the row may not have been locked for this transaction on SQLite)
        generation = row["generation"] + 1
        free = _LEASE.c.released | (_LEASE.c.renewed_at < now - ttl)
        # (``served_until`` stays as it was: the match is not served until its room is)
        taken = conn.execute(
            update(_LEASE)
            .where(_LEASE.c.match_id == match_id, _LEASE.c.generation == row["generation"],
                   free if not dead else _LEASE.c.holder == row["holder"])
            .values(**_holder_values(holder), generation=generation, released=False,
                    acquired_at=now, renewed_at=now)
        )  # fmt: skip
        if taken.rowcount != 1:  # type: ignore[attr-defined]
            raise LeaseHeld(match_id, row, 0.0)
        return Lease(
            match_id,
            LeaseClaim(holder, generation),
            took_over=not row["released"] and row["holder"] != holder.id,
            served_until=row["served_until"],
        )


def dialect_insert(dialect: str):
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        return pg_insert
    from sqlalchemy.dialects.sqlite import insert as sqlite_insert

    return sqlite_insert


def insert_new_lease(session: Session, match_id: int, holder: Holder) -> None:
    """In a match's creation's transaction: ``holder``'s lease of it, taken now on the
    database's clock (generation 1)."""
    session.execute(
        insert(_LEASE).values(_new_lease(match_id, holder, session.get_bind().dialect.name))
    )


def _new_lease(match_id: int, holder: Holder, dialect: str) -> dict:
    """The columns of ``holder``'s new lease of ``match_id``, taken now on the database's
    clock (generation 1)."""
    now = db_now(dialect)
    return {"match_id": match_id, **_holder_values(holder), "generation": 1, "released": False,
            "acquired_at": now, "renewed_at": now, "served_until": time.time()}  # fmt: skip


def _fence_statement(dialect: str):
    return (
        update(_LEASE)
        .where(
            _LEASE.c.match_id == bindparam("lease_match"),
            _LEASE.c.holder == bindparam("lease_holder"),
            ~_LEASE.c.released,
            (_LEASE.c.generation == bindparam("lease_generation"))
            | (bindparam("lease_generation") == -1),
        )
        .values(renewed_at=db_now(dialect), served_until=bindparam("lease_clock"))
    )


_FENCES: dict[str, object] = {}

#: PostgreSQL: the leases of a group commit renewed by one statement (arrays of match ids,
#: holders and generations, -1 for any: :func:`lease_arrays`), their rows locked first in
#: ascending match order (the order every transaction that locks several takes). A set of
#: parameters each, which psycopg pipelines, costs a message and a wait on the socket per
#: lease: in a busy server each wait may hand the interpreter to the event loop and wait to
#: have it back. (``grace_arena.record.one_statement`` runs it as a commit's first part.)
FENCE_ALL_POSTGRESQL = """
    UPDATE match_lease AS l
    SET renewed_at = CAST(extract(epoch FROM clock_timestamp()) AS double precision),
        served_until = :lease_clock
    FROM (SELECT k.match_id FROM match_lease AS k WHERE k.match_id = ANY(:lease_matches)
          ORDER BY k.match_id FOR UPDATE) AS locked,
         unnest(:lease_matches, :lease_holders, :lease_generations) AS v(m, h, g)
    WHERE l.match_id = locked.match_id AND l.match_id = v.m AND l.holder = v.h
      AND NOT l.released AND (l.generation = v.g OR v.g = -1)
"""

#: The parameters' types of :data:`FENCE_ALL_POSTGRESQL`.
LEASE_ARRAYS = (
    bindparam("lease_matches", type_=ARRAY(Integer)),
    bindparam("lease_holders", type_=ARRAY(String)),
    bindparam("lease_generations", type_=ARRAY(Integer)),
    bindparam("lease_clock", type_=Float),
)

_FENCE_ALL_POSTGRESQL = text(FENCE_ALL_POSTGRESQL).bindparams(*LEASE_ARRAYS)


def _lease_params(
    leases: Sequence[tuple[int, Holder | LeaseClaim]], clock: float
) -> list[dict[str, Any]]:
    """Each lease's parameters for :func:`_fence_statement`."""
    params = []
    for match_id, holder in leases:
        claim = holder if isinstance(holder, LeaseClaim) else None
        who = claim.holder if claim is not None else holder
        params.append(
            {
                "lease_match": match_id,
                "lease_holder": who.id,  # type: ignore[union-attr]
                "lease_generation": claim.generation if claim is not None else -1,
                "lease_clock": clock,
            }
        )
    return params


def lease_arrays(leases: Sequence[tuple[int, Holder | LeaseClaim]]) -> dict[str, Any]:
    """The parameters of :data:`FENCE_ALL_POSTGRESQL` for ``leases``, on this host's clock."""
    params = _lease_params(leases, time.time())
    return {
        "lease_matches": [p["lease_match"] for p in params],
        "lease_holders": [p["lease_holder"] for p in params],
        "lease_generations": [p["lease_generation"] for p in params],
        "lease_clock": params[0]["lease_clock"] if params else time.time(),
    }


def _renewed(
    session: Session | Connection, leases: Sequence[tuple[int, Holder | LeaseClaim]]
) -> int:
    """Renew ``leases`` (``(match id, holder)``, each match once) in the commit's
    transaction, in one execution: one statement on PostgreSQL, else a set of parameters
    each; how many rows were renewed."""
    conn = session.connection() if isinstance(session, Session) else session
    dialect = conn.dialect.name
    if dialect == "postgresql" and len(leases) > 1:
        result = conn.execute(_FENCE_ALL_POSTGRESQL, lease_arrays(leases))
        return result.rowcount  # type: ignore[attr-defined]
    params = _lease_params(leases, time.time())
    statement = _FENCES.get(dialect)
    if statement is None:  # built once per dialect: it runs in every commit of every room
        statement = _FENCES[dialect] = _fence_statement(dialect)
    result = conn.execute(statement, params[0] if len(params) == 1 else params)  # type: ignore[arg-type]
    return result.rowcount  # type: ignore[attr-defined]


def fence(session: Session | Connection, match_id: int, holder: Holder | LeaseClaim) -> None:
    """In a commit's transaction: renew the lease (the holder's claim, or any generation of a
    plain holder's), or raise :class:`LeaseLost` (the commit is then rolled back by the
    caller) when another process holds it."""
    if _renewed(session, [(match_id, holder)]) != 1:
        raise LeaseLost(f"match {match_id}: another server process serves it now")


def fence_all(
    session: Session | Connection, leases: Sequence[tuple[int, Holder | LeaseClaim]]
) -> None:
    """:func:`fence` for each ``(match id, holder)`` of ``leases`` (a group commit's, in
    ascending match order: the order rows are locked in), in one execution. When fewer
    leases than asked were renewed (or the driver does not sum them), each is fenced alone,
    which raises :class:`LeaseLost` for the first one lost; so is each of a batch that names
    a match twice."""
    several = len(leases) > 1 and len({m for m, _ in leases}) == len(leases)
    if several and _renewed(session, leases) == len(leases):
        return
    for match_id, holder in leases:
        fence(session, match_id, holder)


def renew(engine: Engine, holder: Holder, match_ids: Iterable[int] | Mapping[int, int]) -> set[int]:
    """Renew ``holder``'s leases on ``match_ids`` (with their generations, if a mapping);
    returns the ones it no longer holds."""
    generations = dict(match_ids) if isinstance(match_ids, Mapping) else None
    ids = sorted(generations if generations is not None else match_ids)
    if not ids:
        return set()
    with engine.begin() as conn:
        _lock_in_order(conn, ids)
        mine = and_(_LEASE.c.holder == holder.id, ~_LEASE.c.released, _LEASE.c.match_id.in_(ids))
        conn.execute(
            update(_LEASE)
            .where(mine)
            .values(renewed_at=db_now(conn.dialect.name), served_until=time.time())
        )
        held = {
            match_id
            for match_id, generation in conn.execute(
                select(_LEASE.c.match_id, _LEASE.c.generation).where(mine)
            ).all()
            if generations is None or generations[match_id] == generation
        }
    return set(ids) - held


def release(
    engine: Engine, holder: Holder, match_ids: Iterable[int], *, served: bool = True
) -> None:
    """Give up ``holder``'s leases (a server that stops cleanly, a match that ended): another
    process may take the matches at once, and a running clock resumes there with what it had
    left now — or, for matches ``holder`` took but never served (``served=False``: it began to
    stop meanwhile), with what it had left when they were last served."""
    ids = sorted(match_ids)
    if not ids:
        return
    values: dict = {"released": True}
    if served:
        values["served_until"] = time.time()
    with engine.begin() as conn:
        _lock_in_order(conn, ids)
        conn.execute(
            update(_LEASE)
            .where(_LEASE.c.holder == holder.id, _LEASE.c.match_id.in_(ids), ~_LEASE.c.released)
            .values(**values)
        )


def holder_of(engine: Engine, match_id: int) -> Holder | None:
    """The process that holds the match's lease now (None: nobody, or it was released)."""
    with engine.connect() as conn:
        row = conn.execute(select(_LEASE).where(_LEASE.c.match_id == match_id)).mappings().first()
    if row is None or row["released"]:
        return None
    return Holder(row["holder"], row["host"], row["pid"], row["url"], row["proc"])


def orphaned(engine: Engine, match_ids: Iterable[int], *, ttl: float = DEFAULT_TTL) -> set[int]:
    """Of ``match_ids``, those whose holder died without giving them up: its lease lapsed
    (by the database's clock), or the holder is known dead. A released lease (a clean stop)
    is not one: its clients come back, to it or to another process, and are served then."""
    ids = sorted(match_ids)
    if not ids:
        return set()
    with engine.connect() as conn:
        age = (db_now(conn.dialect.name) - _LEASE.c.renewed_at).label("age")
        rows = conn.execute(
            select(_LEASE.c.match_id, _LEASE.c.proc, age).where(
                _LEASE.c.match_id.in_(ids), ~_LEASE.c.released
            )
        ).all()
    return {match_id for match_id, proc, age in rows if age > ttl or known_dead(proc)}
