"""An event's schedule: who meets whom in each round, and in which room. Pure functions.

Two ways to pair teams:

* ``round_robin``: every team meets every other once (the circle method); with an odd number
  of teams one team has a bye each round. More rounds than a round robin has start a second
  cycle.
* ``grace``: what GRACE's competitions did. Human teams meet a model player in some rounds
  (``model_rounds``; by default the odd ones) and another human team in the others. In a
  model round every human team plays one of the model teams, the models taking turns so that
  a human team meets each model before it meets one again; a model player is a program, so it
  may play in several rooms in the same round. In a human round the human teams are paired
  by the circle method; the one left over plays a model (or has a bye when there is none).

Then ``assign_rooms`` puts each round's matches into the rooms: one match per room at a time,
a room playing its matches of a round one after the other when there are more matches than
rooms. A bye takes no room.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Literal

Format = Literal["round_robin", "grace"]
FORMATS: tuple[Format, ...] = ("round_robin", "grace")


@dataclass(frozen=True)
class Pairing:
    """One match of a round (two teams), or a bye (one team)."""

    round: int  # 1-based
    teams: tuple[str, ...]

    @property
    def bye(self) -> bool:
        return len(self.teams) == 1


@dataclass(frozen=True)
class Game:
    """A pairing placed in a room: ``slot`` orders a room's matches within a round (0 first).
    A bye has no room."""

    round: int
    room: str | None
    slot: int
    teams: tuple[str, ...]

    @property
    def bye(self) -> bool:
        return len(self.teams) == 1


class ScheduleError(ValueError):
    """The teams, rounds or rooms asked for cannot make a schedule."""


def _circle(teams: Sequence[str], cycle_round: int) -> list[tuple[str, ...]]:
    """Round ``cycle_round`` (0-based) of the circle method: the first team stays, the others
    rotate; with an odd count a ``None`` seat gives a bye. In every other cycle (a second
    round robin) the two sides swap, so home and away alternate."""
    seats: list[str | None] = list(teams)
    if len(seats) % 2:
        seats.append(None)
    n = len(seats)
    k = cycle_round % (n - 1)
    rest = seats[1:]
    rotated = [seats[0], *rest[-k:], *rest[:-k]] if k else seats
    swap = (cycle_round // (n - 1)) % 2 == 1
    out: list[tuple[str, ...]] = []
    for i in range(n // 2):
        a, b = rotated[i], rotated[n - 1 - i]
        if a is None or b is None:
            out.append(((a or b),))  # type: ignore[arg-type]
        else:
            out.append((b, a) if swap else (a, b))
    return out


def round_robin(teams: Sequence[str], rounds: int | None = None) -> list[Pairing]:
    """Every team meets every other once in ``len(teams) - 1`` rounds (``len(teams)`` when the
    count is odd: each team has one bye); ``rounds`` may cut that short or go on into a
    second cycle.

    >>> [p.teams for p in round_robin(["A", "B", "C", "D"], 1)]
    [('A', 'D'), ('B', 'C')]
    """
    _check_teams(teams, at_least=2)
    cycle = len(teams) - 1 if len(teams) % 2 == 0 else len(teams)
    rounds = cycle if rounds is None else rounds
    _check_rounds(rounds)
    return [Pairing(r + 1, teams_) for r in range(rounds) for teams_ in _order(_circle(teams, r))]


def grace(
    humans: Sequence[str],
    models: Sequence[str],
    rounds: int,
    *,
    model_rounds: Collection[int] | None = None,
) -> list[Pairing]:
    """GRACE's pairings: human teams against a model player in ``model_rounds`` (1-based;
    default the odd rounds), against each other in the other rounds.

    >>> [(p.round, p.teams) for p in grace(["H1", "H2"], ["M1", "M2"], 3)]
    [(1, ('H1', 'M1')), (1, ('H2', 'M2')), (2, ('H1', 'H2')), (3, ('H1', 'M2')), (3, ('H2', 'M1'))]
    """
    _check_teams(humans, at_least=1, what="human teams")
    if not models:
        raise ScheduleError("the grace format needs at least one model team")
    _check_teams([*humans, *models], at_least=2)
    _check_rounds(rounds)
    if model_rounds is None:
        model_rounds = range(1, rounds + 1, 2)
    bad = sorted(r for r in model_rounds if not 1 <= r <= rounds)
    if bad:
        raise ScheduleError(f"model rounds {bad} are outside rounds 1-{rounds}")
    if len(humans) < 2 and any(r not in model_rounds for r in range(1, rounds + 1)):
        raise ScheduleError("a round of human teams against each other needs two human teams")
    pairings: list[Pairing] = []
    met = 0  # model rounds so far: the models take turns
    human_round = 0  # human rounds so far: the circle turns on
    for r in range(1, rounds + 1):
        if r in model_rounds:
            for i, h in enumerate(humans):
                pairings.append(Pairing(r, (h, models[(i + met) % len(models)])))
            met += 1
            continue
        games = _order(_circle(humans, human_round))
        human_round += 1
        for teams in games:
            if len(teams) == 1:  # the odd human team out plays a model instead of a bye
                teams = (teams[0], models[(human_round + len(humans)) % len(models)])
            pairings.append(Pairing(r, teams))
    return pairings


def _order(games: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """Matches first, the bye (if any) last."""
    return sorted(games, key=len, reverse=True)


def assign_rooms(pairings: Sequence[Pairing], rooms: Sequence[str]) -> list[Game]:
    """Place each round's matches in ``rooms``, in order: the i-th match of a round goes to
    room ``i mod len(rooms)``, in slot ``i div len(rooms)``. A bye has no room."""
    if not rooms:
        raise ScheduleError("an event needs at least one room")
    if len(set(rooms)) != len(rooms):
        raise ScheduleError(f"room names must differ: {list(rooms)}")
    games: list[Game] = []
    placed: dict[int, int] = {}
    for p in pairings:
        if p.bye:
            games.append(Game(p.round, None, 0, p.teams))
            continue
        i = placed.get(p.round, 0)
        placed[p.round] = i + 1
        games.append(Game(p.round, rooms[i % len(rooms)], i // len(rooms), p.teams))
    return games


_IN_A_ROW = {2: "two", 3: "three", 4: "four", 5: "five"}


def crowded_rounds(games: Sequence[Game], rooms: Sequence[str]) -> list[str]:
    """One line for each round with more matches than rooms: which rooms play several of its
    matches one after the other (``round 1 has 3 matches for 2 rooms: room 1 plays two in a
    row``). A room named by a number is called ``room N``."""
    out = []
    for number in sorted({g.round for g in games}):
        played = [g for g in games if g.round == number and not g.bye]
        if len(played) <= len(rooms):
            continue
        counts = {room: sum(g.room == room for g in played) for room in rooms}
        rows = []
        for room, count in counts.items():
            if count > 1:
                name = f"room {room}" if room.isdigit() else room
                rows.append(f"{name} plays {_IN_A_ROW.get(count, str(count))} in a row")
        places = f"{len(rooms)} room{'s' if len(rooms) != 1 else ''}"
        out.append(f"round {number} has {len(played)} matches for {places}: {', '.join(rows)}")
    return out


def schedule(
    humans: Sequence[str],
    models: Sequence[str],
    *,
    rounds: int | None,
    rooms: Sequence[str],
    format: Format = "round_robin",
    model_rounds: Collection[int] | None = None,
) -> list[Game]:
    """The whole schedule: pairings by ``format`` placed in ``rooms``."""
    if format == "round_robin":
        if model_rounds:
            raise ScheduleError("model rounds are an option of the grace format")
        pairings = round_robin([*humans, *models], rounds)
    elif format == "grace":
        if rounds is None:
            raise ScheduleError("the grace format needs a number of rounds")
        pairings = grace(humans, models, rounds, model_rounds=model_rounds)
    else:
        raise ScheduleError(f"format must be one of {', '.join(FORMATS)}, not {format!r}")
    return assign_rooms(pairings, rooms)


def _check_teams(teams: Sequence[str], *, at_least: int, what: str = "teams") -> None:
    if len(teams) < at_least:
        raise ScheduleError(f"a schedule needs at least {at_least} {what}, got {len(teams)}")
    if len(set(teams)) != len(teams):
        raise ScheduleError(f"team ids must differ: {list(teams)}")


def _check_rounds(rounds: int) -> None:
    if rounds < 1:
        raise ScheduleError(f"rounds must be at least 1, got {rounds}")
