"""The record of matches: events stored before anyone is told, matches rebuilt by replay.

``RecordedMatch.handle(command, now)`` asks the pure engine for the events, commits them (with
their ``buzz``/``ruling`` projections) in one transaction, and only then applies them to the
live match and returns them. If the commit fails, the live match is unchanged. If the process
dies, ``MatchStore.open(match_id)`` replays the committed events and the match goes on.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import unicodedata
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Float, Integer, bindparam, case, func, insert, or_, tuple_, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm.util import identity_key
from sqlmodel import Session, select

from grace_arena.core.blanks import shows_nothing
from grace_arena.core.commands import Command
from grace_arena.core.config import MatchConfig
from grace_arena.core.errors import IllegalCommand
from grace_arena.core.events import (
    AnswerGiven,
    BuzzAccepted,
    BuzzRefused,
    BuzzRepeated,
    Event,
    MatchEnded,
    PlayerJoined,
    Ruled,
    RulingCorrected,
    RulingUndone,
    TossupEnded,
    TossupOutcome,
    event_from_dict,
    event_to_dict,
)
from grace_arena.core.match import Match, MatchState
from grace_arena.core.standings import RESULT_EVENTS
from grace_arena.record.errors import RecordError
from grace_arena.record.models import (
    ArenaEventRow,
    BuzzRow,
    EventGameRow,
    EventPlayerRow,
    EventRoomRow,
    EventRow,
    EventTeamRow,
    MatchRow,
    PacketRow,
    PlayerRow,
    RulingRow,
    TeamRow,
    TossupRow,
    utcnow,
)
from grace_arena.record.notices import notify

if TYPE_CHECKING:
    from grace_arena.record.lease import Holder, LeaseClaim


def is_transient(exc: BaseException) -> bool:
    """Whether a failed write may succeed if tried again: the database, or the way to it, is
    unavailable for now (SQLite locked past its busy timeout, a PostgreSQL server restarting,
    a dropped connection), as opposed to a refusal (a lease lost, a constraint, a bug)."""
    from sqlalchemy import exc as sa

    if isinstance(exc, RecordError):
        return False
    if isinstance(exc, sa.DBAPIError) and exc.connection_invalidated:
        return True
    return isinstance(
        exc,
        sa.OperationalError | sa.InterfaceError | sa.TimeoutError | OSError | TimeoutError,
    )


class GameTaken(RecordError):
    """A scheduled match already has its match (another process created it first)."""


def no_such_event(key: str | int, names: Sequence[str]) -> RecordError:
    """Why ``key`` names no event of the record: the events there are, the closest names."""
    import difflib

    close = difflib.get_close_matches(str(key), list(names), n=2, cutoff=0.6)
    mean = f"did you mean {' or '.join(close)}? or " if close else ""
    return RecordError(
        f"no event {key!r} in the record (events: {', '.join(names) or 'none'}); "
        f"{mean}create one with `grace-arena event create`"
    )


#: The one room of a match of its own (its event's), by id.
ONE_GAME_ROOM = "match"


def add_one_game_room(
    session: Session,
    event_id: int,
    match_id: int,
    join_code: str,
    teams: Sequence[str],
    *,
    hashes: Sequence[str] = (),
) -> str:
    """Write the room of a match of its own: its event's one room (the match's join code, its
    moderator tokens' ``hashes``) and one game in it, the match (round 1). Every match is
    played in a room; a match of its own is a room with one game. Returns the room's id."""
    session.add(
        EventRoomRow(
            event_id=event_id,
            room_id=ONE_GAME_ROOM,
            name=f"match {match_id}",
            position=0,
            join_code=join_code,
            moderator_tokens=list(hashes),
        )
    )
    session.add(
        EventGameRow(
            event_id=event_id,
            round=1,
            room_id=ONE_GAME_ROOM,
            slot=0,
            teams=list(teams),
            match_id=match_id,
        )
    )
    return ONE_GAME_ROOM


