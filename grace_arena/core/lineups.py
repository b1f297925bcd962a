"""Lineups and substitutions: which of a team's players play each cycle.

A format may limit the players a team fields at once (``ScoringRules.lineup_size``: ACF, PACE
and NAQT 4). The players who join a team take the lineup's free places in the order they join
(a late arrival to a team playing short plays from the next tossup); one who joins a full
lineup waits on the bench.
The lineup changes only by a substitution (``PlayerSubstituted``; a player of the bench comes
in for one of the lineup, or to a free place), made between cycles at the moments the rules
allow, which are the QBJ ``Lineup.reason`` the substitution is recorded with:

* ``initial``: before the first tossup (the lineup the match starts with);
* ``halftime`` (``grace_arena.core.officiating.standing`` says so);
* ``before_overtime``: regulation over, the teams tied;
* ``own_timeout`` / ``other_timeout``: in a timeout the team (or the other team) called since
  the last tossup started.

Without a ``lineup_size`` every player who joins plays from the next tossup. A late arrival
(a lineup changed by a join after the first tossup, which QBJ's reasons do not name) is
recorded as ``segment_break``, a change between cycles.

NAQT's rules: "substitutions may be made at halftime, before overtime, or in a timeout"; ACF's
alike. A player on the bench cannot buzz. Without a ``lineup_size`` every player who joins
plays, and there is nothing to substitute.

A tossup is heard by the players in their team's lineup when it starts (YellowFruit computes
each player's tossups heard from the lineups, as MODAQ writes them): :func:`lineup_history`
reads a match's record into the lineups of each team with the question each starts at, the
QBJ ``lineups`` (with their required ``reason``), and :func:`tossups_heard_by` counts them.

Pure functions and one reducer step (:func:`reduce`), as ``grace_arena.core.amendments``: the
match imports this module, so its state and decision are typed loosely here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from grace_arena.core.errors import IllegalCommand
from grace_arena.core.events import (
    Event,
    MatchCreated,
    PlayerJoined,
    PlayerSubstituted,
    TossupEnded,
    TossupOutcome,
    TossupStarted,
)
from grace_arena.core.officiating import Stage, standing
from grace_arena.core.phases import FINISHED, Phase

if TYPE_CHECKING:
    from grace_arena.core.commands import Substitute
    from grace_arena.core.config import MatchConfig

#: ``grace_arena.core.match``'s ``MatchState`` and ``Decision``.
MatchState = Any
Decision = Any

__all__ = [
    "LineupSpan",
    "bench",
    "in_lineup",
    "lineup_history",
    "reduce",
    "substitute",
    "substitution_moment",
    "tossups_heard_by",
]


def reduce(lineups: dict[str, tuple[str, ...]], config: MatchConfig, ev: Event) -> dict:
    """The teams' lineups after ``ev``: a player who joins takes a place while there is one;
    a substitution puts ``player_in`` where ``player_out`` was."""
    size = config.rules.lineup_size
    if isinstance(ev, MatchCreated):  # a model team's one player plays throughout
        return {t.id: (t.model_player,) for t in config.teams if t.kind.value == "model"}
    if isinstance(ev, PlayerJoined):
        team = lineups.get(ev.team, ())
        if ev.player in team or (size is not None and len(team) >= size):
            return lineups
        return {**lineups, ev.team: (*team, ev.player)}
    if isinstance(ev, PlayerSubstituted):
        team = list(lineups.get(ev.team, ()))
        if ev.player_out is not None and ev.player_out in team:
            team[team.index(ev.player_out)] = ev.player_in
        elif ev.player_in not in team:
            team.append(ev.player_in)
        return {**lineups, ev.team: tuple(team)}
    return lineups


def in_lineup(state: MatchState, team: str, player: str) -> bool:
    """Whether ``player`` of ``team`` plays now (every player, without a lineup size)."""
    if state.config.rules.lineup_size is None:
        return True
    return player in state.lineups.get(team, ())


def bench(state: MatchState, team: str) -> list[str]:
    """The team's players who joined and are not in its lineup, in the order they joined."""
    playing = set(state.lineups.get(team, ()))
    return [p for p in state.players.get(team, {}) if p not in playing]


def substitution_moment(config: MatchConfig, state: MatchState, team: str) -> str | None:
    """The moment a substitution of ``team`` may be made now, as QBJ's ``Lineup.reason``
    says it (``initial``, ``halftime``, ``before_overtime``, ``own_timeout``,
    ``other_timeout``), or None."""
    g = state.game
    if g.phase is not Phase.IDLE and g.phase not in FINISHED:
        return None
    if g.phase is Phase.ANSWERED and g.bonus is not None and not g.bonus.done:
        return None
    if state.tossups_started == 0:
        return "initial"
    stage = standing(config, g).stage
    if stage is Stage.HALFTIME:
        return "halftime"
    if stage is Stage.TIED:
        return "before_overtime"
    called = [t for t in state.timeouts if t.after == state.tossups_started]
    if called:
        return "own_timeout" if called[-1].team == team else "other_timeout"
    return None


