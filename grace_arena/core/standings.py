"""An event's standings: won/lost, points, tossups heard and buzzes per team. Pure.

The input is one :class:`MatchResult` per match of the event (finished or not); the output
one :class:`Standing` per team, ranked. A finished match counts in every figure; a match
under way adds its points to the team's points as they happen, so that the standings move
after every ruling, and they are shown apart as points in play (``live_points``); every other
figure (won/lost/tied, games, tossups heard, buzzes, bonuses, PPG, P/20TUH, PPB, points
against, and so the order) is of the finished matches only, so that a row's figures are all
of the same games (the tossups heard are those of
:func:`grace_arena.core.events.tossups_heard`, as in the QBJ export). The figures (win %,
PPG, P/20TUH, PPB, bounceback conversion) are defined once, in :mod:`grace_arena.core.figures`,
and the order here (:func:`rank_key`), with their sources in :mod:`grace_arena.core.stats`: win
percentage, then points per bonus, then points per 20 tossups heard; teams equal on all three
share a rank, listed by name.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from grace_arena.core.events import (
    PART_RULINGS,
    BonusEnded,
    BonusPartCorrected,
    BonusPartRuled,
    BonusStarted,
    Event,
    MatchCreated,
    TossupOutcome,
)
from grace_arena.core.figures import per_20_tuh, per_game, points_per_bonus, rate, win_pct
from grace_arena.core.rules import rule_set

if TYPE_CHECKING:
    from grace_arena.core.config import ScoringRules
    from grace_arena.core.match import GameState

#: The events of a match after which its result (what it adds to the standings) may change:
#: a tossup heard or thrown out, a ruling made, undone or corrected, a protest resolved, a
#: bonus heard or thrown out, a bonus part ruled, undone or corrected, the match ended. The
#: others (words revealed, buzzes, answers given, pauses, ...) change nothing of it.
RESULT_EVENTS = frozenset(
    {
        "tossup_started",
        "tossup_ended",
        "ruled",
        "ruling_undone",
        "ruling_corrected",
        "protest_resolved",
        "bonus_started",
        "bonus_ended",
        "bonus_part_ruled",
        "bonus_part_undone",
        "bonus_part_corrected",
        "match_ended",
    }
)


@dataclass(frozen=True)
class TeamLine:
    """One team's part in one match."""

    points: int = 0
    correct: int = 0  # buzzes ruled correct (powers included)
    powers: int = 0
    incorrect: int = 0  # buzzes ruled incorrect (negs included)
    negs: int = 0  # incorrect buzzes that cost points
    bonuses_heard: int = 0  # bonuses this team controlled (thrown out ones not counted)
    bonus_points: int = 0  # points on the bonuses it controlled (in ``points`` too)
    bounceback_points: int = 0  # points on the other team's bonuses (in ``points`` too)
    bounceback_parts: int = 0  # the other team's parts bounced to this team (it missed them)
    bounceback_available: int = 0  # those parts' points (their values)
    #: points on the tossups of an overtime played without bonuses (:func:`unrated_tossups`;
    #: in ``points`` too), which PPG and P/20TUH leave out
    overtime_points: int = 0


@dataclass(frozen=True)
class PartPlayed:
    """A bonus part as it stands: the controlling team's ruling and points, and a bounceback's
    (None: none was played), with what each typed."""

    part: int  # 0-based
    value: int | None
    ruling: str | None  # the controlling team's, once ruled
    points: int
    answer: str | None
    bounceback_team: str | None = None
    bounceback_ruling: str | None = None
    bounceback_points: int = 0
    bounceback_answer: str | None = None


@dataclass(frozen=True)
class BonusPlayed:
    """A bonus heard in a match (not thrown out, its cycle not thrown out)."""

    tossup_id: str  # the tossup answered correctly that earned it
    bonus_id: str
    team: str  # the controlling team
    parts: tuple[PartPlayed, ...]

    @property
    def points(self) -> int:
        return sum(p.points for p in self.parts)

    @property
    def bounceback_points(self) -> int:
        return sum(p.bounceback_points for p in self.parts)