class MatchStore:
    """Reads and writes matches in one database."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    # -- matches -------------------------------------------------------------------------------

    def create(
        self,
        config: MatchConfig,
        *,
        now: float,
        join_code: str | None = None,
        event: str | None = None,
        game_id: int | None = None,
        holder: Holder | None = None,
    ) -> RecordedMatch:
        """Store a new match in the event named ``event`` (made if new; by default an event
        of its own, ``match-<id>``); its teams are registered in the event.

        With ``game_id`` the match plays that scheduled match of the event, linked in the same
        transaction; if another process linked a match to it first, nothing is stored and
        :class:`GameTaken` is raised. With ``holder`` that server process takes the match's
        lease in the same transaction (:mod:`grace_arena.record.lease`)."""
        match, events = Match.create(config, now=now)
        with Session(self.engine) as session:
            own = event is None
            event_row = ensure_event(
                session, event or f"new-match-{secrets.token_hex(8)}", title=config.title
            )
            assert event_row.id is not None
            row = MatchRow(
                title=config.title,
                packet_id=config.packet_id,
                join_code=join_code,
                event_id=event_row.id,
            )
            session.add(row)
            session.flush()
            assert row.id is not None
            match_id = row.id
            if own:
                name = f"match-{match_id}"
                if session.exec(select(ArenaEventRow).where(ArenaEventRow.name == name)).first():
                    name = f"match-{match_id}-{event_row.id}"
                event_row.name = name
                event_row.meta = {"created_for_match": match_id}
                session.add(event_row)
            for team in config.teams:
                register_team(
                    session,
                    event_row.id,
                    team_id=team.id,
                    name=team.name,
                    kind=team.kind.value,
                    model=team.model,
                )
                if team.model:
                    register_player(
                        session,
                        event_row.id,
                        player_id=team.model_player,
                        team_id=team.id,
                        name=team.model,
                        kind="model",
                    )
            models: set[str] = set()
            for team in config.teams:
                session.add(
                    TeamRow(
                        match_id=match_id,
                        team_id=team.id,
                        name=team.name,
                        kind=team.kind.value,
                        model=team.model,
                    )
                )
                # two teams of one model (at two thresholds) share its player id: one row,
                # the first team's; each buzz row says its own team
                if team.model and team.model_player not in models:
                    models.add(team.model_player)
                    session.add(
                        PlayerRow(
                            match_id=match_id,
                            player_id=team.model_player,
                            team_id=team.id,
                            name=team.model,
                            kind="model",
                        )
                    )
            session.flush()
            _write_events(session, match_id, events)
            if own and join_code is not None:  # its room: one game, the match
                add_one_game_room(
                    session, event_row.id, match_id, join_code, [t.id for t in config.teams]
                )
            if game_id is not None:
                linked = session.execute(
                    update(EventGameRow)
                    .where(EventGameRow.id == game_id, EventGameRow.match_id.is_(None))  # type: ignore[union-attr]
                    .values(match_id=match_id)
                )
                if linked.rowcount != 1:  # type: ignore[attr-defined]
                    session.rollback()
                    raise GameTaken(f"scheduled match {game_id} has a match already")
            if holder is not None:
                from grace_arena.record.lease import insert_new_lease

                insert_new_lease(session, match_id, holder)
            notify(session, f"results {match_id}")  # (a match opened: an event's standings)
            session.commit()
        claim = None
        if holder is not None:
            from grace_arena.record.lease import LeaseClaim

            claim = LeaseClaim(holder, 1)
        return RecordedMatch(self, match_id, match, holder=holder, claim=claim)

    def open(
        self, match_id: int, *, holder: Holder | None = None, claim: LeaseClaim | None = None
    ) -> RecordedMatch:
        """Rebuild a match from its stored events. With ``claim`` (or a plain ``holder``),
        that server process must hold the match's lease
        (:func:`grace_arena.record.lease.acquire`) and every commit checks it still does."""
        events = self.events(match_id)
        if not events:
            raise RecordError(f"no match {match_id} in the record")
        holder = claim.holder if claim is not None else holder
        return RecordedMatch(self, match_id, Match.replay(events), holder=holder, claim=claim)

    def events(self, match_id: int, *, after: int = 0) -> list[Event]:
        with Session(self.engine) as session:
            rows = session.exec(
                select(EventRow)
                .where(EventRow.match_id == match_id, EventRow.seq > after)
                .order_by(EventRow.seq)
            ).all()
            try:
                return [event_from_dict(row.payload) for row in rows]
            except ValueError as exc:
                raise RecordError(
                    f"match {match_id}: a stored event cannot be read: {exc}"
                ) from exc

    def matches(self, *, event_ids: Sequence[int] | None = None) -> list[MatchRow]:
        """The record's matches by id (only those of these events, if given)."""
        with Session(self.engine) as session:
            query = select(MatchRow).order_by(MatchRow.id)  # type: ignore[arg-type]
            if event_ids is not None:
                query = query.where(MatchRow.event_id.in_(list(event_ids)))  # type: ignore[union-attr]
            return list(session.exec(query).all())

    # -- events --------------------------------------------------------------------------------

    def events_of_record(self) -> list[ArenaEventRow]:
        """Every event of the record, by id."""
        with Session(self.engine) as session:
            return list(session.exec(select(ArenaEventRow).order_by(ArenaEventRow.id)).all())  # type: ignore[arg-type]

    def find_events(self, names: Sequence[str]) -> list[ArenaEventRow]:
        """The events with these names (or ids), in the order given; an unknown one raises
        :class:`RecordError` listing the record's events."""
        known = self.events_of_record()
        by_name = {e.name: e for e in known}
        by_id = {str(e.id): e for e in known}
        out, missing = [], []
        for name in names:
            found = by_name.get(name) or by_id.get(name)
            if found is None:
                missing.append(name)
            elif found not in out:
                out.append(found)
        if missing:
            raise no_such_event(missing[0], [e.name for e in known])
        return out

    def event_teams(self, event_id: int) -> list[EventTeamRow]:
        with Session(self.engine) as session:
            return list(
                session.exec(select(EventTeamRow).where(EventTeamRow.event_id == event_id)).all()
            )

    def add_moderator_token(self, match_id: int, token_sha256: str) -> list[str]:
        """Record one more moderator token's hash for the match; returns the valid hashes.
        Every token issued for a match stays valid for as long as the match (a server
        restarted without the old token in memory issues another, and the moderator's
        terminal that holds the first goes on with it)."""
        with Session(self.engine) as session:
            row = session.get(MatchRow, match_id)
            if row is None:
                raise RecordError(f"no match {match_id}")
            kept = list(row.moderator_tokens or [])
            row.moderator_tokens = kept if token_sha256 in kept else [*kept, token_sha256]
            session.add(row)
            session.commit()
            return list(row.moderator_tokens)

    def moderator_tokens(self, match_id: int) -> list[str]:
        """The hashes of the match's valid moderator tokens."""
        with Session(self.engine) as session:
            row = session.get(MatchRow, match_id)
            return list(row.moderator_tokens or []) if row is not None else []

    def add_one_game_room(self, match_id: int) -> tuple[int, str] | None:
        """The room of a match of its own stored before its event had one (an older
        record): written now, as :meth:`create` writes it, its moderator tokens those of the
        match; ``(event id, room id)``, or None for a match that is no match of its own with
        a join code (an event's, an imported one)."""
        with Session(self.engine) as session:
            row = session.get(MatchRow, match_id)
            if row is None or row.join_code is None or row.event_id is None:
                return None
            game = session.exec(select(EventGameRow).where(EventGameRow.match_id == match_id))
            found = game.first()
            if found is not None:
                return (found.event_id, found.room_id) if found.room_id is not None else None
            event_row = session.get(ArenaEventRow, row.event_id)
            if event_row is None or "created_for_match" not in (event_row.meta or {}):
                return None
            teams = session.exec(select(TeamRow.team_id).where(TeamRow.match_id == match_id))
            room_id = add_one_game_room(
                session,
                row.event_id,
                match_id,
                row.join_code,
                list(teams.all()),
                hashes=list(row.moderator_tokens or []),
            )
            try:
                session.commit()
            except IntegrityError:  # another process wrote it first
                session.rollback()
            return row.event_id, room_id

    def match_row(self, match_id: int) -> MatchRow | None:
        with Session(self.engine) as session:
            return session.get(MatchRow, match_id)

    def find_by_join_code(self, code: str) -> MatchRow | None:
        with Session(self.engine) as session:
            return session.exec(select(MatchRow).where(MatchRow.join_code == code)).first()

    def buzzes(self, match_id: int) -> list[BuzzRow]:
        with Session(self.engine) as session:
            return list(
                session.exec(
                    select(BuzzRow).where(BuzzRow.match_id == match_id).order_by(BuzzRow.buzz_id)
                ).all()
            )

    def rulings(self, match_id: int) -> list[RulingRow]:
        with Session(self.engine) as session:
            return list(
                session.exec(
                    select(RulingRow).where(RulingRow.match_id == match_id).order_by(RulingRow.seq)
                ).all()
            )

    def append(
        self,
        match_id: int,
        events: Sequence[Event],
        *,
        holder: Holder | LeaseClaim | None = None,
        synced: bool = True,
    ) -> None:
        """Commit ``events`` (and their projections) in one transaction; with ``holder``, only
        while that process holds the match's lease (else :class:`LeaseLost`, nothing stored).
        ``synced``: see :meth:`append_many`."""
        self.append_many([(match_id, events, holder)], synced=synced)

    def append_many(
        self,
        batch: Sequence[tuple[int, Sequence[Event], Holder | LeaseClaim | None]],
        *,
        synced: bool = True,
    ) -> None:
        """Commit the events of several matches in one transaction: one disk sync for all the
        rooms a server is serving (a group commit). Each match's lease is checked as in
        :meth:`append`; if anything fails, nothing of the batch is stored.

        ``synced=False`` commits without a disk sync of its own on a SQLite record
        (:func:`unsynced_session`): the events are stored, and survive a crash of this
        process, but a power cut may lose them, together with every commit after them; the
        next synced commit makes them durable too. The server commits words revealed this
        way. On PostgreSQL every commit is synced."""
        fenced = sorted((m, h) for m, _, h in batch if h is not None)
        changed = sorted({m for m, events, _ in batch if _changes_result(events)})
        # (a notice holds 8,000 bytes: past some 1,000 matches, none is listed)
        notice = " ".join(["results", *map(str, changed if len(changed) <= 1000 else [])])
        if self.engine.dialect.name == "postgresql" and _rows_alone(batch, fenced):
            rows = _PlainRows()
            for match_id, events, _ in batch:
                rows.add(
                    match_id,
                    [ev for ev in events if not isinstance(ev, BuzzAccepted | BuzzRefused)],
                    [ev for ev in events if isinstance(ev, BuzzAccepted | BuzzRefused)],
                )
                for ev in events:
                    if isinstance(ev, Ruled):
                        rows.rule(match_id, ev)
            from grace_arena.record.one_statement import append_rows

            if append_rows(self.engine, fenced, rows.events, rows.buzzes, rows.rulings,
                           notice if changed else None):  # fmt: skip
                return
            # a lease not renewed, nothing written: the transaction below names the match
        with unsynced_session(self.engine) if not synced else Session(self.engine) as session:
            # the leases first, in ascending match order (as every transaction that locks
            # several lease rows does: grace_arena.record.lease)
            if fenced:
                from grace_arena.record.lease import fence_all

                fence_all(session, fenced)
            rows = _PlainRows()  # the matches' plain rows: one INSERT per table for all
            for match_id, events, _ in batch:
                _write_events(session, match_id, events, rows)
            rows.write(session)
            # the processes following results (an event's standings) read them at once
            if changed:
                notify(session, notice)
            session.commit()

    def event_count(self, match_id: int) -> int:
        with Session(self.engine) as session:
            return session.exec(
                select(func.count()).select_from(EventRow).where(EventRow.match_id == match_id)
            ).one()

    # -- packets -------------------------------------------------------------------------------

    def save_packet(self, packet, *, source: Path | None = None) -> None:
        """Store a packet's tossups (as loaded by ``grace_arena.core.packet``); idempotent.
        A packet stored before under the same id with other content is replaced."""
        with Session(self.engine) as session:
            save_packet_in(session, packet, source=source, replace=True)
            session.commit()


