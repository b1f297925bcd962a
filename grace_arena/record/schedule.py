"""An event run live, in the record: its teams, rooms, rounds and scheduled matches, and its
standings.

``create_event`` registers the teams (human, or model players with their buzz policy) and,
optionally, players. ``set_schedule`` stores rooms, rounds (a packet each) and the scheduled
matches (``grace_arena.core.schedule`` pairs the teams); it is refused once a round has
started, that is once any of the event's scheduled matches exists in the record. A room's
join code stays the same from round to round. ``load_plan`` reads it all back as plain
objects; ``match_results`` and ``event_standings`` give the standings from the record, so
that any server process sharing the record shows the same.
"""

from __future__ import annotations

import re
import secrets
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.engine import Engine
from sqlmodel import Session, func, select

from grace_arena.core import schedule as pairing
from grace_arena.core.events import Event, MatchCreated, event_from_dict, tossups_heard
from grace_arena.core.standings import (
    MatchResult,
    Standing,
    TeamInfo,
    TeamLine,
    bonus_lines,
    standings,
    unrated_tossups,
)
from grace_arena.record.models import (
    ArenaEventRow,
    BuzzRow,
    EventGameRow,
    EventPlayerRow,
    EventRoomRow,
    EventRoundRow,
    EventRow,
    EventTeamRow,
    MatchRow,
    PacketRow,
)
from grace_arena.record.store import RecordError, ensure_event, no_such_event, player_name_key

#: Join codes: characters people read off a screen (no 0/O, no 1/I)...
JOIN_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
#: ...six of them: 32**6, about 1.07e9 codes. At the rate a server lets one address guess
#: (grace_arena.server.guard: a burst of 20, then one every 2 s) a guesser needs some 34 years
#: on average to hit one given live code ((N + 1) / 2 guesses), and 6 years to hit any of ten
#: (N / 11); all of them, 68 years.
JOIN_CODE_LENGTH = 6


@dataclass(frozen=True)
class TeamEntry:
    """A team of an event: human, or a model player with its buzz policy."""

    id: str
    name: str
    kind: str = "human"
    model: str | None = None
    threshold: float | None = None
    confidence: str | None = None


@dataclass(frozen=True)
class PlayerEntry:
    id: str
    team: str
    name: str


@dataclass(frozen=True)
class RoomPlan:
    id: str
    name: str
    join_code: str
    position: int


@dataclass(frozen=True)
class RoundPlan:
    number: int
    packet_id: str
    tossup_ids: tuple[str, ...] | None = None


@dataclass(frozen=True)
class GamePlan:
    """A scheduled match (or a bye) and, once created, its match in the record."""

    id: int
    round: int
    room_id: str | None
    slot: int
    teams: tuple[str, ...]
    match_id: int | None = None
    ended: bool = False

    @property
    def bye(self) -> bool:
        return len(self.teams) == 1


