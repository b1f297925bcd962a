"""An event's standings, and each of its phases' pool by pool, kept up to date from each
game's result as it changes (:class:`grace_arena.core.standings_fold.StandingsFold`): a
ruling in one match folds that match's result into its teams' rows, in the event's
standings and in those of every pool of every phase the game counts in (its own and those
it is carried over into), without reading the other games. The same as
:func:`grace_arena.core.standings.standings` and :func:`~grace_arena.record.schedule
.phase_standings` over every result, after every change. Safe to share between threads:
one update (or read of rows) at a time, each whole; hold :attr:`EventFold.lock` to read
several rows of one state.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

from grace_arena.core.standings import MatchResult, Standing
from grace_arena.core.standings_fold import StandingsFold
from grace_arena.record.schedule import EventPlan, PhasePlan, PoolPlan

__all__ = ["EventFold"]


def _shape(plan: EventPlan) -> tuple[Any, ...]:
    """What the folds are made of: the teams, the phases' pools, each game's place (a
    change of any, such as a phase added, makes the folds again from the results)."""
    return (
        tuple((t.id, t.name, t.kind) for t in plan.team_infos()),
        tuple((ph.id, tuple((p.id, p.teams) for p in ph.pools)) for ph in plan.phases),
        tuple((g.id, g.phase_id, g.carryover, g.teams) for g in plan.games),
    )


class EventFold:
    """The standings of one event and of each pool of each of its phases, folded one game's
    result at a time. :meth:`update` with the plan and the results as they stand."""

    def __init__(self, plan: EventPlan) -> None:
        #: Held by each update and read: two updates that crossed would count a change twice.
        self.lock = threading.RLock()
        self._make(plan)
        #: Times the folds were made again from every result (the plan's shape changed).
        self.rebuilt = 0

    def _make(self, plan: EventPlan) -> None:
        self.shape = _shape(plan)
        infos = {t.id: t for t in plan.team_infos()}
        self.event = StandingsFold(list(infos.values()))
        self.pools: dict[tuple[str, str], StandingsFold] = {
            (ph.id, pool.id): StandingsFold([infos[t] for t in pool.teams if t in infos])
            for ph in plan.phases
            for pool in ph.pools
        }
        self._plan = plan

    @property
    def folds(self) -> int:
        """Results folded in or out, over the event's and the pools' folds."""
        return self.event.folds + sum(f.folds for f in self.pools.values())

    def update(self, plan: EventPlan, results: Iterable[MatchResult]) -> bool:
        """The results as they stand (``StandingsReader.read_results``'s: each begun match's,
        then each game decided without one); only those that changed are folded. False
        when nothing changed."""
        with self.lock:
            return self._update(plan, list(results))

    def _update(self, plan: EventPlan, results: list[MatchResult]) -> bool:
        if _shape(plan) != self.shape:
            self._make(plan)
            self.rebuilt += 1
        self._plan = plan
        games = {g.result_id: (i, g) for i, g in enumerate(plan.games)}
        decided = {g.result_id for g in plan.games if g.forfeit is not None or g.result is not None}
        changed = False
        seen: set[int] = set()
        for result in results:
            index, game = games.get(result.match_id, (len(games), None))
            position = index + (len(games) if result.match_id in decided else 0)
            seen.add(result.match_id)
            if not self.event.put(result, position):
                continue
            changed = True
            for key, fold in self.pools.items():
                phase_id, pool_id = key
                if self._counts(game, phase_id, pool_id, result):
                    fold.put(result, position)
                else:
                    fold.drop(result.match_id)
        for gone in set(self.event.match_ids) - seen:
            changed = True
            self.event.drop(gone)
            for fold in self.pools.values():
                fold.drop(gone)
        return changed

    def _counts(self, game: Any, phase_id: str, pool_id: str, result: MatchResult) -> bool:
        if game is None or not game.counts_in(phase_id):
            return False
        fold = self.pools[(phase_id, pool_id)]
        return set(result.teams) <= {t.id for t in fold.teams}

    def rows(self) -> list[Standing]:
        """The event's standings."""
        with self.lock:
            return self.event.rows()

    def phase_rows(self, phase: PhasePlan, pool: PoolPlan) -> list[Standing]:
        """The standings of one pool of a phase (its games and those carried over into it)."""
        with self.lock:
            return self.pools[(phase.id, pool.id)].rows()
