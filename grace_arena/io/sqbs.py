"""An event as an SQBS tournament file (``export --format sqbs --event NAME``).

SQBS (Chris Sewell's *Quiz Bowl Statistics*, ai.stanford.edu/~csewell/sqbs) keeps a tournament
in one text file, one value a line. Its layout, as SQBS's manual describes the options and as
YellowFruit writes it for SQBS (``SqbsFileGeneration.ts``):

1. the teams: their number; per team, its number of players + 1, its name, its players;
2. the games: their number; per game: id, the two teams (indexes in 1.), their scores,
   tossups heard, round; four bonus lines (team 1's bonuses heard and bonus points, team 2's;
   with bouncebacks each is ``10000 × bounceback parts heard + bonuses heard`` and
   ``10000 × bounceback points + bonus points``; 0s in a tossups-only format); overtime
   tossups read and each team's overtime tossups converted (tossups answered with no bonus,
   when overtime has no bonuses); forfeit (0/1); each team's lightning points; then 8 player
   slots per team, alternating, 7 lines each: the player (index in the roster, -1 for an
   empty slot), games played (the player's tossups heard in the team's lineup ÷ tossups
   read, as YellowFruit writes it), how many of each of the four tossup values, tossup
   points;
3. the options: bonus tracking, bounceback tracking, power/neg statistics, lightning rounds,
   tossups heard, then the report options (file suffixes, FTP lines left blank) and the
   tournament's name;
4. the divisions (none: every team in division -1); the four tossup point values (0 for an
   unused one); the packets, one per round; each team's exhibition flag (0).

SQBS's limits, refused with a one-line error: at most four tossup point values (0 is not one:
SQBS has no 0-point buzz) and at most 8 players of a team in one game.

Every value is one line: a line break inside a title or a name (refused where they are given,
but a record may be older than that) is written as a space, or SQBS would read the rest of the
file one line off.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from grace_arena.core.rules import rule_set
from grace_arena.core.standings import TeamLine
from grace_arena.core.stats import MatchPlay

__all__ = ["MAX_PLAYERS", "MAX_VALUES", "EnteredGame", "sqbs_file", "tossup_values"]


@dataclass(frozen=True)
class EnteredGame:
    """A game not played here: a forfeit (``forfeit``, the team that forfeited it), or a
    result entered by its final score: each team's line, the tossups heard, and the players'
    lines (``team``, ``name``, ``powers``, ``tens``, ``negs``, ``tuh``) where they were given
    (a team's counts without players stand on a player named after the team, as in QBJ)."""

    id: int
    round: int
    teams: tuple[str, ...]
    forfeit: str | None = None
    lines: Mapping[str, TeamLine] = field(default_factory=dict)
    tossups_heard: int = 0
    players: Sequence[Mapping[str, Any]] = ()


MAX_VALUES = 4  # tossup point values
MAX_PLAYERS = 8  # players of a team in one game


def tossup_values(plays: Sequence[MatchPlay]) -> list[int]:
    """The tossup point values of these matches' rules and rulings, 0 left out, highest
    first (SQBS takes the first as the power and the last as the neg)."""
    values: set[int] = set()
    for p in plays:
        values |= rule_set(p.config.rules).tossups.point_values()
        values |= {b.points for b in p.buzzes}
    return sorted((v for v in values if v), reverse=True)


def sqbs_file(
    plan, plays: Sequence[MatchPlay], entered: Sequence[EnteredGame] = (), rules: Any = None
) -> str:
    """The SQBS file of an event (its plan, its matches as :class:`MatchPlay` and the games
    not played here as :class:`EnteredGame`, counted by the event's ``rules``), as text
    (lines ending in CRLF, as Windows programs write them). ``ValueError`` past SQBS's limits."""
    values = tossup_values(plays)
    played_rules = [rule_set(p.config.rules) for p in plays]
    if entered and rules is not None:
        played_rules.append(rule_set(rules))
        values = sorted(set(values) | (rule_set(rules).tossups.point_values() - {0}), reverse=True)
    if len(values) > MAX_VALUES:
        raise ValueError(
            f"SQBS supports at most {MAX_VALUES} tossup point values; this event's matches use "
            f"{len(values)} ({', '.join(map(str, values))})"
        )
    team_ids = [t.id for t in plan.teams]
    rosters: dict[str, list[str]] = {t: [] for t in team_ids}
    for player in plan.players:
        if player.name not in rosters[player.team]:
            rosters[player.team].append(player.name)
    for p in plays:
        for team, _, name in p.players:
            if name not in rosters.setdefault(team, []):
                rosters[team].append(name)
    for g in entered:
        for line in g.players:
            if line["name"] not in rosters.setdefault(line["team"], []):
                rosters[line["team"]].append(line["name"])
    for t in plan.teams:
        if not rosters[t.id] and t.model:
            rosters[t.id].append(t.model)
    bonuses = any(r.bonuses.played for r in played_rules)
    bouncebacks = any(r.bonuses.sqbs_bouncebacks for r in played_rules)
    lines: list[str | int] = [len(team_ids)]
    for t in plan.teams:
        lines += [len(rosters[t.id]) + 1, t.name, *rosters[t.id]]
    lines.append(len(plays) + len(entered))
    for p in plays:
        lines += _game(p, team_ids, rosters, values, bouncebacks=bouncebacks)
    for g in entered:
        lines += _entered_game(g, team_ids, rosters, values, rules, bonuses=bonuses)
    powers_or_negs = any(r.tossups.powers_or_negs for r in played_rules)
    lines += [
        1 if bonuses else 0,  # bonus conversion tracking
        3 if bouncebacks else 1,  # ... with bouncebacks
        3 if powers_or_negs else 2,  # power and neg statistics
        0,  # lightning rounds
        1,  # track tossups heard
        3,  # (packet names on)
        254,  # every validation warning
        *[1] * 7,  # reports: rounds, standings, individuals, games, team/player detail, key
        0,  # no custom style sheet
        0,  # no divisions
        1,  # sort by record, then a points measure
        plan.title,
        "", "", "", "",  # FTP: left blank
        1,
        "_rounds.html", "_standings.html", "_individuals.html", "_games.html",
        "_teamdetail.html", "_playerdetail.html", "_statkey.html",
        "",  # style sheet file
        0,  # divisions
        len(team_ids),
        *[-1] * len(team_ids),
        *(values + [0] * (MAX_VALUES - len(values))),
        len(plan.rounds),
        *(r.packet_id for r in plan.rounds),
        len(team_ids),
        *[0] * len(team_ids),  # no exhibition team
    ]  # fmt: skip
    return "".join(f"{_one_line(line)}\r\n" for line in lines)


#: What ends a line for SQBS or for Python's ``splitlines`` (which other readers follow).
_LINE_BREAKS = re.compile("[\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]+")


def _one_line(value: str | int) -> str | int:
    return _LINE_BREAKS.sub(" ", value) if isinstance(value, str) else value


def _game(
    p: MatchPlay,
    team_ids: list[str],
    rosters: dict[str, list[str]],
    values: list[int],
    *,
    bouncebacks: bool,
) -> list[str | int]:
    result = p.result()
    rules = rule_set(p.config.rules)
    first, second = p.teams[:2] if len(p.teams) >= 2 else (p.teams[0], p.teams[0])
    tuh = result.tossups_heard
    lines: list[str | int] = [
        p.match_id,
        team_ids.index(first),
        team_ids.index(second),
        result.teams[first].points,
        result.teams[second].points,
        tuh,
        p.round or 0,
    ]
    for team in (first, second):
        line = result.teams[team]
        if not rules.bonuses.played:
            lines += [0, 0]
        elif bouncebacks:
            lines += [
                10000 * line.bounceback_parts + line.bonuses_heard,
                10000 * line.bounceback_points + line.bonus_points,
            ]
        else:
            lines += [line.bonuses_heard, line.bonus_points]
    overtime = rules.overtime_tossups(tuh)
    with_bonus = {b.tossup_id for b in p.bonuses}
    lines.append(overtime)
    for team in (first, second):
        converted = 0
        if rules.bonuses.none_in_overtime:
            converted = sum(
                1 for b in p.buzzes
                if b.team == team and b.ruling == "correct" and b.tossup_id not in with_bonus
            )  # fmt: skip
        lines.append(converted)
    lines += [0, 0, 0]  # no forfeit, no lightning rounds
    slots = {team: _players(p, team, rosters[team], values, tuh) for team in (first, second)}
    for i in range(MAX_PLAYERS):
        for team in (first, second):
            lines += slots[team][i] if i < len(slots[team]) else [-1, 0, 0, 0, 0, 0, 0]
    return lines


def _players(
    p: MatchPlay, team: str, roster: list[str], values: list[int], tuh: int
) -> list[list[str | int]]:
    names = list(dict.fromkeys(name for t, _, name in p.players if t == team))
    if len(names) > MAX_PLAYERS:
        raise ValueError(
            f"SQBS supports at most {MAX_PLAYERS} players of a team in one game; match "
            f"{p.match_id} has {len(names)} for team {team}"
        )
    slots = []
    for name in names:
        mine = [b for b in p.buzzes if b.team == team and p.name_of(team, b.player) == name]
        counts = [sum(1 for b in mine if b.points == v) for v in values]
        # the tossups heard in the team's lineup (core.lineups), as YellowFruit writes them
        heard = max(
            p.heard_by.get((t, pid), tuh) for t, pid, n in p.players if (t, n) == (team, name)
        )
        slots.append(
            [
                roster.index(name),
                f"{(heard / tuh if tuh else 0.0):.2f}",
                *(counts + [0] * (MAX_VALUES - len(counts))),
                sum(b.points for b in mine),
            ]
        )
    return slots


def _entered_game(
    g: EnteredGame,
    team_ids: list[str],
    rosters: dict[str, list[str]],
    values: list[int],
    rules: Any,
    *,
    bonuses: bool,
) -> list[str | int]:
    """A game not played here, as YellowFruit writes one for SQBS (``SqbsFileGeneration``):
    a forfeit has its winner first, both scores -1, no tossups heard and its forfeit line 1;
    an entered result its teams' points, bonuses (none heard where only the score is known)
    and its players' answers by value."""
    if g.forfeit is not None:
        winner = next(t for t in g.teams if t != g.forfeit)
        head = [g.id, team_ids.index(winner), team_ids.index(g.forfeit), -1, -1, 0, g.round]
        return [*head, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, *[-1, 0, 0, 0, 0, 0, 0] * 2 * MAX_PLAYERS]
    first, second = g.teams
    out: list[str | int] = [
        g.id,
        team_ids.index(first),
        team_ids.index(second),
        g.lines[first].points,
        g.lines[second].points,
        g.tossups_heard,
        g.round,
    ]
    for team in (first, second):  # (an entered game has no bouncebacks: 10000 × 0 + ...)
        line = g.lines[team]
        out += [line.bonuses_heard, line.bonus_points] if bonuses else [0, 0]
    out += [0, 0, 0, 0, 0, 0]  # no overtime recorded, not a forfeit, no lightning rounds
    by_value = {
        rules.power_points: "powers",
        rules.correct_points: "tens",
        rules.neg_points: "negs",
    }
    slots: dict[str, list[list[str | int]]] = {}
    for team in (first, second):
        mine = [p for p in g.players if p["team"] == team]
        if len(mine) > MAX_PLAYERS:
            raise ValueError(
                f"SQBS supports at most {MAX_PLAYERS} players of a team in one game; game "
                f"{g.id} has {len(mine)} for team {team}"
            )
        slots[team] = []
        for p in mine:
            counts = [int(p.get(by_value.get(v, ""), 0) or 0) for v in values]
            heard = g.tossups_heard if p.get("tuh") is None else int(p["tuh"])
            slots[team].append(
                [
                    rosters[team].index(p["name"]),
                    f"{heard / g.tossups_heard if g.tossups_heard else 0.0:.2f}",
                    *(counts + [0] * (MAX_VALUES - len(counts))),
                    sum(c * v for c, v in zip(counts, values, strict=True)),
                ]
            )
    for i in range(MAX_PLAYERS):
        for team in (first, second):
            out += slots[team][i] if i < len(slots[team]) else [-1, 0, 0, 0, 0, 0, 0]
    return out
