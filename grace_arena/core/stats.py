"""Tournament statistics as quizbowl tournaments publish them: teams, players, questions. Pure.

The input is one :class:`MatchPlay` per match (:func:`match_play` reads it off a match's
events; one match alone is an event of one match); :func:`event_stats` gives every table of
a stats report. The team figures are those of :func:`grace_arena.core.standings.standings`,
which sums each match's :class:`~grace_arena.core.standings.MatchResult` and ranks the teams
with :func:`~grace_arena.core.standings.rank_key`; each metric below is defined once, in
:mod:`grace_arena.core.figures`, and the standings, the stats report, the CLI and the exports
all call it.

Definitions, and where they come from. PRODUCT.md ("The whole game", its statistics
paragraph) names the figures; YellowFruit (``StatSummaries.ts``, its HTML reports) and SQBS
(Chris Sewell's *Quiz Bowl Statistics*, its manual and report pages) fix how they are counted:

==================  ===========================================================================
W–L–T, win %        matches finished; win % = (W + T/2) ÷ (W + L + T), a tie half a win
                    (SQBS, YellowFruit); 0 before a team's first finished match
games (GP)          matches finished. Every team figure is of the finished matches (SQBS's
                    and YellowFruit's are of finished games): a match under way adds only its
                    points, to the team's points and apart as points in play, so that the
                    live standings move after every ruling while W–L, GP, TUH, PPG, P/20TUH
                    and PPB of a row are all of the same games
TUH                 tossups heard: started and not thrown out, each once
                    (:func:`grace_arena.core.events.tossups_heard`, as the QBJ ``tossups_read``)
PPG                 points in finished matches ÷ games
P/20TUH             points in finished matches ÷ TUH × 20 (PRODUCT.md; SQBS's and
                    YellowFruit's "PP20TUH"), so that matches of different lengths compare.
                    Overtime: in rules that play bonuses but none in overtime, PPG and
                    P/20TUH leave out the overtime tossups and the points scored on them
                    (``unrated_tossups``), as YellowFruit does; otherwise (tossups only, or
                    bonuses in overtime) they count like any other. TUH counts them all
powers/tens/negs    tossups answered correctly in power / correctly after it / incorrect
                    answers that cost points (an incorrect answer at the end of the question
                    costs nothing and is not a neg)
PPB                 bonus points ÷ bonuses heard, the bonuses the team controlled only
                    (YellowFruit, SQBS); bounceback points are apart
bounceback conv.    bounceback points ÷ points available on the parts bounced to the team (the
                    parts the controlling team missed, when bouncebacks are played), as
                    YellowFruit's bounceback conversion; the points available are the parts'
                    values in the packet
player TUH          the tossups heard in the matches the player played in (joined or buzzed):
                    YellowFruit's and QBJ's ``tossups_heard``, the tossups heard while in
                    the team's lineup (``core.lineups``: who joined, the substitutions;
                    the whole match for a player no lineup names); a model team's one player
                    (named by its model, as in QBJ and SQBS, one row per team) plays every
                    match of its team
player points       tossup points only (bonuses are the team's), P/20TUH and PPG as a team's
question            times heard; conversion = times answered correctly ÷ times heard; power
                    rate = powers ÷ times heard; negs (PRODUCT.md's "question conversion, power
                    rate"; the question-level reports of YellowFruit and NAQT's stats)
bonus               times heard, PPB of the controlling teams, and per part the share of times
                    the part was read that the controlling team answered it correctly
==================  ===========================================================================

**Standings order**: win % first, then PPB, then P/20TUH, all highest first; teams equal on
all three share a rank (listed by name). Win percentage first is SQBS's and YellowFruit's
ranking (SQBS's option "sort by record, then PPG"); PRODUCT.md says "then PPB or P/TUH": PPB
comes first as the measure of a team's knowledge that the schedule affects least, P/20TUH
second so that a tossups-only event (no PPB) is ranked by points per tossup heard, whatever
its matches' lengths. A team with no bonus or no tossup heard counts 0 on that measure.

Bonus points are read through :func:`grace_arena.core.standings.bonuses_played` (each part's
points as ruled, ``BonusPartRuled.points``), never re-derived from the parts' values.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from grace_arena.core import lineups, protests
from grace_arena.core.events import (
    TOSSUP_RULINGS,
    BuzzAccepted,
    Event,
    MatchCreated,
    MatchEnded,
    PlayerJoined,
    Ruling,
    tossups_heard,
)

# The metrics are defined in ``figures`` (below ``standings``, which uses them) and the order
# in ``standings``; they are offered here with the tables they fill.
from grace_arena.core.figures import per_20_tuh, per_game, points_per_bonus, rate, win_pct
from grace_arena.core.standings import (
    BonusPlayed,
    MatchResult,
    Standing,
    TeamInfo,
    TeamLine,
    bonuses_heard,
    bonuses_played,
    lines_of_bonuses,
    rank_key,
    standings,
    unrated_tossups,
)

if TYPE_CHECKING:
    from grace_arena.core.config import MatchConfig

__all__ = [
    "BonusStats",
    "BuzzPlayed",
    "EventStats",
    "GameLine",
    "MatchPlay",
    "PlayerStats",
    "TossupStats",
    "event_stats",
    "match_play",
    "per_20_tuh",
    "per_game",
    "points_per_bonus",
    "rank_key",
    "rate",
    "win_pct",
]

# ---------------------------------------------------------------------------------------
# A match as the statistics need it
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BuzzPlayed:
    """A tossup ruling in force (not undone, its tossup not thrown out; prompts left out)."""

    tossup_id: str
    team: str
    player: str  # the player's id in the match
    ruling: str  # correct | incorrect
    points: int
    power: bool = False

    @property
    def neg(self) -> bool:
        return self.ruling == Ruling.INCORRECT and self.points < 0


@dataclass(frozen=True)
class MatchPlay:
    """One match as it stands: its tossups heard, its tossup rulings and bonuses in force,
    and who played; ``round`` and ``room`` place it in an event's schedule."""

    match_id: int
    config: MatchConfig
    tossups: tuple[str, ...]  # heard, in order
    buzzes: tuple[BuzzPlayed, ...]
    bonuses: tuple[BonusPlayed, ...]
    players: tuple[tuple[str, str, str], ...]  # (team, player id, name), in order of joining
    ended: bool
    round: int | None = None
    room: str | None = None
    #: Its protests and corrections by hand, in sentences (``core.protests.match_notes``).
    notes: tuple[str, ...] = ()
    #: (team, player id) -> the tossups the player heard in the team's lineup
    #: (``core.lineups``); a player not in it heard the whole match.
    heard_by: Mapping[tuple[str, str], int] = field(default_factory=dict)

    @property
    def teams(self) -> tuple[str, ...]:
        return tuple(t.id for t in self.config.teams)

    def name_of(self, team: str, player: str) -> str:
        return next((n for t, p, n in self.players if (t, p) == (team, player)), player)

    def result(self) -> MatchResult:
        """What the match adds to the standings (the team lines of its rulings in force)."""
        lines: dict[str, dict[str, int]] = {t: {} for t in self.teams}
        unrated = set(unrated_tossups(self.config.rules, self.tossups))
        earned: dict[str, list[str]] = {}  # tossups answered where a bonus follows
        for b in self.buzzes:
            line = lines.setdefault(b.team, {})
            line["points"] = line.get("points", 0) + b.points
            if b.tossup_id in unrated:
                line["overtime_points"] = line.get("overtime_points", 0) + b.points
            if b.ruling == Ruling.CORRECT:
                line["correct"] = line.get("correct", 0) + 1
                line["powers"] = line.get("powers", 0) + b.power
                if b.tossup_id not in unrated:
                    earned.setdefault(b.team, []).append(b.tossup_id)
            else:
                line["incorrect"] = line.get("incorrect", 0) + 1
                line["negs"] = line.get("negs", 0) + b.neg
        for team, bonus in lines_of_bonuses(self.bonuses).items():
            line = lines.setdefault(team, {})
            line["points"] = line.get("points", 0) + bonus.bonus_points + bonus.bounceback_points
            line.update(vars(bonus))
        if self.config.rules.bonuses:  # as the record's standings count them
            for team, line in lines.items():  # (record.schedule.match_results)
                line["bonuses_heard"] = bonuses_heard(
                    earned.get(team, ()), (b for b in self.bonuses if b.team == team)
                )
        return MatchResult(
            match_id=self.match_id,
            teams={t: TeamLine(**lines[t]) for t in self.teams},
            tossups_heard=len(self.tossups),
            ended=self.ended,
            round=self.round,
            overtime_tossups=len(unrated),
        )


