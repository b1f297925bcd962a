"""Merging another record into an event of this one (``grace-arena import record URL``).

Two sites of one competition, or a club's laptop and a lab's server, each keep a record; the
analysis wants them as one body of data. Every match of the other record (with every event,
buzz, ruling, team and player row), every pooled import and the packets and model steps they
use come over into one event here, in one transaction:

* a team keeps its id, so ``red`` at both sites is one team of the event (a team registered
  as human at one site and as a model at the other is an error, and nothing is written);
* a match is known by the SHA-256 of its stored events, a pooled import by its own key, so
  merging the same record again (or a copy of it, or a record that holds the first one's
  matches) adds nothing;
* match ids are renumbered here; where a match came from is kept in its ``source_meta``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import insert
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from grace_arena.record.models import (
    ArenaEventRow,
    BuzzRow,
    EventImportRow,
    EventRow,
    EventTeamRow,
    MatchRow,
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
    imports: int = 0
    pooled_buzzes: int = 0
    packets: list[str] = field(default_factory=list)
    model_steps: int = 0
    skipped_matches: int = 0
    skipped_imports: int = 0


def _plain(row: Any, *, drop: Sequence[str] = ()) -> dict[str, Any]:
    return {k: v for k, v in row.model_dump().items() if k not in drop}


def match_key(events: Sequence[EventRow]) -> str:
    """A match's identity across records: the SHA-256 of its stored events, in order."""
    digest = hashlib.sha256()
    for ev in events:
        digest.update(json.dumps([ev.seq, ev.type, ev.t, ev.payload], sort_keys=True).encode())
        digest.update(b"\n")
    return digest.hexdigest()


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
            known_matches = set()
            for here in ours.exec(select(MatchRow).where(MatchRow.event_id == target.id)).all():
                if here.source == "record" and here.source_key:
                    known_matches.add(here.source_key)
                else:  # played here, or merged from elsewhere into this one
                    known_matches.add(
                        match_key(
                            ours.exec(
                                select(EventRow)
                                .where(EventRow.match_id == here.id)
                                .order_by(EventRow.seq)  # type: ignore[arg-type]
                            ).all()
                        )
                    )
            packets_needed: set[str] = set()
            for m in their_matches:
                assert m.id is not None
                events = theirs.exec(
                    select(EventRow).where(EventRow.match_id == m.id).order_by(EventRow.seq)  # type: ignore[arg-type]
                ).all()
                key = match_key(events)
                if key in known_matches:
                    result.skipped_matches += 1
                    continue
                known_matches.add(key)
                new_id = _copy_match(theirs, ours, m, events, key, target.id, event_names)
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
) -> int:
    meta = {
        "merged_from": {
            "match": m.id,
            "event": event_names.get(m.event_id),
            "source": m.source,
            "source_key": m.source_key,
        },
        **(m.source_meta or {}),
    }
    row = MatchRow(
        title=m.title,
        packet_id=m.packet_id,
        created_at=m.created_at,
        ended_at=m.ended_at,
        join_code=None,  # a join code belongs to the server that made it
        event_id=event_id,
        source="record",
        source_key=key,
        source_meta=meta,
    )
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
            ours, event_id, player_id=p.player_id, team_id=p.team_id, name=p.name, kind=p.kind
        )
    if events:
        ours.execute(insert(EventRow), [{**_plain(e), "match_id": new_id} for e in events])
    ours.flush()
    return new_id


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


def _copy_model_steps(theirs: Session, ours: Session, packet_ids: set[str]) -> int:
    """The model steps on the merged packets that this record does not have yet."""
    if not packet_ids:
        return 0
    where = ModelStepRow.packet_id.in_(sorted(packet_ids))  # type: ignore[attr-defined]
    have = {
        (s.model, s.packet_id, s.tossup_id, s.step)
        for s in ours.exec(select(ModelStepRow).where(where)).all()
    }
    rows = [
        _plain(s, drop=("id",))
        for s in theirs.exec(select(ModelStepRow).where(where)).all()
        if (s.model, s.packet_id, s.tossup_id, s.step) not in have
    ]
    if rows:
        ours.execute(insert(ModelStepRow), rows)
    return len(rows)
