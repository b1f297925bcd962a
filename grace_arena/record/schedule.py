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

from sqlalchemy import and_, or_
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from grace_arena.core import schedule as pairing
from grace_arena.core.events import (
    PART_RULINGS,
    BonusEnded,
    BonusStarted,
    Event,
    MatchCreated,
    TossupEnded,
    TossupStarted,
    event_from_dict,
    tossups_heard,
)
from grace_arena.core.match import Match
from grace_arena.core.standings import (
    RESULT_EVENTS,
    BonusPlayed,
    MatchResult,
    Standing,
    TeamInfo,
    TeamLine,
    bonuses_heard,
    bonuses_played,
    lines_of_bonuses,
    standings,
    unrated_tossups,
)
from grace_arena.record.models import (
    ArenaEventRow,
    BuzzRow,
    EventGameRow,
    EventPhaseRow,
    EventPlayerRow,
    EventPoolRow,
    EventRoomRow,
    EventRoundRow,
    EventRow,
    EventTeamRow,
    MatchRow,
    PacketRow,
)
from grace_arena.record.notices import notify
from grace_arena.record.store import RecordError, ensure_event, no_such_event, player_name_key

#: Join codes: characters people read off a screen (no 0/O, no 1/I)...
JOIN_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
#: ...six of them: 32**6, about 1.07e9 codes. At the rate a server lets one address guess
#: (grace_arena.server.guard: its ceiling, a burst of 100, then two a second) a guesser needs
#: some 8.5 years on average to hit one given live code ((N + 1) / 2 guesses), and 1.5 years to
#: hit any of ten (N / 11); all of them, 17 years.
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
    #: On the event's roster (registered by the organiser, claimed with a code).
    registered: bool = False


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
class PoolPlan:
    """A pool of a phase: its teams, in seed order."""

    id: str
    name: str
    teams: tuple[str, ...]
    position: int = 0


@dataclass(frozen=True)
class PhasePlan:
    """A phase of an event (``grace_arena.core.schedule.PHASE_KINDS``) and its pools."""

    id: str
    name: str
    kind: str
    position: int = 0
    pools: tuple[PoolPlan, ...] = ()
    meta: Mapping[str, Any] = field(default_factory=dict)

    def pool_of(self, team: str) -> PoolPlan | None:
        return next((p for p in self.pools if team in p.teams), None)


@dataclass(frozen=True)
class GamePlan:
    """A scheduled match (or a bye) and, once created, its match in the record. A game is
    over (``ended``) once its match ended, a team forfeited it, or its result was entered."""

    id: int
    round: int
    room_id: str | None
    slot: int
    teams: tuple[str, ...]
    match_id: int | None = None
    ended: bool = False
    phase_id: str | None = None
    pool_id: str | None = None
    forfeit: str | None = None  # the team that forfeited
    carryover: tuple[str, ...] = ()  # later phases that count it too
    result: Mapping[str, Any] | None = None  # entered by its final score

    @property
    def bye(self) -> bool:
        return len(self.teams) == 1

    @property
    def result_id(self) -> int:
        """What its :class:`MatchResult` is known by: its match's id, or for a game without a
        match (a forfeit, a result entered), its own id negated."""
        return self.match_id if self.match_id is not None else -self.id

    def counts_in(self, phase_id: str) -> bool:
        return self.phase_id == phase_id or phase_id in self.carryover


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
    phases: tuple[PhasePlan, ...] = ()

    def phase(self, key: str) -> PhasePlan | None:
        """The phase with this id or name (case aside)."""
        return next(
            (
                p
                for p in self.phases
                if key in (p.id, p.name) or key.casefold() == p.name.casefold()
            ),
            None,
        )

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
        return sorted(
            {
                g.round
                for g in self.games
                if g.match_id is not None or g.forfeit is not None or g.result is not None
            }
        )

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
    walk_ins: bool | None = None,
) -> EventPlan:
    """Register an event with its teams and players (``(team id, name)`` pairs).

    An event of that name that exists already is an error, unless ``replace``: then its teams,
    players and settings are replaced, which is refused once a round has started. ``defaults``
    are the settings of its matches (``MatchSettings``: reading mode, pace, scoring), refused
    out of their ranges as a match's set-up is: a match that they make could not start. Its
    name and title are one line each (files such as SQBS's carry them a line each).

    ``players`` are the event's roster: a phone takes one of them only with its claim code
    (``grace_arena.record.roster.issue_codes``). ``walk_ins``: whether phones may join under
    names of their own (None: only when the event has no roster)."""
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
        if walk_ins is not None:
            row.meta = {**row.meta, "walk_ins": walk_ins}
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
                    registered_by="organiser",
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
    phase: PhasePlan | None = None,
) -> EventPlan:
    """Store the event's rooms, rounds and scheduled matches, replacing any schedule it had.

    Refused once a round has started (a scheduled match exists in the record, or a game was
    forfeited or its result entered). Rooms that keep their name keep their join code. Every
    round's packet must be in the record. With ``phase`` (the first, its pools), the rounds
    and games are that phase's, and a game its teams' pool's."""
    plan = load_plan(engine, name)
    started = [
        g
        for g in plan.games
        if g.match_id is not None or g.forfeit is not None or g.result is not None
    ]
    if started:
        first = min(started, key=lambda g: (g.round, g.slot))
        what = (
            f"match {first.match_id} in {_room_label(plan, first.room_id)}"
            if first.match_id is not None
            else "a game of it was decided"
        )
        raise RecordError(
            f"event {name!r}: round {first.round} has started ({what}): its schedule can no "
            "longer change"
        )
    if phase is not None:
        from dataclasses import replace as replaced

        _check_pools(replaced(plan, phases=()), phase, games)
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
        for table in (EventGameRow, EventRoundRow, EventRoomRow, EventPoolRow, EventPhaseRow):
            for old in session.exec(select(table).where(table.event_id == plan.id)):  # type: ignore[attr-defined]
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
                    phase_id=phase.id if phase is not None else None,
                )
            )
        if phase is not None:
            _add_phase_rows(session, plan.id, phase)
        for g in games:
            pool = phase.pool_of(g.teams[0]) if phase is not None else None
            session.add(
                EventGameRow(
                    event_id=plan.id,
                    round=g.round,
                    room_id=g.room,
                    slot=g.slot,
                    teams=list(g.teams),
                    phase_id=phase.id if phase is not None else None,
                    pool_id=pool.id if pool is not None else None,
                )
            )
        row = session.get(ArenaEventRow, plan.id)
        assert row is not None
        row.meta = {**(row.meta or {}), "schedule": dict(meta or {})}
        session.add(row)
        session.commit()
    return load_plan(engine, plan.id)


