"""An event's roster: the players its organiser registers per team, their claim codes, and
the players the organiser (or the TD) removes.

A player of the roster (``registered_by == "organiser"``) is taken on a phone only with the
claim code the organiser was given for them (printed by ``event create`` and ``event roster``,
or issued on the spot over HTTP with the organiser's or the TD's token): the room's code alone
never makes a stranger that player. A player who joined from a phone by typing a name (a
walk-in) is the same player when the name is typed again, as before. Whether an event takes
walk-ins is its own setting (``meta["walk_ins"]``); by default an event with a roster takes
none, and one without a roster takes them.

A removed player keeps its row (the matches it played name it), with its name made free
(its key is set apart) and ``removed_at`` set: its token opens nothing, and it no longer
counts towards the event's players.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine
from sqlmodel import Session, select

from grace_arena.record.models import ArenaEventRow, EventPlayerRow, EventTeamRow, utcnow
from grace_arena.record.store import RecordError, player_name_key

__all__ = [
    "CLAIM_CODE_LENGTH",
    "ORGANISER",
    "Issued",
    "add_to_roster",
    "claim_matches",
    "issue_codes",
    "new_claim_code",
    "remove_player",
    "roster_of",
    "walk_ins_allowed",
]

#: ``registered_by`` of a player of the roster.
ORGANISER = "organiser"
#: Characters of a claim code: capitals and digits that cannot be read as one another.
_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
#: 32**8 = 2**40 codes: a guess in a trillion, and guesses are throttled per address.
CLAIM_CODE_LENGTH = 8


def new_claim_code() -> str:
    """A fresh claim code, e.g. ``KX7P-2MQD`` (the dash is for reading it out)."""
    code = "".join(secrets.choice(_ALPHABET) for _ in range(CLAIM_CODE_LENGTH))
    return f"{code[:4]}-{code[4:]}"


def _canonical(code: str) -> str:
    return "".join(c for c in code.upper() if c.isalnum())


def claim_sha256(code: str) -> str:
    return hashlib.sha256(_canonical(code).encode()).hexdigest()


def claim_matches(given: str | None, stored: str | None) -> bool:
    """Whether the code ``given`` is the one whose hash is ``stored`` (case, spaces and dashes
    aside; compared in constant time). No stored code: nothing claims the player."""
    if not given or not stored:
        return False
    return hmac.compare_digest(claim_sha256(given), stored)


def walk_ins_allowed(meta: Mapping[str, Any], has_roster: bool) -> bool:
    """Whether phones may join an event under a name of their own: the event's setting, or by
    default only when it has no roster."""
    value = (meta or {}).get("walk_ins")
    return (not has_roster) if value is None else bool(value)


@dataclass(frozen=True)
class Issued:
    """A player of the roster and the claim code just issued for them."""

    player_id: str
    team: str
    team_name: str
    name: str
    code: str


def _event(session: Session, event_id: int) -> ArenaEventRow:
    row = session.get(ArenaEventRow, event_id)
    if row is None:
        raise RecordError(f"no event with id {event_id}")
    return row


def _teams(session: Session, event_id: int) -> dict[str, str]:
    rows = session.exec(select(EventTeamRow).where(EventTeamRow.event_id == event_id))
    return {t.team_id: t.name for t in rows}


def roster_of(engine: Engine, event_id: int) -> list[EventPlayerRow]:
    """The event's players of the roster, not removed, by team and name."""
    with Session(engine) as session:
        return list(
            session.exec(
                select(EventPlayerRow)
                .where(
                    EventPlayerRow.event_id == event_id,
                    EventPlayerRow.registered_by == ORGANISER,
                    EventPlayerRow.removed_at.is_(None),  # type: ignore[union-attr]
                )
                .order_by(EventPlayerRow.team_id, EventPlayerRow.name)  # type: ignore[arg-type]
            )
        )


