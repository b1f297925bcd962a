"""An event's standings: won/lost, points, tossups heard and buzzes per team. Pure.

The input is one :class:`MatchResult` per match of the event (finished or not); the output
one :class:`Standing` per team, ranked. A match counts towards won/lost/tied once it has
ended; its points, tossups heard and buzzes count as they happen, so that the standings move
after every ruling (the tossups heard are those of
:func:`grace_arena.core.events.tossups_heard`, as in the QBJ export). A team's rank is by wins
(a tie counts half), then points per tossup heard, then points; teams equal on all three
share a rank, listed by name.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace


@dataclass(frozen=True)
class TeamLine:
    """One team's part in one match."""

    points: int = 0
    correct: int = 0  # buzzes ruled correct (powers included)
    powers: int = 0
    incorrect: int = 0  # buzzes ruled incorrect (negs included)
    negs: int = 0  # incorrect buzzes that cost points


@dataclass(frozen=True)
class MatchResult:
    """What a match adds to the standings; ``teams`` maps team id to its line."""

    match_id: int
    teams: Mapping[str, TeamLine]
    tossups_heard: int
    ended: bool
    round: int | None = None


@dataclass(frozen=True)
class Standing:
    team: str
    name: str
    kind: str  # human | model
    rank: int = 0
    played: int = 0  # finished matches
    won: int = 0
    lost: int = 0
    tied: int = 0
    live: int = 0  # matches begun and not over
    points: int = 0
    points_against: int = 0
    tossups_heard: int = 0
    correct: int = 0
    powers: int = 0
    incorrect: int = 0
    negs: int = 0
    matches: tuple[int, ...] = field(default=())

    @property
    def points_per_tossup(self) -> float | None:
        return self.points / self.tossups_heard if self.tossups_heard else None

    @property
    def win_share(self) -> float:
        return (self.won + 0.5 * self.tied) / self.played if self.played else 0.0


@dataclass(frozen=True)
class TeamInfo:
    id: str
    name: str
    kind: str = "human"


def standings(teams: Sequence[TeamInfo], results: Iterable[MatchResult]) -> list[Standing]:
    """Every team of ``teams`` with its totals over ``results``, ranked (1 = first; teams
    equal on wins, points per tossup heard and points share a rank).

    >>> from grace_arena.core.standings import MatchResult, TeamInfo, TeamLine, standings
    >>> rows = standings(
    ...     [TeamInfo("red", "Red"), TeamInfo("blue", "Blue")],
    ...     [MatchResult(1, {"red": TeamLine(points=30, correct=3),
    ...                      "blue": TeamLine(points=5, correct=1, incorrect=1, negs=1)},
    ...                  tossups_heard=4, ended=True)],
    ... )
    >>> [(s.rank, s.team, s.won, s.lost, s.points) for s in rows]
    [(1, 'red', 1, 0, 30), (2, 'blue', 0, 1, 5)]
    """
    known = {t.id: t for t in teams}
    totals: dict[str, dict[str, int]] = {t.id: {} for t in teams}
    matches: dict[str, list[int]] = {t.id: [] for t in teams}
    for result in results:
        unknown = sorted(set(result.teams) - set(known))
        if unknown:
            raise ValueError(f"match {result.match_id}: teams {unknown} are not in the event")
        for team, line in result.teams.items():
            t = totals[team]
            others = [o.points for other, o in result.teams.items() if other != team]
            against = max(others) if others else 0
            add = {
                "points": line.points,
                "points_against": sum(others),
                "tossups_heard": result.tossups_heard,
                "correct": line.correct,
                "powers": line.powers,
                "incorrect": line.incorrect,
                "negs": line.negs,
            }
            if result.ended:
                add["played"] = 1
                if others:
                    add["won" if line.points > against else "lost" if line.points < against
                        else "tied"] = 1  # fmt: skip
            else:
                add["live"] = 1
            for key, value in add.items():
                t[key] = t.get(key, 0) + value
            matches[team].append(result.match_id)
    rows = [
        Standing(
            team=info.id,
            name=info.name,
            kind=info.kind,
            matches=tuple(matches[info.id]),
            **totals[info.id],
        )
        for info in teams
    ]

    def key(s: Standing) -> tuple[float, float, int]:
        # points decide between teams equal on points per tossup heard; a team that heard no
        # tossup counts 0 per tossup, and any points it has still place it
        return (-(s.won + 0.5 * s.tied), -(s.points_per_tossup or 0.0), -s.points)

    rows.sort(key=lambda s: (*key(s), s.name.casefold(), s.team))
    ranked: list[Standing] = []
    for i, row in enumerate(rows):
        shared = i > 0 and key(rows[i - 1]) == key(row)
        rank = ranked[-1].rank if shared else i + 1
        ranked.append(replace(row, rank=rank))
    return ranked