def bonuses_played(events: Sequence[Event], game: GameState | None = None) -> list[BonusPlayed]:
    """The bonuses of one match's record as they stand (an undone ruling is not in force; a
    bonus thrown out, or whose cycle was thrown out, is not heard; nor one the match ended in
    before any of its parts was ruled), in the order heard. ``game``: the match's state after
    all of ``events``, when the caller has it (``events`` may then be only the match's
    creation, bonuses started and ended, and parts ruled); replayed from them otherwise."""
    from grace_arena.core.match import Match

    if not any(isinstance(ev, BonusStarted) for ev in events):
        return []
    if game is None:
        game = Match.replay(events).state.game
    config = next(ev.config for ev in events if isinstance(ev, MatchCreated))
    controller: dict[str, tuple[str, str]] = {}  # bonus -> (team, tossup): its start in force
    thrown: set[str] = set()
    ruled: dict[int, BonusPartRuled | BonusPartCorrected] = {}
    for ev in events:
        if isinstance(ev, BonusStarted):
            controller[ev.bonus_id] = (ev.team, ev.tossup_id)
            thrown.discard(ev.bonus_id)
        elif isinstance(ev, BonusEnded) and ev.outcome == "thrown_out":
            thrown.add(ev.bonus_id)
        elif isinstance(ev, PART_RULINGS):  # as ruled, or as corrected (core.protests)
            ruled[ev.seq] = ev
    in_force = [ruled[e.seq] for e in game.ledger if e.bonus_id is not None and e.seq in ruled]
    played = []
    for bonus_id in game.bonuses_used:
        team, tossup = controller[bonus_id]
        if bonus_id in thrown or game.outcomes.get(tossup) is TossupOutcome.THROWN_OUT:
            continue
        spec = config.bonus(bonus_id)
        parts = []
        for number in range(len(spec.parts) if spec else 0):
            mine = [r for r in in_force if r.bonus_id == bonus_id and r.part == number
                    and r.resume != "prompt"]  # fmt: skip
            own = next((r for r in mine if not r.bounceback), None)
            bounced = next((r for r in mine if r.bounceback), None)
            if own is None and bounced is None:
                continue  # not reached (yet)
            parts.append(
                PartPlayed(
                    part=number,
                    value=spec.parts[number].value if spec else None,
                    ruling=own.ruling.value if own else None,
                    points=own.points if own else 0,
                    answer=own.answer if own else None,
                    bounceback_team=bounced.team if bounced else None,
                    bounceback_ruling=bounced.ruling.value if bounced else None,
                    bounceback_points=bounced.points if bounced else 0,
                    bounceback_answer=bounced.answer if bounced else None,
                )
            )
        if parts:  # (a bonus cut short before its first ruling, by the match's end, is not heard)
            played.append(BonusPlayed(tossup, bonus_id, team, tuple(parts)))
    return played


@dataclass(frozen=True)
class BonusLine:
    bonuses_heard: int = 0
    bonus_points: int = 0
    bounceback_points: int = 0
    bounceback_parts: int = 0
    bounceback_available: int = 0


def bonus_lines(events: Sequence[Event]) -> dict[str, BonusLine]:
    """Each team's bonuses in one match's record, as they stand: the bonuses it controlled
    and its points on them, and its points on the other team's bonuses (bouncebacks)."""
    return lines_of_bonuses(bonuses_played(events))


def lines_of_bonuses(bonuses: Iterable[BonusPlayed]) -> dict[str, BonusLine]:
    """:func:`bonus_lines` of bonuses already played out (:func:`bonuses_played`'s): the
    points are the parts' rulings' (``BonusPartRuled.points``); a part bounced back adds its
    value to what the other team could have won on it."""
    lines: dict[str, dict[str, int]] = {}
    for bonus in bonuses:
        line = lines.setdefault(bonus.team, {})
        line["bonuses_heard"] = line.get("bonuses_heard", 0) + 1
        line["bonus_points"] = line.get("bonus_points", 0) + bonus.points
        for part in bonus.parts:
            if part.bounceback_team is not None:
                other = lines.setdefault(part.bounceback_team, {})
                for key, add in (
                    ("bounceback_points", part.bounceback_points),
                    ("bounceback_parts", 1),
                    ("bounceback_available", part.value or 0),
                ):
                    other[key] = other.get(key, 0) + add
    return {team: BonusLine(**line) for team, line in lines.items()}