def _rows_alone(
    batch: Sequence[tuple[int, Sequence[Event], Holder | LeaseClaim | None]],
    fenced: Sequence[tuple[int, Holder | LeaseClaim]],
) -> bool:
    """Whether ``batch`` writes event, buzz and ruling rows and its buzzes' rulings, and
    nothing else (each match fenced once): what :mod:`grace_arena.record.one_statement`
    commits in one statement."""
    return (
        any(events for _, events, _ in batch)
        and len({m for m, _ in fenced}) == len(fenced)
        and all(
            not isinstance(ev, BuzzRepeated) and not _projects(ev)
            for _, events, _ in batch
            for ev in events
        )
    )


def _changes_result(events: Sequence[Event]) -> bool:
    return any(ev.type in RESULT_EVENTS or ev.type == "match_created" for ev in events)


def save_packet_in(
    session: Session,
    packet,
    *,
    source: Path | None = None,
    digest: str | None = None,
    replace: bool = False,
) -> bool:
    """Store ``packet`` in ``session`` (not committed); returns False when the same content
    is there already. Another packet under the same id is replaced when ``replace``, else it
    raises :class:`RecordError`."""
    if digest is None:
        raw = source.read_bytes() if source is not None and source.exists() else b""
        digest = hashlib.sha256(
            raw or json.dumps(packet.model_dump(mode="json"), sort_keys=True).encode()
        ).hexdigest()
    row = session.get(PacketRow, packet.packet.id)
    document = packet.model_dump(mode="json", exclude_none=True)
    if row is not None and (
        row.content_sha256 == digest or (row.meta or {}).get("document") == document
    ):
        return False  # the same packet (read back from the record, or from another file)
    if row is not None:
        if not replace:
            raise RecordError(
                f"packet {packet.packet.id!r} is already in the record with other content "
                f"(from {row.source_path or 'elsewhere'})"
            )
        for old in session.exec(
            select(TossupRow).where(TossupRow.packet_id == packet.packet.id)
        ).all():
            session.delete(old)
        session.flush()  # the tossups first: they refer to the packet
        session.delete(row)
        session.flush()
    session.add(
        PacketRow(
            id=packet.packet.id,
            title=packet.packet.title,
            source_path=str(source) if source else None,
            content_sha256=digest,
            # the header, and the whole packet so that a server sharing the record can read
            # it without the file (grace_arena.record.packets)
            meta={**packet.packet.model_dump(mode="json"), "document": document},
        )
    )
    session.flush()
    for i, tossup in enumerate(packet.tossups):
        tokens = tossup.tokens()
        session.add(
            TossupRow(
                packet_id=packet.packet.id,
                tossup_id=tossup.id,
                position=i,
                category=tossup.category,
                subcategory=tossup.subcategory,
                text=tossup.text,
                answer=tossup.answer,
                n_words=len(tokens.words),
                clue_ends=list(tokens.clue_ends),
                power_index=tokens.power_index,
            )
        )
    session.flush()
    return True


