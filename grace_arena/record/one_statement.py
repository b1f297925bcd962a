"""A group commit of plain rows as one statement, on a PostgreSQL record.

The commonest commits of a busy server (words revealed, buzzes) write rows and nothing else:
event rows, buzz rows, the matches' leases renewed in the same transaction (the fence), and
sometimes a notice. As a transaction that is BEGIN, the fence, an INSERT per table, the notice
and COMMIT: a round trip each to the server, and in a busy server process each round trip may
hand the interpreter to the event loop and wait to have it back (the worker thread that
commits shares it with the loop). Here they are one statement committed on its own: the
fence renews the leases and counts them, and each INSERT, and the notice, takes effect only if
every lease was renewed (the fence's count, read from its data-modifying CTE). One round trip.

If a lease was not renewed, nothing is written (the leases that were are renewed, as any
renewal would) and :func:`append_rows` says so: the caller then commits the batch the
ordinary way, which names the match lost. Anything else that fails fails the statement as a
whole, as it would the transaction.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sqlalchemy import String, Table, TypeDecorator, text
from sqlalchemy.dialects import postgresql
from sqlalchemy.engine import Engine
from sqlalchemy.sql.elements import TextClause

from grace_arena.record.lease import (
    FENCE_ALL_POSTGRESQL,
    LEASE_ARRAYS,
    Holder,
    LeaseClaim,
    lease_arrays,
)
from grace_arena.record.models import BuzzRow, EventRow, RulingRow
from grace_arena.record.notices import CHANNEL

_PG = postgresql.dialect()
_EVENT: Table = EventRow.__table__  # type: ignore[attr-defined]
_BUZZ: Table = BuzzRow.__table__  # type: ignore[attr-defined]
_RULING: Table = RulingRow.__table__  # type: ignore[attr-defined]

#: Built once for each set of columns and whether a notice is sent.
_STATEMENTS: dict[tuple, TextClause] = {}


def _columns(table: Table, rows: Sequence[dict[str, Any]]) -> tuple[str, ...]:
    """The columns ``rows`` give (every row the same ones), and those with a fixed default
    (which an ORM or Core insert would add, and a plain INSERT would leave NULL)."""
    if not rows:
        return ()
    given = tuple(rows[0])
    defaults = tuple(
        c.name
        for c in table.columns
        if c.name not in given and c.default is not None and c.default.is_scalar
    )
    return given + defaults


def _array_type(column) -> str:
    """The type of an array of ``column``'s values, as the statement casts them: a string's
    without its length (an explicit cast would cut a value too long; the INSERT's own check
    refuses it, as the ordinary transaction's does)."""
    if isinstance(_base(column), String):
        return "VARCHAR"
    return column.type.compile(dialect=_PG)


def _insert(table: Table, columns: tuple[str, ...], prefix: str) -> str:
    quote = _PG.identifier_preparer.quote
    arrays = ", ".join(f"CAST(:{prefix}_{c} AS {_array_type(table.c[c])}[])" for c in columns)
    return (
        f"INSERT INTO {quote(table.name)} ({', '.join(quote(c) for c in columns)}) "
        f"SELECT * FROM unnest({arrays}) WHERE (SELECT ok FROM fenced_all) RETURNING 1"
    )


#: The buzzes ruled in this commit whose rows are older: each set to its last new ruling
#: and power, its points those of the rulings in force before (the statement's snapshot does
#: not see the rows its own parts insert) plus the new ones'.
_SET_RULED = """
    UPDATE buzz AS b
    SET ruling = n.ruling, power = n.power,
        points = n.points + COALESCE((SELECT sum(r.points) FROM ruling AS r
                                      WHERE r.match_id = b.match_id AND r.buzz_id = b.buzz_id
                                        AND r.undone_seq IS NULL), 0)
    FROM unnest(CAST(:ruled_match AS INTEGER[]), CAST(:ruled_buzz AS INTEGER[]),
                CAST(:ruled_ruling AS VARCHAR[]), CAST(:ruled_power AS BOOLEAN[]),
                CAST(:ruled_points AS INTEGER[])) AS n(m, k, ruling, power, points)
    WHERE b.match_id = n.m AND b.buzz_id = n.k AND (SELECT ok FROM fenced_all)
    RETURNING 1
"""

#: How many of those buzzes' rows there are (all, or the commit writes nothing).
_RULED_FOUND = """
    SELECT count(*) AS n FROM buzz AS b,
        unnest(CAST(:ruled_match AS INTEGER[]), CAST(:ruled_buzz AS INTEGER[])) AS n(m, k)
    WHERE b.match_id = n.m AND b.buzz_id = n.k
"""


def _statement(
    event_columns: tuple[str, ...],
    buzz_columns: tuple[str, ...],
    ruling_columns: tuple[str, ...],
    ruled: bool,
    notice: bool,
) -> TextClause:
    key = (event_columns, buzz_columns, ruling_columns, ruled, notice)
    statement = _STATEMENTS.get(key)
    if statement is not None:
        return statement
    parts = [f"fenced AS ({FENCE_ALL_POSTGRESQL} RETURNING l.match_id)"]
    ok = "(SELECT count(*) FROM fenced) = :lease_count"
    if ruled:
        parts.append(f"ruled_found AS ({_RULED_FOUND})")
        ok += " AND (SELECT n FROM ruled_found) = :ruled_count"
    parts += [
        f"fenced_all AS (SELECT {ok} AS ok)",
        f"event_rows AS ({_insert(_EVENT, event_columns, 'event')})",
    ]
    if buzz_columns:
        parts.append(f"buzz_rows AS ({_insert(_BUZZ, buzz_columns, 'buzz')})")
    if ruling_columns:
        parts.append(f"ruling_rows AS ({_insert(_RULING, ruling_columns, 'ruling')})")
    if ruled:
        parts.append(f"buzz_rulings AS ({_SET_RULED})")
    told = "0"
    if notice:
        parts.append("notice AS (SELECT pg_notify(:channel, :notice) FROM fenced_all WHERE ok)")
        told = "(SELECT count(*) FROM notice)"
    sql = "WITH " + ",\n".join(parts) + f"\nSELECT ok, {told} FROM fenced_all"
    statement = _STATEMENTS[key] = text(sql).bindparams(*LEASE_ARRAYS)
    return statement


def _arrays(table: Table, columns: tuple[str, ...], rows, prefix: str) -> dict[str, list]:
    defaults = {c.name: c.default.arg for c in table.columns if c.default is not None
                and c.default.is_scalar}  # fmt: skip
    out: dict[str, list] = {}
    for c in columns:
        values = [row[c] if c in row else defaults[c] for row in rows]
        if c == "payload":  # JSON: the text PostgreSQL parses (what the JSON type would send)
            values = [json.dumps(v) for v in values]
        elif (kind := _python_type(table.c[c])) in (int, float):
            # one type a list: psycopg sends no list of ints and floats mixed (a time given
            # as 3 beside 3.5), which a column takes one by one
            values = [v if v is None or isinstance(v, bool) else kind(v) for v in values]
        out[f"{prefix}_{c}"] = values
    return out


def _base(column):
    """``column``'s type, or what it decorates (the model's strings are sqlmodel's
    AutoString, a decorated String)."""
    kind = column.type
    return kind.impl_instance if isinstance(kind, TypeDecorator) else kind


def _python_type(column) -> type | None:
    try:
        return _base(column).python_type
    except NotImplementedError:
        return None


def _rule(
    buzzes: Sequence[dict[str, Any]], rulings: Sequence[dict[str, Any]]
) -> tuple[list[dict[str, Any]], dict[str, list]]:
    """The commit's rulings on its buzzes: the buzz rows it inserts, each ruled one with its
    ruling, points and power already (every row then gives those columns); and the
    parameters of :data:`_SET_RULED` for the buzzes whose rows are older."""
    new: dict[tuple[int, int], list[dict[str, Any]]] = {}
    for ruling in sorted(rulings, key=lambda r: r["seq"]):
        new.setdefault((ruling["match_id"], ruling["buzz_id"]), []).append(ruling)

    def shown(key: tuple[int, int]) -> dict[str, Any]:
        last = new[key][-1]
        return {"ruling": last["ruling"], "power": last["power"],
                "points": sum(r["points"] for r in new[key])}  # fmt: skip

    inserted = {(row["match_id"], row["buzz_id"]) for row in buzzes}
    rows = [
        {**row, **(shown(key) if key in new else {"ruling": None, "power": None, "points": None})}
        for row in buzzes
        for key in [(row["match_id"], row["buzz_id"])]
    ]
    older = sorted(key for key in new if key not in inserted)
    ruled = [shown(key) for key in older]
    return rows, {
        "ruled_match": [m for m, _ in older],
        "ruled_buzz": [b for _, b in older],
        "ruled_ruling": [r["ruling"] for r in ruled],
        "ruled_power": [r["power"] for r in ruled],
        "ruled_points": [r["points"] for r in ruled],
        "ruled_count": len(older),
    }


def append_rows(
    engine: Engine,
    leases: Sequence[tuple[int, Holder | LeaseClaim]],
    events: Sequence[dict[str, Any]],
    buzzes: Sequence[dict[str, Any]],
    rulings: Sequence[dict[str, Any]],
    notice: str | None,
) -> bool:
    """Commit ``events``, ``buzzes`` and ``rulings`` (rows as ``store._PlainRows`` holds
    them; each ruled buzz shows its ruling in force) while every lease of ``leases`` (in
    ascending match order) is renewed, and send ``notice`` if given, in one statement on its
    own connection; ``False`` (nothing written) when a lease was not renewed or a ruled buzz
    is not in the record."""
    ruled: dict[str, Any] = {"ruled_count": 0}
    if rulings:
        buzzes, ruled = _rule(buzzes, rulings)
    columns = _columns(_EVENT, events), _columns(_BUZZ, buzzes), _columns(_RULING, rulings)
    statement = _statement(*columns, bool(ruled["ruled_count"]), notice is not None)
    params: dict[str, Any] = {**lease_arrays(leases), "lease_count": len(leases)}
    for table, cols, rows, prefix in zip(
        (_EVENT, _BUZZ, _RULING),
        columns,
        (events, buzzes, rulings),
        ("event", "buzz", "ruling"),
        strict=True,
    ):
        if rows:
            params |= _arrays(table, cols, rows, prefix)
    if ruled["ruled_count"]:
        params |= ruled
    if notice is not None:
        params |= {"channel": CHANNEL, "notice": notice}
    with engine.connect() as conn:
        conn.execution_options(isolation_level="AUTOCOMMIT")  # the statement commits itself
        ok, _ = conn.execute(statement, params).one()
    return bool(ok)