@dataclass(frozen=True)
class EventPlan:
    """Everything the record holds of how an event is run."""

    id: int
    name: str
    title: str
    teams: tuple[TeamEntry, ...]
    players: tuple[PlayerEntry, ...] = ()
    rooms: tuple[RoomPlan, ...] = ()
    rounds: tuple[RoundPlan, ...] = ()
    games: tuple[GamePlan, ...] = ()
    meta: Mapping[str, Any] = field(default_factory=dict)

    def team(self, team_id: str) -> TeamEntry | None:
        return next((t for t in self.teams if t.id == team_id), None)

    def room(self, key: str) -> RoomPlan | None:
        """The room with this id, name or join code (codes in any case)."""
        for room in self.rooms:
            if key in (room.id, room.name) or key.strip().upper() == room.join_code:
                return room
        return None

    def round_(self, number: int) -> RoundPlan | None:
        return next((r for r in self.rounds if r.number == number), None)

    def games_in(self, room_id: str) -> list[GamePlan]:
        """The room's matches in the order they are played."""
        return sorted(
            (g for g in self.games if g.room_id == room_id), key=lambda g: (g.round, g.slot)
        )

    def current_game(self, room_id: str) -> GamePlan | None:
        """The room's match being played or to be played next (None: the room is done)."""
        return next((g for g in self.games_in(room_id) if not g.ended), None)

    def next_game_of(self, team_id: str) -> GamePlan | None:
        """The team's first scheduled match not yet over (its room's current one or later)."""
        return next(
            (
                g
                for g in sorted(self.games, key=lambda g: (g.round, g.slot))
                if not g.bye and not g.ended and team_id in g.teams
            ),
            None,
        )

    def blockers(self, game: GamePlan) -> list[GamePlan]:
        """The matches of earlier rounds not over yet that share a team with ``game``: it
        starts only after them, so that no team plays two matches at once or out of order."""
        return sorted(
            (
                g
                for g in self.games
                if not g.bye
                and not g.ended
                and g.round < game.round
                and set(g.teams) & set(game.teams)
            ),
            key=lambda g: (g.round, g.slot),
        )

    def started_rounds(self) -> list[int]:
        return sorted({g.round for g in self.games if g.match_id is not None})

    @property
    def defaults(self) -> dict[str, Any]:
        """Match settings shared by the event's matches (scoring, reading mode, pace)."""
        return dict(self.meta.get("defaults") or {})

    def team_infos(self) -> list[TeamInfo]:
        return [TeamInfo(t.id, t.name, t.kind) for t in self.teams]


# --------------------------------------------------------------------------------------------
# Teams


def create_event(
    engine: Engine,
    name: str,
    *,
    title: str | None = None,
    teams: Sequence[TeamEntry],
    players: Sequence[tuple[str, str]] = (),
    defaults: Mapping[str, Any] | None = None,
    replace: bool = False,
) -> EventPlan:
    """Register an event with its teams and players (``(team id, name)`` pairs).

    An event of that name that exists already is an error, unless ``replace``: then its teams,
    players and settings are replaced, which is refused once a round has started. ``defaults``
    are the settings of its matches (``MatchSettings``: reading mode, pace, scoring), refused
    out of their ranges as a match's set-up is: a match that they make could not start. Its
    name and title are one line each (files such as SQBS's carry them a line each)."""
    from grace_arena.protocol import well_formed_title

    for what, text in (("name", name), ("title", title or "")):
        try:
            well_formed_title(text)
        except ValueError as exc:
            raise RecordError(f"the event's {what} {text!r}: {exc}") from None
    _check_teams(teams)
    defaults = _match_settings(defaults or {})
    by_id = {t.id for t in teams}
    seen: set[tuple[str, str]] = set()
    for team, player in players:
        if team not in by_id:
            raise RecordError(f"player {player!r}: no team {team!r} in the event")
        if not player.strip():
            raise RecordError(f"a player of team {team!r} has no name")
        if (team, player_name_key(player)) in seen:
            raise RecordError(f"player {player.strip()!r} is named twice in team {team!r}")
        seen.add((team, player_name_key(player)))
    with Session(engine) as session:
        row = session.exec(select(ArenaEventRow).where(ArenaEventRow.name == name)).first()
        if row is not None:
            assert row.id is not None
            if not replace:
                raise RecordError(
                    f"event {name!r} exists already (`grace-arena event show {name}`); "
                    "give another name, or --replace to redefine its teams before it starts"
                )
            if row.meta.get("created_for_match") or _has_matches(session, row.id):
                raise RecordError(
                    f"event {name!r} has matches already: its teams can no longer be replaced"
                )
            for old in [
                *session.exec(select(EventPlayerRow).where(EventPlayerRow.event_id == row.id)),
                *session.exec(select(EventTeamRow).where(EventTeamRow.event_id == row.id)),
            ]:
                session.delete(old)
            session.flush()
        row = ensure_event(session, name, title=title or name)
        assert row.id is not None
        row.title = title or row.title
        row.meta = {**(row.meta or {}), "live": True, "defaults": defaults}
        session.add(row)
        for position, team in enumerate(teams):
            session.add(
                EventTeamRow(
                    event_id=row.id,
                    team_id=team.id,
                    name=team.name,
                    kind=team.kind,
                    model=team.model,
                    threshold=team.threshold,
                    confidence=team.confidence,
                    position=position,
                )
            )
        for team, player in players:
            session.add(
                EventPlayerRow(
                    event_id=row.id,
                    player_id=f"p-{secrets.token_hex(4)}",
                    team_id=team,
                    name=player.strip(),
                    name_key=player_name_key(player),
                    kind="human",
                )
            )
        session.commit()
        event_id = row.id
    return load_plan(engine, event_id)