class RecordedMatch:
    """A live match whose every accepted command is committed before it takes effect."""

    def __init__(
        self,
        store: MatchStore,
        match_id: int,
        match: Match,
        *,
        holder: Holder | None = None,
        claim: LeaseClaim | None = None,
    ) -> None:
        self.store = store
        self.id = match_id
        self.match = match
        #: The server process that serves the match (its commits check its lease), if any.
        self.holder = holder
        #: Its claim on the match's lease (the generation it took), if known.
        self.claim = claim

    @property
    def fence(self) -> Holder | LeaseClaim | None:
        """What every commit of the match checks: the claim, or at least the holder."""
        return self.claim if self.claim is not None else self.holder

    def handle(self, command: Command, *, now: float) -> list[Event]:
        events = self.match.decide(command, now=now)  # raises IllegalCommand: nothing stored
        self.store.append(self.id, events, holder=self.fence)
        self.match.apply(events)
        return events

    def handle_many(
        self, commands: Sequence[Command], *, now: float
    ) -> list[list[Event] | IllegalCommand]:
        """Decide ``commands`` in order, each on the state the ones before it left, and commit
        all their events in one transaction; then they take effect together.

        Returns, per command, its events or the ``IllegalCommand`` that refused it (a refused
        command stores nothing and does not stop the others). If the commit fails, nothing
        takes effect and the error is raised.
        """
        results, state, every = self.decide_many(commands, now=now)
        if every:
            self.store.append(self.id, every, holder=self.fence)
            self.match.state = state
        return results

    def decide_many(
        self, commands: Sequence[Command], *, now: float
    ) -> tuple[list[list[Event] | IllegalCommand], MatchState, list[Event]]:
        """What :meth:`handle_many` decides, without storing or applying it: per command its
        events or refusal, the state they all lead to, and all their events in order. The
        caller commits the events, then sets ``self.match.state`` to that state."""
        scratch = Match(self.match.state)  # states are immutable: the live match is untouched
        results: list[list[Event] | IllegalCommand] = []
        for command in commands:
            try:
                events = scratch.decide(command, now=now)
            except IllegalCommand as exc:
                results.append(exc)
                continue
            scratch.apply(events)
            results.append(events)
        every = [ev for r in results if isinstance(r, list) for ev in r]
        return results, scratch.state, every

    @property
    def seq(self) -> int:
        return self.match.state.seq