def match_play(
    events: Sequence[Event],
    *,
    match_id: int,
    round: int | None = None,
    room: str | None = None,
) -> MatchPlay:
    """A match's record (its events in order) as :class:`MatchPlay`: the tossup rulings in
    force are those on the replayed match's ledger (an undone ruling is off it, and so are a
    thrown-out tossup's), the bonuses :func:`~grace_arena.core.standings.bonuses_played`'s."""
    from grace_arena.core.match import Match

    config = next((ev.config for ev in events if isinstance(ev, MatchCreated)), None)
    if config is None:
        raise ValueError(f"match {match_id}: no match_created event")
    state = Match.replay(events).state
    game = state.game
    # a correction (core.protests) carries a ruling's fields in the place of the one it amends
    ruled = {ev.seq: ev for ev in events if isinstance(ev, TOSSUP_RULINGS)}
    heard = tossups_heard(events)
    buzzes = []
    for entry in game.ledger:
        ev = ruled.get(entry.seq)
        if entry.bonus_id is not None or ev is None or ev.ruling is Ruling.PROMPT:
            continue
        buzzes.append(
            BuzzPlayed(ev.tossup_id, ev.team, ev.player, ev.ruling.value, entry.points, ev.power)
        )
    players: dict[tuple[str, str], str] = {}
    for team in config.teams:  # a model team's one player plays every tossup of its match
        if team.kind == "model":
            # named by its model, as the match and the record name it: one name for the
            # player in the stats, QBJ and SQBS (never "Team (model)", which YellowFruit's
            # SQBS import reads as a name and a school year)
            players[(team.id, team.model_player)] = team.model or team.name
    for ev in events:
        if isinstance(ev, PlayerJoined):
            players.setdefault((ev.team, ev.player), ev.name)
        elif isinstance(ev, BuzzAccepted):  # a model (or a player not seen joining)
            players.setdefault((ev.team, ev.player), ev.player)
    return MatchPlay(
        match_id=match_id,
        config=config,
        tossups=tuple(heard),
        buzzes=tuple(buzzes),
        bonuses=tuple(bonuses_played(events)),
        players=tuple((t, p, n) for (t, p), n in players.items()),
        ended=any(isinstance(ev, MatchEnded) for ev in events),
        round=round,
        room=room,
        notes=tuple(protests.match_notes(state)),
        heard_by=lineups.tossups_heard_by(
            [s for s in lineups.lineup_history(list(events)) if s.players], len(heard)
        ),
    )