def _check_pools(plan: EventPlan, phase: PhasePlan, games: Sequence[pairing.Game]) -> None:
    """A phase's pools hold teams of the event, each team in one pool at most, and every game
    of the phase is between teams of one pool."""
    if phase.kind not in pairing.PHASE_KINDS:
        raise RecordError(
            f"phase {phase.name!r}: kind must be one of "
            f"{', '.join(pairing.PHASE_KINDS)}, not {phase.kind!r}"
        )
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", phase.id):
        raise RecordError(f"phase id {phase.id!r}: letters, digits, - and _ only (64 at most)")
    if plan.phase(phase.id) is not None or plan.phase(phase.name) is not None:
        raise RecordError(f"event {plan.name!r} has a phase {phase.name!r} already")
    known = {t.id for t in plan.teams}
    seen: set[str] = set()
    if len({p.id for p in phase.pools}) != len(phase.pools) or not phase.pools:
        raise RecordError(f"phase {phase.name!r}: its pools must be named, each once")
    for pool in phase.pools:
        unknown = sorted(set(pool.teams) - known)
        if unknown:
            raise RecordError(f"pool {pool.name!r}: teams {unknown} are not in the event")
        twice = sorted(seen & set(pool.teams))
        if twice:
            raise RecordError(f"phase {phase.name!r}: teams {twice} are in two pools")
        seen |= set(pool.teams)
    for g in games:
        pools = {phase.pool_of(t).id if phase.pool_of(t) else None for t in g.teams}  # type: ignore[union-attr]
        if None in pools or len(pools) != 1:
            names = " vs ".join(g.teams)
            raise RecordError(
                f"phase {phase.name!r}, round {g.round}: {names} is not a game "
                "between teams of one of its pools"
            )


def _add_phase_rows(session: Session, event_id: int, phase: PhasePlan) -> None:
    session.add(
        EventPhaseRow(
            event_id=event_id,
            phase_id=phase.id,
            name=phase.name,
            kind=phase.kind,
            position=phase.position,
            meta=dict(phase.meta),
        )
    )
    for position, pool in enumerate(phase.pools):
        session.add(
            EventPoolRow(
                event_id=event_id,
                phase_id=phase.id,
                pool_id=pool.id,
                name=pool.name,
                position=position,
                teams=list(pool.teams),
            )
        )


def add_phase(
    engine: Engine,
    name: str,
    phase: PhasePlan,
    *,
    rounds: Sequence[RoundPlan],
    games: Sequence[pairing.Game],
    carryover: Iterable[int] = (),
    extend: bool = False,
) -> EventPlan:
    """Add a phase after the event's others: its pools, its rounds (numbered on from the
    event's last) and its games, in the event's rooms. ``carryover``: ids of earlier games
    that count in this phase too (teams of one of its pools that met before). The earlier
    phases stay as they are, played or not. ``extend``: ``phase`` exists already (the last
    one), and the rounds and games are more of it (the next round of a bracket, the second
    game of a double final)."""
    plan = load_plan(engine, name)
    if not plan.rooms:
        raise RecordError(f"event {name!r} has no schedule yet: schedule its first phase first")
    if extend:
        if not plan.phases or plan.phases[-1].id != phase.id:
            raise RecordError(f"only the last phase of {name!r} takes more rounds")
        phase = plan.phases[-1]
        _check_games(phase, games)
    else:
        _check_pools(plan, phase, games)
    first = len(plan.rounds) + 1
    numbers = [r.number for r in rounds]
    if numbers != list(range(first, first + len(rounds))) or not rounds:
        raise RecordError(f"the phase's rounds must be numbered {first}..., got {numbers}")
    rooms = {r.id for r in plan.rooms}
    for g in games:
        if g.round not in numbers:
            raise RecordError(f"a game in round {g.round}, not a round of phase {phase.name!r}")
        if not g.bye and g.room not in rooms:
            raise RecordError(f"round {g.round}: no room {g.room!r}")
    carried = set(carryover)
    by_id = {g.id: g for g in plan.games}
    for game_id in carried:
        game = by_id.get(game_id)
        pools = (
            {phase.pool_of(t).id if phase.pool_of(t) else None for t in game.teams}
            if game
            else {None}
        )  # type: ignore[union-attr]
        if None in pools or len(pools) != 1:
            raise RecordError(
                f"game {game_id} cannot carry over into {phase.name!r}: its "
                "teams are not in one of its pools"
            )
    with Session(engine) as session:
        packets = set(session.exec(select(PacketRow.id)).all())
        missing = sorted({r.packet_id for r in rounds} - packets)
        if missing:
            raise RecordError(f"packets {missing} are not in the record (load them first)")
        if not extend:
            _add_phase_rows(session, plan.id, replace_position(phase, len(plan.phases)))
        for r in rounds:
            session.add(
                EventRoundRow(
                    event_id=plan.id,
                    number=r.number,
                    packet_id=r.packet_id,
                    tossup_ids=list(r.tossup_ids) if r.tossup_ids is not None else None,
                    phase_id=phase.id,
                )
            )
        for g in games:
            pool = phase.pool_of(g.teams[0])
            session.add(
                EventGameRow(
                    event_id=plan.id,
                    round=g.round,
                    room_id=g.room,
                    slot=g.slot,
                    teams=list(g.teams),
                    phase_id=phase.id,
                    pool_id=pool.id if pool is not None else None,
                )
            )
        for game_id in carried:
            row = session.get(EventGameRow, game_id)
            assert row is not None
            row.carryover = [*(row.carryover or []), phase.id]
            session.add(row)
        session.commit()
    return load_plan(engine, plan.id)


def _check_games(phase: PhasePlan, games: Sequence[pairing.Game]) -> None:
    for g in games:
        pools = {phase.pool_of(t).id if phase.pool_of(t) else None for t in g.teams}  # type: ignore[union-attr]
        if None in pools or len(pools) != 1:
            names = " vs ".join(g.teams)
            raise RecordError(
                f"phase {phase.name!r}, round {g.round}: {names} is not a game "
                "between teams of one of its pools"
            )


def winner_of(game: GamePlan, results: Mapping[int, MatchResult]) -> str | None:
    """The team that won ``game`` (a forfeit: the other team), or None: not over, or a tie."""
    result = results.get(game.result_id)
    if result is None or not result.ended or game.bye:
        return game.teams[0] if game.bye else None
    if result.forfeit is not None:
        return next(t for t in game.teams if t != result.forfeit)
    points = {t: line.points for t, line in result.teams.items()}
    best = max(points.values())
    leaders = [t for t, p in points.items() if p == best]
    return leaders[0] if len(leaders) == 1 else None


def _results_by_id(engine: Engine, plan: EventPlan) -> dict[int, MatchResult]:
    return {r.match_id: r for r in match_results(engine, plan)}


def _packet_rounds(plan: EventPlan, packets: Sequence[RoundPlan], count: int) -> list[RoundPlan]:
    """``count`` rounds numbered on from the event's last, a packet each (``packets``'
    packet and tossups, the last used again)."""
    if not packets:
        raise RecordError("give a packet for the phase's rounds")
    first = len(plan.rounds) + 1
    return [
        RoundPlan(
            first + i,
            packets[min(i, len(packets) - 1)].packet_id,
            packets[min(i, len(packets) - 1)].tossup_ids,
        )
        for i in range(count)
    ]


def _shifted(plan: EventPlan, pairings: Sequence[pairing.Pairing]) -> list[pairing.Game]:
    offset = len(plan.rounds)
    moved = [pairing.Pairing(p.round + offset, p.teams) for p in pairings]
    return pairing.assign_rooms(moved, [r.id for r in plan.rooms])


