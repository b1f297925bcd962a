"""Merging another record into an event of this one (``grace-arena import record URL``).

Two sites of one competition, or a club's laptop and a lab's server, each keep a record; the
analysis wants them as one body of data. Every match of the other record (with every event,
buzz, ruling, team and player row), every pooled import and the packets and model steps they
use come over into one event here, in one transaction:

* a team keeps its id, so ``red`` at both sites is one team of the event (a team registered
  as human at one site and as a model at the other is an error, and nothing is written);
* a match is known by the SHA-256 of its first stored event (its creation: set-up, teams,
  time), a pooled import by its own key, so merging the same record again (or a copy of it,
  or a record that holds the first one's matches) adds nothing; a copy of a match that has
  gone on since the last merge (more events, or more repeated presses counted) is brought up
  to date (its rows replaced by the longer record), never duplicated;
* match ids are renumbered here; where a match came from is kept in its ``source_meta``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import func, insert
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from grace_arena.record.models import (
    ArenaEventRow,
    BuzzRow,
    EventImportRow,
    EventRow,
    EventTeamRow,
    MatchRow,
    ModelBonusPartRow,
    ModelStepRow,
    PacketRow,
    PlayerRow,
    PooledBuzzRow,
    RulingRow,
    TeamRow,
    TossupRow,
)
from grace_arena.record.store import RecordError, ensure_event, register_player, register_team

__all__ = ["MergeResult", "match_key", "merge_record"]


@dataclass
class MergeResult:
    """What a merge added, and what was there already."""

    event: str
    matches: list[tuple[int, int]] = field(default_factory=list)  # (their id, our id)
    updated: list[tuple[int, int]] = field(default_factory=list)  # copies brought up to date
    imports: int = 0
    pooled_buzzes: int = 0
    packets: list[str] = field(default_factory=list)
    model_steps: int = 0
    model_bonus_parts: int = 0
    skipped_matches: int = 0
    skipped_imports: int = 0


def _plain(row: Any, *, drop: Sequence[str] = ()) -> dict[str, Any]:
    return {k: v for k, v in row.model_dump().items() if k not in drop}


def match_key(first: EventRow | None) -> str:
    """A match's identity across records: the SHA-256 of its first stored event (its
    creation), which stays the same however far the match goes on."""
    if first is None:
        return ""
    payload = [first.seq, first.type, first.t, first.payload]
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def _first_event(session: Session, match_id: int | None) -> EventRow | None:
    return session.exec(
        select(EventRow).where(EventRow.match_id == match_id).order_by(EventRow.seq).limit(1)  # type: ignore[arg-type]
    ).first()


def _progress(session: Session, match_id: int | None) -> tuple[int, int]:
    """How far a match has gone: its events, then the repeated presses its buzz rows count
    (which add no event)."""
    events = session.exec(
        select(func.count()).select_from(EventRow).where(EventRow.match_id == match_id)
    ).one()
    repeats = session.exec(
        select(func.coalesce(func.sum(BuzzRow.repeats), 0)).where(BuzzRow.match_id == match_id)
    ).one()
    return events, int(repeats)


def same_database(one: Engine, other: Engine) -> bool:
    """Whether two engines reach the same SQLite file or the same server database, however
    their URLs are spelled (a PostgreSQL database is asked who it is)."""
    a, b = one.url, other.url
    if a.get_backend_name() != b.get_backend_name():
        return False
    if a.get_backend_name() == "sqlite":
        if not a.database or not b.database or ":memory:" in (a.database, b.database):
            return False
        return Path(a.database).resolve() == Path(b.database).resolve()
    if a.get_backend_name() == "postgresql":
        return _postgres_identity(one) == _postgres_identity(other)
    return a.render_as_string(hide_password=False) == b.render_as_string(hide_password=False)


def _postgres_identity(engine: Engine) -> tuple[Any, ...]:
    """The server's system identifier and the database's oid: the same for every host name,
    address, driver and option that reaches the database."""
    with engine.connect() as conn:
        return tuple(
            conn.exec_driver_sql(
                "SELECT (SELECT system_identifier FROM pg_control_system()), "
                "(SELECT oid FROM pg_database WHERE datname = current_database())"
            ).one()
        )


def merge_record(
    engine: Engine,
    other: Engine,
    *,
    event: str,
    from_events: Sequence[str] | None = None,
) -> MergeResult:
    """Bring every match and pooled import of ``other`` (only those of ``from_events``, by
    name, when given) into the event named ``event`` of ``engine``'s record (made if new).
    All or nothing; a second merge of the same data adds nothing."""
    if same_database(engine, other):
        raise RecordError("that is this record: a record cannot be merged into itself")
    result = MergeResult(event=event)
    with Session(other) as theirs:
        their_events = theirs.exec(select(ArenaEventRow)).all()
        if from_events:
            missing = sorted(set(from_events) - {e.name for e in their_events})
            if missing:
                raise RecordError(f"the other record has no event {', '.join(missing)}")
            chosen = {e.id for e in their_events if e.name in from_events}
        else:
            chosen = {e.id for e in their_events}
        event_names = {e.id: e.name for e in their_events}
        their_matches = [
            m
            for m in theirs.exec(select(MatchRow).order_by(MatchRow.id)).all()  # type: ignore[arg-type]
            if m.event_id in chosen
        ]
        their_imports = [
            i
            for i in theirs.exec(select(EventImportRow).order_by(EventImportRow.id)).all()  # type: ignore[arg-type]
            if i.event_id in chosen
        ]
        their_teams = {(t.event_id, t.team_id): t for t in theirs.exec(select(EventTeamRow)).all()}
        with Session(engine) as ours:
            target = ensure_event(ours, event, title=event)
            assert target.id is not None
            # our matches in the event by identity: (id, merged copy?, events stored)
            known: dict[str, tuple[int, bool]] = {}
            for here in ours.exec(select(MatchRow).where(MatchRow.event_id == target.id)).all():
                assert here.id is not None
                known[match_key(_first_event(ours, here.id))] = (
                    here.id,
                    "merged_from" in (here.source_meta or {}),
                )
            packets_needed: set[str] = set()
            for m in their_matches:
                assert m.id is not None
                events = theirs.exec(
                    select(EventRow).where(EventRow.match_id == m.id).order_by(EventRow.seq)  # type: ignore[arg-type]
                ).all()
                key = match_key(events[0] if events else None)
                if key in known:
                    here_id, is_copy = known[key]
                    if is_copy and _progress(theirs, m.id) > _progress(ours, here_id):
                        _delete_match_rows(ours, here_id)
                        _copy_match(theirs, ours, m, events, key, target.id, event_names,
                                    into=here_id)  # fmt: skip
                        result.updated.append((m.id, here_id))
                    else:
                        result.skipped_matches += 1
                    continue
                new_id = _copy_match(theirs, ours, m, events, key, target.id, event_names)
                known[key] = (new_id, True)
                result.matches.append((m.id, new_id))
                if m.packet_id:
                    packets_needed.add(m.packet_id)
            for imp in their_imports:
                assert imp.id is not None
                there = ours.exec(
                    select(EventImportRow).where(
                        EventImportRow.event_id == target.id,
                        EventImportRow.source == imp.source,
                        EventImportRow.source_key == imp.source_key,
                    )
                ).first()
                if there is not None:
                    result.skipped_imports += 1
                    continue
                added = _copy_import(theirs, ours, imp, target.id, their_teams)
                result.imports += 1
                result.pooled_buzzes += added
                if imp.packet_id:
                    packets_needed.add(imp.packet_id)
            result.packets = _copy_packets(theirs, ours, packets_needed)
            result.model_steps = _copy_model_steps(theirs, ours, packets_needed)
            result.model_bonus_parts = _copy_model_bonus_parts(theirs, ours, packets_needed)
            ours.commit()
    return result


def _copy_match(
    theirs: Session,
    ours: Session,
    m: MatchRow,
    events: Sequence[EventRow],
    key: str,
    event_id: int,
    event_names: dict[int | None, str],
    *,
    into: int | None = None,
) -> int:
    """Copy one match with all its rows; ``into``: the id of an outdated copy to refill."""
    meta = {
        "merged_from": {
            "match": m.id,
            "event": event_names.get(m.event_id),
            "source": m.source,
            "source_key": m.source_key,
        },
        **(m.source_meta or {}),
    }
    fields = {
        "title": m.title,
        "packet_id": m.packet_id,
        "created_at": m.created_at,
        "ended_at": m.ended_at,
        "join_code": None,  # a join code belongs to the server that made it
        "event_id": event_id,
        # an imported GRACE file replayed as a match (before events) keeps what exports need
        "source": m.source if m.source == "grace" else "record",
        "source_key": key,
        "source_meta": meta,
    }
    row = ours.get(MatchRow, into) if into is not None else None
    if row is None:
        row = MatchRow(**fields)
    else:
        for name, value in fields.items():
            setattr(row, name, value)
    ours.add(row)
    ours.flush()
    assert row.id is not None
    new_id = row.id
    for table in (TeamRow, PlayerRow, BuzzRow, RulingRow):
        rows = theirs.exec(select(table).where(table.match_id == m.id)).all()  # type: ignore[attr-defined]
        if rows:
            ours.execute(insert(table), [{**_plain(r), "match_id": new_id} for r in rows])
    teams = theirs.exec(select(TeamRow).where(TeamRow.match_id == m.id)).all()
    for t in teams:
        register_team(ours, event_id, team_id=t.team_id, name=t.name, kind=t.kind, model=t.model)
    for p in theirs.exec(select(PlayerRow).where(PlayerRow.match_id == m.id)).all():
        register_player(
            ours, event_id, player_id=p.player_id, team_id=p.team_id, name=p.name, kind=p.kind,
            distinct=True,
        )  # fmt: skip
    if events:
        ours.execute(insert(EventRow), [{**_plain(e), "match_id": new_id} for e in events])
    ours.flush()
    return new_id


def _delete_match_rows(ours: Session, match_id: int) -> None:
    for table in (EventRow, BuzzRow, RulingRow, PlayerRow, TeamRow):
        for row in ours.exec(select(table).where(table.match_id == match_id)).all():  # type: ignore[attr-defined]
            ours.delete(row)
    ours.flush()


def _copy_import(
    theirs: Session,
    ours: Session,
    imp: EventImportRow,
    event_id: int,
    their_teams: dict[tuple[int, str], EventTeamRow],
) -> int:
    row = EventImportRow(**_plain(imp, drop=("id", "event_id")), event_id=event_id)
    ours.add(row)
    ours.flush()
    buzzes = theirs.exec(
        select(PooledBuzzRow).where(PooledBuzzRow.import_id == imp.id).order_by(PooledBuzzRow.id)  # type: ignore[arg-type]
    ).all()
    for team_id in dict.fromkeys(b.team_id for b in buzzes):
        t = their_teams.get((imp.event_id, team_id))
        kind = t.kind if t else next(b.team_kind for b in buzzes if b.team_id == team_id)
        register_team(
            ours,
            event_id,
            team_id=team_id,
            name=t.name if t else team_id,
            kind=kind,
            model=t.model if t else None,
        )
    if buzzes:
        ours.execute(
            insert(PooledBuzzRow),
            [
                {**_plain(b, drop=("id",)), "event_id": event_id, "import_id": row.id}
                for b in buzzes
            ],
        )
    ours.flush()
    return len(buzzes)


def _copy_packets(theirs: Session, ours: Session, packet_ids: set[str]) -> list[str]:
    added = []
    for packet_id in sorted(packet_ids):
        source = theirs.get(PacketRow, packet_id)
        if source is None:
            continue
        here = ours.get(PacketRow, packet_id)
        if here is not None:
            if here.content_sha256 != source.content_sha256:
                raise RecordError(
                    f"packet {packet_id!r} differs between the two records; rename one of them"
                )
            continue
        ours.add(PacketRow(**_plain(source)))
        ours.flush()
        tossups = theirs.exec(select(TossupRow).where(TossupRow.packet_id == packet_id)).all()
        if tossups:
            ours.execute(insert(TossupRow), [_plain(t) for t in tossups])
        added.append(packet_id)
    ours.flush()
    return added


def _copy_model_rows(
    theirs: Session, ours: Session, packet_ids: set[str], table: Any, key: Sequence[str]
) -> int:
    """The rows of ``table`` (a model's steps, or its answers to bonus parts) on the merged
    packets that this record does not have yet, told apart by the ``key`` columns."""
    if not packet_ids:
        return 0
    where = table.packet_id.in_(sorted(packet_ids))
    have = {tuple(getattr(r, k) for k in key) for r in ours.exec(select(table).where(where)).all()}
    rows = [
        _plain(r, drop=("id",))
        for r in theirs.exec(select(table).where(where)).all()
        if tuple(getattr(r, k) for k in key) not in have
    ]
    if rows:
        ours.execute(insert(table), rows)
    return len(rows)


def _copy_model_steps(theirs: Session, ours: Session, packet_ids: set[str]) -> int:
    """The model steps on the merged packets that this record does not have yet."""
    key = ("model", "packet_id", "tossup_id", "step")
    return _copy_model_rows(theirs, ours, packet_ids, ModelStepRow, key)


def _copy_model_bonus_parts(theirs: Session, ours: Session, packet_ids: set[str]) -> int:
    """The models' answers to bonus parts of the merged packets that this record lacks."""
    key = ("model", "packet_id", "bonus_id", "part")
    return _copy_model_rows(theirs, ours, packet_ids, ModelBonusPartRow, key)