# ---------------------------------------------------------------------------------------
# The tables of a stats report
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlayerStats:
    team: str
    name: str
    games: int = 0
    tossups_heard: int = 0
    powers: int = 0
    tens: int = 0  # correct after the power mark (or in a format without powers)
    negs: int = 0
    incorrect: int = 0  # negs included
    points: int = 0  # tossup points
    matches: tuple[int, ...] = ()
    #: GP: each game's tossups heard over the tossups read in it, summed (a player in for
    #: one half of a game has played 0.5), as YellowFruit (``PlayerStats.addMatchPlayer``)
    #: and SQBS count games played; ``games`` is the number of games the player was in
    games_played: float = 0.0

    @property
    def points_per_20_tuh(self) -> float | None:
        return per_20_tuh(self.points, self.tossups_heard)

    @property
    def points_per_game(self) -> float | None:
        """Points per game played (GP: ``games_played``)."""
        return self.points / self.games_played if self.games_played else None


@dataclass(frozen=True)
class TossupStats:
    packet_id: str | None
    tossup_id: str
    number: int  # 1-based, in the matches' order of the packet's tossups
    answer: str
    heard: int = 0
    correct: int = 0
    powers: int = 0
    negs: int = 0
    rounds: tuple[int, ...] = ()  # the rounds it was read in (a number is a round's)

    @property
    def conversion(self) -> float | None:
        return rate(self.correct, self.heard)

    @property
    def power_rate(self) -> float | None:
        return rate(self.powers, self.heard)