def _match_settings(given: Mapping[str, Any]) -> dict[str, Any]:
    from pydantic import ValidationError

    from grace_arena.protocol import MatchSettings

    try:
        settings = MatchSettings.model_validate(dict(given))
    except ValidationError as exc:
        error = exc.errors()[0]
        field, message = ".".join(str(p) for p in error["loc"]), error["msg"]
        said = message if message.startswith(field) else f"{field}: {message}"
        raise RecordError(f"the event's match settings: {said}") from None
    return settings.model_dump(exclude_unset=True)


def _check_teams(teams: Sequence[TeamEntry]) -> None:
    if len(teams) < 2:
        raise RecordError(f"an event needs at least two teams, got {len(teams)}")
    ids = [t.id for t in teams]
    names = [t.name.casefold() for t in teams]
    for label, values in (("ids", ids), ("names", names)):
        doubles = sorted({v for v in values if values.count(v) > 1})
        if doubles:
            raise RecordError(f"team {label} must differ: {', '.join(doubles)} twice")
    for t in teams:
        if t.kind not in ("human", "model"):
            raise RecordError(f"team {t.name!r}: kind must be human or model, not {t.kind!r}")
        if (t.kind == "model") != bool(t.model):
            raise RecordError(f"team {t.name!r}: a model team names its model, a human one not")
        if t.threshold is not None and not 0.0 <= t.threshold <= 1.0:
            raise RecordError(f"team {t.name!r}: threshold {t.threshold} is not in [0, 1]")
        if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", t.id):
            raise RecordError(f"team id {t.id!r}: letters, digits, - and _ only (64 at most)")


def _has_matches(session: Session, event_id: int) -> bool:
    return (
        session.exec(select(MatchRow.id).where(MatchRow.event_id == event_id)).first() is not None
    )


# --------------------------------------------------------------------------------------------
# Schedule