def issue_codes(
    engine: Engine, event_id: int, player_ids: Iterable[str] | None = None
) -> list[Issued]:
    """New claim codes for the roster's players (``player_ids``: only these; None: all of
    them); a code issued before for one of them no longer claims it. A player who took their
    seat keeps it: their token, not the code, brings them back."""
    wanted = set(player_ids) if player_ids is not None else None
    out = []
    with Session(engine) as session:
        teams = _teams(session, event_id)
        rows = session.exec(
            select(EventPlayerRow)
            .where(
                EventPlayerRow.event_id == event_id,
                EventPlayerRow.removed_at.is_(None),  # type: ignore[union-attr]
            )
            .order_by(EventPlayerRow.team_id, EventPlayerRow.name)  # type: ignore[arg-type]
        ).all()
        by_id = {r.player_id: r for r in rows}
        for player_id in sorted(wanted - set(by_id)) if wanted is not None else []:
            raise RecordError(f"no player {player_id!r} in this event")
        for row in rows:
            if wanted is not None and row.player_id not in wanted:
                continue
            if row.registered_by != ORGANISER:
                if wanted is None:
                    continue
                row.registered_by = ORGANISER  # a walk-in the organiser takes on the roster
            code = new_claim_code()
            row.claim_sha256 = claim_sha256(code)
            session.add(row)
            out.append(
                Issued(row.player_id, row.team_id, teams.get(row.team_id, row.team_id),
                       row.name, code)
            )  # fmt: skip
        session.commit()
    return out


def add_to_roster(
    engine: Engine, event_id: int, players: Iterable[tuple[str, str]]
) -> list[Issued]:
    """Register players (``(team id, name)``) on the event's roster, each with a claim code.
    A name the team has already (a walk-in) joins the roster with a code of its own."""
    ids = []
    with Session(engine) as session:
        _event(session, event_id)
        teams = _teams(session, event_id)
        for team, name in players:
            if team not in teams:
                raise RecordError(f"player {name!r}: no team {team!r} in the event")
            name = name.strip()
            if not name:
                raise RecordError(f"a player of team {team!r} has no name")
            key = player_name_key(name)
            row = session.exec(
                select(EventPlayerRow).where(
                    EventPlayerRow.event_id == event_id,
                    EventPlayerRow.team_id == team,
                    EventPlayerRow.name_key == key,
                )
            ).first()
            if row is None:
                row = EventPlayerRow(
                    event_id=event_id,
                    player_id=f"p-{secrets.token_hex(4)}",
                    team_id=team,
                    name=name,
                    name_key=key,
                    kind="human",
                )
            row.registered_by = ORGANISER
            session.add(row)
            ids.append(row.player_id)
        session.commit()
    return issue_codes(engine, event_id, ids)


def find_roster_player(engine: Engine, event_id: int, given: str) -> EventPlayerRow:
    """The event's player (not removed) that ``given`` names: its id, or ``TEAM:NAME`` (the
    team by its id or name, case aside)."""
    with Session(engine) as session:
        rows = session.exec(
            select(EventPlayerRow).where(
                EventPlayerRow.event_id == event_id,
                EventPlayerRow.removed_at.is_(None),  # type: ignore[union-attr]
            )
        ).all()
        teams = _teams(session, event_id)
    found = next((r for r in rows if r.player_id == given), None)
    if found is not None:
        return found
    team, sep, name = given.partition(":")
    if sep:
        wanted = team.strip().casefold()
        ids = [t for t, n in teams.items() if wanted in (t.casefold(), n.casefold())]
        key = player_name_key(name)
        found = next((r for r in rows if r.team_id in ids and r.name_key == key), None)
        if found is not None:
            return found
    raise RecordError(f"no player {given!r} in this event (give a player id, or TEAM:NAME)")


def remove_player(engine: Engine, event_id: int, player_id: str) -> EventPlayerRow:
    """Remove a player from the event: the name is free again and the player's token opens
    nothing; the matches it played keep it."""
    with Session(engine) as session:
        row = session.get(EventPlayerRow, (event_id, player_id))
        if row is None or row.removed_at is not None:
            raise RecordError(f"no player {player_id!r} in this event")
        row.removed_at = utcnow()
        row.claim_sha256 = None
        row.name_key = f"{row.name_key[: 190 - len(player_id)]}#removed#{player_id}"
        session.add(row)
        session.commit()
        session.refresh(row)
        return row
