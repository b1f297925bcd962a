"""An event's standings kept up to date one match at a time: a fold of each match's result
as it changes. Pure.

:func:`grace_arena.core.standings.standings` sums every match's result into the teams'
totals; a :class:`StandingsFold` keeps those totals and, when one match's result changes (a
ruling, one undone or corrected, a protest upheld, a tossup thrown out, the match ended, a
game forfeited or entered by its score), takes the match's old result out of its teams'
totals and puts the new one in, without reading any other match. What it gives is what
:func:`~grace_arena.core.standings.standings` gives over the same results in the same order,
after every change (the fold's property test says so). Safe to share between threads: a
change and a read of the rows are each made whole, one at a time.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from grace_arena.core.standings import (
    MatchResult,
    Standing,
    TeamInfo,
    contribution,
    ranked_rows,
)

__all__ = ["StandingsFold"]


class StandingsFold:
    """The totals of ``teams`` over the results put in so far. A result is known by its
    ``match_id``, and placed by ``position`` (the order in which the full computation would
    list it: a team's ``matches`` are in that order)."""

    def __init__(self, teams: Sequence[TeamInfo]) -> None:
        self.teams = list(teams)
        self._known = {t.id for t in self.teams}
        self._totals: dict[str, dict[str, int]] = {t.id: {} for t in self.teams}
        self._results: dict[int, tuple[MatchResult, int]] = {}
        #: Results folded in or out (for tests and benchmarks: the work done).
        self.folds = 0
        self._rows: list[Standing] | None = None
        self._lock = threading.RLock()

    def __contains__(self, match_id: int) -> bool:
        return match_id in self._results

    def result(self, match_id: int) -> MatchResult | None:
        kept = self._results.get(match_id)
        return kept[0] if kept is not None else None

    @property
    def match_ids(self) -> list[int]:
        with self._lock:
            return list(self._results)

    def put(self, result: MatchResult, position: int | None = None) -> bool:
        """The match's result as it stands now (new, or in place of the one put before);
        False when it is the same. Raises ``ValueError`` (and changes nothing) for a team
        not of the event."""
        with self._lock:
            kept = self._results.get(result.match_id)
            if position is None:
                position = kept[1] if kept is not None else len(self._results)
            same = kept is not None and (kept[0] is result or kept[0] == result)
            if same and kept is not None and kept[1] == position:
                return False
            adds = contribution(result, self._known)  # (checked before anything changes)
            if kept is not None:
                self._fold(contribution(kept[0], self._known), -1)
            self._fold(adds, 1)
            self._results[result.match_id] = (result, position)
            return True

    def drop(self, match_id: int) -> bool:
        """The match counts no more; False when it did not."""
        with self._lock:
            kept = self._results.pop(match_id, None)
            if kept is None:
                return False
            self._fold(contribution(kept[0], self._known), -1)
            return True

    def _fold(self, adds: dict[str, dict[str, int]], sign: int) -> None:
        self.folds += 1
        self._rows = None
        for team, add in adds.items():
            t = self._totals[team]
            for key, value in add.items():
                t[key] = t.get(key, 0) + sign * value

    def rows(self) -> list[Standing]:
        """The teams' standings, ranked (kept until the next change)."""
        with self._lock:
            if self._rows is None:
                matches: dict[str, list[tuple[int, int]]] = {t: [] for t in self._known}
                for match_id, (result, position) in self._results.items():
                    for team in result.teams:
                        matches[team].append((position, match_id))
                self._rows = ranked_rows(
                    self.teams,
                    self._totals,
                    {t: [m for _, m in sorted(ms)] for t, ms in matches.items()},
                )
            return self._rows