def set_schedule(
    engine: Engine,
    name: str,
    *,
    rooms: Sequence[str],
    rounds: Sequence[RoundPlan],
    games: Sequence[pairing.Game],
    meta: Mapping[str, Any] | None = None,
) -> EventPlan:
    """Store the event's rooms, rounds and scheduled matches, replacing any schedule it had.

    Refused once a round has started (a scheduled match exists in the record). Rooms that
    keep their name keep their join code. Every round's packet must be in the record."""
    plan = load_plan(engine, name)
    started = [g for g in plan.games if g.match_id is not None]
    if started:
        first = min(started, key=lambda g: (g.round, g.slot))
        raise RecordError(
            f"event {name!r}: round {first.round} has started (match {first.match_id} in "
            f"{_room_label(plan, first.room_id)}): its schedule can no longer change"
        )
    numbers = [r.number for r in rounds]
    if numbers != list(range(1, len(rounds) + 1)):
        raise RecordError(f"rounds must be numbered 1..{len(rounds)}, got {numbers}")
    known = {t.id for t in plan.teams}
    for g in games:
        unknown = sorted(set(g.teams) - known)
        if unknown:
            raise RecordError(f"round {g.round}: teams {unknown} are not in event {name!r}")
        if not 1 <= g.round <= len(rounds):
            raise RecordError(f"a match in round {g.round}, but the event has {len(rounds)}")
        if not g.bye and g.room not in rooms:
            raise RecordError(f"round {g.round}: no room {g.room!r}")
    if len(set(rooms)) != len(rooms) or not rooms:
        raise RecordError(f"rooms must be named, each once: {list(rooms)}")
    with Session(engine) as session:
        packets = set(session.exec(select(PacketRow.id)).all())
        missing = sorted({r.packet_id for r in rounds} - packets)
        if missing:
            raise RecordError(f"packets {missing} are not in the record (load them first)")
        old_rooms = {
            r.name: r
            for r in session.exec(select(EventRoomRow).where(EventRoomRow.event_id == plan.id))
        }
        for table in (EventGameRow, EventRoundRow, EventRoomRow):
            for old in session.exec(select(table).where(table.event_id == plan.id)):
                session.delete(old)
        session.flush()
        codes = set(session.exec(select(EventRoomRow.join_code)).all())
        codes |= {c for c in session.exec(select(MatchRow.join_code)).all() if c}
        for position, room in enumerate(rooms):
            kept = old_rooms.get(room)
            code = kept.join_code if kept is not None else new_join_code(codes)
            codes.add(code)
            session.add(
                EventRoomRow(
                    event_id=plan.id,
                    room_id=room,
                    name=room,
                    position=position,
                    join_code=code,
                    moderator_tokens=kept.moderator_tokens if kept is not None else None,
                )
            )
        for r in rounds:
            session.add(
                EventRoundRow(
                    event_id=plan.id,
                    number=r.number,
                    packet_id=r.packet_id,
                    tossup_ids=list(r.tossup_ids) if r.tossup_ids is not None else None,
                )
            )
        for g in games:
            session.add(
                EventGameRow(
                    event_id=plan.id,
                    round=g.round,
                    room_id=g.room,
                    slot=g.slot,
                    teams=list(g.teams),
                )
            )
        row = session.get(ArenaEventRow, plan.id)
        assert row is not None
        row.meta = {**(row.meta or {}), "schedule": dict(meta or {})}
        session.add(row)
        session.commit()
    return load_plan(engine, plan.id)


def new_join_code(taken: Iterable[str] = ()) -> str:
    """A random join code (:data:`JOIN_CODE_LENGTH` characters) not in ``taken``."""
    taken = set(taken)
    while True:
        code = "".join(secrets.choice(JOIN_ALPHABET) for _ in range(JOIN_CODE_LENGTH))
        if code not in taken:
            return code


def _room_label(plan: EventPlan, room_id: str | None) -> str:
    room = plan.room(room_id) if room_id else None
    return f"room {room.name}" if room else "no room"


# --------------------------------------------------------------------------------------------
# Reading it back


def find_event_row(session: Session, key: str | int) -> ArenaEventRow:
    """The event with this name or id; an unknown one raises :class:`RecordError`."""
    row = None
    # An id is a 32-bit integer on PostgreSQL, and no name holds NUL: what cannot be either is
    # no event, not a question the record would answer with an error.
    number = isinstance(key, int) or (isinstance(key, str) and key.isascii() and key.isdigit())
    if number and 1 <= int(key) < 2**31:
        row = session.get(ArenaEventRow, int(key))
    if row is None and isinstance(key, str) and "\x00" not in key:
        row = session.exec(select(ArenaEventRow).where(ArenaEventRow.name == key)).first()
    if row is None:
        live = session.exec(select(ArenaEventRow.name).order_by(ArenaEventRow.id)).all()
        raise no_such_event(key, list(live))
    return row


