"""The draft of AI teammates between rounds of an event (QANTA 2026). Pure.

Teams pick AI players from a pool by **reverse standings, snake**: the last team in the
standings picks first in the draft's first round of picks, the leader last; the second round
of picks goes back up (the leader first), and so on. Each team picks the AI it prefers most
among those left (its ``preferences``; by default the pool's order); with ``one_per_class`` a
team takes no second AI of a weight class it has (QANTA 2026's teams field AIs of different
weight classes). The result is the picks in order, each AI going to one team.

Standings are the teams best first: by wins, then points, then team id
(:func:`standings_order`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["DraftError", "Pick", "draft", "draft_order", "standings_order"]


class DraftError(ValueError):
    """A draft that cannot be made: an unknown team or AI, or a team left with nothing to
    pick."""


@dataclass(frozen=True)
class Pick:
    number: int  # 1-based, in the draft's order
    round: int  # 1-based round of picks
    team: str
    ai: str


def standings_order(results: Mapping[str, tuple[int, int]]) -> list[str]:
    """Teams best first, from ``results``: team -> (wins, points)."""
    return sorted(results, key=lambda t: (-results[t][0], -results[t][1], t))


def draft_order(standings: Sequence[str], rounds: int) -> list[tuple[int, str]]:
    """(round, team) for every pick: reverse standings, snaking."""
    if rounds < 1:
        raise DraftError(f"a draft has at least one round of picks, not {rounds}")
    reverse = list(reversed(standings))
    order = []
    for r in range(1, rounds + 1):
        teams = reverse if r % 2 == 1 else list(standings)
        order += [(r, t) for t in teams]
    return order


def draft(
    standings: Sequence[str],
    pool: Mapping[str, str],
    *,
    rounds: int,
    preferences: Mapping[str, Sequence[str]] | None = None,
    one_per_class: bool = False,
) -> list[Pick]:
    """The picks: ``standings`` best first; ``pool`` AI id -> its weight class; ``rounds``
    AIs per team; ``preferences`` team -> AI ids, most wanted first (the rest of the pool
    after them, in its order)."""
    preferences = preferences or {}
    unknown_teams = sorted(set(preferences) - set(standings))
    if unknown_teams:
        raise DraftError(f"preferences of teams not in the standings: {unknown_teams}")
    for team, wanted in preferences.items():
        strangers = [a for a in wanted if a not in pool]
        if strangers:
            raise DraftError(f"team {team!r} wants AIs not in the pool: {strangers}")
    if len(pool) < len(standings) * rounds:
        raise DraftError(
            f"{len(pool)} AIs in the pool for {len(standings)} teams × {rounds} picks each"
        )
    left = list(pool)
    held: dict[str, list[str]] = {t: [] for t in standings}
    picks = []
    for number, (r, team) in enumerate(draft_order(standings, rounds), start=1):
        wanted = [*preferences.get(team, ()), *left]
        classes = {pool[a] for a in held[team]}
        choice = next(
            (a for a in wanted if a in left and not (one_per_class and pool[a] in classes)),
            None,
        )
        if choice is None:
            raise DraftError(f"team {team!r} has no AI left to pick in round {r}")
        left.remove(choice)
        held[team].append(choice)
        picks.append(Pick(number=number, round=r, team=team, ai=choice))
    return picks