@dataclass(frozen=True)
class BonusStats:
    packet_id: str | None
    bonus_id: str
    number: int  # 1-based, in the packet's order of bonuses
    heard: int = 0
    points: int = 0  # the controlling teams'
    parts_heard: tuple[int, ...] = ()  # per part: times read to the controlling team
    parts_correct: tuple[int, ...] = ()  # per part: times it answered it correctly

    @property
    def points_per_bonus(self) -> float | None:
        return points_per_bonus(self.points, self.heard)

    @property
    def part_conversion(self) -> tuple[float | None, ...]:
        return tuple(rate(c, h) for c, h in zip(self.parts_correct, self.parts_heard, strict=True))


@dataclass(frozen=True)
class GameLine:
    """A match in the games table: its teams' scores."""

    match_id: int
    round: int | None
    room: str | None
    scores: tuple[tuple[str, int], ...]  # (team, points), in the match's order
    tossups_heard: int
    ended: bool


@dataclass(frozen=True)
class EventStats:
    standings: list[Standing]
    players: list[PlayerStats]
    games: list[GameLine]
    tossups: list[TossupStats]
    bonuses: list[BonusStats]
    bonuses_played: bool = field(default=False)


def event_stats(
    teams: Sequence[TeamInfo],
    plays: Iterable[MatchPlay],
    decided: Iterable[tuple[MatchResult, str | None]] = (),
    entered_players: Iterable[Mapping[str, Any]] = (),
) -> EventStats:
    """Every table of an event's stats report from its matches (any subset; one match alone
    is an event of one match): standings, players (by points per 20 tossups heard), games (by
    round and room), tossups and bonuses (by round, in packet order). A match under way is in
    the games, and its points in the standings' points in play; the players, tossups and
    bonuses are of finished matches, as every other figure of the standings. ``decided``:
    games without a match (a forfeit, a result entered by its score) with their room, in the
    standings and the games. ``entered_players``: the players' lines of results entered by
    their score (``team``, ``name``, ``powers``, ``tens``, ``negs``, ``points``, ``tuh``, the
    tossups ``read`` in the game and its ``match_id``), in the players' table with the others."""
    plays = list(plays)
    results = [p.result() for p in plays]
    decided = list(decided)
    rows = standings(teams, [*results, *(r for r, _ in decided)])
    games = [
        GameLine(
            p.match_id, p.round, p.room, tuple((t, r.teams[t].points) for t in p.teams),
            r.tossups_heard, r.ended,
        )
        for p, r in zip(plays, results, strict=True)
    ] + [
        GameLine(r.match_id, r.round, room, tuple((t, line.points) for t, line in r.teams.items()),
                 r.tossups_heard, r.ended)
        for r, room in decided
    ]  # fmt: skip
    games.sort(key=lambda g: (g.round is None, g.round or 0, g.room or "", g.match_id))
    over = [p for p in plays if p.ended]  # the players and the questions: as the standings
    return EventStats(
        standings=rows,
        players=_players(over, entered_players),
        games=games,
        tossups=_tossups(over),
        bonuses=_bonuses(over),
        bonuses_played=any(p.bonuses for p in over),
    )