def load_plan(engine: Engine, key: str | int) -> EventPlan:
    with Session(engine) as session:
        row = find_event_row(session, key)
        event_id = row.id
        assert event_id is not None
        teams = session.exec(
            select(EventTeamRow)
            .where(EventTeamRow.event_id == event_id)
            .order_by(EventTeamRow.position, EventTeamRow.team_id)  # type: ignore[arg-type]
        ).all()
        players = session.exec(
            select(EventPlayerRow)
            .where(EventPlayerRow.event_id == event_id, EventPlayerRow.kind == "human")
            .order_by(EventPlayerRow.team_id, EventPlayerRow.name)  # type: ignore[arg-type]
        ).all()
        rooms = session.exec(
            select(EventRoomRow)
            .where(EventRoomRow.event_id == event_id)
            .order_by(EventRoomRow.position)  # type: ignore[arg-type]
        ).all()
        rounds = session.exec(
            select(EventRoundRow)
            .where(EventRoundRow.event_id == event_id)
            .order_by(EventRoundRow.number)  # type: ignore[arg-type]
        ).all()
        games = session.exec(
            select(EventGameRow)
            .where(EventGameRow.event_id == event_id)
            .order_by(EventGameRow.round, EventGameRow.room_id, EventGameRow.slot)  # type: ignore[arg-type]
        ).all()
        position = {r.room_id: r.position for r in rooms}
        match_ids = [g.match_id for g in games if g.match_id is not None]
        ended = (
            set(
                session.exec(
                    select(MatchRow.id).where(
                        MatchRow.id.in_(match_ids),  # type: ignore[union-attr]
                        MatchRow.ended_at.is_not(None),  # type: ignore[union-attr]
                    )
                ).all()
            )
            if match_ids
            else set()
        )
        return EventPlan(
            id=event_id,
            name=row.name,
            title=row.title,
            teams=tuple(
                TeamEntry(t.team_id, t.name, t.kind, t.model, t.threshold, t.confidence)
                for t in teams
            ),
            players=tuple(PlayerEntry(p.player_id, p.team_id, p.name) for p in players),
            rooms=tuple(RoomPlan(r.room_id, r.name, r.join_code, r.position) for r in rooms),
            rounds=tuple(
                RoundPlan(
                    r.number, r.packet_id, tuple(r.tossup_ids) if r.tossup_ids is not None else None
                )
                for r in rounds
            ),
            games=tuple(
                sorted(
                    (
                        GamePlan(
                            id=g.id,  # type: ignore[arg-type]
                            round=g.round,
                            room_id=g.room_id,
                            slot=g.slot,
                            teams=tuple(g.teams),
                            match_id=g.match_id,
                            ended=g.match_id in ended,
                        )
                        for g in games
                    ),
                    # by round, then the rooms in their order, byes last
                    key=lambda g: (g.round, g.slot, position.get(g.room_id, len(position))),
                )
            ),
            meta=dict(row.meta or {}),
        )


def event_id_of(engine: Engine, key: str | int) -> int:
    """The id of the event with this name or id (:func:`find_event_row`)."""
    with Session(engine) as session:
        event_id = find_event_row(session, key).id
    assert event_id is not None
    return event_id


def room_moderator_hashes(engine: Engine, event_id: int, room_id: str) -> list[str]:
    with Session(engine) as session:
        row = session.get(EventRoomRow, (event_id, room_id))
        return list(row.moderator_tokens or []) if row is not None else []


def add_room_moderator_token(
    engine: Engine, event_id: int, room_id: str, token_sha256: str
) -> list[str]:
    """Record one more moderator token's hash for the room; every token issued for the room
    stays valid for as long as the event (a server restarted without the old token in memory
    issues another; a moderator's terminal holding the first goes on with it)."""
    with Session(engine) as session:
        row = session.get(EventRoomRow, (event_id, room_id))
        if row is None:
            raise RecordError(f"no room {room_id!r} in event {event_id}")
        kept = list(row.moderator_tokens or [])
        row.moderator_tokens = kept if token_sha256 in kept else [*kept, token_sha256]
        session.add(row)
        session.commit()
        return list(row.moderator_tokens)


def find_room_by_code(engine: Engine, code: str) -> tuple[int, str] | None:
    """``(event id, room id)`` of the room with this join code, if any."""
    with Session(engine) as session:
        row = session.exec(
            select(EventRoomRow).where(EventRoomRow.join_code == code.strip().upper())
        ).first()
        return (row.event_id, row.room_id) if row is not None else None


# --------------------------------------------------------------------------------------------
# Standings


