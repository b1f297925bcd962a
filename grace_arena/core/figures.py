"""The figures of quizbowl statistics, each defined once: win %, PPG, P/20TUH, PPB and shares.
Pure.

Where each comes from and how it is counted is said in :mod:`grace_arena.core.stats`; the
standings (:mod:`grace_arena.core.standings`), the stats report, the CLI and the exports all
call these functions.
"""

from __future__ import annotations

__all__ = ["per_20_tuh", "per_game", "points_per_bonus", "rate", "win_pct"]


def win_pct(won: int, lost: int, tied: int = 0) -> float:
    """(W + T/2) ÷ (W + L + T); 0.0 before any finished match.

    >>> win_pct(2, 1, 1)
    0.625
    """
    games = won + lost + tied
    if won < 0 or lost < 0 or tied < 0:
        raise ValueError(f"won, lost and tied must be >= 0, got {won}, {lost}, {tied}")
    # (2W + T) / 2G: equal records give the same float, so that equal teams share a rank
    return (2 * won + tied) / (2 * games) if games else 0.0


def per_20_tuh(points: int, tossups_heard: int) -> float | None:
    """P/20TUH: points ÷ tossups heard × 20 (None when none was heard).

    >>> per_20_tuh(135, 40)
    67.5
    """
    if tossups_heard < 0:
        raise ValueError(f"tossups_heard must be >= 0, got {tossups_heard}")
    # points × 20 first: equal ratios give the same float (one correctly rounded division)
    return points * 20 / tossups_heard if tossups_heard else None


def per_game(points: int, games: int) -> float | None:
    """PPG: points ÷ games (None before the first).

    >>> per_game(450, 2)
    225.0
    """
    if games < 0:
        raise ValueError(f"games must be >= 0, got {games}")
    return points / games if games else None


def points_per_bonus(bonus_points: int, bonuses_heard: int) -> float | None:
    """PPB: points on the bonuses a team controlled ÷ those bonuses (None when none).

    >>> points_per_bonus(50, 3)
    16.666666666666668
    """
    if bonuses_heard < 0:
        raise ValueError(f"bonuses_heard must be >= 0, got {bonuses_heard}")
    return bonus_points / bonuses_heard if bonuses_heard else None


def rate(count: int, out_of: int) -> float | None:
    """A share (conversion, power rate, bounceback conversion): ``count ÷ out_of``, None
    when ``out_of`` is 0."""
    if out_of < 0 or count < 0:
        raise ValueError(f"count and out_of must be >= 0, got {count}, {out_of}")
    return count / out_of if out_of else None