# --------------------------------------------------------------------------------------------
# Events: matches grouped, teams and players registered once per event.


def ensure_event(session: Session, name: str, *, title: str | None = None) -> ArenaEventRow:
    """The event named ``name``, made (and flushed) if the record has none."""
    limit = ArenaEventRow.__table__.c.name.type.length  # type: ignore[attr-defined]
    if len(name) > limit:  # PostgreSQL would refuse it, SQLite keep it: refused on both
        raise RecordError(f"an event's name has at most {limit} characters ({len(name)} given)")
    row = session.exec(select(ArenaEventRow).where(ArenaEventRow.name == name)).first()
    if row is None:
        row = ArenaEventRow(name=name, title=title or name)
        session.add(row)
        session.flush()
    return row


def register_team(
    session: Session, event_id: int, *, team_id: str, name: str, kind: str, model: str | None
) -> EventTeamRow:
    """Register a team in an event, or check it against the team already registered under
    that id (a human team cannot come back as a model)."""
    row = session.get(EventTeamRow, (event_id, team_id))
    if row is None:
        row = EventTeamRow(event_id=event_id, team_id=team_id, name=name, kind=kind, model=model)
        session.add(row)
    elif row.kind != kind:
        raise RecordError(
            f"team {team_id!r} is registered in this event as a {row.kind} team, not {kind}"
        )
    return row


def player_name_key(name: str) -> str:
    """What makes two names one player's in a team: compatibility-normalised (NFKC),
    case-folded, spaces collapsed, characters that show nothing left out ("ALICE", "alice ",
    "Ａｌｉｃｅ", "Al\u200bice" are one). Letters of other scripts that look alike ("Аlice"
    with a Cyrillic А) stay other names."""
    text = unicodedata.normalize("NFKC", name).casefold()
    return " ".join("".join(c for c in text if not shows_nothing(c)).split())[:200]


def find_player(session: Session, event_id: int, team_id: str, name: str) -> str | None:
    """The id of the event's player of ``team_id`` with this name, if one is registered."""
    return session.exec(
        select(EventPlayerRow.player_id).where(
            EventPlayerRow.event_id == event_id,
            EventPlayerRow.team_id == team_id,
            EventPlayerRow.name_key == player_name_key(name),
        )
    ).first()


def register_player(
    session: Session,
    event_id: int,
    *,
    player_id: str,
    team_id: str,
    name: str,
    kind: str,
    distinct: bool = False,
) -> str:
    """Register a player of a team in an event; returns the id the name is registered under
    (flushed, not committed).

    A name is one player of a team: if another id has it already, that id is returned and
    nothing is added — or, with ``distinct`` (a player the record has under its own id
    already, e.g. a match replayed), ``player_id`` is registered under a key of its own (the
    name and its id) so that nothing is merged. Two registrations of one name at once (two
    phones, two server processes) find the same player: the second insert meets the unique
    key and reads the first."""
    if session.get(EventPlayerRow, (event_id, player_id)) is not None:
        return player_id
    key = player_name_key(name)
    for _attempt in range(2):
        existing = find_player(session, event_id, team_id, name)
        if existing is not None and not distinct:
            return existing
        row_key = key if existing is None else f"{key[: 199 - len(player_id)]}#{player_id}"
        row = EventPlayerRow(
            event_id=event_id,
            player_id=player_id,
            team_id=team_id,
            name=name,
            name_key=row_key,
            kind=kind,
        )
        if session.get_bind().dialect.name != "postgresql":
            # SQLite has one writer: a name registered by another process after this
            # transaction read makes its write fail as a whole (IntegrityError: the caller
            # tries again, as Rooms.register_player does)
            session.add(row)
            session.flush()
            return player_id
        try:
            with session.begin_nested():
                session.add(row)
        except IntegrityError:  # registered meanwhile by another transaction: read it
            continue
        return player_id
    raise RecordError(f"player {name!r} of team {team_id!r} could not be registered")