def substitute(run: Decision, cmd: Substitute) -> None:
    """``player_in`` (of the bench) comes in for ``player_out`` (of the lineup; None: to a
    place left free), at a moment the rules allow."""
    state, config = run.state, run.config
    team = run.team(cmd.team)
    size = config.rules.lineup_size
    if size is None:
        raise IllegalCommand("this match's format fields every player who joins: no lineups")
    names = state.players.get(team.id, {})
    lineup = state.lineups.get(team.id, ())
    if cmd.player_in not in names:
        raise IllegalCommand(f"player {cmd.player_in!r} has not joined team {team.id!r}")
    if cmd.player_in in lineup:
        raise IllegalCommand(f"{names[cmd.player_in]} is in {team.name}'s lineup already")
    if cmd.player_out is None:
        if len(lineup) >= size:
            raise IllegalCommand(
                f"{team.name}'s lineup is full ({size} players): say who comes out"
            )
    elif cmd.player_out not in lineup:
        raise IllegalCommand(f"player {cmd.player_out!r} is not in {team.name}'s lineup")
    moment = substitution_moment(config, state, team.id)
    if moment is None:
        raise IllegalCommand(
            "substitutions are made before the first tossup, at halftime, before overtime "
            "or in a timeout"
        )
    run.emit(
        PlayerSubstituted(
            team=team.id, player_in=cmd.player_in, player_out=cmd.player_out, reason=moment
        )
    )


@dataclass(frozen=True)
class LineupSpan:
    """A team's lineup from question ``first_question`` (1-based, among the tossups heard,
    as QBJ numbers a match's questions) until the team's next one: its players' ids and
    names, and why it changed (QBJ's ``Lineup.reason``: ``initial``, or the moment of the
    substitution that made it)."""

    team: str
    first_question: int
    players: tuple[str, ...]
    names: tuple[str, ...]
    reason: str


def lineup_history(events: list[Event]) -> list[LineupSpan]:
    """Each team's lineups over a match, from its record: the lineup each tossup heard
    started with, a span each time it changed (its reason: ``initial`` for the first, then
    the last substitution's moment, or ``segment_break`` for a late arrival). A team none of
    whose players heard a tossup has its lineup at the end as its only one."""
    created = next((e for e in events if isinstance(e, MatchCreated)), None)
    if created is None:
        return []
    config = created.config
    lineups: dict[str, tuple[str, ...]] = {}
    names: dict[str, str] = {}
    # the tossup each start is, and whether it is heard (its last end is not a throw-out)
    thrown: dict[str, bool] = {}
    for ev in events:
        if isinstance(ev, TossupEnded):
            thrown[ev.tossup_id] = ev.outcome is TossupOutcome.THROWN_OUT
    spans: list[LineupSpan] = []
    current: dict[str, tuple[str, ...]] = {}
    why: dict[str, str] = {}  # team -> the reason of its last substitution since its span
    number = 0
    counted: set[str] = set()
    for t in config.teams:
        if t.kind.value == "model":
            names[t.model_player] = t.model or t.name
    for ev in events:
        if isinstance(ev, PlayerJoined):
            names[ev.player] = ev.name
        elif isinstance(ev, PlayerSubstituted):
            why[ev.team] = ev.reason
        lineups = reduce(lineups, config, ev)
        if not isinstance(ev, TossupStarted):
            continue
        if thrown.get(ev.tossup_id) or ev.tossup_id in counted:
            continue  # not heard (thrown out), or heard once already
        counted.add(ev.tossup_id)
        number += 1
        for team in config.teams:
            now = lineups.get(team.id, ())
            if team.id in current and current[team.id] == now:
                continue
            reason = "initial" if team.id not in current else why.get(team.id, "segment_break")
            why.pop(team.id, None)
            current[team.id] = now
            spans.append(
                LineupSpan(team.id, number, now, tuple(names.get(p, p) for p in now), reason)
            )
    for team in config.teams:  # no tossup heard: the lineup as it stands
        if team.id not in current:
            now = lineups.get(team.id, ())
            spans.append(
                LineupSpan(team.id, 1, now, tuple(names.get(p, p) for p in now), "initial")
            )
    return spans


def tossups_heard_by(spans: list[LineupSpan], heard: int) -> dict[tuple[str, str], int]:
    """(team, player id) -> the tossups the player heard in the lineup, of the ``heard``
    tossups of the match: each span lasts until the team's next one."""
    out: dict[tuple[str, str], int] = {}
    by_team: dict[str, list[LineupSpan]] = {}
    for span in spans:
        by_team.setdefault(span.team, []).append(span)
    for team, mine in by_team.items():
        for i, span in enumerate(mine):
            end = mine[i + 1].first_question if i + 1 < len(mine) else heard + 1
            length = max(0, end - span.first_question)
            for player in span.players:
                out[(team, player)] = out.get((team, player), 0) + length
    return out