def match_results(
    engine: Engine, plan: EventPlan, *, only: Iterable[int] | None = None
) -> list[MatchResult]:
    """What each created match of the event (of those in ``only``, if given) adds to the
    standings, from the record."""
    ids = [g.match_id for g in plan.games if g.match_id is not None]
    if only is not None:
        wanted = set(only)
        ids = [i for i in ids if i in wanted]
    if not ids:
        return []
    with Session(engine) as session:
        matches = {
            m.id: m
            for m in session.exec(select(MatchRow).where(MatchRow.id.in_(ids)))  # type: ignore[union-attr]
        }
        buzzes = session.exec(
            select(BuzzRow).where(
                BuzzRow.match_id.in_(ids),  # type: ignore[attr-defined]
                BuzzRow.outcome == "won",
                BuzzRow.thrown_out.is_(False),  # type: ignore[attr-defined]
                BuzzRow.ruling.is_not(None),  # type: ignore[union-attr]
            )
        ).all()
        tossup_events = session.exec(
            select(EventRow.match_id, EventRow.payload)
            .where(
                EventRow.match_id.in_(ids),  # type: ignore[attr-defined]
                EventRow.type.in_(("tossup_started", "tossup_ended")),  # type: ignore[attr-defined]
            )
            .order_by(EventRow.match_id, EventRow.seq)  # type: ignore[arg-type]
        ).all()
        created = session.exec(
            select(EventRow.match_id, EventRow.payload).where(
                EventRow.match_id.in_(ids),  # type: ignore[attr-defined]
                EventRow.type == "match_created",
            )
        ).all()
        # a match of bonuses is replayed whole for its bonuses (undo and throw-outs included)
        with_bonuses = set(
            session.exec(
                select(EventRow.match_id).where(
                    EventRow.match_id.in_(ids),  # type: ignore[attr-defined]
                    EventRow.type == "bonus_started",
                )
            ).all()
        )
        replayed = (
            session.exec(
                select(EventRow.match_id, EventRow.payload)
                .where(EventRow.match_id.in_(sorted(with_bonuses)))  # type: ignore[attr-defined]
                .order_by(EventRow.match_id, EventRow.seq)  # type: ignore[arg-type]
            ).all()
            if with_bonuses
            else []
        )
    events: dict[int, list[Event]] = {}
    for match_id, payload in tossup_events:
        events.setdefault(match_id, []).append(event_from_dict(payload))
    whole: dict[int, list[Event]] = {}
    for match_id, payload in replayed:
        whole.setdefault(match_id, []).append(event_from_dict(payload))
    # each tossup once, however often it ended (an undone ruling and a new one end it again)
    heard_ids = {match_id: tossups_heard(evs) for match_id, evs in events.items()}
    heard = {match_id: len(tossups) for match_id, tossups in heard_ids.items()}
    # the tossups PPG and P/20TUH leave out (an overtime without bonuses)
    rules: dict[int, Any] = {}
    for match_id, payload in created:
        ev = event_from_dict(payload)
        if isinstance(ev, MatchCreated):
            rules[match_id] = ev.config.rules
    unrated = {
        match_id: set(unrated_tossups(rules[match_id], tossups))
        for match_id, tossups in heard_ids.items()
        if match_id in rules
    }
    lines: dict[int, dict[str, dict[str, int]]] = {i: {} for i in ids}
    for b in buzzes:
        line = lines[b.match_id].setdefault(b.team_id, {})
        line["points"] = line.get("points", 0) + (b.points or 0)
        if b.tossup_id in unrated.get(b.match_id, ()):
            line["overtime_points"] = line.get("overtime_points", 0) + (b.points or 0)
        if b.ruling == "correct":
            line["correct"] = line.get("correct", 0) + 1
            line["powers"] = line.get("powers", 0) + bool(b.power)
        elif b.ruling == "incorrect":
            line["incorrect"] = line.get("incorrect", 0) + 1
            line["negs"] = line.get("negs", 0) + ((b.points or 0) < 0)
    for match_id, evs in whole.items():
        for team, bonus in bonus_lines(evs).items():
            line = lines[match_id].setdefault(team, {})
            line["points"] = line.get("points", 0) + bonus.bonus_points + bonus.bounceback_points
            line.update(vars(bonus))
    results = []
    for game in plan.games:
        if game.match_id is None or game.match_id not in matches:
            continue
        m = matches[game.match_id]
        if game.match_id not in events and m.ended_at is None:
            continue  # created, not begun: nothing to stand on yet
        results.append(
            MatchResult(
                match_id=game.match_id,
                teams={t: TeamLine(**lines[game.match_id].get(t, {})) for t in game.teams},
                tossups_heard=heard.get(game.match_id, 0),
                ended=m.ended_at is not None,
                round=game.round,
                overtime_tossups=len(unrated.get(game.match_id, ())),
            )
        )
    return results