def placed_in(plan: EventPlan, engine: Engine, phase: PhasePlan) -> list[pairing.Placed]:
    """The teams' finish in each pool of ``phase``, ties broken by the games of the
    tiebreaker phases that follow it (before the next full phase)."""
    results = match_results(engine, plan)
    by_id = {r.match_id: r for r in results}
    rows = phase_standings(plan, results, phase.id)
    placed = [
        pairing.Placed(s.team, ps.pool.id, s.rank, s.win_pct, s.points_per_bonus)
        for ps in rows
        for s in ps.rows
    ]
    tiebreaks: list[tuple[str, str]] = []
    for later in plan.phases[phase.position + 1 :]:
        if later.kind != "tiebreaker":
            break
        for g in plan.games:
            if g.phase_id == later.id and not g.bye:
                won = winner_of(g, by_id)
                if won is not None:
                    tiebreaks.extend((won, t) for t in g.teams if t != won)
    return pairing.break_ties(placed, tiebreaks)


def advance_phase(
    engine: Engine,
    name: str,
    *,
    source: str,
    phase_id: str,
    phase_name: str,
    tiers: Sequence[pairing.Tier],
    packets: Sequence[RoundPlan],
    method: pairing.Seeding = "rank_then_ppb",
    carryover: bool = True,
    kind: str = "playoff",
) -> EventPlan:
    """The next phase, bracketed from the finish of phase ``source`` (every game of it over):
    a pool per tier (:func:`grace_arena.core.schedule.advance`: places in each pool, then
    wild cards by ``method``), its teams in seed order. With ``carryover``, the games of
    ``source`` between teams of one new pool count in it too, and those teams do not meet
    again (:func:`grace_arena.core.schedule.crossover`); otherwise each pool plays a round
    robin. Teams sharing a rank at a cut are refused until a tiebreaker separates them."""
    plan = load_plan(engine, name)
    before = plan.phase(source)
    if before is None:
        names = ", ".join(p.name for p in plan.phases) or "none"
        raise RecordError(f"event {plan.name!r} has no phase {source!r} (phases: {names})")
    left = [g for g in plan.games if g.phase_id == before.id and not g.bye and not g.ended]
    if left:
        raise RecordError(
            f"phase {before.name!r} has {len(left)} games not over (first: round "
            f"{left[0].round}, {' vs '.join(left[0].teams)})"
        )
    placed = placed_in(plan, engine, before)
    ties = pairing.ties_at_cuts(placed, tiers)
    if ties:
        said = "; ".join(", ".join(group) for group in ties)
        raise RecordError(
            f"teams share a place at a cut: {said}: play a tiebreaker first "
            f"(event tiebreaker {plan.name} --teams ...)"
        )
    try:
        groups = pairing.advance(placed, tiers, method=method)
    except pairing.ScheduleError as exc:
        raise RecordError(str(exc)) from None
    pools = tuple(
        PoolPlan(_slug(tier.name), tier.name, tuple(teams), i)
        for i, (tier, teams) in enumerate(zip(tiers, groups, strict=True))
        if teams
    )
    phase = PhasePlan(
        phase_id,
        phase_name,
        kind,
        len(plan.phases),
        pools,
        {
            "source": before.id,
            "seeding": method,
            "carryover": carryover,
            "tiers": [vars(t) for t in tiers],
        },
    )
    pairings: list[pairing.Pairing] = []
    carried: list[int] = []
    for pool in pools:
        if len(pool.teams) < 2:
            continue
        if carryover:
            origin = [[t for t in pool.teams if before.pool_of(t) == p] for p in before.pools]
            origin = [g for g in origin if g]
            met = {
                frozenset(g.teams)
                for g in plan.games
                if g.phase_id == before.id and not g.bye and set(g.teams) <= set(pool.teams)
            }
            if len(origin) > 1:
                games = pairing.crossover(origin, met=met if _uneven(origin) else ())
            else:
                games = []  # all from one pool: every game carried over
            carried += [
                g.id
                for g in plan.games
                if g.phase_id == before.id and not g.bye and set(g.teams) <= set(pool.teams)
            ]
        else:
            games = pairing.round_robin(list(pool.teams))
        pairings += games
    if not pairings:
        raise RecordError(f"phase {phase_name!r} would have no game to play")
    count = max(p.round for p in pairings)
    rounds = _packet_rounds(plan, packets, count)
    return add_phase(
        engine, name, phase, rounds=rounds, games=_shifted(plan, pairings), carryover=carried
    )


def _uneven(groups: Sequence[Sequence[str]]) -> bool:
    return not (len(groups) == 2 and len(groups[0]) == len(groups[1]))


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", text.strip()).strip("-")[:64].lower() or "pool"


def add_tiebreaker(
    engine: Engine,
    name: str,
    *,
    teams: Sequence[str],
    packet: RoundPlan,
    phase_name: str | None = None,
) -> EventPlan:
    """A tiebreaker phase after the last phase: the tied teams play a round robin among
    themselves (two teams: one game), its winner placed first among them when the phase
    before is bracketed (:func:`placed_in`); a tiebreaker counts in no other standings."""
    plan = load_plan(engine, name)
    number = sum(p.kind == "tiebreaker" for p in plan.phases) + 1
    phase = PhasePlan(
        f"tiebreaker-{number}",
        phase_name or f"Tiebreaker {number}" if number > 1 else phase_name or "Tiebreaker",
        "tiebreaker",
        len(plan.phases),
        (PoolPlan("tied", "Tied teams", tuple(teams)),),
    )
    try:
        pairings = pairing.round_robin(list(teams))
    except pairing.ScheduleError as exc:
        raise RecordError(str(exc)) from None
    rounds = _packet_rounds(plan, [packet], max(p.round for p in pairings))
    return add_phase(engine, name, phase, rounds=rounds, games=_shifted(plan, pairings))


def add_final(
    engine: Engine,
    name: str,
    *,
    teams: tuple[str, str],
    packet: RoundPlan,
    advantaged: str | None = None,
) -> EventPlan:
    """A finals phase: one game between ``teams``; with an ``advantaged`` team (a double
    final), a second game is played if it loses the first (:func:`next_final_game`)."""
    plan = load_plan(engine, name)
    if advantaged is not None and advantaged not in teams:
        raise RecordError(f"the advantaged team {advantaged!r} is not in the final")
    phase = PhasePlan(
        "finals",
        "Finals",
        "finals",
        len(plan.phases),
        (PoolPlan("final", "Final", teams),),
        {"advantaged": advantaged},
    )
    rounds = _packet_rounds(plan, [packet], 1)
    return add_phase(
        engine, name, phase, rounds=rounds, games=_shifted(plan, [pairing.Pairing(1, teams)])
    )


def final_state(engine: Engine, plan: EventPlan) -> tuple[str | None, bool]:
    """The finals' champion (None: not decided) and whether another game is to be played
    (the advantaged team lost the first game of a double final)."""
    final = plan.phase("finals")
    if final is None:
        raise RecordError(f"event {plan.name!r} has no final (event final ...)")
    teams = final.pools[0].teams
    games = [g for g in plan.games if g.phase_id == final.id]
    by_id = _results_by_id(engine, plan)
    winners = [w for g in games if (w := winner_of(g, by_id)) is not None]
    champion = pairing.final_decided(
        winners, (teams[0], teams[1]), advantaged=final.meta.get("advantaged")
    )
    return champion, champion is None and all(g.ended for g in games)