def _players(
    plays: Sequence[MatchPlay], entered: Iterable[Mapping[str, Any]] = ()
) -> list[PlayerStats]:
    totals: dict[tuple[str, str], dict[str, Any]] = {}
    matches: dict[tuple[str, str], list[int]] = {}
    for line in entered:  # a game entered with players' lines (or a team's counts)
        key = (line["team"], str(line["name"]).strip())
        t = totals.setdefault(key, {})
        heard, read = int(line["tuh"]), int(line["read"])
        t["games"] = t.get("games", 0) + 1
        t["games_played"] = t.get("games_played", 0.0) + (heard / read if read else 0.0)
        t["tossups_heard"] = t.get("tossups_heard", 0) + heard
        for k in ("powers", "tens", "negs", "points"):
            t[k] = t.get(k, 0) + int(line[k])
        t["incorrect"] = t.get("incorrect", 0) + int(line["negs"])
        matches.setdefault(key, []).append(int(line["match_id"]))
    for p in plays:
        # a player is one name on one team across the event's matches (ids are per match)
        key_of = {(t, pid): (t, name.strip()) for t, pid, name in p.players}
        heard: dict[tuple[str, str], int] = {}
        for pid, key in key_of.items():  # in the lineup: its tossups (core.lineups)
            heard[key] = max(heard.get(key, 0), p.heard_by.get(pid, len(p.tossups)))
        for key in dict.fromkeys(key_of.values()):
            t = totals.setdefault(key, {})
            t["games"] = t.get("games", 0) + 1
            t["tossups_heard"] = t.get("tossups_heard", 0) + heard[key]
            read = len(p.tossups)
            t["games_played"] = t.get("games_played", 0.0) + (heard[key] / read if read else 0.0)
            matches.setdefault(key, []).append(p.match_id)
        for b in p.buzzes:
            t = totals[key_of.get((b.team, b.player), (b.team, b.player))]
            t["points"] = t.get("points", 0) + b.points
            if b.ruling == Ruling.CORRECT:
                t["powers" if b.power else "tens"] = t.get("powers" if b.power else "tens", 0) + 1
            else:
                t["incorrect"] = t.get("incorrect", 0) + 1
                t["negs"] = t.get("negs", 0) + b.neg
    rows = [
        PlayerStats(team=team, name=name, matches=tuple(matches.get((team, name), ())), **t)
        for (team, name), t in totals.items()
    ]
    rows.sort(key=lambda r: (-(r.points_per_20_tuh or 0.0), -r.points, r.name.casefold()))
    return rows


def _tossups(plays: Sequence[MatchPlay]) -> list[TossupStats]:
    totals: dict[tuple[str | None, str], dict[str, int]] = {}
    labels: dict[tuple[str | None, str], tuple[int, str]] = {}
    rounds: dict[tuple[str | None, str], set[int]] = {}
    for p in plays:
        ids = [t.id for t in p.config.tossups]
        for tossup in p.tossups:
            key = (p.config.packet_id, tossup)
            spec = p.config.tossup(tossup)
            labels.setdefault(key, (ids.index(tossup) + 1, spec.answer if spec else ""))
            if p.round is not None:
                rounds.setdefault(key, set()).add(p.round)
            t = totals.setdefault(key, {})
            t["heard"] = t.get("heard", 0) + 1
        for b in p.buzzes:
            t = totals.setdefault((p.config.packet_id, b.tossup_id), {})
            if b.ruling == Ruling.CORRECT:
                t["correct"] = t.get("correct", 0) + 1
                t["powers"] = t.get("powers", 0) + b.power
            t["negs"] = t.get("negs", 0) + b.neg
    rows = [
        TossupStats(
            key[0],
            key[1],
            *labels.get(key, (0, "")),
            rounds=tuple(sorted(rounds.get(key, ()))),
            **t,
        )
        for key, t in totals.items()
    ]
    rows.sort(key=lambda r: (r.rounds[:1], r.packet_id or "", r.number, r.tossup_id))
    return rows


def _bonuses(plays: Sequence[MatchPlay]) -> list[BonusStats]:
    rows: dict[tuple[str | None, str], BonusStats] = {}
    for p in plays:
        ids = [b.id for b in p.config.bonuses]
        for bonus in p.bonuses:
            key = (p.config.packet_id, bonus.bonus_id)
            spec = p.config.bonus(bonus.bonus_id)
            n = len(spec.parts) if spec else max((x.part for x in bonus.parts), default=-1) + 1
            row = rows.get(key) or BonusStats(
                key[0], key[1], ids.index(bonus.bonus_id) + 1 if spec else 0,
                parts_heard=(0,) * n, parts_correct=(0,) * n,
            )  # fmt: skip
            heard, correct = list(row.parts_heard), list(row.parts_correct)
            for part in bonus.parts:
                if part.ruling is not None:  # read to the controlling team
                    heard[part.part] += 1
                    correct[part.part] += part.ruling == Ruling.CORRECT
            rows[key] = BonusStats(
                row.packet_id, row.bonus_id, row.number, row.heard + 1,
                row.points + bonus.points, tuple(heard), tuple(correct),
            )  # fmt: skip
    return sorted(rows.values(), key=lambda r: (r.packet_id or "", r.number, r.bonus_id))