def bonuses_heard(earned: Iterable[str], bonuses: Iterable[BonusPlayed]) -> int:
    """A team's bonuses heard: one for every tossup it answered correctly where a bonus
    follows (``earned``: in regulation, or in an overtime that plays bonuses), as YellowFruit
    (``MatchTeam.getBonusesHeard``) and SQBS count them, read or not (a match ended first, a
    protest upheld after it), and one for every bonus it was read on a tossup no longer its
    (a correct answer reversed after its bonus: the bonus stays with its cycle).

    >>> b = BonusPlayed("t2", "b2", "red", ())
    >>> bonuses_heard(["t1", "t2"], [b]), bonuses_heard(["t1"], [b]), bonuses_heard([], [])
    (2, 2, 0)
    """
    earned = set(earned)
    return len(earned) + sum(1 for b in bonuses if b.tossup_id not in earned)


def unrated_tossups(rules: ScoringRules, heard: Sequence[str]) -> list[str]:
    """The tossups of a match (``heard``, in order) that PPG and P/20TUH leave out, with the
    points scored on them: those of an overtime played without bonuses, in rules that play
    bonuses. They are worth less than a tossup and its bonus, so a team that went to overtime
    would rate lower than for its games in regulation. Everything counts otherwise (tossups
    only, or bonuses in overtime). This is YellowFruit's rule (``ScoringRules
    .useOvertimeInPPTUH``, ``MatchTeam.getPointsForPPG``).

    >>> from grace_arena.core.formats import rules_for
    >>> unrated_tossups(rules_for("acf", regulation_tossups=2), ["t1", "t2", "t3"])
    ['t3']
    >>> unrated_tossups(rules_for("grace", regulation_tossups=2), ["t1", "t2", "t3"])
    []
    """
    return rule_set(rules).unrated(heard)


@dataclass(frozen=True)
class MatchResult:
    """What a match adds to the standings; ``teams`` maps team id to its line."""

    match_id: int
    teams: Mapping[str, TeamLine]
    tossups_heard: int
    ended: bool
    round: int | None = None
    #: of ``tossups_heard``, those of an overtime played without bonuses
    #: (:func:`unrated_tossups`), which P/20TUH leaves out
    overtime_tossups: int = 0
    #: The team that forfeited (None: the game was played). A forfeit counts as a win and a
    #: loss and in nothing else (YellowFruit's rule: ``PoolTeamStats.addMatchTeam`` counts
    #: the result and returns before points, tossups and bonuses; PPG divides by the games
    #: not forfeited).
    forfeit: str | None = None


@dataclass(frozen=True)
class Standing:
    team: str
    name: str
    kind: str  # human | model
    rank: int = 0
    played: int = 0  # finished matches (forfeits aside: in ``won``/``lost`` only)
    forfeits: int = 0  # games won or lost by forfeit
    won: int = 0
    lost: int = 0
    tied: int = 0
    live: int = 0  # matches begun and not over
    points: int = 0  # finished matches' and those under way's (``live_points``)
    live_points: int = 0  # points in play: in the matches under way
    points_against: int = 0
    tossups_heard: int = 0
    correct: int = 0
    powers: int = 0
    incorrect: int = 0
    negs: int = 0
    bonuses_heard: int = 0
    bonus_points: int = 0
    bounceback_points: int = 0
    bounceback_parts: int = 0  # parts bounced to the team
    bounceback_available: int = 0  # their points
    overtime_tossups: int = 0  # heard in overtimes without bonuses: not in P/20TUH
    overtime_points: int = 0  # scored on them: not in PPG and P/20TUH
    matches: tuple[int, ...] = field(default=())

    # the figures, as grace_arena.core.figures defines them

    @property
    def games(self) -> int:
        """Matches played: finished (a match under way is ``live``)."""
        return self.played

    @property
    def finished_points(self) -> int:
        """Points in finished matches: those PPG and P/20TUH divide."""
        return self.points - self.live_points

    @property
    def rated_points(self) -> int:
        """The points PPG and P/20TUH divide: those of finished matches, less those scored on
        the tossups of an overtime played without bonuses (:func:`unrated_tossups`)."""
        return self.finished_points - self.overtime_points

    @property
    def rated_tossups_heard(self) -> int:
        """The tossups heard P/20TUH divides by: all, less those of an overtime played
        without bonuses."""
        return self.tossups_heard - self.overtime_tossups

    @property
    def points_per_tossup(self) -> float | None:
        tuh = self.rated_tossups_heard
        return self.rated_points / tuh if tuh else None

    @property
    def points_per_20_tuh(self) -> float | None:
        return per_20_tuh(self.rated_points, self.rated_tossups_heard)

    @property
    def points_per_game(self) -> float | None:
        return per_game(self.rated_points, self.games)

    @property
    def points_per_bonus(self) -> float | None:
        """PPB: points on the bonuses the team controlled, per bonus heard."""
        return points_per_bonus(self.bonus_points, self.bonuses_heard)

    @property
    def bounceback_conversion(self) -> float | None:
        return rate(self.bounceback_points, self.bounceback_available)

    @property
    def win_pct(self) -> float:
        return win_pct(self.won, self.lost, self.tied)

    @property
    def win_share(self) -> float:
        return self.win_pct