def next_final_game(engine: Engine, name: str, *, packet: RoundPlan) -> EventPlan:
    """The second game of a double final, once the advantaged team lost the first."""
    plan = load_plan(engine, name)
    champion, another = final_state(engine, plan)
    if not another:
        raise RecordError(
            f"the final is decided: {champion} won"
            if champion
            else "the final's game is not over yet"
        )
    final = plan.phase("finals")
    assert final is not None
    rounds = _packet_rounds(plan, [packet], 1)
    return add_phase(
        engine,
        name,
        final,
        rounds=rounds,
        extend=True,
        games=_shifted(plan, [pairing.Pairing(1, final.pools[0].teams)]),
    )


def add_bracket(
    engine: Engine,
    name: str,
    *,
    seeds: Sequence[str],
    packet: RoundPlan,
    phase_name: str = "Bracket",
) -> EventPlan:
    """A single-elimination phase of ``seeds`` (best first): its first round
    (:func:`grace_arena.core.schedule.bracket`: the top seeds have byes when the field is not
    a power of two); :func:`next_bracket_round` plays the next rounds."""
    plan = load_plan(engine, name)
    try:
        slots = pairing.bracket(list(seeds))
        first = pairing.elimination_round(slots)
    except pairing.ScheduleError as exc:
        raise RecordError(str(exc)) from None
    phase = PhasePlan(
        _slug(phase_name),
        phase_name,
        "playoff",
        len(plan.phases),
        (PoolPlan("bracket", phase_name, tuple(seeds)),),
        {"elimination": True, "slots": slots},
    )
    rounds = _packet_rounds(plan, [packet], 1)
    return add_phase(engine, name, phase, rounds=rounds, games=_shifted(plan, first))


def bracket_state(engine: Engine, plan: EventPlan) -> tuple[PhasePlan, list[str | None] | None]:
    """The last phase (a single-elimination one) and the next round's slots: the winners of
    its last round in bracket order (a bye's team goes through), or None while a game of the
    round is not over (a tie is not over: it needs a game more)."""
    phase = plan.phases[-1] if plan.phases else None
    if phase is None or not phase.meta.get("elimination"):
        raise RecordError(f"the last phase of {plan.name!r} is no single-elimination bracket")
    slots: list[str | None] = list(phase.meta["slots"])
    last = max(g.round for g in plan.games if g.phase_id == phase.id)
    games = [g for g in plan.games if g.phase_id == phase.id and g.round == last]
    by_id = _results_by_id(engine, plan)
    winners: list[str | None] = []
    for a, b in zip(slots[::2], slots[1::2], strict=True):
        present = {t for t in (a, b) if t is not None}
        if not present:
            winners.append(None)
            continue
        game = next(g for g in games if set(g.teams) == present)
        won = winner_of(game, by_id)
        if won is None:
            return phase, None
        winners.append(won)
    return phase, winners


def next_bracket_round(engine: Engine, name: str, *, packet: RoundPlan) -> EventPlan:
    """The next round of the last phase's single-elimination bracket, from the winners of
    its last round; refused while a game of it is not over, and once the bracket is won."""
    plan = load_plan(engine, name)
    phase, winners = bracket_state(engine, plan)
    if winners is None:
        raise RecordError(f"a game of {phase.name!r}'s last round is not over (or tied)")
    if len(winners) == 1:
        raise RecordError(f"{phase.name!r} is won by {winners[0]}")
    plan = add_phase(
        engine,
        name,
        phase,
        rounds=_packet_rounds(plan, [packet], 1),
        games=_shifted(plan, pairing.elimination_round(winners)),
        extend=True,
    )
    with Session(engine) as session:
        row = session.get(EventPhaseRow, (plan.id, phase.id))
        assert row is not None
        row.meta = {**row.meta, "slots": winners}
        session.add(row)
        session.commit()
    return load_plan(engine, plan.id)


