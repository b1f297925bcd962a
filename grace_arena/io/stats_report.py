"""An event's statistics from the record, and the printable HTML report of them.

``grace-arena event stats EVENT --html out.html``: standings, individuals, games (scores by
round and room), team detail (each team's games and players) and per-question conversion,
in one plain page that prints (no script; print CSS). The figures are
:mod:`grace_arena.core.stats`'s, from every match of the event's schedule replayed from the
record; the page is ``grace_arena/analysis/templates/stats.html.j2``, rendered as the
analysis report is (Jinja, autoescaped).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.engine import Engine

from grace_arena.core.config import ScoringRules
from grace_arena.core.events import TossupStarted
from grace_arena.core.stats import EventStats, MatchPlay, event_stats, match_play
from grace_arena.record.schedule import (
    EventPlan,
    NoSuchPhase,
    decided_result,
    games_of_phase,
    load_plan,
    pool_of_phase,
)
from grace_arena.record.store import MatchStore

__all__ = [
    "answer_columns", "answer_counts", "event_plays", "html_stats", "load_event_stats",
    "plan_rules", "stats_context",
]  # fmt: skip


def event_plays(engine: Engine, plan: EventPlan) -> list[MatchPlay]:
    """Every begun match of the event's schedule as it stands, in schedule order."""
    store = MatchStore(engine)
    room_names = {r.id: r.name for r in plan.rooms}
    plays = []
    for game in plan.games:
        if game.match_id is None:
            continue
        events = store.events(game.match_id)
        if not game.ended and not any(isinstance(ev, TossupStarted) for ev in events):
            continue  # created, not begun (as in the standings)
        plays.append(
            match_play(
                events,
                match_id=game.match_id,
                round=game.round,
                room=room_names.get(game.room_id or "", game.room_id),
            )
        )
    return plays


def load_event_stats(
    engine: Engine, key: str | int, *, phase: str | None = None, pool: str | None = None
) -> tuple[EventPlan, EventStats, list[MatchPlay]]:
    """The event's stats: every game; with ``phase``, the games that count in it (its own
    and those carried over into it), and with ``pool`` those of that pool's teams, whose
    teams alone stand in it (the plan's title then names the phase and pool). A phase of
    several pools needs its pool: each pool is ranked apart."""
    plan = load_plan(engine, key)
    teams = plan.team_infos()
    counted = None
    if phase is not None:
        chosen, only = pool_of_phase(plan, phase, pool)
        if only is None and len(chosen.pools) == 1:
            only = chosen.pools[0]
        if only is None:
            names = ", ".join(p.name for p in chosen.pools)
            raise NoSuchPhase(
                f"phase {chosen.name!r} has {len(chosen.pools)} pools, each ranked apart: "
                f"give the pool ({names})"
            )
        counted = {g.id for g in games_of_phase(plan, chosen, only)}
        teams = [t for t in teams if t.id in only.teams]
        title = f"{plan.title}: {chosen.name}" + (f", {only.name}" if len(chosen.pools) > 1 else "")
        plan = replace(plan, title=title)
    games = [g for g in plan.games if counted is None or g.id in counted]
    plays = event_plays(engine, replace(plan, games=tuple(games)))
    rooms = {r.id: r.name for r in plan.rooms}
    decided = [
        (decided_result(plan, g), rooms.get(g.room_id or ""))
        for g in games
        if g.match_id is None and (g.forfeit is not None or g.result is not None)
    ]
    entered = entered_player_lines(plan, [g for g in games if g.match_id is None])
    return plan, event_stats(teams, plays, decided, entered), plays


def entered_player_lines(plan: EventPlan, games: Sequence[Any]) -> list[dict[str, Any]]:
    """The players' lines of the results among ``games`` entered by their score, as the QBJ
    and SQBS files write them (``grace_arena.io.exports.entered_games``): each player's line
    as entered, a team's counts entered without players on a player named after the team; a
    team known by its score alone has no line (no one's answers are known), as YellowFruit,
    which cannot hold such a game, has none."""
    from grace_arena.record.schedule import event_rules, result_lines

    rules = event_rules(plan)
    names = {t.id: t.name for t in plan.teams}
    out = []
    for game in games:
        if game.forfeit is not None or not game.result:
            continue
        lines, heard = result_lines(plan, {**game.result, "teams": list(game.teams)})
        players = [dict(p) for p in game.result.get("players") or []]
        counted = set(game.result.get("counts") or {})
        for t in game.teams:
            if t in counted and not any(p["team"] == t for p in players):
                line = lines[t]
                players.append({"team": t, "name": names[t], "powers": line.powers,
                                "tens": line.correct - line.powers, "negs": line.negs})  # fmt: skip
        for p in players:
            powers, tens, negs = (int(p.get(k) or 0) for k in ("powers", "tens", "negs"))
            points = powers * (rules.power_points or 0) + tens * rules.correct_points
            out.append(
                {
                    "team": p["team"], "name": p["name"], "powers": powers, "tens": tens,
                    "negs": negs, "points": points + negs * rules.neg_points,
                    "tuh": heard if p.get("tuh") is None else int(p["tuh"]),
                    "read": heard, "match_id": -game.id,
                }
            )  # fmt: skip
    return out


def _fmt(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.0f}%"