# --------------------------------------------------------------------------------------------
# Projections: what each event adds to the queryable tables, in the event's own transaction.


@contextmanager
def unsynced_session(engine: Engine) -> Iterator[Session]:
    """A session whose transaction commits without waiting for a disk sync of its own: SQLite
    in WAL mode only, where the record lives in this process.

    SQLite's log is written in order, and every synced commit (and every checkpoint) syncs it
    up to that commit: what is durable is always a prefix of the commits. An unsynced commit
    is therefore durable no later than the next synced one; a crash of this process loses
    nothing; a power cut or a crash of the system can lose it only with every commit after it,
    and with this process, so no later event of the same match can be stored after a hole.
    ``PRAGMA synchronous=NORMAL`` for this transaction, ``FULL`` again after it (outside a
    transaction both times; the connection is dropped rather than pooled if it cannot be set
    back). Anything else is a synced session: PostgreSQL runs in a server of its own, which
    could lose an asynchronous commit in a crash while this process goes on and stores the
    match's next events after the hole; SQLite without WAL (an in-memory database) has no
    such log."""
    if engine.dialect.name != "sqlite":
        with Session(engine) as session:
            yield session
        return
    with engine.connect() as conn:
        # The pragmas go straight to the driver's connection (sqlite3 runs them outside a
        # transaction): this runs for every word revealed in every room.
        driver = conn.connection.dbapi_connection
        assert driver is not None
        wal = conn.info.get("wal")
        if wal is None:
            mode = driver.execute("PRAGMA journal_mode").fetchone()
            wal = conn.info["wal"] = str(mode[0]).lower() == "wal"
        try:
            if wal:
                driver.execute("PRAGMA synchronous=NORMAL")
            with Session(bind=conn) as session:
                yield session
        finally:
            if wal:
                try:
                    conn.rollback()
                    if driver.in_transaction:  # a commit that failed in the driver
                        driver.rollback()
                    driver.execute("PRAGMA synchronous=FULL")
                except Exception:
                    conn.invalidate()  # never back in the pool unsynced
                    raise


def _write_events(
    session: Session, match_id: int, events: Sequence[Event], rows: _PlainRows | None = None
) -> None:
    # Most events add only their ``event`` row (a word revealed, a pause...), and a buzz, won
    # or refused, only its event and buzz rows, written before anything after it in the batch
    # looks them up: those are written with one multi-row INSERT per table, without the ORM's
    # unit of work (a word revealed in each of many rooms, several times a second, is the
    # commonest write; a buzz that takes the floor is the commit a whole room's lock-out
    # waits for). With ``rows``, a group commit's: the rows wait there, and the matches'
    # are written together (one INSERT per table for the whole batch, not one per match).
    # An event that changes other rows goes through the ORM, after what came before it. A
    # repeated buzz is no event of the record: the batch's repeats of each refusal are added
    # to its buzz row's count, once every row of the batch is written.
    #
    # A ruling, the commonest of the others (every buzz that takes the floor has one), goes
    # with them too: its event and ruling rows, and its buzz's ruling set from the rulings in
    # force by one UPDATE once they are written (was: the ORM's flush, a read of the buzz, a
    # read of its rulings and an update: a round trip each to a server record).
    own = rows is None
    pending = _PlainRows() if rows is None else rows
    plain: list[Event] = []
    buzzes: list[BuzzAccepted | BuzzRefused] = []
    repeated: dict[int, tuple[int, float]] = {}  # buzz id -> (presses, last wall time)
    for ev in events:
        if isinstance(ev, BuzzRepeated):
            wall = ev.received_wall if ev.received_wall is not None else ev.t
            n, last = repeated.get(ev.buzz_id, (0, wall))
            repeated[ev.buzz_id] = (n + 1, max(last, wall))
            continue
        if isinstance(ev, BuzzAccepted | BuzzRefused):
            buzzes.append(ev)
            continue
        if isinstance(ev, Ruled):
            plain.append(ev)
            pending.rule(match_id, ev)
            continue
        if not _projects(ev):
            plain.append(ev)
            continue
        pending.add(match_id, plain, buzzes)
        pending.write(session)
        plain, buzzes = [], []
        session.add(
            EventRow(match_id=match_id, seq=ev.seq, type=ev.type, t=ev.t, payload=event_to_dict(ev))
        )
        _project(session, match_id, ev)
        session.flush()
    pending.add(match_id, plain, buzzes)
    if own or repeated:
        pending.write(session)
    if repeated:
        _count_repeats(session, match_id, repeated)