def add_card_phase(
    engine: Engine,
    name: str,
    *,
    seeds: Sequence[str],
    rounds: int,
    packet: RoundPlan,
    phase_name: str = "Cards",
) -> EventPlan:
    """A phase played by NAQT's card system (:func:`grace_arena.core.schedule.card_schedule`):
    ``seeds`` (best first) are dealt their cards (:func:`~grace_arena.core.schedule
    .deal_cards`), the card schedule of ``rounds`` rounds is fixed now, and its first round
    scheduled; :func:`next_card_round` schedules each next one from who holds which card.
    The event's first phase (no schedule yet) has a room for each game of a round."""
    plan = load_plan(engine, name)
    try:
        schedule = pairing.card_schedule(len(seeds), rounds)
        dealt = pairing.deal_cards(list(seeds))
    except pairing.ScheduleError as exc:
        raise RecordError(str(exc)) from None
    phase = PhasePlan(
        _slug(phase_name),
        phase_name,
        "playoff",
        len(plan.phases),
        (PoolPlan("cards", phase_name, tuple(seeds)),),
        {
            "cards": {
                "dealt": {str(c): t for c, t in dealt.items()},
                "schedule": [
                    {"games": [list(g) for g in r.games], "byes": list(r.byes)} for r in schedule
                ],
            }
        },
    )
    first = pairing.card_round(dealt, schedule[0], 1)
    if not plan.rooms and not plan.games:  # the event's first phase: a room per game
        from dataclasses import replace as replaced

        rooms = [str(i) for i in range(1, len(seeds) // 2 + 1)]
        return set_schedule(
            engine,
            name,
            rooms=rooms,
            rounds=[replaced(packet, number=1)],
            games=pairing.assign_rooms(first, rooms),
            meta={"format": "cards"},
            phase=replaced(phase, kind="prelim"),
        )
    return add_phase(
        engine,
        name,
        phase,
        rounds=_packet_rounds(plan, [packet], 1),
        games=_shifted(plan, first),
    )


@dataclass(frozen=True)
class CardState:
    """A card phase as it stands: who holds each card now, the rounds of its schedule played
    (all of whose games are over) and scheduled, and the card schedule."""

    phase: PhasePlan
    holders: dict[int, str]
    played: int
    scheduled: int
    schedule: list[pairing.CardRound]

    @property
    def done(self) -> bool:
        return self.played == len(self.schedule)


def card_state(engine: Engine, plan: EventPlan) -> CardState:
    """The last phase's cards (a card phase), passed game by game through the rounds whose
    games are all over: each winner took the card nearer #1."""
    phase = plan.phases[-1] if plan.phases else None
    cards = phase.meta.get("cards") if phase is not None else None
    if phase is None or not cards:
        raise RecordError(f"the last phase of {plan.name!r} is not played by cards")
    schedule = [
        pairing.CardRound(tuple((a, b) for a, b in r["games"]), tuple(r["byes"]))
        for r in cards["schedule"]
    ]
    holders = {int(c): t for c, t in cards["dealt"].items()}
    numbers = sorted({g.round for g in plan.games if g.phase_id == phase.id})
    by_id = _results_by_id(engine, plan)
    played = 0
    for number, card_round_ in zip(numbers, schedule, strict=False):
        games = [g for g in plan.games if g.round == number and g.phase_id == phase.id]
        winners = {frozenset(g.teams): winner_of(g, by_id) for g in games if not g.bye}
        if any(w is None for w in winners.values()):
            break
        try:
            holders = pairing.pass_cards(holders, card_round_, winners)  # type: ignore[arg-type]
        except pairing.ScheduleError as exc:  # a round's games are not its cards' holders'
            raise RecordError(f"round {number} of {phase.name!r}: {exc}") from None
        played += 1
    return CardState(phase, holders, played, len(numbers), schedule)


def next_card_round(engine: Engine, name: str, *, packet: RoundPlan) -> EventPlan:
    """The next round of the last phase's card schedule, its games between the holders of
    its cards; refused while a game of the round before is not over (a tie is not over: the
    card needs a winner), and once every round of the schedule is scheduled."""
    plan = load_plan(engine, name)
    state = card_state(engine, plan)
    if state.scheduled == len(state.schedule):
        raise RecordError(
            f"{state.phase.name!r} has played its {len(state.schedule)} rounds"
            if state.done
            else f"a game of {state.phase.name!r}'s last round is not over (or tied)"
        )
    if state.played < state.scheduled:
        raise RecordError(f"a game of {state.phase.name!r}'s last round is not over (or tied)")
    games = pairing.card_round(state.holders, state.schedule[state.played], 1)
    return add_phase(
        engine,
        name,
        state.phase,
        rounds=_packet_rounds(plan, [packet], 1),
        games=_shifted(plan, games),
        extend=True,
    )


def replace_position(phase: PhasePlan, position: int) -> PhasePlan:
    from dataclasses import replace

    return replace(phase, position=position)


def find_game(plan: EventPlan, round_: int, teams: Sequence[str]) -> GamePlan:
    """The game of round ``round_`` between ``teams`` (team ids, in any order)."""
    wanted = set(teams)
    found = [g for g in plan.games if g.round == round_ and set(g.teams) == wanted]
    if not found:
        names = {t.id: t.name for t in plan.teams}
        in_round = [
            " vs ".join(names.get(t, t) for t in g.teams)
            for g in plan.games
            if g.round == round_ and not g.bye
        ]
        listed = "; ".join(in_round) or "none"
        raise RecordError(
            f"no game of round {round_} between {' and '.join(sorted(wanted))} "
            f"(its games: {listed})"
        )
    return found[0]


def _decide(engine: Engine, plan: EventPlan, game: GamePlan, **values: Any) -> EventPlan:
    if game.bye:
        raise RecordError(f"round {game.round}: {game.teams[0]} has a bye, there is no game")
    if game.match_id is not None:
        raise RecordError(
            f"round {game.round}: {' vs '.join(game.teams)} is match {game.match_id} in the "
            "record: its result is what was played"
        )
    if game.forfeit is not None or game.result is not None:
        raise RecordError(f"round {game.round}: {' vs '.join(game.teams)} has a result already")
    with Session(engine) as session:
        row = session.get(EventGameRow, game.id)
        if row is None or row.match_id is not None:
            raise RecordError(f"round {game.round}: the game was started meanwhile")
        for key, value in values.items():
            setattr(row, key, value)
        session.add(row)
        # the processes computing standings fold it at once (a result, of no match: the
        # notice names none)
        notify(session, "results")
        session.commit()
    return load_plan(engine, plan.id)


def record_forfeit(engine: Engine, name: str, game: GamePlan, team: str) -> EventPlan:
    """``team`` forfeits ``game`` (not started): the other team wins it, and the game counts
    in won/lost only."""
    plan = load_plan(engine, name)
    if team not in game.teams:
        raise RecordError(f"{team!r} is not in round {game.round}'s {' vs '.join(game.teams)}")
    return _decide(engine, plan, game, forfeit=team)


#: The per-team counts a result entered by its final score may give (all optional).
RESULT_COUNTS = ("powers", "tens", "negs", "bonuses_heard", "bonus_points")


def enter_result(
    engine: Engine,
    name: str,
    game: GamePlan,
    *,
    points: Mapping[str, int],
    tossups_heard: int | None = None,
    counts: Mapping[str, Mapping[str, int]] | None = None,
    players: Sequence[Mapping[str, Any]] = (),
    source: Mapping[str, Any] | None = None,
) -> EventPlan:
    """The result of ``game`` (not played here) by its final score: each team's ``points``,
    the tossups heard (default: the event's regulation count, else 20), and, where known,
    each team's ``counts`` (:data:`RESULT_COUNTS`) and each player's line (``team``,
    ``name``, ``tuh``, ``powers``, ``tens``, ``negs``). A team's counts are its players' sums
    when players are given. Figures that do not add up are refused (see
    :func:`result_lines`). ``source``: the cycles of the match file it was read from
    (``match_questions``, each buzz's team by its id, and the file's ``packets``), kept for
    the QBJ written back (they count in nothing here)."""
    plan = load_plan(engine, name)
    result: dict[str, Any] = {
        "points": {t: int(points[t]) for t in game.teams if t in points},
        "tossups_heard": tossups_heard,
        "counts": {t: dict(c) for t, c in (counts or {}).items()},
        "players": [dict(p) for p in players],
        **({"source": dict(source)} if source else {}),
    }
    if set(result["points"]) != set(game.teams):
        raise RecordError(f"give the points of {' and '.join(game.teams)}")
    result_lines(plan, {**result, "teams": list(game.teams)})  # refuses what does not add up
    return _decide(engine, plan, game, result=result)


def event_rules(plan: EventPlan) -> Any:
    """The scoring rules of the event's matches (its match settings' format and rules)."""
    from grace_arena.core.formats import rules_for
    from grace_arena.protocol import MatchSettings

    settings = MatchSettings.model_validate(plan.defaults)
    return rules_for(settings.format or "grace", **settings.scoring())


def result_lines(plan: EventPlan, result: Mapping[str, Any]) -> tuple[dict[str, TeamLine], int]:
    """Each team's line and the tossups heard of a result entered by its final score. A
    team's tossup points (powers, tens and negs by the event's rules) plus its bonus points
    must make its score; bonus points not given are the rest of the score, as YellowFruit
    takes them (``MatchTeam.calculateTotalPoints``), and a bonus is heard for every tossup
    answered correctly when the rules play bonuses. Where no count is given the line has the
    points only (PPB and buzzes unknown)."""
    rules = event_rules(plan)
    teams = list(result.get("teams") or result["points"])
    heard = result.get("tossups_heard") or rules.regulation_tossups or 20
    counts: dict[str, dict[str, int]] = {
        t: dict(c) for t, c in (result.get("counts") or {}).items()
    }
    players = list(result.get("players") or [])
    for p in players:
        if p.get("team") not in teams:
            raise RecordError(
                f"player {p.get('name')!r}: team {p.get('team')!r} is not in the game"
            )
        for key in ("powers", "tens", "negs", "tuh"):
            if int(p.get(key) or 0) < 0:
                raise RecordError(f"player {p.get('name')!r}: {key} cannot be negative")
        if int(p.get("tuh") or 0) > heard:
            raise RecordError(f"player {p.get('name')!r} heard {p['tuh']} tossups of {heard}")
        mine = counts.setdefault(p["team"], {})
        for key in ("powers", "tens", "negs"):
            mine[key] = mine.get(key, 0) + int(p.get(key) or 0)
    lines: dict[str, TeamLine] = {}
    total_correct = 0
    for team in teams:
        points = int(result["points"][team])
        c = counts.get(team)
        if not c:
            lines[team] = TeamLine(points=points)
            continue
        unknown = sorted(set(c) - set(RESULT_COUNTS))
        if unknown:
            raise RecordError(f"team {team}: unknown counts {unknown}")
        if any(v < 0 for v in c.values()):
            raise RecordError(f"team {team}: counts cannot be negative")
        powers, tens, negs = c.get("powers", 0), c.get("tens", 0), c.get("negs", 0)
        if powers and rules.power_points is None:
            raise RecordError(f"team {team}: powers given, but the event's rules have none")
        tossup_points = powers * (rules.power_points or 0) + tens * rules.correct_points
        tossup_points += negs * rules.neg_points
        bonus_points = c.get("bonus_points", points - tossup_points if rules.bonuses else 0)
        if tossup_points + bonus_points != points:
            raise RecordError(
                f"team {team}: {powers} powers, {tens} tens and {negs} negs make "
                f"{tossup_points} points and bonuses {bonus_points}: not the {points} given"
            )
        heard_bonuses = c.get("bonuses_heard", powers + tens if rules.bonuses else 0)
        if bonus_points < 0 or bonus_points > 30 * heard_bonuses:
            raise RecordError(
                f"team {team}: {bonus_points} bonus points on {heard_bonuses} bonuses cannot be"
            )
        if not rules.bonuses and bonus_points:
            raise RecordError(
                f"team {team}: the tossups make {tossup_points}, not {points} "
                "(the event's rules play no bonuses)"
            )
        total_correct += powers + tens
        lines[team] = TeamLine(
            points=points,
            correct=powers + tens,
            powers=powers,
            incorrect=negs,
            negs=negs,
            bonuses_heard=heard_bonuses,
            bonus_points=bonus_points,
        )
    if total_correct > heard:
        raise RecordError(f"{total_correct} tossups answered correctly of {heard} heard")
    return lines, heard


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
            .where(
                EventPlayerRow.event_id == event_id,
                EventPlayerRow.kind == "human",
                EventPlayerRow.removed_at.is_(None),  # type: ignore[union-attr]
            )
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
        phases = session.exec(
            select(EventPhaseRow)
            .where(EventPhaseRow.event_id == event_id)
            .order_by(EventPhaseRow.position)  # type: ignore[arg-type]
        ).all()
        pools = session.exec(
            select(EventPoolRow)
            .where(EventPoolRow.event_id == event_id)
            .order_by(EventPoolRow.position)  # type: ignore[arg-type]
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
            players=tuple(
                PlayerEntry(p.player_id, p.team_id, p.name, p.registered_by == "organiser")
                for p in players
            ),
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
                            ended=g.match_id in ended
                            or g.forfeit is not None
                            or g.result is not None,
                            phase_id=g.phase_id,
                            pool_id=g.pool_id,
                            forfeit=g.forfeit,
                            carryover=tuple(g.carryover or ()),
                            result=g.result,
                        )
                        for g in games
                    ),
                    # by round, then the rooms in their order, byes last
                    key=lambda g: (g.round, g.slot, position.get(g.room_id, len(position))),
                )
            ),
            # (not the standings kept there for the event's server processes: standings_record)
            meta={k: v for k, v in (row.meta or {}).items() if k != "standings"},
            phases=tuple(
                PhasePlan(
                    id=ph.phase_id,
                    name=ph.name,
                    kind=ph.kind,
                    position=ph.position,
                    pools=tuple(
                        PoolPlan(p.pool_id, p.name, tuple(p.teams), p.position)
                        for p in pools
                        if p.phase_id == ph.phase_id
                    ),
                    meta=dict(ph.meta or {}),
                )
                for ph in phases
            ),
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
    engine: Engine,
    plan: EventPlan,
    *,
    only: Iterable[int] | None = None,
    replays: MatchReplays | None = None,
) -> list[MatchResult]:
    """What each created match of the event (of those in ``only``, if given) adds to the
    standings, from the record. ``replays``: the matches' records as far as they were read
    before, to read on from there (a reader that comes back after every ruling); without it
    each match's record is read for what its result needs."""
    ids = [g.match_id for g in plan.games if g.match_id is not None]
    wanted: set[int] = set(only) if only is not None else set()
    if only is not None:
        ids = [i for i in ids if i in wanted]
    decided = [
        decided_result(plan, g)
        for g in plan.games
        if (g.forfeit is not None or g.result is not None)
        and (only is None or g.result_id in wanted)
    ]
    if not ids:
        return decided
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
        if replays is not None:
            read = replays.advance(session, ids)
            events = {i: r.tossups for i, r in read.items() if r.tossups}
            rules = {i: r.match.config.rules for i, r in read.items()}
            played = {i: bonuses_played(r.kept, r.match.state.game) for i, r in read.items()}
        else:
            events, rules, played = _match_records(session, ids)
    # each tossup once, however often it ended (an undone ruling and a new one end it again)
    heard_ids = {match_id: tossups_heard(evs) for match_id, evs in events.items()}
    heard = {match_id: len(tossups) for match_id, tossups in heard_ids.items()}
    # the tossups PPG and P/20TUH leave out (an overtime without bonuses)
    unrated = {
        match_id: set(unrated_tossups(rules[match_id], tossups))
        for match_id, tossups in heard_ids.items()
        if match_id in rules
    }
    lines: dict[int, dict[str, dict[str, int]]] = {i: {} for i in ids}
    earned: dict[tuple[int, str], list[str]] = {}  # tossups answered where a bonus follows
    for b in buzzes:
        line = lines[b.match_id].setdefault(b.team_id, {})
        line["points"] = line.get("points", 0) + (b.points or 0)
        if b.tossup_id in unrated.get(b.match_id, ()):
            line["overtime_points"] = line.get("overtime_points", 0) + (b.points or 0)
        if b.ruling == "correct":
            line["correct"] = line.get("correct", 0) + 1
            line["powers"] = line.get("powers", 0) + bool(b.power)
            if b.tossup_id not in unrated.get(b.match_id, ()):
                earned.setdefault((b.match_id, b.team_id), []).append(b.tossup_id)
        elif b.ruling == "incorrect":
            line["incorrect"] = line.get("incorrect", 0) + 1
            line["negs"] = line.get("negs", 0) + ((b.points or 0) < 0)
    for match_id, bonuses in played.items():
        for team, bonus in lines_of_bonuses(bonuses).items():
            line = lines[match_id].setdefault(team, {})
            line["points"] = line.get("points", 0) + bonus.bonus_points + bonus.bounceback_points
            line.update(vars(bonus))
    for match_id, teams in lines.items():
        if match_id in rules and rules[match_id].bonuses:
            for team, line in teams.items():
                line["bonuses_heard"] = bonuses_heard(
                    earned.get((match_id, team), ()),
                    (b for b in played.get(match_id, ()) if b.team == team),
                )
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
    return [*results, *decided]