@dataclass(frozen=True)
class TeamInfo:
    id: str
    name: str
    kind: str = "human"


def standings(teams: Sequence[TeamInfo], results: Iterable[MatchResult]) -> list[Standing]:
    """Every team of ``teams`` with its totals over ``results``, ranked by
    :func:`rank_key` (1 = first; teams equal on win %, PPB and
    P/20TUH share a rank).

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
    known = {t.id for t in teams}
    totals: dict[str, dict[str, int]] = {t.id: {} for t in teams}
    matches: dict[str, list[int]] = {t.id: [] for t in teams}
    for result in results:
        for team, add in contribution(result, known).items():
            t = totals[team]
            for key, value in add.items():
                t[key] = t.get(key, 0) + value
            matches[team].append(result.match_id)
    return ranked_rows(teams, totals, matches)


def contribution(result: MatchResult, known: Iterable[str]) -> dict[str, dict[str, int]]:
    """What one match adds to each of its teams' totals (the figures of :class:`Standing`);
    raises ``ValueError`` for a team not in ``known`` (the event's). A forfeit counts as a win
    and a loss and in nothing else; a match under way adds its points only, in play."""
    unknown = sorted(set(result.teams) - set(known))
    if unknown:
        raise ValueError(f"match {result.match_id}: teams {unknown} are not in the event")
    out: dict[str, dict[str, int]] = {}
    if result.forfeit is not None:
        if result.forfeit not in result.teams:
            raise ValueError(
                f"match {result.match_id}: {result.forfeit!r} forfeited a game it is not in"
            )
        for team in result.teams:
            out[team] = {"lost" if team == result.forfeit else "won": 1, "forfeits": 1}
        return out
    for team, line in result.teams.items():
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
            "bonuses_heard": line.bonuses_heard,
            "bonus_points": line.bonus_points,
            "bounceback_points": line.bounceback_points,
            "bounceback_parts": line.bounceback_parts,
            "bounceback_available": line.bounceback_available,
            "overtime_tossups": result.overtime_tossups,
            "overtime_points": line.overtime_points,
        }
        if result.ended:
            add["played"] = 1
            if others:
                add["won" if line.points > against else "lost" if line.points < against
                    else "tied"] = 1  # fmt: skip
        else:  # under way: its points only, in play
            add = {"points": line.points, "live_points": line.points, "live": 1}
        out[team] = add
    return out


def ranked_rows(
    teams: Sequence[TeamInfo],
    totals: Mapping[str, Mapping[str, int]],
    matches: Mapping[str, Sequence[int]],
) -> list[Standing]:
    """Every team of ``teams`` with its totals (figure -> value; those missing are 0) and
    the matches that made them, ranked by :func:`rank_key`."""
    rows = [
        Standing(
            team=info.id,
            name=info.name,
            kind=info.kind,
            matches=tuple(matches.get(info.id, ())),
            **{k: v for k, v in totals.get(info.id, {}).items() if v},
        )
        for info in teams
    ]

    # (teams that share a rank are listed by their points, those in play included: a neg in the
    # first match under way lists a team below those on nothing, though none has a game yet)
    rows.sort(key=lambda s: (*rank_key(s), -s.points, s.name.casefold(), s.team))
    ranked: list[Standing] = []
    for i, row in enumerate(rows):
        shared = i > 0 and rank_key(rows[i - 1]) == rank_key(row)
        rank = ranked[-1].rank if shared else i + 1
        ranked.append(replace(row, rank=rank))
    return ranked


def rank_key(s: Standing) -> tuple[float, float, float]:
    """The standings order (lowest first): win %, then PPB, then P/20TUH, highest first; a
    team without bonuses or tossups heard counts 0 on that measure."""
    return (-s.win_pct, -(s.points_per_bonus or 0.0), -(s.points_per_20_tuh or 0.0))