def event_standings(engine: Engine, key: str | int) -> tuple[EventPlan, list[Standing]]:
    plan = load_plan(engine, key)
    return plan, standings(plan.team_infos(), match_results(engine, plan))


def game_marks(engine: Engine, event_id: int) -> dict[int, tuple[int | None, bool, int | None]]:
    """Each scheduled game of the event: ``(match id, ended, the match's last event's seq)``.
    One query, an index lookup per match: what tells whether the standings may have changed
    (every change to a match is an event stored after the others)."""
    last = (
        select(func.max(EventRow.seq))
        .where(EventRow.match_id == EventGameRow.match_id)
        .scalar_subquery()
    )
    query = (
        select(EventGameRow.id, EventGameRow.match_id, MatchRow.ended_at, last)
        .select_from(EventGameRow)
        .outerjoin(MatchRow, MatchRow.id == EventGameRow.match_id)  # type: ignore[arg-type]
        .where(EventGameRow.event_id == event_id)
    )
    with Session(engine) as session:
        return {
            game_id: (match_id, ended_at is not None, seq)
            for game_id, match_id, ended_at, seq in session.exec(query)  # type: ignore[call-overload]
        }


class StandingsReader:
    """An event's standings, read from the record again after every change, re-reading only
    what changed: the plan when a scheduled match was created or ended (the schedule and the
    teams are fixed once a round started), and the results of the matches with events stored
    since the last read. A server recomputes its events' standings after every ruling in any
    of its rooms; reading the whole event each time costs more and more as the event goes on.
    The standings and the plan's schedule are :func:`event_standings`'s (the plan's players
    are those of its last read: players who join register then). Safe to share between
    threads; an event gone from the record raises ``RecordError``."""

    def __init__(self, engine: Engine, event_id: int) -> None:
        self.engine, self.event_id = engine, event_id
        self._lock = threading.Lock()
        self._plan: EventPlan | None = None
        self._marks: dict[int, tuple[int | None, bool, int | None]] = {}
        self._results: dict[int, MatchResult] = {}  # by match id; matches not begun left out
        #: Reads of matches' results and of the plan (for tests and benchmarks).
        self.matches_read = 0
        self.plans_read = 0

    def read(self) -> tuple[EventPlan, list[Standing]]:
        with self._lock:
            # the marks before the plan: a plan read after them is as new as they are
            marks = game_marks(self.engine, self.event_id)
            plan = self._plan
            if plan is None or {g: m[:2] for g, m in marks.items()} != {
                g: m[:2] for g, m in self._marks.items()
            }:
                plan = self._load()  # a match created or ended (here or in another process)
            changed = [
                m[0] for g, m in marks.items() if m[0] is not None and self._marks.get(g) != m
            ]
            if changed:
                self.matches_read += len(changed)
                for match_id in changed:
                    self._results.pop(match_id, None)
                for result in match_results(self.engine, plan, only=changed):
                    self._results[result.match_id] = result
            self._marks = marks
            results = [self._results[g.match_id] for g in plan.games if g.match_id in self._results]
            return plan, standings(plan.team_infos(), results)

    def _load(self) -> EventPlan:
        self.plans_read += 1
        self._plan = load_plan(self.engine, self.event_id)
        return self._plan