def _match_records(
    session: Session, ids: list[int]
) -> tuple[dict[int, list[Event]], dict[int, Any], dict[int, list[BonusPlayed]]]:
    """What the results of the matches ``ids`` need of their records, read whole: each begun
    match's tossups started and ended, each match's rules, and the bonuses of each match
    that played one."""
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
    rules: dict[int, Any] = {}
    for match_id, payload in created:
        ev = event_from_dict(payload)
        if isinstance(ev, MatchCreated):
            rules[match_id] = ev.config.rules
    whole: dict[int, list[Event]] = {}
    for match_id, payload in replayed:
        whole.setdefault(match_id, []).append(event_from_dict(payload))
    return events, rules, {match_id: bonuses_played(evs) for match_id, evs in whole.items()}


@dataclass
class MatchReplay:
    """One match's record as far as it was read: the match replayed up to ``seq``, and the
    events of it a result is made of (``tossups``: tossups started and ended; ``kept``: the
    match's creation, bonuses started and ended, bonus parts ruled and corrected)."""

    seq: int
    match: Match
    tossups: list[Event] = field(default_factory=list)
    kept: list[Event] = field(default_factory=list)


#: Matches whose new events one query of :meth:`MatchReplays.advance` reads (two parameters
#: each: well within every backend's limit).
_ADVANCE_CHUNK = 50