#: What the standings say when an overtime without bonuses was played
#: (:func:`grace_arena.core.standings.unrated_tossups`).
OVERTIME_NOTE = (
    "PPG and P/20TUH leave out the tossups of an overtime played without bonuses and the "
    "points scored on them, as YellowFruit does (TUH counts them)."
)


#: What the standings and the stats report say when a game was entered by its final score
#: alone (no answer counts for a team): YellowFruit cannot hold such a game
#: (``MatchTeam.validateBonusPoints`` / ``validateTotalAndTuPtsEqual``: the whole score is
#: taken for bonus points on no bonus heard, an error, and ``Match.determineStatsValidity``
#: then leaves the game out of every standing).
SCORE_ONLY_NOTE = (
    "A game entered by its final score alone counts here in W-L, points, PPG and P/20TUH "
    "(not in PPB, nor in any player line); YellowFruit cannot hold a game without answer counts "
    "and leaves it out of its standings."
)


def score_only_games(plan: EventPlan) -> list[Any]:
    """The games entered by their final score with a team known by its score alone."""
    out = []
    for g in plan.games:
        if g.match_id is not None or g.forfeit is not None or not g.result:
            continue
        counted = set(g.result.get("counts") or {})
        counted |= {p["team"] for p in g.result.get("players") or []}
        if any(t not in counted for t in g.teams):
            out.append(g)
    return out


def stats_context(plan: EventPlan, stats: EventStats, plays: Sequence[MatchPlay]) -> dict[str, Any]:
    """What the template shows (numbers already formatted)."""
    names = {t.id: t.name for t in plan.teams}
    teams = []
    for s in stats.standings:
        games = [g for g in stats.games if any(t == s.team for t, _ in g.scores)]
        teams.append(
            {
                "standing": s,
                "games": [
                    {
                        "round": g.round,
                        "room": g.room,
                        "opponent": ", ".join(names.get(t, t) for t, _ in g.scores if t != s.team),
                        "score": dict(g.scores)[s.team],
                        "against": max((p for t, p in g.scores if t != s.team), default=0),
                        "ended": g.ended,
                    }
                    for g in games
                ],
                "players": [p for p in stats.players if p.team == s.team],
            }
        )
    return {
        "title": plan.title,
        "generated": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "stats": stats,
        "teams": teams,
        "names": names,
        "bonuses": stats.bonuses_played,
        "bouncebacks": any(s.bounceback_parts for s in stats.standings),
        "in_play": any(s.live for s in stats.standings),
        "overtime": any(s.overtime_tossups for s in stats.standings),
        "overtime_note": OVERTIME_NOTE,
        "score_only_note": SCORE_ONLY_NOTE if score_only_games(plan) else "",
        "fmt": _fmt,
        "pct": _pct,
        "max_parts": max((len(b.parts_heard) for b in stats.bonuses), default=0),
        "consult": consult_points(plan),
        # each game's protests (how each stands, and whether upholding it would change the
        # result) and corrections by hand
        "officiating": [
            {
                "round": p.round,
                "room": p.room,
                "notes": p.notes,
                "teams": " – ".join(names.get(t, t) for t in p.teams),
            }
            for p in plays
            if p.notes
        ],
        # (a format without powers has no powers columns)
        "powers": plan_rules(plan).power_points is not None,
    }


def plan_rules(plan: EventPlan) -> ScoringRules:
    """The scoring rules of the event's matches (its format, with its defaults on top)."""
    from grace_arena.core.formats import rules_for
    from grace_arena.protocol import MatchSettings

    settings = MatchSettings.model_validate(plan.defaults)  # (the defaults where not given)
    if settings.format:
        return rules_for(settings.format, **settings.scoring())
    return ScoringRules(**settings.scoring())


def answer_columns(rules: ScoringRules) -> tuple[str, bool, bool]:
    """The points a tossup answer scores under ``rules`` as a stats column says them
    ("15/10/-5", "10/-5" without powers, "20/10" without negs), and whether it has powers and
    negs."""
    powers, negs = rules.power_points is not None, rules.neg_points != 0
    values = [
        *([rules.power_points] if powers else []),
        rules.correct_points,
        *([rules.neg_points] if negs else []),
    ]
    return "/".join(str(v) for v in values), powers, negs


def answer_counts(rules: ScoringRules, powers: int, correct: int, negs: int) -> str:
    """A team's or a player's answers in the column of :func:`answer_columns`: "2/5/1"."""
    _, has_powers, has_negs = answer_columns(rules)
    values = [
        *([powers] if has_powers else []),
        correct - powers if has_powers else correct,
        *([negs] if has_negs else []),
    ]
    return "/".join(str(v) for v in values)


def consult_points(plan: EventPlan) -> tuple[int, int, int] | None:
    """The event's consult points (alone, after consulting, a right abstention), if its
    matches play consult rules."""
    from grace_arena.protocol import MatchSettings

    settings = MatchSettings.model_validate(plan.defaults)  # (the defaults where not given)
    return settings.consult_points if settings.consult_model else None


def html_stats(plan: EventPlan, stats: EventStats, plays: Sequence[MatchPlay]) -> str:
    """The printable stats report of an event, as one HTML page."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("grace_arena.analysis", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    return env.get_template("stats.html.j2").render(**stats_context(plan, stats, plays))