class _PlainRows:
    """Event, buzz and ruling rows to write with one multi-row INSERT per table, and the
    buzzes whose ruling to set after (:func:`_write_events`)."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.buzzes: list[dict[str, Any]] = []
        self.rulings: list[dict[str, Any]] = []
        self.ruled: set[tuple[int, int]] = set()  # (match id, buzz id)

    def rule(self, match_id: int, ev: Ruled) -> None:
        self.rulings.append(
            {"match_id": match_id, "seq": ev.seq, "buzz_id": ev.buzz_id,
             "tossup_id": ev.tossup_id, "team_id": ev.team, "ruling": ev.ruling.value,
             "points": ev.points, "power": ev.power, "by": ev.by, "undone_seq": None}
        )  # fmt: skip
        self.ruled.add((match_id, ev.buzz_id))

    def add(
        self, match_id: int, plain: list[Event], buzzes: list[BuzzAccepted | BuzzRefused]
    ) -> None:
        stored_at = utcnow()
        self.events += [
            {"match_id": match_id, "seq": ev.seq, "type": ev.type, "t": ev.t,
             "payload": event_to_dict(ev), "stored_at": stored_at}
            for ev in sorted([*plain, *buzzes], key=lambda e: e.seq)
        ]  # fmt: skip
        self.buzzes += [_buzz_row_values(match_id, ev) for ev in buzzes]

    def write(self, session: Session) -> None:
        if not self.events:
            return
        session.flush()
        connection = session.connection()
        connection.execute(insert(EventRow.__table__), self.events)  # type: ignore[attr-defined]
        if self.buzzes:
            connection.execute(insert(BuzzRow.__table__), self.buzzes)  # type: ignore[attr-defined]
        if self.rulings:
            connection.execute(insert(RulingRow.__table__), self.rulings)  # type: ignore[attr-defined]
            _set_buzz_rulings(session, sorted(self.ruled))
        self.events, self.buzzes, self.rulings, self.ruled = [], [], [], set()


_BUZZ = BuzzRow.__table__.c  # type: ignore[attr-defined]
#: Adds ``n`` repeated presses, the last at ``wall`` (the latest one wins: a compensated race
#: may decide presses out of their arrival order), to a refused buzz's row.
_COUNT_REPEATS = (
    update(BuzzRow.__table__)  # type: ignore[attr-defined]
    .where(_BUZZ.match_id == bindparam("m", type_=Integer))
    .where(_BUZZ.buzz_id == bindparam("b", type_=Integer))
    .values(
        repeats=_BUZZ.repeats + bindparam("n", type_=Integer),
        last_repeat_wall=case(
            (
                or_(
                    _BUZZ.last_repeat_wall.is_(None),
                    _BUZZ.last_repeat_wall < bindparam("wall", type_=Float),
                ),
                bindparam("wall", type_=Float),
            ),
            else_=_BUZZ.last_repeat_wall,
        ),
    )
)


def _count_repeats(session: Session, match_id: int, repeated: dict[int, tuple[int, float]]) -> None:
    """One UPDATE (executed for each refusal repeated) of the batch's repeated presses."""
    connection = session.connection()
    result = connection.execute(
        _COUNT_REPEATS,
        [{"m": match_id, "b": b, "n": n, "wall": wall} for b, (n, wall) in repeated.items()],
    )
    if connection.dialect.supports_sane_multi_rowcount and result.rowcount != len(repeated):
        raise RecordError(f"match {match_id}: a press repeats a buzz the record does not hold")


def _projects(ev: Event) -> bool:
    """Whether ``ev`` changes rows other than its own ``event`` row (see :func:`_project`;
    a buzz's own row is written with its event: :class:`_PlainRows`)."""
    if isinstance(ev, TossupEnded):
        return ev.outcome is TossupOutcome.THROWN_OUT
    return isinstance(ev, PlayerJoined | RulingUndone | MatchEnded | AnswerGiven
                      | RulingCorrected)  # fmt: skip


def _buzz_row_values(match_id: int, ev: BuzzAccepted | BuzzRefused) -> dict[str, Any]:
    """A buzz's row as one INSERT's values: every buzz gives the same columns (a multi-row
    INSERT's rows have one set of columns), the others taking their defaults."""
    if isinstance(ev, BuzzAccepted):
        return {
            **_buzz_values(match_id, ev, "won"),
            "interrupt": ev.interrupt,
            "answer": ev.answer,
            "suggestion": ev.suggestion,
            "model_confidence": ev.confidence,
            "holder_buzz_id": None,
            "margin": None,
            "thrown_out": False,
        }
    return {
        **_buzz_values(match_id, ev, ev.reason.value),
        "interrupt": None,
        "answer": None,
        "suggestion": None,
        "model_confidence": None,
        "holder_buzz_id": ev.holder_buzz_id,
        "margin": ev.margin,
        "thrown_out": False,
    }


def _buzz_values(match_id: int, ev: BuzzAccepted | BuzzRefused, outcome: str) -> dict[str, Any]:
    return {
        "match_id": match_id,
        "buzz_id": ev.buzz_id,
        "event_seq": ev.seq,
        "tossup_id": ev.tossup_id,
        "team_id": ev.team,
        "player_id": ev.player,
        "player_kind": ev.kind.value,
        "word_index": ev.word_index,
        "clue_index": ev.clue_index,
        "char_offset": ev.char_offset,
        "fraction_revealed": ev.fraction,
        "received_wall": ev.timing.received_wall,
        "received_mono": ev.timing.received_mono,
        "client_press": ev.timing.client_press,
        "clock_offset": ev.timing.clock_offset,
        "rtt": ev.timing.rtt,
        "credit": ev.timing.credit,
        "outcome": outcome,
    }