class MatchReplays:
    """Matches' records replayed as far as they were read, each read on from its last event
    read: a match's events are stored with the seqs 1, 2, 3, ... and never changed, so what
    follows the last one read is all that is new (a reader that comes back after each ruling
    reads the few events since, not the thousands of words revealed before). Only an unbroken
    run of seqs is taken: an event committed after one with a greater seq is read the next
    time, in its place (:class:`StandingsReader` marks such a match as read only as far as
    its replay reached). Not safe to share between threads (a :class:`StandingsReader`'s, under
    its lock)."""

    _KEPT = (MatchCreated, BonusStarted, BonusEnded, *PART_RULINGS)

    def __init__(self) -> None:
        self._read: dict[int, MatchReplay] = {}
        #: Events read and decoded (for tests and benchmarks).
        self.events_read = 0

    def reached(self, match_id: int) -> int:
        """The seq of the match's last event read (0: none)."""
        known = self._read.get(match_id)
        return known.seq if known is not None else 0

    def advance(self, session: Session, ids: Iterable[int]) -> dict[int, MatchReplay]:
        """The matches ``ids`` (those with events) replayed to their last event stored: what
        is new of all of them read in one query (per :data:`_ADVANCE_CHUNK` matches)."""
        out = {}
        ids = list(dict.fromkeys(ids))
        for start in range(0, len(ids), _ADVANCE_CHUNK):
            chunk = ids[start : start + _ADVANCE_CHUNK]
            stored: dict[int, list[tuple[int, Any]]] = {i: [] for i in chunk}
            since = or_(*(
                and_(EventRow.match_id == i, EventRow.seq > self.reached(i)) for i in chunk
            ))  # fmt: skip
            for match_id, row_seq, payload in session.exec(
                select(EventRow.match_id, EventRow.seq, EventRow.payload)
                .where(since)
                .order_by(EventRow.match_id, EventRow.seq)  # type: ignore[arg-type]
            ):
                stored[match_id].append((row_seq, payload))
            for match_id in chunk:  # (decoded chunk by chunk: one chunk's rows held at once)
                replay = self._advance_one(match_id, stored.pop(match_id))
                if replay is not None:
                    out[match_id] = replay
        return out

    def _advance_one(self, match_id: int, rows: list[tuple[int, Any]]) -> MatchReplay | None:
        known = self._read.get(match_id)
        seq = self.reached(match_id)
        new: list[Event] = []
        for row_seq, payload in rows:
            if row_seq != seq + 1:
                break
            new.append(event_from_dict(payload))
            seq = row_seq
        self.events_read += len(new)
        if known is None:
            if not new:
                return None
            known = MatchReplay(0, Match.replay(new))
        else:
            known.match.apply(new)
        known.seq = seq
        known.tossups += [e for e in new if isinstance(e, (TossupStarted, TossupEnded))]
        known.kept += [e for e in new if isinstance(e, self._KEPT)]
        self._read[match_id] = known
        return known


def decided_result(plan: EventPlan, game: GamePlan) -> MatchResult:
    """What a game without a match adds to the standings: a forfeit (won/lost only), or a
    result entered by its final score (:func:`result_lines`). Known by its id negated."""
    if game.forfeit is not None:
        return MatchResult(
            match_id=game.result_id,
            teams={t: TeamLine() for t in game.teams},
            tossups_heard=0,
            ended=True,
            round=game.round,
            forfeit=game.forfeit,
        )
    assert game.result is not None
    lines, heard = result_lines(plan, {**game.result, "teams": list(game.teams)})
    return MatchResult(
        match_id=game.result_id, teams=lines, tossups_heard=heard, ended=True, round=game.round
    )


@dataclass(frozen=True)
class PoolStandings:
    """The standings of one pool of a phase: its games and those carried over into it."""

    phase: PhasePlan
    pool: PoolPlan
    rows: list[Standing]


def phase_standings(
    plan: EventPlan, results: Iterable[MatchResult], phase_key: str
) -> list[PoolStandings]:
    """Each pool of the phase with its teams' standings over the phase's games and the
    games carried over into it (YellowFruit's ``PhaseStandings``: a phase's rounds and its
    carryover matches, each pool apart)."""
    phase = plan.phase(phase_key)
    if phase is None:
        names = ", ".join(p.name for p in plan.phases) or "none"
        raise RecordError(f"event {plan.name!r} has no phase {phase_key!r} (phases: {names})")
    counted = {g.result_id for g in plan.games if g.counts_in(phase.id)}
    mine = [r for r in results if r.match_id in counted]
    infos = {t.id: t for t in plan.team_infos()}
    out = []
    for pool in phase.pools:
        members = set(pool.teams)
        out.append(
            PoolStandings(
                phase,
                pool,
                standings(
                    [infos[t] for t in pool.teams], [r for r in mine if set(r.teams) <= members]
                ),
            )
        )
    return out


class NoSuchPhase(RecordError):
    """No phase or pool of the event by that name (what one may be told: the event's phases
    and pools are no secret)."""


def pool_of_phase(
    plan: EventPlan, phase_key: str, pool_key: str | None
) -> tuple[PhasePlan, PoolPlan | None]:
    """The phase with this id or name, and its pool with this id or name (None: every pool
    of the phase); an unknown one raises :class:`NoSuchPhase` naming those there are."""
    phase = plan.phase(phase_key)
    if phase is None:
        names = ", ".join(p.name for p in plan.phases) or "none"
        raise NoSuchPhase(f"event {plan.name!r} has no phase {phase_key!r} (phases: {names})")
    if pool_key is None:
        return phase, None
    wanted = pool_key.strip().casefold()
    pool = next((p for p in phase.pools if wanted in (p.id.casefold(), p.name.casefold())), None)
    if pool is None:
        names = ", ".join(p.name for p in phase.pools)
        raise NoSuchPhase(f"phase {phase.name!r} has no pool {pool_key!r} (pools: {names})")
    return phase, pool


def games_of_phase(plan: EventPlan, phase: PhasePlan, pool: PoolPlan | None) -> list[GamePlan]:
    """The games that count in ``phase`` (its own and those carried over into it), those
    between teams of ``pool`` when one is given, as :func:`phase_standings` counts them."""
    members = set(pool.teams) if pool is not None else None
    return [
        g
        for g in plan.games
        if not g.bye and g.counts_in(phase.id) and (members is None or set(g.teams) <= members)
    ]


def event_standings(engine: Engine, key: str | int) -> tuple[EventPlan, list[Standing]]:
    plan = load_plan(engine, key)
    return plan, standings(plan.team_infos(), match_results(engine, plan))


def event_phase_standings(
    engine: Engine, key: str | int, phase: str
) -> tuple[EventPlan, list[PoolStandings]]:
    plan = load_plan(engine, key)
    return plan, phase_standings(plan, match_results(engine, plan), phase)


def _last_result_seq() -> Any:
    """The seq of the last event of an event game's match that may change its result
    (:data:`~grace_arena.core.standings.RESULT_EVENTS`, or its creation): a correlated
    subquery of ``EventGameRow``, an index lookup per match."""
    return (
        select(EventRow.seq)
        .where(
            EventRow.match_id == EventGameRow.match_id,
            EventRow.type.in_(sorted(RESULT_EVENTS | {"match_created"})),  # type: ignore[attr-defined]
        )
        .order_by(EventRow.seq.desc())  # type: ignore[attr-defined]
        .limit(1)
        .scalar_subquery()
    )


def open_match_ids(engine: Engine, event_id: int) -> set[int]:
    """The matches of the event's games that have not ended (those a process may serve)."""
    query = (
        select(EventGameRow.match_id)
        .join(MatchRow, MatchRow.id == EventGameRow.match_id)  # type: ignore[arg-type]
        .where(EventGameRow.event_id == event_id, MatchRow.ended_at.is_(None))  # type: ignore[union-attr]
    )
    with Session(engine) as session:
        return {m for m in session.exec(query) if m is not None}


def game_marks(engine: Engine, event_id: int) -> dict[int, tuple[Any, ...]]:
    """Each scheduled game of the event: ``(match id, ended, the seq of the match's last
    event that may change its result, the team that forfeited it, its entered result)``.
    One query, an index lookup per match: what tells whether the standings may have changed
    (every change to a match is an event stored after the others; a word revealed, a buzz
    not yet ruled or a pause changes no result; a forfeit or a result is written on the
    game)."""
    query = (
        select(
            EventGameRow.id,
            EventGameRow.match_id,
            MatchRow.ended_at,
            _last_result_seq(),
            EventGameRow.forfeit,
            EventGameRow.result,
        )
        .select_from(EventGameRow)
        .outerjoin(MatchRow, MatchRow.id == EventGameRow.match_id)  # type: ignore[arg-type]
        .where(EventGameRow.event_id == event_id)
    )
    with Session(engine) as session:
        return {
            game_id: (match_id, ended_at is not None, seq, forfeit, result)
            for game_id, match_id, ended_at, seq, forfeit, result in session.exec(query)  # type: ignore[call-overload]
        }


def standings_stamp(engine: Engine, event_id: int) -> int:
    """The record's version of the event's standings: one number that grows with every event
    stored in a match of the event that may change its result or the schedule
    (:data:`~grace_arena.core.standings.RESULT_EVENTS`, and the match created: a ruling or a
    bonus part ruled, one undone or corrected, a protest resolved, a tossup or bonus thrown
    out, the match opened or ended), and with every game decided without a match (a forfeit,
    an entered result); with nothing else (not a word revealed). The sum, over the event's
    games, of the seq of its match's last such event (events are stored in order: it only
    grows) and of one per game decided. One query, an index lookup per match; the same on
    every process sharing the record."""
    query = (
        select(_last_result_seq(), EventGameRow.forfeit, EventGameRow.result)
        .select_from(EventGameRow)
        .where(EventGameRow.event_id == event_id)
    )
    with Session(engine) as session:
        return sum(
            int(seq or 0) + (forfeit is not None or result is not None)
            for seq, forfeit, result in session.exec(query)  # type: ignore[call-overload]
        )


class StandingsReader:
    """An event's standings, read from the record again after every change, re-reading only
    what changed: the plan when a scheduled match was created or ended (the schedule and the
    teams are fixed once a round started), and the results of the matches with events that
    may change a result stored since the last read, each from the events stored since
    (:class:`MatchReplays`). A server recomputes its events' standings after every ruling in any
    of its rooms; reading the whole event each time costs more and more as the event goes on.
    The standings and the plan's schedule are :func:`event_standings`'s (the plan's players
    are those of its last read: players who join register then). Safe to share between
    threads; an event gone from the record raises ``RecordError``."""

    def __init__(self, engine: Engine, event_id: int) -> None:
        self.engine, self.event_id = engine, event_id
        self._lock = threading.Lock()
        self._plan: EventPlan | None = None
        self._marks: dict[int, tuple[Any, ...]] = {}
        self._results: dict[int, MatchResult] = {}  # by match id; matches not begun left out
        self._replays = MatchReplays()  # each match's record as far as read
        #: Reads of matches' results and of the plan (for tests and benchmarks).
        self.matches_read = 0
        self.plans_read = 0

    def read(self) -> tuple[EventPlan, list[Standing]]:
        plan, results = self.read_results()
        return plan, standings(plan.team_infos(), results)

    def read_results(self) -> tuple[EventPlan, list[MatchResult]]:
        """The plan and what each of its games adds to the standings (for the standings of
        a phase: :func:`phase_standings`)."""
        with self._lock:
            # the marks before the plan: a plan read after them is as new as they are
            marks = game_marks(self.engine, self.event_id)
            plan = self._plan
            if plan is None or {g: (*m[:2], *m[3:]) for g, m in marks.items()} != {
                g: (*m[:2], *m[3:]) for g, m in self._marks.items()
            }:
                # a match created or ended, a game forfeited or its result entered, a phase
                # added (here or in another process)
                plan = self._load()
            changed = [
                m[0] for g, m in marks.items() if m[0] is not None and self._marks.get(g) != m
            ]
            if changed:
                self.matches_read += len(changed)
                for match_id in changed:
                    self._results.pop(match_id, None)
                for result in match_results(self.engine, plan, only=changed, replays=self._replays):
                    self._results[result.match_id] = result
                # a match replayed short of its mark (an event before it not yet visible):
                # marked as far as it was read, so that it is read on the next time
                for g, m in marks.items():
                    if m[0] in changed and m[2] is not None:
                        reached = self._replays.reached(m[0])
                        if reached < m[2]:
                            marks[g] = (m[0], m[1], reached, *m[3:])
            self._marks = marks
            results = [self._results[g.match_id] for g in plan.games if g.match_id in self._results]
            results += [
                decided_result(plan, g)
                for g in plan.games
                if g.forfeit is not None or g.result is not None
            ]
            return plan, results

    def _load(self) -> EventPlan:
        self.plans_read += 1
        self._plan = load_plan(self.engine, self.event_id)
        return self._plan