def _project(session: Session, match_id: int, ev: Event) -> None:
    match ev:
        case PlayerJoined():
            if session.get(PlayerRow, (match_id, ev.player)) is None:
                match_row = session.get(MatchRow, match_id)
                if match_row is not None and match_row.event_id is not None:
                    register_player(
                        session,
                        match_row.event_id,
                        player_id=ev.player,
                        team_id=ev.team,
                        name=ev.name,
                        kind=ev.kind.value,
                        distinct=True,
                    )
                session.add(
                    PlayerRow(
                        match_id=match_id,
                        player_id=ev.player,
                        team_id=ev.team,
                        name=ev.name,
                        kind=ev.kind.value,
                    )
                )
        case RulingUndone():
            ruling = session.get(RulingRow, (match_id, ev.ruled_seq))
            if ruling is None:
                raise RecordError(f"match {match_id}: undo of unknown ruling {ev.ruled_seq}")
            ruling.undone_seq = ev.seq
            session.add(ruling)
            _set_buzz_rulings(session, [(match_id, ev.buzz_id)])
        case RulingCorrected():
            # the ruling amended stays, superseded by the correction (its ``undone_seq``); the
            # buzz row shows the ruling in force, and who it is credited to
            amended = session.get(RulingRow, (match_id, ev.amends))
            if amended is None:
                raise RecordError(f"match {match_id}: correction of unknown ruling {ev.amends}")
            amended.undone_seq = ev.seq
            session.add(amended)
            session.add(
                RulingRow(
                    match_id=match_id, seq=ev.seq, buzz_id=ev.buzz_id, tossup_id=ev.tossup_id,
                    team_id=ev.team, ruling=ev.ruling.value, points=ev.points, power=ev.power,
                    by=ev.by,
                )
            )  # fmt: skip
            buzz = session.get(BuzzRow, (match_id, ev.buzz_id))
            if buzz is not None and (buzz.team_id, buzz.player_id) != (ev.team, ev.player):
                buzz.team_id, buzz.player_id = ev.team, ev.player
                session.add(buzz)
            _set_buzz_rulings(session, [(match_id, ev.buzz_id)])
        case MatchEnded():
            row = session.get(MatchRow, match_id)
            if row is not None:
                row.ended_at = datetime.fromtimestamp(ev.t, UTC)
                session.add(row)
        case AnswerGiven():
            buzz = session.get(BuzzRow, (match_id, ev.buzz_id))
            if buzz is not None:
                buzz.answer = ev.text
                buzz.suggestion = ev.suggestion
                session.add(buzz)
        case TossupEnded(outcome=TossupOutcome.THROWN_OUT):
            session.flush()
            for buzz in session.exec(
                select(BuzzRow).where(
                    BuzzRow.match_id == match_id, BuzzRow.tossup_id == ev.tossup_id
                )
            ).all():
                buzz.thrown_out = True
                session.add(buzz)
        case _:
            pass


_RULING = RulingRow.__table__.c  # type: ignore[attr-defined]


def _in_force(*columns):
    """The rulings in force on the buzz row being updated (correlated to it)."""
    return select(*columns).where(
        _RULING.match_id == _BUZZ.match_id,
        _RULING.buzz_id == _BUZZ.buzz_id,
        _RULING.undone_seq.is_(None),
    )


#: A buzz row shows the last ruling in force on it, its power, and the points of all the
#: rulings in force (none in force: NULL, as before any ruling).
_SET_BUZZ_RULINGS = update(BuzzRow.__table__).values(  # type: ignore[attr-defined]
    ruling=_in_force(_RULING.ruling).order_by(_RULING.seq.desc()).limit(1).scalar_subquery(),
    power=_in_force(_RULING.power).order_by(_RULING.seq.desc()).limit(1).scalar_subquery(),
    points=_in_force(func.sum(_RULING.points)).scalar_subquery(),
)


def _set_buzz_rulings(session: Session, buzzes: list[tuple[int, int]]) -> None:
    """Set each buzz's ruling (``(match id, buzz id)``) from the rulings in force on it, in
    one statement: the buzz row shows the last ruling in force, the history is in ``ruling``.
    What the session holds is written first."""
    session.flush()
    result = session.connection().execute(
        _SET_BUZZ_RULINGS.where(tuple_(_BUZZ.match_id, _BUZZ.buzz_id).in_(buzzes))
    )
    if result.rowcount != len(buzzes):  # type: ignore[attr-defined]
        for match_id, buzz_id in buzzes:
            if session.get(BuzzRow, (match_id, buzz_id)) is None:
                raise RecordError(f"match {match_id}: ruling on unknown buzz {buzz_id}")
    for key in buzzes:  # a row this session holds is read again when next used
        held = session.identity_map.get(identity_key(BuzzRow, key))
        if held is not None:
            session.expire(held)
